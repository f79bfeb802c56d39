// Concurrent runs: two `provkit mirror` into one target serialize on the
// target mutex and both succeed; a mutex left by a dead process is broken; three
// `provkit install` sharing one plugin cache all succeed with one cached copy.
import { hostname, tmpdir } from 'node:os';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { MIRROR_MUTEX_FILE } from '../../src/installer/mirror.js';
import type { FakeRegistry } from '../support/servers/registry.js';
import { recordFault } from './report.js';
import { hermeticEnv, leftovers, mainTf, PLAT, runInProcess, snapshot, spawnCli } from './support.js';
import { startBigRegistry } from './support.js';

let reg: FakeRegistry;
let base: string;
let env: Record<string, string>;

beforeAll(async () => {
  reg = await startBigRegistry();
  base = await mkdtemp(join(tmpdir(), 'provkit-faults-conc-'));
  env = await hermeticEnv(base, reg.caPath, 'connect=5000,idle=5000,backoff=5');
});
afterAll(async () => {
  await reg.close();
  await rm(base, { recursive: true, force: true });
});

async function project(name: string): Promise<string> {
  const p = join(base, name);
  await mkdir(p, { recursive: true });
  await writeFile(join(p, 'main.tf'), mainTf(reg.host));
  return p;
}

describe('concurrency', () => {
  it('two provkit mirror runs into one target both succeed, one after the other', async () => {
    const p = await project('mirror2');
    const target = join(p, 'out');
    const args = ['mirror', `-platform=${PLAT}`, '-platform=darwin_arm64', target];
    const runs = [spawnCli(args, p, env), spawnCli(args, p, env)];
    const results = await Promise.all(runs.map((r) => r.done));
    expect(results.map((r) => r.code)).toEqual([0, 0]);
    // Between them the two packages were fetched once and kept once.
    const text = results.map((r) => r.stdout).join('\n');
    expect(text).toMatch(/2 fetched, 0 already present/);
    expect(text).toMatch(/0 fetched, 2 already present/);
    const single = await project('mirror1');
    expect(
      (await runInProcess(['mirror', `-platform=${PLAT}`, '-platform=darwin_arm64', join(single, 'out')], single, env))
        .code,
    ).toBe(0);
    expect(await snapshot(target)).toEqual(await snapshot(join(single, 'out')));
    expect(await leftovers(p)).toEqual([]);
    recordFault({
      group: 'concurrency',
      fault: 'two mirror runs into one target at once',
      command: 'provkit mirror ×2',
      outcome: 'both exit 0 (serialized by the target mutex; the second kept the first one’s packages)',
      state: 'identical to a single run',
      rerun: '-',
    });
  });

  it('breaks a target mutex left by a dead process', async () => {
    const p = await project('stale');
    const target = join(p, 'out');
    await mkdir(target, { recursive: true });
    await writeFile(
      join(target, MIRROR_MUTEX_FILE),
      `${JSON.stringify({ pid: 2 ** 22 + 12345, hostname: hostname(), created: Date.now(), token: 'dead' })}\n`,
    );
    await mkdir(join(target, '.provkit-staging-deadbeef00aa', 'x'), { recursive: true });
    const r = await runInProcess(['mirror', `-platform=${PLAT}`, target], p, env);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('Stale mirror mutex removed');
    expect(await leftovers(p)).toEqual([]);
    recordFault({
      group: 'concurrency',
      fault: 'target mutex and staging directory left by a killed run (dead PID)',
      command: 'provkit mirror',
      outcome: 'exit 0, stale mutex broken with a warning, leftover staging removed',
      state: 'fully updated',
      rerun: '-',
    });
  });

  it('three provkit install runs sharing one plugin cache all succeed', async () => {
    if (process.platform !== 'linux') return;
    const cache = join(base, 'plugin-cache');
    await mkdir(cache, { recursive: true });
    const projects = await Promise.all([0, 1, 2].map((i) => project(`install${i}`)));
    const results = await Promise.all(
      projects.map((p) => spawnCli(['install'], p, { ...env, TF_PLUGIN_CACHE_DIR: cache }).done),
    );
    expect(results.map((r) => r.code)).toEqual([0, 0, 0]);
    const versions = await readdir(join(cache, reg.host, 'acme', 'demo'));
    expect(versions).toEqual(['1.1.0']);
    expect((await readdir(join(cache, reg.host, 'acme', 'demo', '1.1.0'))).filter((x) => !x.endsWith('.lock'))).toEqual(
      [PLAT],
    );
    for (const p of projects) expect((await snapshot(join(p, '.terraform', 'providers'))) !== 'absent').toBe(true);
    expect(await leftovers(cache, ...projects)).toEqual([]);
    recordFault({
      group: 'concurrency',
      fault: 'three install runs sharing one plugin cache',
      command: 'provkit install ×3',
      outcome: 'all exit 0 (per-package cache mutexes)',
      state: 'one cached copy, three installs',
      rerun: '-',
    });
  });
});
