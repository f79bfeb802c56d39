/**
 * What a run through the WAN proxy did, from two logs: the servers' request
 * logs (what was asked, on which connection, when it arrived:
 * test/support/servers/http-server.ts `LoggedRequest`) and the proxy's
 * connection records (when each connection opened, and when each chunk
 * reached the proxy and left it: bench/wan-proxy.ts). Pure functions; the
 * benchmark (bench/wan.ts) and its tests (test/bench/wan-analysis.test.ts)
 * call them.
 *
 * **Exchanges.** Each request becomes an exchange as the *client* saw it:
 * - `start`: when the client sent it: the proxy's arrival time of the last
 *   client chunk it delivered before the server logged the request;
 * - `firstByte` and `done`: when the proxy delivered the first and the last
 *   byte of the response to the client: the server's chunks that reached the
 *   proxy between this request and the next one on the connection (HTTP/1.1
 *   answers in order; a trailing TLS alert of a connection closed later, at
 *   most {@link ALERT_BYTES}, is not part of any response).
 * And each TLS connection's handshakes are an exchange of their own (method
 * `CONNECT`, 2 round trips: TCP's, then TLS 1.3's), from when the client
 * opened the connection to when the server's handshake flight reached it
 * (the server's bytes before the client's next flight). A plain-TCP
 * connection's first request, sent at once, carries its handshake instead (2
 * round trips from when the connection opened).
 *
 * **Round trips in series** ({@link longestSeries}): the largest number of
 * round trips along a chain of exchanges that ran one after another (each
 * started after the previous one's last byte had reached the client), each
 * counting its `roundTrips`. The exchanges of such a chain do not overlap,
 * and each lasts at least its round trips, so the run spent at least that
 * many RTTs of pure latency one after another: RTT × round trips in series
 * ≤ wall time. A request that waited for a new connection follows that
 * connection's handshakes in the chain; one that found a connection opened
 * earlier (a spare) does not.
 * Whether an exchange waited because of data (the download URL comes from
 * the metadata) or for a free slot (a client's concurrency limit) makes no
 * difference to the wait, so both count: it is the run's latency critical
 * path as the log proves it, not the protocol's minimum. One consequence: a
 * download slot that fetches archive after archive on one connection adds a
 * round trip per archive (request → first byte) to the chain even when
 * other streams keep the link busy meanwhile; the chain that ends with the
 * first archive's exchange (`endingAt`) is the head of the path alone:
 * discovery → versions → metadata → bytes.
 */

/** A request as a server logged it. */
export interface ServerRequest {
  /** Which server (the proxy route's name: `registry`, `cdn`). */
  readonly server: string;
  readonly method: string;
  readonly pathname: string;
  readonly status?: number;
  /** When the server read the request (epoch ms). */
  readonly at: number;
  /** When the server handed the response's last byte to its socket (epoch ms). */
  readonly finishedAt?: number;
  /** The port of the connection's client side as the server saw it (the proxy's upstream socket). */
  readonly remotePort?: number;
}

/** A connection as the proxy recorded it (the fields bench/wan-proxy.ts `ConnectionRecord` has). */
export interface ProxyConnection {
  readonly id: number;
  readonly route: string;
  readonly openedAt: number;
  readonly closedAt?: number;
  readonly upstreamPort?: number;
  readonly up: ReadonlyArray<{ recvAt: number; sentAt: number; bytes: number }>;
  readonly down: ReadonlyArray<{ recvAt: number; sentAt: number; bytes: number }>;
}

/** One request and its response, or one connection's handshakes, as the client saw them (epoch ms). */
export interface Exchange {
  readonly server: string;
  /** The request's method; `CONNECT` for a connection's handshakes. */
  readonly method: string;
  /** The request's path ('' for handshakes). */
  readonly pathname: string;
  readonly status: number | undefined;
  /** The proxy connection that carried it (undefined: none matched). */
  readonly connection: number | undefined;
  /** The first request on its connection (or the connection's handshakes). */
  readonly first: boolean;
  /** The round trips it costs at the least (see the module comment). */
  readonly roundTrips: number;
  readonly start: number;
  readonly firstByte: number;
  readonly done: number;
  /** Response bytes as they crossed the proxy (TLS records included). */
  readonly bytesDown: number;
}

/** The method of a connection's handshakes as an {@link Exchange}. */
export const HANDSHAKES = 'CONNECT';
/** A TLS alert record (close_notify: 5 + 2 + 1 + 16 bytes) or smaller: not a response. */
export const ALERT_BYTES = 64;
/** Clock slack between the servers' process and the proxy's (ms). */
const SKEW_MS = 0.25;

type Chunk = ProxyConnection['down'][number];

/** Where a set of the server's chunks reached the client, as an exchange's part. */
function received(chunks: readonly Chunk[]): { firstByte: number; done: number; bytesDown: number } | undefined {
  if (chunks.length === 0) return undefined;
  return {
    firstByte: Math.min(...chunks.map((d) => d.sentAt)),
    done: Math.max(...chunks.map((d) => d.sentAt)),
    bytesDown: chunks.reduce((n, d) => n + d.bytes, 0),
  };
}

/**
 * The exchanges of a run (see the module comment): the requests in the order
 * the servers logged them, then the TLS connections' handshakes. `rttMs` is
 * the profile's round-trip time.
 */
export function exchangesOf(
  requests: readonly ServerRequest[],
  connections: readonly ProxyConnection[],
  rttMs: number,
): Exchange[] {
  const connectionOf = (r: ServerRequest): ProxyConnection | undefined =>
    r.remotePort === undefined
      ? undefined
      : connections.find(
          (c) =>
            c.route === r.server &&
            c.upstreamPort === r.remotePort &&
            c.openedAt <= r.at + SKEW_MS &&
            (c.closedAt === undefined || r.at <= c.closedAt + SKEW_MS),
        );
  const byConnection = new Map<number, ServerRequest[]>();
  const conn = new Map<ServerRequest, ProxyConnection | undefined>();
  for (const r of requests) {
    const c = connectionOf(r);
    conn.set(r, c);
    if (c) byConnection.set(c.id, [...(byConnection.get(c.id) ?? []), r]);
  }
  for (const list of byConnection.values()) list.sort((a, b) => a.at - b.at);

  // A TLS connection: the server spoke before it read any request (its handshake flight, which ends
  // when the client answers it).
  const handshakes = new Map<number, Exchange>();
  for (const c of connections) {
    const firstDown = c.down[0];
    const firstAt = byConnection.get(c.id)?.[0]?.at ?? Infinity;
    if (!firstDown || firstDown.recvAt >= firstAt - SKEW_MS) continue;
    const answer = c.up.find((u) => u.recvAt > firstDown.sentAt)?.recvAt ?? Infinity;
    const flight = received(
      c.down.filter((d) => d.recvAt < Math.min(answer, firstAt - SKEW_MS) && d.bytes > ALERT_BYTES),
    );
    if (!flight) continue;
    handshakes.set(c.id, {
      server: c.route,
      method: HANDSHAKES,
      pathname: '',
      status: undefined,
      connection: c.id,
      first: true,
      roundTrips: 2,
      start: c.openedAt,
      ...flight,
    });
  }

  const out = requests.map((r): Exchange => {
    const c = conn.get(r);
    const base = { server: r.server, method: r.method, pathname: r.pathname, status: r.status };
    const fallbackDone = (r.finishedAt ?? r.at) + rttMs / 2;
    if (!c) {
      const start = r.at - rttMs / 2;
      return { ...base, connection: undefined, first: false, roundTrips: 1, start, ...fallback(fallbackDone) };
    }
    const list = byConnection.get(c.id) ?? [];
    const i = list.indexOf(r);
    const nextAt = list[i + 1]?.at ?? Infinity;
    // Sent: the last client chunk delivered before the server read the request.
    let sent: number | undefined;
    for (const u of c.up) if (u.sentAt <= r.at + SKEW_MS) sent = u.recvAt;
    sent ??= r.at - rttMs / 2;
    // Plain TCP: a first request written at once waited for the TCP handshake.
    const carriesHandshake = i === 0 && !handshakes.has(c.id) && sent - c.openedAt <= Math.max(5, rttMs / 4);
    const start = carriesHandshake ? c.openedAt : sent;
    // The response: the server's chunks that reached the proxy after this request and before the next one.
    const chunks = c.down.filter((d) => d.recvAt >= r.at - SKEW_MS && d.recvAt < nextAt - SKEW_MS);
    while (chunks.length > 1 && chunks[chunks.length - 1]!.bytes <= ALERT_BYTES) chunks.pop();
    return {
      ...base,
      connection: c.id,
      first: i === 0,
      roundTrips: carriesHandshake ? 2 : 1,
      start,
      ...(received(chunks) ?? fallback(fallbackDone)),
    };
  });
  return [...out, ...handshakes.values()];
}

function fallback(done: number): { firstByte: number; done: number; bytesDown: number } {
  return { firstByte: done, done, bytesDown: 0 };
}

/**
 * The chain of exchanges, each started after the previous one was done, with
 * the most round trips (see the module comment); ties go to the chain that
 * ends first. With `endingAt`, the longest chain that ends with that exchange
 * (e.g. the first archive's: the round trips in series before the first byte
 * of any package arrived).
 */
export function longestSeries(
  exchanges: readonly Exchange[],
  endingAt?: Exchange,
): { roundTrips: number; chain: Exchange[] } {
  const order = [...exchanges].sort((a, b) => a.start - b.start || a.done - b.done);
  const best = order.map(() => 0);
  const prev = order.map(() => -1);
  for (let j = 0; j < order.length; j++) {
    const ej = order[j]!;
    let before = 0;
    for (let i = 0; i < j; i++) {
      if (order[i]!.done <= ej.start && best[i]! > before) {
        before = best[i]!;
        prev[j] = i;
      }
    }
    best[j] = before + ej.roundTrips;
  }
  let end = endingAt === undefined ? -1 : order.indexOf(endingAt);
  if (endingAt === undefined)
    for (let j = 0; j < order.length; j++)
      if (end < 0 || best[j]! > best[end]! || (best[j] === best[end] && order[j]!.done < order[end]!.done)) end = j;
  const chain: Exchange[] = [];
  for (let j = end; j >= 0; j = prev[j]!) chain.unshift(order[j]!);
  return { roundTrips: end < 0 ? 0 : best[end]!, chain };
}

/** How many streams carried response bytes at once, over the span from the first stream's first byte to the last one's end. */
export interface StreamProfile {
  /** The most at once. */
  readonly max: number;
  /** The time-weighted mean over the span. */
  readonly mean: number;
  /** Seconds of the span spent with exactly k streams, index k. */
  readonly secondsAt: number[];
  /** The span (ms, epoch). */
  readonly from: number;
  readonly to: number;
}

/** Streams in flight: exchanges of at least `minBytes`, from their first byte to their last (see {@link StreamProfile}). */
export function streamsInFlight(exchanges: readonly Exchange[], minBytes: number): StreamProfile {
  const edges: Array<{ t: number; d: number }> = [];
  for (const e of exchanges) {
    if (e.bytesDown < minBytes) continue;
    edges.push({ t: e.firstByte, d: 1 }, { t: e.done, d: -1 });
  }
  if (edges.length === 0) return { max: 0, mean: 0, secondsAt: [], from: 0, to: 0 };
  edges.sort((a, b) => a.t - b.t || a.d - b.d);
  const secondsAt: number[] = [];
  let level = 0;
  let max = 0;
  let area = 0;
  for (let i = 0; i < edges.length; i++) {
    const e = edges[i]!;
    level += e.d;
    max = Math.max(max, level);
    const next = edges[i + 1];
    if (next) {
      const dt = (next.t - e.t) / 1000;
      secondsAt[level] = (secondsAt[level] ?? 0) + dt;
      area += level * dt;
    }
  }
  const from = edges[0]!.t;
  const to = edges[edges.length - 1]!.t;
  for (let k = 0; k <= max; k++) secondsAt[k] ??= 0;
  return { max, mean: to > from ? area / ((to - from) / 1000) : 0, secondsAt, from, to };
}
