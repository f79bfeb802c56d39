// Package directories (src/installer/cache.ts): the per-package lock file
// (mutual exclusion within and across processes, stale-lock recovery,
// heartbeat), executable discovery (spec item 75) and linking (item 83).
import { execFile, spawnSync } from 'node:child_process';
import { appendFile, mkdir, mkdtemp, readdir, readFile, readlink, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { parsePlatform, parseProviderSource, parseVersion } from '../../src/addresses/index.js';
import { acquirePackageLock, findExecutable, linkPackageDir, packageDir, packageLockPath, withPackageLock } from '../../src/installer/cache.js';
import { lockFileAction } from '../../src/installer/install.js';
import { Locks, newProviderLock } from '../../src/lockfile/index.js';
import { parseHash } from '../../src/hashing/index.js';

const distCache = fileURLToPath(new URL('../../dist/installer/cache.js', import.meta.url));
const demo = parseProviderSource('registry.example.test/acme/demo', 'tofu');
const V = parseVersion('1.1.0');
const LINUX = parsePlatform('linux_amd64');

let work: string;
beforeEach(async () => {
  work = await mkdtemp(join(tmpdir(), 'provkit-cache-'));
});
afterEach(() => rm(work, { recursive: true, force: true }));

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('package paths', () => {
  it('follow the cache layout (item 74) and put the lock beside the platform directory (item 86)', () => {
    expect(packageDir('/c', demo, V, LINUX)).toBe('/c/registry.example.test/acme/demo/1.1.0/linux_amd64');
    expect(packageLockPath('/c', demo, V, LINUX)).toBe('/c/registry.example.test/acme/demo/1.1.0/linux_amd64.lock');
  });
});

describe('acquirePackageLock', () => {
  it('excludes concurrent holders in one process', async () => {
    const path = join(work, 'a', 'p.lock');
    let inside = 0;
    let max = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        await withPackageLock(path, {}, async () => {
          inside += 1;
          max = Math.max(max, inside);
          await sleep(5 + Math.random() * 10);
          inside -= 1;
        });
      }),
    );
    expect(max).toBe(1);
    expect(await readdir(join(work, 'a'))).toEqual([]);
  });

  it('excludes concurrent holders across processes', async () => {
    const path = join(work, 'x.lock');
    const log = join(work, 'log');
    const script = `
      import { acquirePackageLock } from ${JSON.stringify(distCache)};
      import { appendFileSync } from 'node:fs';
      for (let i = 0; i < 3; i++) {
        const lock = await acquirePackageLock(${JSON.stringify(path)});
        appendFileSync(${JSON.stringify(log)}, 'in ' + process.pid + '\\n');
        await new Promise((r) => setTimeout(r, 20));
        appendFileSync(${JSON.stringify(log)}, 'out ' + process.pid + '\\n');
        await lock.release();
      }`;
    const runOne = (): Promise<void> =>
      new Promise((resolve, reject) => {
        execFile(process.execPath, ['--input-type=module', '-e', script], (err) => (err ? reject(new Error(err.message)) : resolve()));
      });
    await Promise.all([runOne(), runOne(), runOne(), runOne()]);
    const lines = (await readFile(log, 'utf8')).trim().split('\n');
    expect(lines).toHaveLength(24);
    for (let i = 0; i < lines.length; i += 2) {
      expect(lines[i]!.startsWith('in ')).toBe(true);
      expect(lines[i + 1]).toBe(lines[i]!.replace('in ', 'out '));
    }
    expect(await readdir(work)).toEqual(['log']);
  });

  it('breaks the lock of a dead process on this host at once', async () => {
    const path = join(work, 'dead.lock');
    const dead = spawnSync(process.execPath, ['-e', '']).pid;
    await writeFile(path, JSON.stringify({ pid: dead, hostname: hostname(), created: Date.now(), token: 't' }));
    const broke: string[] = [];
    const lock = await acquirePackageLock(path, { onBreak: (b) => broke.push(b.reason), timeoutMs: 2_000 });
    expect(broke).toEqual(['dead-process']);
    expect(JSON.parse(await readFile(path, 'utf8'))).toMatchObject({ pid: process.pid, hostname: hostname() });
    await lock.release();
    expect(await readdir(work)).toEqual([]);
  });

  it('breaks an old lock of another host, or of unknown content, once stale; waits for a fresh one', async () => {
    const path = join(work, 'old.lock');
    await writeFile(path, JSON.stringify({ pid: 1, hostname: 'elsewhere.invalid', created: 0, token: 't' }));
    const old = new Date(Date.now() - 10_000);
    await utimes(path, old, old);
    const broke: string[] = [];
    await (await acquirePackageLock(path, { staleMs: 5_000, onBreak: (b) => broke.push(b.reason) })).release();
    expect(broke).toEqual(['expired']);

    // An empty lock file (as OpenTofu's flock file) that is fresh is respected.
    await writeFile(path, '');
    await expect(acquirePackageLock(path, { staleMs: 5_000, timeoutMs: 200 })).rejects.toMatchObject({ code: 'PACKAGE_LOCK_TIMEOUT' });
    await utimes(path, old, old);
    await (await acquirePackageLock(path, { staleMs: 5_000, timeoutMs: 1_000 })).release();
  });

  it('keeps a live lock fresh with its heartbeat, so a slow holder is not broken', async () => {
    const path = join(work, 'hb.lock');
    const opts = { staleMs: 600, heartbeatMs: 50 };
    const first = await acquirePackageLock(path, opts);
    const broke: unknown[] = [];
    const waits: number[] = [];
    const second = acquirePackageLock(path, { ...opts, noticeAfterMs: 100, onBreak: (b) => broke.push(b), onWait: (w) => waits.push(w.waitedMs) });
    await sleep(1_500); // 2.5 × staleMs: without the heartbeat the lock would be broken
    expect(broke).toEqual([]);
    await first.release();
    await (await second).release();
    expect(broke).toEqual([]);
    expect(waits).toHaveLength(1);
  });

  it('is released only by its holder', async () => {
    const path = join(work, 'mine.lock');
    const lock = await acquirePackageLock(path);
    await writeFile(path, 'someone else');
    await lock.release();
    expect(await readFile(path, 'utf8')).toBe('someone else');
  });

  it('stops waiting on abort', async () => {
    const path = join(work, 'abort.lock');
    const held = await acquirePackageLock(path);
    const controller = new AbortController();
    const waiting = acquirePackageLock(path, { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    await expect(waiting).rejects.toMatchObject({ code: 'ABORTED' });
    await held.release();
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
    await expect(linkPackageDir(src, src)).rejects.toThrow(`cannot install existing provider directory ${src} to itself`);
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
    const changed = new Locks([newProviderLock(parseProviderSource('r.example/x/a', 'tofu'), V, undefined, [h('h1:a'), h('h1:b')])]);
    expect(lockFileAction(a, changed, false, true)).toBe('readonly-changed');
  });
});
