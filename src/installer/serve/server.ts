/**
 * `serve`: a read-only provider network mirror (spec §4.3) over a mirror
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
 *   that was checked (catalog.ts, files.ts).
 * - An access-log callback per request; the library never prints.
 * - `close()` stops accepting, lets requests in flight finish, and drops
 *   the remaining connections after a grace period.
 */
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { isIP, type AddressInfo } from 'node:net';
import { pipeline } from 'node:stream/promises';

import type { Flavor } from '../../addresses/index.js';
import { ErrorCode, ProvkitError } from '../../errors.js';
import type { HashPool } from '../../hashing/index.js';
import type { ScanWarning } from '../../sources/index.js';
import { MirrorCatalog, type Resource } from './catalog.js';

export interface AccessLogEntry {
  /** ISO 8601 UTC. */
  readonly time: string;
  readonly remote: string;
  readonly method: string;
  readonly path: string;
  readonly status: number;
  /** Body bytes sent. */
  readonly bytes: number;
  readonly durationMs: number;
  readonly userAgent: string;
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

export interface MirrorServer {
  /** The mirror base URL with its trailing slash (`https://127.0.0.1:8443/`). */
  readonly url: string;
  readonly port: number;
  readonly tls: boolean;
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
  if (!m || port > 65535) throw new ProvkitError(ErrorCode.USAGE, `invalid -listen address ${JSON.stringify(given)}: want HOST:PORT`);
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
export function parseRange(header: string | undefined, size: number): { start: number; end: number } | 'unsatisfiable' | undefined {
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
 * Starts the server and resolves once it listens.
 *
 * @throws {ProvkitError} `USAGE` for plain HTTP on a non-loopback address; `IO` when it cannot listen.
 */
export async function startMirrorServer(options: ServeOptions): Promise<MirrorServer> {
  if (!options.tls && !isLoopbackHost(options.host)) {
    throw new ProvkitError(ErrorCode.SERVE_INSECURE_LISTEN, `refusing to serve plain HTTP on ${options.host}: give -tls-cert and -tls-key, or listen on a loopback address`, {
      hint: 'network mirror clients require https; plain HTTP is for local testing only',
    });
  }
  const catalog = new MirrorCatalog({
    dir: options.dir,
    flavor: options.flavor,
    pool: options.pool,
    ...(options.refreshMs === undefined ? {} : { refreshMs: options.refreshMs }),
    ...(options.onWarning ? { onWarning: options.onWarning } : {}),
  });
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const started = process.hrtime.bigint();
    let bytes = 0;
    res.on('finish', () => {
      options.onRequest?.({
        time: new Date().toISOString(),
        remote: req.socket.remoteAddress ?? '',
        method: req.method ?? '',
        path: req.url ?? '',
        status: res.statusCode,
        bytes,
        durationMs: Number((process.hrtime.bigint() - started) / 1000n) / 1000,
        userAgent: req.headers['user-agent'] ?? '',
      });
    });
    const send = (status: number, headers: Record<string, string | number>, body?: Buffer): void => {
      res.writeHead(status, headers);
      if (body && req.method !== 'HEAD') {
        bytes += body.length;
        res.end(body);
      } else res.end();
    };
    const notFound = (): void => send(404, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': 10 }, Buffer.from('not found\n'));
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      send(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': 19 }, Buffer.from('method not allowed\n'));
      return;
    }
    const segments = mirrorPathSegments(req.url ?? '');
    if (!segments || segments.length !== 4) {
      notFound();
      return;
    }
    const [host, ns, type, file] = segments as [string, string, string, string];
    catalog
      .resolve(host, ns, type, file)
      .then(async (resource) => {
        if (!resource) return notFound();
        await respond(req, res, resource, (n) => (bytes += n), send);
      })
      .catch((err: unknown) => {
        options.onError?.(err, req.url ?? '');
        if (!res.headersSent) send(500, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': 15 }, Buffer.from('internal error\n'));
        else res.destroy();
      });
  };
  const server: Server = options.tls ? createHttpsServer({ cert: options.tls.cert, key: options.tls.key }, handler) : createHttpServer(handler);
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) =>
      reject(new ProvkitError(ErrorCode.IO, `cannot listen on ${options.host}:${options.port}: ${err.message}`, { cause: err })),
    );
    server.listen(options.port, options.host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const hostForUrl = addr.family === 'IPv6' || addr.address.includes(':') ? `[${addr.address}]` : addr.address;
  return {
    url: `${options.tls ? 'https' : 'http'}://${hostForUrl}:${addr.port}/`,
    port: addr.port,
    tls: options.tls !== undefined,
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

async function respondWith(
  req: IncomingMessage,
  res: ServerResponse,
  r: Resource,
  count: (n: number) => void,
  send: (status: number, headers: Record<string, string | number>, body?: Buffer) => void,
): Promise<void> {
  const size = r.kind === 'bytes' ? r.body.length : r.size;
  const base: Record<string, string | number> = {
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
  const headers = { ...base, 'Content-Length': Math.max(0, end - start + 1), ...(range ? { 'Content-Range': `bytes ${start}-${end}/${size}` } : {}) };
  if (r.kind === 'bytes') {
    send(status, headers, r.body.subarray(start, end + 1));
    return;
  }
  res.writeHead(status, headers);
  if (req.method === 'HEAD' || size === 0) {
    res.end();
    return;
  }
  // Read from the descriptor that was checked when the file was opened (files.ts).
  const stream = r.handle.createReadStream({ start, end, autoClose: false });
  stream.on('data', (c: string | Buffer) => count(c.length));
  await pipeline(stream, res);
}
