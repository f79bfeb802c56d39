// Issue 13: the network slots of lock and mirror share the cores at the tail
// of a batch (src/installer/share-limit.ts).
import { setImmediate as tick } from 'node:timers/promises';

import { describe, expect, it } from 'vitest';

import { sharingLimit } from '../../src/installer/share-limit.js';

/** N tasks given in one loop; each settles when the test says so. Records the order they started in. */
function batch(n: number, base: number, shareUpTo: number) {
  const limit = sharingLimit(base, shareUpTo);
  const started: number[] = [];
  const finish: Array<(fail?: boolean) => void> = [];
  const results = Array.from({ length: n }, (_, i) =>
    limit(
      () =>
        new Promise<number>((resolve, reject) => {
          started.push(i);
          finish[i] = (fail) => (fail ? reject(new Error(`task ${i}`)) : resolve(i));
        }),
    ),
  );
  const settle = async (i: number, fail = false): Promise<void> => {
    finish[i]!(fail);
    await results[i]!.catch(() => undefined);
    await tick();
  };
  return { started, settle, results };
}

describe('sharingLimit (the tail of a batch of downloads)', () => {
  // [tasks, base, shareUpTo, started after the batch is given, then after each of the first tasks settles]
  const table: Array<[number, number, number, number[], number[][]]> = [
    // 5 on 2 cores: 2, then 2 + the third, then the last three together (2.5 package-times).
    [
      5,
      2,
      3,
      [0, 1],
      [
        [0, 1, 2],
        [0, 1, 2, 3, 4],
      ],
    ],
    // 4: 2, then the rest fits (1 running + 2 waiting = 3): all of them.
    [4, 2, 3, [0, 1], [[0, 1, 2, 3]]],
    // 3: all at once once the loop has given them all (not 2 + 1).
    [3, 2, 3, [0, 1, 2], []],
    // 7 on 2 cores: 2 at a time (one running + the next) until the last three fit.
    [
      7,
      2,
      3,
      [0, 1],
      [
        [0, 1, 2],
        [0, 1, 2, 3],
        [0, 1, 2, 3, 4],
        [0, 1, 2, 3, 4, 5, 6],
      ],
    ],
    // No tail (shareUpTo = base): a plain limit.
    [
      4,
      2,
      2,
      [0, 1],
      [
        [0, 1, 2],
        [0, 1, 2, 3],
      ],
    ],
    // 1 core: one at a time, then the last one.
    [
      3,
      1,
      1,
      [0],
      [
        [0, 1],
        [0, 1, 2],
      ],
    ],
  ];
  it.each(table)('%i tasks, base %i, shareUpTo %i', async (n, base, shareUpTo, first, after) => {
    const b = batch(n, base, shareUpTo);
    expect(b.started).toEqual(base >= n ? first : first.slice(0, base));
    await tick();
    expect(b.started).toEqual(first);
    for (const [i, want] of after.entries()) {
      await b.settle(i);
      expect(b.started, `after task ${i} settled`).toEqual(want);
    }
  });

  it("a task's failure is its caller's alone and frees its slot", async () => {
    const b = batch(5, 2, 3);
    await tick();
    await b.settle(0, true);
    await expect(b.results[0]).rejects.toThrow('task 0');
    expect(b.started).toEqual([0, 1, 2]);
    await b.settle(1);
    await expect(b.results[1]).resolves.toBe(1);
    expect(b.started).toEqual([0, 1, 2, 3, 4]);
  });

  it('a task that throws instead of returning a promise rejects its caller and frees its slot', async () => {
    const limit = sharingLimit(1, 1);
    const thrown = limit((): Promise<number> => {
      throw new Error('synchronous');
    });
    await expect(thrown).rejects.toThrow('synchronous');
    await expect(limit(() => Promise.resolve(7))).resolves.toBe(7);
  });

  it('refuses a base below 1', () => {
    expect(() => sharingLimit(0, 3)).toThrow(/base must be/);
  });
});
