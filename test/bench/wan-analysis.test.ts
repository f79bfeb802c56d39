// bench/wan-analysis.ts, which turns the fake servers' request logs and the
// WAN proxy's connection records into exchanges as the client saw them, the
// round trips a run spent in series, and the streams it kept in flight: on
// hand-made logs of a known shape (RTT 100 ms, TLS over TCP).
import { describe, expect, it } from 'vitest';

import {
  exchangesOf,
  HANDSHAKES,
  longestSeries,
  streamsInFlight,
  type Exchange,
  type ProxyConnection,
  type ServerRequest,
} from '../../bench/wan-analysis.js';

const RTT = 100;

/**
 * A connection opened at `t` whose client sends a TLS handshake and then
 * `requests.length` requests in turn, each answered with `bytes` as one chunk;
 * returns the proxy's record and the server's log, as the proxy and the
 * server would have written them.
 */
function connection(
  id: number,
  t: number,
  requests: Array<{ path: string; bytes: number; thinkMs?: number }>,
): { conn: ProxyConnection; log: ServerRequest[] } {
  const half = RTT / 2;
  const up: Array<{ recvAt: number; sentAt: number; bytes: number }> = [];
  const down: Array<{ recvAt: number; sentAt: number; bytes: number }> = [];
  const log: ServerRequest[] = [];
  // ClientHello waits for the TCP handshake (one RTT) and its own half; the server answers.
  up.push({ recvAt: t, sentAt: t + RTT + half, bytes: 300 });
  down.push({ recvAt: t + RTT + half + 1, sentAt: t + 2 * RTT + 1, bytes: 1500 });
  let clientAt = t + 2 * RTT + 1;
  for (const r of requests) {
    const sent = clientAt + (r.thinkMs ?? 0);
    up.push({ recvAt: sent, sentAt: sent + half, bytes: 200 });
    const at = sent + half + 0.5;
    log.push({ server: 'registry', method: 'GET', pathname: r.path, status: 200, at, remotePort: 40000 + id });
    down.push({ recvAt: at + 0.5, sentAt: at + 0.5 + half, bytes: r.bytes });
    clientAt = at + 0.5 + half;
  }
  // A close_notify much later (the server's idle timeout): no response's.
  down.push({ recvAt: clientAt + 5000, sentAt: clientAt + 5000 + half, bytes: 24 });
  return {
    conn: { id, route: 'registry', openedAt: t, closedAt: clientAt + 5100, upstreamPort: 40000 + id, up, down },
    log,
  };
}

describe('exchanges as the client saw them', () => {
  it('makes a TLS connection’s handshakes an exchange of 2 round trips, and requests exchanges of 1 from when they were sent', () => {
    const { conn, log } = connection(1, 1000, [
      { path: '/a', bytes: 800 },
      { path: '/b', bytes: 900 },
    ]);
    const [a, b, handshakes] = exchangesOf(log, [conn], RTT);
    // TCP's round trip, then TLS's: the server's flight reaches the client 2 RTT after it opened.
    expect(handshakes).toMatchObject({
      method: HANDSHAKES,
      connection: 1,
      roundTrips: 2,
      start: 1000,
      bytesDown: 1500,
    });
    expect(handshakes!.done).toBeCloseTo(1000 + 2 * RTT + 1, 5);
    expect(a).toMatchObject({ pathname: '/a', connection: 1, first: true, roundTrips: 1, bytesDown: 800 });
    expect(a!.start).toBeCloseTo(handshakes!.done, 5);
    expect(a!.done - a!.start).toBeCloseTo(RTT + 1, 0);
    expect(b).toMatchObject({ pathname: '/b', first: false, roundTrips: 1, bytesDown: 900 });
    expect(b!.start).toBeCloseTo(a!.done, 5);
    expect(longestSeries([a!, b!, handshakes!]).roundTrips).toBe(4);
  });

  it('leaves a late TLS alert out of the last response', () => {
    const { conn, log } = connection(1, 0, [{ path: '/a', bytes: 800 }]);
    const [a] = exchangesOf(log, [conn], RTT);
    expect(a!.bytesDown).toBe(800);
    expect(a!.done).toBeLessThan(1000);
  });

  it('does not chain a request to the handshakes of a connection that was open long before it', () => {
    const { conn, log } = connection(1, 0, [{ path: '/late', bytes: 100, thinkMs: 2000 }]);
    const exchanges = exchangesOf(log, [conn], RTT);
    expect(exchanges[0]).toMatchObject({ pathname: '/late', first: true, roundTrips: 1 });
    expect(exchanges[0]!.start).toBeGreaterThan(2000);
    // Still in series after them (the log proves it), but 2000 ms of idle between is not latency.
    expect(longestSeries(exchanges).roundTrips).toBe(3);
  });

  it('charges a plain-TCP connection’s handshake to its first request, sent at once', () => {
    const conn: ProxyConnection = {
      id: 7,
      route: 'plain',
      openedAt: 0,
      upstreamPort: 40007,
      up: [{ recvAt: 1, sentAt: RTT + RTT / 2, bytes: 80 }],
      down: [{ recvAt: RTT + RTT / 2 + 1, sentAt: 2 * RTT + 1, bytes: 300 }],
    };
    const log: ServerRequest[] = [
      { server: 'plain', method: 'GET', pathname: '/', at: RTT + RTT / 2 + 0.5, remotePort: 40007 },
    ];
    expect(exchangesOf(log, [conn], RTT)).toEqual([
      expect.objectContaining({ pathname: '/', roundTrips: 2, start: 0, done: 2 * RTT + 1, bytesDown: 300 }),
    ]);
  });

  it('tells connections apart by route and port', () => {
    const one = connection(1, 0, [{ path: '/x', bytes: 10 }]);
    const two = connection(2, 0, [{ path: '/y', bytes: 20 }]);
    const ex = exchangesOf([...one.log, ...two.log], [one.conn, two.conn], RTT).filter((e) => e.pathname !== '');
    expect(ex.map((e) => [e.pathname, e.connection, e.bytesDown])).toEqual([
      ['/x', 1, 10],
      ['/y', 2, 20],
    ]);
  });
});

describe('round trips in series', () => {
  const ex = (start: number, done: number, roundTrips = 1, pathname = '/'): Exchange => ({
    server: 'registry',
    method: 'GET',
    pathname,
    status: 200,
    connection: 1,
    first: false,
    roundTrips,
    start,
    firstByte: done,
    done,
    bytesDown: 0,
  });

  it('counts the chain of exchanges that ran one after another, each with its round trips', () => {
    // A connection's handshakes, discovery, then two at once (one on a connection opened for it), then one after both.
    const hs1 = ex(0, 200, 2, 'handshakes 1');
    const discovery = ex(200, 300, 1, '/discovery');
    const a = ex(300, 400, 1, '/a');
    const hs2 = ex(300, 500, 2, 'handshakes 2');
    const b = ex(500, 600, 1, '/b');
    const c = ex(620, 720, 1, '/c');
    const { roundTrips, chain } = longestSeries([c, b, hs2, a, discovery, hs1]);
    expect(roundTrips).toBe(2 + 1 + 2 + 1 + 1);
    expect(chain.map((e) => e.pathname)).toEqual(['handshakes 1', '/discovery', 'handshakes 2', '/b', '/c']);
    // The head of the path to one exchange: the longest chain that ends with it.
    const toA = longestSeries([c, b, hs2, a, discovery, hs1], a);
    expect([toA.roundTrips, toA.chain.map((e) => e.pathname)]).toEqual([4, ['handshakes 1', '/discovery', '/a']]);
  });

  it('counts overlapping exchanges once: concurrency takes round trips off the chain', () => {
    const parallel = Array.from({ length: 10 }, (_, i) => ex(i, 100 + i));
    expect(longestSeries(parallel).roundTrips).toBe(1);
    const serial = Array.from({ length: 10 }, (_, i) => ex(i * 100, i * 100 + 100));
    expect(longestSeries(serial).roundTrips).toBe(10);
    expect(longestSeries([]).roundTrips).toBe(0);
  });
});

describe('streams in flight', () => {
  it('profiles how many large responses were arriving at once', () => {
    const stream = (firstByte: number, done: number, bytesDown: number): Exchange => ({
      server: 'cdn',
      method: 'GET',
      pathname: '/z',
      status: 200,
      connection: 1,
      first: false,
      roundTrips: 1,
      start: firstByte - 50,
      firstByte,
      done,
      bytesDown,
    });
    const p = streamsInFlight([stream(0, 10_000, 5e6), stream(5_000, 15_000, 5e6), stream(0, 20_000, 10)], 1e6);
    expect(p).toMatchObject({ max: 2, from: 0, to: 15_000 });
    expect(p.secondsAt).toEqual([0, 10, 5]);
    expect(p.mean).toBeCloseTo(20 / 15, 5);
  });
});
