// `provkit lock -all-platforms` on OpenTofu's default registry, whose
// `packages` extension reports every platform's h1: (trusted there, as the
// reference records it): the extra platforms are locked from it without a
// download; only the requested platform is fetched (issue #5).
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
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
const key = (p: string): string => `registry.example.test/acme/demo/terraform-provider-demo_1.1.0_${p}.zip`;

let reg: FakeRegistry;
let dir: string;
let rc: string;
beforeAll(async () => {
  reg = await startFakeRegistry({ providers: await fixtureProviders(), packagesExtension: true });
  dir = await mkdtemp(join(tmpdir(), 'provkit-all-platforms-'));
  // The fake registry stands in for registry.opentofu.org through a host block.
  rc = join(dir, 'cli.tfrc');
  await writeFile(
    rc,
    `host "registry.opentofu.org" {\n  services = {\n    "providers.v1" = "${reg.providersUrl}"\n  }\n}\n`,
  );
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
    env: { ...process.env, SSL_CERT_FILE: reg.caPath, PROVKIT_FLAVOR: '', TF_CLI_CONFIG_FILE: rc, ...env },
  });
}

async function project(name: string): Promise<string> {
  const p = join(dir, name);
  await mkdir(p, { recursive: true });
  await writeFile(
    join(p, 'main.tf'),
    'terraform {\n  required_providers {\n    demo = {\n      source  = "acme/demo"\n      version = "~> 1.0"\n    }\n  }\n}\n',
  );
  return p;
}

describe('lock -all-platforms with a trusted packages extension', () => {
  it('locks every published platform, downloading only the requested one', async () => {
    const p = await project('tofu');
    const before = reg.requests(/\.zip$/).length;
    const r = await run(['lock', '-platform=linux_amd64', '-all-platforms'], p);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(reg.requests(/\.zip$/).length - before).toBe(1);
    const lock = await readFile(join(p, '.terraform.lock.hcl'), 'utf8');
    for (const pl of PLATFORMS) {
      expect(lock).toContain(HASHES.packages[key(pl)]!.h1);
      expect(lock).toContain(HASHES.packages[key(pl)]!.zh);
    }
    const order = [...r.stdout.matchAll(/checksums for (\w+);/g)].map((m) => m[1]);
    expect(order).toEqual(['linux_amd64', 'darwin_amd64', 'darwin_arm64', 'linux_arm64', 'windows_amd64']);
  });

  it('with OPENTOFU_ENFORCE_GPG_VALIDATION the registry h1: is not trusted: every platform is downloaded', async () => {
    const p = await project('enforced');
    const before = reg.requests(/\.zip$/).length;
    const r = await run(['lock', '-platform=linux_amd64', '-all-platforms'], p, {
      OPENTOFU_ENFORCE_GPG_VALIDATION: 'true',
    });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(reg.requests(/\.zip$/).length - before).toBe(PLATFORMS.length);
    const lock = await readFile(join(p, '.terraform.lock.hcl'), 'utf8');
    for (const pl of PLATFORMS) expect(lock).toContain(HASHES.packages[key(pl)]!.h1);
  });
});
