// A lock from a filesystem mirror records no zh: of its archives (the
// reference records only the h1: of a local archive, which carries no
// authentication), so without a hash store provkit reads each archive for its
// h1: forms alone: no SHA-256 pass over the archive's bytes for a zh: nobody
// uses (issue 13, bench/PROFILE.md "Stop 27"). With a hash store the zh: is
// what the store is keyed by, so it is computed. The lock file is the same
// either way, and the reference's (mirror-fixtures/hashes.json).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, describe, expect, it } from 'vitest';

import { parsePlatform, parseProviderSource } from '../../src/addresses/index.js';
import { createHashPool, type HashPool, openHashStore, type HashStore } from '../../src/hashing/index.js';
import { FetchCache } from '../../src/installer/fetch-cache.js';
import type { Locks } from '../../src/lockfile/index.js';
import { FilesystemMirrorSource } from '../../src/sources/fs-mirror.js';
import { lockOverCache } from '../support/lock-run.js';

const MIRROR = fileURLToPath(new URL('../../mirror-fixtures/', import.meta.url));
const reference = JSON.parse(readFileSync(join(MIRROR, 'hashes.json'), 'utf8')) as {
  packages: Record<string, { zh: string; h1: string }>;
};
const PLATFORMS = ['linux_amd64', 'darwin_arm64'].map((p) => parsePlatform(p));
const scratch = mkdtempSync(join(tmpdir(), 'provkit-lock-forms-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A pool that counts which of its hashing calls a run makes. */
function countingPool(): { pool: HashPool; calls: Record<'hashZip' | 'hashZipForms', string[]> } {
  const inner = createHashPool({ concurrency: 0 });
  const calls = { hashZip: [] as string[], hashZipForms: [] as string[] };
  const pool: HashPool = {
    ...inner,
    hashZip: (path, knownZh) => {
      calls.hashZip.push(path);
      return inner.hashZip(path, knownZh);
    },
    hashZipForms: (path) => {
      calls.hashZipForms.push(path);
      return inner.hashZipForms(path);
    },
  };
  return { pool, calls };
}

async function lock(pool: HashPool, hashStore?: HashStore): Promise<Locks> {
  const cache = new FetchCache({
    source: new FilesystemMirrorSource({ baseDir: MIRROR, flavor: 'tofu' }),
    pool,
    networkConcurrency: 2,
    ...(hashStore ? { hashStore } : {}),
  });
  return lockOverCache(
    cache,
    { 'registry.example.test/acme/demo': '~> 1.0', 'registry.example.test/acme/tools': '>= 0.3' },
    PLATFORMS,
  );
}

/** The reference's h1: of every package the demo lock selects (demo 1.1.0, tools 0.3.0). */
function expectedHashes(type: string, version: string): string[] {
  return PLATFORMS.map(
    (p) =>
      reference.packages[
        `registry.example.test/acme/${type}/terraform-provider-${type}_${version}_${p.toString()}.zip`
      ]!.h1,
  ).sort();
}

function hashesOf(locks: Locks, type: string): string[] {
  return locks.provider(parseProviderSource(`registry.example.test/acme/${type}`, 'tofu'))!.hashes.map((h) => h.text);
}

describe('lock from a filesystem mirror: the zh: is computed only where something needs it', () => {
  it("without a hash store: every archive read for its h1: forms alone, the reference's hashes recorded", async () => {
    const { pool, calls } = countingPool();
    const locks = await lock(pool);
    expect(calls.hashZip).toEqual([]);
    expect(calls.hashZipForms).toHaveLength(4);
    expect(hashesOf(locks, 'demo')).toEqual(expectedHashes('demo', '1.1.0'));
    expect(hashesOf(locks, 'tools')).toEqual(expectedHashes('tools', '0.3.0'));
  });

  it('with a hash store: the zh: is computed (the store is keyed by it) and the lock is the same', async () => {
    const { pool, calls } = countingPool();
    const store = openHashStore(join(scratch, 'store'));
    const locks = await lock(pool, store);
    expect(calls.hashZipForms).toEqual([]);
    expect(calls.hashZip).toHaveLength(4);
    expect(hashesOf(locks, 'demo')).toEqual(expectedHashes('demo', '1.1.0'));
    expect(hashesOf(locks, 'tools')).toEqual(expectedHashes('tools', '0.3.0'));
    // The store now answers for those archives by their zh: (the reference's, from sha256sum).
    const demo = reference.packages['registry.example.test/acme/demo/terraform-provider-demo_1.1.0_linux_amd64.zip']!;
    const { pool: again, calls: second } = countingPool();
    expect(hashesOf(await lock(again, store), 'demo')).toEqual(expectedHashes('demo', '1.1.0'));
    expect(second.hashZipForms).toEqual([]);
    expect((await store.get({ scheme: 'zh:', value: demo.zh.slice(3), text: demo.zh }))?.h1).toMatchObject({
      ok: true,
      hash: { text: demo.h1 },
    });
  });
});
