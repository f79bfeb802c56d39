// `provkit mirror` checks every package it writes (or keeps) against the lock
// file's hashes for the provider version (docs/provenance.md, "mirror checks
// the lock file"): a package that matches none of them fails the run, with one
// diagnostic naming the provider, the platform, the hashes expected and found
// and a hint, and nothing is written (the mirror is all or nothing);
// `-ignore-lock-hashes` lets it through with a warning per package. The same
// for `-layout=unpacked` and for `mirror oci://` (against Debian's
// docker-registry, when installed). Before, such a package was mirrored
// without a word, and `install` from the mirror failed later.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  dockerRegistryBinary,
  registryManifest,
  SKIP_REASON,
  startDockerRegistry,
  type DockerRegistry,
} from '../support/docker-registry.js';
import { e2eWorkspace, requiresTf, runCli, type E2eWorkspace } from '../support/e2e.js';
import { startHost, type RemoteServer, type ServerHost } from '../support/remote/index.js';
import { makeProvider, type FakeProvider } from '../support/servers/packages.js';

const PLATFORMS = ['-platform=linux_amd64', '-platform=darwin_arm64'];

let host: ServerHost;
let reg: RemoteServer;
let demo: FakeProvider;
let other: FakeProvider;
let w: E2eWorkspace;

const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');
const zip = (p: FakeProvider, platform: string): Buffer =>
  p.versions[0]!.packages.find((x) => x.platform === platform)!.zip;

/** A diagnostic's words, without the box drawing and the line wrapping. */
const words = (s: string): string => s.replace(/[╷│╵]/g, ' ').replace(/\s+/g, ' ').trim();

beforeAll(async () => {
  host = await startHost();
  demo = await makeProvider('acme', 'demo', ['1.0.0']);
  // Another provider's packages: their hashes are what a tampered lock file (or a tampered source) would carry.
  other = await makeProvider('acme', 'other', ['1.0.0']);
  reg = await host.registry({ providers: [demo, other] });
  w = e2eWorkspace(reg.caPath);
}, 30_000);
afterAll(async () => {
  await host?.close();
  w?.remove();
});

const main = (): string => requiresTf({ demo: `${reg.host}/acme/demo@1.0.0` });
/** A lock file for demo 1.0.0 whose hashes are another package's (the `other` provider's linux_amd64 zip). */
const wrongLock = (): string =>
  `# This file is maintained automatically by "tofu init".\n# Manual edits may be lost in future updates.\n\nprovider "${reg.host}/acme/demo" {\n  version     = "1.0.0"\n  constraints = "1.0.0"\n  hashes = [\n    "zh:${sha256(zip(other, 'linux_amd64'))}",\n  ]\n}\n`;

describe('mirror checks every package against the lock file', () => {
  it('a package matching none of the lock hashes fails the run: one diagnostic per package naming provider, platform, expected and found, with a hint; nothing written', async () => {
    const p = w.project('wrong', { 'main.tf': main(), '.terraform.lock.hcl': wrongLock() });
    const r = await runCli(['mirror', ...PLATFORMS, 'out'], { cwd: p, env: w.env });
    expect(r.code).toBe(1);
    const text = words(r.stderr);
    for (const platform of ['linux_amd64', 'darwin_arm64']) {
      expect(text).toContain(
        `Package does not match the lock file ${reg.host}/acme/demo 1.0.0 for ${platform}: the package matches none of the hashes the lock file records for 1.0.0 expected one of: zh:${sha256(zip(other, 'linux_amd64'))} found: zh:${sha256(zip(demo, platform))}, h1:`,
      );
      expect(text).toContain(
        `"provkit lock -platform=${platform}" first, or mirror it anyway with -ignore-lock-hashes`,
      );
    }
    expect(r.stderr.match(/Package does not match the lock file/g)).toHaveLength(2);
    expect(existsSync(join(p, 'out'))).toBe(false);
    expect(w.leftovers()).toEqual([]);
    expect(w.tmpLeftovers()).toEqual([]);

    // -layout=unpacked: the same check, nothing written either.
    const u = await runCli(['mirror', '-layout=unpacked', ...PLATFORMS, 'unpacked'], { cwd: p, env: w.env });
    expect(u.code).toBe(1);
    expect(u.stderr.match(/Package does not match the lock file/g)).toHaveLength(2);
    expect(existsSync(join(p, 'unpacked'))).toBe(false);
  });

  it('-ignore-lock-hashes mirrors them, with a warning per package', async () => {
    const p = w.project('ignored', { 'main.tf': main(), '.terraform.lock.hcl': wrongLock() });
    const r = await runCli(['mirror', '-ignore-lock-hashes', ...PLATFORMS, 'out'], { cwd: p, env: w.env });
    expect(r.code).toBe(0);
    const warnings = [...r.stderr.matchAll(/Warning: Package does not match the lock file/g)];
    expect(warnings).toHaveLength(2);
    expect(words(r.stderr)).toContain(
      'Mirrored anyway, as -ignore-lock-hashes asks: a client that installs it with this lock file will refuse it.',
    );
    expect(readdirSync(join(p, 'out', reg.host, 'acme', 'demo')).sort()).toEqual([
      '1.0.0.json',
      'index.json',
      'terraform-provider-demo_1.0.0_darwin_arm64.zip',
      'terraform-provider-demo_1.0.0_linux_amd64.zip',
    ]);
  });

  it('a lock file written by lock passes for every platform its zh: cover; a kept archive is checked too', async () => {
    const p = w.project('right', { 'main.tf': main() });
    // The registry's lock: linux_amd64's h1: and every platform's signed zh:.
    expect((await runCli(['lock', '-platform=linux_amd64'], { cwd: p, env: w.env })).code).toBe(0);
    const r = await runCli(['mirror', ...PLATFORMS, 'out'], { cwd: p, env: w.env });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Mirrored: 2 fetched, 0 already present and verified.');

    // The same target with a lock file the kept archives do not match: refused, the target untouched.
    const before = readFileSync(join(p, 'out', reg.host, 'acme', 'demo', '1.0.0.json'));
    const lock = readFileSync(join(p, '.terraform.lock.hcl'), 'utf8');
    const q = w.project('right-then-wrong', { 'main.tf': main(), '.terraform.lock.hcl': wrongLock() });
    const again = await runCli(['mirror', ...PLATFORMS, join(p, 'out')], { cwd: q, env: w.env });
    expect(again.code).toBe(1);
    expect(again.stderr.match(/Package does not match the lock file/g)).toHaveLength(2);
    expect(readFileSync(join(p, 'out', reg.host, 'acme', 'demo', '1.0.0.json'))).toEqual(before);
    expect(readFileSync(join(p, '.terraform.lock.hcl'), 'utf8')).toBe(lock);
  });
});

const BIN = dockerRegistryBinary();

describe.skipIf(BIN === undefined)(
  `mirror oci:// checks the lock file too${BIN === undefined ? ` (${SKIP_REASON})` : ''}`,
  () => {
    let oci: DockerRegistry;
    let ow: E2eWorkspace;
    beforeAll(async () => {
      oci = await startDockerRegistry();
      ow = e2eWorkspace();
      const bundle = join(ow.base, 'cas.pem');
      writeFileSync(bundle, reg.caPem + oci.caPem);
      ow.env['SSL_CERT_FILE'] = bundle;
    }, 60_000);
    afterAll(async () => {
      await oci?.stop();
      ow?.remove();
    });

    it('a package matching none of the lock hashes moves no tag; -ignore-lock-hashes publishes it with a warning per package', async () => {
      const p = ow.project('oci', { 'main.tf': main(), '.terraform.lock.hcl': wrongLock() });
      const target = `oci://${oci.host}/providers/{namespace}/{type}`;
      const r = await runCli(['mirror', ...PLATFORMS, target], { cwd: p, env: ow.env });
      expect(r.code).toBe(1);
      const text = words(r.stderr);
      for (const platform of ['linux_amd64', 'darwin_arm64']) {
        expect(text).toContain(
          `Package does not match the lock file ${reg.host}/acme/demo 1.0.0 for ${platform}: the package matches none of the hashes the lock file records for 1.0.0 expected one of: zh:${sha256(zip(other, 'linux_amd64'))} found: zh:${sha256(zip(demo, platform))}`,
        );
      }
      expect(text).toContain('or mirror it anyway with -ignore-lock-hashes');
      expect((await registryManifest(oci, 'providers/acme/demo', '1.0.0')).status).toBe(404);
      expect(ow.tmpLeftovers()).toEqual([]);

      const ignored = await runCli(['mirror', '-ignore-lock-hashes', ...PLATFORMS, target], { cwd: p, env: ow.env });
      expect(ignored.code).toBe(0);
      expect(ignored.stderr.match(/Warning: Package does not match the lock file/g)).toHaveLength(2);
      expect((await registryManifest(oci, 'providers/acme/demo', '1.0.0')).status).toBe(200);
    });
  },
);
