// Issue 15: a whole monorepo locked in one process (`lock -recursive`), and a
// declared platform policy (`provkit.hcl`). provkit runs as a child process
// (bin/provkit.js) against the fake registry in another process, or against
// the filesystem mirror of mirror-fixtures/; lock files are compared byte for
// byte with what terraform 1.11.4 wrote in each root module
// (test/fixtures/recursive/: tree/, record.ts, README.md).
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  copyTree,
  FAILING_ROOT,
  FIXTURE_MIRROR,
  NOT_ROOTS,
  PLATFORMS,
  RECORDED,
  ROOTS,
  withHost,
} from '../fixtures/recursive/cases.js';
import { spawnCli, waitFor } from '../faults/support.js';
import { e2eWorkspace, requiresTf, runCli, type E2eWorkspace } from '../support/e2e.js';
import { startHost, type RemoteServer, type ServerHost } from '../support/remote/index.js';
import { fixtureProviders, makeProvider } from '../support/servers/packages.js';

let host: ServerHost;
let reg: RemoteServer;
/** OpenTofu's `packages` extension: every platform's h1: in each download response. */
let regPackages: RemoteServer;
let w: E2eWorkspace;

beforeAll(async () => {
  host = await startHost();
  reg = await host.registry({ providers: await fixtureProviders() });
  regPackages = await host.registry({
    providers: [await makeProvider('acme', 'pkgs', ['1.0.0'], ['linux_amd64', 'darwin_arm64', 'windows_amd64'])],
    packagesExtension: true,
  });
  // Both registries' certificates come from the same test CA.
  w = e2eWorkspace(reg.caPath);
});
afterAll(async () => {
  await host.close();
  w.remove();
});

const platformFlags = PLATFORMS.map((p) => `-platform=${p}`);
const fsMirror = `-fs-mirror=${FIXTURE_MIRROR}`;

interface JsonLine {
  type: string;
  root?: string;
  [k: string]: unknown;
}
const jsonLines = (stdout: string): JsonLine[] =>
  stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as JsonLine);

/** Each root's lock file (undefined when there is none). */
function locks(dir: string, roots: readonly string[] = ROOTS): Record<string, string | undefined> {
  return Object.fromEntries(
    roots.map((r) => [
      r,
      existsSync(join(dir, r, '.terraform.lock.hcl'))
        ? readFileSync(join(dir, r, '.terraform.lock.hcl'), 'utf8')
        : undefined,
    ]),
  );
}

/** What terraform left in each root (`mode`: fs-mirror or registry), with the registry's host put in. */
function recorded(mode: 'fs-mirror' | 'registry', registryHost?: string): Record<string, string | undefined> {
  return Object.fromEntries(
    ROOTS.map((r) => {
      const p = join(RECORDED, mode, r, 'lock.hcl');
      return [
        r,
        existsSync(p)
          ? registryHost === undefined
            ? readFileSync(p, 'utf8')
            : withHost(readFileSync(p, 'utf8'), registryHost)
          : undefined,
      ];
    }),
  );
}

describe('lock -recursive finds the root modules', () => {
  it('every directory with configuration files that no other calls; not modules, .terraform/ or hidden directories', async () => {
    const dir = join(w.base, 'discovery');
    copyTree(dir);
    const r = await runCli(['-flavor=terraform', 'lock', '-recursive', '-json', fsMirror, ...platformFlags], {
      cwd: dir,
      env: w.env,
    });
    expect(r.code).toBe(1); // envs/broken
    const rooted = jsonLines(r.stdout).filter((m) => m.type === 'lock_root');
    expect(rooted.map((m) => m.root)).toEqual([...ROOTS]);
    for (const d of NOT_ROOTS) expect(existsSync(join(dir, d, '.terraform.lock.hcl'))).toBe(false);
    expect(w.tmpLeftovers()).toEqual([]);
    expect(w.leftovers()).toEqual([]);
  });

  it('.tofu files make a root for OpenTofu, not for Terraform', async () => {
    const dir = w.project('discovery-tofu', { 'a/main.tf': requiresTf({}), 'b/main.tofu': requiresTf({}) });
    const tofu = await runCli(['lock', '-recursive', '-json', '-check', fsMirror], { cwd: dir, env: w.env });
    const tf = await runCli(['-flavor=terraform', 'lock', '-recursive', '-json', '-check', fsMirror], {
      cwd: dir,
      env: w.env,
    });
    const roots = (stdout: string): unknown[] =>
      jsonLines(stdout)
        .filter((m) => m.type === 'lock_root')
        .map((m) => m.root);
    expect(roots(tofu.stdout)).toEqual(['a', 'b']);
    expect(roots(tf.stdout)).toEqual(['a']);
  });
});

describe('each root gets exactly what terraform providers lock writes there', () => {
  it('from a filesystem mirror: byte-identical lock files; the failing root is named, keeps its file, and exits 1', async () => {
    const dir = join(w.base, 'fs-mirror');
    copyTree(dir);
    const brokenBefore = readFileSync(join(dir, FAILING_ROOT, '.terraform.lock.hcl'));
    const r = await runCli(['-flavor=terraform', 'lock', '-recursive', fsMirror, ...platformFlags], {
      cwd: dir,
      env: w.env,
    });
    expect(r.code).toBe(1);
    const expected = recorded('fs-mirror');
    expect(locks(dir)).toEqual(expected);
    expect(readFileSync(join(dir, FAILING_ROOT, '.terraform.lock.hcl'))).toEqual(brokenBefore);
    expect(readFileSync(join(RECORDED, 'fs-mirror', FAILING_ROOT, 'exit'), 'utf8')).toBe('1\n');
    // The failure names the root and says what terraform says.
    expect(r.stdout).toContain(`- ${FAILING_ROOT}: failed`);
    expect(r.stderr).toContain(`on ${FAILING_ROOT}:`);
    expect(r.stderr.replace(/[│\s]+/g, ' ')).toContain(
      'registry.example.test/acme/demo: no available releases match the given constraints >= 9.0.0',
    );
    for (const root of ROOTS.filter((x) => x !== FAILING_ROOT))
      expect(r.stdout).toMatch(new RegExp(`^- ${root}: lock file (created|updated) `, 'm'));
    expect(r.stdout).toMatch(
      /^Locked 6 root modules \(1 updated, 4 created, 1 failed\): 2 providers, 6 unique packages \(0 downloaded, 6 from the mirror, 0 from the hash store\)/m,
    );
    expect(w.tmpLeftovers()).toEqual([]);
    expect(w.leftovers()).toEqual([]);
  });

  it('from the registry: byte-identical lock files, and every unique package fetched once (the request log)', async () => {
    const dir = join(w.base, 'registry');
    copyTree(dir, reg.host);
    await reg.mark();
    const r = await runCli(['-flavor=terraform', 'lock', '-recursive', ...platformFlags], { cwd: dir, env: w.env });
    expect(r.code).toBe(1);
    expect(locks(dir)).toEqual(recorded('registry', reg.host));
    const log = await reg.log();
    const count = (path: string): number => log.filter((q) => q.pathname === path).length;
    // demo 1.0.0 (envs/dev, envs/prod's lock), demo 1.1.0 (envs/stage's module), tools 0.3.0: 3 versions × 2 platforms.
    const packages = [
      ['demo', '1.0.0'],
      ['demo', '1.1.0'],
      ['tools', '0.3.0'],
    ] as const;
    for (const [type, version] of packages) {
      for (const platform of PLATFORMS) {
        expect({
          type,
          version,
          platform,
          archive: count(await reg.path('archive', 'acme', type, version, platform)),
        }).toEqual({ type, version, platform, archive: 1 });
        expect({
          type,
          version,
          platform,
          download: count(await reg.path('download', 'acme', type, version, platform)),
        }).toEqual({ type, version, platform, download: 1 });
      }
      // SHA256SUMS and its signature serve every platform of a version: once each.
      expect(count(await reg.path('shasums', 'acme', type, version))).toBe(1);
      expect(count(await reg.path('signature', 'acme', type, version))).toBe(1);
    }
    for (const type of ['demo', 'tools']) expect(count(await reg.path('versions', 'acme', type))).toBe(1);
    const archives = log.filter((q) => q.pathname.endsWith('.zip'));
    expect(archives).toHaveLength(6);
    expect(r.stdout).toMatch(/6 unique packages \(6 downloaded, 0 from the hash store\)/);
    expect(w.tmpLeftovers()).toEqual([]);
    expect(w.leftovers()).toEqual([]);
  });

  it('with the hash store filled, nothing is downloaded and the lock files are the same', async () => {
    const dir = join(w.base, 'registry-store');
    copyTree(dir, reg.host);
    const env = { ...w.env, PROVKIT_HASH_STORE: join(w.base, 'store-registry') };
    const first = await runCli(['-flavor=terraform', 'lock', '-recursive', ...platformFlags], { cwd: dir, env });
    expect(first.code).toBe(1);
    copyTree(join(w.base, 'registry-store-2'), reg.host);
    await reg.mark();
    const second = await runCli(['-flavor=terraform', 'lock', '-recursive', ...platformFlags], {
      cwd: join(w.base, 'registry-store-2'),
      env,
    });
    expect(second.code).toBe(1);
    expect(locks(join(w.base, 'registry-store-2'))).toEqual(recorded('registry', reg.host));
    expect((await reg.log()).filter((q) => q.pathname.endsWith('.zip'))).toEqual([]);
    expect(second.stdout).toMatch(/6 unique packages \(0 downloaded, 6 from the hash store\)/);
  });
});

describe('a package that fails fails only the roots that need it', () => {
  it('a tampered archive: its root is named and keeps no lock file, the others are written, exit 1', async () => {
    const dir = w.project('bad-package', {
      'a/main.tf': requiresTf({ demo: `${reg.host}/acme/demo@1.0.0`, tools: `${reg.host}/acme/tools` }),
      'b/main.tf': requiresTf({ tools: `${reg.host}/acme/tools` }),
    });
    const alone = w.project('bad-package-alone', { 'main.tf': requiresTf({ tools: `${reg.host}/acme/tools` }) });
    expect((await runCli(['lock', '-platform=linux_amd64'], { cwd: alone, env: w.env })).code).toBe(0);
    await reg.clearFaults();
    await reg.setFault(await reg.path('archive', 'acme', 'demo', '1.0.0', 'linux_amd64'), {
      kind: 'tamper',
      times: 20,
    });
    try {
      const r = await runCli(['lock', '-recursive', '-platform=linux_amd64'], { cwd: dir, env: w.env });
      expect(r.code, r.stdout + r.stderr).toBe(1);
      expect(r.stdout).toContain('- a: failed');
      expect(r.stdout).toMatch(/^- b: lock file created /m);
      expect(r.stderr).toContain('on a:');
      expect(r.stderr.replace(/[│\s]+/g, ' ')).toContain(`${reg.host}/acme/demo`);
      expect(r.stderr).toContain('checksum');
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(existsSync(join(dir, 'a/.terraform.lock.hcl'))).toBe(false);
      expect(readFileSync(join(dir, 'b/.terraform.lock.hcl'), 'utf8')).toBe(
        readFileSync(join(alone, '.terraform.lock.hcl'), 'utf8'),
      );
      expect(w.tmpLeftovers()).toEqual([]);
      expect(w.leftovers()).toEqual([]);
    } finally {
      await reg.clearFaults();
    }
  });
});

describe('lock -recursive -check', () => {
  const good = ROOTS.filter((r) => r !== FAILING_ROOT);
  const goodTree = (name: string): string => {
    const dir = join(w.base, name);
    copyTree(dir);
    rmSync(join(dir, FAILING_ROOT), { recursive: true });
    return dir;
  };

  it('exits 0 and writes nothing when every lock file is what lock would write', async () => {
    const dir = goodTree('check-clean');
    expect(
      (await runCli(['-flavor=terraform', 'lock', '-recursive', fsMirror, ...platformFlags], { cwd: dir, env: w.env }))
        .code,
    ).toBe(0);
    const before = locks(dir, good);
    const mtimes = good.map((r) => statSync(join(dir, r, '.terraform.lock.hcl')).mtimeMs);
    const r = await runCli(['-flavor=terraform', 'lock', '-recursive', '-check', fsMirror, ...platformFlags], {
      cwd: dir,
      env: w.env,
    });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(locks(dir, good)).toEqual(before);
    expect(good.map((r2) => statSync(join(dir, r2, '.terraform.lock.hcl')).mtimeMs)).toEqual(mtimes);
    expect(r.stdout).toMatch(/^Checked 5 root modules \(5 unchanged\)/m);
    expect(w.tmpLeftovers()).toEqual([]);
    expect(w.leftovers()).toEqual([]);
  });

  it('exits 2 naming each root and what would change, and writes nothing', async () => {
    const dir = goodTree('check-dirty');
    expect(
      (await runCli(['-flavor=terraform', 'lock', '-recursive', fsMirror, ...platformFlags], { cwd: dir, env: w.env }))
        .code,
    ).toBe(0);
    rmSync(join(dir, 'app/.terraform.lock.hcl'));
    const before = locks(dir, good);
    const r = await runCli(
      ['-flavor=terraform', 'lock', '-recursive', '-check', fsMirror, ...platformFlags, '-platform=windows_amd64'],
      { cwd: dir, env: w.env },
    );
    expect(r.code).toBe(2);
    expect(locks(dir, good)).toEqual(before);
    expect(r.stdout).toContain('- app: lock file would change');
    expect(r.stdout).toContain('    no .terraform.lock.hcl yet: a new one with 1 provider');
    expect(r.stdout).toContain('- envs/dev/sub: lock file would change');
    expect(r.stdout).toContain('    registry.example.test/acme/tools: 1 hash added (windows_amd64)');
    expect(r.stdout).toMatch(/^Checked 5 root modules \(5 would change\)/m);
    // -json names them too.
    const j = await runCli(
      [
        '-flavor=terraform',
        'lock',
        '-recursive',
        '-check',
        '-json',
        fsMirror,
        ...platformFlags,
        '-platform=windows_amd64',
      ],
      { cwd: dir, env: w.env },
    );
    expect(j.code).toBe(2);
    const prod = jsonLines(j.stdout).find((m) => m.type === 'lock_root' && m.root === 'envs/prod');
    expect(prod?.['status']).toBe('would_change');
    expect(prod?.['changes']).toEqual([
      'registry.example.test/acme/demo: 1 hash added (windows_amd64)',
      'registry.example.test/acme/tools: 1 hash added (windows_amd64)',
    ]);
    expect(locks(dir, good)).toEqual(before);
  });

  it('a single lock -check: 0 when up to date, 2 saying what would change, 1 on an error; never writes', async () => {
    const dir = w.project('check-single', { 'main.tf': requiresTf({ tools: 'registry.example.test/acme/tools' }) });
    const lockFile = join(dir, '.terraform.lock.hcl');
    const missing = await runCli(['-flavor=terraform', 'lock', '-check', fsMirror, '-platform=linux_amd64'], {
      cwd: dir,
      env: w.env,
    });
    expect(missing.code).toBe(2);
    expect(missing.stdout).toContain(
      '.terraform.lock.hcl would change:\n  no .terraform.lock.hcl yet: a new one with 1 provider',
    );
    expect(existsSync(lockFile)).toBe(false);
    expect(
      (await runCli(['-flavor=terraform', 'lock', fsMirror, '-platform=linux_amd64'], { cwd: dir, env: w.env })).code,
    ).toBe(0);
    const before = readFileSync(lockFile, 'utf8');
    const mtime = statSync(lockFile).mtimeMs;
    const clean = await runCli(['-flavor=terraform', 'lock', '-check', fsMirror, '-platform=linux_amd64'], {
      cwd: dir,
      env: w.env,
    });
    expect(clean.stderr).toBe('');
    expect(clean.code).toBe(0);
    expect(clean.stdout).toContain('.terraform.lock.hcl is up to date.');
    const more = await runCli(
      ['-flavor=terraform', 'lock', '-check', '-json', fsMirror, '-platform=linux_amd64', '-platform=darwin_arm64'],
      { cwd: dir, env: w.env },
    );
    expect(more.code).toBe(2);
    expect(jsonLines(more.stdout).find((m) => m.type === 'summary')).toMatchObject({
      changed: true,
      changes: ['registry.example.test/acme/tools: 1 hash added (darwin_arm64)'],
    });
    const bad = await runCli(['-flavor=terraform', 'lock', '-check', fsMirror, '-platform=linux_amd64'], {
      cwd: w.project('check-single-bad', { 'main.tf': requiresTf({ demo: 'registry.example.test/acme/demo@>= 9.0' }) }),
      env: w.env,
    });
    expect(bad.code).toBe(1);
    expect(readFileSync(lockFile, 'utf8')).toBe(before);
    expect(statSync(lockFile).mtimeMs).toBe(mtime);
    expect(w.tmpLeftovers()).toEqual([]);
    expect(w.leftovers()).toEqual([]);
  });

  it('exits 1 on an error', async () => {
    const dir = join(w.base, 'check-error');
    copyTree(dir);
    const r = await runCli(['-flavor=terraform', 'lock', '-recursive', '-check', fsMirror, ...platformFlags], {
      cwd: dir,
      env: w.env,
    });
    expect(r.code).toBe(1);
    for (const root of good) expect(existsSync(join(dir, root, '.terraform.lock.hcl'))).toBe(root === 'envs/prod');
  });
});

describe('-json names the root of every message about one', () => {
  it('lock_root, platforms, provider_selected, lock_hashes and diagnostics carry root; package messages do not', async () => {
    const dir = join(w.base, 'json');
    copyTree(dir, reg.host);
    const r = await runCli(['-flavor=terraform', 'lock', '-recursive', '-json', ...platformFlags], {
      cwd: dir,
      env: w.env,
    });
    expect(r.code).toBe(1);
    const lines = jsonLines(r.stdout);
    const byType = (t: string): JsonLine[] => lines.filter((m) => m.type === t);
    for (const t of ['lock_root', 'platforms', 'provider_selected', 'lock_hashes']) {
      expect(byType(t).length).toBeGreaterThan(0);
      for (const m of byType(t)) expect(ROOTS as readonly unknown[]).toContain(m.root);
    }
    const diagnostics = byType('diagnostic');
    expect(diagnostics.map((m) => m.root)).toEqual([FAILING_ROOT]);
    for (const t of ['package_fetch_start', 'package_fetch_complete']) {
      expect(byType(t)).toHaveLength(6);
      for (const m of byType(t)) expect(m.root).toBeUndefined();
    }
    const summary = byType('summary');
    expect(summary).toHaveLength(1);
    expect(summary[0]).toMatchObject({
      roots: 6,
      created: 4,
      updated: 1,
      failed: 1,
      providers: 2,
      packages: 6,
      downloaded: 6,
      hash_store: 0,
    });
    // Paths relative to the working directory.
    expect(byType('lock_root').map((m) => m.root)).toEqual([...ROOTS]);
  });
});

describe('the platform policy, provkit.hcl', () => {
  const h1Count = (lock: string | undefined): number =>
    (lock ?? '').split('\n').filter((l) => l.includes('"h1:')).length;

  it('the nearest provkit.hcl applies to each root (two levels); -platform overrides both', async () => {
    const dir = join(w.base, 'policy');
    copyTree(dir);
    rmSync(join(dir, FAILING_ROOT), { recursive: true });
    writeFileSync(join(dir, 'provkit.hcl'), 'platforms = ["linux_amd64"]\n');
    writeFileSync(
      join(dir, 'envs/provkit.hcl'),
      '# the environments also run on macs and windows\nplatforms = [\n  "darwin_arm64",\n  "windows_amd64",\n]\n',
    );
    const r = await runCli(['-flavor=terraform', 'lock', '-recursive', '-json', fsMirror], { cwd: dir, env: w.env });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const roots = jsonLines(r.stdout).filter((m) => m.type === 'lock_root');
    const platformsOf = Object.fromEntries(
      roots.map((m) => [m.root, [m['platforms'], m['platforms_origin'], m['policy_file']]]),
    );
    expect(platformsOf).toEqual({
      app: [['linux_amd64'], 'policy', 'provkit.hcl'],
      'envs/dev': [['darwin_arm64', 'windows_amd64'], 'policy', 'envs/provkit.hcl'],
      'envs/dev/sub': [['darwin_arm64', 'windows_amd64'], 'policy', 'envs/provkit.hcl'],
      'envs/prod': [['darwin_arm64', 'windows_amd64'], 'policy', 'envs/provkit.hcl'],
      'envs/stage': [['darwin_arm64', 'windows_amd64'], 'policy', 'envs/provkit.hcl'],
    });
    const after = locks(dir, ['app', 'envs/dev', 'envs/stage']);
    expect(h1Count(after['app'])).toBe(1);
    expect(h1Count(after['envs/dev'])).toBe(2);
    expect(h1Count(after['envs/stage'])).toBe(4);

    const flags = await runCli(
      ['-flavor=terraform', 'lock', '-recursive', '-json', '-check', fsMirror, '-platform=linux_arm64'],
      { cwd: dir, env: w.env },
    );
    const flagged = jsonLines(flags.stdout).filter((m) => m.type === 'lock_root');
    for (const m of flagged) expect([m['platforms'], m['platforms_origin']]).toEqual([['linux_arm64'], 'flags']);
  });

  it('a single lock uses provkit.hcl in its directory, and says so', async () => {
    const dir = w.project('policy-single', {
      'main.tf': requiresTf({ tools: 'registry.example.test/acme/tools' }),
      'provkit.hcl': 'platforms = ["windows_amd64", "linux_arm64"]\n',
    });
    const r = await runCli(['-flavor=terraform', 'lock', fsMirror], { cwd: dir, env: w.env });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Platforms windows_amd64, linux_arm64 from provkit.hcl.');
    expect(r.stdout).toContain('- Obtained registry.example.test/acme/tools checksums for windows_amd64;');
    expect(r.stdout).toContain('- Obtained registry.example.test/acme/tools checksums for linux_arm64;');
    expect(h1Count(readFileSync(join(dir, '.terraform.lock.hcl'), 'utf8'))).toBe(2);
  });

  it('an unknown attribute or a bad platform is an error at file:line:col; nothing is fetched or written', async () => {
    const dir = join(w.base, 'policy-bad');
    copyTree(dir);
    writeFileSync(join(dir, 'envs/provkit.hcl'), 'platforms = ["linux_amd64", "linux-arm64"]\narch = "x"\n');
    const before = locks(dir);
    const r = await runCli(['-flavor=terraform', 'lock', '-recursive', fsMirror], { cwd: dir, env: w.env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('Error: Unsupported argument');
    expect(r.stderr).toContain('on envs/provkit.hcl line 2:');
    expect(r.stderr).toContain('An argument named "arch" is not expected here.');
    expect(locks(dir)).toEqual(before);
    writeFileSync(join(dir, 'envs/provkit.hcl'), 'platforms = ["linux_amd64", "linux-arm64"]\n');
    const r2 = await runCli(['-flavor=terraform', 'lock', '-recursive', fsMirror], { cwd: dir, env: w.env });
    expect(r2.code).toBe(1);
    expect(r2.stderr).toContain('Error: Invalid target platform');
    // As terraform shows a configuration diagnostic: the file, the line, the source line.
    expect(r2.stderr).toContain('on envs/provkit.hcl line 1:\n   1: platforms = ["linux_amd64", "linux-arm64"]\n');
    expect(locks(dir)).toEqual(before);
    expect(w.tmpLeftovers()).toEqual([]);
    expect(w.leftovers()).toEqual([]);
  });

  it('mirror and bundle create use provkit.hcl', async () => {
    const dir = w.project('policy-mirror', {
      'main.tf': requiresTf({ tools: 'registry.example.test/acme/tools' }),
      'provkit.hcl': 'platforms = ["darwin_arm64"]\n',
    });
    const m = await runCli(['-flavor=terraform', 'mirror', fsMirror, 'out'], { cwd: dir, env: w.env });
    expect(m.code).toBe(0);
    expect(
      existsSync(join(dir, 'out/registry.example.test/acme/tools/terraform-provider-tools_0.3.0_darwin_arm64.zip')),
    ).toBe(true);
    expect(
      existsSync(join(dir, 'out/registry.example.test/acme/tools/terraform-provider-tools_0.3.0_linux_amd64.zip')),
    ).toBe(false);
    const b = await runCli(['-flavor=terraform', 'bundle', 'create', '-json', fsMirror, 'b.tar'], {
      cwd: dir,
      env: w.env,
    });
    expect(b.code).toBe(0);
    const listing = readFileSync(join(dir, 'b.tar')).toString('latin1');
    expect(listing).toContain('terraform-provider-tools_0.3.0_darwin_arm64.zip');
    expect(listing).not.toContain('terraform-provider-tools_0.3.0_linux_amd64.zip');
  });
});

describe('without flags or a policy, a lock keeps the platforms it covers', () => {
  const lockedPlatforms = (lock: string): number => lock.split('\n').filter((l) => l.includes('"h1:')).length;

  it("inferred through the hash store: the same lock, this machine's platform not added", async () => {
    const env = { ...w.env, PROVKIT_HASH_STORE: join(w.base, 'store-infer') };
    const dir = w.project('infer-store', { 'main.tf': requiresTf({ tools: `${reg.host}/acme/tools` }) });
    expect((await runCli(['lock', '-platform=darwin_arm64', '-platform=windows_amd64'], { cwd: dir, env })).code).toBe(
      0,
    );
    const before = readFileSync(join(dir, '.terraform.lock.hcl'), 'utf8');
    expect(lockedPlatforms(before)).toBe(2);
    const r = await runCli(['lock'], { cwd: dir, env });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      'Platforms darwin_arm64, windows_amd64 inferred from the existing lock file (by the hash store).',
    );
    expect(readFileSync(join(dir, '.terraform.lock.hcl'), 'utf8')).toBe(before);
    // And per root, with -recursive.
    const rec = await runCli(['lock', '-recursive', '-json', '-check'], { cwd: dir, env });
    expect(rec.code).toBe(0);
    const root = jsonLines(rec.stdout).find((m) => m.type === 'lock_root');
    // The working directory itself is the root: `.`.
    expect([root?.root, root?.['platforms'], root?.['platforms_origin'], root?.['platforms_via']]).toEqual([
      '.',
      ['darwin_arm64', 'windows_amd64'],
      'inferred',
      ['hash store'],
    ]);
  });

  it("inferred through the registry's per-platform hashes (OpenTofu packages extension), no hash store", async () => {
    const dir = w.project('infer-registry', { 'main.tf': requiresTf({ pkgs: `${regPackages.host}/acme/pkgs` }) });
    expect(
      (await runCli(['lock', '-platform=darwin_arm64', '-platform=windows_amd64'], { cwd: dir, env: w.env })).code,
    ).toBe(0);
    const before = readFileSync(join(dir, '.terraform.lock.hcl'), 'utf8');
    await regPackages.mark();
    const r = await runCli(['lock'], { cwd: dir, env: w.env });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      'Platforms darwin_arm64, windows_amd64 inferred from the existing lock file (by the registry).',
    );
    expect(readFileSync(join(dir, '.terraform.lock.hcl'), 'utf8')).toBe(before);
    // No package was downloaded to find out (only the two locked ones, to lock them).
    const zips = (await regPackages.log())
      .filter((q) => q.pathname.endsWith('.zip'))
      .map((q) => q.pathname.replace(/.*\//, ''));
    expect(zips.sort()).toEqual([
      'terraform-provider-pkgs_1.0.0_darwin_arm64.zip',
      'terraform-provider-pkgs_1.0.0_windows_amd64.zip',
    ]);
  });

  it("inferred through a filesystem mirror's packages", async () => {
    const dir = w.project('infer-mirror', { 'main.tf': requiresTf({ tools: 'registry.example.test/acme/tools' }) });
    expect(
      (
        await runCli(['-flavor=terraform', 'lock', fsMirror, '-platform=linux_arm64', '-platform=windows_amd64'], {
          cwd: dir,
          env: w.env,
        })
      ).code,
    ).toBe(0);
    const before = readFileSync(join(dir, '.terraform.lock.hcl'), 'utf8');
    const r = await runCli(['-flavor=terraform', 'lock', fsMirror], { cwd: dir, env: w.env });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      'Platforms linux_arm64, windows_amd64 inferred from the existing lock file (by the filesystem mirror).',
    );
    expect(readFileSync(join(dir, '.terraform.lock.hcl'), 'utf8')).toBe(before);
  });

  it("nothing to infer from: this machine's platform, as before", async () => {
    const dir = w.project('infer-none', { 'main.tf': requiresTf({ tools: 'registry.example.test/acme/tools' }) });
    const r = await runCli(['-flavor=terraform', 'lock', fsMirror], { cwd: dir, env: w.env });
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain('Platforms');
    expect(lockedPlatforms(readFileSync(join(dir, '.terraform.lock.hcl'), 'utf8'))).toBe(1);
  });
});

describe("verify reports roots whose lock does not cover the policy's platforms", () => {
  it('single root and -recursive; a lock made under the policy passes', async () => {
    const env = { ...w.env, PROVKIT_HASH_STORE: join(w.base, 'store-verify') };
    const dir = w.project('verify-policy', {
      'a/main.tf': requiresTf({ tools: `${reg.host}/acme/tools` }),
      'b/main.tf': requiresTf({ tools: `${reg.host}/acme/tools` }),
    });
    // Locked (and the store filled) for linux_amd64 only.
    expect((await runCli(['lock', '-recursive', '-platform=linux_amd64'], { cwd: dir, env })).code).toBe(0);
    writeFileSync(join(dir, 'provkit.hcl'), 'platforms = ["linux_amd64", "darwin_arm64"]\n');
    // The store knows darwin_arm64's package from another run.
    const other = w.project('verify-policy-other', { 'main.tf': requiresTf({ tools: `${reg.host}/acme/tools` }) });
    expect((await runCli(['lock', '-platform=darwin_arm64'], { cwd: other, env })).code).toBe(0);

    const one = await runCli(['verify'], { cwd: join(dir, 'a'), env });
    // provkit.hcl is above a/: a single verify in a/ only looks in a/.
    expect(one.code).toBe(0);
    const rec = await runCli(['verify', '-recursive'], { cwd: dir, env });
    expect(rec.code).toBe(1);
    expect(rec.stdout).toContain('- a: 1 problem');
    expect(rec.stdout).toContain('- b: 1 problem');
    expect(rec.stdout).toContain(
      `${reg.host}/acme/tools 0.3.0 darwin_arm64: the lock file does not cover darwin_arm64, a platform of provkit.hcl`,
    );
    const j = await runCli(['verify', '-recursive', '-json'], { cwd: dir, env });
    const problems = jsonLines(j.stdout).filter((m) => m.type === 'verify_problem');
    expect(problems.map((m) => [m.root, m['code'], m['platform']])).toEqual([
      ['a', 'LOCK_MISSING_PLATFORM', 'darwin_arm64'],
      ['b', 'LOCK_MISSING_PLATFORM', 'darwin_arm64'],
    ]);

    expect((await runCli(['lock', '-recursive'], { cwd: dir, env })).code).toBe(0);
    const ok = await runCli(['verify', '-recursive'], { cwd: dir, env });
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('2 root modules verified: no problems.');
  });

  it("verify -mirror checks the policy's platforms instead of every platform the mirror has", async () => {
    const dir = w.project('verify-mirror-policy', {
      'main.tf': requiresTf({ tools: 'registry.example.test/acme/tools' }),
    });
    expect(
      (await runCli(['-flavor=terraform', 'lock', fsMirror, '-platform=linux_amd64'], { cwd: dir, env: w.env })).code,
    ).toBe(0);
    const verify = (): Promise<Awaited<ReturnType<typeof runCli>>> =>
      runCli(['-flavor=terraform', 'verify', '-json', `-mirror=${FIXTURE_MIRROR}`], { cwd: dir, env: w.env });
    const missing = (stdout: string): unknown[] =>
      jsonLines(stdout)
        .filter((m) => m.type === 'verify_problem')
        .map((m) => m['platform'])
        .sort();
    // No policy: every platform the mirror has (5) must be covered.
    const none = await verify();
    expect(none.code).toBe(1);
    expect(missing(none.stdout)).toEqual(['darwin_amd64', 'darwin_arm64', 'linux_arm64', 'windows_amd64']);
    writeFileSync(join(dir, 'provkit.hcl'), 'platforms = ["linux_amd64"]\n');
    const one = await verify();
    expect(one.stderr).toBe('');
    expect(one.code).toBe(0);
    writeFileSync(join(dir, 'provkit.hcl'), 'platforms = ["linux_amd64", "darwin_arm64"]\n');
    const two = await verify();
    expect(two.code).toBe(1);
    expect(missing(two.stdout)).toEqual(['darwin_arm64']);
    // Locked under the policy, it passes.
    expect((await runCli(['-flavor=terraform', 'lock', fsMirror], { cwd: dir, env: w.env })).code).toBe(0);
    expect((await verify()).code).toBe(0);
  });

  it('without the hash store, a lock with fewer h1: hashes than the policy has platforms is reported', async () => {
    const dir = w.project('verify-count', { 'main.tf': requiresTf({ tools: 'registry.example.test/acme/tools' }) });
    expect(
      (await runCli(['-flavor=terraform', 'lock', fsMirror, '-platform=linux_amd64'], { cwd: dir, env: w.env })).code,
    ).toBe(0);
    writeFileSync(join(dir, 'provkit.hcl'), 'platforms = ["linux_amd64", "darwin_arm64"]\n');
    const r = await runCli(['-flavor=terraform', 'verify'], { cwd: dir, env: w.env });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      'registry.example.test/acme/tools 0.3.0: the lock file cannot cover every platform of provkit.hcl: 2 platforms (linux_amd64, darwin_arm64) are left for 1 h1: hash',
    );
  });
});

describe('an interrupted lock -recursive says which lock files it had written', () => {
  it('roots done before the signal keep their (whole) lock files and are counted, though an earlier root was still at work', async () => {
    // `a` waits on an archive that never comes; `b` and `c` finish and are
    // written as soon as they are done, before `a` is reported (roots are
    // reported in order).
    const dir = w.project('interrupt', {
      'a/main.tf': requiresTf({ demo: `${reg.host}/acme/demo@1.0.0` }),
      'b/main.tf': requiresTf({ tools: `${reg.host}/acme/tools` }),
      'c/main.tf': requiresTf({ tools: `${reg.host}/acme/tools` }),
    });
    await reg.clearFaults();
    await reg.setFault(await reg.path('archive', 'acme', 'demo', '1.0.0', 'linux_amd64'), {
      kind: 'stall',
      phase: 'headers',
    });
    try {
      const run = spawnCli(['lock', '-recursive', '-platform=linux_amd64'], dir, w.env);
      const written = (): boolean =>
        existsSync(join(dir, 'b/.terraform.lock.hcl')) && existsSync(join(dir, 'c/.terraform.lock.hcl'));
      await waitFor(written, 30_000, 'the lock files of b and c').catch((err: unknown) => {
        run.child.kill('SIGKILL');
        throw new Error(`${String(err)}\n${run.output()}`);
      });
      run.child.kill('SIGINT');
      const r = await run.done;
      expect(r.code, r.stdout + r.stderr).toBe(130);
      expect(r.stderr).toContain('Error: provkit lock was interrupted by SIGINT; the lock files');
      expect(r.stderr).toContain(
        'the lock files of 2 root modules were written before it (each whole); no other file was changed.',
      );
      expect(existsSync(join(dir, 'a/.terraform.lock.hcl'))).toBe(false);
      expect(readFileSync(join(dir, 'b/.terraform.lock.hcl'), 'utf8')).toContain(`provider "${reg.host}/acme/tools"`);
      expect(w.tmpLeftovers()).toEqual([]);
      expect(w.leftovers()).toEqual([]);
    } finally {
      await reg.clearFaults();
    }
  });
});
