// `provkit verify` end to end: a copy of the bundled packed mirror with the
// index files `terraform providers mirror` would write, and the lock file
// terraform 1.11.4 wrote for linux_amd64 + darwin_arm64
// (test/fixtures/lockfiles/valid/terraform-fs-mirror-two-platforms.hcl).
import { copyFile, cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { parsePlatform, parseVersion } from '../../src/addresses/index.js';
import { hashZipPackage } from '../../src/hashing/index.js';
import { mirrorIndexJSON, mirrorVersionJSON } from '../../src/layout/index.js';
import { runCli } from '../support/e2e.js';

const fixtures = fileURLToPath(new URL('../../mirror-fixtures/', import.meta.url));
const TWO_PLATFORM_LOCK = fileURLToPath(
  new URL('../fixtures/lockfiles/valid/terraform-fs-mirror-two-platforms.hcl', import.meta.url),
);
const V2_DIR_ENTRY = fileURLToPath(new URL('../fixtures/zip/accept/v2-directory-entry.zip', import.meta.url));
const HOST = 'registry.example.test';
const PLATFORMS = ['linux_amd64', 'darwin_arm64'];

function run(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return runCli(args, { cwd, env: { ...process.env, PROVKIT_FLAVOR: '' } });
}

const problems = (stdout: string): string[] => stdout.split('\n').filter((l) => l.startsWith(`${HOST}/`));

let scratch: string;
let dir: string;
let mirror: string;

/** Writes index.json and VERSION.json as `terraform providers mirror` does (one zip-form h1 per archive), plus the zh. */
async function writeIndexes(type: string, versions: string[]): Promise<void> {
  const base = join(mirror, HOST, 'acme', type);
  await writeFile(join(base, 'index.json'), mirrorIndexJSON(versions.map((v) => parseVersion(v))));
  for (const v of versions) {
    const archives = [];
    for (const p of ['linux_amd64', 'linux_arm64', 'darwin_amd64', 'darwin_arm64', 'windows_amd64']) {
      const file = `terraform-provider-${type}_${v}_${p}.zip`;
      const h = await hashZipPackage(join(base, file));
      archives.push({
        platform: parsePlatform(p),
        hashes: [h.h1Zip.ok ? h.h1Zip.hash.text : '', h.zh.text],
        url: file,
      });
    }
    await writeFile(join(base, `${v}.json`), mirrorVersionJSON(archives));
  }
}

beforeEach(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'provkit-verify-cli-'));
  dir = join(scratch, 'work');
  mirror = join(scratch, 'mirror');
  await mkdir(dir);
  await cp(join(fixtures, HOST), join(mirror, HOST), { recursive: true });
  await writeIndexes('demo', ['1.0.0', '1.1.0']);
  await writeIndexes('tools', ['0.3.0']);
  await copyFile(join(fixtures, 'config/main.tf'), join(dir, 'main.tf'));
  await copyFile(TWO_PLATFORM_LOCK, join(dir, '.terraform.lock.hcl'));
});
afterEach(() => rm(scratch, { recursive: true, force: true }));

const platformFlags = PLATFORMS.map((p) => `-platform=${p}`);

describe('provkit verify', () => {
  it('passes a lock that covers the platforms, against an intact mirror: exit 0, a line per package and one summary line', async () => {
    const r = await run(['verify', `-mirror=${mirror}`, ...platformFlags], dir);
    // terraform wrote the lock file: the run says it takes the terraform flavor (issue 14 #2), and nothing else.
    expect(r.stderr).toBe(
      'provkit: using the terraform flavor: .terraform.lock.hcl was written by "terraform init" (-flavor or PROVKIT_FLAVOR to choose).\n',
    );
    expect(r.code).toBe(0);
    // Each package checked, with who vouches for it (docs/provenance.md): computed here, and listed by VERSION.json.
    const lines = r.stdout.trim().split('\n');
    expect(lines.slice(0, -2)).toHaveLength(10);
    expect(lines[0]).toBe(
      `- Checked ${HOST}/acme/demo 1.1.0 for darwin_amd64 (computed locally; reported by the mirror ${mirror})`,
    );
    expect(lines.slice(-2)).toEqual([
      '',
      '.terraform.lock.hcl verified: 2 providers checked against 15 packages for darwin_arm64, linux_amd64; no problems.',
    ]);
  });

  it('flags a tampered archive once (it contradicts VERSION.json)', async () => {
    const base = join(mirror, HOST, 'acme/demo');
    // A valid zip, but not the one the index and the lock describe.
    await copyFile(
      join(base, 'terraform-provider-demo_1.1.0_linux_arm64.zip'),
      join(base, 'terraform-provider-demo_1.1.0_linux_amd64.zip'),
    );
    const r = await run(['verify', `-mirror=${mirror}`, ...platformFlags], dir);
    expect(r.code).toBe(1);
    const lines = problems(r.stdout);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^registry\.example\.test\/acme\/demo 1\.1\.0 linux_amd64: the archive does not match 1\.1\.0\.json \(listed h1:MqUhk.*, zh:/,
    );
    expect(r.stdout).toContain('1 problem found.');
  });

  it('flags a tampered archive of a plain filesystem mirror (no index) as not covered by the lock', async () => {
    const base = join(mirror, HOST, 'acme/demo');
    await rm(join(base, 'index.json'));
    await copyFile(
      join(base, 'terraform-provider-demo_1.1.0_linux_arm64.zip'),
      join(base, 'terraform-provider-demo_1.1.0_linux_amd64.zip'),
    );
    const r = await run(['verify', `-mirror=${mirror}`, ...platformFlags], dir);
    expect(r.code).toBe(1);
    expect(problems(r.stdout)).toEqual([
      'registry.example.test/acme/demo 1.1.0 linux_amd64: its h1: (h1:rwYLJKqbLnDSJLzx6vr/DAk720Nv9gJyMFZulTOmmZo=) is not in the lock file: the lock does not cover linux_amd64, or the package differs from the one locked (provkit lock -platform=linux_amd64 records it)',
    ]);
  });

  it('flags a platform the mirror has no package for', async () => {
    await rm(join(mirror, HOST, 'acme/tools/terraform-provider-tools_0.3.0_darwin_arm64.zip'));
    const r = await run(['verify', `-mirror=${mirror}`, ...platformFlags], dir);
    expect(r.code).toBe(1);
    expect(problems(r.stdout)).toEqual([
      'registry.example.test/acme/tools 0.3.0 darwin_arm64: 0.3.0.json lists terraform-provider-tools_0.3.0_darwin_arm64.zip, which is not in the mirror',
      "registry.example.test/acme/tools 0.3.0 darwin_arm64: no package in the mirror for this platform, so the lock file's coverage of it cannot be checked",
    ]);
  });

  it('flags a platform the lock does not cover (by default: every platform in the mirror)', async () => {
    const r = await run(['verify', `-mirror=${mirror}`], dir);
    expect(r.code).toBe(1);
    const lines = problems(r.stdout);
    expect(lines).toHaveLength(6); // 3 uncovered platforms × 2 providers
    expect(lines.every((l) => l.includes('is not in the lock file: the lock does not cover'))).toBe(true);
    expect(lines.filter((l) => l.includes(' windows_amd64: '))).toHaveLength(2);
  });

  it('flags an archive whose two h1: forms differ, naming the entries', async () => {
    const docs = join(mirror, HOST, 'acme/docs');
    await mkdir(docs);
    await copyFile(V2_DIR_ENTRY, join(docs, 'terraform-provider-docs_1.0.0_linux_amd64.zip'));
    const r = await run(['verify', `-mirror=${mirror}`, ...platformFlags], dir);
    expect(r.code).toBe(1);
    const lines = problems(r.stdout);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^registry\.example\.test\/acme\/docs 1\.0\.0 linux_amd64: the zip form and the extracted form .* Entries: "docs\/"\.$/,
    );
  });

  it('flags zh: missing where the lock records registry zh: hashes', async () => {
    const lock = (await readFile(TWO_PLATFORM_LOCK, 'utf8')).replace(
      '    "h1:MqUhklRgQ94tJsCySf+PtIviV4lB/gSgPoVDcfG3FM8=",\n',
      '    "h1:MqUhklRgQ94tJsCySf+PtIviV4lB/gSgPoVDcfG3FM8=",\n    "zh:0000000000000000000000000000000000000000000000000000000000000000",\n',
    );
    await writeFile(join(dir, '.terraform.lock.hcl'), lock);
    const r = await run(['verify', `-mirror=${mirror}`, ...platformFlags], dir);
    expect(r.code).toBe(1);
    expect(problems(r.stdout).map((l) => l.replace(/\(zh:[0-9a-f]+\)/, '(zh:…)'))).toEqual([
      "registry.example.test/acme/demo 1.1.0 darwin_arm64: the lock file records zh: hashes for this provider, but not this archive's (zh:…): it is not the archive the registry signed",
      "registry.example.test/acme/demo 1.1.0 linux_amd64: the lock file records zh: hashes for this provider, but not this archive's (zh:…): it is not the archive the registry signed",
    ]);
  });

  it('checks the configuration against the lock (item 51), without a mirror', async () => {
    await writeFile(
      join(dir, 'main.tf'),
      (await readFile(join(dir, 'main.tf'), 'utf8'))
        .replace('version = "~> 1.0"', 'version = "~> 2.0"')
        .replace('acme/tools', 'acme/other'),
    );
    const r = await run(['verify'], dir);
    expect(r.code).toBe(1);
    expect(problems(r.stdout)).toEqual([
      'registry.example.test/acme/demo 1.1.0: locked version selection 1.1.0 doesn\'t match the updated version constraints "~> 2.0"',
      'registry.example.test/acme/other: required by this configuration but no version is selected',
    ]);
  });

  it('-json reports each problem as a verify_problem message', async () => {
    const r = await run(['verify', '-json', `-mirror=${mirror}`, '-platform=solaris_amd64'], dir);
    expect(r.code).toBe(1);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines[0]).toMatchObject({ type: 'version' });
    const found = lines.filter((l) => l['type'] === 'verify_problem');
    expect(found).toHaveLength(2);
    expect(found[0]).toMatchObject({
      '@level': 'error',
      code: 'PLATFORM_NOT_IN_MIRROR',
      provider: `${HOST}/acme/demo`,
      version: '1.1.0',
      platform: 'solaris_amd64',
    });
    expect(lines.at(-1)).toMatchObject({ type: 'summary', problems: 2 });
  });

  it('needs -mirror to check platforms', async () => {
    const r = await run(['verify', '-platform=linux_amd64'], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('Error: A mirror is needed');
  });
});
