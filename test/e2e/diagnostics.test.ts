// Issue 11 #6: every failure is a diagnostic naming the right file, exit 1,
// never a stack trace, nothing left behind. provkit runs as a child process
// (bin/provkit.js); the registry in another process.
//
// - output whose reader went away (`provkit … | head -1`): the run stops
//   quietly and dies of SIGPIPE as terraform does (`terraform providers lock
//   … | head -1` exits 141 and writes no lock file: see terraform-pipe.txt
//   beside this file), removing its temporary files;
// - `serve` with a key that does not belong to its certificate;
// - `mirror` into a path that is a regular file;
// - `bundle create`/`import` into a read-only directory, and onto a full disk:
//   the bundle/target is named, never the package being copied;
// - a corrupt package downloaded by `bundle create` is named by its URL,
//   never by its temporary copy.
//
// Read-only and full disks are small tmpfs mounts (root and mount(2) needed;
// where they cannot be mounted those tests are skipped, saying why). Root
// ignores permission bits, so a chmod 0555 directory would not be read-only
// for it: as root the read-only directory is a tmpfs mounted `ro`, otherwise
// a chmod 0555 directory.
import { execFileSync, spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { MIRROR } from '../bundles/helpers.js';
import { BIN, e2eWorkspace, requiresTf, runCli, type CliResult, type E2eWorkspace } from '../support/e2e.js';
import { startHost, type RemoteServer, type ServerHost } from '../support/remote/index.js';
import { makeProvider } from '../support/servers/packages.js';
import { testTls } from '../support/servers/tls.js';

/** Diagnostics are wrapped to the width (issue 14): text compared with its line breaks as spaces. */
const flat = (s: string): string => s.replace(/\s+/g, ' ');

const CONFIG = readFileSync(join(MIRROR, 'config/main.tf'), 'utf8');
const ALL_PLATFORMS = ['linux_amd64', 'linux_arm64', 'darwin_amd64', 'darwin_arm64', 'windows_amd64'].map(
  (p) => `-platform=${p}`,
);

let w: E2eWorkspace;
let host: ServerHost;
let reg: RemoteServer;
let mounts: string[] = [];
let mountProblem: string | undefined;

beforeAll(async () => {
  host = await startHost();
  const good = await makeProvider('acme', 'good', ['1.0.0'], ['linux_amd64']);
  // A package the registry signs and serves faithfully, that is no zip.
  const broken = {
    namespace: 'acme',
    type: 'broken',
    versions: [
      {
        version: '1.0.0',
        packages: [{ platform: 'linux_amd64', zip: Buffer.from('this is not a zip archive\n'.repeat(40)) }],
      },
    ],
  };
  reg = await host.registry({ providers: [good, broken] });
  w = e2eWorkspace(reg.caPath);
  // Can this process mount a tmpfs? (root with CAP_SYS_ADMIN, Linux)
  const probe = w.project('mount-probe');
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', probe], { stdio: 'pipe' });
    execFileSync('umount', [probe], { stdio: 'pipe' });
  } catch (err) {
    mountProblem = `cannot mount a tmpfs here (${err instanceof Error ? err.message.split('\n')[0] : String(err)})`;
  }
}, 60_000);
afterAll(async () => {
  for (const m of mounts.reverse()) {
    try {
      execFileSync('umount', [m], { stdio: 'ignore' });
    } catch {
      // Already gone.
    }
  }
  mounts = [];
  await host.close();
  w.remove();
});

/** A tmpfs of `size` at `dir` (created), mounted with `options`; unmounted in afterAll. */
function tmpfs(dir: string, size: string, options = ''): void {
  mkdirSync(dir, { recursive: true });
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}${options ? `,${options}` : ''}`, 'tmpfs', dir], {
    stdio: 'pipe',
  });
  mounts.push(dir);
}

/** A directory provkit cannot write into: a read-only tmpfs as root, else chmod 0555. Undefined (with the reason in `mountProblem`) when neither works. */
function readOnlyDir(dir: string): string | undefined {
  if (process.getuid?.() === 0) {
    if (mountProblem !== undefined) return undefined;
    tmpfs(dir, '64k', 'ro');
    return dir;
  }
  mkdirSync(dir, { recursive: true });
  chmodSync(dir, 0o555);
  return dir;
}

const noStack = (r: CliResult): void => {
  expect(r.stderr).not.toMatch(/^\s+at /m);
  expect(r.stderr).not.toMatch(/node:internal|Node\.js v|triggerUncaughtException/);
};

/** Runs provkit with stdout a pipe whose reading end is closed at once: its first write fails with EPIPE. */
function runWithClosedStdout(args: string[], cwd: string): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd,
      env: { PATH: process.env['PATH'] ?? '', ...w.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({
        code: code ?? 128 + (signal === 'SIGPIPE' ? 13 : signal === 'SIGKILL' ? 9 : 0),
        signal,
        stdout: '',
        stderr,
        timedOut: false,
      });
    });
  });
}

/** Runs a bash script with `args` as `$@` (stdout and stderr collected). */
function runShell(script: string, args: readonly string[], cwd: string): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script, 'bash', ...args], {
      cwd,
      env: { PATH: process.env['PATH'] ?? '', ...w.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code: code ?? 1, signal, stdout, stderr, timedOut: false }));
  });
}

describe('output whose reader went away (EPIPE)', () => {
  it('`provkit hash … | head -1` in a shell: the first line, then quietly killed by SIGPIPE (141), like terraform', async () => {
    const p = w.project('pipe-hash');
    const zip = join(MIRROR, 'registry.example.test/acme/demo/terraform-provider-demo_1.1.0_linux_amd64.zip');
    // More output than a pipe holds (about 300 KB), so the write is still pending when head exits.
    const args = Array.from({ length: 800 }, () => zip);
    const r = await runShell(
      `"${process.execPath}" "${BIN}" hash -json "$@" | head -2; echo "provkit exit: \${PIPESTATUS[0]}" >&2`,
      args,
      p,
    );
    // The version message, then the first path's.
    expect(r.stdout.split('\n')).toHaveLength(3);
    expect(JSON.parse(r.stdout.split('\n')[1]!)).toMatchObject({ zh: expect.stringMatching(/^zh:/) as unknown });
    expect(r.stderr).toBe('provkit exit: 141\n');
    expect(w.tmpLeftovers()).toEqual([]);
  });

  for (const [name, args, written] of [
    ['lock', ['lock', `-fs-mirror=${MIRROR}`, ...ALL_PLATFORMS], '.terraform.lock.hcl'],
    ['mirror', ['mirror', `-fs-mirror=${MIRROR}`, ...ALL_PLATFORMS, 'out'], 'out'],
    ['bundle create', ['bundle', 'create', `-fs-mirror=${MIRROR}`, ...ALL_PLATFORMS, 'b.tar'], 'b.tar'],
  ] as const) {
    it(`${name}: stops at the first failed write, writes nothing, leaves no temporary file, dies of SIGPIPE`, async () => {
      const p = w.project(`pipe-${name.replace(' ', '-')}`, { 'main.tf': CONFIG });
      const r = await runWithClosedStdout([...args], p);
      expect(r.stderr).toBe('');
      expect(r.signal).toBe('SIGPIPE');
      expect(existsSync(join(p, written))).toBe(false);
      expect(readdirSync(p)).toEqual(['main.tf']);
      expect(w.tmpLeftovers()).toEqual([]);
    });
  }
});

describe('temporary files go on every way out', () => {
  /**
   * `lock` against a registry whose archive stops halfway (the rest never
   * comes), started and waited for until its TMPDIR work directory exists:
   * the download is under way, its temporary file there.
   */
  async function stalledLock(
    name: string,
  ): Promise<{ child: ReturnType<typeof spawn>; done: Promise<CliResult>; project: string }> {
    await reg.clearFaults();
    await reg.setFault(
      await reg.path('archive', 'acme', 'good', '1.0.0', 'linux_amd64'),
      { kind: 'stall', phase: 'body' },
      'archives',
    );
    const project = w.project(name, { 'main.tf': requiresTf({ good: `${reg.host}/acme/good` }) });
    const child = spawn(process.execPath, [BIN, 'lock', '-platform=linux_amd64'], {
      cwd: project,
      env: { PATH: process.env['PATH'] ?? '', ...w.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const done = new Promise<CliResult>((resolve) =>
      child.on('close', (code, signal) =>
        resolve({ code: code ?? 128 + (signal === 'SIGHUP' ? 1 : 0), signal, stdout, stderr, timedOut: false }),
      ),
    );
    const deadline = Date.now() + 20_000;
    while (!w.tmpLeftovers().some((n) => n.startsWith('provkit-lock-'))) {
      if (Date.now() > deadline) throw new Error(`lock did not start: ${stderr}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    return { child, done, project };
  }

  it('SIGHUP (a closed terminal) interrupts like SIGINT: exit 129, TMPDIR clean, no lock file', async () => {
    const run = await stalledLock('hup');
    run.child.kill('SIGHUP');
    const r = await run.done;
    await reg.clearFaults();
    expect(r.code).toBe(129);
    expect(flat(r.stderr)).toContain('provkit lock was interrupted by SIGHUP; nothing was changed.');
    expect(readdirSync(run.project)).toEqual(['main.tf']);
    expect(w.tmpLeftovers()).toEqual([]);
  });

  it('a second signal exits at once, and the temporary directory still goes', async () => {
    const run = await stalledLock('two-signals');
    // Two different signals (the same one twice may be delivered once): the second finds the first being handled.
    run.child.kill('SIGINT');
    run.child.kill('SIGTERM');
    const r = await run.done;
    await reg.clearFaults();
    // The exit code of whichever signal was handled first (both arrive together).
    expect([130, 143]).toContain(r.code);
    expect(r.signal).toBeNull();
    noStack(r);
    expect(readdirSync(run.project)).toEqual(['main.tf']);
    expect(w.tmpLeftovers()).toEqual([]);
  });
});

describe('serve with a key that does not match its certificate', () => {
  it('a diagnostic naming both files, exit 1, no stack trace', async () => {
    const tls = await testTls();
    const p = w.project('serve-keys', {
      'cert.pem': tls.certPem,
      'other-key.pem': generateKeyPairSync('ec', { namedCurve: 'P-256' })
        .privateKey.export({ type: 'pkcs8', format: 'pem' })
        .toString(),
      'junk.pem': 'not pem\n',
    });
    mkdirSync(join(p, 'mirror'));
    const r = await runCli(['serve', '-listen=127.0.0.1:0', '-tls-cert=cert.pem', '-tls-key=other-key.pem', 'mirror'], {
      cwd: p,
      env: w.env,
      timeoutMs: 20_000,
    });
    expect(r.code).toBe(1);
    expect(flat(r.stderr)).toContain('Error: Invalid TLS certificate or key');
    expect(flat(r.stderr)).toContain(
      `${join(p, 'cert.pem')} and ${join(p, 'other-key.pem')} cannot be used together: the private key does not belong to the certificate`,
    );
    noStack(r);
    const junk = await runCli(
      ['serve', '-listen=127.0.0.1:0', '-tls-cert=junk.pem', '-tls-key=other-key.pem', 'mirror'],
      { cwd: p, env: w.env, timeoutMs: 20_000 },
    );
    expect(junk.code).toBe(1);
    expect(flat(junk.stderr)).toContain('a file is not PEM');
    noStack(junk);
  });
});

describe('mirror into a path that is a regular file', () => {
  for (const rel of ['afile', 'afile/sub']) {
    it(`${rel}: a diagnostic naming the file in the way, exit 1, the file untouched`, async () => {
      const p = w.project(`mirror-file-${rel.replace('/', '-')}`, { 'main.tf': CONFIG, afile: 'keep me\n' });
      const r = await runCli(['mirror', `-fs-mirror=${MIRROR}`, '-platform=linux_amd64', rel], { cwd: p, env: w.env });
      expect(r.code).toBe(1);
      expect(flat(r.stderr)).toContain('Error: Invalid mirror directory');
      expect(flat(r.stderr)).toContain(
        rel === 'afile'
          ? `cannot mirror into ${join(p, 'afile')}: it exists and is not a directory`
          : `cannot mirror into ${join(p, rel)}: ${join(p, 'afile')} is not a directory`,
      );
      noStack(r);
      expect(readFileSync(join(p, 'afile'), 'utf8')).toBe('keep me\n');
      expect(readdirSync(p).sort()).toEqual(['afile', 'main.tf']);
      expect(w.tmpLeftovers()).toEqual([]);
    });
  }
});

describe('a mirror nothing listens on', () => {
  // The bundled CLI: node-fetch's error is recognised there too, although the
  // bundle minifies its class names (src/net/node-fetch.ts `systemReason`).
  it('lock: the server once, its reason in words with a hint, no errno text, exit 1, nothing left', async () => {
    // A port nothing listens on: a server's in the other process, closed.
    const closed = await host.files({ files: {}, tls: true });
    const origin = closed.origin;
    await closed.close();
    const p = w.project('mirror-refused', { 'main.tf': CONFIG });
    const r = await runCli(['lock', `-net-mirror=${origin}/`, '-platform=linux_amd64'], {
      cwd: p,
      env: { ...w.env, PROVKIT_HTTP_TUNING: 'retries=0' },
    });
    expect(r.code).toBe(1);
    const text = flat(r.stderr);
    // One cause for every provider: said once (src/installer/causes.ts), Node's ECONNREFUSED in words.
    expect(text).toContain('Error: Cannot connect to the server');
    expect(text.split('Error:')).toHaveLength(2);
    expect(text).toContain(
      `Nothing accepts connections at ${origin.replace('https://', '')} (${origin}): connection refused.`,
    );
    expect(text).toContain('Hint: Check the host and port, and that the server is running.');
    expect(text).not.toMatch(/ECONNREFUSED|failed, reason/);
    noStack(r);
    expect(readdirSync(p)).toEqual(['main.tf']);
    expect(w.tmpLeftovers()).toEqual([]);
  });
});

describe('bundle create and import into a read-only directory', () => {
  it('create: names the bundle, exit 1, nothing left in TMPDIR', async (ctx) => {
    const p = w.project('ro-create', { 'main.tf': CONFIG });
    const ro = readOnlyDir(join(p, 'ro'));
    if (ro === undefined) ctx.skip(`read-only directory needs a tmpfs as root: ${mountProblem ?? ''}`);
    const r = await runCli(['bundle', 'create', `-fs-mirror=${MIRROR}`, '-platform=linux_amd64', 'ro/b.tar'], {
      cwd: p,
      env: w.env,
    });
    expect(r.code).toBe(1);
    expect(flat(r.stderr)).toMatch(
      new RegExp(
        `cannot write the bundle ${join(p, 'ro/b.tar').replace(/[./]/g, '\\$&')}: (read-only file system|permission denied)`,
      ),
    );
    noStack(r);
    expect(readdirSync(join(p, 'ro'))).toEqual([]);
    expect(w.tmpLeftovers()).toEqual([]);
  });

  it('import: names the target, exit 1, no staging anywhere', async (ctx) => {
    const p = w.project('ro-import', { 'main.tf': CONFIG });
    expect(
      (
        await runCli(['bundle', 'create', `-fs-mirror=${MIRROR}`, '-platform=linux_amd64', 'b.tar'], {
          cwd: p,
          env: w.env,
        })
      ).code,
    ).toBe(0);
    const ro = readOnlyDir(join(p, 'ro'));
    if (ro === undefined) ctx.skip(`read-only directory needs a tmpfs as root: ${mountProblem ?? ''}`);
    for (const target of ['ro', 'ro/mirror']) {
      const r = await runCli(['bundle', 'import', 'b.tar', target], { cwd: p, env: w.env });
      expect(r.code).toBe(1);
      expect(flat(r.stderr)).toMatch(
        new RegExp(
          `cannot import into ${join(p, target).replace(/[./]/g, '\\$&')}: (read-only file system|permission denied)`,
        ),
      );
      noStack(r);
    }
    expect(readdirSync(join(p, 'ro'))).toEqual([]);
    expect(readdirSync(p).sort()).toEqual(['b.tar', 'main.tf', 'ro']);
    expect(w.tmpLeftovers()).toEqual([]);
  });
});

describe('a full disk', () => {
  it('bundle create: ENOSPC names the bundle, not the package being copied; nothing left on the disk or in TMPDIR', async (ctx) => {
    if (mountProblem !== undefined) ctx.skip(mountProblem);
    const p = w.project('full-create', { 'main.tf': CONFIG });
    // 8 KiB: room for the start of the tar, not for two ~4 KB packages and their headers.
    tmpfs(join(p, 'disk'), '8k');
    const r = await runCli(
      ['bundle', 'create', `-fs-mirror=${MIRROR}`, '-platform=linux_amd64', '-platform=darwin_arm64', 'disk/b.tar'],
      { cwd: p, env: w.env },
    );
    expect(r.code).toBe(1);
    expect(flat(r.stderr)).toContain(`cannot write the bundle ${join(p, 'disk/b.tar')}: no space left on device`);
    expect(r.stderr).not.toContain(MIRROR);
    expect(r.stderr).not.toContain('.tmp');
    noStack(r);
    expect(readdirSync(join(p, 'disk'))).toEqual([]);
    expect(w.tmpLeftovers()).toEqual([]);
  });

  it('bundle import: ENOSPC names the target; the target is removed again, no staging left', async (ctx) => {
    if (mountProblem !== undefined) ctx.skip(mountProblem);
    const p = w.project('full-import', { 'main.tf': CONFIG });
    expect(
      (
        await runCli(
          ['bundle', 'create', `-fs-mirror=${MIRROR}`, '-platform=linux_amd64', '-platform=darwin_arm64', 'b.tar'],
          { cwd: p, env: w.env },
        )
      ).code,
    ).toBe(0);
    tmpfs(join(p, 'disk'), '8k');
    const r = await runCli(['bundle', 'import', 'b.tar', 'disk/mirror'], { cwd: p, env: w.env });
    expect(r.code).toBe(1);
    expect(flat(r.stderr)).toContain(`cannot import into ${join(p, 'disk/mirror')}: no space left on device`);
    expect(r.stderr).not.toContain('.provkit-staging-');
    noStack(r);
    expect(readdirSync(join(p, 'disk'))).toEqual([]);
    expect(w.tmpLeftovers()).toEqual([]);
  });
});

describe('a corrupt package is named by where it came from', () => {
  it('bundle create from a registry: the archive URL, never the temporary copy', async () => {
    const p = w.project('corrupt', { 'main.tf': requiresTf({ broken: `${reg.host}/acme/broken` }) });
    const url = `${reg.archivesOrigin}${await reg.path('archive', 'acme', 'broken', '1.0.0', 'linux_amd64')}`;
    const r = await runCli(['bundle', 'create', '-platform=linux_amd64', 'b.tar'], { cwd: p, env: w.env });
    expect(r.code).toBe(1);
    expect(flat(r.stderr)).toContain(`${url}: zip: not a valid zip file`);
    expect(r.stderr).not.toContain(w.tmp);
    noStack(r);
    expect(readdirSync(p)).toEqual(['main.tf']);
    expect(w.tmpLeftovers()).toEqual([]);
  });
});
