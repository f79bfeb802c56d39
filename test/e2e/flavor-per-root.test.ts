// Every root module in its own flavor: `lock -recursive` and `verify
// -recursive` choose each root's flavor as a single run in that root would
// (src/cli/flavor.ts: `-flavor`, else PROVKIT_FLAVOR, else the root's lock
// file), and the summary says which roots used which. The README states
// that rule; the last test pins the README's sentence and each of its steps.
// provkit runs as a child process against a filesystem mirror of
// `hashicorp/null` packages, a provider whose short source names a
// different host in each flavor (registry.terraform.io or
// registry.opentofu.org).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { e2eWorkspace, flat, requiresTf, runCli, type E2eWorkspace } from '../support/e2e.js';
import { makeProviderZip, packageFilename } from '../support/servers/packages.js';

let w: E2eWorkspace;
let mirror: string;
/** What `terraform init` writes for a root requiring hashicorp/null 3.2.0 (linux_amd64), made once. */
let terraformLock: string;

const NULL = requiresTf({ null: 'hashicorp/null@3.2.0' });
const NULL_TERRAFORM_HOST = requiresTf({ null: 'registry.terraform.io/hashicorp/null@3.2.0' });

beforeAll(async () => {
  w = e2eWorkspace();
  mirror = w.project('mirror');
  const dir = join(mirror, 'registry.terraform.io', 'hashicorp', 'null');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, packageFilename('null', '3.2.0', 'linux_amd64')),
    await makeProviderZip('null', '3.2.0', 'linux_amd64'),
  );
  // The lock file terraform writes (provkit writes its bytes with -flavor=terraform; lock-write tests pin that).
  const seed = w.project('seed', { 'main.tf': NULL });
  const r = await runCli(['-flavor=terraform', 'lock', `-fs-mirror=${mirror}`, '-platform=linux_amd64'], {
    cwd: seed,
    env: w.env,
  });
  expect(r.code).toBe(0);
  terraformLock = readFileSync(join(seed, '.terraform.lock.hcl'), 'utf8');
  expect(terraformLock).toMatch(/^# This file is maintained automatically by "terraform init"\./);
});
afterAll(() => w.remove());

/** A tree whose roots envs/dev and envs/prod have lock files terraform wrote, and envs/new (explicit host) none. */
function tree(name: string): string {
  return w.project(name, {
    'envs/dev/main.tf': NULL,
    'envs/dev/.terraform.lock.hcl': terraformLock,
    'envs/prod/main.tf': NULL,
    'envs/prod/.terraform.lock.hcl': terraformLock,
    'envs/new/main.tf': NULL_TERRAFORM_HOST,
  });
}

describe('lock -recursive and verify -recursive: each root in its own flavor', () => {
  it('lock -recursive -check: roots whose lock files terraform wrote are checked as terraform, each root named with its flavor', async () => {
    const dir = w.project('check', {
      'envs/dev/main.tf': NULL,
      'envs/dev/.terraform.lock.hcl': terraformLock,
      'envs/prod/main.tf': NULL,
      'envs/prod/.terraform.lock.hcl': terraformLock,
    });
    const r = await runCli(['lock', '-recursive', '-check', `-fs-mirror=${mirror}`], { cwd: dir, env: w.env });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('- envs/dev: no changes');
    expect(r.stdout).toContain('- envs/prod: no changes');
    expect(r.stdout).toContain('\nFlavor: terraform for all 2 root modules.\n');
    expect(r.stdout).not.toContain('registry.opentofu.org');
  });

  it('lock -recursive on a tree whose roots disagree: each root locked in its own flavor, the summary says which', async () => {
    const dir = tree('mixed');
    const r = await runCli(['lock', '-recursive', `-fs-mirror=${mirror}`, '-platform=linux_amd64'], {
      cwd: dir,
      env: w.env,
    });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('\nFlavors: terraform for envs/dev, envs/prod; tofu for envs/new.\n');
    // The terraform roots keep terraform's file, byte for byte; the new root gets tofu's header.
    expect(readFileSync(join(dir, 'envs/dev/.terraform.lock.hcl'), 'utf8')).toBe(terraformLock);
    expect(readFileSync(join(dir, 'envs/prod/.terraform.lock.hcl'), 'utf8')).toBe(terraformLock);
    expect(readFileSync(join(dir, 'envs/new/.terraform.lock.hcl'), 'utf8')).toMatch(
      /^# This file is maintained automatically by "tofu init"\./,
    );

    // -json: each lock_root carries its flavor (and why), the summary the roots per flavor.
    const j = await runCli(['lock', '-recursive', '-check', `-fs-mirror=${mirror}`, '-json'], { cwd: dir, env: w.env });
    expect(j.code).toBe(0);
    const lines = j.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const roots = Object.fromEntries(lines.filter((l) => l['type'] === 'lock_root').map((l) => [l['root'], l]));
    expect(roots['envs/dev']).toMatchObject({
      flavor: 'terraform',
      flavor_reason: '.terraform.lock.hcl was written by "terraform init"',
    });
    expect(roots['envs/new']).toMatchObject({ flavor: 'tofu' });
    expect(lines.at(-1)).toMatchObject({
      type: 'summary',
      flavors: { terraform: ['envs/dev', 'envs/prod'], tofu: ['envs/new'] },
    });
    expect(w.tmpLeftovers()).toEqual([]);
  });

  it('verify -recursive: roots whose lock files terraform wrote verify as terraform', async () => {
    const dir = tree('verify');
    const r = await runCli(['verify', '-recursive'], { cwd: dir, env: w.env });
    // envs/new has no lock file: its one problem; the terraform roots have none.
    expect(r.stdout).toContain('- envs/dev: ok\n');
    expect(r.stdout).toContain('- envs/prod: ok\n');
    expect(r.stdout).toContain('- envs/new: 1 problem\n');
    expect(r.stdout).not.toContain('registry.opentofu.org');
    expect(r.stdout).toContain('\nFlavors: terraform for envs/dev, envs/prod; tofu for envs/new.\n');
    expect(r.code).toBe(1);
  });

  it('-flavor given: every root in that flavor, nothing inferred, no flavor sentence', async () => {
    const dir = tree('given');
    const r = await runCli(['-flavor=terraform', 'verify', '-recursive'], { cwd: dir, env: w.env });
    expect(r.stdout).not.toMatch(/Flavors?:/);
    expect(r.stdout).toContain('- envs/new: 1 problem\n');
    const t = await runCli(['-flavor=tofu', 'lock', '-recursive', '-check', `-fs-mirror=${mirror}`], {
      cwd: dir,
      env: w.env,
    });
    // As a single run with -flavor=tofu in envs/dev: hashicorp/null is registry.opentofu.org's, which the mirror lacks.
    expect(t.code).toBe(1);
    expect(flat(t.stderr)).toContain('registry.opentofu.org/hashicorp/null: no available releases');
  });
});

describe('the flavor rule, as the README states it', () => {
  const README = readFileSync(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8');

  it('README: -flavor, else PROVKIT_FLAVOR, else inferred from the lock file, else tofu; each step holds', async () => {
    expect(flat(README)).toContain(
      "The flavor of a run is `-flavor`, else `PROVKIT_FLAVOR`, else inferred from the project: terraform when the working directory's `.terraform.lock.hcl` was written by `terraform init` (its header) or lists only `registry.terraform.io` providers, tofu when `tofu init` wrote it; else `tofu`.",
    );
    const dir = w.project('rule', { 'main.tf': NULL, '.terraform.lock.hcl': terraformLock });
    const verify = (args: string[], env: Record<string, string> = {}) =>
      runCli([...args, 'verify', '-json'], { cwd: dir, env: { ...w.env, ...env } });
    const flavorOf = (stdout: string): { inferred: string | undefined; ok: boolean } => {
      const lines = stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      const note = lines.find((l) => l['type'] === 'flavor');
      return { inferred: note?.['flavor'] as string | undefined, ok: !stdout.includes('registry.opentofu.org') };
    };
    // Inferred from the lock file (and said so): terraform.
    expect(flavorOf((await verify([])).stdout)).toEqual({ inferred: 'terraform', ok: true });
    // PROVKIT_FLAVOR before the project: tofu, nothing inferred.
    expect(flavorOf((await verify([], { PROVKIT_FLAVOR: 'tofu' })).stdout)).toEqual({ inferred: undefined, ok: false });
    // -flavor before PROVKIT_FLAVOR.
    expect(flavorOf((await verify(['-flavor=terraform'], { PROVKIT_FLAVOR: 'tofu' })).stdout)).toEqual({
      inferred: undefined,
      ok: true,
    });
    // No lock file: the default, tofu.
    const bare = w.project('rule-bare', { 'main.tf': NULL });
    const b = await runCli(['verify', '-json'], { cwd: bare, env: w.env });
    expect(flavorOf(b.stdout)).toEqual({ inferred: undefined, ok: false });
  });
});
