// The download queue (installer/download-queue.ts): a fixed number of slots,
// independent of the cores; the largest announced archive first, the order
// given among equals; a task's failure is its caller's alone.
import { describe, expect, it } from 'vitest';

import { announcedSize, DEFAULT_DOWNLOADS, downloadQueue, queueDownload } from '../../src/installer/download-queue.js';

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
