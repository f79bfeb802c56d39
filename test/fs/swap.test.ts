// The directory swap (src/fs/swap.ts): a complete directory renamed into
// place; a replacement moves the old one aside and removes it; a failure of
// the second rename puts the old one back (old or new at the target, never
// neither).
import * as fsp from 'node:fs/promises';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { swapDirInto, type SwapFs } from '../../src/fs/swap.js';

let work: string;
beforeEach(async () => {
  work = await mkdtemp(join(tmpdir(), 'provkit-swap-'));
});
afterEach(() => rm(work, { recursive: true, force: true }));

const WHAT = 'cannot install the package at';

/** A directory at `path` holding one file `marker` with `content`. */
async function tree(path: string, content: string): Promise<void> {
  await mkdir(path, { recursive: true });
  await writeFile(join(path, 'marker'), content);
}

const marker = (dir: string): Promise<string> => readFile(join(dir, 'marker'), 'utf8');

/** Node's calls, but the `n`th rename (1-based) fails with `code`; records every rename. */
function failingRename(n: number, code: string, renames: Array<[string, string]>): SwapFs {
  let count = 0;
  return {
    mkdir: fsp.mkdir,
    rm: fsp.rm,
    rename: async (from, to) => {
      renames.push([from, to]);
      count += 1;
      if (count === n)
        throw Object.assign(new Error(`${code}: injected failure, rename '${from}' -> '${to}'`), { code });
      await fsp.rename(from, to);
    },
  };
}

describe('swapDirInto', () => {
  it('renames into an absent target, making its parents', async () => {
    const temp = join(work, '.pkg.extract-000000000000.tmp');
    await tree(temp, 'new');
    const target = join(work, 'a', 'b', 'pkg');
    await swapDirInto(temp, target, { existing: 'fail', what: WHAT });
    expect(await marker(target)).toBe('new');
    expect(await readdir(work)).toEqual(['a']);
  });

  it('replaces an empty directory even when existing is fail', async () => {
    const temp = join(work, 'temp');
    await tree(temp, 'new');
    const target = join(work, 'pkg');
    await mkdir(target);
    await swapDirInto(temp, target, { existing: 'fail', what: WHAT });
    expect(await marker(target)).toBe('new');
  });

  it('refuses a non-empty target with existing fail, changing nothing', async () => {
    const temp = join(work, 'temp');
    await tree(temp, 'new');
    const target = join(work, 'pkg');
    await tree(target, 'old');
    await expect(swapDirInto(temp, target, { existing: 'fail', what: WHAT })).rejects.toMatchObject({
      code: 'IO',
      message: `${WHAT} ${target}: something is already there`,
      file: target,
    });
    expect(await marker(target)).toBe('old');
    expect(await marker(temp)).toBe('new');
  });

  it('replaces a non-empty target: old moved aside, new renamed in, old removed', async () => {
    const temp = join(work, 'temp');
    await tree(temp, 'new');
    const target = join(work, 'pkg');
    await tree(target, 'old');
    const renames: Array<[string, string]> = [];
    await swapDirInto(temp, target, { existing: 'replace', what: WHAT, fs: failingRename(0, 'NONE', renames) });
    expect(await marker(target)).toBe('new');
    expect(await readdir(work)).toEqual(['pkg']);
    // The three renames: the attempt, the old one aside (a `.pkg.old-RANDOM.tmp` name), the new one in.
    expect(renames).toHaveLength(3);
    expect(renames[1]![1]).toMatch(/\/\.pkg\.old-[0-9a-f]{12}\.tmp$/);
    expect(renames[2]).toEqual([temp, target]);
  });

  it('a failed second rename leaves the old tree at the target (never neither) and the new one in temp', async () => {
    const temp = join(work, 'temp');
    await tree(temp, 'new');
    const target = join(work, 'pkg');
    await tree(target, 'old');
    const renames: Array<[string, string]> = [];
    // 1: temp → target (ENOTEMPTY), 2: target → aside, 3: temp → target (injected EIO), 4: aside → target.
    await expect(
      swapDirInto(temp, target, { existing: 'replace', what: WHAT, fs: failingRename(3, 'EIO', renames) }),
    ).rejects.toMatchObject({
      code: 'IO',
      file: target,
    });
    expect(renames).toHaveLength(4);
    expect(renames[3]).toEqual([renames[1]![1], target]);
    expect(await marker(target)).toBe('old');
    expect(await marker(temp)).toBe('new');
    expect((await readdir(work)).sort()).toEqual(['pkg', 'temp']);
  });

  it('a failed move aside leaves the old tree where it was', async () => {
    const temp = join(work, 'temp');
    await tree(temp, 'new');
    const target = join(work, 'pkg');
    await tree(target, 'old');
    await expect(
      swapDirInto(temp, target, { existing: 'replace', what: WHAT, fs: failingRename(2, 'EACCES', []) }),
    ).rejects.toThrow(/EACCES/);
    expect(await marker(target)).toBe('old');
    expect(await marker(temp)).toBe('new');
  });

  it('names the target in any other rename failure', async () => {
    const target = join(work, 'pkg');
    await expect(swapDirInto(join(work, 'missing'), target, { existing: 'replace', what: WHAT })).rejects.toMatchObject(
      {
        code: 'IO',
        file: target,
        // The system's reason in words (src/errors.ts errorText), never Node's `ENOENT: …`.
        message: expect.stringMatching(
          new RegExp(`^${WHAT} ${target}: rename .*: no such file or directory$`),
        ) as unknown,
      },
    );
  });
});
