// The directory mutex (src/fs/dir-mutex.ts): mutual exclusion within and
// across processes, stale-mutex recovery, heartbeat, release by the holder only.
import { spawnSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { acquireDirMutex, withDirMutex } from '../../src/fs/dir-mutex.js';
import { runNodeOk } from '../support/e2e.js';

const distMutex = fileURLToPath(new URL('../../dist/fs/dir-mutex.js', import.meta.url));

let work: string;
beforeEach(async () => {
  work = await mkdtemp(join(tmpdir(), 'provkit-mutex-'));
});
afterEach(() => rm(work, { recursive: true, force: true }));

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('directory mutex (acquireDirMutex, withDirMutex)', () => {
  it('excludes concurrent holders in one process', async () => {
    const path = join(work, 'a', 'p.lock');
    let inside = 0;
    let max = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        await withDirMutex(path, {}, async () => {
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
      import { acquireDirMutex } from ${JSON.stringify(distMutex)};
      import { appendFileSync } from 'node:fs';
      for (let i = 0; i < 3; i++) {
        const lock = await acquireDirMutex(${JSON.stringify(path)});
        appendFileSync(${JSON.stringify(log)}, 'in ' + process.pid + '\\n');
        await new Promise((r) => setTimeout(r, 20));
        appendFileSync(${JSON.stringify(log)}, 'out ' + process.pid + '\\n');
        await lock.release();
      }`;
    const runOne = async (): Promise<void> => {
      await runNodeOk(['--input-type=module', '-e', script], { env: process.env });
    };
    await Promise.all([runOne(), runOne(), runOne(), runOne()]);
    const lines = (await readFile(log, 'utf8')).trim().split('\n');
    expect(lines).toHaveLength(24);
    for (let i = 0; i < lines.length; i += 2) {
      expect(lines[i]!.startsWith('in ')).toBe(true);
      expect(lines[i + 1]).toBe(lines[i]!.replace('in ', 'out '));
    }
    expect(await readdir(work)).toEqual(['log']);
  });

  it('breaks the mutex of a dead process on this host at once', async () => {
    const path = join(work, 'dead.lock');
    const dead = spawnSync(process.execPath, ['-e', '']).pid;
    await writeFile(path, JSON.stringify({ pid: dead, hostname: hostname(), created: Date.now(), token: 't' }));
    const broke: string[] = [];
    const lock = await acquireDirMutex(path, { onBreak: (b) => broke.push(b.reason), timeoutMs: 2_000 });
    expect(broke).toEqual(['dead-process']);
    expect(JSON.parse(await readFile(path, 'utf8'))).toMatchObject({ pid: process.pid, hostname: hostname() });
    await lock.release();
    expect(await readdir(work)).toEqual([]);
  });

  it('breaks an old mutex file of another host, or of unknown content, once stale; waits for a fresh one', async () => {
    const path = join(work, 'old.lock');
    await writeFile(path, JSON.stringify({ pid: 1, hostname: 'elsewhere.invalid', created: 0, token: 't' }));
    const old = new Date(Date.now() - 10_000);
    await utimes(path, old, old);
    const broke: string[] = [];
    await (await acquireDirMutex(path, { staleMs: 5_000, onBreak: (b) => broke.push(b.reason) })).release();
    expect(broke).toEqual(['expired']);

    // An empty mutex file (as OpenTofu's flock file) that is fresh is respected.
    await writeFile(path, '');
    await expect(acquireDirMutex(path, { staleMs: 5_000, timeoutMs: 200 })).rejects.toMatchObject({
      code: 'MUTEX_TIMEOUT',
    });
    await utimes(path, old, old);
    await (await acquireDirMutex(path, { staleMs: 5_000, timeoutMs: 1_000 })).release();
  });

  it('keeps a live mutex fresh with its heartbeat, so a slow holder is not broken', async () => {
    const path = join(work, 'hb.lock');
    const opts = { staleMs: 600, heartbeatMs: 50 };
    const first = await acquireDirMutex(path, opts);
    const broke: unknown[] = [];
    const waits: number[] = [];
    const second = acquireDirMutex(path, {
      ...opts,
      noticeAfterMs: 100,
      onBreak: (b) => broke.push(b),
      onWait: (w) => waits.push(w.waitedMs),
    });
    await sleep(1_500); // 2.5 × staleMs: without the heartbeat the mutex would be broken
    expect(broke).toEqual([]);
    await first.release();
    await (await second).release();
    expect(broke).toEqual([]);
    expect(waits).toHaveLength(1);
  });

  it('is released only by its holder', async () => {
    const path = join(work, 'mine.lock');
    const lock = await acquireDirMutex(path);
    await writeFile(path, 'someone else');
    await lock.release();
    expect(await readFile(path, 'utf8')).toBe('someone else');
  });

  it('stops waiting on abort', async () => {
    const path = join(work, 'abort.lock');
    const held = await acquireDirMutex(path);
    const controller = new AbortController();
    const waiting = acquireDirMutex(path, { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    await expect(waiting).rejects.toMatchObject({ code: 'ABORTED' });
    await held.release();
  });
});
