// The download queue (installer/download-queue.ts): a fixed number of slots,
// independent of the cores; the largest announced archive first, the order
// given among equals; a task's failure is its caller's alone.
import { describe, expect, it } from 'vitest';

import {
  announcedSize,
  DEFAULT_DOWNLOADS,
  defaultStreamFloor,
  downloadQueue,
  networkQueue,
  processCpuTimes,
  queueDownload,
  LINK_BOUND_RATE,
  type CpuTimes,
} from '../../src/installer/download-queue.js';

/** A task that records when it starts and ends when `release` is called. */
function gate(): { started: string[]; task: (name: string) => () => Promise<string>; release: (name: string) => void } {
  const started: string[] = [];
  const waiting = new Map<string, () => void>();
  return {
    started,
    task: (name) => () =>
      new Promise<string>((resolve) => {
        started.push(name);
        waiting.set(name, () => resolve(name));
      }),
    release: (name) => waiting.get(name)!(),
  };
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('download queue: slots independent of the cores, largest first', () => {
  it('runs at most `limit` tasks at once, then the highest priority waiting, in the order given among equals', async () => {
    const g = gate();
    const q = downloadQueue(2);
    const done = [
      q(g.task('a'), 1),
      q(g.task('b'), 1),
      q(g.task('small'), 1),
      q(g.task('large'), 100),
      q(g.task('medium-1'), 50),
      q(g.task('medium-2'), 50),
    ];
    await tick();
    expect(g.started).toEqual(['a', 'b']);
    g.release('a');
    await tick();
    expect(g.started).toEqual(['a', 'b', 'large']);
    g.release('b');
    g.release('large');
    await tick();
    expect(g.started).toEqual(['a', 'b', 'large', 'medium-1', 'medium-2']);
    g.release('medium-1');
    g.release('medium-2');
    await tick();
    g.release('small');
    expect(await Promise.all(done)).toEqual(['a', 'b', 'small', 'large', 'medium-1', 'medium-2']);
  });

  it('a task that gives its slot back (its last byte arrived) lets the next start before it settles; once only', async () => {
    const q = downloadQueue(1);
    const order: string[] = [];
    let finishFirst!: () => void;
    const first = q(
      (release) =>
        new Promise<string>((resolve) => {
          order.push('first starts');
          release();
          release();
          finishFirst = () => resolve('first');
        }),
    );
    const second = q(() => {
      order.push('second starts');
      return Promise.resolve('second');
    });
    const third = q(() => {
      order.push('third starts');
      return Promise.resolve('third');
    });
    expect(await second).toBe('second');
    expect(await third).toBe('third');
    expect(order).toEqual(['first starts', 'second starts', 'third starts']);
    // The first settles later: its slot is not freed a second time (a fourth task still waits for the third's).
    let fourthStarted = false;
    const g = gate();
    const held = q(g.task('held'));
    const fourth = q(() => {
      fourthStarted = true;
      return Promise.resolve('fourth');
    });
    finishFirst();
    expect(await first).toBe('first');
    await tick();
    expect(fourthStarted).toBe(false);
    g.release('held');
    expect(await held).toBe('held');
    expect(await fourth).toBe('fourth');
  });

  it('a task that throws or rejects fails its caller only and frees its slot', async () => {
    const q = downloadQueue(1);
    const thrown = q(() => {
      throw new Error('thrown');
    });
    const rejected = q(() => Promise.reject(new Error('rejected')));
    const fine = q(() => Promise.resolve('fine'));
    await expect(thrown).rejects.toThrow('thrown');
    await expect(rejected).rejects.toThrow('rejected');
    expect(await fine).toBe('fine');
  });

  it('the default is 8 streams; a limit below 1 is refused', () => {
    expect(DEFAULT_DOWNLOADS).toBe(8);
    expect(() => downloadQueue(0)).toThrow(/limit must be/);
    expect(() => downloadQueue(1.5)).toThrow(/limit must be/);
  });

  it('the priority is the size the metadata announces (registry `packages`, OCI blob), 0 when none', () => {
    const registry = { kind: 'registry', sha256: '', checksumsUrl: '', signatureUrl: '' } as const;
    const signature = { kind: 'skipped', reason: '' } as const;
    expect(announcedSize({ authentication: { ...registry, signature, packageSize: 1234 } })).toBe(1234);
    expect(announcedSize({ authentication: { ...registry, signature } })).toBe(0);
    expect(announcedSize({ authentication: { kind: 'oci-blob', digest: 'sha256:x', size: 99, repository: 'r' } })).toBe(
      99,
    );
    expect(announcedSize({})).toBe(0);
  });

  it("queueDownload: the slot is given back at the body's last byte, as the download's own progress sees it; a body of unknown length keeps it until it settles", async () => {
    const q = downloadQueue(1);
    const registry = { kind: 'registry', sha256: '', checksumsUrl: '', signatureUrl: '' } as const;
    const sized = (packageSize: number) => ({
      authentication: { ...registry, signature: { kind: 'skipped', reason: '' } as const, packageSize },
    });
    const order: string[] = [];
    const seen: number[] = [];
    const finish = new Map<string, () => void>();
    /** A download that reports `progress` through the slot rule, then waits to be finished (its hashing's tail). */
    const download = (name: string, progress: Array<{ received: number; total: number | undefined }>) =>
      queueDownload(q, sized(name.length), (slotEvents) => {
        order.push(name);
        const events = slotEvents({ onProgress: (e) => seen.push(e.received) });
        for (const e of progress) events.onProgress!({ url: `https://example.test/${name}`, ...e });
        return new Promise<string>((resolve) => finish.set(name, () => resolve(name)));
      });
    const first = download('first', [
      { received: 5, total: 10 },
      { received: 10, total: 10 },
    ]);
    const unknown = download('unknown-length', [{ received: 7, total: undefined }]);
    const last = download('last', []);
    await tick();
    // The first's last byte arrived: the next (the larger announced size first) starts while the first still runs.
    expect(order).toEqual(['first', 'unknown-length']);
    expect(seen).toEqual([5, 10, 7]);
    finish.get('first')!();
    expect(await first).toBe('first');
    await tick();
    expect(order).toEqual(['first', 'unknown-length']);
    finish.get('unknown-length')!();
    expect(await unknown).toBe('unknown-length');
    await tick();
    expect(order).toEqual(['first', 'unknown-length', 'last']);
    finish.get('last')!();
    expect(await last).toBe('last');
  });
});

/**
 * An adaptive queue on a hand-moved clock and CPU counter: `spend(ms, busy)`
 * moves both (the process used `busy` of the cores for `ms`); `report(name,
 * bytes)` is a progress report of a running task (its bytes so far).
 */
function adaptiveRig(limit: number, floor: number) {
  let now = 0;
  let cpu: CpuTimes = { busy: 0, total: 0 };
  const started: string[] = [];
  const finish = new Map<string, () => void>();
  const receiving = new Map<string, (received: number) => void>();
  const q = downloadQueue(limit, { floor, windowMs: 200, now: () => now, cpu: () => cpu });
  return {
    started,
    spend(ms: number, busy: number): void {
      now += ms;
      cpu = { busy: cpu.busy + ms * 2 * busy, total: cpu.total + ms * 2 };
    },
    add(name: string): Promise<string> {
      return q((_release, report) => {
        receiving.set(name, report);
        started.push(name);
        return new Promise<string>((resolve) => finish.set(name, () => resolve(name)));
      });
    },
    report: (name: string, received: number): void => receiving.get(name)!(received),
    finish: (name: string): void => finish.get(name)!(),
    /** Finishes every task, the waiting ones as they start. */
    async drain(all: Array<Promise<string>>): Promise<string[]> {
      const done = new Set<string>();
      let settled = false;
      void Promise.all(all).then(() => (settled = true));
      while (!settled) {
        for (const [name, end] of finish) {
          if (done.has(name)) continue;
          done.add(name);
          end();
        }
        await tick();
      }
      return Promise.all(all);
    },
  };
}

const names = (n: number): string[] => Array.from({ length: n }, (_, i) => `p${i}`);
const MB = 1_000_000;

describe("download queue without a count: the cores' share of streams, every slot once the link holds the streams", () => {
  it('starts `floor` streams; a stream slower than the link-bound rate while the process left the cores idle opens every slot', async () => {
    expect(LINK_BOUND_RATE).toBe(24 * MB);
    const rig = adaptiveRig(8, 2);
    const all = names(10).map((n) => rig.add(n));
    await tick();
    expect(rig.started).toEqual(['p0', 'p1']);
    // 250 ms at 10 % of the cores; p0 received 3 MB in them: 12 MB/s, a capped connection.
    rig.spend(250, 0.1);
    rig.report('p0', 3 * MB);
    await tick();
    expect(rig.started).toEqual(names(8));
    expect(await rig.drain(all)).toEqual(names(10));
  });

  it('fast streams on idle cores open none (the link is not what they wait for); slow streams on busy cores open none (their hashers hold them)', async () => {
    const rig = adaptiveRig(8, 2);
    const all = names(8).map((n) => rig.add(n));
    await tick();
    // 60 MB/s each, as from a registry on loopback.
    rig.spend(250, 0.3);
    rig.report('p0', 15 * MB);
    rig.report('p1', 15 * MB);
    await tick();
    expect(rig.started).toEqual(['p0', 'p1']);
    // 8 MB/s, but the process used 80 % of the cores.
    rig.spend(250, 0.8);
    rig.report('p0', 17 * MB);
    await tick();
    expect(rig.started).toEqual(['p0', 'p1']);
    // The same rate once the cores have room: every slot.
    rig.spend(250, 0.4);
    rig.report('p1', 17 * MB);
    await tick();
    expect(rig.started).toEqual(names(8));
    await rig.drain(all);
  });

  it('nothing opens before a whole window measured the cores', async () => {
    const rig = adaptiveRig(8, 2);
    const all = names(4).map((n) => rig.add(n));
    await tick();
    rig.spend(100, 0);
    rig.report('p0', 1 * MB);
    await tick();
    expect(rig.started).toEqual(['p0', 'p1']);
    rig.spend(150, 0);
    rig.report('p0', 2 * MB);
    await tick();
    expect(rig.started).toEqual(names(4));
    await rig.drain(all);
  });

  it('cores saturated: one stream fewer at the next start, never fewer than `floor`', async () => {
    const rig = adaptiveRig(4, 2);
    const all = names(9).map((n) => rig.add(n));
    await tick();
    rig.spend(250, 0.1);
    rig.report('p0', 1 * MB);
    await tick();
    expect(rig.started).toEqual(names(4));
    // Saturated twice: 4 → 3 → 2 open; the running four are not stopped, finishing two starts none.
    rig.spend(250, 1);
    rig.report('p0', 50 * MB);
    rig.spend(250, 0.99);
    rig.report('p0', 100 * MB);
    rig.finish('p0');
    rig.finish('p1');
    await tick();
    expect(rig.started).toEqual(names(4));
    // A third saturated window keeps 2 (the floor): finishing two starts two.
    rig.spend(250, 1);
    rig.report('p2', 100 * MB);
    rig.finish('p2');
    rig.finish('p3');
    await tick();
    expect(rig.started).toEqual(names(6));
    expect(await rig.drain(all)).toEqual(names(9));
  });

  it('a gap in which nothing ran is not measured as idle cores (a recursive lock between roots)', async () => {
    const rig = adaptiveRig(8, 2);
    const first = ['a', 'b'].map((n) => rig.add(n));
    await tick();
    rig.spend(250, 0.9);
    rig.report('a', 1 * MB);
    rig.finish('a');
    rig.finish('b');
    await Promise.all(first);
    // Nothing runs for a second, the cores idle; then 6 archives, a slow report on busy cores.
    rig.spend(1000, 0);
    const next = names(6).map((n) => rig.add(n));
    await tick();
    rig.spend(250, 0.8);
    rig.report('p0', 1 * MB);
    await tick();
    expect(rig.started).toEqual(['a', 'b', 'p0', 'p1']);
    await rig.drain(next);
  });

  it('the last archives start together once a slot frees: fewer waiting than the floor start at once, so that a run does not end on one stream alone', async () => {
    const rig = adaptiveRig(8, 2);
    const all = names(5).map((n) => rig.add(n));
    await tick();
    // Joining: p2 waits though fewer than the floor wait (the others may still be coming).
    expect(rig.started).toEqual(['p0', 'p1']);
    rig.finish('p0');
    await tick();
    // Two wait: one starts, as the count says.
    expect(rig.started).toEqual(['p0', 'p1', 'p2']);
    rig.finish('p1');
    await tick();
    // One would be left alone at the end: it starts with the other.
    expect(rig.started).toEqual(names(5));
    await rig.drain(all);
    // A count given is exact: no more than 2 at once, to the end.
    const g = gate();
    const q = downloadQueue(2);
    const fixed = names(4).map((n) => q(g.task(n)));
    await tick();
    g.release('p0');
    await tick();
    // p3 waits alone: it starts only when a slot frees.
    expect(g.started).toEqual(names(3));
    g.release('p1');
    await tick();
    expect(g.started).toEqual(names(4));
    g.release('p2');
    g.release('p3');
    await Promise.all(fixed);
  });

  it("networkQueue: a count given is kept as given whatever the cores; none given adapts from the cores' share (2 to 4)", async () => {
    expect([1, 2, 3, 4, 16].map((c) => defaultStreamFloor(c))).toEqual([2, 2, 3, 4, 4]);
    for (const [queue, first] of [
      [networkQueue(5), 5],
      [networkQueue(), Math.min(DEFAULT_DOWNLOADS, defaultStreamFloor())],
    ] as const) {
      const started: string[] = [];
      const finish: Array<() => void> = [];
      const all = names(DEFAULT_DOWNLOADS + 1).map((n) =>
        queue(() => {
          started.push(n);
          return new Promise<void>((resolve) => finish.push(resolve));
        }),
      );
      await tick();
      expect(started).toEqual(names(first));
      // Whatever a window decides meanwhile, every task starts and ends.
      while (finish.length > 0 || started.length < all.length) {
        finish.splice(0).forEach((f) => f());
        await tick();
      }
      await Promise.all(all);
    }
  });

  it("processCpuTimes: this process's CPU time against the wall time × the cores, both growing", () => {
    const a = processCpuTimes();
    let x = 0;
    for (let i = 0; i < 1e6; i++) x += i;
    const b = processCpuTimes();
    expect(x).toBeGreaterThan(0);
    expect(b.busy).toBeGreaterThan(a.busy);
    expect(b.total).toBeGreaterThan(a.total);
    expect(b.busy - a.busy).toBeLessThanOrEqual(b.total - a.total + 5);
  });
});
