// `provkit mirror` end to end from the bundled filesystem mirror: packed
// layout, Go-formatted index documents with the zip-form h1:, incremental
// re-runs, -hashes=all, and bad input.
import { copyFile, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { hashPackageDir, hashZipPackage } from '../../src/hashing/index.js';
import { runCli } from '../support/e2e.js';

const hashPackageDirOf = async (d: string): Promise<string> => (await hashPackageDir(d)).text;

const mirror = fileURLToPath(new URL('../../mirror-fixtures/', import.meta.url));

let cacheDir: string;
beforeAll(async () => {
  cacheDir = await mkdtemp(join(tmpdir(), 'provkit-mirror-cache-'));
});
afterAll(() => rm(cacheDir, { recursive: true, force: true }));

function run(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return runCli(args, { cwd, env: { ...process.env, PROVKIT_FLAVOR: '', PROVKIT_CACHE_DIR: cacheDir } });
}

let dir: string;
let target: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'provkit-mirror-cli-'));
  target = join(dir, 'out');
  await copyFile(join(mirror, 'config/main.tf'), join(dir, 'main.tf'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const demoDir = (): string => join(target, 'registry.example.test/acme/demo');

describe('provkit mirror', () => {
  it('writes the packed layout with index.json and VERSION.json as the reference formats them', async () => {
    const r = await run(
      [
        '-flavor=terraform',
        'mirror',
        `-fs-mirror=${mirror}`,
        '-platform=linux_amd64',
        '-platform=darwin_arm64',
        target,
      ],
      dir,
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect((await readdir(demoDir())).sort()).toEqual([
      '1.1.0.json',
      'index.json',
      'terraform-provider-demo_1.1.0_darwin_arm64.zip',
      'terraform-provider-demo_1.1.0_linux_amd64.zip',
    ]);
    expect(await readFile(join(demoDir(), 'index.json'), 'utf8')).toBe('{\n  "versions": {\n    "1.1.0": {}\n  }\n}');
    const zips = await Promise.all(
      ['darwin_arm64', 'linux_amd64'].map((p) =>
        hashZipPackage(join(demoDir(), `terraform-provider-demo_1.1.0_${p}.zip`)),
      ),
    );
    const h1 = zips.map((z) => (z.h1Zip.ok ? z.h1Zip.hash.text : ''));
    expect(await readFile(join(demoDir(), '1.1.0.json'), 'utf8')).toBe(
      `{\n  "archives": {\n    "darwin_arm64": {\n      "hashes": [\n        "${h1[0]}"\n      ],\n      "url": "terraform-provider-demo_1.1.0_darwin_arm64.zip"\n    },\n    "linux_amd64": {\n      "hashes": [\n        "${h1[1]}"\n      ],\n      "url": "terraform-provider-demo_1.1.0_linux_amd64.zip"\n    }\n  }\n}`,
    );
    // The copies are the source's bytes.
    expect(
      (await readFile(join(demoDir(), 'terraform-provider-demo_1.1.0_linux_amd64.zip'))).equals(
        await readFile(join(mirror, 'registry.example.test/acme/demo/terraform-provider-demo_1.1.0_linux_amd64.zip')),
      ),
    ).toBe(true);
    expect((await stat(join(demoDir(), 'index.json'))).mode & 0o777).toBe(0o644);
  });

  it('keeps verified packages on a re-run and says so; replaces a tampered one', async () => {
    expect((await run(['mirror', `-fs-mirror=${mirror}`, '-platform=linux_amd64', target], dir)).code).toBe(0);
    const again = await run(['mirror', `-fs-mirror=${mirror}`, '-platform=linux_amd64', target], dir);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('0 fetched, 2 already present and verified');
    const zip = join(demoDir(), 'terraform-provider-demo_1.1.0_linux_amd64.zip');
    await writeFile(zip, 'tampered');
    const third = await run(['mirror', `-fs-mirror=${mirror}`, '-platform=linux_amd64', target], dir);
    expect(third.code).toBe(0);
    expect(third.stdout).toContain('1 fetched, 1 already present and verified');
    expect(
      (await readFile(zip)).equals(
        await readFile(join(mirror, 'registry.example.test/acme/demo/terraform-provider-demo_1.1.0_linux_amd64.zip')),
      ),
    ).toBe(true);
  });

  it('follows the lock file version and indexes archives from earlier runs', async () => {
    await writeFile(
      join(dir, '.terraform.lock.hcl'),
      '# This file is maintained automatically by "tofu init".\n# Manual edits may be lost in future updates.\n\nprovider "registry.example.test/acme/demo" {\n  version     = "1.0.0"\n  constraints = "~> 1.0"\n}\n\nprovider "registry.example.test/acme/tools" {\n  version     = "0.3.0"\n  constraints = ">= 0.3.0"\n}\n',
    );
    expect((await run(['mirror', `-fs-mirror=${mirror}`, '-platform=linux_amd64', target], dir)).code).toBe(0);
    await rm(join(dir, '.terraform.lock.hcl'));
    expect((await run(['mirror', `-fs-mirror=${mirror}`, '-platform=linux_amd64', target], dir)).code).toBe(0);
    expect(await readFile(join(demoDir(), 'index.json'), 'utf8')).toBe(
      '{\n  "versions": {\n    "1.0.0": {},\n    "1.1.0": {}\n  }\n}',
    );
  });

  it('-hashes=all lists zh: and both h1: forms', async () => {
    expect(
      (await run(['mirror', '-hashes=all', `-fs-mirror=${mirror}`, '-platform=linux_amd64', target], dir)).code,
    ).toBe(0);
    const doc = JSON.parse(await readFile(join(demoDir(), '1.1.0.json'), 'utf8')) as {
      archives: Record<string, { hashes: string[] }>;
    };
    const hashes = doc.archives['linux_amd64']!.hashes;
    expect(hashes.some((h) => h.startsWith('zh:'))).toBe(true);
    expect(hashes.some((h) => h.startsWith('h1:'))).toBe(true);
  });

  it('-layout=unpacked extracts each package as the reference does, incrementally, and locks from it like the packed mirror', async () => {
    const first = await run(
      ['mirror', '-layout=unpacked', `-fs-mirror=${mirror}`, '-platform=linux_amd64', target],
      dir,
    );
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const hashes = JSON.parse(await readFile(join(mirror, 'hashes.json'), 'utf8')) as {
      packages: Record<string, { h1: string }>;
    };
    for (const [type, version] of [
      ['demo', '1.1.0'],
      ['tools', '0.3.0'],
    ] as const) {
      const got = await hashPackageDirOf(join(target, `registry.example.test/acme/${type}/${version}/linux_amd64`));
      expect(got).toBe(
        hashes.packages[`registry.example.test/acme/${type}/terraform-provider-${type}_${version}_linux_amd64.zip`]!.h1,
      );
    }
    expect(await readdir(demoDir())).toEqual(['1.1.0']); // no zips, no index files
    const again = await run(
      ['mirror', '-layout=unpacked', `-fs-mirror=${mirror}`, '-platform=linux_amd64', target],
      dir,
    );
    expect(again.stdout).toContain('0 fetched, 2 already present and verified');
    // The unpacked mirror locks to the same bytes as the packed one.
    const fromUnpacked = await run(['lock', `-fs-mirror=${target}`, '-platform=linux_amd64'], dir);
    expect(fromUnpacked.code).toBe(0);
    const lockA = await readFile(join(dir, '.terraform.lock.hcl'), 'utf8');
    await rm(join(dir, '.terraform.lock.hcl'));
    expect((await run(['lock', `-fs-mirror=${mirror}`, '-platform=linux_amd64'], dir)).code).toBe(0);
    expect(await readFile(join(dir, '.terraform.lock.hcl'), 'utf8')).toBe(lockA);
  });

  it.each([
    [['-layout=flat', 'out'], 'Invalid -layout option'],
    [[], 'Wrong number of arguments'],
    [['-platform=bad', 'out'], 'Invalid target platform'],
    [['-hashes=some', 'out'], 'Invalid -hashes option'],
  ])('%j fails with %s', async (args, summary) => {
    const r = await run(['mirror', ...args], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(summary);
    expect(await readdir(dir)).toEqual(['main.tf']);
  });
});
