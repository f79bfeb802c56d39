// Issue 12 #3: one decision whether `lock` writes a root's lock file, for a
// single root and for every root of `lock -recursive`. provkit runs as a
// child process; packages come from a filesystem mirror on disk.
//
// The terraform-written lock file is written by `provkit -flavor=terraform
// lock`, whose bytes are terraform 1.11.4's (test/e2e/lock-recursive.test.ts
// compares them with the lock files terraform wrote, test/fixtures/recursive/).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { e2eWorkspace, runCli, type E2eWorkspace } from '../support/e2e.js';
import { makeProvider } from '../support/servers/packages.js';

const TF_HEADER =
  '# This file is maintained automatically by "terraform init".\n# Manual edits may be lost in future updates.\n';
const TOFU_HEADER =
  '# This file is maintained automatically by "tofu init".\n# Manual edits may be lost in future updates.\n';
// The host spelt out: the same provider for both flavors.
const CONFIG =
  'terraform {\n  required_providers {\n    demo = {\n      source = "registry.terraform.io/hashicorp/demo"\n    }\n  }\n}\n';

let w: E2eWorkspace;
let fsMirror: string;

beforeAll(async () => {
  w = e2eWorkspace();
  const mirror = w.project('fs-mirror');
  const p = await makeProvider('hashicorp', 'demo', ['1.0.0'], ['linux_amd64']);
  const dir = join(mirror, 'registry.terraform.io', 'hashicorp', 'demo');
  mkdirSync(dir, { recursive: true });
  for (const v of p.versions)
    for (const pkg of v.packages)
      writeFileSync(join(dir, `terraform-provider-demo_${v.version}_${pkg.platform}.zip`), pkg.zip);
  fsMirror = `-fs-mirror=${mirror}`;
});
afterAll(() => w.remove());

const lockOf = (dir: string): string | undefined =>
  existsSync(join(dir, '.terraform.lock.hcl')) ? readFileSync(join(dir, '.terraform.lock.hcl'), 'utf8') : undefined;

describe('lock -recursive keeps an unchanged lock file of the other flavor as lock does', () => {
  it(
    'a root whose terraform-written lock has nothing new stays byte-identical; the others are written with this flavor’s header',
    { timeout: 60_000 },
    async () => {
      const tree = w.project('tree', { 'kept/main.tf': CONFIG, 'changed/main.tf': CONFIG, 'new/main.tf': CONFIG });
      // kept/: the lock terraform writes for this configuration and platform.
      const tf = await runCli(['-flavor=terraform', 'lock', fsMirror, '-platform=linux_amd64'], {
        cwd: join(tree, 'kept'),
        env: w.env,
      });
      expect(tf.code).toBe(0);
      const kept = lockOf(join(tree, 'kept'))!;
      expect(kept.startsWith(TF_HEADER)).toBe(true);
      expect(kept).toContain('"h1:');
      // changed/: terraform's header, but no hashes yet: the run adds the h1:.
      const changedBefore = `${TF_HEADER}\nprovider "registry.terraform.io/hashicorp/demo" {\n  version = "1.0.0"\n}\n`;
      writeFileSync(join(tree, 'changed', '.terraform.lock.hcl'), changedBefore);

      const r = await runCli(['-flavor=tofu', 'lock', '-recursive', fsMirror, '-platform=linux_amd64'], {
        cwd: tree,
        env: w.env,
      });
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      // The unchanged file keeps terraform's bytes, header included, as a single `lock` keeps them
      // (test/e2e/habits.test.ts, issue 14 #2).
      expect(lockOf(join(tree, 'kept'))).toBe(kept);
      // The other two are what this flavor writes: the same entry under OpenTofu's header.
      const body = kept.slice(TF_HEADER.length);
      expect(lockOf(join(tree, 'changed'))).toBe(TOFU_HEADER + body);
      expect(lockOf(join(tree, 'new'))).toBe(TOFU_HEADER + body);
      expect(r.stdout).toContain('- kept: no changes (1 provider');
      expect(r.stdout).toContain('- changed: lock file updated (1 provider');
      expect(r.stdout).toContain('- new: lock file created (1 provider');
      expect(r.stdout).toContain('(1 unchanged, 1 updated, 1 created)');
      expect(w.tmpLeftovers()).toEqual([]);

      // A single lock in each root decides the same: nothing is rewritten.
      for (const root of ['kept', 'changed', 'new']) {
        const before = lockOf(join(tree, root));
        const one = await runCli(['-flavor=tofu', 'lock', fsMirror, '-platform=linux_amd64'], {
          cwd: join(tree, root),
          env: w.env,
        });
        expect(one.code).toBe(0);
        expect(one.stdout).toContain('OpenTofu has validated the lock file and found no need for changes.');
        expect(lockOf(join(tree, root))).toBe(before);
      }
      expect(w.tmpLeftovers()).toEqual([]);
    },
  );

  it(
    '-check agrees with the write: the kept terraform-written lock is up to date, single and recursive',
    { timeout: 60_000 },
    async () => {
      const tree = w.project('check-tree', { 'kept/main.tf': CONFIG });
      const tf = await runCli(['-flavor=terraform', 'lock', fsMirror, '-platform=linux_amd64'], {
        cwd: join(tree, 'kept'),
        env: w.env,
      });
      expect(tf.code).toBe(0);
      const kept = lockOf(join(tree, 'kept'));
      const one = await runCli(['-flavor=tofu', 'lock', '-check', fsMirror, '-platform=linux_amd64'], {
        cwd: join(tree, 'kept'),
        env: w.env,
      });
      expect(one.stderr).toBe('');
      expect(one.stdout).toContain('.terraform.lock.hcl is up to date.');
      expect(one.code).toBe(0);
      const all = await runCli(['-flavor=tofu', 'lock', '-recursive', '-check', fsMirror, '-platform=linux_amd64'], {
        cwd: tree,
        env: w.env,
      });
      expect(all.stderr).toBe('');
      expect(all.stdout).toContain('- kept: no changes (1 provider');
      expect(all.code).toBe(0);
      expect(lockOf(join(tree, 'kept'))).toBe(kept);
      expect(w.tmpLeftovers()).toEqual([]);
    },
  );
});
