/**
 * The base of the fake registry and network mirror: a real HTTP or HTTPS
 * server on 127.0.0.1 (ephemeral port, nothing else is ever bound), a request
 * log, and fault switches per request path.
 *
 * Contract:
 * - `handler` maps a request to a response (or undefined → 404). The server
 *   then applies the first armed fault for the request's path (exact
 *   pathname, or a RegExp), which counts down its `times` (default: every
 *   request).
 * - Every request is logged *before* it is answered (method, path, lower-case
 *   headers, the fault applied, the status sent).
 * - `close()` ends the server and destroys every open socket (stalled ones
 *   too). Servers are unref'd and close themselves after `lifetimeMs`
 *   (default 5 min) and at process exit, so a forgotten server cannot hang a
 *   test run.
 */
import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';

import { testTls } from './tls.js';

/** What a handler answers. `body` strings are UTF-8. */
export interface RouteResponse {
  status?: number;
  headers?: Record<string, string>;
  body?: Buffer | string;
}

export type Handler = (
  req: IncomingMessage,
  url: URL,
) => RouteResponse | undefined | Promise<RouteResponse | undefined>;

/**
 * A fault switch. `times` limits how many matching requests it affects
 * (default: all), so a test can show a retry succeeding after `times` failures.
 */
export type Fault = (
  | { kind: 'status'; status: number; headers?: Record<string, string>; body?: string }
  /** Send the headers (with the right Content-Length) and `after` bytes (default half), then destroy the socket. */
  | { kind: 'drop'; after?: number }
  /** An HTTP/1.0-style close-delimited body without Content-Length, cut after `after` bytes: undetectable by size. */
  | { kind: 'truncate'; after?: number }
  /** Declare Content-Length = real length + `delta`, send the body, then close. */
  | { kind: 'wrong-length'; delta: number }
  /** Close the connection with a TCP reset before any response byte (ECONNRESET on the client). */
  | { kind: 'reset' }
  /** `headers`: never answer; `body`: send headers and half the body, then nothing. */
  | { kind: 'stall'; phase: 'headers' | 'body' }
  /** Send the body at about `bytesPerSecond` (in chunks 10 times a second): a slow link, for the live progress display (issue 14). */
  | { kind: 'throttle'; bytesPerSecond: number }
  /** Flip one byte in the middle of the body (same length). */
  | { kind: 'tamper' }
  | { kind: 'content-type'; value: string }
  | { kind: 'redirect'; location: string; status?: number }
  /** Replace the body; a function gets the normal body. */
  | {
      kind: 'replace';
      body: Buffer | string | ((original: Buffer) => Buffer | Promise<Buffer>);
      headers?: Record<string, string>;
    }
  /**
   * A body without end: the handler's status and headers (no Content-Length,
   * so chunked), `prefix`, then `chunk` again and again, one write every
   * `intervalMs` (default 10) once the socket has drained, until the client
   * goes away. For limits that must hold while a body streams.
   */
  | { kind: 'endless'; prefix?: string; chunk: string; intervalMs?: number }
  /**
   * Hold the response until this server received a request for the path `request` (exact, or a RegExp: `count`
   * of them, default 1; `finished`: until their responses were completely sent), then answer as `then` says
   * (default: normally; a `then` that is another `after` counts from the same arming). An order between requests,
   * without a timer: e.g. a signature released only once its archive was asked for (or had been sent whole), or
   * the first archives held until every package's metadata was answered.
   */
  | {
      kind: 'after';
      request: string | RegExp;
      count?: number;
      finished?: boolean;
      then?: Fault;
      /** Set when armed. */ since?: number;
    }
) & { times?: number };

/** One logged request. */
export interface LoggedRequest {
  readonly method: string;
  /** Path and query as sent (percent-encoded). */
  readonly path: string;
  /** The decoded pathname. */
  readonly pathname: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  fault?: Fault['kind'];
  status?: number;
  /** The `Range` start answered with a 206, when ranges are on. */
  rangeStart?: number;
  /**
   * When the request's headers were read: epoch milliseconds with a fraction
   * (`performance.timeOrigin + performance.now()`, comparable across processes
   * of one machine), for benchmarks that place requests on a timeline
   * (bench/wan.ts).
   */
  readonly at: number;
  /** When the response's last byte was handed to the socket (same clock as {@link at}), once it was. */
  finishedAt?: number;
  /** The client socket's port: which connection carried the request (with {@link at}, the order on it). */
  readonly remotePort?: number;
}

/** One connection a server accepted (TCP; a TLS server's handshake comes after it). */
export interface LoggedConnection {
  /** When the server accepted it (the clock of {@link LoggedRequest.at}). */
  readonly at: number;
  /** The client socket's port: the {@link LoggedRequest.remotePort} of the requests it carries. */
  readonly remotePort: number | undefined;
}

/** Epoch milliseconds with a fraction: the clock of {@link LoggedRequest.at}. */
export function preciseNow(): number {
  return performance.timeOrigin + performance.now();
}

export interface ServerOptions {
  /** HTTPS with the test CA (default true). */
  tls?: boolean;
  handler: Handler;
  /** Faults keyed by decoded pathname, armed at start. */
  faults?: Record<string, Fault | Fault[]>;
  lifetimeMs?: number;
}

export interface TestServer {
  /** `https://127.0.0.1:PORT` (no trailing slash). */
  readonly origin: string;
  /** `ORIGIN/` (the network mirror overrides it with its base URL). */
  readonly url: string;
  /** `127.0.0.1:PORT`: the URL host, also the provider hostname form of this server. */
  readonly host: string;
  readonly port: number;
  /** The CA (PEM and file) that signed the server certificate (HTTPS only, else empty). */
  readonly caPem: string;
  readonly caPath: string;
  readonly log: LoggedRequest[];
  /** Every connection accepted, in order (connections opened ahead of their requests show here first). */
  readonly connections: LoggedConnection[];
  /** Arms a fault for a decoded pathname (exact) or pattern; later faults for the same key queue behind earlier ones. */
  setFault(path: string | RegExp, fault: Fault): void;
  clearFaults(): void;
  /**
   * Serve byte ranges (off by default, so existing tests see exactly what
   * they always saw): a 200 then carries `Accept-Ranges: bytes` and a strong
   * `ETag` (SHA-256 of the body), and a `Range: bytes=N-` request (with a
   * matching or absent `If-Range`) gets `206` with `Content-Range`. Faults
   * apply to the body actually sent (the slice).
   */
  setRanges(on: boolean): void;
  /** Requests whose decoded pathname equals `pathname` (or matches a RegExp). */
  requests(pathname: string | RegExp): LoggedRequest[];
  close(): Promise<void>;
}

interface Armed {
  match: string | RegExp;
  fault: Fault;
  left: number;
  /** The log's length when it was armed (an `after` fault counts only the requests made since). */
  since: number;
}

const open = new Set<TestServer>();
process.once('exit', () => {
  for (const s of open) void s.close();
});

function flip(body: Buffer): Buffer {
  const out = Buffer.from(body);
  if (out.length > 0) {
    const i = Math.floor(out.length / 2);
    out[i] = (out[i] ?? 0) ^ 0xff;
  }
  return out;
}

function decodePath(pathname: string): string {
  try {
    return decodeURIComponent(pathname);
  } catch {
    return pathname;
  }
}

/** Starts a server; see the module comment. */
export async function startServer(options: ServerOptions): Promise<TestServer> {
  const useTls = options.tls ?? true;
  const tls = useTls ? await testTls() : undefined;
  const log: LoggedRequest[] = [];
  const connections: LoggedConnection[] = [];
  let armed: Armed[] = [];
  let ranges = false;
  const sockets = new Set<Socket>();
  /** Emits `request` when a request arrives or a response is sent whole (the `after` fault waits on it). */
  const happened = new EventEmitter();
  happened.setMaxListeners(0);

  const takeFault = (pathname: string): Fault | undefined => {
    const i = armed.findIndex(
      (a) => a.left > 0 && (typeof a.match === 'string' ? a.match === pathname : a.match.test(pathname)),
    );
    if (i === -1) return undefined;
    const a = armed[i]!;
    a.left -= 1;
    return a.fault.kind === 'after' ? { ...a.fault, since: a.since } : a.fault;
  };

  const onRequest = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const pathname = decodePath(url.pathname);
    const entry: LoggedRequest = {
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      pathname,
      headers: { ...req.headers },
      at: preciseNow(),
      ...(req.socket.remotePort === undefined ? {} : { remotePort: req.socket.remotePort }),
    };
    log.push(entry);
    happened.emit('request');
    res.once('finish', () => {
      entry.finishedAt = preciseNow();
      happened.emit('request');
    });
    let fault = takeFault(pathname);
    if (fault) entry.fault = fault.kind;
    while (fault?.kind === 'after') {
      // Only requests made since the fault was armed count.
      const { request, count = 1, finished, since = 0 } = fault;
      const matches = (pathname: string): boolean =>
        typeof request === 'string' ? pathname === request : request.test(pathname);
      const seen = (): boolean =>
        log.slice(since).filter((l) => matches(l.pathname) && (finished !== true || l.finishedAt !== undefined))
          .length >= count;
      await new Promise<void>((resolve) => {
        const check = (): void => {
          if (!seen() && !req.socket.destroyed) return;
          happened.off('request', check);
          req.socket.off('close', check);
          resolve();
        };
        happened.on('request', check);
        req.socket.on('close', check);
        check();
      });
      fault = fault.then?.kind === 'after' ? { ...fault.then, since } : fault.then;
      if (fault) entry.fault = fault.kind;
    }

    if (fault?.kind === 'stall' && fault.phase === 'headers') return;
    if (fault?.kind === 'reset') {
      // A TCP RST where the socket allows it (plain TCP); a TLS socket cannot
      // send one from Node, so it is closed without a response byte instead.
      try {
        req.socket.resetAndDestroy();
      } catch {
        req.socket.destroy();
      }
      return;
    }
    if (fault?.kind === 'status') {
      entry.status = fault.status;
      res.writeHead(fault.status, { 'content-type': 'text/plain', ...fault.headers });
      res.end(fault.body ?? `fault: ${fault.status}\n`);
      return;
    }
    if (fault?.kind === 'redirect') {
      entry.status = fault.status ?? 302;
      res.writeHead(entry.status, { location: fault.location });
      res.end();
      return;
    }

    let answer: RouteResponse | undefined;
    try {
      answer = await options.handler(req, url);
    } catch (err) {
      answer = { status: 500, body: `handler failed: ${String(err)}\n` };
    }
    answer ??= { status: 404, headers: { 'content-type': 'text/plain' }, body: 'not found\n' };
    let body = typeof answer.body === 'string' ? Buffer.from(answer.body) : (answer.body ?? Buffer.alloc(0));
    const headers: Record<string, string> = { ...answer.headers };
    let status = answer.status ?? 200;
    entry.status = status;

    if (fault?.kind === 'tamper') body = flip(body);
    if (fault?.kind === 'content-type') headers['content-type'] = fault.value;
    if (fault?.kind === 'replace') {
      body =
        typeof fault.body === 'function'
          ? await fault.body(body)
          : typeof fault.body === 'string'
            ? Buffer.from(fault.body)
            : fault.body;
      Object.assign(headers, fault.headers);
    }

    if (ranges && status === 200) {
      const etag = `"${createHash('sha256').update(body).digest('hex').slice(0, 32)}"`;
      headers['accept-ranges'] = 'bytes';
      headers['etag'] = etag;
      const m = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
      const ifRange = req.headers['if-range'];
      if (m && (ifRange === undefined || ifRange === etag) && Number(m[1]) < body.length) {
        const from = Number(m[1]);
        entry.status = 206;
        entry.rangeStart = from;
        headers['content-range'] ??= `bytes ${from}-${body.length - 1}/${body.length}`;
        status = 206;
        body = body.subarray(from);
      }
    }

    const socket = req.socket;
    switch (fault?.kind) {
      case 'drop': {
        res.writeHead(status, { ...headers, 'content-length': String(body.length) });
        res.write(body.subarray(0, fault.after ?? Math.floor(body.length / 2)));
        setTimeout(() => socket.destroy(), 20);
        return;
      }
      case 'truncate': {
        const head = [
          `HTTP/1.1 ${status} OK`,
          ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
          'connection: close',
          '',
          '',
        ].join('\r\n');
        socket.write(head);
        socket.end(body.subarray(0, fault.after ?? Math.floor(body.length / 2)));
        return;
      }
      case 'wrong-length': {
        res.writeHead(status, { ...headers, 'content-length': String(body.length + fault.delta), connection: 'close' });
        // Write around the response object so that Node does not police the length.
        res.flushHeaders();
        socket.end(body);
        return;
      }
      case 'stall': {
        res.writeHead(status, { ...headers, 'content-length': String(body.length) });
        res.write(body.subarray(0, Math.floor(body.length / 2)));
        return;
      }
      case 'endless': {
        res.writeHead(status, headers);
        const chunk = Buffer.from(fault.chunk);
        const next = (): void => {
          if (res.destroyed || socket.destroyed) return;
          const t = setTimeout(() => (res.write(chunk) ? next() : res.once('drain', next)), fault.intervalMs ?? 10);
          t.unref();
        };
        res.write(fault.prefix ?? '');
        next();
        return;
      }
      case 'throttle': {
        res.writeHead(status, { ...headers, 'content-length': String(body.length) });
        const chunk = Math.max(1, Math.floor(fault.bytesPerSecond / 10));
        let at = 0;
        const timer = setInterval(() => {
          if (res.destroyed) {
            clearInterval(timer);
            return;
          }
          res.write(body.subarray(at, at + chunk));
          at += chunk;
          if (at >= body.length) {
            clearInterval(timer);
            res.end();
          }
        }, 100);
        return;
      }
      default:
        res.writeHead(status, { ...headers, 'content-length': String(body.length) });
        sendInBlocks(res, body);
    }
  };

  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    void onRequest(req, res);
  };
  const server: Server = tls
    ? createHttpsServer({ cert: tls.certPem, key: tls.keyPem }, listener)
    : createHttpServer(listener);
  server.on('connection', (s: Socket) => {
    connections.push({ at: preciseNow(), remotePort: s.remotePort });
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('secureConnection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  server.unref();
  const port = (server.address() as AddressInfo).port;

  for (const [path, f] of Object.entries(options.faults ?? {})) {
    for (const fault of Array.isArray(f) ? f : [f])
      armed.push({ match: path, fault, left: fault.times ?? Infinity, since: log.length });
  }

  let closed: Promise<void> | undefined;
  const self: TestServer = {
    origin: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    url: `${tls ? 'https' : 'http'}://127.0.0.1:${port}/`,
    host: `127.0.0.1:${port}`,
    port,
    caPem: tls?.caPem ?? '',
    caPath: tls?.caPath ?? '',
    log,
    connections,
    setFault(match, fault) {
      armed.push({ match, fault, left: fault.times ?? Infinity, since: log.length });
    },
    clearFaults() {
      armed = [];
    },
    setRanges(on) {
      ranges = on;
    },
    requests(pathname) {
      return log.filter((r) => (typeof pathname === 'string' ? r.pathname === pathname : pathname.test(r.pathname)));
    },
    close() {
      closed ??= new Promise<void>((resolve) => {
        open.delete(self);
        clearTimeout(lifetime);
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
        server.closeAllConnections?.();
      });
      return closed;
    },
  };
  const lifetime = setTimeout(() => void self.close(), options.lifetimeMs ?? 300_000);
  lifetime.unref();
  open.add(self);
  return self;
}

/**
 * Writes `body` in 256 KiB writes, waiting for `drain`, then ends. A whole
 * 100 MB buffer in one `res.end(body)` over TLS cost the server 6.3 CPU-s for
 * five such bodies against 1.2 CPU-s in blocks (measured for issue 13,
 * bench/PROFILE.md "The benchmark's server"): the server, not the client, was
 * the bottleneck of every download benchmark. Real registries stream.
 */
function sendInBlocks(res: ServerResponse, body: Buffer): void {
  const BLOCK = 256 * 1024;
  let at = 0;
  const next = (): void => {
    while (at < body.length) {
      if (res.destroyed) return;
      const ok = res.write(body.subarray(at, at + BLOCK));
      at += BLOCK;
      if (!ok) {
        res.once('drain', next);
        return;
      }
    }
    res.end();
  };
  next();
}
