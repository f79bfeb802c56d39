// installModule, the one pipeline of `install` (the provider step of init),
// tested as OpenTofu tests its installer (internal/providercache/installer_test.go):
// a MockSource (src/sources/testing.ts) serving the demo mirror's real zips, a
// real directory with a configuration and a lock file, and the whole event
// list of each run compared, with the outcome and what was written.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { createHashPool } from '../../src/hashing/index.js';
import { installModule, type InstallModuleOptions } from '../../src/installer/install-module.js';
import { LOCK_FILE_NAME } from '../../src/lockfile/index.js';
import { MockSource } from '../../src/sources/testing.js';
import { demoModuleDir, demoPackages, eventLine, h1Of, LINUX, LOCKED_1_0 } from '../support/demo-packages.js';

const scratch = mkdtempSync(join(tmpdir(), 'provkit-install-module-'));
const pool = createHashPool({ concurrency: 0 });
afterAll(async () => {
  await pool.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** A module directory holding `main` (default: requiring demo `~> 1.0`), with `lock` as its lock file (none when undefined). */
const moduleDir = (name: string, lock?: string, main?: string): string =>
  demoModuleDir(join(scratch, name), lock, main);

/** Runs installModule over a MockSource; its events, in order, as lines. */
async function run(
  dir: string,
  options: Partial<InstallModuleOptions> = {},
  source = new MockSource(demoPackages),
): Promise<{ outcome: Awaited<ReturnType<typeof installModule>>; events: string[]; source: MockSource }> {
  const events: string[] = [];
  const outcome = await installModule(dir, {
    flavor: 'tofu',
    platform: LINUX,
    source,
    pool,
    events: (e) => {
      if (e.type !== 'fetch_progress') events.push(eventLine(e));
    },
    ...options,
  });
  return { outcome, events, source };
}

const LOCKED_NO_HASHES = `# This file is maintained automatically by "tofu init".
# Manual edits may be lost in future updates.

provider "registry.example.test/acme/demo" {
  version     = "1.0.0"
  constraints = "~> 1.0"
}
`;

describe('installModule: one module installed, its lock file decided and written', () => {
  it('without a lock file: installs the newest match, decides write, writes the lock; a second run reuses it and writes nothing', async () => {
    const dir = moduleDir('fresh');
    const first = await run(dir);
    expect(first.events).toEqual([
      'install_resolving registry.example.test/acme/demo ~> 1.0 locked=-',
      'provider_selected registry.example.test/acme/demo 1.1.0 (constraints)',
      'install_start registry.example.test/acme/demo 1.1.0 linux_amd64',
      'install_complete registry.example.test/acme/demo 1.1.0 installed unauthenticated',
    ]);
    expect(first.source.calls.map((c) => c.method)).toEqual(['availableVersions', 'packageMeta']);
    expect(first.outcome).toMatchObject({
      status: 'installed',
      configDiagnostics: [],
      lockFileDiagnostics: [],
      failures: [],
      lockFile: 'write',
      wrote: true,
    });
    expect(first.outcome.previousLocks.size).toBe(0);
    expect(first.outcome.installed.map((p) => [p.version.toString(), p.mode, p.dir])).toEqual([
      ['1.1.0', 'installed', join(dir, '.terraform/providers/registry.example.test/acme/demo/1.1.0/linux_amd64')],
    ]);
    const written = readFileSync(join(dir, LOCK_FILE_NAME), 'utf8');
    expect(written).toContain('version     = "1.1.0"');
    expect(written).toContain(`"${h1Of('1.1.0')}"`);

    const again = await run(dir);
    expect(again.events).toEqual([
      'install_resolving registry.example.test/acme/demo ~> 1.0 locked=1.1.0',
      'install_complete registry.example.test/acme/demo 1.1.0 previously-installed -',
    ]);
    expect(again.source.calls).toEqual([]);
    expect(again.outcome).toMatchObject({ status: 'installed', lockFile: 'unchanged', wrote: false });
    expect(readFileSync(join(dir, LOCK_FILE_NAME), 'utf8')).toBe(written);
  });

  it('readonly: keeps the locked version; a lock that would gain a hash is said to change, and not written', async () => {
    const dir = moduleDir('readonly', LOCKED_NO_HASHES);
    const { outcome, events } = await run(dir, { readonly: true, dataDir: 'data' });
    expect(events).toEqual([
      'install_resolving registry.example.test/acme/demo ~> 1.0 locked=1.0.0',
      'install_start registry.example.test/acme/demo 1.0.0 linux_amd64',
      'install_complete registry.example.test/acme/demo 1.0.0 installed unauthenticated',
    ]);
    expect(outcome).toMatchObject({ status: 'installed', lockFile: 'readonly-changed', wrote: false });
    expect(outcome.installed[0]?.dir).toBe(
      join(dir, 'data/providers/registry.example.test/acme/demo/1.0.0/linux_amd64'),
    );
    expect(readFileSync(join(dir, LOCK_FILE_NAME), 'utf8')).toBe(LOCKED_NO_HASHES);
  });

  it('readonly without a lock file: the set of providers would change, nothing written', async () => {
    const dir = moduleDir('readonly-new');
    const { outcome } = await run(dir, { readonly: true });
    expect(outcome).toMatchObject({ status: 'installed', lockFile: 'readonly-providers-changed', wrote: false });
    expect(existsSync(join(dir, LOCK_FILE_NAME))).toBe(false);
  });

  it('a provider the source does not have: a failure, no lock decision, nothing written', async () => {
    const dir = moduleDir('unknown');
    const { outcome, events } = await run(dir, {}, new MockSource([]));
    expect(events).toEqual(['install_resolving registry.example.test/acme/demo ~> 1.0 locked=-']);
    expect(outcome).toMatchObject({ status: 'failed', lockFile: undefined, wrote: false, installed: [] });
    expect(outcome.failures.map((f) => [f.phase, f.error.message])).toEqual([
      [
        'query',
        'provider registry registry.example.test does not have a provider named registry.example.test/acme/demo',
      ],
    ]);
    expect(existsSync(join(dir, LOCK_FILE_NAME))).toBe(false);
  });

  it('a lock file with errors: stops before the source is opened, its diagnostics in the outcome', async () => {
    const dir = moduleDir('broken', 'provider "registry.example.test/acme/demo" {\n');
    let opened = false;
    const { outcome, events } = await run(dir, {
      source: () => {
        opened = true;
        return Promise.resolve(undefined);
      },
    });
    expect(opened).toBe(false);
    expect(events).toEqual([]);
    expect(outcome).toMatchObject({ status: 'lock-file-errors', configDiagnostics: [], lockFile: undefined });
    expect(outcome.lockFileDiagnostics.length).toBeGreaterThan(0);
    expect(
      outcome.lockFileDiagnostics.every((d) => d.severity === 'error' && d.range?.filename === LOCK_FILE_NAME),
    ).toBe(true);
  });

  it('a configuration with errors: stops before the lock file is read', async () => {
    const dir = moduleDir('invalid', 'not a lock file {', 'terraform {\n');
    const { outcome, events, source } = await run(dir);
    expect(events).toEqual([]);
    expect(source.calls).toEqual([]);
    expect(outcome).toMatchObject({ status: 'config-errors', lockFileDiagnostics: [], lockFile: undefined });
    expect(outcome.configDiagnostics.some((d) => d.severity === 'error')).toBe(true);
  });

  it('a source that cannot be opened: stops after the files are read, nothing installed', async () => {
    const dir = moduleDir('no-source', LOCKED_1_0);
    const { outcome, events } = await run(dir, { source: () => Promise.resolve(undefined) });
    expect(events).toEqual([]);
    expect(outcome).toMatchObject({ status: 'no-source', installed: [], lockFile: undefined, wrote: false });
    expect(outcome.previousLocks.size).toBe(1);
  });

  it('an interrupt once a package is in place: ABORTED thrown, the lock file not written', async () => {
    const dir = moduleDir('interrupted');
    const controller = new AbortController();
    const run = installModule(dir, {
      flavor: 'tofu',
      platform: LINUX,
      source: new MockSource(demoPackages),
      pool,
      signal: controller.signal,
      events: (e) => {
        if (e.type === 'install_complete') controller.abort();
      },
    });
    await expect(run).rejects.toMatchObject({ code: 'ABORTED' });
    expect(existsSync(join(dir, '.terraform/providers/registry.example.test/acme/demo/1.1.0/linux_amd64'))).toBe(true);
    expect(existsSync(join(dir, LOCK_FILE_NAME))).toBe(false);
  });
});
