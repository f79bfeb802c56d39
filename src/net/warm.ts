/**
 * Warm connections: sockets opened ahead of the requests that will use them,
 * handed to a keep-alive `http.Agent`'s free pool exactly as a finished
 * request's socket is, so that the next requests to that origin find a
 * connection (or one already handshaking) instead of opening their own
 * after their turn came: a request on a new HTTPS connection costs 3 round
 * trips, on a warm one 1 (bench/PROFILE.md "WAN", bench/results-wan.md
 * calibration).
 *
 * The agent's own `createSocket` opens them (its options, TLS context and
 * connection name, as a request would), and its `free` event pools them
 * (node lib/_http_agent.js: `Agent.prototype.createSocket`, the `free`
 * listener, which keeps a socket whose request `shouldKeepAlive` while fewer
 * than `maxFreeSockets` are free; an idle pooled socket does not keep the
 * process alive and is dropped by its error listener if it fails).
 */
import type { Agent as HttpAgent } from 'node:http';
import { isIP } from 'node:net';
import type { Socket } from 'node:net';

/** The parts of Node's `http.Agent` this module uses that its typings leave out. */
interface AgentPool {
  readonly defaultPort: number;
  readonly options: Record<string, unknown>;
  readonly sockets: Readonly<Record<string, readonly Socket[] | undefined>>;
  readonly freeSockets: Readonly<Record<string, readonly Socket[] | undefined>>;
  getName(options: Record<string, unknown>): string;
  createSocket(
    req: { getHeader(name: string): undefined },
    options: Record<string, unknown>,
    cb: (err: Error | null, socket?: Socket) => void,
  ): void;
  emit(event: 'free', socket: Socket, options: Record<string, unknown>): boolean;
}

/**
 * Opens connections from `agent` to `url`'s origin until `count` are open
 * or in use there (never more than that: connections already there count).
 * Returns how many it started.
 */
export function warmConnections(agent: HttpAgent, url: URL, count: number): number {
  const pool = agent as unknown as AgentPool;
  if (typeof pool.createSocket !== 'function' || typeof pool.getName !== 'function') return 0;
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  // What http.request gives the agent for this URL: the host, the port (the
  // agent's default when the URL has none) and, as Node derives it from the
  // Host header, the TLS server name (none for an IP address).
  const options: Record<string, unknown> = {
    host,
    port: url.port === '' ? pool.defaultPort : Number(url.port),
    servername: isIP(host) === 0 ? host : '',
  };
  const name = pool.getName({ ...options, ...pool.options });
  const have = (pool.sockets[name]?.length ?? 0) + (pool.freeSockets[name]?.length ?? 0);
  let started = 0;
  for (let i = have; i < count; i++) {
    started += 1;
    pool.createSocket({ getHeader: () => undefined }, options, (err, socket) => {
      if (err || !socket) return;
      // Pooled as a kept-alive request's socket is (the `free` listener reads `_httpMessage.shouldKeepAlive`).
      (socket as Socket & { _httpMessage?: unknown })._httpMessage = { shouldKeepAlive: true };
      pool.emit('free', socket, options);
    });
  }
  return started;
}
