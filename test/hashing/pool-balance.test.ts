// issue 13: the hash pool shares the cores over the tail of a batch (pool.ts
// `shareUpTo`: once the pending file jobs fit, each gets a worker of its own,
// beyond `concurrency`). Scheduling must never change a hash: every archive
// hashed in a batch, whatever the split between workers, gives exactly the
// result of the in-thread file pass (hashZipPackage), errors included, and
// the pool keeps working after its extra workers are retired.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ProvkitError } from '../../src/errors.js';
import { createHashPool, hashZipPackage, type ZipPackageHashes } from '../../src/hashing/index.js';
import { hashZipFileOnce } from '../../src/hashing/zip-stream.js';
import { buildZip, type ZipEntrySpec } from '../support/zip-writer.js';

const conformance = fileURLToPath(new URL('../fixtures/conformance/packages/', import.meta.url));

/** Comparable view of a result: hashes, or error code and message per form. */
function view(r: ZipPackageHashes): unknown {
  const form = (f: ZipPackageHashes['h1']): unknown =>
    f.ok ? f.hash.text : { code: f.error.code, message: f.error.message };
  return {
    zh: r.zh.text,
    h1: form(r.h1),
    h1Zip: form(r.h1Zip),
    warnings: r.warnings,
    entryCount: r.entryCount,
    uncompressedBytes: r.uncompressedBytes,
  };
}

/** Outcome of a hash call: its view, or the error's code and message. */
async function outcome(p: Promise<ZipPackageHashes>): Promise<unknown> {
  try {
    return view(await p);
  } catch (err) {
    return err instanceof ProvkitError ? { error: err.code, message: err.message } : { error: String(err) };
  }
}

/** Deterministic bytes that deflate somewhat (a repeating text with a counter). */
function text(bytes: number, seed: number): Buffer {
  const out = Buffer.alloc(bytes);
  let s = seed >>> 0;
  for (let i = 0; i < bytes; i += 1) {
    if (i % 64 === 0) s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = 0x20 + ((s >>> (i % 24)) & 0x3f);
  }
  return out;
}

describe('hash pool balance (shared tail of a batch)', () => {
  let dir: string;
  const paths: string[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'provkit-pool-balance-'));
    const made: Array<[string, ZipEntrySpec[]]> = [
      [
        'zip64.zip',
        [
          { name: 'terraform-provider-a', data: text(300_000, 1), zip64: true, unixMode: 0o100755 },
          { name: 'LICENSE', data: 'MIT\n', zip64: true },
        ],
      ],
      [
        'descriptors.zip',
        [
          { name: 'terraform-provider-b', data: text(200_000, 2), dataDescriptor: true, unixMode: 0o100755 },
          { name: 'README.md', data: 'readme\n', dataDescriptor: 'nosig' },
          { name: 'stored.txt', data: text(10_000, 3), method: 0, dataDescriptor: true },
        ],
      ],
      [
        'large-entry.zip',
        [
          {
            name: 'terraform-provider-c',
            data: text(5 * 1024 * 1024 + 12_345, 4),
            dataDescriptor: true,
            unixMode: 0o100755,
          },
        ],
      ],
      ['large-stored.zip', [{ name: 'terraform-provider-d', data: text(4 * 1024 * 1024 + 1, 5), method: 0 }]],
      [
        'many-small.zip',
        Array.from({ length: 600 }, (_, i): ZipEntrySpec => ({
          name: `docs/page-${String(i).padStart(4, '0')}.md`,
          data: text(1 + (i % 97), i),
        })),
      ],
      [
        'dirs-and-dupes.zip',
        [
          { name: 'sub/', dir: true },
          { name: 'sub/x', data: 'one' },
          { name: 'sub/x', data: 'two' },
        ],
      ],
    ];
    for (const [name, entries] of made) {
      const path = join(dir, name);
      await writeFile(path, await buildZip(entries));
      paths.push(path);
    }
    paths.push(
      ...readdirSync(conformance)
        .filter((f) => f.endsWith('.zip'))
        .map((f) => join(conformance, f)),
    );
    paths.push(join(dir, 'missing.zip'));
  }, 60_000);

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('covers zip64, data descriptors, entries over 4 MiB, many small entries and the conformance corpus', () => {
    expect(paths.length).toBeGreaterThan(12);
  });

  it.each([
    ['concurrency 2, default sharing (2 at a time, then the tail at once)', { concurrency: 2 }],
    ['concurrency 1, sharing up to 8 at once', { concurrency: 1, shareUpTo: 8 }],
    ['concurrency 2, no sharing (the old schedule)', { concurrency: 2, shareUpTo: 2 }],
  ])(
    '%s: every result equals the in-thread file pass, twice in a row',
    async (_label, options) => {
      const expected = await Promise.all(paths.map((p) => outcome(hashZipPackage(p))));
      const pool = createHashPool(options);
      try {
        // Twice: the second batch runs after the first batch's extra workers were retired.
        for (let round = 0; round < 2; round += 1) {
          const got = await Promise.all(paths.map((p) => outcome(pool.hashZip(p))));
          expect(got).toEqual(expected);
        }
      } finally {
        await pool.close();
      }
    },
    120_000,
  );

  it('streams share the tail too: with concurrency 2, three streams each get a worker, a fourth is a pass-through; every result equals the file pass', async () => {
    const zips = paths.slice(0, 4);
    const expected = await Promise.all(zips.map((p) => outcome(hashZipPackage(p))));
    const pool = createHashPool({ concurrency: 2 });
    try {
      expect(pool.shareUpTo).toBe(3);
      const streams = zips.map(() => pool.streamZip());
      // The caller's network limit decides how many run (installer/share-limit.ts); the pool gives up to shareUpTo workers.
      expect(streams.map((s) => s.writes)).toEqual([true, true, true, false]);
      const got = await Promise.all(
        streams.map(async (s, i) => {
          await pipeline(
            Readable.from([await readFile(zips[i]!)]),
            s.transform,
            new Writable({ write: (_c, _e, cb) => cb() }),
          );
          return outcome(s.finish(zips[i]!));
        }),
      );
      expect(got).toEqual(expected);
      // The tail's extra worker is retired; the pool keeps working.
      expect(await outcome(pool.hashZip(zips[0]!))).toEqual(expected[0]);
    } finally {
      await pool.close();
    }
  });

  it('one read of a local archive (hashZipFileOnce: zh: and the entries from the same blocks) equals the two-read file pass, errors included', async () => {
    for (const p of paths) {
      expect(await outcome(hashZipFileOnce(p)), p).toEqual(await outcome(hashZipPackage(p)));
    }
  }, 120_000);

  it('the authoritative pass over the bytes in memory (a small archive read whole) equals the pass over the file, errors included', async () => {
    let small = 0;
    for (const p of paths) {
      if (!existsSync(p)) continue;
      const bytes = readFileSync(p);
      if (bytes.length < 1024 * 1024) small++;
      expect(await outcome(hashZipPackage(p, { bytes })), p).toEqual(await outcome(hashZipPackage(p)));
    }
    // hashZipFileOnce takes this path for archives under its 1 MiB block: most of the corpus.
    expect(small).toBeGreaterThan(10);
  }, 120_000);
});
