/**
 * The pull-through mirror's fetches go only where its policy allows
 * (policy.ts, "Destinations"): every request, and every redirect hop of it
 * (the HTTP client calls its fetch once per hop, net/client.ts), is checked
 * before anything is sent.
 *
 * - A URL whose host is an IP literal: the address must be one the operator
 *   named.
 * - A host name: it is resolved here (`dns.lookup`, as Node connects),
 *   every address it resolves to is checked, and the connection then uses
 *   exactly those addresses (the agents' `lookup` answers from what was
 *   checked), so a name cannot resolve to a public address for the check and
 *   to a private one for the connection (DNS rebinding). Checked answers are
 *   kept {@link PIN_MS}.
 *
 * A refusal is a `NET_REFUSED` error (final: never retried; net/client.ts)
 * naming the URL and the reason.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';

import { ProvkitError, systemErrorCode, ErrorCode } from '../errors.js';
import { type FetchLike, redactURL } from '../net/index.js';
import { addressList, addressRefusal, type OriginPolicy } from './policy.js';

/** How long a checked resolution is used for connections (ms). */
export const PIN_MS = 30_000;

/** Resolves a host name to all its addresses (default: `dns.lookup` with `all`). */
export type ResolveAll = (hostname: string) => Promise<LookupAddress[]>;

const systemResolve: ResolveAll = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses) => (err ? reject(err) : resolve(addresses)));
  });

/** The guard of one mirror: wrap its fetch with {@link wrap}, give its agents {@link lookup}. */
export interface DestinationGuard {
  /** The fetch that checks each URL before handing it to `fetch`. */
  wrap(fetch: FetchLike): FetchLike;
  /** Node's `lookup` for the agents: the checked addresses of a name. */
  readonly lookup: LookupFunction;
}

/** See the module comment. `resolve` and `now` are injectable for tests. */
export function destinationGuard(
  policy: OriginPolicy,
  resolve: ResolveAll = systemResolve,
  now: () => number = Date.now,
): DestinationGuard {
  const named = addressList(policy.allowAddresses);
  const pinned = new Map<string, { addresses: LookupAddress[]; until: number }>();
  const refuse = (url: string, why: string): ProvkitError =>
    new ProvkitError(ErrorCode.NET_REFUSED, `refused to fetch ${redactURL(url)}: ${why}`, {
      url: redactURL(url),
      hint: 'A pull-through mirror fetches only from public addresses and the ones named with -allow-address (docs/fleet-mirror.md).',
    });

  /** The checked addresses of `hostname` (resolved now, or pinned earlier). */
  const checked = async (hostname: string, url: string): Promise<LookupAddress[]> => {
    const kept = pinned.get(hostname);
    if (kept && kept.until > now()) return kept.addresses;
    let addresses: LookupAddress[];
    try {
      addresses = await resolve(hostname);
    } catch (err) {
      // Said by the connection as it always is (net/failure.ts: "does not resolve").
      const code = systemErrorCode(err) ?? 'ENOTFOUND';
      throw Object.assign(new Error(`getaddrinfo ${code} ${hostname}`), {
        code,
        syscall: 'getaddrinfo',
        hostname,
      });
    }
    if (addresses.length === 0) throw refuse(url, `${hostname} resolves to no address`);
    for (const a of addresses) {
      const why = addressRefusal(policy, named, a.address, false);
      if (why !== undefined) throw refuse(url, `${hostname} resolves to ${why}`);
    }
    pinned.set(hostname, { addresses, until: now() + PIN_MS });
    return addresses;
  };

  const lookup: LookupFunction = (hostname, options, callback) => {
    const all = typeof options === 'object' && options !== null && (options as { all?: boolean }).all === true;
    const family =
      typeof options === 'object' && options !== null ? (options as { family?: number }).family : undefined;
    const answer = (addresses: LookupAddress[]): void => {
      const fitting = family === 4 || family === 6 ? addresses.filter((a) => a.family === family) : addresses;
      if (fitting.length === 0) {
        callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), '', 4);
        return;
      }
      if (all) (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, fitting);
      else callback(null, fitting[0]!.address, fitting[0]!.family);
    };
    if (isIP(hostname) !== 0) {
      // A literal was checked by the fetch (or is a proxy the operator configured).
      answer([{ address: hostname, family: isIP(hostname) }]);
      return;
    }
    checked(hostname, `https://${hostname}/`).then(answer, (err: unknown) =>
      callback(err as NodeJS.ErrnoException, '', 4),
    );
  };

  const wrap = (fetch: FetchLike): FetchLike => {
    const guarded = async (url: string, init: Parameters<FetchLike>[1]): ReturnType<FetchLike> => {
      let host: string;
      try {
        host = new URL(url).hostname;
      } catch {
        throw refuse(url, 'not a URL');
      }
      const literal = host.startsWith('[') ? host.slice(1, -1) : host;
      if (isIP(literal) !== 0) {
        const why = addressRefusal(policy, named, literal, true);
        if (why !== undefined) throw refuse(url, why);
      } else {
        await checked(host, url);
      }
      return fetch(url, init);
    };
    return fetch.prepare ? Object.assign(guarded, { prepare: fetch.prepare }) : guarded;
  };

  return { wrap, lookup };
}
