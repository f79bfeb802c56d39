// One message per cause, and the messages a person meets first: provkit as
// a child process (bin/provkit.js), against the bundled filesystem mirror
// (mirror-fixtures/) or a throttled registry in another process.
//
// - a mistyped command or bundle subcommand gets a "did you mean"; the usage
//   printed with it fits 80 columns, as -help does;
// - `-v` is `version` (terraform's alias), and `version` / `version -json`
//   have terraform 1.11.4's shape (test/fixtures/terraform-version/);
// - the flavor note only where the flavor changes something;
// - `hash -json` is one stream in the documented format (docs/json-ui.md),
//   whatever the working directory;
// - `lock_hashes` only after the lock file was written;
// - `lock -check` prints what would change, not every package line, unless -verbose;
// - Ctrl-C in `lock`: one line;
// - `serve` does not warn about the mirror's own index files.
import { spawn } from 'node:child_process';
import { cpSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { currentPlatform } from '../../src/addresses/index.js';
import { VERSION } from '../../src/cli/version.js';
import { waitFor } from '../faults/support.js';
import { startServe } from '../serve/child.js';
import { BIN, e2eWorkspace, requiresTf, runCli, startCli, type E2eWorkspace } from '../support/e2e.js';
import { jsonUiStreamProblems } from '../support/json-ui-schema.js';
import { startHost, type RemoteServer, type ServerHost } from '../support/remote/index.js';
import { makeProvider } from '../support/servers/packages.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MIRROR = join(ROOT, 'mirror-fixtures');
const DEMO_CONFIG = readFileSync(join(MIRROR, 'config', 'main.tf'), 'utf8');
const TF_VERSION = join(ROOT, 'test', 'fixtures', 'terraform-version');
const TF_HEADER =
  '# This file is maintained automatically by "terraform init".\n# Manual edits may be lost in future updates.\n';
const DEMO_ZIP = join(MIRROR, 'registry.example.test', 'acme', 'demo', 'terraform-provider-demo_1.1.0_linux_amd64.zip');

let w: E2eWorkspace;
let host: ServerHost;
let reg: RemoteServer;

beforeAll(async () => {
  host = await startHost();
  reg = await host.registry({
    providers: [await makeProvider('acme', 'slow', ['1.0.0'], ['linux_amd64', 'darwin_arm64'])],
  });
  w = e2eWorkspace(reg.caPath);
});
afterAll(async () => {
  await host.close();
  w.remove();
});

/** A project terraform init locked (its lock file's header): the flavor is inferred as terraform there. */
function terraformProject(name: string, files: Record<string, string> = {}): string {
  return w.project(name, {
    'main.tf': DEMO_CONFIG,
    '.terraform.lock.hcl': `${TF_HEADER}\nprovider "registry.example.test/acme/demo" {\n  version = "1.1.0"\n}\n`,
    ...files,
  });
}
const FLAVOR_NOTE = 'using the terraform flavor';
const widest = (text: string): number => Math.max(...text.split('\n').map((l) => [...l].length));

describe('mistyped commands: a suggestion, and the usage at 80 columns', () => {
  it('provkit lokc: did you mean "lock"?, the usage fitted to 80 columns, exit 1', async () => {
    const r = await runCli(['lokc'], { cwd: w.base, env: w.env });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^Error: unknown command "lokc"\n\nDid you mean "lock"\?\n\nUsage: provkit /);
    expect(widest(r.stderr)).toBeLessThanOrEqual(80);
    expect(r.stdout).toBe('');
  });

  it('provkit bundle creat: did you mean "bundle create"?', async () => {
    const r = await runCli(['bundle', 'creat', 'out.tar'], { cwd: w.base, env: w.env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('Did you mean "bundle create"?');
    expect(widest(r.stderr)).toBeLessThanOrEqual(80);
  });
});

describe('version, as terraform 1.11.4 prints it', () => {
  const platform = currentPlatform().toString();
  /** terraform's recorded text with provkit's name and version, and this machine's platform. */
  const asProvkit = (file: string): string =>
    readFileSync(join(TF_VERSION, file), 'utf8')
      .replace('Terraform v1.11.4', `provkit v${VERSION}`)
      .replace('"terraform_version": "1.11.4"', `"provkit_version": "${VERSION}"`)
      .replace('"terraform_outdated"', '"provkit_outdated"')
      .replaceAll('linux_amd64', platform);

  it('-v, -version and version print the version and the platform, exit 0', async () => {
    for (const args of [['-v'], ['-version'], ['--version'], ['version'], ['lock', '-v']]) {
      const r = await runCli(args, { cwd: w.base, env: w.env });
      expect({ args, code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({
        args,
        code: 0,
        stdout: asProvkit('version.terraform-1.11.4.txt'),
        stderr: '',
      });
    }
  });

  it("version -json: terraform's object with provkit's fields; the lock file's selections as terraform lists them", async () => {
    const empty = await runCli(['version', '-json'], { cwd: w.base, env: w.env });
    expect(empty.code).toBe(0);
    expect(empty.stdout).toBe(asProvkit('version-json.terraform-1.11.4.json'));
    const dir = w.project('selections');
    cpSync(join(TF_VERSION, 'selections.terraform.lock.hcl'), join(dir, '.terraform.lock.hcl'));
    const human = await runCli(['version'], { cwd: dir, env: w.env });
    expect(human.stdout).toBe(asProvkit('version-selections.terraform-1.11.4.txt'));
    const json = await runCli(['-v', '-json'], { cwd: dir, env: w.env });
    expect(json.stdout).toBe(asProvkit('version-json-selections.terraform-1.11.4.json'));
    // No flavor note: the version changes nothing with the flavor.
    expect(human.stderr + json.stderr).toBe('');
  });
});

describe('the flavor note: only where the flavor changes something', () => {
  it('said by lock; not by hash, bundle import, a usage error or an unknown command', async () => {
    const dir = terraformProject('note');
    const lock = await runCli(['lock', `-fs-mirror=${MIRROR}`, '-platform=linux_amd64'], { cwd: dir, env: w.env });
    expect(lock.code).toBe(0);
    expect(lock.stderr).toContain(FLAVOR_NOTE);
    const quiet = [
      ['hash', DEMO_ZIP],
      ['bundle', 'import', join(dir, 'missing.tar'), join(dir, 'target')],
      ['lock', '-platfrom=linux_amd64'],
      ['lock', '-fs-mirror=m', '-net-mirror=https://m.example/'],
      ['lokc'],
    ];
    for (const args of quiet) {
      const r = await runCli(args, { cwd: dir, env: w.env });
      expect({ args, stderr: r.stderr }).not.toEqual({ args, stderr: expect.stringContaining(FLAVOR_NOTE) });
      const j = await runCli([...args, '-json'], { cwd: dir, env: w.env });
      expect({ args, stdout: j.stdout }).not.toEqual({ args, stdout: expect.stringContaining('"type":"flavor"') });
    }
  });
});

describe('hash -json: one stream, one documented format', () => {
  it('the same conventions stream (version, then package_hash) in a terraform project and anywhere else', async () => {
    const streams = [];
    for (const cwd of [terraformProject('hash-tf'), w.project('hash-plain')]) {
      const r = await runCli(['hash', '-json', DEMO_ZIP], { cwd, env: w.env });
      expect(r.code).toBe(0);
      expect(jsonUiStreamProblems(r.stdout)).toEqual([]);
      const lines = r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      streams.push(lines.map((l) => ({ type: l['type'], path: l['path'], h1: l['h1'], zh: l['zh'] })));
    }
    expect(streams[0]).toEqual(streams[1]);
    expect(streams[0]!.map((l) => l.type)).toEqual(['version', 'package_hash']);
    expect(streams[0]![1]).toMatchObject({
      path: DEMO_ZIP,
      h1: expect.stringMatching(/^h1:/),
      zh: expect.stringMatching(/^zh:/),
    });
  });
});

describe('lock_hashes: only once the lock file is written', () => {
  /**
   * `provkit lock -json ARGS` where no file can be written: a file size limit
   * of 0 makes every write fail (EFBIG; the signal it would send is ignored),
   * as a full disk does, whoever runs the test (root ignores permissions).
   */
  const lockUnwritable = (dir: string, args: readonly string[]): Promise<{ code: number | null; stdout: string }> =>
    new Promise((resolve, reject) => {
      const command = `trap '' XFSZ; ulimit -f 0; exec "${process.execPath}" "${BIN}" lock -json ${args.map((a) => `'${a}'`).join(' ')}`;
      const child = spawn('sh', ['-c', command], {
        cwd: dir,
        env: { PATH: process.env['PATH'] ?? '', ...w.env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.on('error', reject);
      child.on('close', (c) => resolve({ code: c, stdout: out }));
    });

  it('a lock file that cannot be written: no lock_hashes, the failure, exit 1', async () => {
    const dir = w.project('unwritable', { 'main.tf': DEMO_CONFIG });
    const { code, stdout } = await lockUnwritable(dir, [`-fs-mirror=${MIRROR}`, '-platform=linux_amd64']);
    expect(code).toBe(1);
    expect(jsonUiStreamProblems(stdout)).toEqual([]);
    const types = stdout
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { type: string }).type);
    expect(types).toContain('package_fetch_complete');
    expect(types).not.toContain('lock_hashes');
    expect(stdout).toContain('Failed to update dependency lock file');
    expect(existsSync(join(dir, '.terraform.lock.hcl'))).toBe(false);
    // Written: lock_hashes after the packages, as before.
    const ok = await runCli(['lock', '-json', `-fs-mirror=${MIRROR}`, '-platform=linux_amd64'], {
      cwd: dir,
      env: w.env,
    });
    expect(ok.stdout.match(/"type":"lock_hashes"/g)).toHaveLength(2);
  });

  it('lock -recursive: a root whose lock file cannot be written has no lock_hashes', async () => {
    const dir = w.project('unwritable-tree', { 'envs/dev/main.tf': DEMO_CONFIG });
    const { code, stdout } = await lockUnwritable(dir, ['-recursive', `-fs-mirror=${MIRROR}`, '-platform=linux_amd64']);
    expect(code).toBe(1);
    expect(jsonUiStreamProblems(stdout)).toEqual([]);
    expect(stdout).toContain('"type":"lock_root"');
    expect(stdout).toContain('"status":"failed"');
    expect(stdout).not.toContain('"type":"lock_hashes"');
  });
});

describe('lock -check: a summary for hooks', () => {
  it('what would change, without the package lines; -verbose adds them', async () => {
    const dir = w.project('check', { 'main.tf': DEMO_CONFIG });
    const r = await runCli(['lock', '-check', `-fs-mirror=${MIRROR}`, '-platform=linux_amd64'], {
      cwd: dir,
      env: w.env,
    });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe(
      '.terraform.lock.hcl would change:\n  no .terraform.lock.hcl yet: a new one with 2 providers\n',
    );
    const v = await runCli(['lock', '-check', '-verbose', `-fs-mirror=${MIRROR}`, '-platform=linux_amd64'], {
      cwd: dir,
      env: w.env,
    });
    expect(v.code).toBe(2);
    expect(v.stdout).toContain('- Fetching registry.example.test/acme/demo 1.1.0 for linux_amd64...\n');
    expect(v.stdout).toContain(
      '- Retrieved registry.example.test/acme/tools 0.3.0 for linux_amd64 (unauthenticated)\n',
    );
    expect(v.stdout).toContain('\n.terraform.lock.hcl would change:\n');
  });
});

describe('Ctrl-C in lock', () => {
  it('one line: what was interrupted and that nothing changed', async () => {
    await reg.clearFaults();
    for (const platform of ['linux_amd64', 'darwin_arm64'])
      await reg.setFault(await reg.path('archive', 'acme', 'slow', '1.0.0', platform), {
        kind: 'throttle',
        bytesPerSecond: 16,
      });
    const dir = w.project('interrupt', { 'main.tf': requiresTf({ slow: `${reg.host}/acme/slow` }) });
    const run = startCli(['lock', '-platform=linux_amd64', '-platform=darwin_arm64'], { cwd: dir, env: w.env });
    await waitFor(() => run.output().includes('- Fetching'), 20_000, 'the downloads to start');
    run.child.kill('SIGINT');
    const r = await run.result;
    expect(r.code).toBe(130);
    expect(r.stderr).toBe('Error: provkit lock was interrupted by SIGINT; nothing was changed.\n');
    expect(existsSync(join(dir, '.terraform.lock.hcl'))).toBe(false);
    expect(w.tmpLeftovers()).toEqual([]);
    await reg.clearFaults();
  });
});

describe('serve: the mirror it serves is not warned about', () => {
  it('a mirror written by provkit mirror: no warning about its index.json and VERSION.json', async () => {
    const dir = w.project('serve', { 'main.tf': DEMO_CONFIG });
    const m = await runCli(
      ['mirror', `-fs-mirror=${MIRROR}`, '-platform=linux_amd64', '-platform=darwin_arm64', 'out'],
      { cwd: dir, env: w.env },
    );
    expect(m.code).toBe(0);
    expect(existsSync(join(dir, 'out', 'registry.example.test', 'acme', 'demo', 'index.json'))).toBe(true);
    const serve = await startServe(['-listen=127.0.0.1:0', 'out'], dir, w.env);
    try {
      // What a client's lock run asks for: the index, the version's document, a package.
      for (const path of [
        'registry.example.test/acme/demo/index.json',
        'registry.example.test/acme/demo/1.1.0.json',
        'registry.example.test/acme/demo/terraform-provider-demo_1.1.0_linux_amd64.zip',
      ]) {
        const res = await fetch(`${serve.url}${path}`);
        expect(res.status).toBe(200);
      }
    } finally {
      await serve.stop();
    }
    expect(serve.stderr()).not.toContain('as possible package');
    expect(serve.stderr()).not.toContain('index.json');
  });
});
