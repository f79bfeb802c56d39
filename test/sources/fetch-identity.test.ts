// fetchPackage's contract that makes issue 11 #1 (one package's bytes hashed
// and recorded for another whose archive has the same file name) impossible
// by construction: the destination is claimed exclusively, the hashes come
// from the bytes this fetch wrote (hashed before they are committed), and
// what comes back names the package it was fetched for. The end-to-end
// regression tests are in test/e2e/package-identity.test.ts.
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { parsePlatform, parseProviderSource, parseVersion } from '../../src/addresses/index.js';
import { hashZipPackage } from '../../src/hashing/index.js';
import {
  checkFetchedFor,
  fetchPackage,
  FilesystemMirrorSource,
  RegistrySource,
  ServiceDiscovery,
  signaturePolicy,
  staticCredentials,
  type FetchedArchive,
} from '../../src/sources/index.js';
import { fixtureProviders } from '../support/servers/packages.js';
import { startFakeRegistry, type FakeRegistry } from '../support/servers/registry.js';
import { caught, listing, testHttp, type TestHttp } from './helpers.js';

const MIRROR = fileURLToPath(new URL('../../mirror-fixtures/', import.meta.url));
const LINUX = parsePlatform('linux_amd64');
const DEMO = parseProviderSource('registry.example.test/acme/demo', 'tofu');
const TOOLS = parseProviderSource('registry.example.test/acme/tools', 'tofu');
const V110 = parseVersion('1.1.0');
const V030 = parseVersion('0.3.0');

const zhOf = async (path: string): Promise<string> =>
  `zh:${createHash('sha256')
    .update(await readFile(path))
    .digest('hex')}`;

let tmp: string;
let reg: FakeRegistry;
let t: TestHttp;
const fsSource = new FilesystemMirrorSource({ baseDir: MIRROR, flavor: 'tofu' });

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'provkit-fetch-identity-'));
  reg = await startFakeRegistry({ providers: await fixtureProviders() });
  t = testHttp(reg.caPath);
});
afterAll(async () => {
  t.close();
  await reg.close();
  await rm(tmp, { recursive: true, force: true });
});

function registry(): RegistrySource {
  return new RegistrySource({
    http: t.http,
    discovery: new ServiceDiscovery({ http: t.http, credentials: staticCredentials({}) }),
    flavor: 'tofu',
    credentials: staticCredentials({}),
    terraformVersion: '1.12.0',
    signaturePolicy: signaturePolicy('tofu', {}),
  });
}

describe("fetchPackage keeps one package's bytes, hashes and identity together", () => {
  it('refuses a destination that exists (local copy), leaving it as it was', async () => {
    const dest = join(tmp, 'exists', 'pkg.zip');
    await mkdir(dirname(dest), { recursive: true });
    await writeFile(dest, "somebody else's");
    const meta = await fsSource.packageMeta(DEMO, V110, LINUX);
    const err = await caught(fetchPackage(meta, { destPath: dest }));
    expect(err).toMatchObject({ code: 'IO', provider: DEMO.toString(), platform: 'linux_amd64' });
    expect(err.message).toContain('already exists');
    expect(await readFile(dest, 'utf8')).toBe("somebody else's");
    expect(await listing(dirname(dest))).toEqual(['pkg.zip']);
  });

  it('refuses a destination that exists (download) before asking the server', async () => {
    const dest = join(tmp, 'exists-http', 'pkg.zip');
    await mkdir(dirname(dest), { recursive: true });
    await writeFile(dest, "somebody else's");
    const meta = await registry().packageMeta(parseProviderSource(`${reg.host}/acme/demo`, 'tofu'), V110, LINUX);
    reg.log.length = 0;
    const err = await caught(fetchPackage(meta, { destPath: dest, http: t.http }));
    expect(err).toMatchObject({ code: 'IO', platform: 'linux_amd64' });
    expect(reg.log).toEqual([]);
    expect(await readFile(dest, 'utf8')).toBe("somebody else's");
  });

  it('two packages fetched at once into one destination: one is refused, the other keeps its own bytes and hashes', async () => {
    const dest = join(tmp, 'shared', 'terraform-provider-x.zip');
    const [a, b] = await Promise.all([
      fsSource.packageMeta(DEMO, V110, LINUX),
      fsSource.packageMeta(TOOLS, V030, LINUX),
    ]);
    const results = await Promise.allSettled([
      fetchPackage(a, { destPath: dest }),
      fetchPackage(b, { destPath: dest }),
    ]);
    const ok = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value as FetchedArchive] : []));
    const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as Error] : []));
    expect(ok).toHaveLength(1);
    expect(refused.map((e) => e.message)).toEqual([expect.stringContaining('already exists')]);
    const won = ok[0]!;
    expect(await zhOf(dest)).toBe(won.zh.text);
    expect(won.zipHashes.zh.text).toBe(won.zh.text);
    const alone = await hashZipPackage(dest);
    expect(won.zipHashes.h1).toEqual(alone.h1);
    expect(await listing(dirname(dest))).toEqual([basename(dest)]);
  });

  it('hashes the bytes it wrote before committing them (the temporary file, not the destination)', async () => {
    for (const [meta, http] of [
      [await fsSource.packageMeta(DEMO, V110, LINUX), undefined],
      [await registry().packageMeta(parseProviderSource(`${reg.host}/acme/demo`, 'tofu'), V110, LINUX), t.http],
    ] as const) {
      const dest = join(await mkdtemp(join(tmp, 'before-commit-')), meta.filename);
      const hashedPaths: string[] = [];
      const got = (await fetchPackage(meta, {
        destPath: dest,
        ...(http ? { http } : {}),
        hashing: {
          kind: 'zip-hashes',
          hashZip: (p) => {
            hashedPaths.push(p);
            return hashZipPackage(p);
          },
        },
      })) as FetchedArchive;
      expect(hashedPaths).toHaveLength(1);
      expect(hashedPaths[0]).not.toBe(dest);
      expect(dirname(hashedPaths[0]!)).toBe(dirname(dest));
      expect(basename(hashedPaths[0]!)).toMatch(/^\..*\.partial$/);
      expect(got.zipHashes.zh.text).toBe(await zhOf(dest));
      expect(got.identity).toEqual({ provider: meta.provider, version: meta.version, platform: meta.platform });
    }
  });

  it('checkFetchedFor refuses to record a package for another (provider, version, platform), or hashes of other bytes', async () => {
    const meta = await fsSource.packageMeta(DEMO, V110, LINUX);
    const got = (await fetchPackage(meta)) as FetchedArchive;
    expect(() => checkFetchedFor(got, DEMO, V110, LINUX)).not.toThrow();
    expect(() => checkFetchedFor(got, TOOLS, V110, LINUX)).toThrow(
      /internal: the package fetched for registry\.example\.test\/acme\/demo 1\.1\.0 linux_amd64 was about to be recorded for registry\.example\.test\/acme\/tools/,
    );
    expect(() => checkFetchedFor(got, DEMO, V030, LINUX)).toThrow(/internal/);
    expect(() => checkFetchedFor(got, DEMO, V110, parsePlatform('darwin_arm64'))).toThrow(/internal/);
    const other = (await fetchPackage(await fsSource.packageMeta(TOOLS, V030, LINUX))) as FetchedArchive;
    const mixed: FetchedArchive = { ...got, zipHashes: other.zipHashes };
    expect(() => checkFetchedFor(mixed, DEMO, V110, LINUX)).toThrow(
      /internal: the hashes of .* were computed for other bytes/,
    );
  });
});
