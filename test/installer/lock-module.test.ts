// lockModule, the one pipeline of `lock` and `lock -recursive`, tested as
// OpenTofu tests its installer (internal/providercache/installer_test.go): a
// MockSource (src/sources/testing.ts) serving the demo mirror's real zips, a
// real directory with a configuration and a lock file, and the whole event
// list of each run compared, with what was written.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, describe, expect, it } from 'vitest';

import { parsePlatform, parseProviderSource, parseVersion } from '../../src/addresses/index.js';
import { createHashPool } from '../../src/hashing/index.js';
import type { InstallerEvent } from '../../src/installer/events.js';
import { lockModule, type LockModuleOptions } from '../../src/installer/lock-module.js';
import { FetchCache } from '../../src/installer/fetch-cache.js';
import { LOCK_FILE_NAME } from '../../src/lockfile/index.js';
import { type MockPackage, MockSource } from '../../src/sources/testing.js';

const MIRROR = fileURLToPath(new URL('../../mirror-fixtures/registry.example.test/acme/', import.meta.url));
const reference = JSON.parse(
  readFileSync(fileURLToPath(new URL('../../mirror-fixtures/hashes.json', import.meta.url)), 'utf8'),
) as { packages: Record<string, { zh: string; h1: string }> };
const DEMO = parseProviderSource('registry.example.test/acme/demo', 'tofu');
const LINUX = parsePlatform('linux_amd64');
const h1Of = (version: string): string =>
  reference.packages[`registry.example.test/acme/demo/terraform-provider-demo_${version}_linux_amd64.zip`]!.h1;

/** demo 1.0.0 and 1.1.0 for linux_amd64, as local archives (the mirror's real zips). */
const packages: MockPackage[] = ['1.0.0', '1.1.0'].map((v) => ({
  provider: DEMO,
  version: parseVersion(v),
  platform: LINUX,
  location: { kind: 'local-archive', path: join(MIRROR, `demo/terraform-provider-demo_${v}_linux_amd64.zip`) },
}));

const scratch = mkdtempSync(join(tmpdir(), 'provkit-lock-module-'));
const pool = createHashPool({ concurrency: 0 });
afterAll(async () => {
  await pool.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** A module directory requiring demo `~> 1.0`, with `lock` as its lock file (none when undefined). */
function moduleDir(name: string, lock?: string): string {
  const dir = join(scratch, name);
  mkdirSync(dir);
  writeFileSync(
    join(dir, 'main.tf'),
    'terraform {\n  required_providers {\n    demo = {\n      source  = "registry.example.test/acme/demo"\n      version = "~> 1.0"\n    }\n  }\n}\n',
  );
  if (lock !== undefined) writeFileSync(join(dir, LOCK_FILE_NAME), lock);
  return dir;
}

/** One line per event, the fields that say what happened. */
function line(e: InstallerEvent): string {
  switch (e.type) {
    case 'platforms_chosen':
      return `platforms_chosen ${e.origin} ${e.platforms.join(',')}`;
    case 'provider_selected':
      return `provider_selected ${e.provider.toString()} ${e.version.toString()} (${e.reason})`;
    case 'hashes_obtained':
      return `hashes_obtained ${e.provider.toString()} ${e.platform.toString()} ${e.change}`;
    case 'fetch_queued':
    case 'fetch_start':
    case 'fetch_complete':
      return `${e.type} ${e.provider.toString()} ${e.version.toString()} ${e.platform.toString()}`;
    case 'warning':
      return `warning ${e.summary}`;
    default:
      return e.type;
  }
}

/** Runs lockModule over a fresh cache of a MockSource; the events of both, in order, as lines. */
async function run(
  dir: string,
  options: Partial<LockModuleOptions> = {},
  source = new MockSource(packages),
): Promise<{ outcome: Awaited<ReturnType<typeof lockModule>>; events: string[]; source: MockSource }> {
  const events: string[] = [];
  const sink = (e: InstallerEvent): void => {
    if (e.type !== 'fetch_progress') events.push(line(e));
  };
  const cache = new FetchCache({ source, pool, networkConcurrency: 2, events: sink });
  try {
    const outcome = await lockModule(dir, { flavor: 'tofu', cache, platforms: [LINUX], events: sink, ...options });
    return { outcome, events, source };
  } finally {
    await cache.close();
  }
}

const LOCKED_1_0 = `# This file is maintained automatically by "tofu init".
# Manual edits may be lost in future updates.

provider "registry.example.test/acme/demo" {
  version     = "1.0.0"
  constraints = "~> 1.0"
  hashes = [
    "${h1Of('1.0.0')}",
  ]
}
`;

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
