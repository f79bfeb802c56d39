/**
 * The node-fetch adapter: a {@link FetchLike} over node-fetch with provkit's
 * connection settings. The only module of provkit that imports node-fetch
 * (enforced by lint).
 *
 * - Proxies from the environment (`HTTPS_PROXY`, `HTTP_PROXY`, `NO_PROXY`,
 *   Go semantics; see `proxy.ts`), through https-proxy-agent (`CONNECT`).
 * - Trusted CAs, as the reference (Go's crypto/x509 on Unix): `SSL_CERT_FILE`,
 *   when set, *replaces* the bundled roots (terraform and tofu users already
 *   point it at a full bundle); otherwise Node's bundled roots, plus
 *   `NODE_EXTRA_CA_CERTS`. `extraCaPems` add to either. Only a non-default list gets a secure
 *   context of its own, built once: building one from the ~140 bundled roots
 *   costs ~80 ms, which the default context does not pay.
 * - Keep-alive agents, one per proxy; {@link NodeFetch.close} destroys them.
 *   The https agent and its secure context are made on the first https request.
 * - No automatic redirects (the client follows them) and no size limits (the
 *   client checks them).
 *
 * The environment is a parameter; the CA files it names must exist when the
 * adapter is created and are read once, for its first https request.
 */
import { statSync } from 'node:fs';
import type * as Http from 'node:http';
import type { Agent as HttpAgent, ClientRequest } from 'node:http';
import type * as Https from 'node:https';
import type { Agent as HttpsAgent } from 'node:https';
import { createRequire } from 'node:module';
import type { LookupFunction, Socket } from 'node:net';
import type * as Tls from 'node:tls';
import type { SecureContext } from 'node:tls';

import type { HttpsProxyAgent } from 'https-proxy-agent';
import type * as NodeFetchModule from 'node-fetch';

import { ErrorCode, ProvkitError, systemErrorText } from '../errors.js';
import { ProxyConfig, type Env } from './proxy.js';
import { warmConnections } from './warm.js';
import type { FetchInit, FetchLike, FetchResponse } from './types.js';
import { readRegularFileSync } from '../fs/read.js';

/**
 * node-fetch's error for a request that never got a response (a `FetchError`
 * of type `system`: DNS, a refused or reset connection, TLS) says
 * `request to URL failed, reason: REASON`. The client names the method and
 * URL itself (net/failure.ts `settle`), so the user would read the URL twice:
 * keep REASON alone, as an Error with the system error's `code` (the retry
 * and TLS rules read it) and node-fetch's error as its cause. Anything else
 * (an abort, a bad header) is returned unchanged.
 */
export function systemReason(err: unknown): unknown {
  // Recognised by its `type` and message, not its name: the bundle minifies
  // node-fetch's class names (scripts/bundle.mjs), and FetchError's `name` is
  // its constructor's.
  if (!(err instanceof Error) || (err as { type?: unknown }).type !== 'system') return err;
  const reason = /^request to .*? failed, reason: ([\s\S]*)$/.exec(err.message)?.[1];
  if (reason === undefined || reason === '') return err;
  const out = new Error(reason, { cause: err });
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') Object.assign(out, { code });
  // Node's text for a socket's system error is `SYSCALL CODE [ADDRESS]`
  // (`connect ECONNREFUSED 127.0.0.1:9`, `getaddrinfo ENOTFOUND host`):
  // the fields it had, which node-fetch dropped, for errors.ts `errorText`.
  const sys = /^(\w+) (E[A-Z0-9_]+)(?: (\S+))?$/.exec(reason.trim());
  if (sys !== null && sys[2] === code) {
    Object.assign(out, { syscall: sys[1] });
    const where = sys[3];
    if (where !== undefined && sys[1] === 'getaddrinfo') Object.assign(out, { hostname: where });
    else if (where !== undefined && /^[^:]+:\d+$|^\[[0-9a-f:]+\]:\d+$/i.test(where)) {
      const colon = where.lastIndexOf(':');
      Object.assign(out, { address: where.slice(0, colon), port: Number(where.slice(colon + 1)) });
    }
  }
  return out;
}

/** How {@link createNodeFetch} builds its fetch: the environment for proxies and CA files, and connection settings. */
export interface NodeFetchOptions {
  /** Proxy and CA variables are read from here (pass `process.env` in the CLI). */
  readonly env: Env;
  /** More PEM certificates (each string may hold several) to trust. */
  readonly extraCaPems?: readonly string[];
  /**
   * Host name resolution for direct connections (Node's `lookup` option), for
   * tests that map names such as `registry.example.test` to 127.0.0.1 without
   * DNS, as curl's `--resolve`.
   */
  readonly lookup?: LookupFunction;
  /** Reuse connections (default true). */
  readonly keepAlive?: boolean;
}

/** A {@link FetchLike} that owns connection pools. */
export interface NodeFetch {
  /** The fetch to give {@link HttpClient} (`new HttpClient({ fetch })`). */
  readonly fetch: FetchLike;
  /** How many CA entries are trusted (bundled roots plus extra files), for diagnostics. */
  readonly caCount: number;
  /** Closes pooled connections. The adapter stays usable (new connections are made). */
  close(): void;
}

/**
 * Start-up (bench/commands.ts, the tiny lock): node-fetch (with its web-streams polyfill, ~0.5 MB of
 * code) and Node's http, https and tls modules are loaded when the first
 * request is made, not when the adapter is created: a run that never goes to
 * the network (a lock from a filesystem mirror) does not load them.
 */
let requireMade: NodeJS.Require | undefined;
const nodeRequire = (name: string): unknown => (requireMade ??= createRequire(import.meta.url))(name);
const tlsModule = (): typeof Tls => nodeRequire('node:tls') as typeof Tls;
let fetchModule: Promise<typeof NodeFetchModule> | undefined;
const loadFetch = (): Promise<typeof NodeFetchModule> => (fetchModule ??= import('node-fetch'));

type ProxyConnectOpts = Parameters<HttpsProxyAgent<string>['connect']>[1];

type ProxyAgentClass = new (
  proxy: string,
  secureContext: SecureContext | undefined,
  keepAlive: boolean,
) => HttpsProxyAgent<string>;

/**
 * https-proxy-agent applies its constructor's TLS options to the proxy
 * connection only; the tunnelled TLS connection to the target gets the
 * request's options, which node-fetch does not give a `ca`. This subclass adds
 * the trusted CAs there. The module (with its dependencies, ~20 files) is
 * loaded only when a proxy is used: most runs have none, and start-up time
 * counts (bench/results-commands.md: the second mirror run into the same target).
 */
let proxyAgentClass: Promise<ProxyAgentClass> | undefined;
function loadProxyAgentClass(): Promise<ProxyAgentClass> {
  proxyAgentClass ??= import('https-proxy-agent').then(({ HttpsProxyAgent: Base }) => {
    class CaProxyAgent extends Base<string> {
      constructor(
        proxy: string,
        private readonly secureContext: SecureContext | undefined,
        keepAlive: boolean,
      ) {
        super(proxy, { keepAlive, ...(secureContext ? { secureContext } : {}) });
      }

      override connect(req: ClientRequest, opts: ProxyConnectOpts): Promise<Socket> {
        return super.connect(
          req,
          opts.secureEndpoint && this.secureContext ? { ...opts, secureContext: this.secureContext } : opts,
        );
      }
    }
    return CaProxyAgent;
  });
  return proxyAgentClass;
}

/**
 * The CA file the environment names, if any: `SSL_CERT_FILE` (which replaces
 * Node's roots) or else `NODE_EXTRA_CA_CERTS` (added to them). The
 * environment is a parameter, so NODE_EXTRA_CA_CERTS is read here too (Node
 * applies only its own process's variable, at start-up).
 */
function namedCaFile(env: Env): { path: string; variable: 'SSL_CERT_FILE' | 'NODE_EXTRA_CA_CERTS' } | undefined {
  for (const variable of ['SSL_CERT_FILE', 'NODE_EXTRA_CA_CERTS'] as const) {
    const path = env[variable];
    if (path !== undefined && path !== '') return { path, variable };
  }
  return undefined;
}

/** `use(file.path)`, its failure reported as the CA file's (`IO`, naming the variable and the file). */
function withCaFile<T>(file: { path: string; variable: string }, use: (path: string) => T): T {
  try {
    return use(file.path);
  } catch (err) {
    throw new ProvkitError(
      ErrorCode.IO,
      `cannot read the CA certificates named by ${file.variable}: ${file.path}: ${systemErrorText(err)}`,
      { file: file.path, cause: err },
    );
  }
}

/**
 * The trusted CAs (see the module comment), or undefined for Node's default
 * context (bundled roots plus `NODE_EXTRA_CA_CERTS`).
 *
 * @throws {ProvkitError} `IO` when a named file cannot be read.
 */
export function trustedCAs(env: Env, extra: readonly string[] = []): string[] | undefined {
  const file = namedCaFile(env);
  if (file === undefined) return extra.length === 0 ? undefined : [...tlsModule().rootCertificates, ...extra];
  const pem = withCaFile(file, (path) => readRegularFileSync(path).toString('utf8'));
  return file.variable === 'SSL_CERT_FILE' ? [pem, ...extra] : [...tlsModule().rootCertificates, pem, ...extra];
}

/**
 * Creates the adapter.
 *
 * @throws {ProvkitError} `USAGE` for an unusable proxy variable, `IO` for an
 *   unreadable CA file.
 */
export function createNodeFetch(options: NodeFetchOptions): NodeFetch {
  // A missing CA file is an error now, as before any request; the files are
  // read (and Node's roots listed) with the first https request: a run that
  // makes none (a lock from a filesystem mirror) does not pay for it (~5 ms
  // of the tiny lock with NODE_EXTRA_CA_CERTS set; issue 13).
  const caFile = namedCaFile(options.env);
  if (caFile) withCaFile(caFile, (path) => statSync(path));
  let caList: string[] | undefined | null = null;
  const trusted = (): string[] | undefined =>
    caList === null ? (caList = trustedCAs(options.env, options.extraCaPems)) : caList;
  const proxies = new ProxyConfig(options.env);
  const keepAlive = options.keepAlive ?? true;
  const lookup = options.lookup === undefined ? {} : { lookup: options.lookup };
  let httpAgentMade: HttpAgent | undefined;
  const httpAgent = (): HttpAgent =>
    (httpAgentMade ??= new (nodeRequire('node:http') as typeof Http).Agent({ keepAlive, ...lookup }));
  // One secure context for every connection: given only \`ca\`, Node parses the
  // whole CA list again for each TLS connection. None for the default roots.
  // Built on the first https request, not before: parsing a full CA bundle
  // costs ~0.1-0.2 s of CPU, which a run that never makes a TLS connection
  // (a lock from a filesystem mirror) must not pay.
  let tls: { secureContext: SecureContext | undefined; agent: HttpsAgent } | undefined;
  const tlsParts = (): { secureContext: SecureContext | undefined; agent: HttpsAgent } => {
    if (tls === undefined) {
      const ca = trusted();
      const secureContext = ca === undefined ? undefined : tlsModule().createSecureContext({ ca });
      tls = {
        secureContext,
        agent: new (nodeRequire('node:https') as typeof Https).Agent({
          keepAlive,
          ...(secureContext ? { secureContext } : {}),
          ...lookup,
        }),
      };
    }
    return tls;
  };
  const proxyAgents = new Map<string, HttpsProxyAgent<string>>();
  let ProxyAgent: ProxyAgentClass | undefined;

  const agentFor = (url: URL): HttpAgent => {
    const proxy = proxies.proxyFor(url);
    if (proxy === undefined) return url.protocol === 'https:' ? tlsParts().agent : httpAgent();
    let agent = proxyAgents.get(proxy.href);
    if (agent === undefined) {
      if (ProxyAgent === undefined) throw new ProvkitError(ErrorCode.IO, 'internal: the proxy agent was not loaded');
      agent = new ProxyAgent(proxy.href, tlsParts().secureContext, keepAlive);
      proxyAgents.set(proxy.href, agent);
    }
    return agent;
  };

  const fetchLike = async (url: string, init: FetchInit): Promise<FetchResponse> => {
    // Redirects are followed by the caller, one fetch per hop: each hop's URL is checked here.
    if (ProxyAgent === undefined && proxies.proxyFor(new URL(url)) !== undefined)
      ProxyAgent = await loadProxyAgentClass();
    const { default: fetch } = await loadFetch();
    let res: NodeFetchModule.Response;
    try {
      res = await fetch(url, {
        method: init.method,
        headers: init.headers,
        ...(init.body === undefined ? {} : { body: init.body }),
        redirect: 'manual',
        signal: init.signal,
        agent: agentFor,
        compress: true,
      });
    } catch (err) {
      throw systemReason(err);
    }
    const body = res.body;
    // node-fetch emits 'error' on the body when the request is aborted; with
    // nobody reading (a discarded redirect body) that would be an uncaught
    // error event. Readers still get the error through their iterator.
    body?.on('error', () => undefined);
    const out: FetchResponse = {
      status: res.status,
      statusText: res.statusText,
      headers: res.headers,
      body: body as (NodeJS.ReadableStream & AsyncIterable<Uint8Array>) | null,
    };
    return out;
  };

  /** See {@link FetchLike.preconnect}; `warmConnections` (warm.ts) does it with the agent's own pool. */
  const preconnect = (url: string, count: number): void => {
    if (!keepAlive) return;
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return;
    }
    // Through a proxy the agent's connections are the proxy's tunnels: not warmed.
    if ((u.protocol !== 'https:' && u.protocol !== 'http:') || proxies.proxyFor(u) !== undefined) return;
    warmConnections(agentFor(u), u, count);
  };

  /** Loads node-fetch and, for an https URL, builds the TLS agent (see {@link FetchLike.prepare}). */
  const prepare = async (url: string): Promise<void> => {
    await loadFetch();
    if (url.startsWith('https:')) tlsParts();
  };
  return {
    fetch: Object.assign(fetchLike, { prepare, preconnect }),
    // A getter: Node builds `rootCertificates` on first access.
    get caCount() {
      return trusted()?.length ?? tlsModule().rootCertificates.length;
    },
    close() {
      httpAgentMade?.destroy();
      tls?.agent.destroy();
      for (const a of proxyAgents.values()) a.destroy();
    },
  };
}
