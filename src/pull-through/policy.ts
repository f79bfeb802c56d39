/**
 * Who a pull-through mirror may fetch from (docs/fleet-mirror.md, "The
 * allow-list"): a pure description of the operator's policy and the checks
 * made with it. Nothing here does I/O.
 *
 * - **Providers.** A request names a provider (`/HOST/NS/TYPE/…`); the
 *   mirror answers for it only when an allow pattern matches. Patterns are
 *   the reference's provider matching patterns (`NS/TYPE` on the flavor's
 *   registry, `HOST/NS/TYPE`, `*` wildcards; docs/reference.md §4.4 item 71,
 *   `addresses/patterns.ts`) plus a bare `HOST` for every provider of a
 *   host. A wildcard host is refused: the hosts a mirror fetches from are
 *   named, never "any". Default: the flavor's public registry, every
 *   provider.
 * - **Destinations.** Every URL the mirror fetches (discovery, the registry
 *   API, the SHA256SUMS, the signature, the archive, each redirect hop)
 *   goes to an address that is public, or one the operator named
 *   (`allowAddresses`: an address or a CIDR range). An IP literal in a URL
 *   must be named whatever its range; a name that resolves to loopback,
 *   private, link-local, shared (CGNAT), documentation, multicast or
 *   reserved space (the IANA special-purpose registries) is refused unless
 *   each address it resolves to is named. So a registry cannot point the
 *   mirror at the metadata service of its cloud, or at the operator's
 *   internal hosts.
 * - **Signatures.** A package whose SHA256SUMS signature was not checked
 *   (OpenTofu's default registry without keys, docs/reference.md §8.5 item
 *   118) is refused unless `allowUnsigned`. With `trustedKeys`, the key that
 *   verified the signature must be one of them (long key IDs, 16 hex
 *   digits): a registry that starts signing with another key is refused
 *   even though it lists that key. The audit policy's pinned keys apply on
 *   the way in too (`audit`: the `trusted_keys` of `provkit.hcl`'s `audit`
 *   block that apply to the provider, config/audit-policy.ts
 *   {@link auditRuleFor}, docs/provenance.md "Policy"): a package signed
 *   by a key outside them is refused, and so is one whose checksums are
 *   not signed at all (no key vouches for it), whatever `allowUnsigned`
 *   says. Both lists, when given, must accept the key.
 */
import { BlockList, isIP } from 'node:net';

import { defaultRegistryHost, type Flavor, type ProviderAddress } from '../addresses/index.js';
import { parseProviderPattern, patternMatches, type ProviderPattern, WILDCARD } from '../addresses/index.js';
import { type AuditPolicy, auditRuleFor } from '../config/index.js';
import { ErrorCode, ProvkitError } from '../errors.js';
import type { SignatureOutcome } from '../sources/index.js';

/** See the module comment. */
export interface OriginPolicy {
  /** Providers the mirror answers for; never a wildcard host. */
  readonly allow: readonly ProviderPattern[];
  /** Accept packages whose SHA256SUMS signature was skipped. */
  readonly allowUnsigned: boolean;
  /** Long key IDs (16 upper-case hex digits) a signature must be made with; empty: any key the registry lists. */
  readonly trustedKeys: readonly string[];
  /** Addresses and ranges a fetch may go to although they are not public, as given. */
  readonly allowAddresses: readonly string[];
  /** The flavor the audit policy's provider patterns are read with (their default host). */
  readonly flavor: Flavor;
  /** The audit policy whose `trusted_keys` a signature must also satisfy (see the module comment). */
  readonly audit?: AuditPolicy;
}

/** What {@link originPolicy} takes, as the command line gives it. */
export interface OriginPolicyInput {
  readonly flavor: Flavor;
  /** Allow patterns (`HOST`, `NS/TYPE`, `HOST/NS/TYPE`, `HOST/NS/*`); empty: the flavor's registry. */
  readonly allow?: readonly string[];
  readonly allowUnsigned?: boolean;
  /** Key IDs (16 hex digits) or fingerprints (40 hex digits, whose last 16 are the key ID). */
  readonly trustedKeys?: readonly string[];
  /** IP addresses or CIDR ranges (`127.0.0.1`, `10.0.0.0/8`, `fd00::/8`). */
  readonly allowAddresses?: readonly string[];
  /** The audit policy (`provkit.hcl`'s `audit` block), when there is one. */
  readonly audit?: AuditPolicy;
}

/**
 * The policy of `input`, checked.
 *
 * @throws {ProvkitError} `USAGE` naming the entry that cannot be used.
 */
export function originPolicy(input: OriginPolicyInput): OriginPolicy {
  const given =
    input.allow === undefined || input.allow.length === 0 ? [defaultRegistryHost(input.flavor)] : input.allow;
  const allow = given.map((text) => allowPattern(text, input.flavor));
  const trustedKeys = (input.trustedKeys ?? []).map(trustedKeyId);
  const allowAddresses = [...(input.allowAddresses ?? [])];
  // Parsed once here so that a bad entry is said before the server starts.
  addressList(allowAddresses);
  return {
    allow,
    allowUnsigned: input.allowUnsigned === true,
    trustedKeys,
    allowAddresses,
    flavor: input.flavor,
    ...(input.audit === undefined ? {} : { audit: input.audit }),
  };
}

/** One allow pattern: a bare host stands for `HOST/*\/*`. */
function allowPattern(text: string, flavor: Flavor): ProviderPattern {
  const usage = (why: string): ProvkitError =>
    new ProvkitError(ErrorCode.USAGE, `invalid -allow pattern ${JSON.stringify(text)}: ${why}`, {
      found: text,
      hint: 'Give a registry host (registry.terraform.io), NAMESPACE/TYPE on the default registry, or HOST/NAMESPACE/TYPE, with * for every namespace or type.',
    });
  const full = text.includes('/') ? text : `${text}/${WILDCARD}/${WILDCARD}`;
  let pattern: ProviderPattern;
  try {
    pattern = parseProviderPattern(full, flavor);
  } catch (err) {
    throw usage((err as Error).message);
  }
  if (pattern.hostname === WILDCARD)
    throw usage('the host must be named: a pull-through mirror never fetches from any host');
  return { ...pattern, text };
}

/** A key ID as signatures report it: 16 upper-case hex digits. */
function trustedKeyId(given: string): string {
  const hex = given.replace(/\s+/g, '').toUpperCase();
  if (/^[0-9A-F]{16}$/.test(hex)) return hex;
  if (/^[0-9A-F]{40}$/.test(hex)) return hex.slice(-16);
  throw new ProvkitError(
    ErrorCode.USAGE,
    `invalid -trusted-key ${JSON.stringify(given)}: want a key ID of 16 hexadecimal digits (or a fingerprint of 40)`,
    { found: given },
  );
}

/** The hosts the mirror fetches providers from (comparison form), sorted. */
export function allowedHosts(policy: OriginPolicy): string[] {
  return [...new Set(policy.allow.map((p) => p.hostname))].sort();
}

/** Whether the mirror answers for `provider`. */
export function providerAllowed(policy: OriginPolicy, provider: ProviderAddress): boolean {
  return policy.allow.some((p) => patternMatches(p, provider));
}

/**
 * Why a package of `provider` signed as `signature` is refused under
 * `policy`, or undefined when it is accepted.
 */
export function signatureRefusal(
  policy: OriginPolicy,
  provider: ProviderAddress,
  signature: SignatureOutcome | undefined,
): string | undefined {
  if (signature === undefined)
    return 'the origin gave no signed checksums for it (a pull-through mirror takes registry packages only)';
  const pinned = policy.audit === undefined ? undefined : auditRuleFor(policy.audit, provider, policy.flavor, false);
  if (signature.kind === 'skipped') {
    if (pinned?.trustedKeys !== undefined)
      return `its checksums are not signed (${signature.reason}) and the trusted_keys of ${pinned.from} apply to it`;
    return policy.allowUnsigned
      ? undefined
      : `its checksums are not signed (${signature.reason}) and unsigned packages are not allowed`;
  }
  const keyId = signature.keyId.toUpperCase();
  if (policy.trustedKeys.length > 0 && !policy.trustedKeys.includes(keyId))
    return `its checksums are signed with key ${signature.keyId}, which is not one of the trusted keys (${policy.trustedKeys.join(', ')})`;
  if (pinned?.trustedKeys !== undefined && !pinned.trustedKeys.includes(keyId))
    return `its checksums are signed with key ${signature.keyId}, which is not one of the trusted_keys of ${pinned.from} (${pinned.trustedKeys.join(', ')})`;
  return undefined;
}

/**
 * The address ranges no fetch goes to unless named: the IANA IPv4 and IPv6
 * special-purpose address registries (RFC 6890 and its updates), less the
 * globally reachable entries, plus multicast.
 */
const SPECIAL_V4: ReadonlyArray<readonly [string, number]> = [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], // private (RFC 1918)
  ['100.64.0.0', 10], // shared address space (CGNAT, RFC 6598)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata services)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast (deprecated)
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
];
const SPECIAL_V6: ReadonlyArray<readonly [string, number]> = [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['::ffff:0:0', 96], // IPv4-mapped (judged by the IPv4 address instead, see addressRefusal)
  ['64:ff9b::', 96], // NAT64 (judged by the embedded IPv4 address)
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard-only
  ['2001::', 23], // IETF protocol assignments (Teredo, benchmarking, ORCHID, …)
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4 (judged by the embedded IPv4 address)
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
];

/**
 * The special ranges, one list per family: Node's `BlockList` matches an
 * IPv4 address against IPv4-mapped IPv6 rules too, so one list holding
 * `::ffff:0:0/96` would refuse every IPv4 address.
 */
let special: { v4: BlockList; v6: BlockList } | undefined;
function specialRanges(): { v4: BlockList; v6: BlockList } {
  if (special) return special;
  const v4 = new BlockList();
  const v6 = new BlockList();
  for (const [net, prefix] of SPECIAL_V4) v4.addSubnet(net, prefix, 'ipv4');
  // The forms that embed an IPv4 address are judged by that address (addressRefusal).
  for (const [net, prefix] of SPECIAL_V6) if (!EMBEDDING_V4.has(net)) v6.addSubnet(net, prefix, 'ipv6');
  special = { v4, v6 };
  return special;
}

/** IPv6 ranges whose addresses stand for an IPv4 address ({@link embeddedV4}). */
const EMBEDDING_V4 = new Set(['::ffff:0:0', '64:ff9b::', '2002::']);

/**
 * The operator's named addresses as a block list.
 *
 * @throws {ProvkitError} `USAGE` for an entry that is neither an address nor a CIDR range.
 */
export function addressList(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const m = /^\[?([^\]/]+)\]?(?:\/(\d{1,3}))?$/.exec(entry.trim());
    const ip = m?.[1] ?? '';
    const family = isIP(ip);
    const prefix = m?.[2] === undefined ? undefined : Number(m[2]);
    if (family === 0 || (prefix !== undefined && prefix > (family === 4 ? 32 : 128))) {
      throw new ProvkitError(
        ErrorCode.USAGE,
        `invalid -allow-address ${JSON.stringify(entry)}: want an IP address or a CIDR range (127.0.0.1, 10.0.0.0/8, fd00::/8)`,
        { found: entry },
      );
    }
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (prefix === undefined) list.addAddress(ip, type);
    else list.addSubnet(ip, prefix, type);
  }
  return list;
}

/** The IPv4 address an IPv6 address stands for (mapped, NAT64, 6to4), if any. */
function embeddedV4(ip: string): string | undefined {
  const lower = ip.toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (mapped) return mapped[1];
  const words = expandV6(lower);
  if (words === undefined) return undefined;
  const v4 = (hi: number, lo: number): string => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  if (words.slice(0, 5).every((w) => w === 0) && words[5] === 0xffff) return v4(words[6]!, words[7]!);
  if (words[0] === 0x64 && words[1] === 0xff9b && words.slice(2, 6).every((w) => w === 0))
    return v4(words[6]!, words[7]!);
  if (words[0] === 0x2002) return v4(words[1]!, words[2]!);
  return undefined;
}

/** The eight 16-bit words of an IPv6 address (with a dotted IPv4 tail), or undefined. */
function expandV6(ip: string): number[] | undefined {
  let text = ip;
  const tail = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (tail) {
    const [a, b, c, d] = tail.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, tail.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const part = (s: string | undefined): number[] =>
    s === undefined || s === '' ? [] : s.split(':').map((w) => parseInt(w, 16));
  const head = part(halves[0]);
  const rest = part(halves[1]);
  const fill = halves.length === 2 ? 8 - head.length - rest.length : 0;
  const words = [...head, ...Array<number>(Math.max(0, fill)).fill(0), ...rest];
  return words.length === 8 && words.every((w) => Number.isInteger(w) && w >= 0 && w <= 0xffff) ? words : undefined;
}

/**
 * Why a connection to `ip` (an address a URL's host is or resolves to) is
 * refused, or undefined when it may go ahead: named by the operator, or
 * public. `literal`: the URL named the address itself (then it must be named
 * whatever its range).
 */
export function addressRefusal(
  policy: OriginPolicy,
  named: BlockList,
  ip: string,
  literal: boolean,
): string | undefined {
  const family = isIP(ip);
  if (family === 0) return `${ip} is not an IP address`;
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (named.check(ip, type)) return undefined;
  const v4 = family === 6 ? embeddedV4(ip) : undefined;
  if (v4 !== undefined && named.check(v4, 'ipv4')) return undefined;
  const hint = `name it with -allow-address to allow it`;
  if (literal) return `the URL names the address ${ip} itself, which is not an allowed address (${hint})`;
  const ranges = specialRanges();
  if (v4 !== undefined) {
    return ranges.v4.check(v4, 'ipv4')
      ? `${ip} stands for ${v4}, in a loopback, private, link-local or reserved range (${hint})`
      : undefined;
  }
  if (family === 4 ? ranges.v4.check(ip, 'ipv4') : ranges.v6.check(ip, 'ipv6'))
    return `${ip} is in a loopback, private, link-local or reserved range (${hint})`;
  return undefined;
}
