/**
 * `serve`: a read-only provider network mirror (docs/reference.md §4.3) over a mirror
 * directory (see catalog.ts for what it serves).
 *
 * - HTTPS with the given certificate; plain HTTP only on a loopback address
 *   (the caller is told to warn), refused elsewhere.
 * - GET and HEAD of `/HOST/NS/TYPE/index.json`, `/HOST/NS/TYPE/VERSION.json`
 *   and `/HOST/NS/TYPE/terraform-provider-…zip`; anything else is 404 (no
 *   directory listing), other methods 405. Path segments are
 *   percent-decoded once; a segment that decodes to `.`, `..`, or holds `/`,
 *   `\` or NUL is 404, so nothing outside the directory is reachable.
 * - `Content-Type: application/json` / `application/zip`; `ETag` with
 *   `If-None-Match` → 304; `Range` (one range) → 206 with `Content-Range`,
 *   416 when unsatisfiable; `If-Range` honoured.
 * - Only regular files inside the directory are read, from the descriptor
 *   that was checked (catalog.ts, files.ts); a file that changes length
 *   while it is sent ends the connection.
 * - Per connection, one request at a time and at most {@link MAX_PIPELINED}
 *   outstanding; a connection idle for {@link IDLE_TIMEOUT_MS} is closed.
 * - An access-log callback per request (query strings redacted); the
 *   library never prints.
 * - `close()` stops accepting, lets requests in flight finish, and drops
 *   the remaining connections after a grace period.
 */
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { isIP, type AddressInfo, type Socket } from 'node:net';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

import type { Flavor } from '../addresses/index.js';
import { ErrorCode, ProvkitError } from '../errors.js';
import type { HashPool } from '../hashing/index.js';
import type { ScanWarning } from '../sources/index.js';
import { MirrorCatalog, type Resource } from './catalog.js';

export interface AccessLogEntry {
  /** ISO 8601 UTC. */
  readonly time: string;
  readonly remote: string;
  readonly method: string;
  /** The request target, a query string redacted ({@link loggedPath}). */
  readonly path: string;
  readonly status: number;
  /** Body bytes sent. */
  readonly bytes: number;
  readonly durationMs: number;
  readonly userAgent: string;
  /** How the request ended, when the catalog says (a pull-through mirror's `hit`, `miss`, …). */
  readonly result?: string;
}

/** An answer that is a status and a short text (`403` outside an allow-list, `502` when an origin failed). */
export interface StatusAnswer {
  readonly kind: 'status';
  readonly status: number;
  /** One line of plain text, sent as the body. */
  readonly message: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly result?: string;
}

/** What a catalog answers a request with. */
export type Answer = Resource | StatusAnswer;

/**
 * What the server asks what to send: the directory's {@link MirrorCatalog},
 * or another implementation (a pull-through mirror,
 * pull-through/service.ts).
 */
export interface ResourceCatalog {
  /** The answer for `/HOST/NS/TYPE/FILE` (decoded segments), or undefined (404). A `file` resource is closed by the server. */
  resolve(host: string, ns: string, type: string, file: string): Promise<Answer | undefined>;
  /** The answer for any other path (decoded, checked segments: `['healthz']`), or undefined (404). */
  resolveOther?(segments: readonly string[]): Promise<Answer | undefined>;
  close(): Promise<void>;
}

export interface ServeOptions {
  readonly dir: string;
  readonly flavor: Flavor;
  readonly pool: HashPool;
  readonly host: string;
  /** 0 for an ephemeral port. */
  readonly port: number;
  /** PEM certificate (chain) and key; without them the server speaks plain HTTP, on loopback only. */
  readonly tls?: { readonly cert: string | Buffer; readonly key: string | Buffer };
  readonly refreshMs?: number;
  readonly onRequest?: (e: AccessLogEntry) => void;
  readonly onWarning?: (w: ScanWarning) => void;
  /** Called when a request fails unexpectedly (the client gets a 500). */
  readonly onError?: (err: unknown, path: string) => void;
}

/** {@link startMirrorServer} over a catalog of the caller's. */
export interface CatalogServeOptions extends Omit<ServeOptions, 'dir' | 'flavor' | 'pool' | 'refreshMs' | 'onWarning'> {
  readonly catalog: ResourceCatalog;
}

export interface MirrorServer {
  /** The mirror base URL with its trailing slash (`https://127.0.0.1:8443/`). */
  readonly url: string;
  readonly port: number;
  readonly tls: boolean;
  /** Requests received and not yet answered (or abandoned). */
  requestsInFlight(): number;
  /** Stops accepting, waits for requests in flight (up to `graceMs`, default 5000), then drops what is left. */
  close(graceMs?: number): Promise<void>;
}

/** 127.0.0.0/8, ::1, ::ffff:127.x and `localhost`. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h === '::1') return true;
  const v4 = h.startsWith('::ffff:') ? h.slice(7) : h;
  return isIP(v4) === 4 && v4.startsWith('127.');
}

/**
 * Parses `HOST:PORT` (`[v6]:PORT`, or a bare port) as `-listen` takes it.
 *
 * @throws {ProvkitError} `USAGE`.
 */
export function parseListen(given: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(given) ?? /^()()(\d{1,5})$/.exec(given);
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535)
    throw new ProvkitError(ErrorCode.USAGE, `invalid -listen address ${JSON.stringify(given)}: want HOST:PORT`);
  const host = m[1] ?? (m[2] === '' || m[2] === undefined ? '127.0.0.1' : m[2]);
  return { host, port };
}

/** Splits and decodes a request path into segments, or undefined when it is not a safe mirror path. */
export function mirrorPathSegments(rawUrl: string): string[] | undefined {
  const path = rawUrl.split('?', 1)[0]!.split('#', 1)[0]!;
  if (!path.startsWith('/')) return undefined;
  const raw = path.slice(1).split('/');
  const out: string[] = [];
  for (const r of raw) {
    let s: string;
    try {
      s = decodeURIComponent(r);
    } catch {
      return undefined;
    }
    if (s === '' || s === '.' || s === '..' || /[/\\\0]/.test(s)) return undefined;
    out.push(s);
  }
  return out;
}

/** One `bytes=` range against `size`: the range, 'unsatisfiable', or undefined to send everything. */
export function parseRange(
  header: string | undefined,
  size: number,
): { start: number; end: number } | 'unsatisfiable' | undefined {
  if (header === undefined) return undefined;
  const m = /^bytes=\s*(\d*)-(\d*)\s*$/.exec(header);
  if (!m) return undefined; // several ranges or another unit: the whole body (RFC 9110 allows ignoring Range)
  const [, a = '', b = ''] = m;
  if (a === '' && b === '') return undefined;
  if (a === '') {
    const n = Number(b);
    if (n === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(a);
  const end = b === '' ? size - 1 : Math.min(Number(b), size - 1);
  if (start >= size || (b !== '' && Number(b) < start)) return 'unsatisfiable';
  return { start, end };
}

function etagMatches(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((t) => t.trim().replace(/^W\//, '') === etag);
}

/**
 * The request target as the access log records it: the path, and of a query
 * string only that there was one (`?[redacted]`): clients put tokens there
 * (pinned by test/e2e/serve-hardening.test.ts), and the protocol uses none.
 */
export function loggedPath(rawUrl: string): string {
  const q = rawUrl.indexOf('?');
  return q < 0 ? rawUrl : `${rawUrl.slice(0, q)}?[redacted]`;
}

/**
 * Requests a connection may have outstanding (received, response not yet
 * sent) before the server gives up on it. HTTP/1.1 allows a client to send
 * requests without reading the responses; Node parses every request it has
 * read and queues a response object for each, and resumes reading as soon as
 * its own queue drains into the socket's buffer, so a client that never
 * reads made the server grow without bound (test/e2e/serve-hardening.test.ts: 60,000 pipelined
 * requests, 900 MB). tofu and terraform (Go's net/http) never pipeline.
 */
export const MAX_PIPELINED = 32;
/** A connection on which nothing moves (no byte read or written) for this long is closed. */
export const IDLE_TIMEOUT_MS = 120_000;

/** One connection's queue: its requests are answered one after the other. */
interface Connection {
  outstanding: number;
  busy: boolean;
  waitingForDrain: boolean;
  readonly queue: Array<() => Promise<void>>;
}

/**
 * Starts the server and resolves once it listens.
 *
 * Per connection, requests are answered one at a time, and the next one is
 * started only when the socket has taken the previous response (its buffer
 * drained): output buffered for a client that does not read is one response
 * chunk, not one per request. More than {@link MAX_PIPELINED} outstanding
 * requests close the connection.
 *
 * @throws {ProvkitError} `USAGE` for plain HTTP on a non-loopback address; `IO` when it cannot listen.
 */
export async function startMirrorServer(options: ServeOptions | CatalogServeOptions): Promise<MirrorServer> {
  if (!options.tls && !isLoopbackHost(options.host)) {
    throw new ProvkitError(
      ErrorCode.SERVE_INSECURE_LISTEN,
      `refusing to serve plain HTTP on ${options.host}: give -tls-cert and -tls-key, or listen on a loopback address`,
      {
        hint: 'network mirror clients require https; plain HTTP is for local testing only',
      },
    );
  }
  const catalog: ResourceCatalog =
    'catalog' in options
      ? options.catalog
      : new MirrorCatalog({
          dir: options.dir,
          flavor: options.flavor,
          pool: options.pool,
          ...(options.refreshMs === undefined ? {} : { refreshMs: options.refreshMs }),
          ...(options.onWarning ? { onWarning: options.onWarning } : {}),
        });
  let inFlight = 0;
  const connections = new WeakMap<Socket, Connection>();
  const connectionOf = (socket: Socket): Connection => {
    let c = connections.get(socket);
    if (!c) {
      const conn: Connection = { outstanding: 0, busy: false, waitingForDrain: false, queue: [] };
      socket.once('close', () => (conn.queue.length = 0));
      connections.set(socket, conn);
      c = conn;
    }
    return c;
  };
  const pump = (socket: Socket, conn: Connection): void => {
    if (conn.busy || conn.queue.length === 0 || socket.destroyed) return;
    if (socket.writableNeedDrain) {
      if (!conn.waitingForDrain) {
        conn.waitingForDrain = true;
        socket.once('drain', () => {
          conn.waitingForDrain = false;
          pump(socket, conn);
        });
      }
      return;
    }
    const job = conn.queue.shift()!;
    conn.busy = true;
    void job().finally(() => {
      conn.busy = false;
      conn.outstanding--;
      pump(socket, conn);
    });
  };

  const handle = (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const started = process.hrtime.bigint();
    const path = loggedPath(req.url ?? '');
    let bytes = 0;
    let result: string | undefined;
    inFlight++;
    const ended = new Promise<void>((resolve) =>
      res.once('close', () => {
        inFlight--;
        resolve();
      }),
    );
    res.on('finish', () => {
      options.onRequest?.({
        time: new Date().toISOString(),
        remote: req.socket.remoteAddress ?? '',
        method: req.method ?? '',
        path,
        status: res.statusCode,
        bytes,
        durationMs: Number((process.hrtime.bigint() - started) / 1000n) / 1000,
        userAgent: req.headers['user-agent'] ?? '',
        ...(result === undefined ? {} : { result }),
      });
    });
    const send = (status: number, headers: Record<string, string | number>, body?: Buffer): void => {
      res.writeHead(status, headers);
      if (body && req.method !== 'HEAD') {
        bytes += body.length;
        res.end(body);
      } else res.end();
    };
    const notFound = (): void =>
      send(404, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': 10 }, Buffer.from('not found\n'));
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      send(
        405,
        { Allow: 'GET, HEAD', 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': 19 },
        Buffer.from('method not allowed\n'),
      );
      return ended;
    }
    const segments = mirrorPathSegments(req.url ?? '');
    if (!segments || (segments.length !== 4 && catalog.resolveOther === undefined)) {
      notFound();
      return ended;
    }
    const answer =
      segments.length === 4
        ? catalog.resolve(segments[0]!, segments[1]!, segments[2]!, segments[3]!)
        : catalog.resolveOther!(segments);
    answer
      .then(async (resource) => {
        if (!resource) return notFound();
        result = resource.result;
        if (resource.kind === 'status') {
          const body = Buffer.from(`${resource.message}\n`);
          return send(
            resource.status,
            { ...resource.headers, 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': body.length },
            body,
          );
        }
        await respond(req, res, resource, (n) => (bytes += n), send);
      })
      .catch((err: unknown) => {
        // A client that went away is not an error of the server.
        if (!(err instanceof SentShort) && (req.socket.destroyed || res.destroyed) && !res.writableFinished) {
          res.destroy();
          return;
        }
        options.onError?.(err, path);
        if (!res.headersSent)
          send(
            500,
            { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': 15 },
            Buffer.from('internal error\n'),
          );
        else res.destroy();
      });
    return ended;
  };

  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const socket = req.socket;
    if (socket.destroyed) return;
    const conn = connectionOf(socket);
    conn.outstanding++;
    if (conn.outstanding > MAX_PIPELINED) {
      conn.queue.length = 0;
      stopParsing(socket);
      socket.destroy();
      return;
    }
    conn.queue.push(() => handle(req, res));
    pump(socket, conn);
  };
  const server: Server = options.tls
    ? createHttpsServer({ cert: options.tls.cert, key: options.tls.key }, handler)
    : createHttpServer(handler);
  server.keepAliveTimeout = 5000;
  server.timeout = IDLE_TIMEOUT_MS;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) =>
      reject(
        new ProvkitError(ErrorCode.IO, `cannot listen on ${options.host}:${options.port}: ${err.message}`, {
          cause: err,
        }),
      ),
    );
    server.listen(options.port, options.host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const hostForUrl = addr.family === 'IPv6' || addr.address.includes(':') ? `[${addr.address}]` : addr.address;
  return {
    url: `${options.tls ? 'https' : 'http'}://${hostForUrl}:${addr.port}/`,
    port: addr.port,
    tls: options.tls !== undefined,
    requestsInFlight: () => inFlight,
    close: async (graceMs = 5000) => {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => server.closeAllConnections(), graceMs);
        timer.unref();
        server.close(() => {
          clearTimeout(timer);
          resolve();
        });
        server.closeIdleConnections();
      });
      await catalog.close();
    },
  };
}

/**
 * Makes Node's HTTP parser stop at the next request of the chunk it is
 * parsing, for a connection being dropped. Node parses each chunk read from
 * the socket (up to 64 KiB, some 600 small pipelined requests) to its end
 * and builds a request and a response object for every request in it, even
 * after the socket is destroyed; 200 connections doing that at once cost
 * hundreds of MB and seconds of CPU. Returning 2 from the parser's
 * `onIncoming` is how Node's own server (`lib/_http_server.js`
 * `parserOnIncoming`) ends parsing at an upgrade: llhttp stops there. The
 * property is internal: where it is missing, the socket is only destroyed
 * (the cost is then one chunk per connection, still bounded).
 */
function stopParsing(socket: Socket): void {
  const parser = (socket as Socket & { parser?: { onIncoming?: unknown } | null }).parser;
  if (parser && typeof parser.onIncoming === 'function') parser.onIncoming = (): number => 2;
}

/** A file that changed length while it was sent: the response cannot be completed. */
class SentShort extends Error {}

async function respond(
  req: IncomingMessage,
  res: ServerResponse,
  r: Resource,
  count: (n: number) => void,
  send: (status: number, headers: Record<string, string | number>, body?: Buffer) => void,
): Promise<void> {
  try {
    await respondWith(req, res, r, count, send);
  } finally {
    // FileHandle.close waits for a read still in flight.
    if (r.kind === 'file') await r.handle.close();
  }
}

/** The size of each read of a file being sent. */
const FILE_READ_BYTES = 256 * 1024;

async function respondWith(
  req: IncomingMessage,
  res: ServerResponse,
  r: Resource,
  count: (n: number) => void,
  send: (status: number, headers: Record<string, string | number>, body?: Buffer) => void,
): Promise<void> {
  const size = r.kind === 'bytes' ? r.body.length : r.size;
  const base: Record<string, string | number> = {
    ...r.headers,
    'Content-Type': r.contentType,
    ETag: r.etag,
    'Accept-Ranges': 'bytes',
    'Cache-Control': r.contentType === 'application/json' ? 'no-cache' : 'public, max-age=300',
  };
  if (r.mtime) base['Last-Modified'] = r.mtime.toUTCString();
  if (etagMatches(req.headers['if-none-match'], r.etag)) {
    send(304, base);
    return;
  }
  const ifRange = req.headers['if-range'];
  const range = ifRange === undefined || ifRange === r.etag ? parseRange(req.headers.range, size) : undefined;
  if (range === 'unsatisfiable') {
    send(416, { ...base, 'Content-Range': `bytes */${size}`, 'Content-Length': 0 });
    return;
  }
  const status = range ? 206 : 200;
  const start = range ? range.start : 0;
  const end = range ? range.end : size - 1;
  const length = Math.max(0, end - start + 1);
  const headers = {
    ...base,
    'Content-Length': length,
    ...(range ? { 'Content-Range': `bytes ${start}-${end}/${size}` } : {}),
  };
  if (r.kind === 'bytes') {
    send(status, headers, r.body.subarray(start, end + 1));
    return;
  }
  res.writeHead(status, headers);
  if (req.method === 'HEAD' || length === 0) {
    res.end();
    return;
  }
  // Read from the descriptor that was checked when the file was opened (files.ts).
  // Content-Length is promised: a file that shrank while it was sent ends the
  // connection (the client sees a short body), never a response that ends
  // early on a connection that stays open.
  let sent = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      sent += chunk.length;
      count(chunk.length);
      done(null, chunk);
    },
    flush(done) {
      done(sent === length ? null : new SentShort(`${r.path} changed while it was sent: ${sent} of ${length} bytes`));
    },
  });
  // 256 KiB reads: a quarter less CPU per byte served over TLS than the
  // default 64 KiB (bench/fleet.ts, "GETs only"), at 256 KiB per transfer.
  await pipeline(
    r.handle.createReadStream({ start, end, autoClose: false, highWaterMark: FILE_READ_BYTES }),
    counter,
    res,
  );
}
