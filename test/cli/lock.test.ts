// `provkit lock` end to end through the installed entry point, against the
// bundled filesystem mirror; expected lock files were written by terraform
// 1.11.4 on the same inputs (test/fixtures/lockfiles/valid).
import { copyFile, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { runCli } from '../support/e2e.js';

const mirror = fileURLToPath(new URL('../../mirror-fixtures/', import.meta.url));
const fixtures = fileURLToPath(new URL('../fixtures/lockfiles/valid/', import.meta.url));

function run(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return runCli(args, { cwd, env: { ...process.env, PROVKIT_FLAVOR: '' } });
}

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'provkit-lock-cli-'));
  await copyFile(join(mirror, 'config/main.tf'), join(dir, 'main.tf'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

describe('provkit lock -fs-mirror', () => {
  it('writes the lock file terraform writes, byte for byte', async () => {
    const r = await run(
      ['-flavor=terraform', 'lock', `-fs-mirror=${mirror}`, '-platform=linux_amd64', '-platform=darwin_arm64'],
      dir,
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(await readFile(join(dir, '.terraform.lock.hcl'), 'utf8')).toBe(
      await readFile(join(fixtures, 'terraform-fs-mirror-two-platforms.hcl'), 'utf8'),
    );
    expect(r.stdout).toContain('- Retrieved registry.example.test/acme/demo 1.1.0 for linux_amd64 (unauthenticated)');
    expect(r.stdout).toContain('Success! Terraform has updated the lock file.');
  });

  it('merges into an existing lock like terraform (unknown schemes and bogus hashes kept)', async () => {
    await copyFile(join(fixtures, 'unsorted-duplicated-before-merge.hcl'), join(dir, '.terraform.lock.hcl'));
    const r = await run(['lock', '-flavor', 'terraform', '--fs-mirror', mirror, '-platform=linux_arm64'], dir);
    expect(r.code).toBe(0);
    expect(await readFile(join(dir, '.terraform.lock.hcl'), 'utf8')).toBe(
      await readFile(join(fixtures, 'terraform-merged-unknown-scheme.hcl'), 'utf8'),
    );
  });

  it('says when nothing changed, and writes the tofu header by default', async () => {
    expect((await run(['lock', `-fs-mirror=${mirror}`, '-platform=linux_amd64'], dir)).code).toBe(0);
    const again = await run(['lock', `-fs-mirror=${mirror}`, '-platform=linux_amd64'], dir);
    expect(again.stdout).toContain('All checksums for this platform were already tracked in the lock file');
    expect(again.stdout).toContain('OpenTofu has validated the lock file and found no need for changes.');
    expect(await readFile(join(dir, '.terraform.lock.hcl'), 'utf8')).toMatch(
      /^# This file is maintained automatically by "tofu init"\./,
    );
  });

  it('restricts to the providers given', async () => {
    const r = await run(
      [
        '-flavor=terraform',
        'lock',
        `-fs-mirror=${mirror}`,
        '-platform=linux_amd64',
        'registry.example.test/acme/tools',
      ],
      dir,
    );
    expect(r.code).toBe(0);
    const lock = await readFile(join(dir, '.terraform.lock.hcl'), 'utf8');
    expect(lock).toContain('registry.example.test/acme/tools');
    expect(lock).not.toContain('acme/demo');
  });

  it('-json emits a version message first and typed events', async () => {
    const r = await run(['lock', '-json', `-fs-mirror=${mirror}`, '-platform=linux_amd64'], dir);
    expect(r.code).toBe(0);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines[0]).toMatchObject({ type: 'version', ui: '1.0', '@module': 'provkit.ui', '@level': 'info' });
    for (const l of lines) expect(l['@timestamp']).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}(Z|[+-]\d\d:\d\d)$/);
    expect(lines.filter((l) => l['type'] === 'package_fetch_complete')).toHaveLength(2);
    expect(lines.at(-1)).toMatchObject({ type: 'summary', changed: true });
  });
});

describe('provkit lock: bad input', () => {
  it.each([
    [['-platform=linux'], 'Invalid target platform'],
    [['-fs-mirror=a', '-net-mirror=https://m.example/'], 'Invalid installation method options'],
    [['-net-mirror=http://m.example/'], 'Invalid network mirror URL'],
    [['-fs-mirror=x', 'registry.example.test/acme/other'], 'Invalid provider argument'],
  ])('%j fails with %s and writes nothing', async (args, summary) => {
    const r = await run(['lock', ...args], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`Error: ${summary}`);
    expect(await readdir(dir)).toEqual(['main.tf']);
  });

  it('names the provider when the mirror lacks it, and leaves the old lock untouched', async () => {
    await writeFile(join(dir, '.terraform.lock.hcl'), '# old\n');
    const r = await run(['lock', `-fs-mirror=${join(mirror, 'config')}`, '-platform=linux_amd64'], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('registry.example.test/acme/demo');
    expect(await readFile(join(dir, '.terraform.lock.hcl'), 'utf8')).toBe('# old\n');
    expect((await readdir(dir)).sort()).toEqual(['.terraform.lock.hcl', 'main.tf']);
  });

  it('refuses a locked version that no longer meets the constraints', async () => {
    await writeFile(
      join(dir, '.terraform.lock.hcl'),
      '# This file is maintained automatically by "tofu init".\n# Manual edits may be lost in future updates.\n\nprovider "registry.example.test/acme/demo" {\n  version = "0.9.0"\n}\n',
    );
    const r = await run(['lock', `-fs-mirror=${mirror}`, '-platform=linux_amd64'], dir);
    expect(r.code).toBe(1);
    expect(r.stderr.replace(/\s+/g, ' ')).toContain(
      'locked provider registry.example.test/acme/demo 0.9.0 does not match configured version constraint ~> 1.0; must use tofu init -upgrade',
    );
  });
});
