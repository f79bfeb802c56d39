// bench/wan-analysis.ts, which turns the fake servers' request logs and the
// WAN proxy's connection records into exchanges as the client saw them, the
// round trips a run spent in series, and the streams it kept in flight: on
// hand-made logs of a known shape (RTT 100 ms, TLS over TCP).
import { describe, expect, it } from 'vitest';

import {
  exchangesOf,
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
  it('starts a new connection’s first request when the connection opened, later ones when they were sent', () => {
    const { conn, log } = connection(1, 1000, [
      { path: '/a', bytes: 800 },
      { path: '/b', bytes: 900 },
    ]);
    const [a, b] = exchangesOf(log, [conn], RTT);
    expect(a).toMatchObject({ pathname: '/a', connection: 1, opened: true, start: 1000, bytesDown: 800 });
    // TCP + TLS + the request: three round trips (and the servers' half-milliseconds).
    expect(a!.done - a!.start).toBeCloseTo(3 * RTT + 2, 0);
    expect(b).toMatchObject({ pathname: '/b', opened: false, bytesDown: 900 });
    expect(b!.start).toBeCloseTo(a!.done, 5);
    expect(b!.done - b!.start).toBeCloseTo(RTT + 1, 0);
  });

  it('leaves a late TLS alert out of the last response', () => {
    const { conn, log } = connection(1, 0, [{ path: '/a', bytes: 800 }]);
    const [a] = exchangesOf(log, [conn], RTT);
    expect(a!.bytesDown).toBe(800);
    expect(a!.done).toBeLessThan(1000);
  });

  it('does not charge the handshakes to a request that found its connection already open', () => {
    const { conn, log } = connection(1, 0, [{ path: '/late', bytes: 100, thinkMs: 2000 }]);
    const [late] = exchangesOf(log, [conn], RTT);
    expect(late).toMatchObject({ opened: false });
    expect(late!.start).toBeGreaterThan(2000);
  });

  it('tells connections apart by route and port', () => {
    const one = connection(1, 0, [{ path: '/x', bytes: 10 }]);
    const two = connection(2, 0, [{ path: '/y', bytes: 20 }]);
    const ex = exchangesOf([...one.log, ...two.log], [one.conn, two.conn], RTT);
    expect(ex.map((e) => [e.pathname, e.connection, e.bytesDown])).toEqual([
      ['/x', 1, 10],
      ['/y', 2, 20],
    ]);
  });
});

describe('round trips in series', () => {
  const ex = (start: number, done: number, opened = false, pathname = '/'): Exchange => ({
    server: 'registry',
    method: 'GET',
    pathname,
    status: 200,
    connection: 1,
    opened,
    start,
    firstByte: done,
    done,
    bytesDown: 0,
  });

  it('counts the chain of exchanges that ran one after another, a new connection’s handshakes included', () => {
    // discovery on a new connection, then two at once, then one after both.
    const discovery = ex(0, 300, true, '/discovery');
    const a = ex(300, 400, false, '/a');
    const b = ex(300, 410, true, '/b'); // in parallel with a, on a new connection: 3 round trips
    const c = ex(420, 520, false, '/c');
    const { roundTrips, chain } = longestSeries([c, b, a, discovery]);
    expect(roundTrips).toBe(3 + 3 + 1);
    expect(chain.map((e) => e.pathname)).toEqual(['/discovery', '/b', '/c']);
    // The head of the path to one exchange: the longest chain that ends with it.
    const toA = longestSeries([c, b, a, discovery], 2, a);
    expect([toA.roundTrips, toA.chain.map((e) => e.pathname)]).toEqual([4, ['/discovery', '/a']]);
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
      opened: false,
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
