// The temporary-name helper (src/fs/temp-name.ts): the shapes, uniqueness
// under concurrency (in one process and across processes), and the sweeps
// that remove only what a killed run left.
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { writeFileAtomic } from '../../src/fs/atomic.js';
import {
  isTempNameBeside,
  removeTempsBeside,
  removeTempsIn,
  tempPathBeside,
  tempPathIn,
  uniqueSuffix,
} from '../../src/fs/temp-name.js';
import { runNodeOk } from '../support/e2e.js';

const distTempName = fileURLToPath(new URL('../../dist/fs/temp-name.js', import.meta.url));

let work: string;
beforeEach(async () => {
  work = await mkdtemp(join(tmpdir(), 'provkit-tempname-'));
});
afterEach(() => rm(work, { recursive: true, force: true }));

describe('temporary names', () => {
  it('have one shape beside a target and inside a directory', () => {
    expect(uniqueSuffix()).toMatch(/^[0-9a-f]{12}$/);
    expect(tempPathBeside('/m/x/linux_amd64')).toMatch(/^\/m\/x\/\.linux_amd64\.[0-9a-f]{12}\.tmp$/);
    expect(tempPathBeside('/m/x/linux_amd64', { tag: 'extract' })).toMatch(
      /^\/m\/x\/\.linux_amd64\.extract-[0-9a-f]{12}\.tmp$/,
    );
    expect(tempPathBeside('/d/p.zip', { ext: '.partial' })).toMatch(/^\/d\/\.p\.zip\.[0-9a-f]{12}\.partial$/);
    expect(tempPathIn('/m', '.provkit-staging-')).toMatch(/^\/m\/\.provkit-staging-[0-9a-f]{12}$/);
  });

  it('are recognised by isTempNameBeside only for their own target, tags and ending', () => {
    const name = (p: string): string => p.slice(p.lastIndexOf('/') + 1);
    const t = '/m/linux_amd64';
    expect(isTempNameBeside(t, name(tempPathBeside(t, { tag: 'old' })), ['extract', 'old'])).toBe(true);
    expect(isTempNameBeside(t, name(tempPathBeside(t, { tag: 'link' })), ['extract', 'old'])).toBe(false);
    expect(isTempNameBeside(t, name(tempPathBeside('/m/linux_amd64.x', { tag: 'old' })), ['old'])).toBe(false);
    expect(isTempNameBeside(t, name(tempPathBeside(t, { tag: 'old', ext: '.partial' })), ['old'])).toBe(false);
    expect(isTempNameBeside(t, 'linux_amd64', ['old'])).toBe(false);
  });

  it('are unique under concurrency: 2000 exclusive creates at once beside one target all succeed', async () => {
    const target = join(work, 'file');
    const paths = Array.from({ length: 2000 }, () => tempPathBeside(target));
    await Promise.all(paths.map((p) => writeFile(p, 'x', { flag: 'wx' })));
    expect(new Set(paths).size).toBe(2000);
    expect(await readdir(work)).toHaveLength(2000);
  });

  it('are unique across processes (4 processes × 5000 names)', async () => {
    const script = `
      import { tempPathBeside } from ${JSON.stringify(distTempName)};
      const out = [];
      for (let i = 0; i < 5000; i++) out.push(tempPathBeside('/t/file', { tag: 'extract' }));
      process.stdout.write(out.join('\\n'));`;
    const runOne = async (): Promise<string[]> =>
      (await runNodeOk(['--input-type=module', '-e', script], { env: process.env })).stdout.split('\n');
    const all = (await Promise.all([runOne(), runOne(), runOne(), runOne()])).flat();
    expect(all).toHaveLength(20_000);
    expect(new Set(all).size).toBe(20_000);
  });

  it('let concurrent atomic writers of one file each use their own temporary (no leftovers, one whole content wins)', async () => {
    const target = join(work, 'doc.json');
    const contents = Array.from({ length: 50 }, (_, i) => `${'x'.repeat(1000)}${i}`);
    await Promise.all(contents.map((c) => writeFileAtomic(target, Buffer.from(c))));
    expect(await readdir(work)).toEqual(['doc.json']);
    expect(contents).toContain(await readFile(target, 'utf8'));
  });
});

describe('sweeps', () => {
  it('removeTempsBeside removes the tagged temporaries of the target only', async () => {
    const target = join(work, 'linux_amd64');
    await mkdir(target);
    const keep = [
      'linux_amd64',
      'linux_amd64.lock',
      '.linux_amd64.0123456789ab.tmp',
      '.linux_arm64.old-0123456789ab.tmp',
      '.linux_amd64.old-xyz.tmp',
    ];
    for (const n of keep.slice(1)) await writeFile(join(work, n), '');
    await mkdir(tempPathBeside(target, { tag: 'extract' }));
    await writeFile(join(tempPathBeside(target, { tag: 'old' })), '');
    await removeTempsBeside(target, ['extract', 'old']);
    expect((await readdir(work)).sort()).toEqual([...keep].sort());
    await expect(removeTempsBeside(join(work, 'missing', 'x'), ['old'])).resolves.toBeUndefined();
  });

  it('removeTempsIn removes the entries with the prefix only; a missing directory has none', async () => {
    await mkdir(join(tempPathIn(work, '.provkit-staging-'), 'deep'), { recursive: true });
    await writeFile(join(work, 'index.json'), '{}');
    await removeTempsIn(work, '.provkit-staging-');
    expect(await readdir(work)).toEqual(['index.json']);
    await expect(removeTempsIn(join(work, 'missing'), '.x')).resolves.toBeUndefined();
  });
});
