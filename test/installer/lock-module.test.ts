// lockModule, the one pipeline of `lock` and `lock -recursive`, tested as
// OpenTofu tests its installer (internal/providercache/installer_test.go): a
// MockSource (src/sources/testing.ts) serving the demo mirror's real zips, a
// real directory with a configuration and a lock file, and the whole event
// list of each run compared, with what was written.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { createHashPool } from '../../src/hashing/index.js';
import type { InstallerEvent } from '../../src/installer/events.js';
import { lockModule, type LockModuleOptions } from '../../src/installer/lock-module.js';
import { FetchCache } from '../../src/installer/fetch-cache.js';
import { LOCK_FILE_NAME } from '../../src/lockfile/index.js';
import { MockSource } from '../../src/sources/testing.js';
import { demoModuleDir, demoPackages, eventLine, h1Of, LINUX, LOCKED_1_0 } from '../support/demo-packages.js';

const scratch = mkdtempSync(join(tmpdir(), 'provkit-lock-module-'));
const pool = createHashPool({ concurrency: 0 });
afterAll(async () => {
  await pool.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** A module directory requiring demo `~> 1.0`, with `lock` as its lock file (none when undefined). */
const moduleDir = (name: string, lock?: string): string => demoModuleDir(join(scratch, name), lock);

/** Runs lockModule over a fresh cache of a MockSource; the events of both, in order, as lines. */
async function run(
  dir: string,
  options: Partial<LockModuleOptions> = {},
  source = new MockSource(demoPackages),
): Promise<{ outcome: Awaited<ReturnType<typeof lockModule>>; events: string[]; source: MockSource }> {
  const events: string[] = [];
  const sink = (e: InstallerEvent): void => {
    if (e.type !== 'fetch_progress') events.push(eventLine(e));
  };
  const cache = new FetchCache({ source, pool, networkConcurrency: 2, events: sink });
  try {
    const outcome = await lockModule(dir, { flavor: 'tofu', cache, platforms: [LINUX], events: sink, ...options });
    return { outcome, events, source };
  } finally {
    await cache.close();
  }
}

describe('lockModule: one module locked through a fetch-and-hash cache', () => {
  it('without a lock file: selects the newest match, hashes it, writes the file, then says the hashes are tracked', async () => {
    const dir = moduleDir('fresh');
    const { outcome, events, source } = await run(dir);
    expect(events).toEqual([
      'platforms_chosen flags linux_amd64',
      'provider_selected registry.example.test/acme/demo 1.1.0 (constraints)',
      'fetch_queued registry.example.test/acme/demo 1.1.0 linux_amd64',
      'fetch_start registry.example.test/acme/demo 1.1.0 linux_amd64',
      'fetch_complete registry.example.test/acme/demo 1.1.0 linux_amd64',
      'hashes_obtained registry.example.test/acme/demo linux_amd64 new-provider',
    ]);
    expect(source.calls.map((c) => c.method)).toEqual(['availableVersions', 'packageMeta']);
    expect(outcome).toMatchObject({ status: 'created', changed: true, providers: 1, failures: [] });
    expect(outcome.changes).toEqual([`no ${LOCK_FILE_NAME} yet: a new one with 1 provider`]);
    expect(readFileSync(join(dir, LOCK_FILE_NAME), 'utf8')).toContain(`"${h1Of('1.1.0')}"`);
  });

  it('with a lock file that already holds the hashes: keeps the locked version, unchanged, rewritten as the reference does', async () => {
    const dir = moduleDir('locked', LOCKED_1_0);
    const { outcome, events } = await run(dir);
    expect(events).toEqual([
      'platforms_chosen flags linux_amd64',
      'provider_selected registry.example.test/acme/demo 1.0.0 (lock)',
      'fetch_queued registry.example.test/acme/demo 1.0.0 linux_amd64',
      'fetch_start registry.example.test/acme/demo 1.0.0 linux_amd64',
      'fetch_complete registry.example.test/acme/demo 1.0.0 linux_amd64',
      'hashes_obtained registry.example.test/acme/demo linux_amd64 unchanged',
    ]);
    expect(outcome).toMatchObject({ status: 'unchanged', changed: false, changes: [] });
    expect(readFileSync(join(dir, LOCK_FILE_NAME), 'utf8')).toBe(LOCKED_1_0);
  });

  it('check: compares, writes nothing and says no hash is tracked', async () => {
    const dir = moduleDir('check');
    const { outcome, events } = await run(dir, { check: true });
    expect(events).toEqual([
      'platforms_chosen flags linux_amd64',
      'provider_selected registry.example.test/acme/demo 1.1.0 (constraints)',
      'fetch_queued registry.example.test/acme/demo 1.1.0 linux_amd64',
      'fetch_start registry.example.test/acme/demo 1.1.0 linux_amd64',
      'fetch_complete registry.example.test/acme/demo 1.1.0 linux_amd64',
    ]);
    expect(outcome).toMatchObject({ status: 'would-change', changed: true });
    expect(() => readFileSync(join(dir, LOCK_FILE_NAME))).toThrow();
  });

  it('a provider the source does not have: a failure, no hashes said tracked, nothing written', async () => {
    const dir = moduleDir('unknown');
    const { outcome, events } = await run(dir, {}, new MockSource([]));
    expect(events).toEqual(['platforms_chosen flags linux_amd64']);
    expect(outcome.status).toBe('failed');
    expect(outcome.failures.map((f) => f.error.message)).toEqual([
      'provider registry registry.example.test does not have a provider named registry.example.test/acme/demo',
    ]);
    expect(() => readFileSync(join(dir, LOCK_FILE_NAME))).toThrow();
  });

  it('a lock file with errors: stops before the cache is opened, nothing fetched', async () => {
    const dir = moduleDir('broken', 'provider "registry.example.test/acme/demo" {\n');
    let opened = false;
    const { outcome, events, source } = await run(dir, {
      cache: () => {
        opened = true;
        return Promise.resolve(undefined);
      },
    });
    expect(opened).toBe(false);
    expect(events).toEqual([]);
    expect(source.calls).toEqual([]);
    expect(outcome.status).toBe('failed');
    expect(outcome.diagnostics.length).toBeGreaterThan(0);
    expect(outcome.diagnostics.every((d) => d.severity === 'error' && d.range?.filename === LOCK_FILE_NAME)).toBe(true);
  });
});
