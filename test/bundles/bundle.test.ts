// Bundles at the library level: deterministic bytes, delta bundles, import
// merging into an existing mirror, and every refusal rule with the target
// left byte-for-byte unchanged.
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { ErrorCode, isProvkitError, type ProvkitError } from '../../src/errors.js';
import { createBundleFile } from '../../src/bundles/create.js';
import { createHashPool, type HashPool } from '../../src/hashing/index.js';
import { importBundle, readBundleManifest } from '../../src/bundles/import.js';
import { bundleCreationTime, createdFromEpoch, parseManifest, unsafeMemberName } from '../../src/bundles/manifest.js';
import {
  demoBundleOptions,
  makeBundle,
  MIRROR,
  readTar,
  type RawEntry,
  sha256,
  snapshot,
  writeTar,
} from './helpers.js';

let pool: HashPool;
beforeAll(() => {
  pool = createHashPool({ concurrency: 0 });
});
afterAll(() => pool.close());

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'provkit-bundle-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const DEMO = 'registry.example.test/acme/demo';

describe('bundle create', () => {
  it('gives the same bytes for the same inputs, manifest first and members sorted', async () => {
    const a = join(dir, 'a.tar');
    const b = join(dir, 'b.tar');
    const first = await makeBundle(a, pool);
    await makeBundle(b, pool);
    expect((await readFile(a)).equals(await readFile(b))).toBe(true);
    expect(first.packages).toBe(4);
    const entries = await readTar(a);
    const names = entries.map((e) => e.name);
    expect(names[0]).toBe('manifest.json');
    expect(names.slice(1)).toEqual([...names.slice(1)].sort());
    expect(names).toContain(`${DEMO}/terraform-provider-demo_1.1.0_linux_amd64.zip`);
    const manifest = parseManifest(entries[0]!.data as Buffer);
    expect(manifest.created).toBe('1970-01-01T00:00:00Z');
    // Every member is listed with its size and SHA-256.
    for (const e of entries.slice(1)) {
      const m = manifest.members.find((x) => x.name === e.name)!;
      expect(m.size).toBe((e.data as Buffer).length);
      expect(m.sha256).toBe(sha256(e.data as Buffer));
    }
    // The package copies are the mirror's bytes; VERSION.json lists zh: and h1:.
    const zip = entries.find((e) => e.name.endsWith('demo_1.1.0_linux_amd64.zip'))!;
    expect(
      (zip.data as Buffer).equals(
        await readFile(join(MIRROR, `${DEMO}/terraform-provider-demo_1.1.0_linux_amd64.zip`)),
      ),
    ).toBe(true);
    const versionDoc = JSON.parse(
      (entries.find((e) => e.name === `${DEMO}/1.1.0.json`)!.data as Buffer).toString(),
    ) as { archives: Record<string, { hashes: string[]; url: string }> };
    expect(Object.keys(versionDoc.archives)).toEqual(['darwin_arm64', 'linux_amd64']);
    expect(versionDoc.archives['linux_amd64']!.hashes.map((h) => h.slice(0, 3)).sort()).toEqual(['h1:', 'zh:']);
    const lock = (entries.find((e) => e.name === '.terraform.lock.hcl')!.data as Buffer).toString();
    expect(lock).toContain(
      'provider "registry.example.test/acme/demo" {\n  version     = "1.1.0"\n  constraints = "~> 1.0"',
    );
    expect(lock).toContain('"h1:MqUhklRgQ94tJsCySf+PtIviV4lB/gSgPoVDcfG3FM8="');
  });

  it('takes the creation time from SOURCE_DATE_EPOCH', async () => {
    expect(bundleCreationTime({})).toBe(0);
    expect(bundleCreationTime({ SOURCE_DATE_EPOCH: '1700000000' })).toBe(1700000000);
    expect(() => bundleCreationTime({ SOURCE_DATE_EPOCH: 'yesterday' })).toThrow(/SOURCE_DATE_EPOCH/);
    expect(createdFromEpoch(1700000000)).toBe('2023-11-14T22:13:20Z');
    const a = join(dir, 'a.tar');
    await makeBundle(a, pool, { epoch: 1700000000 });
    const { manifest } = await readBundleManifest(a);
    expect(manifest.created).toBe('2023-11-14T22:13:20Z');
  });

  it('-since leaves out what the older bundle holds, and still lists it', async () => {
    const old = join(dir, 'old.tar');
    const delta = join(dir, 'delta.tar');
    await makeBundle(old, pool, { platforms: ['linux_amd64'] });
    const since = await readBundleManifest(old);
    const outcome = await makeBundle(delta, pool, { platforms: ['linux_amd64', 'darwin_arm64'], since });
    expect(outcome.packages).toBe(2);
    expect(outcome.skipped).toBe(2);
    const names = (await readTar(delta)).map((e) => e.name);
    expect(names.filter((n) => n.endsWith('.zip'))).toEqual([
      `${DEMO}/terraform-provider-demo_1.1.0_darwin_arm64.zip`,
      'registry.example.test/acme/tools/terraform-provider-tools_0.3.0_darwin_arm64.zip',
    ]);
    const { manifest } = await readBundleManifest(delta);
    expect(manifest.since).toBe(since.sha256);
    expect(manifest.providers[0]!.packages.map((p) => p.platform)).toEqual(['darwin_arm64', 'linux_amd64']);

    // Old then delta into one mirror = the full mirror.
    const target = join(dir, 'mirror');
    await importBundle({ bundlePath: old, targetDir: target, pool, flavor: 'tofu' });
    const r = await importBundle({ bundlePath: delta, targetDir: target, pool, flavor: 'tofu' });
    expect(r.added).toHaveLength(2);
    const doc = JSON.parse(await readFile(join(target, DEMO, '1.1.0.json'), 'utf8')) as {
      archives: Record<string, unknown>;
    };
    expect(Object.keys(doc.archives)).toEqual(['darwin_arm64', 'linux_amd64']);
  });
});

describe('createBundleFile commits the bundle file only when it is complete', () => {
  it('writes the bytes createBundle streams, with no temporary file left beside it', async () => {
    await makeBundle(join(dir, 'streamed.tar'), pool);
    const out = join(dir, 'new', 'out.tar');
    const outcome = await createBundleFile({ ...demoBundleOptions(pool), outPath: out });
    expect(outcome.failures).toEqual([]);
    expect((await readFile(out)).equals(await readFile(join(dir, 'streamed.tar')))).toBe(true);
    expect(await readdir(join(dir, 'new'))).toEqual(['out.tar']);
  });

  it('leaves an existing file untouched and removes its temporary file on failures and on an interrupt', async () => {
    const out = join(dir, 'out.tar');
    await writeFile(out, 'old bundle');
    const failed = await createBundleFile({
      ...demoBundleOptions(pool, { extra: ['registry.example.test/acme/absent'] }),
      outPath: out,
    });
    expect(failed.failures.map((f) => f.provider.toString())).toEqual(['registry.example.test/acme/absent']);
    expect(await readdir(dir)).toEqual(['out.tar']);
    expect(await readFile(out, 'utf8')).toBe('old bundle');

    // Interrupted once the packages were fetched, while the tar is being written.
    const controller = new AbortController();
    const interrupted = createBundleFile({
      ...demoBundleOptions(pool),
      outPath: out,
      signal: controller.signal,
      events: (e) => {
        if (e.type === 'fetch_complete') controller.abort();
      },
    });
    await expect(interrupted).rejects.toSatisfy((err) => isProvkitError(err, ErrorCode.ABORTED));
    expect(await readdir(dir)).toEqual(['out.tar']);
    expect(await readFile(out, 'utf8')).toBe('old bundle');
  });

  it('names the bundle when its place cannot be written, before any package is fetched', async () => {
    await mkdir(join(dir, 'out.tar'));
    const events: string[] = [];
    const err: unknown = await createBundleFile({
      ...demoBundleOptions(pool),
      outPath: join(dir, 'out.tar'),
      events: (e) => events.push(e.type),
    }).catch((e: unknown) => e);
    expect(isProvkitError(err)).toBe(true);
    expect((err as ProvkitError).file).toBe(join(dir, 'out.tar'));
    expect(events).toEqual([]);
  });
});

describe('bundle import', () => {
  it('merges into an existing mirror: indexes are unions, other files kept', async () => {
    const target = join(dir, 'mirror');
    await mkdir(join(target, DEMO), { recursive: true });
    // An existing mirror with demo 1.0.0 (as `providers mirror` writes it) and an unrelated file.
    await writeFile(join(target, DEMO, 'index.json'), '{\n  "versions": {\n    "1.0.0": {}\n  }\n}');
    await writeFile(
      join(target, DEMO, '1.1.0.json'),
      '{\n  "archives": {\n    "windows_amd64": {\n      "hashes": [\n        "h1:x"\n      ],\n      "url": "terraform-provider-demo_1.1.0_windows_amd64.zip"\n    }\n  }\n}',
    );
    await writeFile(join(target, 'README'), 'keep me');
    const b = join(dir, 'b.tar');
    await makeBundle(b, pool, { platforms: ['linux_amd64'] });
    const r = await importBundle({ bundlePath: b, targetDir: target, pool, flavor: 'tofu' });
    expect(r.added).toHaveLength(2);
    expect(await readFile(join(target, DEMO, 'index.json'), 'utf8')).toBe(
      '{\n  "versions": {\n    "1.0.0": {},\n    "1.1.0": {}\n  }\n}',
    );
    const doc = JSON.parse(await readFile(join(target, DEMO, '1.1.0.json'), 'utf8')) as {
      archives: Record<string, unknown>;
    };
    expect(Object.keys(doc.archives)).toEqual(['linux_amd64', 'windows_amd64']);
    expect(await readFile(join(target, 'README'), 'utf8')).toBe('keep me');
    // Importing again: everything already present, byte for byte.
    const again = await importBundle({ bundlePath: b, targetDir: target, pool, flavor: 'tofu' });
    expect(again.added).toEqual([]);
    expect(again.present).toHaveLength(2);
    expect((await readdir(dir)).sort()).toEqual(['b.tar', 'mirror']);
  });

  it('checks packages against a trusted lock file', async () => {
    const b = join(dir, 'b.tar');
    await makeBundle(b, pool, { platforms: ['linux_amd64'] });
    const { parseLockFile } = await import('../../src/lockfile/index.js');
    const lock = parseLockFile(
      'provider "registry.example.test/acme/demo" {\n  version = "1.1.0"\n  hashes = ["h1:MqUhklRgQ94tJsCySf+PtIviV4lB/gSgPoVDcfG3FM8="]\n}\nprovider "registry.example.test/acme/tools" {\n  version = "0.3.0"\n  hashes = ["h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="]\n}\n',
      'trusted.hcl',
      'tofu',
    );
    const target = join(dir, 'mirror');
    await expect(
      importBundle({ bundlePath: b, targetDir: target, pool, flavor: 'tofu', trustedLocks: lock.locks }),
    ).rejects.toMatchObject({ code: 'LOCKFILE_CHECKSUM_MISMATCH' });
    expect(await readdir(dir)).toEqual(['b.tar']);
  });

  it('names unsafe member names', () => {
    expect(unsafeMemberName('a/b/c/d.zip')).toBeUndefined();
    for (const bad of ['', '/etc/passwd', 'C:x', 'a\\b', 'a/../b', '..', 'a//b', './a', 'a\nb'])
      expect(unsafeMemberName(bad)).toBeDefined();
  });
});

describe('bundle import refuses hostile bundles, writing nothing', () => {
  let good: RawEntry[];
  let target: string;
  let before: Record<string, string>;
  beforeEach(async () => {
    const b = join(dir, 'good.tar');
    await makeBundle(b, pool);
    good = await readTar(b);
    // The target already holds a mirror (the linux_amd64 packages).
    const small = join(dir, 'small.tar');
    await makeBundle(small, pool, { platforms: ['linux_amd64'] });
    target = join(dir, 'mirror');
    await importBundle({ bundlePath: small, targetDir: target, pool, flavor: 'tofu' });
    await rm(small);
    before = await snapshot(target);
  });

  const manifestOf = (
    entries: RawEntry[],
  ): Record<string, unknown> & { members: Array<{ name: string; size: number; sha256: string }> } =>
    JSON.parse((entries[0]!.data as Buffer).toString()) as Record<string, unknown> & {
      members: Array<{ name: string; size: number; sha256: string }>;
    };
  const withManifest = (entries: RawEntry[], m: unknown): RawEntry[] => [
    { name: 'manifest.json', data: JSON.stringify(m) },
    ...entries.slice(1),
  ];
  /** Adds `e` to the tar and lists it in the manifest. */
  const listed = (entries: RawEntry[], e: RawEntry): RawEntry[] => {
    const m = manifestOf(entries);
    const data = Buffer.from(e.data ?? '');
    m.members.push({ name: e.name, size: data.length, sha256: sha256(data) });
    return [...withManifest(entries, m), e];
  };
  const zipName = `${DEMO}/terraform-provider-demo_1.1.0_darwin_arm64.zip`;

  const cases: Array<[string, () => RawEntry[], string | RegExp, number?]> = [
    ['an unlisted member', () => [...good, { name: `${DEMO}/extra.json`, data: '{}' }], /not listed in the manifest/],
    ['a path-traversal member', () => [...good, { name: '../../evil.txt', data: 'x' }], /path traversal/],
    [
      'a path-traversal name listed in the manifest',
      () => listed(good, { name: 'registry.example.test/../../evil', data: 'x' }),
      /path traversal/,
    ],
    ['an absolute member', () => [...good, { name: '/tmp/provkit-evil.txt', data: 'x' }], /absolute/],
    ['a symlink', () => [...good, { name: `${DEMO}/evil.zip`, type: 'symlink', linkname: '/etc/passwd' }], /symlink/],
    ['a hard link', () => [...good, { name: `${DEMO}/evil.zip`, type: 'link', linkname: zipName }], /is a link/],
    [
      'a directory entry',
      () => [...good.slice(0, 2), { name: 'registry.example.test/', type: 'directory' }, ...good.slice(2)],
      /directory/,
    ],
    ['a duplicate member', () => [...good, good[1]!], /appears twice/],
    ['an oversized member', () => good, /more than the limit/, 1000],
    [
      'a member whose bytes differ from the manifest',
      () =>
        good.map((e) =>
          e.name === `${DEMO}/index.json`
            ? { ...e, data: Buffer.from((e.data as Buffer).toString().replace('1.1.0', '9.9.9')) }
            : e,
        ),
      /SHA-256/,
    ],
    ['a missing member', () => good.filter((e) => e.name !== zipName), /missing from the bundle/],
    [
      'a manifest that is not first',
      () => [good[1]!, good[0]!, ...good.slice(2)],
      /first member must be manifest.json/,
    ],
    [
      'a package swapped for another (manifest updated, hashes not)',
      () => {
        const other = good.find((e) => e.name.endsWith('tools_0.3.0_darwin_arm64.zip'))!.data as Buffer;
        const m = manifestOf(good);
        const mm = m.members.find((x) => x.name === zipName)!;
        mm.size = other.length;
        mm.sha256 = sha256(other);
        return withManifest(good, m).map((e) => (e.name === zipName ? { ...e, data: other } : e));
      },
      /does not match its zh hash/,
    ],
    [
      'a VERSION.json listing a hash the package does not have',
      () => {
        const name = `${DEMO}/1.1.0.json`;
        const doc = (good.find((e) => e.name === name)!.data as Buffer)
          .toString()
          .replace(/"zh:[0-9a-f]+"/, `"zh:${'0'.repeat(64)}"`);
        const m = manifestOf(good);
        const mm = m.members.find((x) => x.name === name)!;
        mm.size = Buffer.byteLength(doc);
        mm.sha256 = sha256(doc);
        return withManifest(good, m).map((e) => (e.name === name ? { ...e, data: doc } : e));
      },
      /does not match the package/,
    ],
  ];

  it.each(cases)('%s', async (_name, make, message, maxMemberSize) => {
    const bad = join(dir, 'bad.tar');
    await writeTar(bad, make());
    const err = await importBundle({
      bundlePath: bad,
      targetDir: target,
      pool,
      flavor: 'tofu',
      ...(maxMemberSize ? { maxMemberSize } : {}),
    }).catch((e: unknown) => e);
    expect(isProvkitError(err)).toBe(true);
    expect((err as Error).message).toMatch(message);
    expect(await snapshot(target)).toEqual(before);
    expect((await readdir(dir)).sort()).toEqual(['bad.tar', 'good.tar', 'mirror']);
  });

  it('refuses to write through a symlinked provider directory', async () => {
    const elsewhere = join(dir, 'elsewhere');
    await mkdir(elsewhere);
    await rm(join(target, 'registry.example.test/acme/tools'), { recursive: true });
    await symlink(elsewhere, join(target, 'registry.example.test/acme/tools'));
    before = await snapshot(target);
    const b = join(dir, 'again.tar');
    await writeTar(b, good);
    await expect(importBundle({ bundlePath: b, targetDir: target, pool, flavor: 'tofu' })).rejects.toThrow(
      /is not a directory/,
    );
    expect(await snapshot(target)).toEqual(before);
    expect(await readdir(elsewhere)).toEqual([]);
  });

  it('refuses a package that the target holds with different bytes', async () => {
    const zip = join(target, `${DEMO}/terraform-provider-demo_1.1.0_linux_amd64.zip`);
    await writeFile(zip, 'different');
    before = await snapshot(target);
    const b = join(dir, 'again.tar');
    await writeTar(b, good);
    await expect(importBundle({ bundlePath: b, targetDir: target, pool, flavor: 'tofu' })).rejects.toThrow(
      /already exists with different bytes/,
    );
    expect(await snapshot(target)).toEqual(before);
  });
});
