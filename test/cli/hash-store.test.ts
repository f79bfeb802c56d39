// The hash store end to end (issue #5; src/hashing/store.ts): a second
// `provkit lock` of the same signed packages downloads nothing and writes the
// same bytes; `provkit mirror` into a new target downloads but does not hash;
// the signature and the download's zh: are still checked on a store hit.
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { fixtureProviders } from '../support/servers/packages.js';
import { startFakeRegistry, type FakeRegistry } from '../support/servers/registry.js';
import { runCli } from '../support/e2e.js';

let reg: FakeRegistry;
let dir: string;
let emptyRc: string;
beforeAll(async () => {
  reg = await startFakeRegistry({ providers: await fixtureProviders() });
  dir = await mkdtemp(join(tmpdir(), 'provkit-hash-store-'));
  emptyRc = join(dir, 'empty.tfrc');
  await writeFile(emptyRc, '');
});
afterAll(async () => {
  await reg.close();
  await rm(dir, { recursive: true, force: true });
});

function run(
  args: string[],
  cwd: string,
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return runCli(args, {
    cwd,
    env: {
      ...process.env,
      SSL_CERT_FILE: reg.caPath,
      PROVKIT_FLAVOR: '',
      TF_CLI_CONFIG_FILE: emptyRc,
      PROVKIT_CACHE_DIR: join(dir, 'cache'),
      ...env,
    },
  });
}

async function project(name: string): Promise<string> {
  const p = join(dir, name);
  await mkdir(p, { recursive: true });
  await writeFile(
    join(p, 'main.tf'),
    `terraform {\n  required_providers {\n    demo = {\n      source  = "${reg.host}/acme/demo"\n      version = "~> 1.0"\n    }\n  }\n}\n`,
  );
  return p;
}

const zipRequests = (): number => reg.requests(/\.zip$/).length;
const PLATFORMS = ['-platform=linux_amd64', '-platform=darwin_arm64', '-platform=windows_amd64'];

describe('provkit lock with a hash store', () => {
  it('the second lock downloads nothing and writes the same bytes', async () => {
    const store = join(dir, 'store-lock');
    const p = await project('lock');
    const before = zipRequests();
    const first = await run(['-flavor=terraform', 'lock', ...PLATFORMS], p, { PROVKIT_HASH_STORE: store });
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(zipRequests() - before).toBe(3);
    const lock = await readFile(join(p, '.terraform.lock.hcl'), 'utf8');
    // Entries for the archives hashed (and the signature check).
    expect((await readdir(store)).length).toBeGreaterThan(1);

    await rm(join(p, '.terraform.lock.hcl'));
    const again = await run(['-flavor=terraform', 'lock', ...PLATFORMS], p, { PROVKIT_HASH_STORE: store });
    expect(again.stderr).toBe('');
    expect(again.code).toBe(0);
    expect(zipRequests() - before, 'no archive downloaded the second time').toBe(3);
    expect(again.stdout).toMatch(
      /- Found .*\/acme\/demo 1\.1\.0 for linux_amd64 in the hash store by its checksum \(self-signed, key ID [0-9A-F]{16}\); not downloaded/,
    );
    expect(await readFile(join(p, '.terraform.lock.hcl'), 'utf8')).toBe(lock);

    // -json says where the hashes came from.
    await rm(join(p, '.terraform.lock.hcl'));
    const json = await run(['-flavor=terraform', 'lock', '-json', '-platform=linux_amd64'], p, {
      PROVKIT_HASH_STORE: store,
    });
    expect(json.code).toBe(0);
    const fetched = json.stdout
      .split('\n')
      .filter((l) => l.includes('"package_fetch_complete"'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(fetched.map((m) => m['hash_store'])).toEqual([true]);
  });

  it('a bad signature is refused on a store hit too', async () => {
    const store = join(dir, 'store-sig');
    const p = await project('sig');
    expect(
      (await run(['-flavor=terraform', 'lock', '-platform=linux_amd64'], p, { PROVKIT_HASH_STORE: store })).code,
    ).toBe(0);
    const lock = await readFile(join(p, '.terraform.lock.hcl'), 'utf8');
    reg.badSignature('acme', 'demo', '1.1.0', 1);
    const r = await run(['-flavor=terraform', 'lock', '-platform=linux_amd64'], p, { PROVKIT_HASH_STORE: store });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/signature/i);
    expect(await readFile(join(p, '.terraform.lock.hcl'), 'utf8')).toBe(lock);
  });

  it('PROVKIT_HASH_STORE=off neither reads nor writes a store', async () => {
    const p = await project('off');
    const before = zipRequests();
    for (let i = 0; i < 2; i++) {
      await rm(join(p, '.terraform.lock.hcl'), { force: true });
      expect(
        (await run(['-flavor=terraform', 'lock', '-platform=linux_amd64'], p, { PROVKIT_HASH_STORE: 'off' })).code,
      ).toBe(0);
    }
    expect(zipRequests() - before).toBe(2);
  });

  it('by default the store lives in the cache directory', async () => {
    const cache = join(dir, 'default-cache');
    const p = await project('default');
    const env = { PROVKIT_HASH_STORE: '', PROVKIT_CACHE_DIR: cache };
    expect((await run(['-flavor=terraform', 'lock', '-platform=linux_amd64'], p, env)).code).toBe(0);
    // One archive entry (under its first two hex digits) and the remembered signature check.
    expect((await readdir(join(cache, 'hashes'))).sort()).toEqual([
      expect.stringMatching(/^[0-9a-f]{2}$/),
      'signatures',
    ]);
  });
});

describe('provkit mirror with a hash store', () => {
  it('a new target gets the same files; the downloads are still checked against the signed zh:', async () => {
    const store = join(dir, 'store-mirror');
    const p = await project('mirror');
    const env = { PROVKIT_HASH_STORE: store };
    const a = await run(['-flavor=terraform', 'mirror', ...PLATFORMS, join(dir, 'target-a')], p, env);
    expect(a.stderr).toBe('');
    expect(a.code).toBe(0);
    const b = await run(['-flavor=terraform', 'mirror', ...PLATFORMS, join(dir, 'target-b')], p, env);
    expect(b.code).toBe(0);
    const versionJson = (t: string): Promise<string> =>
      readFile(join(dir, t, reg.host, 'acme/demo/1.1.0.json'), 'utf8');
    expect(await versionJson('target-b')).toBe(await versionJson('target-a'));

    // A tampered download is refused even though the store knows the signed zh:.
    reg.tamperArchive('acme', 'demo', '1.1.0', 'linux_amd64');
    try {
      const c = await run(['-flavor=terraform', 'mirror', '-platform=linux_amd64', join(dir, 'target-c')], p, env);
      expect(c.code).toBe(1);
      expect(c.stderr).toMatch(/checksum/);
    } finally {
      reg.clearFaults();
    }
  });
});

describe('provkit install with a hash store', () => {
  it('fills the store, and a later install into a fresh directory writes the same lock and tree from it', async () => {
    const store = join(dir, 'store-install');
    const env = { PROVKIT_HASH_STORE: store };
    const a = await project('install-a');
    const first = await run(['install', '-platform=linux_amd64'], a, env);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const entries = (await readdir(store)).filter((n) => /^[0-9a-f]{2}$/.test(n));
    expect(entries.length).toBe(1);

    const b = await project('install-b');
    const second = await run(['install', '-platform=linux_amd64'], b, env);
    expect(second.stderr).toBe('');
    expect(second.code).toBe(0);
    expect(await readFile(join(b, '.terraform.lock.hcl'), 'utf8')).toBe(
      await readFile(join(a, '.terraform.lock.hcl'), 'utf8'),
    );
    const tree = async (p: string): Promise<string[]> =>
      (await readdir(join(p, '.terraform/providers'), { recursive: true })).map(String).sort();
    expect(await tree(b)).toEqual(await tree(a));
  });
});
