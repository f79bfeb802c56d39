// `provkit lock` against the in-repo fake registry (HTTPS on loopback, signed
// SHA256SUMS): the lock records the h1: of each requested platform and every
// zh: of the signed checksum list (docs/reference.md §10 item 139, "What each source
// records"); faults end in a clear error and an untouched lock file.
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { fixtureProviders } from '../support/servers/packages.js';
import { startFakeRegistry, type FakeRegistry } from '../support/servers/registry.js';
import { runCli } from '../support/e2e.js';

const HASHES = JSON.parse(
  await readFile(fileURLToPath(new URL('../../mirror-fixtures/hashes.json', import.meta.url)), 'utf8'),
) as {
  packages: Record<string, { zh: string; h1: string }>;
};
const PLATFORMS = ['darwin_amd64', 'darwin_arm64', 'linux_amd64', 'linux_arm64', 'windows_amd64'];

let reg: FakeRegistry;
let dir: string;
let emptyRc: string;
beforeAll(async () => {
  reg = await startFakeRegistry({ providers: await fixtureProviders() });
  dir = await mkdtemp(join(tmpdir(), 'provkit-lock-reg-'));
  // Hermetic: no CLI configuration of the machine running the tests.
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
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return runCli(args, {
    cwd,
    env: { ...process.env, SSL_CERT_FILE: reg.caPath, PROVKIT_FLAVOR: '', TF_CLI_CONFIG_FILE: emptyRc, ...env },
  });
}

async function project(name: string, host = reg.host): Promise<string> {
  const p = join(dir, name);
  await rm(p, { recursive: true, force: true });
  await import('node:fs/promises').then((fs) => fs.mkdir(p));
  await writeFile(
    join(p, 'main.tf'),
    `terraform {\n  required_providers {\n    demo = {\n      source  = "${host}/acme/demo"\n      version = "~> 1.0"\n    }\n  }\n}\n`,
  );
  return p;
}

const key = (v: string, p: string): string => `registry.example.test/acme/demo/terraform-provider-demo_${v}_${p}.zip`;

describe('provkit lock from a registry', () => {
  it('records each platform’s h1: and every signed zh:', async () => {
    const p = await project('ok');
    const r = await run(['-flavor=terraform', 'lock', '-platform=linux_amd64', '-platform=darwin_arm64'], p);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/- Retrieved .*\/acme\/demo 1\.1\.0 for linux_amd64 \(self-signed, key ID [0-9A-F]{16}\)/);
    const expected = [
      HASHES.packages[key('1.1.0', 'darwin_arm64')]!.h1,
      HASHES.packages[key('1.1.0', 'linux_amd64')]!.h1,
      ...PLATFORMS.map((pl) => HASHES.packages[key('1.1.0', pl)]!.zh),
    ].sort();
    const lock = await readFile(join(p, '.terraform.lock.hcl'), 'utf8');
    expect(lock).toBe(
      `# This file is maintained automatically by "terraform init".\n# Manual edits may be lost in future updates.\n\nprovider "${reg.host}/acme/demo" {\n  version     = "1.1.0"\n  constraints = "~> 1.0"\n  hashes = [\n${expected.map((h) => `    "${h}",\n`).join('')}  ]\n}\n`,
    );
  });

  it('-all-platforms adds the h1: of every platform the registry publishes', async () => {
    const p = await project('all-platforms');
    const r = await run(['-flavor=terraform', 'lock', '-platform=linux_amd64', '-all-platforms'], p);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lock = await readFile(join(p, '.terraform.lock.hcl'), 'utf8');
    for (const pl of PLATFORMS) {
      expect(lock).toContain(HASHES.packages[key('1.1.0', pl)]!.h1);
      expect(lock).toContain(HASHES.packages[key('1.1.0', pl)]!.zh);
    }
    // Requested platforms are reported first, then the others in platform order.
    const order = [...r.stdout.matchAll(/checksums for (\w+);/g)].map((m) => m[1]);
    expect(order).toEqual(['linux_amd64', 'darwin_amd64', 'darwin_arm64', 'linux_arm64', 'windows_amd64']);
  });

  it('refuses a tampered archive, naming provider, version and platform, and writes nothing', async () => {
    const p = await project('tampered');
    await writeFile(join(p, '.terraform.lock.hcl'), '# keep me\n');
    reg.tamperArchive('acme', 'demo', '1.1.0', 'linux_amd64');
    try {
      const r = await run(['lock', '-platform=linux_amd64'], p);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('Could not retrieve providers for locking');
      expect(r.stderr).toMatch(/acme\/demo/);
      expect(await readFile(join(p, '.terraform.lock.hcl'), 'utf8')).toBe('# keep me\n');
      expect((await readdir(p)).sort()).toEqual(['.terraform.lock.hcl', 'main.tf']);
    } finally {
      reg.clearFaults();
      reg.archives.clearFaults();
    }
  });

  it.each([
    ['a bad signature', (): void => reg.badSignature('acme', 'demo', '1.1.0')],
    ['a signature by an unlisted key', (): void => reg.unlistedKey('acme', 'demo', '1.1.0')],
  ])('refuses %s', async (what, arm) => {
    const p = await project(what.replace(/ /g, '-'));
    arm();
    try {
      const r = await run(['lock', '-platform=linux_amd64'], p);
      expect(r.code).toBe(1);
      expect(r.stderr.toLowerCase()).toContain('signature');
      expect(await readdir(p)).toEqual(['main.tf']);
    } finally {
      reg.clearFaults();
      reg.archives.clearFaults();
    }
  });
});

describe('provkit lock with a CLI configuration', () => {
  it('discovers a registry through a host block and sends credentials from a credentials block', async () => {
    const authReg = await startFakeRegistry({ providers: await fixtureProviders(), requireToken: 's3cret' });
    try {
      const p = await project('host-block', 'private.example.test');
      const rc = join(p, 'cli.tfrc');
      await writeFile(
        rc,
        `host "private.example.test" {\n  services = {\n    "providers.v1" = "${authReg.providersUrl}"\n  }\n}\ncredentials "private.example.test" {\n  token = "s3cret"\n}\n`,
      );
      const r = await run(['lock', '-platform=linux_amd64'], p, {
        TF_CLI_CONFIG_FILE: rc,
        SSL_CERT_FILE: authReg.caPath,
      });
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(await readFile(join(p, '.terraform.lock.hcl'), 'utf8')).toContain(
        'provider "private.example.test/acme/demo"',
      );
      // The token went to the registry API only, never to archives or checksum files.
      const files = authReg.archives.log.filter((l) => /\.zip$|SHA256SUMS/.test(l.pathname));
      expect(files.length).toBeGreaterThan(0);
      expect(files.some((l) => JSON.stringify(l.headers).includes('s3cret'))).toBe(false);
      // Without the token the registry refuses, and the error says so.
      await rm(join(p, '.terraform.lock.hcl'));
      await writeFile(
        rc,
        `host "private.example.test" {\n  services = {\n    "providers.v1" = "${authReg.providersUrl}"\n  }\n}\n`,
      );
      const denied = await run(['lock', '-platform=linux_amd64'], p, {
        TF_CLI_CONFIG_FILE: rc,
        SSL_CERT_FILE: authReg.caPath,
      });
      expect(denied.code).toBe(1);
      expect(denied.stderr).toMatch(/unauthori[sz]ed|401|credentials/i);
    } finally {
      await authReg.close();
    }
  });
});
