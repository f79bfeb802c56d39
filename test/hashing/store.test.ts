// The hash store (src/hashing/store.ts): zh: → both h1: forms, one atomic
// JSON file per archive; malformed entries are misses; refused archives and
// unwritable stores are not errors.
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { hashZipPackage, makeHash, openHashStore, type ZipPackageHashes } from '../../src/hashing/index.js';

const conformance = fileURLToPath(new URL('../fixtures/conformance/packages/', import.meta.url));

let dir: string;
let ok: ZipPackageHashes;
let refused: ZipPackageHashes;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'provkit-store-'));
  ok = await hashZipPackage(join(conformance, 'dir-entries.zip'));
  refused = await hashZipPackage(join(conformance, 'traversal.zip'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const view = (r: ZipPackageHashes | undefined): unknown =>
  r && {
    zh: r.zh.text,
    h1: r.h1.ok && r.h1.hash.text,
    h1Zip: r.h1Zip.ok && r.h1Zip.hash.text,
    warnings: r.warnings,
    entryCount: r.entryCount,
    uncompressedBytes: r.uncompressedBytes,
  };

describe('hash store', () => {
  it('gives back what was put, by zh:, with the warnings (forms differ here)', async () => {
    const store = openHashStore(join(dir, 'a'));
    expect(await store.get(ok.zh)).toBeUndefined();
    await store.put(ok);
    expect(view(await store.get(ok.zh))).toEqual(view(ok));
    expect(ok.warnings.map((w) => w.code)).toContain('H1_FORMS_DIFFER');
    // One file, named by the digest, under its first two hex digits; no temp files left.
    expect(await readdir(join(dir, 'a', ok.zh.value.slice(0, 2)))).toEqual([`${ok.zh.value}.json`]);
    // Another store on the same directory (another process) sees it.
    expect(view(await openHashStore(join(dir, 'a')).get(ok.zh))).toEqual(view(ok));
  });

  it('does not keep a result with a refused form', async () => {
    expect(refused.h1.ok).toBe(false);
    const store = openHashStore(join(dir, 'b'));
    await store.put(refused);
    expect(await store.get(refused.zh)).toBeUndefined();
  });

  it('treats malformed, mismatched or foreign entries as misses', async () => {
    const base = join(dir, 'c');
    const store = openHashStore(base);
    await store.put(ok);
    const file = join(base, ok.zh.value.slice(0, 2), `${ok.zh.value}.json`);
    const good = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
    for (const bad of [
      'not json',
      JSON.stringify({ ...good, format: 99 }),
      JSON.stringify({ ...good, zh: `zh:${'0'.repeat(64)}` }),
      JSON.stringify({ ...good, h1: 'h1:short' }),
      JSON.stringify({ ...good, h1Zip: undefined }),
      'null',
    ]) {
      await writeFile(file, bad);
      expect(await store.get(ok.zh), bad.slice(0, 40)).toBeUndefined();
    }
    // A put repairs it.
    await store.put(ok);
    expect(view(await store.get(ok.zh))).toEqual(view(ok));
    // Not a zh: digest: a miss, not an error.
    expect(await store.get(makeHash('h1:', ok.zh.value))).toBeUndefined();
    expect(await store.get(makeHash('zh:', '../../etc/passwd'))).toBeUndefined();
  });

  it.skipIf(process.getuid?.() === 0)('an unwritable store costs speed, not the run', async () => {
    const base = join(dir, 'ro');
    await mkdir(base);
    await chmod(base, 0o500);
    const store = openHashStore(base);
    await expect(store.put(ok)).resolves.toBeUndefined();
    expect(await store.get(ok.zh)).toBeUndefined();
  });

  it('an unwritable store location (a file in the way) costs speed, not the run', async () => {
    const base = join(dir, 'file-in-the-way');
    await writeFile(base, 'x');
    const store = openHashStore(base);
    await expect(store.put(ok)).resolves.toBeUndefined();
    expect(await store.get(ok.zh)).toBeUndefined();
  });
});

describe('hash store dispositions (docs/provenance.md)', () => {
  const signed = {
    kind: 'signed' as const,
    keyId: '34365D9472D7468F',
    keyExpires: null,
    url: 'https://registry.example/SHA256SUMS',
  };
  const verified = { kind: 'verified-locally' as const, from: 'https://cdn.example/a.zip', keyId: '34365D9472D7468F' };

  it('keeps who vouched for an entry, when and from where; another write adds to it and loses nothing', async () => {
    const base = join(dir, 'disp');
    let clock = new Date('2026-01-02T03:04:05.000Z');
    const store = openHashStore(base, { now: () => clock });
    await store.put(ok, 'linux_amd64', [signed, verified]);
    expect((await store.lookup(ok.zh))?.dispositions).toEqual([
      { ...signed, at: '2026-01-02T03:04:05.000Z' },
      { ...verified, at: '2026-01-02T03:04:05.000Z' },
    ]);
    // A second writer (another process, later) with another disposition: both are kept, the repeat restamped.
    clock = new Date('2026-02-01T00:00:00.000Z');
    const local = { kind: 'computed-locally' as const, from: '/mirror/a.zip' };
    await openHashStore(base, { now: () => clock }).put(ok, 'linux_amd64', [local, signed]);
    expect((await store.lookup(ok.zh))?.dispositions).toEqual([
      { ...signed, at: '2026-02-01T00:00:00.000Z' },
      { ...verified, at: '2026-01-02T03:04:05.000Z' },
      { ...local, at: '2026-02-01T00:00:00.000Z' },
    ]);
    // A write without dispositions (a mirror re-hashing its archive) keeps them too.
    await store.put(ok);
    expect((await store.lookup(ok.zh))?.dispositions).toHaveLength(3);
  });

  it('reads an entry written before dispositions existed as before, with none; drops ones it cannot read', async () => {
    const base = join(dir, 'old');
    const store = openHashStore(base);
    await store.put(ok, 'darwin_arm64');
    const file = join(base, ok.zh.value.slice(0, 2), `${ok.zh.value}.json`);
    const entry = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
    expect(entry['dispositions']).toBeUndefined();
    expect(await store.lookup(ok.zh)).toMatchObject({ platform: 'darwin_arm64', dispositions: [] });
    await writeFile(
      file,
      JSON.stringify({
        ...entry,
        dispositions: [
          { kind: 'signed', keyId: 'not-a-key-id', at: '2026-01-01T00:00:00Z' },
          { kind: 'from-the-future', at: '2026-01-01T00:00:00Z' },
          { kind: 'computed-locally', from: '/m/a.zip', at: 'yesterday' },
          { kind: 'reported-by-mirror', mirror: 'https://m.example/', at: '2026-01-01T00:00:00Z' },
        ],
      }),
    );
    expect(view((await store.lookup(ok.zh))?.hashes)).toEqual(view(ok));
    expect((await store.lookup(ok.zh))?.dispositions).toEqual([
      { kind: 'reported-by-mirror', mirror: 'https://m.example/', at: '2026-01-01T00:00:00Z' },
    ]);
  });
});
