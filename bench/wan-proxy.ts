/**
 * A user-space WAN in front of loopback servers: a TCP proxy (TLS passes
 * through it untouched and is delayed like every other byte) that gives each
 * route a listening port on 127.0.0.1 and forwards it to one upstream host.
 *
 * The model (bench/PROFILE.md "WAN" and bench/results-wan.md show its
 * calibration):
 * - **Latency.** Every byte is held RTT/2 in each direction. A new
 *   connection costs one more RTT before its first client byte leaves, as a
 *   TCP handshake would (SYN, SYN-ACK, then data). So a plain HTTP request on
 *   a new connection takes 2 RTT, on a kept-alive one 1 RTT, and an HTTPS
 *   request on a new connection 3 RTT (TCP, TLS 1.3, HTTP).
 * - **Bandwidth.** A token bucket per connection and direction
 *   (`perConnectionBytesPerSecond`, as a CDN caps each connection) and,
 *   optionally, one shared by all connections per direction
 *   (`totalBytesPerSecond`, the user's link). Bytes leave in order, in slices
 *   of at most {@link SLICE} bytes, when every bucket that applies holds them.
 * - **Backpressure.** A direction holds at most what its delay and rate keep
 *   in flight (plus a margin); beyond that it stops reading from its sender,
 *   so a sender's writes wait as they would on a full TCP window, and a
 *   receiver that stops reading stops the sender too.
 * - Not modelled: TCP slow start (a real new connection needs several RTTs to
 *   reach its cap, which favours clients that open few connections), loss,
 *   and the receive window's own limit (Linux autotuning lets a window grow to
 *   several MB, beyond 12 MB/s × 150 ms).
 *
 * Counters: connections per route, bytes each way, and per connection the
 * times each received chunk arrived and left (it cannot parse TLS, so
 * requests are counted by the servers behind it: the fake registry's request
 * log, with the connection's upstream port to tie the two together;
 * bench/wan-analysis.ts).
 *
 * Use it in-process ({@link startWanProxy}), in a child process of its own
 * ({@link forkWanProxy}: the benchmark does, so that its servers' TLS work
 * does not delay the proxy's timers), or alone:
 *
 *   npx tsx bench/wan-proxy.ts [--rtt MS] [--per-connection RATE] [--total RATE] LISTEN=HOST:PORT...
 *
 * e.g. `--rtt 60 --per-connection 12MB 8443=127.0.0.1:443` (LISTEN 0 picks a
 * free port; RATE in bytes per second, with K/M/G suffixes of 10^3, 10^6,
 * 10^9, and an optional trailing `B` or `B/s`). It prints where each route
 * listens and, when stopped (Ctrl-C), its counters.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

/** The largest piece of a chunk that leaves at once (bytes). */
export const SLICE = 16 * 1024;
/** A direction waits at least this long for tokens (ms), so that a capped stream wakes ~250 times a second, not thousands. */
const TOKEN_TICK_MS = 4;
/** The last part of a delay (ms) is waited for by turns of the event loop, not a timer (see Lane.settle). */
const SPIN_MS = 2;

/** The link the proxy imitates. */
export interface WanProfile {
  /** Round-trip time (ms): RTT/2 each way for every byte, one more RTT before a new connection's first byte. */
  readonly rttMs: number;
  /** Per connection and direction (bytes per second); absent: no cap. */
  readonly perConnectionBytesPerSecond?: number;
  /** All connections together, per direction (bytes per second); absent: no cap. */
  readonly totalBytesPerSecond?: number;
}

/** One upstream host behind the proxy. */
export interface WanRoute {
  /** Names the route in counters (e.g. `registry`, `cdn`). */
  readonly name: string;
  readonly upstreamPort: number;
  /** Default 127.0.0.1. */
  readonly upstreamHost?: string;
  /** Default 0: a free port. */
  readonly listenPort?: number;
}

/** One chunk as the proxy received it from one side, and when its last byte was written to the other (epoch ms). */
export interface ChunkRecord {
  readonly recvAt: number;
  readonly sentAt: number;
  readonly bytes: number;
}

/** One client connection through the proxy. */
export interface ConnectionRecord {
  readonly id: number;
  readonly route: string;
  /** When the client connected (epoch ms): the start of its TCP handshake. */
  readonly openedAt: number;
  closedAt?: number;
  /** The local port of the proxy's upstream socket: what the server sees as the client's port. */
  upstreamPort?: number;
  bytesUp: number;
  bytesDown: number;
  /** Client → server chunks. */
  readonly up: ChunkRecord[];
  /** Server → client chunks. */
  readonly down: ChunkRecord[];
}

/** What the proxy counted since it started or was last reset. */
export interface WanStats {
  readonly profile: WanProfile;
  /** When counting started (epoch ms). */
  readonly since: number;
  readonly connections: ConnectionRecord[];
}

/** Controls a proxy, in this process or in a child process alike. */
export interface WanProxyControl {
  /** The listening port of each route, by name (on 127.0.0.1). */
  readonly ports: Readonly<Record<string, number>>;
  /** The proxy's process id, when it runs in a process of its own (forkWanProxy). */
  readonly pid?: number;
  /** The profile for connections opened from now on. */
  configure(profile: WanProfile): Promise<void>;
  stats(): Promise<WanStats>;
  /** Forgets the connections counted so far (open ones are no longer counted). */
  reset(): Promise<void>;
  close(): Promise<void>;
}

/** Epoch milliseconds with a fraction (comparable across processes of one machine). */
export function preciseNow(): number {
  return performance.timeOrigin + performance.now();
}

/**
 * A token bucket: `rate` bytes per second, holding at most `burst`, full at
 * the start. Pure: every call is given the time (ms).
 */
export class TokenBucket {
  private tokens: number;
  private at: number;

  constructor(
    readonly rate: number,
    readonly burst: number,
    now: number,
  ) {
    if (!(rate > 0) || !(burst > 0)) throw new RangeError(`TokenBucket: rate and burst must be > 0`);
    this.tokens = burst;
    this.at = now;
  }

  /**
   * Tokens up to `now`. An idle bucket fills up to its burst; from
   * `backlogSince` on (bytes have been waiting for the link since then) it is
   * not capped: a link with bytes queued sends all the time, so a late
   * wake-up of this process (a timer that fired late, a core it waited for)
   * costs no throughput, as it would not on a real link.
   */
  private refill(now: number, backlogSince = now): void {
    const idleUntil = Math.min(now, backlogSince);
    if (idleUntil > this.at) {
      this.tokens = Math.min(this.burst, this.tokens + ((idleUntil - this.at) * this.rate) / 1000);
      this.at = idleUntil;
    }
    if (now > this.at) {
      this.tokens += ((now - this.at) * this.rate) / 1000;
      this.at = now;
    }
  }

  /** The earliest time at which `n` bytes (at most `burst`) may pass: `now` when they may now. */
  readyAt(n: number, now: number, backlogSince?: number): number {
    this.refill(now, backlogSince);
    return this.tokens >= n ? now : now + ((n - this.tokens) * 1000) / this.rate;
  }

  /** Takes `n` bytes' tokens (call when {@link readyAt} said now). */
  take(n: number, now: number, backlogSince?: number): void {
    this.refill(now, backlogSince);
    this.tokens -= n;
  }
}

/** A bucket's burst for a rate: 50 ms of it, at least four slices (so a late timer, or a proxy that waits for a core, loses no throughput). */
export function burstFor(rate: number): number {
  return Math.max(4 * SLICE, Math.ceil(rate * 0.05));
}

/** What the head of a {@link Shaper}'s queue may do now. */
export type Readiness =
  | { readonly kind: 'empty' }
  /** `bytes` (at most {@link SLICE}) may leave now, as far as the delay and the connection's own buckets go. */
  | { readonly kind: 'ready'; readonly bytes: number }
  | { readonly kind: 'wait'; readonly until: number; readonly for: 'delay' | 'tokens' };

/**
 * One direction of one connection, without I/O: chunks are queued in order,
 * each eligible `oneWayMs` after it arrived (or after `opensAt`, whichever is
 * later: the handshake of a new connection), and leave in slices when the
 * connection's own buckets hold the tokens (a shared link's tokens are
 * {@link FairShare}'s business). Pure: every call is given the time (ms).
 */
export class Shaper {
  private readonly queue: Array<{ remaining: number; eligibleAt: number; recvAt: number; bytes: number }> = [];
  private queuedBytes = 0;

  constructor(
    private readonly oneWayMs: number,
    private readonly opensAt: number,
    private readonly buckets: readonly TokenBucket[],
  ) {}

  /** Bytes received and not yet let go. */
  get queued(): number {
    return this.queuedBytes;
  }

  push(bytes: number, now: number): void {
    if (bytes <= 0) return;
    this.queue.push({ remaining: bytes, eligibleAt: Math.max(now, this.opensAt) + this.oneWayMs, recvAt: now, bytes });
    this.queuedBytes += bytes;
  }

  next(now: number): Readiness {
    const head = this.queue[0];
    if (!head) return { kind: 'empty' };
    if (head.eligibleAt > now) return { kind: 'wait', until: head.eligibleAt, for: 'delay' };
    const want = Math.min(head.remaining, SLICE);
    let ready = now;
    for (const b of this.buckets) ready = Math.max(ready, b.readyAt(want, now));
    return ready > now ? { kind: 'wait', until: ready, for: 'tokens' } : { kind: 'ready', bytes: want };
  }

  /**
   * Lets `n` bytes go (at most what {@link next} said ready), taking their
   * tokens; returns the chunks whose last byte is among them.
   */
  commit(n: number, now: number): Array<{ recvAt: number; bytes: number }> {
    for (const b of this.buckets) b.take(n, now);
    const done: Array<{ recvAt: number; bytes: number }> = [];
    this.queuedBytes -= n;
    for (let left = n; left > 0;) {
      const head = this.queue[0];
      if (!head) throw new RangeError('Shaper.commit: more bytes than queued');
      const k = Math.min(left, head.remaining);
      head.remaining -= k;
      left -= k;
      if (head.remaining === 0) {
        this.queue.shift();
        done.push({ recvAt: head.recvAt, bytes: head.bytes });
      }
    }
    return done;
  }
}

/** A lane as a shared link sees it. */
export interface LinkMember {
  /** Bytes ready to leave now (0: none). */
  ready(now: number): number;
  /** Lets `n` bytes leave now (the link has taken their tokens). */
  send(n: number, now: number): void;
}

/**
 * A link shared by every connection (the total cap): one bucket whose tokens
 * go to the members that are ready, a slice at a time and in turn (round
 * robin), so that connections share it fairly instead of whichever timer
 * fires first taking the burst. Pure: every call is given the time (ms).
 */
export class FairShare {
  private readonly waiting: LinkMember[] = [];
  /** Since when members have been waiting without a break (the link's backlog; see TokenBucket.refill). */
  private backlogSince: number | undefined;

  constructor(readonly bucket: TokenBucket) {}

  /** A member with bytes ready (since `now`) joins the turn (once). */
  join(member: LinkMember, now: number): void {
    if (!this.waiting.includes(member)) this.waiting.push(member);
    this.backlogSince ??= now;
  }

  /** Serves waiting members in turn while tokens last; returns when to serve again (absent: nobody waits). */
  serve(now: number): number | undefined {
    for (let m = this.waiting[0]; m; m = this.waiting[0]) {
      const n = m.ready(now);
      if (n === 0) {
        this.waiting.shift();
        continue;
      }
      const at = this.bucket.readyAt(n, now, this.backlogSince);
      if (at > now) return at;
      this.bucket.take(n, now, this.backlogSince);
      this.waiting.shift();
      m.send(n, now);
      if (m.ready(now) > 0) this.waiting.push(m);
    }
    this.backlogSince = undefined;
    return undefined;
  }
}

/** {@link FairShare} with a timer. */
class SharedLink {
  private readonly share: FairShare;
  private timer: NodeJS.Timeout | undefined;

  constructor(rate: number, now: number) {
    this.share = new FairShare(new TokenBucket(rate, burstFor(rate), now));
  }

  join(member: LinkMember): void {
    this.share.join(member, preciseNow());
    this.kick();
  }

  private kick(): void {
    if (this.timer !== undefined) return;
    const now = preciseNow();
    const at = this.share.serve(now);
    if (at !== undefined) {
      this.timer = setTimeout(
        () => {
          this.timer = undefined;
          this.kick();
        },
        Math.max(TOKEN_TICK_MS, at - now),
      );
    }
  }
}

/**
 * How many bytes a direction may hold before it stops reading its sender:
 * what its delay keeps in flight at its rate, twice over, plus bursts and a
 * margin (a TCP window that never limits the rate).
 */
export function highWaterFor(profile: WanProfile): number {
  const rate = Math.min(
    profile.perConnectionBytesPerSecond ?? Infinity,
    profile.totalBytesPerSecond ?? Infinity,
    400e6, // no cap: about what loopback TLS carries
  );
  return (1 << 20) + Math.ceil((rate * profile.rttMs) / 1000) + 2 * burstFor(rate);
}

/** Parses `12MB`, `12M`, `25MB/s`, `500K`, `1e6`: bytes per second (powers of 10). */
export function parseRate(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?(?:e\d+)?)\s*([kKmMgG]?)(?:B(?:\/s)?)?\s*$/.exec(text);
  if (!m) throw new RangeError(`not a rate: ${JSON.stringify(text)} (e.g. 12MB, 500K, 25MB/s)`);
  const scale = { '': 1, k: 1e3, m: 1e6, g: 1e9 }[(m[2] ?? '').toLowerCase()] ?? 1;
  const rate = Number(m[1]) * scale;
  if (!(rate > 0)) throw new RangeError(`a rate must be > 0: ${JSON.stringify(text)}`);
  return rate;
}

/** Moves one direction's bytes through its {@link Shaper} (and the shared link), with backpressure both ways. */
class Lane implements LinkMember {
  private readonly bufs: Buffer[] = [];
  private offset = 0;
  private timer: NodeJS.Timeout | undefined;
  private spinning: NodeJS.Immediate | undefined;
  private blocked = false;
  private ended = false;
  private closed = false;

  constructor(
    private readonly src: Socket,
    private readonly dst: Socket,
    private readonly shaper: Shaper,
    private readonly link: SharedLink | undefined,
    private readonly highWater: number,
    private readonly record: (chunk: ChunkRecord) => void,
    count: (bytes: number) => void,
  ) {
    src.on('data', (b: Buffer) => {
      shaper.push(b.length, preciseNow());
      this.bufs.push(b);
      count(b.length);
      if (shaper.queued > highWater) src.pause();
      this.pump();
    });
    src.on('end', () => {
      this.ended = true;
      this.pump();
    });
    dst.on('drain', () => {
      this.blocked = false;
      this.pump();
    });
  }

  stop(): void {
    this.closed = true;
    clearTimeout(this.timer);
    if (this.spinning) clearImmediate(this.spinning);
  }

  ready(now: number): number {
    if (this.closed || this.blocked || this.dst.destroyed) return 0;
    const r = this.shaper.next(now);
    return r.kind === 'ready' ? r.bytes : 0;
  }

  send(n: number, now: number): void {
    this.dst.cork();
    let ok = true;
    for (let left = n; left > 0;) {
      const head = this.bufs[0]!;
      const k = Math.min(head.length - this.offset, left);
      ok = this.dst.write(this.offset === 0 && k === head.length ? head : head.subarray(this.offset, this.offset + k));
      this.offset += k;
      left -= k;
      if (this.offset === head.length) {
        this.bufs.shift();
        this.offset = 0;
      }
    }
    this.dst.uncork();
    for (const d of this.shaper.commit(n, now)) this.record({ recvAt: d.recvAt, sentAt: now, bytes: d.bytes });
    if (!ok) this.blocked = true;
    if (this.link) this.settle(now);
  }

  /** Sends what may go now (through the shared link, when there is one), then waits for what comes next. */
  private pump(): void {
    if (this.closed || this.blocked || this.dst.destroyed) return;
    const now = preciseNow();
    for (let r = this.shaper.next(now); r.kind === 'ready' && !this.blocked; r = this.shaper.next(now)) {
      if (this.link) {
        this.link.join(this); // it sends, and settles afterwards
        return;
      }
      this.send(r.bytes, now);
    }
    this.settle(now);
  }

  /** After sending: resume the sender, end the receiver, or wait for the next delay or tokens. */
  private settle(now: number): void {
    if (this.src.isPaused() && !this.ended && this.shaper.queued <= this.highWater / 2) this.src.resume();
    const r = this.shaper.next(now);
    if (r.kind === 'empty' && this.ended) {
      this.dst.end();
      return;
    }
    if (r.kind !== 'wait' || this.blocked) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    if (r.for === 'tokens') {
      // Not sooner than a tick: the bucket's burst covers a late one (burstFor).
      this.timer = setTimeout(
        () => {
          this.timer = undefined;
          this.pump();
        },
        Math.max(TOKEN_TICK_MS, r.until - now),
      );
      return;
    }
    // A delay, to a fraction of a millisecond: Node's timers fire up to a
    // millisecond or two early or late, which over hundreds of round trips in
    // series would lengthen the RTT by several per cent. So a timer to just
    // before it is due, then turns of the event loop (I/O still runs) until it is.
    const wait = r.until - now;
    if (wait > SPIN_MS) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.pump();
      }, wait - SPIN_MS);
    } else {
      this.spinning ??= setImmediate(() => {
        this.spinning = undefined;
        this.pump();
      });
    }
  }
}

/** Starts the proxy in this process. */
export async function startWanProxy(routes: readonly WanRoute[], initial: WanProfile): Promise<WanProxyControl> {
  let profile = initial;
  let since = preciseNow();
  let connections: ConnectionRecord[] = [];
  let shared = sharedLinks(profile);
  let nextId = 1;
  const open = new Set<Socket>();
  const servers: Server[] = [];
  const ports: Record<string, number> = {};

  for (const route of routes) {
    const server = createServer({ allowHalfOpen: true }, (client) => {
      const now = preciseNow();
      const p = profile;
      const rec: ConnectionRecord = {
        id: nextId++,
        route: route.name,
        openedAt: now,
        bytesUp: 0,
        bytesDown: 0,
        up: [],
        down: [],
      };
      connections.push(rec);
      const upstream = connect({
        port: route.upstreamPort,
        host: route.upstreamHost ?? '127.0.0.1',
        allowHalfOpen: true,
      });
      for (const s of [client, upstream]) {
        open.add(s);
        s.setNoDelay(true);
        s.on('close', () => open.delete(s));
      }
      upstream.once('connect', () => {
        if (upstream.localPort !== undefined) rec.upstreamPort = upstream.localPort;
      });
      const oneWay = p.rttMs / 2;
      const buckets = (): TokenBucket[] =>
        p.perConnectionBytesPerSecond === undefined
          ? []
          : [new TokenBucket(p.perConnectionBytesPerSecond, burstFor(p.perConnectionBytesPerSecond), now)];
      const high = highWaterFor(p);
      const lanes = [
        new Lane(
          client,
          upstream,
          new Shaper(oneWay, now + p.rttMs, buckets()),
          shared?.up,
          high,
          (c) => rec.up.push(c),
          (n) => (rec.bytesUp += n),
        ),
        new Lane(
          upstream,
          client,
          new Shaper(oneWay, 0, buckets()),
          shared?.down,
          high,
          (c) => rec.down.push(c),
          (n) => (rec.bytesDown += n),
        ),
      ];
      const teardown = (): void => {
        for (const l of lanes) l.stop();
        client.destroy();
        upstream.destroy();
      };
      client.on('error', teardown);
      upstream.on('error', teardown);
      let closedSides = 0;
      const onClose = (): void => {
        closedSides += 1;
        if (closedSides === 1) rec.closedAt = preciseNow();
        if (closedSides === 2) for (const l of lanes) l.stop();
        // One side gone for good: the other follows once its lane has ended it (or now, after an error).
      };
      client.on('close', onClose);
      upstream.on('close', onClose);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(route.listenPort ?? 0, '127.0.0.1', () => resolve());
    });
    ports[route.name] = (server.address() as AddressInfo).port;
    servers.push(server);
  }

  return {
    ports,
    configure(next) {
      profile = next;
      shared = sharedLinks(next);
      return Promise.resolve();
    },
    stats() {
      return Promise.resolve({ profile, since, connections });
    },
    reset() {
      connections = [];
      since = preciseNow();
      return Promise.resolve();
    },
    async close() {
      for (const s of open) s.destroy();
      await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    },
  };
}

function sharedLinks(profile: WanProfile): { up: SharedLink; down: SharedLink } | undefined {
  const rate = profile.totalBytesPerSecond;
  if (rate === undefined) return undefined;
  const now = preciseNow();
  return { up: new SharedLink(rate, now), down: new SharedLink(rate, now) };
}

// ---------------------------------------------------------------------------
// In a child process of its own.

type Request =
  | { id: number; op: 'start'; routes: WanRoute[]; profile: WanProfile }
  | { id: number; op: 'configure'; profile: WanProfile }
  | { id: number; op: 'stats' | 'reset' | 'close' };
type Call = Request extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;
type Reply = { id: number; ok: true; value?: unknown } | { id: number; ok: false; error: string };

const SCRIPT = fileURLToPath(import.meta.url);

/**
 * Starts the proxy in a child process (this file, under the TypeScript loader
 * this process runs with), so that the timers that pace its bytes do not wait
 * behind the work of the servers and clients of the calling process.
 */
export async function forkWanProxy(routes: readonly WanRoute[], profile: WanProfile): Promise<WanProxyControl> {
  const child: ChildProcess = fork(SCRIPT, ['--ipc'], { execArgv: process.execArgv, stdio: 'inherit' });
  let next = 1;
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  child.on('message', (m: Reply) => {
    const w = waiting.get(m.id);
    waiting.delete(m.id);
    if (m.ok) w?.resolve(m.value);
    else w?.reject(new Error(`wan-proxy: ${m.error}`));
  });
  child.on('exit', (code) => {
    for (const w of waiting.values()) w.reject(new Error(`wan-proxy: the child process exited (${code})`));
    waiting.clear();
  });
  const call = <T>(req: Call): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const id = next++;
      waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
      child.send({ ...req, id });
    });
  const ports = await call<Record<string, number>>({ op: 'start', routes: [...routes], profile });
  return {
    ports,
    ...(child.pid === undefined ? {} : { pid: child.pid }),
    configure: (p) => call<void>({ op: 'configure', profile: p }),
    stats: () => call<WanStats>({ op: 'stats' }),
    reset: () => call<void>({ op: 'reset' }),
    async close() {
      const exited = new Promise<void>((resolve) =>
        child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve()),
      );
      await call<void>({ op: 'close' }).catch(() => undefined);
      await exited;
    },
  };
}

function serveIpc(): void {
  let proxy: WanProxyControl | undefined;
  // The parent gone (a benchmark stopped or crashed): no proxy outlives it.
  process.once('disconnect', () => process.exit(0));
  process.on('message', (req: Request) => {
    const answer = async (): Promise<unknown> => {
      switch (req.op) {
        case 'start':
          proxy = await startWanProxy(req.routes, req.profile);
          return proxy.ports;
        case 'configure':
          return proxy?.configure(req.profile);
        case 'stats':
          return proxy?.stats();
        case 'reset':
          return proxy?.reset();
        case 'close':
          await proxy?.close();
          return undefined;
      }
    };
    const reply = (r: Reply): void => {
      // After `close`, the channel goes with the reply: nothing is left to keep this process alive.
      process.send?.(r, () => req.op === 'close' && process.disconnect());
    };
    answer().then(
      (value) => reply({ id: req.id, ok: true, value }),
      (err: unknown) => reply({ id: req.id, ok: false, error: String(err) }),
    );
  });
}

/** Totals per route: connections, bytes up and down. */
export function routeTotals(stats: WanStats): Map<string, { connections: number; bytesUp: number; bytesDown: number }> {
  const out = new Map<string, { connections: number; bytesUp: number; bytesDown: number }>();
  for (const c of stats.connections) {
    const t = out.get(c.route) ?? { connections: 0, bytesUp: 0, bytesDown: 0 };
    t.connections += 1;
    t.bytesUp += c.bytesUp;
    t.bytesDown += c.bytesDown;
    out.set(c.route, t);
  }
  return out;
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      rtt: { type: 'string', default: '0' },
      'per-connection': { type: 'string' },
      total: { type: 'string' },
    },
  });
  const routes = positionals.map((spec, i): WanRoute => {
    const m = /^(\d+)=(.+):(\d+)$/.exec(spec);
    if (!m) throw new Error(`route ${JSON.stringify(spec)}: expected LISTEN=HOST:PORT`);
    return { name: `route${i + 1}`, listenPort: Number(m[1]), upstreamHost: m[2]!, upstreamPort: Number(m[3]) };
  });
  if (routes.length === 0) throw new Error('no route: give at least one LISTEN=HOST:PORT');
  const profile: WanProfile = {
    rttMs: Number(values.rtt),
    ...(values['per-connection'] === undefined
      ? {}
      : { perConnectionBytesPerSecond: parseRate(values['per-connection']) }),
    ...(values.total === undefined ? {} : { totalBytesPerSecond: parseRate(values.total) }),
  };
  const proxy = await startWanProxy(routes, profile);
  for (const r of routes)
    console.log(`127.0.0.1:${proxy.ports[r.name]} → ${r.upstreamHost ?? '127.0.0.1'}:${r.upstreamPort}`);
  console.log(`profile: ${JSON.stringify(profile)}`);
  const stop = async (): Promise<void> => {
    const stats = await proxy.stats();
    for (const [name, t] of routeTotals(stats)) {
      const r = routes.find((x) => x.name === name);
      console.log(
        `127.0.0.1:${proxy.ports[name]} → ${r?.upstreamHost}:${r?.upstreamPort}: ${t.connections} connections, ${t.bytesUp} bytes up, ${t.bytesDown} bytes down`,
      );
    }
    await proxy.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (process.argv.includes('--ipc')) serveIpc();
  else await main();
}
