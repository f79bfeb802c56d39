// Names from outside and files planted in a tree (docs/reliability.md, "Names
// from outside, text to the terminal" and "Files provkit reads"): a platform
// that is not a plain name is refused wherever it comes from (a policy file,
// -platform, a mirror's or a registry's answer) and nothing is written; a
// root module's directory name cannot forge a line; caches are never
// world-writable, whatever the umask; a FIFO or a device where a
// configuration file should be is named and refused at once.
//
// provkit runs as a child process; the registry and the hostile mirror are in
// another process (test/support/remote). One host and one workspace for the file.
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { FIXTURE_MIRROR } from '../fixtures/recursive/cases.js';
import { e2eWorkspace, flat, requiresTf, runCli, type E2eWorkspace } from '../support/e2e.js';
import { startHost, type RemoteServer, type ServerHost } from '../support/remote/index.js';
import { fixtureProviders, makeProviderZip, packageFilename } from '../support/servers/packages.js';

/** Platforms that climb out of a mirror target (packed: a file name; unpacked: a directory). */
const ESCAPE_PACKED = 'x/../../../../../ESCAPED/evil_amd64';
const ESCAPE_UNPACKED = 'a_b/../../../../../../../victim/keep';

let host: ServerHost;
let reg: RemoteServer;
/** A network mirror and a registry that answer with names that are not names (static JSON). */
let hostile: RemoteServer;
let w: E2eWorkspace;

const MAIN = requiresTf({ demo: 'registry.example.test/acme/demo@1.1.0' });

beforeAll(async () => {
  host = await startHost();
  reg = await host.registry({ providers: await fixtureProviders() });
  const zip = await makeProviderZip('demo', '1.1.0', 'linux_amd64');
  const dir = '/mirror/registry.example.test/acme/demo';
  const archive = { url: packageFilename('demo', '1.1.0', 'linux_amd64'), hashes: [] };
  hostile = await host.files({
    contentType: 'application/json',
    files: {
      // A network mirror that answers for every platform asked, names that are not names included.
      [`${dir}/index.json`]: JSON.stringify({ versions: { '1.1.0': {} } }),
      [`${dir}/1.1.0.json`]: JSON.stringify({
        archives: { linux_amd64: archive, [ESCAPE_PACKED]: archive, [ESCAPE_UNPACKED]: archive },
      }),
      [`${dir}/${packageFilename('demo', '1.1.0', 'linux_amd64')}`]: zip,
      // One whose archive URL's last segment climbs out of the download directory.
      '/climb/registry.example.test/acme/demo/index.json': JSON.stringify({ versions: { '1.1.0': {} } }),
      '/climb/registry.example.test/acme/demo/1.1.0.json': JSON.stringify({
        archives: { linux_amd64: { url: '..%2F..%2F..%2Fescaped.zip', hashes: [] } },
      }),
      '/climb/registry.example.test/acme/demo/../../../escaped.zip': zip,
      // A registry whose versions list a platform that is not a name.
      '/.well-known/terraform.json': JSON.stringify({ 'providers.v1': '/v1/providers/' }),
      '/v1/providers/acme/demo/versions': JSON.stringify({
        versions: [
          {
            version: '1.1.0',
            protocols: ['5.0'],
            platforms: [
              { os: 'linux', arch: 'amd64' },
              { os: 'x/../../ESCAPED', arch: 'amd64' },
            ],
          },
        ],
      }),
    },
  });
  w = e2eWorkspace(reg.caPath);
}, 60_000);
afterAll(async () => {
  await host.close();
  w.remove();
});

/** Paths under `root` (relative) whose name is `name`. */
function findNamed(root: string, name: string, rel = ''): string[] {
  const out: string[] = [];
  for (const e of readdirSync(join(root, rel), { withFileTypes: true })) {
    const path = rel === '' ? e.name : `${rel}/${e.name}`;
    if (e.name === name) out.push(path);
    if (e.isDirectory() && !e.isSymbolicLink()) out.push(...findNamed(root, name, path));
  }
  return out;
}

describe('a platform that is not a plain name is refused where it enters, and nothing is written', () => {
  it('provkit.hcl platform that climbs out of the mirror target: the file and the platform named, no file anywhere', async () => {
    const p = w.project('policy-packed', {
      'main.tf': MAIN,
      'provkit.hcl': `platforms = ["linux_amd64", "${ESCAPE_PACKED}"]\n`,
    });
    const target = join(p, 'target');
    const r = await runCli(['mirror', `-net-mirror=${hostile.origin}/mirror/`, target], { cwd: p, env: w.env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('Invalid target platform');
    expect(r.stderr).toContain('on provkit.hcl line 1');
    expect(flat(r.stderr)).toContain(
      `The string "${ESCAPE_PACKED}" is not a valid target platform: OS portion must consist of lowercase letters and digits.`,
    );
    expect(r.stderr.match(/Invalid target platform/g)).toHaveLength(1);
    expect(existsSync(target)).toBe(false);
    expect(findNamed(w.base, 'ESCAPED')).toEqual([]);
    expect(w.tmpLeftovers()).toEqual([]);
  });

  it('-layout=unpacked with a policy platform that names a directory elsewhere: that directory is left alone', async () => {
    const victim = join(w.base, 'victim', 'keep');
    mkdirSync(victim, { recursive: true });
    writeFileSync(join(victim, 'precious.txt'), 'keep me\n');
    const p = w.project('policy-unpacked', {
      'main.tf': MAIN,
      'provkit.hcl': `platforms = ["${ESCAPE_UNPACKED}"]\n`,
    });
    const target = join(p, 'target');
    const r = await runCli(['mirror', '-layout=unpacked', `-net-mirror=${hostile.origin}/mirror/`, target], {
      cwd: p,
      env: w.env,
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('on provkit.hcl line 1');
    expect(flat(r.stderr)).toContain(
      `The string "${ESCAPE_UNPACKED}" is not a valid target platform: architecture portion must consist of lowercase letters and digits.`,
    );
    expect(readdirSync(victim)).toEqual(['precious.txt']);
    expect(existsSync(target)).toBe(false);
  });

  it('-platform with control characters: one diagnostic quoting it as %q does, no escape sequence printed', async () => {
    const p = w.project('flag-controls', { 'main.tf': MAIN });
    const r = await runCli(['lock', `-fs-mirror=${FIXTURE_MIRROR}`, '-platform=linux_amd64\u001b]0;pwned\u0007'], {
      cwd: p,
      env: w.env,
    });
    expect(r.code).toBe(1);
    expect(flat(r.stderr)).toContain(
      'The string "linux_amd64\\x1b]0;pwned\\a" given in the -platform option is not a valid target platform: architecture portion must consist of lowercase letters and digits.',
    );
    expect(r.stderr.match(/Invalid target platform/g)).toHaveLength(1);
    expect(r.stdout + r.stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f]/);
    expect(existsSync(join(p, '.terraform.lock.hcl'))).toBe(false);
  });

  it("a network mirror's VERSION.json listing a platform that is not a name is refused, naming the URL", async () => {
    const p = w.project('mirror-answer', { 'main.tf': MAIN });
    const r = await runCli(['lock', `-net-mirror=${hostile.origin}/mirror/`, '-platform=linux_amd64'], {
      cwd: p,
      env: w.env,
    });
    expect(r.code).toBe(1);
    expect(flat(r.stderr)).toContain(
      `provider mirror ${hostile.origin}/mirror/ returned an invalid platform "${ESCAPE_PACKED}" in the "archives" of registry.example.test/acme/demo 1.1.0`,
    );
    expect(existsSync(join(p, '.terraform.lock.hcl'))).toBe(false);
  });

  it('an archive URL whose file name climbs out of the download directory is refused; nothing lands outside it', async () => {
    const p = w.project('mirror-climb', { 'main.tf': MAIN });
    const r = await runCli(['lock', `-net-mirror=${hostile.origin}/climb/`, '-platform=linux_amd64'], {
      cwd: p,
      env: w.env,
    });
    expect(r.code).toBe(1);
    expect(flat(r.stderr)).toContain('provider mirror returned an archive URL whose file name "../../../escaped.zip"');
    expect(findNamed(w.base, 'escaped.zip')).toEqual([]);
    expect(w.tmpLeftovers()).toEqual([]);
  });

  it("a registry's versions listing a platform that is not a name is refused (-all-platforms would lock it)", async () => {
    const p = w.project('registry-answer', { 'main.tf': requiresTf({ demo: `${hostile.host}/acme/demo` }) });
    const r = await runCli(['lock', '-all-platforms', '-platform=linux_amd64'], {
      cwd: p,
      env: { ...w.env, SSL_CERT_FILE: hostile.caPath },
    });
    expect(r.code).toBe(1);
    expect(flat(r.stderr)).toContain('registry response includes invalid platform "x/../../ESCAPED_amd64"');
    expect(existsSync(join(p, '.terraform.lock.hcl'))).toBe(false);
  });
});

describe("a root module's directory name is one escaped line of output", () => {
  const FORGED = 'a\n- envs/FORGED: no changes';

  it('lock -recursive, -check and verify -recursive print the name escaped: no forged line', async () => {
    const p = w.project('forged-roots', { [`envs/${FORGED}/main.tf`]: MAIN, 'envs/ok/main.tf': MAIN });
    const base = [`-fs-mirror=${FIXTURE_MIRROR}`, '-platform=linux_amd64'];
    const runs = [
      await runCli(['lock', '-recursive', ...base], { cwd: p, env: w.env }),
      await runCli(['lock', '-recursive', '-check', ...base], { cwd: p, env: w.env }),
      await runCli(['verify', '-recursive'], { cwd: p, env: w.env }),
    ];
    for (const r of runs) {
      expect(r.code).toBe(0);
      const lines = r.stdout.split('\n');
      expect(lines.filter((l) => l.startsWith('- envs/FORGED'))).toEqual([]);
      expect(lines.some((l) => l.startsWith('- envs/a\\n- envs/FORGED: no changes: '))).toBe(true);
    }
    expect(existsSync(join(p, 'envs', FORGED, '.terraform.lock.hcl'))).toBe(true);
  });
});

describe('the hash store and the signature cache are never group- or world-writable', () => {
  it('under umask 000: directories 0755 (a store left 0777 by an earlier run too), files 0644', async () => {
    const store = join(w.base, 'store-umask');
    mkdirSync(store);
    chmodSync(store, 0o777);
    const p = w.project('umask', { 'main.tf': requiresTf({ demo: `${reg.host}/acme/demo@1.1.0` }) });
    const r = await runCli(['lock', '-platform=linux_amd64', '-platform=darwin_arm64'], {
      cwd: p,
      env: { ...w.env, PROVKIT_HASH_STORE: store },
      umask: 0o000,
    });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const modes: Record<string, string> = {};
    const walk = (rel: string): void => {
      const abs = join(store, rel);
      modes[rel === '' ? '.' : rel] = (lstatSync(abs).mode & 0o777).toString(8);
      if (statSync(abs).isDirectory()) for (const n of readdirSync(abs)) walk(rel === '' ? n : `${rel}/${n}`);
    };
    walk('');
    const dirs = Object.entries(modes).filter(([k]) => statSync(join(store, k)).isDirectory());
    const files = Object.entries(modes).filter(([k]) => !statSync(join(store, k)).isDirectory());
    expect(dirs.map(([k]) => k)).toContain('signatures');
    expect(files.length).toBeGreaterThanOrEqual(3); // two store entries and a signature check
    expect(Object.fromEntries(dirs)).toEqual(Object.fromEntries(dirs.map(([k]) => [k, '755'])));
    expect(Object.fromEntries(files)).toEqual(Object.fromEntries(files.map(([k]) => [k, '644'])));
  });
});

describe('a FIFO or a device where a file provkit reads should be is refused at once, naming it', () => {
  const mkfifo = (path: string): void => {
    execFileSync('mkfifo', [path]);
  };

  it('main.tf -> /dev/zero, a FIFO main.tf in a tree, a FIFO lock file, provkit.hcl -> /dev/zero', async () => {
    const lock = ['lock', `-fs-mirror=${FIXTURE_MIRROR}`, '-platform=linux_amd64'];
    const zero = w.project('dev-zero');
    symlinkSync('/dev/zero', join(zero, 'main.tf'));
    const tree = w.project('fifo-tree', { 'envs/ok/main.tf': MAIN });
    mkdirSync(join(tree, 'envs', 'planted'));
    mkfifo(join(tree, 'envs', 'planted', 'main.tf'));
    const lockFifo = w.project('fifo-lock', { 'main.tf': MAIN });
    mkfifo(join(lockFifo, '.terraform.lock.hcl'));
    const policy = w.project('zero-policy', { 'main.tf': MAIN });
    symlinkSync('/dev/zero', join(policy, 'provkit.hcl'));

    const cases = [
      { cwd: zero, args: lock, file: 'main.tf', kind: 'a character device' },
      { cwd: tree, args: [...lock, '-recursive'], file: 'envs/planted/main.tf', kind: 'a FIFO (named pipe)' },
      { cwd: lockFifo, args: lock, file: '.terraform.lock.hcl', kind: 'a FIFO (named pipe)' },
      { cwd: policy, args: ['lock', `-fs-mirror=${FIXTURE_MIRROR}`], file: 'provkit.hcl', kind: 'a character device' },
    ];
    const results = await Promise.all(cases.map((c) => runCli(c.args, { cwd: c.cwd, env: w.env, timeoutMs: 20_000 })));
    results.forEach((r, i) => {
      const c = cases[i]!;
      expect(r.timedOut, `${c.file}: ${r.stderr}`).toBe(false);
      expect(r.code, c.file).toBe(1);
      expect(flat(r.stderr)).toContain(c.file);
      expect(flat(r.stderr)).toContain(`${c.kind}, not a regular file`);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    });
    expect(w.tmpLeftovers()).toEqual([]);
  });
});
