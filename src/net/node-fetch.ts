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
 * - No automatic redirects (the client follows them) and no size limits (the
 *   client checks them).
 *
 * The environment is a parameter; CA files are read once, when the adapter
 * is created.
 */
import { readFileSync } from 'node:fs';
import { Agent as HttpAgent, type ClientRequest } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { createSecureContext, type SecureContext } from 'node:tls';
import type { LookupFunction, Socket } from 'node:net';
import { rootCertificates } from 'node:tls';

import type { HttpsProxyAgent } from 'https-proxy-agent';
import fetch from 'node-fetch';

import { ErrorCode, ProvkitError } from '../errors.js';
import { ProxyConfig, type Env } from './proxy.js';
import type { FetchLike, FetchResponse } from './types.js';

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
  readonly fetch: FetchLike;
  /** How many CA entries are trusted (bundled roots plus extra files), for diagnostics. */
  readonly caCount: number;
  /** Closes pooled connections. The adapter stays usable (new connections are made). */
  close(): void;
}

type ProxyConnectOpts = Parameters<HttpsProxyAgent<string>['connect']>[1];

type ProxyAgentClass = new (proxy: string, secureContext: SecureContext | undefined, keepAlive: boolean) => HttpsProxyAgent<string>;

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
        return super.connect(req, opts.secureEndpoint && this.secureContext ? { ...opts, secureContext: this.secureContext } : opts);
      }
    }
    return CaProxyAgent;
  });
  return proxyAgentClass;
}

function readCaFile(path: string, variable: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new ProvkitError(ErrorCode.IO, `cannot read the CA certificates named by ${variable}: ${path}: ${(err as Error).message}`, {
      file: path,
      cause: err,
    });
  }
}

/**
 * The trusted CAs (see the module comment), or undefined for Node's default
 * context (bundled roots plus `NODE_EXTRA_CA_CERTS`).
 *
 * @throws {ProvkitError} `IO` when a named file cannot be read.
 */
export function trustedCAs(env: Env, extra: readonly string[] = []): string[] | undefined {
  const file = env['SSL_CERT_FILE'];
  if (file !== undefined && file !== '') return [readCaFile(file, 'SSL_CERT_FILE'), ...extra];
  // The environment is a parameter, so NODE_EXTRA_CA_CERTS is read here too
  // (Node applies only its own process's variable, at start-up).
  const nodeExtra = env['NODE_EXTRA_CA_CERTS'];
  const withNodeExtra = nodeExtra !== undefined && nodeExtra !== '';
  if (!withNodeExtra && extra.length === 0) return undefined;
  return [...rootCertificates, ...(withNodeExtra ? [readCaFile(nodeExtra, 'NODE_EXTRA_CA_CERTS')] : []), ...extra];
}

/**
 * Creates the adapter.
 *
 * @throws {ProvkitError} `USAGE` for an unusable proxy variable, `IO` for an
 *   unreadable CA file.
 */
export function createNodeFetch(options: NodeFetchOptions): NodeFetch {
  const ca = trustedCAs(options.env, options.extraCaPems);
  const proxies = new ProxyConfig(options.env);
  const keepAlive = options.keepAlive ?? true;
  const lookup = options.lookup === undefined ? {} : { lookup: options.lookup };
  const httpAgent = new HttpAgent({ keepAlive, ...lookup });
  // One secure context for every connection: given only \`ca\`, Node parses the
  // whole CA list again for each TLS connection. None for the default roots.
  const secureContext = ca === undefined ? undefined : createSecureContext({ ca });
  const httpsAgent = new HttpsAgent({ keepAlive, ...(secureContext ? { secureContext } : {}), ...lookup });
  const proxyAgents = new Map<string, HttpsProxyAgent<string>>();
  let ProxyAgent: ProxyAgentClass | undefined;

  const agentFor = (url: URL): HttpAgent => {
    const proxy = proxies.proxyFor(url);
    if (proxy === undefined) return url.protocol === 'https:' ? httpsAgent : httpAgent;
    let agent = proxyAgents.get(proxy.href);
    if (agent === undefined) {
      if (ProxyAgent === undefined) throw new ProvkitError(ErrorCode.IO, 'internal: the proxy agent was not loaded');
      agent = new ProxyAgent(proxy.href, secureContext, keepAlive);
      proxyAgents.set(proxy.href, agent);
    }
    return agent;
  };

  const fetchLike: FetchLike = async (url, init) => {
    // Redirects are followed by the caller, one fetch per hop: each hop's URL is checked here.
    if (ProxyAgent === undefined && proxies.proxyFor(new URL(url)) !== undefined) ProxyAgent = await loadProxyAgentClass();
    const res = await fetch(url, {
      method: init.method,
      headers: init.headers,
      ...(init.body === undefined ? {} : { body: init.body }),
      redirect: 'manual',
      signal: init.signal,
      agent: agentFor,
      compress: true,
    });
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

  return {
    fetch: fetchLike,
    caCount: ca?.length ?? rootCertificates.length,
    close() {
      httpAgent.destroy();
      httpsAgent.destroy();
      for (const a of proxyAgents.values()) a.destroy();
    },
  };
}
