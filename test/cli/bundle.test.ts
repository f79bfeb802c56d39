// `provkit bundle` end to end through the installed entry point, and the
// acceptance round trip: bundle create → bundle import → serve (HTTPS on
// 127.0.0.1) → `provkit lock -net-mirror` and `provkit install` from it.
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { hashPackageDir } from '../../src/hashing/index.js';
import { MIRROR, readTar, snapshot, writeTar } from '../bundles/helpers.js';
import { startServe } from '../serve/child.js';
import { runCli } from '../support/e2e.js';
import { testTls, type TestTls } from '../support/servers/tls.js';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

let base: string;
let emptyRc: string;
let tls: TestTls;
beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'provkit-bundle-cli-base-'));
  emptyRc = join(base, 'empty.tfrc');
  await writeFile(emptyRc, '');
  tls = await testTls();
  await writeFile(join(base, 'cert.pem'), tls.certPem);
  await writeFile(join(base, 'key.pem'), tls.keyPem);
});
afterAll(() => rm(base, { recursive: true, force: true }));

function hermetic(env: Record<string, string> = {}): Record<string, string> {
  return {
    PROVKIT_FLAVOR: '',
    TF_PLUGIN_CACHE_DIR: '',
    TF_DATA_DIR: '',
    TF_CLI_CONFIG_FILE: emptyRc,
    HOME: base,
    PROVKIT_CACHE_DIR: join(base, 'cache'),
    SSL_CERT_FILE: tls.caPath,
    SOURCE_DATE_EPOCH: '',
    ...env,
  };
}

function run(args: string[], cwd: string, env: Record<string, string> = {}): Promise<Run> {
  return runCli(args, { cwd, env: { ...process.env, ...hermetic(env) } });
}

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'provkit-bundle-cli-'));
  await copyFile(join(MIRROR, 'config/main.tf'), join(dir, 'main.tf'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const create = (out: string, extra: string[] = [], env: Record<string, string> = {}): Promise<Run> =>
  run(
    ['bundle', 'create', `-fs-mirror=${MIRROR}`, '-platform=linux_amd64', '-platform=darwin_arm64', ...extra, out],
    dir,
    env,
  );

describe('provkit bundle', () => {
  it('round trip: create → import → serve → lock -net-mirror and install from it', async () => {
    const made = await create('b.tar');
    expect(made.stderr).toBe('');
    expect(made.code).toBe(0);
    expect(made.stdout).toContain('4 packages');
    const imported = await run(['bundle', 'import', '-lock-out=bundle.lock.hcl', 'b.tar', 'mirror'], dir);
    expect(imported.stderr).toBe('');
    expect(imported.code).toBe(0);
    expect(imported.stdout).toContain('4 packages added');

    const serve = await startServe(
      [`-tls-cert=${join(base, 'cert.pem')}`, `-tls-key=${join(base, 'key.pem')}`, '-listen=127.0.0.1:0', 'mirror'],
      dir,
    );
    try {
      expect(serve.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/$/);
      // A fresh working directory locks from the served mirror…
      const work = join(dir, 'work');
      await mkdir(work);
      await copyFile(join(MIRROR, 'config/main.tf'), join(work, 'main.tf'));
      const lock = await run(
        ['-flavor=terraform', 'lock', `-net-mirror=${serve.url}`, '-platform=linux_amd64', '-platform=darwin_arm64'],
        work,
      );
      expect(lock.stderr).toBe('');
      expect(lock.code).toBe(0);
      const lockText = await readFile(join(work, '.terraform.lock.hcl'), 'utf8');
      expect(lockText).toContain('"h1:MqUhklRgQ94tJsCySf+PtIviV4lB/gSgPoVDcfG3FM8=",');
      // …and every hash it recorded is one the bundle's lock entries carry.
      const bundleLock = await readFile(join(dir, 'bundle.lock.hcl'), 'utf8');
      for (const h of lockText.match(/"(h1|zh):[^"]+"/g) ?? []) expect(bundleLock).toContain(h);

      // …then installs from it through a CLI configuration's network_mirror block.
      const rc = join(dir, 'mirror.tfrc');
      await writeFile(rc, `provider_installation {\n  network_mirror {\n    url = "${serve.url}"\n  }\n}\n`);
      const install = await run(['-flavor=terraform', 'install', '-platform=linux_amd64'], work, {
        TF_CLI_CONFIG_FILE: rc,
      });
      expect(install.stderr).toBe('');
      expect(install.code).toBe(0);
      expect(
        (await hashPackageDir(join(work, '.terraform/providers/registry.example.test/acme/demo/1.1.0/linux_amd64')))
          .text,
      ).toBe('h1:MqUhklRgQ94tJsCySf+PtIviV4lB/gSgPoVDcfG3FM8=');
      // The lock file was already complete: install (terraform's rules) leaves it byte-identical.
      expect(await readFile(join(work, '.terraform.lock.hcl'), 'utf8')).toBe(lockText);
    } finally {
      expect(await serve.stop()).toBe(0);
    }
    expect(serve.stdout()).toMatch(/"GET \/registry\.example\.test\/acme\/demo\/index\.json" 200/);
    expect(serve.stdout()).toContain('Stopped (SIGTERM)');
  });

  it('is deterministic; SOURCE_DATE_EPOCH sets the creation time', async () => {
    expect((await create('a.tar')).code).toBe(0);
    expect((await create('b.tar')).code).toBe(0);
    expect((await readFile(join(dir, 'a.tar'))).equals(await readFile(join(dir, 'b.tar')))).toBe(true);
    expect((await create('c.tar', [], { SOURCE_DATE_EPOCH: '1700000000' })).code).toBe(0);
    expect((await create('d.tar', [], { SOURCE_DATE_EPOCH: '1700000000' })).code).toBe(0);
    const c = await readFile(join(dir, 'c.tar'));
    expect(c.equals(await readFile(join(dir, 'd.tar')))).toBe(true);
    expect(c.equals(await readFile(join(dir, 'a.tar')))).toBe(false);
    expect(((await readTar(join(dir, 'c.tar')))[0]!.data as Buffer).toString()).toContain(
      '"created": "2023-11-14T22:13:20Z"',
    );
  });

  it('-since writes only what the older bundle lacks; provider arguments pick providers', async () => {
    expect(
      (
        await run(
          [
            'bundle',
            'create',
            `-fs-mirror=${MIRROR}`,
            '-platform=linux_amd64',
            'registry.example.test/acme/demo@1.0.0',
            'old.tar',
          ],
          dir,
        )
      ).code,
    ).toBe(0);
    const oldNames = (await readTar(join(dir, 'old.tar'))).map((e) => e.name).filter((n) => n.endsWith('.zip'));
    expect(oldNames).toEqual(['registry.example.test/acme/demo/terraform-provider-demo_1.0.0_linux_amd64.zip']);
    const delta = await run(
      [
        'bundle',
        'create',
        `-fs-mirror=${MIRROR}`,
        '-platform=linux_amd64',
        '-platform=darwin_arm64',
        '-since=old.tar',
        'registry.example.test/acme/demo@1.0.0',
        'new.tar',
      ],
      dir,
    );
    expect(delta.code).toBe(0);
    expect(delta.stdout).toContain('1 package (1 left out');
    expect((await readTar(join(dir, 'new.tar'))).map((e) => e.name).filter((n) => n.endsWith('.zip'))).toEqual([
      'registry.example.test/acme/demo/terraform-provider-demo_1.0.0_darwin_arm64.zip',
    ]);
  });

  it('refuses a hostile bundle with exit 1 and leaves the target unchanged', async () => {
    expect((await create('b.tar')).code).toBe(0);
    expect((await run(['bundle', 'import', 'b.tar', 'mirror'], dir)).code).toBe(0);
    const before = await snapshot(join(dir, 'mirror'));
    const entries = await readTar(join(dir, 'b.tar'));
    await writeTar(join(dir, 'evil.tar'), [...entries, { name: '../escape.txt', data: 'x' }]);
    const r = await run(['bundle', 'import', 'evil.tar', 'mirror'], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('Bundle refused');
    expect(r.stderr).toContain('path traversal');
    expect(await snapshot(join(dir, 'mirror'))).toEqual(before);
    expect((await readdir(dir)).sort()).toEqual(['b.tar', 'evil.tar', 'main.tf', 'mirror']);
  });

  it('fails cleanly on bad input and writes no output file', async () => {
    const r1 = await run(['bundle'], dir);
    expect(r1.code).toBe(1);
    expect(r1.stderr).toContain('bundle subcommand');
    const r2 = await run(['bundle', 'create', '-platform=bad', 'x.tar'], dir);
    expect(r2.code).toBe(1);
    expect(r2.stderr).toContain('Invalid target platform');
    const r3 = await run(
      ['bundle', 'create', `-fs-mirror=${MIRROR}`, 'registry.example.test/acme/demo@9.0.0', 'x.tar'],
      dir,
    );
    expect(r3.code).toBe(1);
    expect(r3.stderr).toContain('no available releases match');
    const r4 = await run(['bundle', 'create', `-fs-mirror=${MIRROR}`, 'x.tar'], dir, { SOURCE_DATE_EPOCH: 'soon' });
    expect(r4.code).toBe(1);
    expect((await readdir(dir)).sort()).toEqual(['main.tf']);
  });
});
