// An interrupt of `provkit lock` and `provkit install` at a chosen moment, in-process: the run's signals come from an
// emitter (CliIO.signals, src/cli/io.ts) that the test fires from the output sink, as the line that
// follows a step is written, so which side of the lock file's write the interrupt falls on is certain,
// not a matter of timing. The rule (src/cli/interrupt.ts runInterruptible): an interrupt before the
// write stops the run, which exits 130 and says what it had already done (nothing; the lock files of
// the roots finished; the packages installed); an interrupt after the last write is too late to undo
// it: the outcome stands, exit 0, with the warning that the run was already complete.
// test/faults/signals.test.ts sends real signals to a child at fixed points of a registry run.
import { EventEmitter } from 'node:events';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { main } from '../../src/cli/main.js';
import type { SignalName } from '../../src/cli/io.js';

const MIRROR = fileURLToPath(new URL('../../mirror-fixtures/', import.meta.url));
const MAIN_TF = join(MIRROR, 'config/main.tf');
const DEMO = 'registry.example.test/acme/demo';
const ARGS = ['-flavor=terraform', 'lock', `-fs-mirror=${MIRROR}`, '-platform=linux_amd64'];
const LOCK = '.terraform.lock.hcl';
const ENV = { PROVKIT_HASH_STORE: 'off', PROVKIT_FLAVOR: '' };

let base: string;
/** The lock file of an uninterrupted run. */
let expected: string;
let n = 0;

/** A new directory holding the demo configuration in each of `roots` (`.`: itself). */
function project(roots: readonly string[] = ['.']): string {
  const dir = join(base, `p${n++}`);
  for (const root of roots) {
    mkdirSync(join(dir, root), { recursive: true });
    copyFileSync(MAIN_TF, join(dir, root, 'main.tf'));
  }
  return dir;
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  /** Whether the interrupt was sent (the line it waited for was written). */
  sent: boolean;
}

/** `provkit ARGS` in `cwd`, sending `signal` once, as the first stdout text that `when` accepts is written. */
async function runInterrupted(
  args: readonly string[],
  cwd: string,
  when: (text: string) => boolean,
  signal: SignalName = 'SIGINT',
): Promise<Run> {
  const signals = new EventEmitter();
  const run: Run = { code: -1, stdout: '', stderr: '', sent: false };
  run.code = await main([...args], {
    stdout: {
      write: (text: string) => {
        run.stdout += text;
        if (!run.sent && when(text)) {
          run.sent = true;
          signals.emit(signal);
        }
      },
    },
    stderr: { write: (text: string) => (run.stderr += text) },
    env: ENV,
    cwd,
    signals,
  });
  return run;
}

beforeAll(async () => {
  base = mkdtempSync(join(tmpdir(), 'provkit-interrupt-'));
  const dir = project();
  let out = '';
  const code = await main([...ARGS], {
    stdout: { write: (t: string) => (out += t) },
    stderr: { write: (t: string) => (out += t) },
    env: ENV,
    cwd: dir,
  });
  expect(code, out).toBe(0);
  expected = readFileSync(join(dir, LOCK), 'utf8');
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe('an interrupt of lock after the lock file was written', () => {
  it('one root module: the written file stands, exit 0, "already complete"', async () => {
    const dir = project();
    // "- Obtained … checksums" is said once the file is written (installer/lock-module.ts).
    const r = await runInterrupted(ARGS, dir, (t) => t.startsWith('- Obtained '));
    expect(r.sent).toBe(true);
    expect(readFileSync(join(dir, LOCK), 'utf8')).toBe(expected);
    expect(r.stderr).toBe(
      'Warning: provkit lock was already complete when the interrupt arrived; all changes are in place.\n',
    );
    expect(r.stdout).toContain('Success! Terraform has updated the lock file.');
    expect(r.code).toBe(0);
  });

  it('-recursive: every root written, the interrupt at the last root\'s line: exit 0, "already complete"', async () => {
    const dir = project(['a', 'b']);
    // Roots are reported in order, each after its file was written: b's line comes after both writes.
    const r = await runInterrupted([...ARGS, '-recursive'], dir, (t) => t.startsWith('- b: '), 'SIGTERM');
    expect(r.sent).toBe(true);
    expect(readFileSync(join(dir, 'a', LOCK), 'utf8')).toBe(expected);
    expect(readFileSync(join(dir, 'b', LOCK), 'utf8')).toBe(expected);
    expect(r.stderr).toBe(
      'Warning: provkit lock was already complete when the interrupt arrived; all changes are in place.\n',
    );
    expect(r.code).toBe(0);
  });

  it('-recursive -json: the warning is a diagnostic on the JSON stream', async () => {
    const dir = project(['a', 'b']);
    const r = await runInterrupted([...ARGS, '-recursive', '-json'], dir, (t) =>
      /"type":"lock_root".*"root":"b"/.test(t),
    );
    expect(r.sent).toBe(true);
    expect(readFileSync(join(dir, 'b', LOCK), 'utf8')).toBe(expected);
    expect(r.stderr).toBe('');
    const last = JSON.parse(r.stdout.trimEnd().split('\n').at(-1)!) as Record<string, unknown>;
    expect(last).toMatchObject({
      '@level': 'warn',
      type: 'diagnostic',
      diagnostic: { severity: 'warning', summary: 'Interrupted after completion', code: 'INTERRUPTED_AFTER_COMMIT' },
    });
    expect(r.code).toBe(0);
  });
});

describe('an interrupt of lock -recursive before any lock file was written', () => {
  it('stops every root: nothing written, exit 130, "nothing was changed"', async () => {
    const dir = project(['a', 'b']);
    // A root chooses its platforms before it fetches anything, so before any root can write.
    const r = await runInterrupted([...ARGS, '-recursive', '-json'], dir, (t) => t.includes('"type":"platforms",'));
    expect(r.sent).toBe(true);
    expect(existsSync(join(dir, 'a', LOCK))).toBe(false);
    expect(existsSync(join(dir, 'b', LOCK))).toBe(false);
    const last = JSON.parse(r.stdout.trimEnd().split('\n').at(-1)!) as Record<string, unknown>;
    expect(last).toMatchObject({
      '@level': 'error',
      type: 'diagnostic',
      diagnostic: { summary: 'Interrupted', detail: 'provkit lock was interrupted by SIGINT; nothing was changed.' },
    });
    expect(r.code).toBe(130);
  });
});

describe('an interrupt of install', () => {
  const INSTALL = ['install', `-fs-mirror=${MIRROR}`, '-platform=linux_amd64'];
  /** A project requiring acme/demo alone: one package, so what an interrupt leaves is certain. */
  const demoProject = (): string => {
    const dir = join(base, `p${n++}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'main.tf'),
      `terraform {\n  required_providers {\n    demo = {\n      source  = "${DEMO}"\n      version = "~> 1.0"\n    }\n  }\n}\n`,
    );
    return dir;
  };
  const installedDir = (dir: string): string => join(dir, '.terraform/providers', DEMO, '1.1.0/linux_amd64');

  it('after the package was installed, before the lock file: exit 130, the package named, no lock file', async () => {
    const dir = demoProject();
    // "- Installed …" is said once the package is in place, whole (installer/install.ts).
    const r = await runInterrupted(INSTALL, dir, (t) => t.startsWith('- Installed '));
    expect(r.sent).toBe(true);
    expect(existsSync(join(installedDir(dir), 'terraform-provider-demo_v1.1.0'))).toBe(true);
    expect(existsSync(join(dir, LOCK))).toBe(false);
    expect(r.stderr).toBe(
      'Error: provkit install was interrupted by SIGINT; 1 provider package installed before it is in place (each whole); the lock file was not changed.\n',
    );
    expect(r.code).toBe(130);
  });

  it('after the lock file was written: the outcome stands, exit 0, "already complete"', async () => {
    const dir = demoProject();
    // The lock file's summary line is written after the file.
    const r = await runInterrupted(INSTALL, dir, (t) => t.includes('has created a lock file'));
    expect(r.sent).toBe(true);
    expect(readFileSync(join(dir, LOCK), 'utf8')).toContain(`provider "${DEMO}"`);
    expect(r.stderr).toBe(
      'Warning: provkit install was already complete when the interrupt arrived; all changes are in place.\n',
    );
    expect(r.code).toBe(0);
  });
});
