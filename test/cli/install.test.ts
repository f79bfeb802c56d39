// `provkit install` end to end through the installed entry point, against the
// bundled packed filesystem mirror (mirror-fixtures/), an unpacked mirror made
// from it, and a fake network mirror. The literal expectations marked
// "terraform" are what terraform 1.11.4 did on the same inputs
// (`TF_CLI_CONFIG_FILE` with `provider_installation { filesystem_mirror { path
// = … } }`, `terraform init -backend=false`, 2026-11-21): lock files byte for
// byte, the .terraform/providers trees (names, modes, symlinks), messages.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import {
  copyFile,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  rename,
  rm,
  stat,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { hashPackageDir } from '../../src/hashing/index.js';
import { extractPackage } from '../../src/installer/extract.js';
import { startFakeNetMirror, type FakeNetMirror } from '../support/servers/net-mirror.js';
import { fixtureProviders } from '../support/servers/packages.js';
import { startFakeRegistry, type FakeRegistry } from '../support/servers/registry.js';
import { buildZip } from '../support/zip-writer.js';
import { runCli } from '../support/e2e.js';

const mirror = fileURLToPath(new URL('../../mirror-fixtures/', import.meta.url));
const HOST = 'registry.example.test';
const DEMO = `${HOST}/acme/demo/1.1.0/linux_amd64`;
const TOOLS = `${HOST}/acme/tools/0.3.0/linux_amd64`;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

// Hermetic: no CLI configuration or home-directory mirrors of the machine running the tests.
const isolated = mkdtempSync(join(tmpdir(), 'provkit-install-home-'));
const EMPTY_RC = join(isolated, 'empty.tfrc');
writeFileSync(EMPTY_RC, '');
afterAll(() => rmSync(isolated, { recursive: true, force: true }));

function run(args: string[], cwd: string, env: Record<string, string> = {}): Promise<Run> {
  return runCli(args, {
    cwd,
    env: {
      ...process.env,
      PROVKIT_FLAVOR: '',
      TF_PLUGIN_CACHE_DIR: '',
      TF_DATA_DIR: '',
      TF_CLI_CONFIG_FILE: EMPTY_RC,
      HOME: isolated,
      ...env,
    },
  });
}

/** The lock file terraform wrote after `init` from the packed mirror on linux_amd64 (terraform). */
const TF_LOCK = `# This file is maintained automatically by "terraform init".
# Manual edits may be lost in future updates.

provider "registry.example.test/acme/demo" {
  version     = "1.1.0"
  constraints = "~> 1.0"
  hashes = [
    "h1:MqUhklRgQ94tJsCySf+PtIviV4lB/gSgPoVDcfG3FM8=",
  ]
}

provider "registry.example.test/acme/tools" {
  version     = "0.3.0"
  constraints = ">= 0.3.0"
  hashes = [
    "h1:+rMvOBnltZibZhqFf0qTphvHYLgehGCz2h6T9UKJcV4=",
  ]
}
`;

/** A lock holding only made-up zh: hashes (terraform), and what terraform made of it installing from the unpacked mirror. */
const ZH_ONLY_LOCK = `# This file is maintained automatically by "terraform init".
# Manual edits may be lost in future updates.

provider "registry.example.test/acme/demo" {
  version     = "1.1.0"
  constraints = "~> 1.0"
  hashes = [
    "zh:0000000000000000000000000000000000000000000000000000000000000000",
  ]
}

provider "registry.example.test/acme/tools" {
  version     = "0.3.0"
  constraints = ">= 0.3.0"
  hashes = [
    "zh:1111111111111111111111111111111111111111111111111111111111111111",
  ]
}
`;
const ZH_ONLY_LOCK_AFTER_INIT = `# This file is maintained automatically by "terraform init".
# Manual edits may be lost in future updates.

provider "registry.example.test/acme/demo" {
  version     = "1.1.0"
  constraints = "~> 1.0"
  hashes = [
    "h1:MqUhklRgQ94tJsCySf+PtIviV4lB/gSgPoVDcfG3FM8=",
    "zh:0000000000000000000000000000000000000000000000000000000000000000",
  ]
}

provider "registry.example.test/acme/tools" {
  version     = "0.3.0"
  constraints = ">= 0.3.0"
  hashes = [
    "h1:+rMvOBnltZibZhqFf0qTphvHYLgehGCz2h6T9UKJcV4=",
    "zh:1111111111111111111111111111111111111111111111111111111111111111",
  ]
}
`;

/**
 * `find .terraform -exec stat -c '%a %F %n'` after terraform's init from the
 * packed mirror (terraform), with the SHA-256 of each file's content.
 */
const TF_TREE = [
  '755 d .terraform',
  '755 d .terraform/providers',
  `755 d .terraform/providers/${HOST}`,
  `755 d .terraform/providers/${HOST}/acme`,
  `755 d .terraform/providers/${HOST}/acme/demo`,
  `755 d .terraform/providers/${HOST}/acme/demo/1.1.0`,
  `755 d .terraform/providers/${DEMO}`,
  `644 f .terraform/providers/${DEMO}/LICENSE`,
  `644 f .terraform/providers/${DEMO}/README.md`,
  `755 f .terraform/providers/${DEMO}/terraform-provider-demo_v1.1.0`,
  `755 d .terraform/providers/${HOST}/acme/tools`,
  `755 d .terraform/providers/${HOST}/acme/tools/0.3.0`,
  `755 d .terraform/providers/${TOOLS}`,
  `644 f .terraform/providers/${TOOLS}/LICENSE`,
  `644 f .terraform/providers/${TOOLS}/README.md`,
  `755 f .terraform/providers/${TOOLS}/terraform-provider-tools_v0.3.0`,
].sort();

/** Lists `dir` recursively as `mode kind path` (kinds: d, f, l -> target), paths relative to `base`. */
async function tree(base: string, rel = '.terraform'): Promise<string[]> {
  const out: string[] = [];
  const st = await lstat(join(base, rel));
  const mode = (st.mode & 0o777).toString(8);
  if (st.isSymbolicLink()) return [`l ${rel} -> ${await readlink(join(base, rel))}`];
  if (!st.isDirectory()) return [`${mode} f ${rel}`];
  out.push(`${mode} d ${rel}`);
  for (const name of await readdir(join(base, rel))) out.push(...(await tree(base, `${rel}/${name}`)));
  return out.sort();
}

async function sha256(path: string): Promise<string> {
  return createHash('sha256')
    .update(await readFile(path))
    .digest('hex');
}

let dir: string;
let scratch: string;
beforeEach(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'provkit-install-cli-'));
  dir = join(scratch, 'work');
  await mkdir(dir);
  await copyFile(join(mirror, 'config/main.tf'), join(dir, 'main.tf'));
});
afterEach(() => rm(scratch, { recursive: true, force: true }));

/** An unpacked filesystem mirror of the demo packages (linux_amd64), extracted as the reference extracts. */
async function unpackedMirror(): Promise<string> {
  const base = join(scratch, 'unpacked');
  for (const [type, version] of [
    ['demo', '1.1.0'],
    ['tools', '0.3.0'],
  ] as const) {
    await extractPackage(
      join(mirror, HOST, 'acme', type, `terraform-provider-${type}_${version}_linux_amd64.zip`),
      join(base, HOST, 'acme', type, version, 'linux_amd64'),
    );
  }
  return base;
}

const lockPath = (): string => join(dir, '.terraform.lock.hcl');

/** Text with its line breaks and runs of spaces as single spaces (diagnostics are wrapped to the width). */
const flat = (s: string): string => s.replace(/\s+/g, ' ');

describe('provkit install -fs-mirror (packed)', () => {
  it('installs what terraform installs and writes the lock file terraform writes, byte for byte', async () => {
    const r = await run(['-flavor=terraform', 'install', `-fs-mirror=${mirror}`, '-platform=linux_amd64'], dir);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(await readFile(lockPath(), 'utf8')).toBe(TF_LOCK);
    expect((await tree(dir)).filter((l) => !l.includes('.lock'))).toEqual(TF_TREE);
    // Content: each package's HashDir is the h1 terraform recorded; the executable is the zip's.
    expect((await hashPackageDir(join(dir, '.terraform/providers', DEMO))).text).toBe(
      'h1:MqUhklRgQ94tJsCySf+PtIviV4lB/gSgPoVDcfG3FM8=',
    );
    expect((await hashPackageDir(join(dir, '.terraform/providers', TOOLS))).text).toBe(
      'h1:+rMvOBnltZibZhqFf0qTphvHYLgehGCz2h6T9UKJcV4=',
    );
    // terraform's lines (providers are handled concurrently, so their lines interleave).
    for (const line of [
      '- Finding registry.example.test/acme/demo versions matching "~> 1.0"...',
      '- Finding registry.example.test/acme/tools versions matching ">= 0.3.0"...',
      '- Installing registry.example.test/acme/demo v1.1.0...',
      '- Installed registry.example.test/acme/demo v1.1.0 (unauthenticated)',
      '- Installed registry.example.test/acme/tools v0.3.0 (unauthenticated)',
      'Terraform has created a lock file .terraform.lock.hcl to record the provider selections it made above.',
    ]) {
      expect(r.stdout).toContain(line);
    }
    // The package mutexes are released (removed) and no temporary directory is left.
    expect(await readdir(join(dir, '.terraform/providers', HOST, 'acme/demo/1.1.0'))).toEqual(['linux_amd64']);
  });

  it('reuses a previously-installed package that matches the lock, and leaves the lock file alone', async () => {
    expect(
      (await run(['-flavor=terraform', 'install', `-fs-mirror=${mirror}`, '-platform=linux_amd64'], dir)).code,
    ).toBe(0);
    const before = await stat(lockPath());
    const r = await run(
      ['-flavor=terraform', 'install', `-fs-mirror=${join(scratch, 'nowhere')}`, '-platform=linux_amd64'],
      dir,
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    // terraform's lines on the second init.
    expect(r.stdout).toContain(
      '- Reusing previous version of registry.example.test/acme/demo from the dependency lock file',
    );
    expect(r.stdout).toContain('- Using previously-installed registry.example.test/acme/demo v1.1.0');
    expect(r.stdout).toContain('- Using previously-installed registry.example.test/acme/tools v0.3.0');
    expect(r.stdout).not.toMatch(/created a lock file|made some changes/);
    const after = await stat(lockPath());
    expect(after.mtimeMs).toBe(before.mtimeMs);
    expect(after.ino).toBe(before.ino);
  });

  it('refuses a package that does not match the lock, with the reference message, and leaves the lock untouched', async () => {
    const bad = TF_LOCK.replace('h1:MqUhk', 'h1:XqUhk').replace(/terraform init/, 'tofu init');
    await writeFile(lockPath(), bad);
    const r = await run(['install', `-fs-mirror=${mirror}`, '-platform=linux_amd64'], dir);
    expect(r.code).toBe(1);
    // terraform 1.11.4: the same text with its own documentation URL.
    // One diagnostic per provider, as init (issue 14): the detail wrapped at 78 columns off a terminal.
    expect(r.stderr).toContain('\nError: Failed to install provider\n\n');
    expect(r.stderr.split('\n').every((l) => l.length <= 78 || !l.includes(' '))).toBe(true);
    expect(r.stderr.replace(/\s+/g, ' ')).toContain(
      "Error while installing registry.example.test/acme/demo v1.1.0: the current package for registry.example.test/acme/demo 1.1.0 doesn't match any of the checksums previously recorded in the dependency lock file; for more information: https://opentofu.org/docs/language/files/dependency-lock/#checksum-verification",
    );
    expect(await readFile(lockPath(), 'utf8')).toBe(bad);
    // As terraform: the other provider is installed, the refused one is not
    // (and, issue 11 #17, no empty directory is left for it).
    await expect(readdir(join(dir, '.terraform/providers', HOST, 'acme/demo'))).rejects.toThrow(/ENOENT/);
    expect(await readdir(join(dir, '.terraform/providers', TOOLS))).toContain('terraform-provider-tools_v0.3.0');
  });

  it('replaces a tampered installed package instead of reusing it', async () => {
    expect((await run(['install', `-fs-mirror=${mirror}`, '-platform=linux_amd64'], dir)).code).toBe(0);
    const exe = join(dir, '.terraform/providers', DEMO, 'terraform-provider-demo_v1.1.0');
    await writeFile(exe, 'tampered');
    await writeFile(join(dir, '.terraform/providers', DEMO, 'extra'), 'stale');
    const r = await run(['install', `-fs-mirror=${mirror}`, '-platform=linux_amd64'], dir);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('- Installed registry.example.test/acme/demo v1.1.0 (unauthenticated)');
    expect((await hashPackageDir(join(dir, '.terraform/providers', DEMO))).text).toBe(
      'h1:MqUhklRgQ94tJsCySf+PtIviV4lB/gSgPoVDcfG3FM8=',
    );
  });

  it('-upgrade ignores the locked version; without it the locked version is kept', async () => {
    const pinned = `# This file is maintained automatically by "tofu init".
# Manual edits may be lost in future updates.

provider "registry.example.test/acme/demo" {
  version     = "1.0.0"
  constraints = "~> 1.0"
  hashes = [
    "h1:H0mtrlmpSlRD9YuAK4vD9qvO8e2yVdgvA3VGbdWec+A=",
  ]
}

provider "registry.example.test/acme/tools" {
  version     = "0.3.0"
  constraints = ">= 0.3.0"
  hashes = [
    "h1:+rMvOBnltZibZhqFf0qTphvHYLgehGCz2h6T9UKJcV4=",
  ]
}
`;
    await writeFile(lockPath(), pinned);
    const kept = await run(['install', `-fs-mirror=${mirror}`, '-platform=linux_amd64'], dir);
    expect(kept.code).toBe(0);
    expect(kept.stdout).toContain('- Installed registry.example.test/acme/demo v1.0.0 (unauthenticated)');
    expect(await readFile(lockPath(), 'utf8')).toBe(pinned);
    const up = await run(['install', `-fs-mirror=${mirror}`, '-platform=linux_amd64', '-upgrade'], dir);
    expect(up.code).toBe(0);
    expect(up.stdout).toContain('- Installed registry.example.test/acme/demo v1.1.0 (unauthenticated)');
    expect(up.stdout).toContain('OpenTofu has made some changes to the provider dependency selections');
    const lock = await readFile(lockPath(), 'utf8');
    expect(lock).toContain('version     = "1.1.0"');
    expect(lock).not.toContain('H0mtrl'); // a new version starts a new set of hashes (item 41)
  });

  it('removes lock entries of providers the configuration no longer requires', async () => {
    await writeFile(lockPath(), TF_LOCK.replace(/acme\/tools/g, 'acme/gone'));
    const r = await run(['-flavor=terraform', 'install', `-fs-mirror=${mirror}`, '-platform=linux_amd64'], dir);
    expect(r.code).toBe(0);
    expect(await readFile(lockPath(), 'utf8')).toBe(TF_LOCK);
  });

  it('refuses a locked version that no longer meets the constraints', async () => {
    await writeFile(lockPath(), TF_LOCK.replace('version     = "1.1.0"', 'version     = "0.9.0"'));
    const r = await run(['install', `-fs-mirror=${mirror}`, '-platform=linux_amd64'], dir);
    expect(r.code).toBe(1);
    expect(flat(r.stderr)).toContain(
      // The lock file is terraform's (its header): the run is a terraform one.
      'locked provider registry.example.test/acme/demo 0.9.0 does not match configured version constraint ~> 1.0; must use terraform init -upgrade to allow selection of new versions',
    );
  });

  it('reports a platform the mirror lacks, per provider', async () => {
    const r = await run(['install', `-fs-mirror=${mirror}`, '-platform=solaris_amd64'], dir);
    expect(r.code).toBe(1);
    // terraform's "Incompatible provider version", one per provider (issue 14).
    expect(flat(r.stderr)).toContain(
      'Provider registry.example.test/acme/demo v1.1.0 does not have a package available for your current platform, solaris_amd64.',
    );
    expect(flat(r.stderr)).toContain(
      'Provider registry.example.test/acme/tools v0.3.0 does not have a package available',
    );
    // Issue 11 #17: the directories this run made are removed again.
    expect((await readdir(dir)).sort()).toEqual(['main.tf']);
  });

  it('-json reports typed install events', async () => {
    const r = await run(['install', '-json', `-fs-mirror=${mirror}`, '-platform=linux_amd64'], dir);
    expect(r.code).toBe(0);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines[0]).toMatchObject({ type: 'version', ui: '1.0' });
    const done = lines.filter((l) => l['type'] === 'install_complete');
    expect(done).toHaveLength(2);
    expect(done[0]).toMatchObject({ mode: 'installed', authentication: 'unauthenticated', platform: 'linux_amd64' });
    expect(lines.at(-1)).toMatchObject({ type: 'summary', installed: 2, lock_file: 'write' });
  });
});

describe('provkit install with a CLI configuration', () => {
  it('installs from the provider_installation filesystem_mirror, as terraform init does', async () => {
    const rc = join(scratch, 'cli.tfrc');
    await writeFile(
      rc,
      `provider_installation {\n  filesystem_mirror {\n    path    = ${JSON.stringify(mirror)}\n    include = ["registry.example.test/*/*"]\n  }\n  direct {\n    exclude = ["registry.example.test/*/*"]\n  }\n}\n`,
    );
    const r = await run(['-flavor=terraform', 'install', '-platform=linux_amd64'], dir, { TF_CLI_CONFIG_FILE: rc });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(await readFile(lockPath(), 'utf8')).toBe(TF_LOCK);
  });

  it('finds packages in the implied local mirror (terraform.d/plugins in the working directory)', async () => {
    const plugins = join(dir, 'terraform.d/plugins/registry.example.test/acme');
    for (const [type, version] of [
      ['demo', '1.1.0'],
      ['tools', '0.3.0'],
    ] as const) {
      await mkdir(join(plugins, type), { recursive: true });
      await copyFile(
        join(mirror, `registry.example.test/acme/${type}/terraform-provider-${type}_${version}_linux_amd64.zip`),
        join(plugins, type, `terraform-provider-${type}_${version}_linux_amd64.zip`),
      );
    }
    const r = await run(['-flavor=terraform', 'install', '-platform=linux_amd64'], dir);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(await readFile(lockPath(), 'utf8')).toBe(TF_LOCK);
  });
});

describe('provkit install -lockfile=readonly', () => {
  it('warns and keeps the file when only hashes would change (terraform)', async () => {
    const base = await unpackedMirror();
    await writeFile(lockPath(), ZH_ONLY_LOCK);
    const r = await run(
      ['-flavor=terraform', 'install', `-fs-mirror=${base}`, '-platform=linux_amd64', '-lockfile=readonly'],
      dir,
    );
    expect(r.code).toBe(0);
    // init's warnings go to stdout (views.View.Diagnostics).
    expect(r.stdout).toContain('Warning: Provider lock file not updated');
    expect(flat(r.stdout)).toContain(
      'Changes to the provider selections were detected, but not saved in the .terraform.lock.hcl file. To record these selections, run "terraform init" without the "-lockfile=readonly" flag.',
    );
    expect(await readFile(lockPath(), 'utf8')).toBe(ZH_ONLY_LOCK);
  });

  it('fails when the set of providers would change (terraform), writing no lock file', async () => {
    const r = await run(
      ['-flavor=terraform', 'install', `-fs-mirror=${mirror}`, '-platform=linux_amd64', '-lockfile=readonly'],
      dir,
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('Error: Provider dependency changes detected');
    expect(r.stderr.replace(/│ /g, '').replace(/\n/g, ' ')).toContain(
      'Changes to the required provider dependencies were detected, but the lock file is read-only. To use and record these requirements, run "terraform init" without the "-lockfile=readonly" flag.',
    );
    expect((await readdir(dir)).sort()).toEqual(['.terraform', 'main.tf']);
  });

  it('refuses -upgrade with it (terraform)', async () => {
    const r = await run(['install', `-fs-mirror=${mirror}`, '-lockfile=readonly', '-upgrade'], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('Error: The -upgrade flag conflicts with -lockfile=readonly.');
  });
});

describe('provkit install -fs-mirror (unpacked)', () => {
  it('links the target to the mirror directory as terraform does, and records its h1', async () => {
    const base = await unpackedMirror();
    const r = await run(['-flavor=terraform', 'install', `-fs-mirror=${base}`, '-platform=linux_amd64'], dir);
    expect(r.code).toBe(0);
    expect(await readFile(lockPath(), 'utf8')).toBe(TF_LOCK);
    // terraform: `linux_amd64 -> /abs/mirror/registry.example.test/acme/demo/1.1.0/linux_amd64`.
    expect(await readlink(join(dir, '.terraform/providers', DEMO))).toBe(join(base, DEMO));
    expect(await readlink(join(dir, '.terraform/providers', TOOLS))).toBe(join(base, TOOLS));
  });

  it('accepts any directory when the lock holds only zh: hashes, and adds the h1 (terraform, byte for byte)', async () => {
    const base = await unpackedMirror();
    await writeFile(lockPath(), ZH_ONLY_LOCK);
    const r = await run(['-flavor=terraform', 'install', `-fs-mirror=${base}`, '-platform=linux_amd64'], dir);
    expect(r.code).toBe(0);
    expect(await readFile(lockPath(), 'utf8')).toBe(ZH_ONLY_LOCK_AFTER_INIT);
    expect(r.stdout).toContain(
      'Terraform has made some changes to the provider dependency selections recorded in the .terraform.lock.hcl file.',
    );
    // Beyond terraform: the unverified install is called out.
    expect(flat(r.stdout)).toContain('installed without verification');
  });

  it('refuses a directory that does not match the lock, with the reference message', async () => {
    const base = await unpackedMirror();
    await writeFile(lockPath(), TF_LOCK.replace('h1:MqUhk', 'h1:AAAAk'));
    const r = await run(['-flavor=terraform', 'install', `-fs-mirror=${base}`, '-platform=linux_amd64'], dir);
    expect(r.code).toBe(1);
    expect(r.stderr.replace(/│ /g, '').replace(/\n/g, ' ')).toContain(
      "the local package for registry.example.test/acme/demo 1.1.0 doesn't match any of the checksums previously recorded in the dependency lock file (this might be because the available checksums are for packages targeting different platforms); for more information:",
    );
    await expect(lstat(join(dir, '.terraform/providers', DEMO))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('refuses a package without the provider executable, linking nothing', async () => {
    const base = await unpackedMirror();
    await rename(join(base, DEMO, 'terraform-provider-demo_v1.1.0'), join(base, DEMO, 'terraform-providerdemo'));
    const r = await run(['install', `-fs-mirror=${base}`, '-platform=linux_amd64'], dir);
    expect(r.code).toBe(1);
    expect(flat(r.stderr)).toContain(
      'Error while installing registry.example.test/acme/demo v1.1.0: provider binary not found: could not find executable file starting with terraform-provider-demo',
    );
    await expect(lstat(join(dir, '.terraform/providers', DEMO))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('provkit install -plugin-cache-dir', () => {
  let cache: string;
  beforeEach(async () => {
    cache = join(scratch, 'cache');
    await mkdir(cache);
  });

  it('installs into the cache and links the target to it (terraform), then reuses it offline', async () => {
    const r = await run(
      ['-flavor=terraform', 'install', `-fs-mirror=${mirror}`, '-platform=linux_amd64', `-plugin-cache-dir=${cache}`],
      dir,
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(await readFile(lockPath(), 'utf8')).toBe(TF_LOCK);
    // terraform: the cache holds the extracted package, the target is an absolute symlink to it.
    expect(await tree(cache, HOST)).toEqual(
      TF_TREE.filter((l) => l.includes(`/${HOST}`)).map((l) => l.replace('.terraform/providers/', '')),
    );
    expect(await readlink(join(dir, '.terraform/providers', DEMO))).toBe(join(cache, DEMO));

    // A second workspace, through the environment variable, with a mirror that does not exist: terraform's line.
    const other = join(scratch, 'other');
    await mkdir(other);
    await copyFile(join(dir, 'main.tf'), join(other, 'main.tf'));
    await copyFile(lockPath(), join(other, '.terraform.lock.hcl'));
    const again = await run(
      ['-flavor=terraform', 'install', `-fs-mirror=${join(scratch, 'nowhere')}`, '-platform=linux_amd64'],
      other,
      { TF_PLUGIN_CACHE_DIR: cache },
    );
    expect(again.stderr).toBe('');
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('- Using registry.example.test/acme/demo v1.1.0 from the shared cache directory');
    expect(again.stdout).toContain('- Using registry.example.test/acme/tools v0.3.0 from the shared cache directory');
    expect(await readFile(join(other, '.terraform.lock.hcl'), 'utf8')).toBe(TF_LOCK);
    expect(await readlink(join(other, '.terraform/providers', TOOLS))).toBe(join(cache, TOOLS));
  });

  it('refuses a cache directory that does not exist', async () => {
    const r = await run(['install', `-fs-mirror=${mirror}`, `-plugin-cache-dir=${join(scratch, 'missing')}`], dir);
    expect(r.code).toBe(1);
    expect(flat(r.stderr)).toContain(`The specified plugin cache dir ${join(scratch, 'missing')} cannot be opened`);
  });

  it('lets concurrent installs share one cache: all succeed with identical trees', async () => {
    const workspaces = ['a', 'b', 'c', 'd'].map((n) => join(scratch, n));
    for (const w of workspaces) {
      await mkdir(w);
      await copyFile(join(dir, 'main.tf'), join(w, 'main.tf'));
    }
    const results = await Promise.all(
      workspaces.map((w) =>
        run(['install', `-fs-mirror=${mirror}`, '-platform=linux_amd64', `-plugin-cache-dir=${cache}`], w),
      ),
    );
    for (const r of results) {
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
    }
    const locks = await Promise.all(workspaces.map((w) => readFile(join(w, '.terraform.lock.hcl'), 'utf8')));
    expect(new Set(locks).size).toBe(1);
    const trees = await Promise.all(workspaces.map((w) => tree(w)));
    for (const t of trees) expect(t).toEqual(trees[0]!.map((l) => l));
    for (const w of workspaces) expect(await readlink(join(w, '.terraform/providers', DEMO))).toBe(join(cache, DEMO));
    // The cache: the packages, and no lock or temporary file left.
    expect(await readdir(join(cache, HOST, 'acme/demo/1.1.0'))).toEqual(['linux_amd64']);
    expect(await readdir(join(cache, HOST, 'acme/tools/0.3.0'))).toEqual(['linux_amd64']);
    expect((await hashPackageDir(join(cache, DEMO))).text).toBe('h1:MqUhklRgQ94tJsCySf+PtIviV4lB/gSgPoVDcfG3FM8=');
    expect(await sha256(join(cache, DEMO, 'terraform-provider-demo_v1.1.0'))).toBe(
      await sha256(join(workspaces[0]!, '.terraform/providers', DEMO, 'terraform-provider-demo_v1.1.0')),
    );
  });

  it('recovers a stale cache mutex left by a dead process', async () => {
    const dead = spawnSync(process.execPath, ['-e', '']).pid;
    const lockFile = join(cache, HOST, 'acme/demo/1.1.0/linux_amd64.lock');
    await mkdir(join(cache, HOST, 'acme/demo/1.1.0'), { recursive: true });
    await writeFile(
      lockFile,
      `${JSON.stringify({ pid: dead, hostname: hostname(), created: Date.now(), token: 'dead' })}\n`,
    );
    const r = await run(
      ['install', `-fs-mirror=${mirror}`, '-platform=linux_amd64', `-plugin-cache-dir=${cache}`],
      dir,
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Broke a stale package mutex');
    expect(flat(r.stdout)).toContain(`held by process ${dead}, which no longer runs`);
    expect(await readdir(join(cache, HOST, 'acme/demo/1.1.0'))).toEqual(['linux_amd64']);
  });

  it('recovers a lock from another host that has not been refreshed for too long', async () => {
    const lockFile = join(cache, HOST, 'acme/tools/0.3.0/linux_amd64.lock');
    await mkdir(join(cache, HOST, 'acme/tools/0.3.0'), { recursive: true });
    await writeFile(lockFile, `${JSON.stringify({ pid: 1, hostname: 'elsewhere.invalid', created: 0, token: 'x' })}\n`);
    const old = new Date(Date.now() - 3_600_000);
    await utimes(lockFile, old, old);
    const r = await run(
      ['install', `-fs-mirror=${mirror}`, '-platform=linux_amd64', `-plugin-cache-dir=${cache}`],
      dir,
    );
    expect(r.code).toBe(0);
    expect(flat(r.stdout)).toContain('not refreshed for too long');
    expect(await readdir(join(cache, HOST, 'acme/tools/0.3.0'))).toEqual(['linux_amd64']);
  });
});

describe('provkit install -net-mirror', () => {
  let netMirror: FakeNetMirror;
  beforeAll(async () => {
    netMirror = await startFakeNetMirror({ providers: await fixtureProviders(), hashes: 'h1-zip' });
  });
  afterAll(() => netMirror.close());

  it('downloads, checks the mirror hashes, extracts, and records the h1 (tofu also records the matched mirror hash)', async () => {
    const r = await run(['install', `-net-mirror=${netMirror.url}`, '-platform=linux_amd64'], dir, {
      SSL_CERT_FILE: netMirror.caPath,
    });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('- Installed registry.example.test/acme/demo v1.1.0 (verified checksum)');
    expect((await hashPackageDir(join(dir, '.terraform/providers', DEMO))).text).toBe(
      'h1:MqUhklRgQ94tJsCySf+PtIviV4lB/gSgPoVDcfG3FM8=',
    );
    const lock = await readFile(lockPath(), 'utf8');
    expect(lock).toContain('"h1:MqUhklRgQ94tJsCySf+PtIviV4lB/gSgPoVDcfG3FM8=",');
    expect(lock).toContain(`"${netMirror.hashesOf(HOST, 'acme', 'demo', '1.1.0', 'linux_amd64').h1Zip}",`);
  });

  it('records only the local h1 with the terraform flavor', async () => {
    const r = await run(
      ['-flavor=terraform', 'install', `-net-mirror=${netMirror.url}`, '-platform=linux_amd64'],
      dir,
      { SSL_CERT_FILE: netMirror.caPath },
    );
    expect(r.code).toBe(0);
    expect(await readFile(lockPath(), 'utf8')).toBe(TF_LOCK);
  });
});

describe('provkit install from a registry', () => {
  let reg: FakeRegistry;
  const HASHES = JSON.parse(readFileSync(join(mirror, 'hashes.json'), 'utf8')) as {
    packages: Record<string, { zh: string; h1: string }>;
  };
  const zhOf = (p: string): string => HASHES.packages[`${HOST}/acme/demo/terraform-provider-demo_1.1.0_${p}.zip`]!.zh;
  const ZH_ALL = ['darwin_amd64', 'darwin_arm64', 'linux_amd64', 'linux_arm64', 'windows_amd64'].map(zhOf).sort();
  beforeAll(async () => {
    const providers = await fixtureProviders();
    // acme/docs: a package with a directory entry, whose zip-form and extracted-form h1: differ (item 27).
    const docsZip = await buildZip([
      { name: 'terraform-provider-docs_v1.0.0', data: '#!/bin/sh\n', unixMode: 0o100755 },
      { name: 'docs/', dir: true },
      { name: 'docs/index.md', data: 'hi\n' },
    ]);
    providers.push({
      namespace: 'acme',
      type: 'docs',
      versions: [{ version: '1.0.0', packages: [{ platform: 'linux_amd64', zip: docsZip }] }],
    });
    reg = await startFakeRegistry({ providers });
  });
  afterAll(() => reg.close());

  const config = (type = 'demo', constraint = '~> 1.0'): Promise<void> =>
    writeFile(
      join(dir, 'main.tf'),
      `terraform {\n  required_providers {\n    ${type} = {\n      source  = "${reg.host}/acme/${type}"\n      version = "${constraint}"\n    }\n  }\n}\n`,
    );
  const lockWith = (hashes: string[], type = 'demo', version = '1.1.0', constraint = '~> 1.0'): string =>
    `# This file is maintained automatically by "terraform init".\n# Manual edits may be lost in future updates.\n\nprovider "${reg.host}/acme/${type}" {\n  version     = "${version}"\n  constraints = "${constraint}"\n  hashes = [\n${hashes.map((h) => `    "${h}",\n`).join('')}  ]\n}\n`;
  const H1_DEMO = 'h1:MqUhklRgQ94tJsCySf+PtIviV4lB/gSgPoVDcfG3FM8=';

  it('records the h1: and every signed zh: (terraform, byte for byte)', async () => {
    await config();
    const r = await run(['-flavor=terraform', 'install', '-platform=linux_amd64'], dir, { SSL_CERT_FILE: reg.caPath });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    // As terraform: "- Installed HOST/acme/demo v1.1.0 (self-signed, key ID …)" (test/fixtures/guidance/terraform-1.11.4.txt).
    expect(r.stdout).toMatch(/- Installed .*\/acme\/demo v1\.1\.0 \(self-signed, key ID [0-9A-F]{16}\)/);
    expect(await readFile(lockPath(), 'utf8')).toBe(lockWith([H1_DEMO, ...ZH_ALL]));
    expect(
      (await hashPackageDir(join(dir, '.terraform/providers', reg.host, 'acme/demo/1.1.0/linux_amd64'))).text,
    ).toBe(H1_DEMO);
  });

  it("accepts the archive by the lock's zh: and completes the lock (terraform, byte for byte)", async () => {
    await config();
    await writeFile(lockPath(), lockWith([zhOf('linux_amd64')]));
    const r = await run(['-flavor=terraform', 'install', '-platform=linux_amd64'], dir, { SSL_CERT_FILE: reg.caPath });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`- Reusing previous version of ${reg.host}/acme/demo from the dependency lock file`);
    expect(await readFile(lockPath(), 'utf8')).toBe(lockWith([H1_DEMO, ...ZH_ALL]));
  });

  it("refuses the archive when the lock's zh: is another platform's", async () => {
    await config();
    const lock = lockWith([zhOf('darwin_arm64')]);
    await writeFile(lockPath(), lock);
    const r = await run(['-flavor=terraform', 'install', '-platform=linux_amd64'], dir, { SSL_CERT_FILE: reg.caPath });
    expect(r.code).toBe(1);
    expect(flat(r.stderr)).toContain(
      `the current package for ${reg.host}/acme/demo 1.1.0 doesn't match any of the checksums previously recorded in the dependency lock file`,
    );
    expect(await readFile(lockPath(), 'utf8')).toBe(lock);
  });

  it('refuses a tampered archive (authentication), installing nothing', async () => {
    await config();
    reg.tamperArchive('acme', 'demo', '1.1.0', 'linux_amd64', 1);
    const r = await run(['install', '-platform=linux_amd64'], dir, { SSL_CERT_FILE: reg.caPath });
    expect(r.code).toBe(1);
    expect(flat(r.stderr)).toContain('archive has incorrect checksum');
    // Issue 11 #17: the directories this run made are removed again.
    expect((await readdir(dir)).sort()).toEqual(['main.tf']);
  });

  it('refuses, as the reference does, an archive with directory entries against a lock holding only its extracted h1:, and says why', async () => {
    await config('docs', '1.0.0');
    const fresh = await run(['install', '-platform=linux_amd64'], dir, { SSL_CERT_FILE: reg.caPath });
    expect(fresh.code).toBe(0);
    expect(flat(fresh.stdout)).toContain(
      'the zip form and the extracted form of this package have different h1: hashes',
    );
    const extracted = (await hashPackageDir(join(dir, '.terraform/providers', reg.host, 'acme/docs/1.0.0/linux_amd64')))
      .text;
    // The lock `providers lock -fs-mirror` would write: the extracted h1 only (docs/reference.md §10 item 141, verified with acme-labs/beta).
    await writeFile(lockPath(), lockWith([extracted], 'docs', '1.0.0', '1.0.0'));
    await rm(join(dir, '.terraform'), { recursive: true });
    const r = await run(['-flavor=terraform', 'install', '-platform=linux_amd64'], dir, { SSL_CERT_FILE: reg.caPath });
    expect(r.code).toBe(1);
    const text = flat(r.stderr);
    expect(text).toContain(
      `the current package for ${reg.host}/acme/docs 1.0.0 doesn't match any of the checksums previously recorded in the dependency lock file`,
    );
    expect(text).toContain(
      'an archive is checked with the h1: of its entries as stored, which differs for this archive ("docs/")',
    );
  });
});

describe('provkit install: bad input', () => {
  it.each([
    [['-platform=linux'], 'Invalid target platform'],
    [['-fs-mirror=a', '-net-mirror=https://m.example/'], 'Invalid installation method options'],
    [['-net-mirror=http://m.example/'], 'Invalid network mirror URL'],
    [['-lockfile=write'], 'Invalid -lockfile option'],
  ])('%j fails with %s and writes nothing', async (args, summary) => {
    const r = await run(['install', ...args], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`Error: ${summary}`);
    expect(await readdir(dir)).toEqual(['main.tf']);
  });
});
