// One message per cause, no raw errno text: where one cause fails many
// providers or packages (a server that does not speak TLS, a registry that
// refuses access, a mirror directory that is not there, a target that cannot
// be written, a mistyped platform or template variable), provkit says the
// cause once, with its hint, and lists what it stopped; Node's and OpenSSL's
// texts (ENOENT, EACCES, EPROTO, ssl3_get_record…) never reach the user.
// provkit runs as a child process; the servers (a plain-http one, a fake OCI
// registry answering 401) run in another process.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { e2eWorkspace, flat, runCli, type CliResult, type E2eWorkspace } from '../support/e2e.js';
import { runInTerminal } from '../support/pty.js';
import { startHost, type RemoteServer, type ServerHost } from '../support/remote/index.js';

const MIRROR = fileURLToPath(new URL('../../mirror-fixtures/', import.meta.url));
const CONFIG =
  'terraform {\n  required_providers {\n    demo = {\n      source  = "registry.example.test/acme/demo"\n      version = "~> 1.0"\n    }\n    tools = {\n      source = "registry.example.test/acme/tools"\n    }\n  }\n}\n';
/** What the runtime or OpenSSL say, which a person should never read. */
const RAW =
  /\b(ENOENT|EACCES|EPERM|EROFS|EPROTO|ECONNREFUSED)\b|ssl3_get_record|deps\/openssl|wrong version number|lstat '/;

let host: ServerHost;
let plain: RemoteServer;
let refusing: RemoteServer;
let w: E2eWorkspace;
const mounts: string[] = [];

beforeAll(async () => {
  host = await startHost();
  plain = await host.files({ files: {}, tls: false });
  refusing = await host.oci({ repositories: {} });
  await refusing.setFault(/./, { kind: 'status', status: 401 });
  // Retries change nothing here and cost seconds.
  w = e2eWorkspace(refusing.caPath, { PROVKIT_HTTP_TUNING: 'retries=0' });
}, 60_000);
afterAll(async () => {
  for (const m of mounts.reverse()) {
    try {
      execFileSync('umount', [m], { stdio: 'ignore' });
    } catch {
      // Already gone.
    }
  }
  await host.close();
  w.remove();
});

const count = (text: string, needle: string): number => flat(text).split(needle).length - 1;

function noRawText(r: CliResult): void {
  expect(r.stderr).not.toMatch(RAW);
  expect(r.stdout).not.toMatch(RAW);
  expect(r.stderr).not.toMatch(/^\s+at /m);
}

describe('a cause shared by every provider is said once, with its hint', () => {
  it('an OCI registry on plain http: "does not speak TLS" once, naming the server, both providers listed', async () => {
    const p = w.project('plain-http', { 'main.tf': CONFIG });
    const r = await runCli(
      [
        'lock',
        `-oci-mirror=${plain.host}/providers/{namespace}/{type}`,
        '-platform=linux_amd64',
        '-platform=darwin_arm64',
      ],
      { cwd: p, env: w.env },
    );
    expect(r.code).toBe(1);
    expect(count(r.stderr, 'Error:')).toBe(1);
    expect(flat(r.stderr)).toContain('Error: The server does not speak TLS');
    expect(flat(r.stderr)).toContain(`The server at https://${plain.host} answered in plain text, not TLS`);
    expect(flat(r.stderr)).toContain('- registry.example.test/acme/demo (linux_amd64, darwin_arm64)');
    expect(flat(r.stderr)).toContain('- registry.example.test/acme/tools (linux_amd64, darwin_arm64)');
    expect(flat(r.stderr)).toContain(
      'Hint: Registries, network mirrors and OCI registries are reached over https only',
    );
    noRawText(r);
    expect(readdirSync(p)).toEqual(['main.tf']);
    expect(w.tmpLeftovers()).toEqual([]);
  });

  it('an OCI registry answering 401: said once with a hint about oci_credentials, for lock and for mirror oci://', async () => {
    const p = w.project('refused', { 'main.tf': CONFIG });
    const template = `${refusing.host}/providers/{namespace}/{type}`;
    const lock = await runCli(['lock', `-oci-mirror=${template}`, '-platform=linux_amd64'], { cwd: p, env: w.env });
    expect(lock.code).toBe(1);
    expect(count(lock.stderr, 'Error:')).toBe(1);
    expect(count(lock.stderr, 'HTTP 401')).toBe(1);
    expect(flat(lock.stderr)).toContain('Error: The OCI registry refused access');
    expect(flat(lock.stderr)).toContain(`Hint: Give credentials for ${refusing.host}: an oci_credentials`);
    expect(flat(lock.stderr)).toContain('- registry.example.test/acme/tools (linux_amd64)');
    noRawText(lock);
    // Publishing meets the same registry: the same one message (mirror oci:// once had no hint at all).
    const mirror = await runCli(['mirror', `-fs-mirror=${MIRROR}`, '-platform=linux_amd64', `oci://${template}`], {
      cwd: p,
      env: w.env,
    });
    expect(mirror.code).toBe(1);
    expect(count(mirror.stderr, 'Error: The OCI registry refused access')).toBe(1);
    expect(flat(mirror.stderr)).toContain('oci_credentials');
    noRawText(mirror);
    expect(w.tmpLeftovers()).toEqual([]);
  });

  it('an unknown variable in an OCI template is named with the one meant, before any request', async () => {
    const p = w.project('template-typo', { 'main.tf': CONFIG });
    const r = await runCli(['lock', `-oci-mirror=${plain.host}/providers/{nmespace}/{type}`], { cwd: p, env: w.env });
    expect(r.code).toBe(1);
    expect(count(r.stderr, 'Error:')).toBe(1);
    expect(flat(r.stderr)).toContain(
      'The -oci-mirror argument refers to {nmespace}, which is not a template variable: the variables are {hostname}, {namespace} and {type}. Did you mean {namespace}?',
    );
    expect(r.stderr).not.toContain('providers//');
    const mirror = await runCli(['mirror', `oci://${plain.host}/p/{namespace}/{tpye}`], { cwd: p, env: w.env });
    expect(mirror.code).toBe(1);
    expect(flat(mirror.stderr)).toContain('refers to {tpye}, which is not a template variable');
    expect(flat(mirror.stderr)).toContain('Did you mean {type}?');
  });
});

describe('a mirror directory that is not there: one "not found", no errno text', () => {
  it('lock -fs-mirror and verify -mirror name the directory once', async () => {
    const p = w.project('no-mirror', { 'main.tf': CONFIG });
    const missing = join(w.base, 'nonexistent');
    const lock = await runCli(['lock', `-fs-mirror=${missing}`, '-platform=linux_amd64', '-platform=darwin_arm64'], {
      cwd: p,
      env: w.env,
    });
    expect(lock.code).toBe(1);
    expect(count(lock.stderr, 'Error:')).toBe(1);
    expect(flat(lock.stderr)).toContain(
      `Error: Mirror directory not found The -fs-mirror directory ${missing} does not exist.`,
    );
    expect(lock.stderr).not.toContain('cannot search');
    noRawText(lock);
    const verify = await runCli(['verify', `-mirror=${missing}`], { cwd: p, env: w.env });
    expect(verify.code).toBe(1);
    expect(count(verify.stderr, 'Error:')).toBe(1);
    expect(flat(verify.stderr)).toContain(`The -mirror directory ${missing} does not exist.`);
    expect(verify.stdout + verify.stderr).not.toContain('has no package of this version');
    noRawText(verify);
  });
});

describe('a mirror target that cannot be written', () => {
  it('one diagnostic naming the directory, with a hint; no temporary name, no "lock file"', async (ctx) => {
    const ro = join(w.base, 'read-only');
    mkdirSync(ro, { recursive: true });
    if (process.getuid?.() === 0) {
      // Root ignores permission bits: a read-only tmpfs.
      try {
        execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k,ro', 'tmpfs', ro], { stdio: 'pipe' });
        mounts.push(ro);
      } catch (err) {
        ctx.skip(`a read-only directory needs a tmpfs as root: ${String(err).split('\n')[0] ?? ''}`);
      }
    } else chmodSync(ro, 0o555);
    const p = w.project('ro-target', { 'main.tf': CONFIG });
    for (const target of [ro, join(ro, 'sub')]) {
      const r = await runCli(['mirror', `-fs-mirror=${MIRROR}`, '-platform=linux_amd64', target], {
        cwd: p,
        env: w.env,
      });
      expect(r.code).toBe(1);
      expect(count(r.stderr, 'Error:')).toBe(1);
      expect(flat(r.stderr)).toContain('Error: Cannot write into the mirror directory');
      expect(flat(r.stderr)).toMatch(
        new RegExp(
          `Cannot mirror into ${target.replace(/[./]/g, '\\$&')}: (read-only file system|permission denied)\\.`,
        ),
      );
      expect(flat(r.stderr)).toMatch(
        /Hint: (The directory is on a read-only file system|This user may not create files)/,
      );
      expect(r.stderr).not.toMatch(/lock file|\.new\b|provkit-mirror\.lock/);
      noRawText(r);
      expect(existsSync(join(ro, 'sub'))).toBe(false);
    }
    expect(w.tmpLeftovers()).toEqual([]);
  });
});

describe('a mistyped -platform: one diagnostic with the platform it was meant to be', () => {
  it('before any work: no fetching, no per-provider paragraphs', async () => {
    const p = w.project('platform-typo', { 'main.tf': CONFIG });
    const r = await runCli(['lock', `-fs-mirror=${MIRROR}`, '-platform=linux_amd46'], { cwd: p, env: w.env });
    expect(r.code).toBe(1);
    expect(count(r.stderr, 'Error:')).toBe(1);
    expect(flat(r.stderr)).toContain(
      'Error: Invalid target platform The string "linux_amd46" given in the -platform option is not a platform providers are built for. Did you mean "linux_amd64"?',
    );
    expect(r.stdout).not.toContain('Fetching');
    expect(readdirSync(p)).toEqual(['main.tf']);
  });
});

describe('lock -recursive shows each root’s diagnostics as a single lock does', () => {
  const tree = (): string =>
    w.project('tree', {
      'envs/dev/main.tf': CONFIG,
      'envs/prod/main.tf':
        'terraform {\n  required_providers {\n    demo = {\n      source = "registry.example.test/acme/demo"\n    }\n  }\n  bogus = 1\n}\n',
    });

  it('with the source lines of the file, not "(source code not available)"', async () => {
    const dir = tree();
    const r = await runCli(['lock', '-recursive', `-fs-mirror=${MIRROR}`, '-platform=linux_amd64'], {
      cwd: dir,
      env: w.env,
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('  on envs/prod/main.tf line 7, in terraform:\n   7:   bogus = 1\n');
    expect(r.stderr).not.toContain('source code not available');
    expect(r.stdout).toContain('- envs/dev: lock file created');
  });

  it('boxed on a terminal', { timeout: 60_000 }, async () => {
    const dir = join(w.base, 'tree');
    const t = await runInTerminal(['lock', '-recursive', `-fs-mirror=${MIRROR}`, '-platform=linux_amd64'], {
      cwd: dir,
      env: w.env,
      columns: 100,
    });
    expect(t.code).toBe(1);
    expect(t.after).toContain('│ Error: Unsupported argument');
    expect(t.after).toContain('│   on envs/prod/main.tf line 7, in terraform:');
    expect(t.after).toContain('│    7:   bogus = 1');
  });
});

describe('bundle import of a delta bundle', () => {
  it('into a directory without its base: imported, with a warning naming the packages the base holds', async () => {
    const p = w.project('delta', { 'main.tf': CONFIG });
    const mirror = `-fs-mirror=${MIRROR}`;
    const base = await runCli(['bundle', 'create', mirror, '-platform=linux_amd64', 'base.tar'], {
      cwd: p,
      env: w.env,
    });
    expect(base.code).toBe(0);
    const delta = await runCli(
      ['bundle', 'create', mirror, '-platform=linux_amd64', '-platform=darwin_arm64', '-since=base.tar', 'delta.tar'],
      { cwd: p, env: w.env },
    );
    expect(delta.code).toBe(0);
    const alone = await runCli(['bundle', 'import', 'delta.tar', 'alone'], { cwd: p, env: w.env });
    expect(alone.code).toBe(0);
    const text = flat(alone.stdout + alone.stderr);
    expect(text).toContain("Warning: The delta bundle's base is missing");
    expect(text).toContain('is a delta bundle: it leaves out the packages of the bundle it was made against');
    expect(text).toContain('/delta/alone does not hold these 2:');
    expect(text).toContain('- registry.example.test/acme/demo/terraform-provider-demo_1.1.0_linux_amd64.zip');
    expect(text).toContain('- registry.example.test/acme/tools/terraform-provider-tools_0.3.0_linux_amd64.zip');
    expect(text).toContain('Hint: Import the bundle it was made against');
    // With its base imported first, nothing is missing and nothing is said.
    expect((await runCli(['bundle', 'import', 'base.tar', 'both'], { cwd: p, env: w.env })).code).toBe(0);
    const both = await runCli(['bundle', 'import', 'delta.tar', 'both'], { cwd: p, env: w.env });
    expect(both.code).toBe(0);
    expect(both.stdout + both.stderr).not.toContain('Warning');
    expect(w.tmpLeftovers()).toEqual([]);
  });
});
