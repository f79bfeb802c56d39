// Issue 14 (habits): the command lines of a terraform/tofu user work as that
// user expects. provkit runs as a child process; packages come from a
// filesystem mirror on disk (no server needed), colour is checked under a
// pseudo-terminal made by `script(1)`.
//
// terraform 1.11.4's own output for the flag error is recorded in
// test/fixtures/habits/terraform-1.11.4.txt (the commands are written there).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { BIN, e2eWorkspace, runCli, type E2eWorkspace, flat } from '../support/e2e.js';
import { makeProvider } from '../support/servers/packages.js';

const HOST = 'registry.example.test';
const CONFIG = `terraform {\n  required_providers {\n    demo = {\n      source  = "${HOST}/acme/demo"\n    }\n  }\n}\n`;
const LOCK_1_0 = `# This file is maintained automatically by "tofu init".\n# Manual edits may be lost in future updates.\n\nprovider "${HOST}/acme/demo" {\n  version = "1.0.0"\n}\n`;
const ESC = '\u001b[';

let w: E2eWorkspace;
let fsm: string;

beforeAll(async () => {
  w = e2eWorkspace();
  fsm = w.project('fs-mirror');
  const p = await makeProvider('acme', 'demo', ['1.0.0', '1.1.0'], ['linux_amd64', 'darwin_arm64']);
  const dir = join(fsm, HOST, 'acme', 'demo');
  mkdirSync(dir, { recursive: true });
  for (const v of p.versions)
    for (const pkg of v.packages)
      writeFileSync(join(dir, `terraform-provider-demo_${v.version}_${pkg.platform}.zip`), pkg.zip);
});
afterAll(() => w.remove());

/** Runs provkit under a pseudo-terminal (`script -qec`): stdout and stderr are the terminal. */
function runOnTerminal(args: string[], cwd: string, env: Record<string, string>): string {
  const quoted = ['node', BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  try {
    return execFileSync('script', ['-qec', quoted, '/dev/null'], {
      cwd,
      env: { PATH: process.env['PATH'] ?? '', TERM: 'xterm', ...env },
      encoding: 'utf8',
    });
  } catch (err) {
    return String((err as { stdout?: string }).stdout ?? '');
  }
}

describe('-no-color, NO_COLOR, colour only on a terminal', () => {
  it(
    'colours "Success!" on a terminal, and not with -no-color (any command position), NO_COLOR or a pipe',
    { timeout: 60_000 },
    async () => {
      const p = w.project('color', { 'main.tf': 'terraform {}\n' });
      expect(runOnTerminal(['lock'], p, w.env)).toContain(`${ESC}1m${ESC}32mSuccess!`);
      for (const args of [
        ['lock', '-no-color'],
        ['-no-color', 'lock'],
      ]) {
        const out = runOnTerminal(args, p, w.env);
        expect(out).toContain('Success!');
        expect(out).not.toContain(ESC);
      }
      const noColor = runOnTerminal(['lock'], p, { ...w.env, NO_COLOR: '1' });
      expect(noColor).toContain('Success!');
      expect(noColor).not.toContain(ESC);
      const piped = await runCli(['lock'], { cwd: p, env: w.env });
      expect(piped.code).toBe(0);
      expect(piped.stdout).toContain('Success!');
      expect(piped.stdout + piped.stderr).not.toContain(ESC);
    },
  );

  it('every command accepts -no-color', { timeout: 60_000 }, async () => {
    const p = w.project('no-color-all', { 'main.tf': 'terraform {}\n' });
    for (const args of [['lock'], ['mirror', 'out'], ['install'], ['verify'], ['hash', fsm], ['version']]) {
      const r = await runCli([...args, '-no-color'], { cwd: p, env: w.env });
      expect(r.stderr, args.join(' ')).not.toContain('flag provided but not defined');
      expect(r.code, args.join(' ')).toBe(0);
    }
    expect(w.tmpLeftovers()).toEqual([]);
  });
});

describe('the reference’s flags', () => {
  it('-chdir DIR (a space) works as -chdir=DIR', { timeout: 30_000 }, async () => {
    const p = w.project('chdir', { 'main.tf': CONFIG });
    for (const args of [
      ['-chdir', p, 'lock', `-fs-mirror=${fsm}`],
      ['lock', '-chdir', p, `-fs-mirror=${fsm}`],
    ]) {
      const r = await runCli([...args, '-platform=linux_amd64'], { cwd: w.project('elsewhere'), env: w.env });
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(readFileSync(join(p, '.terraform.lock.hcl'), 'utf8')).toContain('version = "1.1.0"');
    }
  });

  it('mirror -lock-file=false ignores the lock file (terraform 1.10+)', { timeout: 30_000 }, async () => {
    const p = w.project('lock-file-false', { 'main.tf': CONFIG, '.terraform.lock.hcl': LOCK_1_0 });
    const locked = await runCli(['mirror', `-fs-mirror=${fsm}`, '-platform=linux_amd64', 'with-lock'], {
      cwd: p,
      env: w.env,
    });
    expect(locked.code).toBe(0);
    expect(readdirSync(join(p, 'with-lock', HOST, 'acme', 'demo')).sort()).toEqual([
      '1.0.0.json',
      'index.json',
      'terraform-provider-demo_1.0.0_linux_amd64.zip',
    ]);
    const r = await runCli(['mirror', '-lock-file=false', `-fs-mirror=${fsm}`, '-platform=linux_amd64', 'no-lock'], {
      cwd: p,
      env: w.env,
    });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(readdirSync(join(p, 'no-lock', HOST, 'acme', 'demo')).sort()).toEqual([
      '1.1.0.json',
      'index.json',
      'terraform-provider-demo_1.1.0_linux_amd64.zip',
    ]);
    expect(readFileSync(join(p, '.terraform.lock.hcl'), 'utf8')).toBe(LOCK_1_0);
  });

  it(
    'install accepts -input=false (init’s), ignored; lock and mirror refuse it as terraform does',
    { timeout: 30_000 },
    async () => {
      const p = w.project('input', { 'main.tf': CONFIG });
      const r = await runCli(['install', '-input=false', `-fs-mirror=${fsm}`], { cwd: p, env: w.env });
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const lock = await runCli(['lock', '-input=false'], { cwd: p, env: w.env });
      expect(lock.code).toBe(1);
      expect(flat(lock.stderr)).toContain('Error parsing command-line flags: flag provided but not defined: -input');
    },
  );

  it('an empty -fs-mirror= is refused, not taken as "use the registry"', { timeout: 30_000 }, async () => {
    const p = w.project('empty-fs-mirror', { 'main.tf': CONFIG });
    for (const command of [['lock'], ['mirror', 'out'], ['install']]) {
      const r = await runCli([...command, '-fs-mirror='], { cwd: p, env: w.env });
      expect(r.code).toBe(1);
      expect(flat(r.stderr)).toContain('Error: Invalid -fs-mirror option');
      expect(flat(r.stderr)).toContain('its value is empty');
      expect(existsSync(join(p, '.terraform.lock.hcl'))).toBe(false);
    }
    expect(w.tmpLeftovers()).toEqual([]);
  });

  it('a mistyped flag: the reference’s error after the usage, and a suggestion', { timeout: 30_000 }, async () => {
    const p = w.project('typo', { 'main.tf': CONFIG });
    const r = await runCli(['lock', '-platfrom=linux_amd64'], { cwd: p, env: w.env });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    // terraform 1.11.4 (test/fixtures/habits/terraform-1.11.4.txt): an empty line, the usage, an empty line, the error.
    expect(r.stderr).toMatch(
      /^\nUsage: provkit \[global options\] lock \[options\] \[PROVIDER\.\.\.\]\n[\s\S]*\n\nError parsing command-line flags: flag provided but not defined: -platfrom\nDid you mean -platform\?\n\n$/,
    );
    const bad = await runCli(['mirror', '-lock-file=bogus', 'out'], { cwd: p, env: w.env });
    expect(bad.stderr).toContain(
      'Error parsing command-line flags: invalid boolean value "bogus" for -lock-file: parse error\n',
    );
    const missing = await runCli(['lock', '-platform'], { cwd: p, env: w.env });
    expect(missing.stderr).toContain('Error parsing command-line flags: flag needs an argument: -platform\n');
  });

  it('under -json a flag error is a diagnostic after the version message', { timeout: 30_000 }, async () => {
    const p = w.project('typo-json', { 'main.tf': CONFIG });
    const r = await runCli(['lock', '-json', '-platfrom=linux_amd64'], { cwd: p, env: w.env });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('');
    const lines = r.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => l['type'])).toEqual(['version', 'diagnostic']);
    expect(lines[1]!['diagnostic']).toEqual({
      severity: 'error',
      summary: 'Failed to parse command-line flags',
      detail: 'flag provided but not defined: -platfrom',
      code: 'INVALID_FLAGS',
      hint: 'Did you mean -platform?',
    });
  });
});

describe('the flavor follows the project', () => {
  const TF_HEADER =
    '# This file is maintained automatically by "terraform init".\n# Manual edits may be lost in future updates.\n';
  const TF_CONFIG =
    'terraform {\n  required_providers {\n    demo = {\n      source = "hashicorp/demo"\n    }\n  }\n}\n';
  let tfMirror: string;
  beforeAll(async () => {
    tfMirror = w.project('tf-mirror');
    const p = await makeProvider('hashicorp', 'demo', ['1.0.0'], ['linux_amd64']);
    const dir = join(tfMirror, 'registry.terraform.io', 'hashicorp', 'demo');
    mkdirSync(dir, { recursive: true });
    for (const v of p.versions)
      for (const pkg of v.packages)
        writeFileSync(join(dir, `terraform-provider-demo_${v.version}_${pkg.platform}.zip`), pkg.zip);
  });

  it('a lock file written by terraform init makes a terraform run, and says so', { timeout: 30_000 }, async () => {
    const p = w.project('tf-header', {
      'main.tf': TF_CONFIG,
      '.terraform.lock.hcl': `${TF_HEADER}\nprovider "registry.terraform.io/hashicorp/demo" {\n  version = "1.0.0"\n}\n`,
    });
    const r = await runCli(['lock', `-fs-mirror=${tfMirror}`, '-platform=linux_amd64'], { cwd: p, env: w.env });
    expect(r.stderr).toBe(
      'provkit: using the terraform flavor: .terraform.lock.hcl was written by "terraform init" (-flavor or PROVKIT_FLAVOR to choose).\n',
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Terraform has updated the lock file.');
    expect(readFileSync(join(p, '.terraform.lock.hcl'), 'utf8')).toMatch(
      /^# This file is maintained automatically by "terraform init"\.\n[\s\S]*provider "registry\.terraform\.io\/hashicorp\/demo"[\s\S]*h1:/,
    );
    // -json says it as a message after the version message.
    const j = await runCli(['lock', '-json', `-fs-mirror=${tfMirror}`, '-platform=linux_amd64'], {
      cwd: p,
      env: w.env,
    });
    const lines = j.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.slice(0, 2).map((l) => l['type'])).toEqual(['version', 'flavor']);
    expect(lines[1]).toMatchObject({
      flavor: 'terraform',
      reason: '.terraform.lock.hcl was written by "terraform init"',
    });
  });

  it('a lock file of registry.terraform.io providers only makes a terraform run', { timeout: 30_000 }, async () => {
    const p = w.project('tf-hosts', {
      'main.tf': TF_CONFIG,
      '.terraform.lock.hcl': `provider "registry.terraform.io/hashicorp/demo" {\n  version = "1.0.0"\n}\n`,
    });
    const r = await runCli(['lock', `-fs-mirror=${tfMirror}`, '-platform=linux_amd64'], { cwd: p, env: w.env });
    expect(flat(r.stderr)).toContain(
      'provkit: using the terraform flavor: every provider in .terraform.lock.hcl is from registry.terraform.io',
    );
    expect(r.code).toBe(0);
  });

  it(
    '-flavor and PROVKIT_FLAVOR still decide; nothing changed keeps the file’s header',
    { timeout: 30_000 },
    async () => {
      const p = w.project('tf-explicit', {
        'main.tf': TF_CONFIG.replace('"hashicorp/demo"', '"registry.terraform.io/hashicorp/demo"'),
        '.terraform.lock.hcl': `${TF_HEADER}\nprovider "registry.terraform.io/hashicorp/demo" {\n  version = "1.0.0"\n}\n`,
      });
      expect(
        (await runCli(['lock', `-fs-mirror=${tfMirror}`, '-platform=linux_amd64'], { cwd: p, env: w.env })).code,
      ).toBe(0);
      const before = readFileSync(join(p, '.terraform.lock.hcl'), 'utf8');
      for (const [args, env] of [
        [['-flavor=tofu'], {}],
        [[], { PROVKIT_FLAVOR: 'tofu' }],
      ] as const) {
        const r = await runCli([...args, 'lock', `-fs-mirror=${tfMirror}`, '-platform=linux_amd64'], {
          cwd: p,
          env: { ...w.env, ...env },
        });
        expect(r.stderr).toBe('');
        expect(r.code).toBe(0);
        expect(r.stdout).toContain('OpenTofu has validated the lock file and found no need for changes.');
        expect(readFileSync(join(p, '.terraform.lock.hcl'), 'utf8')).toBe(before);
      }
    },
  );
});
