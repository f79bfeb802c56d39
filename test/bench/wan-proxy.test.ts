// bench/wan-proxy.ts, the WAN the WAN benchmark puts between the clients and
// the fake registry: its pacing rules on a simulated clock (a byte waits
// RTT/2, a new connection's first byte one RTT more, a capped stream moves
// bytes ÷ rate, a shared cap is shared in turn), and, over real sockets,
// that every byte arrives intact, in order, and is counted.
import { createHash, randomBytes } from 'node:crypto';
import { connect, createServer, type AddressInfo, type Server } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  burstFor,
  FairShare,
  highWaterFor,
  parseRate,
  routeTotals,
  SLICE,
  Shaper,
  startWanProxy,
  TokenBucket,
} from '../../bench/wan-proxy.js';

/** Lets a shaper go on a simulated clock until it is empty; returns when its last byte left. */
function drain(shaper: Shaper, from: number): number {
  let t = from;
  let last = from;
  for (let r = shaper.next(t); r.kind !== 'empty'; r = shaper.next(t)) {
    if (r.kind === 'wait') t = r.until;
    else {
      shaper.commit(r.bytes, t);
      last = t;
    }
  }
  return last;
}

/** A shared link's member over a shaper, counting the bytes it sent. */
function linkMember(shaper: Shaper): {
  ready: (now: number) => number;
  send: (n: number, now: number) => void;
  sent: number;
} {
  const m = {
    sent: 0,
    ready: (now: number) => {
      const r = shaper.next(now);
      return r.kind === 'ready' ? r.bytes : 0;
    },
    send: (n: number, now: number) => {
      shaper.commit(n, now);
      m.sent += n;
    },
  };
  return m;
}

describe('the WAN proxy paces bytes as its profile says', () => {
  it('holds a byte RTT/2, and a new connection’s first bytes one RTT more (its TCP handshake)', () => {
    const opened = 1000;
    const up = new Shaper(30, opened + 60, []);
    up.push(500, opened + 1); // the client writes at once: its first byte waits for the handshake
    expect(up.next(opened + 1)).toEqual({ kind: 'wait', until: opened + 90, for: 'delay' });
    expect(up.next(opened + 90)).toEqual({ kind: 'ready', bytes: 500 });
    expect(up.commit(500, opened + 90)).toEqual([{ recvAt: opened + 1, bytes: 500 }]);
    up.push(200, opened + 200); // later bytes: RTT/2 only
    expect(up.next(opened + 200)).toEqual({ kind: 'wait', until: opened + 230, for: 'delay' });
  });

  it('moves a capped stream at its rate: 100 MB at 12 MB/s leave over bytes ÷ rate (less the first burst)', () => {
    const rate = 12e6;
    const shaper = new Shaper(0, 0, [new TokenBucket(rate, burstFor(rate), 0)]);
    for (let i = 0; i < 100; i++) shaper.push(1e6, 0);
    const last = drain(shaper, 0);
    expect(Math.abs(last - ((100e6 - burstFor(rate)) / rate) * 1000)).toBeLessThan(2);
  });

  it('lets bytes go in order, in slices, and reports each chunk once its last byte has left', () => {
    const shaper = new Shaper(10, 0, []);
    shaper.push(SLICE + 5, 0);
    shaper.push(3, 1);
    expect(shaper.next(10)).toEqual({ kind: 'ready', bytes: SLICE });
    expect(shaper.commit(SLICE, 10)).toEqual([]);
    expect(shaper.next(10)).toEqual({ kind: 'ready', bytes: 5 });
    expect(shaper.commit(5, 10)).toEqual([{ recvAt: 0, bytes: SLICE + 5 }]);
    expect(shaper.next(10)).toEqual({ kind: 'wait', until: 11, for: 'delay' });
    expect(shaper.commit(3, 11)).toEqual([{ recvAt: 1, bytes: 3 }]);
    expect(shaper.queued).toBe(0);
    expect(shaper.next(11)).toEqual({ kind: 'empty' });
  });

  it('shares a total cap between connections in turn: equal shares, the total at the link’s rate', () => {
    const total = 25e6;
    const share = new FairShare(new TokenBucket(total, burstFor(total), 0));
    const members = Array.from({ length: 4 }, () => {
      const shaper = new Shaper(0, 0, [new TokenBucket(12e6, burstFor(12e6), 0)]);
      for (let i = 0; i < 20; i++) shaper.push(1e6, 0);
      const m = {
        shaper,
        sent: 0,
        ready: (now: number) => {
          const r = shaper.next(now);
          return r.kind === 'ready' ? r.bytes : 0;
        },
        send: (n: number, now: number) => {
          shaper.commit(n, now);
          m.sent += n;
        },
      };
      return m;
    });
    // One simulated second: members join when ready, the link serves them; the clock jumps to the next event.
    for (let t = 0; t <= 1000;) {
      for (const m of members) if (m.ready(t) > 0) share.join(m, t);
      const linkAt = share.serve(t);
      const own = members.map((m) => {
        const r = m.shaper.next(t);
        return r.kind === 'wait' ? r.until : Infinity;
      });
      t = Math.min(linkAt ?? Infinity, ...own, t + 1);
    }
    const sent = members.map((m) => m.sent);
    const sum = sent.reduce((a, b) => a + b, 0);
    expect(Math.abs(sum - (total + burstFor(total)))).toBeLessThan(2 * SLICE);
    expect(Math.max(...sent) - Math.min(...sent)).toBeLessThanOrEqual(2 * SLICE);
  });

  it('loses no throughput of a shared cap to late wake-ups while bytes wait, and stores no more than its burst while idle', () => {
    const total = 25e6;
    const share = new FairShare(new TokenBucket(total, burstFor(total), 0));
    const shaper = new Shaper(0, 0, []);
    for (let i = 0; i < 100; i++) shaper.push(1e6, 0);
    const member = linkMember(shaper);
    // The proxy's process wakes every 200 ms only (a loaded machine), four times the bucket's burst.
    for (let t = 0; t <= 2000; t += 200) {
      share.join(member, t);
      share.serve(t);
    }
    expect(Math.abs(member.sent - (2 * total + burstFor(total)))).toBeLessThan(2 * SLICE);
    // Idle for a second (nothing waits), then a new stream: only the burst is stored.
    const later = new Shaper(0, 0, []);
    later.push(10e6, 3000);
    const second = linkMember(later);
    while (shaper.queued > 0) shaper.commit(Math.min(SLICE, shaper.queued), 2000);
    share.serve(3000);
    share.join(second, 3000);
    share.serve(3000);
    expect(second.sent).toBeLessThanOrEqual(burstFor(total));
  });

  it('lets a direction hold what its delay keeps in flight at its rate, and more', () => {
    expect(highWaterFor({ rttMs: 150, perConnectionBytesPerSecond: 12e6 })).toBeGreaterThan(12e6 * 0.15);
    expect(highWaterFor({ rttMs: 0 })).toBeGreaterThanOrEqual(1 << 20);
  });

  it('reads rates with decimal suffixes and refuses what is not one', () => {
    expect(parseRate('12MB')).toBe(12e6);
    expect(parseRate('25MB/s')).toBe(25e6);
    expect(parseRate('500K')).toBe(500e3);
    expect(parseRate('1.5G')).toBe(1.5e9);
    expect(parseRate('1000')).toBe(1000);
    expect(() => parseRate('fast')).toThrow(/not a rate/);
    expect(() => parseRate('0')).toThrow(/> 0/);
  });
});

describe('the WAN proxy over real sockets', () => {
  let upstream: Server;
  let port: number;
  beforeAll(async () => {
    // Answers every byte it gets with its SHA-256 once the client is done, then its own 1 MB.
    upstream = createServer({ allowHalfOpen: true }, (s) => {
      const h = createHash('sha256');
      s.on('data', (b: Buffer) => h.update(b));
      s.on('end', () => {
        s.write(h.digest());
        s.end(Buffer.alloc(1_000_000, 7));
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', () => resolve()));
    port = (upstream.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => upstream.close(() => resolve())));

  for (const profile of [{ rttMs: 0 }, { rttMs: 10, perConnectionBytesPerSecond: 100e6, totalBytesPerSecond: 150e6 }]) {
    it(`carries every byte both ways, in order, and counts them (${JSON.stringify(profile)})`, async () => {
      const proxy = await startWanProxy([{ name: 'up', upstreamPort: port }], profile);
      try {
        const sent = randomBytes(3_000_000);
        const got = await new Promise<Buffer>((resolve, reject) => {
          const parts: Buffer[] = [];
          const c = connect({ port: proxy.ports['up']!, host: '127.0.0.1', allowHalfOpen: true }, () => c.end(sent));
          c.on('data', (b: Buffer) => parts.push(b));
          c.on('end', () => resolve(Buffer.concat(parts)));
          c.on('error', reject);
        });
        expect(got.subarray(0, 32)).toEqual(createHash('sha256').update(sent).digest());
        expect(got.length).toBe(32 + 1_000_000);
        await new Promise((resolve) => setTimeout(resolve, 50));
        const stats = await proxy.stats();
        expect(routeTotals(stats).get('up')).toEqual({ connections: 1, bytesUp: sent.length, bytesDown: got.length });
        const [c] = stats.connections;
        expect(c?.up.reduce((n, x) => n + x.bytes, 0)).toBe(sent.length);
        expect(c?.down.reduce((n, x) => n + x.bytes, 0)).toBe(got.length);
        expect(c?.down.every((x) => x.sentAt >= x.recvAt + profile.rttMs / 2)).toBe(true);
        expect(c?.upstreamPort).toBeGreaterThan(0);
        await proxy.reset();
        expect((await proxy.stats()).connections).toEqual([]);
      } finally {
        await proxy.close();
      }
    });
  }
});
