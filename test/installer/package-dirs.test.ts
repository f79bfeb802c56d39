// Package directories (src/installer/cache.ts): where the per-package mutex
// file lives (the mutex itself: test/fs/dir-mutex.test.ts), executable
// discovery (spec item 75) and linking (item 83).
import { appendFile, mkdir, mkdtemp, readdir, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { parsePlatform, parseProviderSource, parseVersion } from '../../src/addresses/index.js';
import { findExecutable, linkPackageDir, packageDir, packageMutexPath } from '../../src/installer/package-dirs.js';
import { lockFileAction } from '../../src/installer/install.js';
import { Locks, newProviderLock } from '../../src/lockfile/index.js';
import { parseHash } from '../../src/hashing/index.js';

const demo = parseProviderSource('registry.example.test/acme/demo', 'tofu');
const V = parseVersion('1.1.0');
const LINUX = parsePlatform('linux_amd64');

let work: string;
beforeEach(async () => {
  work = await mkdtemp(join(tmpdir(), 'provkit-cache-'));
});
afterEach(() => rm(work, { recursive: true, force: true }));

describe('package paths', () => {
  it('follow the cache layout (item 74) and put the mutex file beside the platform directory (item 86)', () => {
    expect(packageDir('/c', demo, V, LINUX)).toBe('/c/registry.example.test/acme/demo/1.1.0/linux_amd64');
    expect(packageMutexPath('/c', demo, V, LINUX)).toBe('/c/registry.example.test/acme/demo/1.1.0/linux_amd64.lock');
  });
});

describe('findExecutable (item 75)', () => {
  it('takes the first non-directory in byte order named terraform-provider-TYPE, then nothing, _ or .', async () => {
    const d = join(work, 'pkg');
    await mkdir(join(d, 'terraform-provider-demo_dir'), { recursive: true });
    await writeFile(join(d, 'terraform-provider-demonic'), '');
    await writeFile(join(d, 'terraform-provider-demo_v1.1.0'), '');
    await writeFile(join(d, 'terraform-provider-demo.exe'), '');
    expect(await findExecutable(d, demo)).toBe(join(d, 'terraform-provider-demo.exe'));
    await writeFile(join(d, 'terraform-provider-demo'), '');
    expect(await findExecutable(d, demo)).toBe(join(d, 'terraform-provider-demo'));
  });

  it('counts a symlink, and does not check the executable bit', async () => {
    const d = join(work, 'pkg');
    await mkdir(d);
    await writeFile(join(work, 'real'), '', { mode: 0o644 });
    await symlink(join(work, 'real'), join(d, 'terraform-provider-demo_v1'));
    expect(await findExecutable(d, demo)).toBe(join(d, 'terraform-provider-demo_v1'));
  });

  it("fails with the reference's message", async () => {
    const d = join(work, 'pkg');
    await mkdir(d);
    await writeFile(join(d, 'terraform-providerdemo'), '');
    await expect(findExecutable(d, demo, V, LINUX)).rejects.toMatchObject({
      code: 'PROVIDER_BINARY_NOT_FOUND',
      message: 'provider binary not found: could not find executable file starting with terraform-provider-demo',
      provider: 'registry.example.test/acme/demo',
      version: '1.1.0',
      platform: 'linux_amd64',
    });
  });
});

describe('linkPackageDir (item 83)', () => {
  it('replaces whatever is at the target with an absolute symlink', async () => {
    const src = join(work, 'src');
    await mkdir(src);
    const target = join(work, 't', 'linux_amd64');
    await mkdir(target, { recursive: true });
    await writeFile(join(target, 'old'), '');
    expect(await linkPackageDir(src, target)).toBe('symlink');
    expect(await readlink(target)).toBe(src);
    expect(await readdir(join(work, 't'))).toEqual(['linux_amd64']);
  });

  it('refuses to link a directory to itself', async () => {
    const src = join(work, 'src');
    await mkdir(src);
    await appendFile(join(src, 'f'), 'x');
    await expect(linkPackageDir(src, src)).rejects.toThrow(
      `cannot install existing provider directory ${src} to itself`,
    );
    expect(await readdir(src)).toEqual(['f']);
  });
});

describe('lock policy helpers', () => {
  const h = (s: string): ReturnType<typeof parseHash> => parseHash(s);
  const lockOf = (...providers: string[]): Locks =>
    new Locks(providers.map((p) => newProviderLock(parseProviderSource(p, 'tofu'), V, undefined, [h('h1:a')])));

  it('lockFileAction follows item 42', () => {
    const a = lockOf('r.example/x/a');
    expect(lockFileAction(a, a, true, false)).toBe('unchanged');
    expect(lockFileAction(a, lockOf('r.example/x/a', 'r.example/x/b'), false, false)).toBe('write');
    expect(lockFileAction(a, lockOf('r.example/x/b'), false, true)).toBe('readonly-providers-changed');
    const changed = new Locks([
      newProviderLock(parseProviderSource('r.example/x/a', 'tofu'), V, undefined, [h('h1:a'), h('h1:b')]),
    ]);
    expect(lockFileAction(a, changed, false, true)).toBe('readonly-changed');
  });
});
