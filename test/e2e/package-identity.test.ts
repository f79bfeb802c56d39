// Issue 11 #1: two packages whose archives have the same file name (same
// type, version and platform; another namespace, or another host: the same
// source under registry.opentofu.org and registry.terraform.io) shared a
// temporary path in one run. `lock` then failed with `zip: checksum error`,
// or exited 0 having recorded the other package's hashes; `bundle create`
// shared the flaw. Every package here has bytes of its own (the alias host
// excepted: the same server), so any mix-up shows as a wrong hash.
//
// Why one platform per run: the packages with one file name are then next to
// each other in the download queue, so they download at the same time even
// with 2 downloads at once (2 cores); before the fix nearly every such run
// failed or recorded a wrong hash.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { readTar } from '../bundles/helpers.js';
import { e2eWorkspace, requiresTf, runCli, type E2eWorkspace } from '../support/e2e.js';
import { startHost, type RemoteServer, type ServerHost } from '../support/remote/index.js';
import {
  expectedLockHashes,
  hashesOf,
  lockHashes,
  ownedProvider,
  prng,
  type OwnedProvider,
  type PackageHashes,
} from './package-identity.js';

const PLATFORMS = ['linux_amd64', 'darwin_arm64', 'windows_amd64', 'linux_arm64'];

let host: ServerHost;
let regA: RemoteServer;
let regB: RemoteServer;
let w: E2eWorkspace;
/** Provider address (as provkit writes it) → platform → hashes. */
const expected = new Map<string, Map<string, PackageHashes>>();
/** Local name → source, for required_providers. */
const sources: Record<string, string> = {};
let tf = '';

/** A diagnostic on one line, without its box drawing. */
function errorLine(stderr: string): string {
  return stderr
    .split('\n')
    .map((l) => l.replace(/^[│╷╵]\s?/, '').trim())
    .filter((l) => l !== '')
    .join(' ');
}

async function expectFor(address: string, p: OwnedProvider): Promise<void> {
  const m = new Map<string, PackageHashes>();
  for (const [platform, zip] of p.zips) m.set(platform, await hashesOf(zip));
  expected.set(address, m);
}

/** The platform of run `run`: every platform in turn. */
const platformOf = (run: number): string => PLATFORMS[run % PLATFORMS.length]!;

beforeAll(async () => {
  host = await startHost();
  const rand = prng(1101);
  // Sizes differ per platform, so that different packages end at different times.
  const size = (platform: string): number => 900_000 + PLATFORMS.indexOf(platform) * 300_000;
  const aHashicorp = await ownedProvider('A/hashicorp', 'hashicorp', 'github', '4.4.0', PLATFORMS, size, rand);
  const aIntegrations = await ownedProvider('A/integrations', 'integrations', 'github', '4.4.0', PLATFORMS, size, rand);
  const bHashicorp = await ownedProvider('B/hashicorp', 'hashicorp', 'github', '4.4.0', PLATFORMS, size, rand);
  regA = await host.registry({ providers: [aHashicorp.fake, aIntegrations.fake] });
  regB = await host.registry({ providers: [bHashicorp.fake] });
  w = e2eWorkspace(regA.caPath);
  sources['gh-a'] = `${regA.host}/hashicorp/github`;
  sources['gh-a-int'] = `${regA.host}/integrations/github`;
  sources['gh-b'] = `${regB.host}/hashicorp/github`;
  // The same source under a second host name (the same server, so the same bytes).
  sources['gh-alias'] = `localhost:${regA.port}/hashicorp/github`;
  await expectFor(sources['gh-a'], aHashicorp);
  await expectFor(sources['gh-a-int'], aIntegrations);
  await expectFor(sources['gh-b'], bHashicorp);
  await expectFor(sources['gh-alias'], aHashicorp);
  tf = requiresTf(Object.fromEntries(Object.entries(sources).map(([k, v]) => [k, `${v}@4.4.0`])));
}, 60_000);
afterAll(async () => {
  await host?.close();
  w?.remove();
});

describe('packages whose archives share a file name keep their own hashes', () => {
  it('lock: two namespaces, two registries and a host alias, one archive name: each provider gets its own hashes (6 runs)', async () => {
    const problems: string[] = [];
    for (let run = 0; run < 6; run++) {
      const platform = platformOf(run);
      const p = w.project(`lock-${run}`, { 'main.tf': tf });
      const r = await runCli(['lock', `-platform=${platform}`], { cwd: p, env: w.env });
      expect(w.tmpLeftovers()).toEqual([]);
      if (r.code !== 0) {
        problems.push(`run ${run}: exit ${r.code}: ${errorLine(r.stderr)}`);
        continue;
      }
      const got = lockHashes(readFileSync(join(p, '.terraform.lock.hcl'), 'utf8'));
      expect([...got.keys()].sort()).toEqual([...expected.keys()].sort());
      for (const [address, byPlatform] of expected) {
        const want = expectedLockHashes(byPlatform, [platform]);
        const have = got.get(address)?.hashes ?? [];
        if (JSON.stringify(have) !== JSON.stringify(want))
          problems.push(
            `run ${run} (${platform}): ${address}: recorded ${have.filter((h) => !want.includes(h)).join(', ')}`,
          );
      }
    }
    expect(problems).toEqual([]);
  }, 240_000);

  it('lock: all four platforms in one run', async () => {
    const p = w.project('lock-all', { 'main.tf': tf });
    const r = await runCli(['lock', ...PLATFORMS.map((x) => `-platform=${x}`)], { cwd: p, env: w.env });
    expect(errorLine(r.stderr)).toBe('');
    expect(r.code).toBe(0);
    const got = lockHashes(readFileSync(join(p, '.terraform.lock.hcl'), 'utf8'));
    for (const [address, byPlatform] of expected)
      expect(got.get(address)?.hashes, address).toEqual(expectedLockHashes(byPlatform, PLATFORMS));
    expect(w.tmpLeftovers()).toEqual([]);
  }, 120_000);

  it("mirror -hashes=all: each archive and its VERSION.json hashes are its own provider's (3 runs)", async () => {
    const problems: string[] = [];
    for (let run = 0; run < 3; run++) {
      const platform = platformOf(run);
      const p = w.project(`mirror-${run}`, { 'main.tf': tf });
      const r = await runCli(['mirror', '-hashes=all', `-platform=${platform}`, 'out'], { cwd: p, env: w.env });
      expect(w.tmpLeftovers()).toEqual([]);
      if (r.code !== 0) {
        problems.push(`run ${run}: exit ${r.code}: ${errorLine(r.stderr)}`);
        continue;
      }
      for (const [address, byPlatform] of expected) {
        const want = byPlatform.get(platform)!;
        const doc = JSON.parse(readFileSync(join(p, 'out', address, '4.4.0.json'), 'utf8')) as {
          archives: Record<string, { url: string; hashes: string[] }>;
        };
        const entry = doc.archives[platform];
        const archive = readFileSync(join(p, 'out', address, entry?.url ?? ''));
        const zh = `zh:${createHash('sha256').update(archive).digest('hex')}`;
        if (zh !== want.zh) problems.push(`run ${run} (${platform}): ${address}: the archive is ${zh}`);
        const have = [...(entry?.hashes ?? [])].sort();
        // Both h1: forms are one hash for these plain zips (listed once).
        const all = [...new Set([want.h1, want.h1Zip, want.zh])].sort();
        if (JSON.stringify(have) !== JSON.stringify(all))
          problems.push(`run ${run} (${platform}): ${address}: VERSION.json lists ${have.join(', ')}`);
      }
    }
    expect(problems).toEqual([]);
  }, 180_000);

  it("bundle create: each package member and its manifest hashes are its own provider's (3 runs)", async () => {
    const problems: string[] = [];
    for (let run = 0; run < 3; run++) {
      const platform = platformOf(run);
      const p = w.project(`bundle-${run}`, { 'main.tf': tf });
      const r = await runCli(['bundle', 'create', `-platform=${platform}`, 'out.tar'], { cwd: p, env: w.env });
      expect(w.tmpLeftovers()).toEqual([]);
      if (r.code !== 0) {
        problems.push(`run ${run}: exit ${r.code}: ${errorLine(r.stderr)}`);
        continue;
      }
      const members = new Map((await readTar(join(p, 'out.tar'))).map((e) => [e.name, Buffer.from(e.data ?? '')]));
      const manifest = JSON.parse(members.get('manifest.json')?.toString() ?? '{}') as {
        providers: Array<{
          source: string;
          packages: Array<{ platform: string; path: string; zh: string; h1: string; h1Zip: string }>;
        }>;
      };
      expect(manifest.providers.map((x) => x.source).sort()).toEqual([...expected.keys()].sort());
      for (const prov of manifest.providers) {
        const want = expected.get(prov.source)!.get(platform)!;
        for (const k of prov.packages) {
          const zh = `zh:${createHash('sha256')
            .update(members.get(k.path) ?? '')
            .digest('hex')}`;
          if (zh !== want.zh) problems.push(`run ${run} (${platform}): ${prov.source}: the member ${k.path} is ${zh}`);
          if (k.zh !== want.zh || k.h1 !== want.h1 || k.h1Zip !== want.h1Zip)
            problems.push(`run ${run} (${platform}): ${prov.source}: the manifest lists ${k.zh} ${k.h1} ${k.h1Zip}`);
        }
      }
    }
    expect(problems).toEqual([]);
  }, 180_000);

  it('install: each provider is installed from, and locked with, its own package (3 runs)', async () => {
    const problems: string[] = [];
    for (let run = 0; run < 3; run++) {
      const platform = platformOf(run);
      const p = w.project(`install-${run}`, { 'main.tf': tf });
      const r = await runCli(['install', `-platform=${platform}`], { cwd: p, env: w.env });
      expect(w.tmpLeftovers()).toEqual([]);
      if (r.code !== 0) {
        problems.push(`run ${run}: exit ${r.code}: ${errorLine(r.stderr)}`);
        continue;
      }
      const got = lockHashes(readFileSync(join(p, '.terraform.lock.hcl'), 'utf8'));
      for (const [address, byPlatform] of expected) {
        const want = expectedLockHashes(byPlatform, [platform]);
        const have = got.get(address)?.hashes ?? [];
        if (JSON.stringify(have) !== JSON.stringify(want))
          problems.push(
            `run ${run} (${platform}): ${address}: recorded ${have.filter((h) => !want.includes(h)).join(', ')}`,
          );
        const owner = address.startsWith(regB.host) ? 'B' : 'A';
        const readme = readFileSync(
          join(p, '.terraform', 'providers', address, '4.4.0', platform, 'README.md'),
          'utf8',
        );
        if (!readme.startsWith(`${owner}/${address.split('/')[1] ?? ''}/github `))
          problems.push(`run ${run} (${platform}): ${address}: installed ${readme.trim()}`);
      }
    }
    expect(problems).toEqual([]);
  }, 180_000);
});
