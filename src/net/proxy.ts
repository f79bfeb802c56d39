/**
 * Proxy selection from the environment, as Go's
 * `golang.org/x/net/http/httpproxy.FromEnvironment` (which both reference
 * tools use through `http.ProxyFromEnvironment`):
 *
 * - `HTTPS_PROXY`/`https_proxy` for https URLs, `HTTP_PROXY`/`http_proxy` for
 *   http URLs; the upper-case name wins; a value without a scheme means
 *   `http://`;
 * - `NO_PROXY`/`no_proxy`: comma-separated; `*` disables proxying; an IP or
 *   CIDR matches addresses; `example.com` matches it and its subdomains,
 *   `.example.com` (or `*.example.com`) only subdomains; an entry may carry
 *   `:port`;
 * - requests to `localhost` and loopback addresses never use a proxy.
 *
 * Pure: the environment is a parameter.
 */
import { createRequire } from 'node:module';
import type * as Net from 'node:net';
import type { BlockList } from 'node:net';

let netModule: typeof Net | undefined;
/**
 * `node:net`, loaded when a `NO_PROXY` entry or a proxied URL needs it: a run
 * that makes no request (a lock from a filesystem mirror) does not pay for
 * loading it at start-up (issue 13).
 */
function net(): typeof Net {
  netModule ??= createRequire(import.meta.url)('node:net') as typeof Net;
  return netModule;
}

function isIP(host: string): number {
  return net().isIP(host);
}

import { ErrorCode, ProvkitError } from '../errors.js';

/** Environment variables, as `process.env` holds them (proxies: `HTTPS_PROXY`, `NO_PROXY`, …). */
export type Env = Readonly<Record<string, string | undefined>>;

interface DomainMatch {
  host: string;
  port: string;
  matchHost: boolean;
}

/** A parsed proxy configuration; {@link ProxyConfig.proxyFor} picks the proxy of a URL. */
export class ProxyConfig {
  private readonly httpsProxy: URL | undefined;
  private readonly httpProxy: URL | undefined;
  private readonly all: boolean;
  /** The CIDR entries of `NO_PROXY`; undefined when there are none. */
  private blocks: BlockList | undefined;
  private readonly ips = new Set<string>();
  private readonly domains: DomainMatch[] = [];

  /** @throws {ProvkitError} `USAGE` for a proxy URL that is not http(s). */
  constructor(env: Env) {
    this.httpsProxy = parseProxy(getEnvAny(env, 'HTTPS_PROXY', 'https_proxy'));
    this.httpProxy = parseProxy(getEnvAny(env, 'HTTP_PROXY', 'http_proxy'));
    const noProxy = getEnvAny(env, 'NO_PROXY', 'no_proxy') ?? '';
    this.all = false;
    for (const raw of noProxy.split(',')) {
      const p = raw.trim().toLowerCase();
      if (p === '') continue;
      if (p === '*') {
        this.all = true;
        continue;
      }
      if (p.includes('/')) {
        const [addr = '', bits = ''] = p.split('/');
        const kind = isIP(addr);
        if (kind !== 0 && /^\d+$/.test(bits))
          (this.blocks ??= new (net().BlockList)()).addSubnet(addr, Number(bits), kind === 6 ? 'ipv6' : 'ipv4');
        continue;
      }
      if (isIP(stripBrackets(p)) !== 0) {
        this.ips.add(stripBrackets(p));
        continue;
      }
      const [hostGiven, port] = splitHostPort(p);
      let host = hostGiven;
      if (isIP(stripBrackets(host)) !== 0) {
        this.ips.add(stripBrackets(host));
        continue;
      }
      if (host.startsWith('*.')) host = host.slice(1);
      let matchHost = false;
      if (!host.startsWith('.')) {
        matchHost = true;
        host = '.' + host;
      }
      this.domains.push({ host, port, matchHost });
    }
  }

  /** The proxy to use for `url`, or undefined to connect directly. */
  proxyFor(url: URL): URL | undefined {
    const proxy = url.protocol === 'https:' ? this.httpsProxy : url.protocol === 'http:' ? this.httpProxy : undefined;
    if (proxy === undefined) return undefined;
    return this.useProxy(url) ? proxy : undefined;
  }

  private useProxy(url: URL): boolean {
    const host = stripBrackets(url.hostname.toLowerCase());
    if (host === 'localhost') return false;
    const kind = isIP(host);
    if (kind !== 0) {
      if (isLoopback(host, kind)) return false;
      if (this.all) return false;
      if (this.ips.has(host)) return false;
      if (this.blocks?.check(host, kind === 6 ? 'ipv6' : 'ipv4') === true) return false;
      return true;
    }
    if (this.all) return false;
    const port = url.port !== '' ? url.port : url.protocol === 'https:' ? '443' : '80';
    for (const m of this.domains) {
      if (host.endsWith(m.host) || (m.matchHost && host === m.host.slice(1))) {
        if (m.port === '' || m.port === port) return false;
      }
    }
    return true;
  }
}

function getEnvAny(env: Env, ...names: string[]): string | undefined {
  for (const n of names) {
    const v = env[n];
    if (v !== undefined && v !== '') return v;
  }
  return undefined;
}

function parseProxy(value: string | undefined): URL | undefined {
  if (value === undefined) return undefined;
  let u: URL | undefined;
  try {
    u = new URL(value);
  } catch {
    u = undefined;
  }
  if (u === undefined || !/^(https?|socks5h?):$/.test(u.protocol) || u.host === '') {
    try {
      u = new URL(`http://${value}`);
    } catch (err) {
      throw new ProvkitError(ErrorCode.USAGE, `invalid proxy address ${JSON.stringify(value)}`, {
        found: value,
        cause: err,
      });
    }
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new ProvkitError(
      ErrorCode.USAGE,
      `unsupported proxy scheme ${JSON.stringify(u.protocol.slice(0, -1))} in ${JSON.stringify(value)}: only http and https proxies`,
      {
        found: value,
      },
    );
  }
  return u;
}

function stripBrackets(h: string): string {
  return h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h;
}

function splitHostPort(p: string): [string, string] {
  if (p.startsWith('[')) {
    const end = p.indexOf(']');
    if (end !== -1 && p[end + 1] === ':') return [p.slice(0, end + 1), p.slice(end + 2)];
    return [p, ''];
  }
  const colon = p.lastIndexOf(':');
  if (colon !== -1 && p.indexOf(':') === colon && /^\d+$/.test(p.slice(colon + 1)))
    return [p.slice(0, colon), p.slice(colon + 1)];
  return [p, ''];
}

function isLoopback(ip: string, kind: number): boolean {
  if (kind === 4) return ip.startsWith('127.');
  return ip === '::1' || ip === '0:0:0:0:0:0:0:1' || /^::ffff:127\./.test(ip);
}
