/**
 * A pull-through mirror as one running thing (docs/fleet-mirror.md): the
 * service (service.ts) behind the mirror server (src/serve/server.ts), with
 * the access log counted into its metrics. `provkit serve -upstream` and
 * `serve -offline` call {@link startPullThroughMirror} and nothing else.
 *
 * Stopping ({@link PullThroughMirror.close}, on SIGTERM): `/healthz` says
 * 503 at once, the server stops accepting, requests in flight (and the
 * fetches they wait for) may finish for up to `drainMs`, then what is left
 * is aborted; a fetch that did not finish stored nothing (store.ts).
 */
import type { AccessLogEntry } from '../serve/server.js';
import { startMirrorServer } from '../serve/server.js';
import { PullThroughService, type PullThroughOptions } from './service.js';

export interface PullThroughMirrorOptions extends PullThroughOptions {
  readonly host: string;
  readonly port: number;
  readonly tls?: { readonly cert: Buffer; readonly key: Buffer };
  /** The access log: one entry per answered request (`result` says hit, miss, stale, refused, …). */
  readonly onRequest?: (e: AccessLogEntry) => void;
  /** A request the server could not answer (a bug, or a file that changed while sent). */
  readonly onError?: (err: unknown, path: string) => void;
}

/** A running pull-through mirror. */
export interface PullThroughMirror {
  /** The base URL with its trailing slash (what clients put in `network_mirror { url = … }`). */
  readonly url: string;
  readonly tls: boolean;
  readonly service: PullThroughService;
  /** See the module comment. */
  close(): Promise<void>;
}

/**
 * Starts the service and its server.
 *
 * @throws {ProvkitError} `SERVE_INSECURE_LISTEN` for plain HTTP off loopback; `IO` when it cannot listen.
 */
export async function startPullThroughMirror(options: PullThroughMirrorOptions): Promise<PullThroughMirror> {
  const service = new PullThroughService(options);
  let inFlight = (): number => 0;
  service.metrics.gauge('provkit_mirror_requests_in_flight', () => inFlight());
  let server;
  try {
    server = await startMirrorServer({
      catalog: service,
      host: options.host,
      port: options.port,
      ...(options.tls ? { tls: options.tls } : {}),
      onRequest: (e) => {
        service.observe(e);
        options.onRequest?.(e);
      },
      ...(options.onError ? { onError: options.onError } : {}),
    });
  } catch (err) {
    await service.close();
    throw err;
  }
  const running = server;
  inFlight = () => running.requestsInFlight();
  const drainMs = options.drainMs ?? 60_000;
  return {
    url: running.url,
    tls: running.tls,
    service,
    close: async () => {
      const stopped = service.close();
      await running.close(drainMs);
      await stopped;
    },
  };
}
