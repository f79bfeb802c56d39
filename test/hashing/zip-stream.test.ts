// Hashing while downloading (src/hashing/zip-stream.ts): the streamed
// per-entry digests are hints the file pass takes only where the central
// directory agrees, so the result must equal the plain file pass for every
// archive, whatever the chunking, and the hints must actually be used for
// ordinary (Go-written, data-descriptor) packages.
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createHashPool, hashZipPackage, type ZipPackageHashes } from '../../src/hashing/index.js';
import { ZipStreamDigester, type StreamedDigests } from '../../src/hashing/zip-stream.js';
import { buildZip, buildZipWithLayout, type ZipEntrySpec } from '../support/zip-writer.js';

const conformance = fileURLToPath(new URL('../fixtures/conformance/packages/', import.meta.url));
const fixtures = fileURLToPath(new URL('../fixtures/zip/', import.meta.url));

const archives = [
  ...readdirSync(conformance)
    .filter((f) => f.endsWith('.zip'))
    .map((f) => join(conformance, f)),
  ...['accept', 'refuse'].flatMap((d) =>
    readdirSync(join(fixtures, d))
      .filter((f) => f.endsWith('.zip'))
      .map((f) => join(fixtures, d, f)),
  ),
];

/** A small seeded generator, so chunk boundaries vary but reproducibly. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

async function digestInChunks(bytes: Buffer, seed: number, maxChunk: number): Promise<StreamedDigests> {
  const next = rng(seed);
  const d = new ZipStreamDigester();
  for (let at = 0; at < bytes.length;) {
    const n = 1 + Math.floor(next() * maxChunk);

    await d.write(bytes.subarray(at, at + n));
    at += n;
  }
  return d.end();
}

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

describe('streamed digests', () => {
  it('covers the corpus and the fixtures', () => expect(archives.length).toBeGreaterThan(40));

  it.each(archives.map((p) => [p.slice(p.lastIndexOf('/', p.lastIndexOf('/') - 1) + 1), p]))(
    '%s: the result with hints equals the plain file pass (several chunkings)',
    async (_name, path) => {
      const bytes = readFileSync(path);
      const plain = view(await hashZipPackage(path));
      // A chunk per byte only for archives under 64 KB (most of the corpus), chunks of up to 7
      // bytes under 200 KB (deflate9): tiny chunks are slow, not wrong (many-entries, 233 KB,
      // took 5 s with them; the small archives already split every header at every byte).
      // Every archive, many-entries and large included, goes through 4 KiB and 1 MiB chunks.
      const chunkings = [
        [1, 1],
        [2, 7],
        [3, 4096],
        [4, 1 << 20],
      ].filter(([, max]) => (max === 1 ? bytes.length < 64_000 : max! < 100 ? bytes.length < 200_000 : true));
      for (const [seed, max] of chunkings as Array<[number, number]>) {
        const streamed = await digestInChunks(bytes, seed, max);

        expect(view(await hashZipPackage(path, { streamed })), `seed ${seed}, chunks ≤ ${max}`).toEqual(plain);
      }
    },
  );
});

describe('hints on ordinary packages', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'provkit-zip-stream-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const big = Buffer.alloc(3 * 1024 * 1024);
  for (let i = 0; i < big.length; i++) big[i] = (i * 31 + (i >> 9)) & 0xff;
  const layouts: Array<[string, ZipEntrySpec[]]> = [
    [
      'Go-style: deflate with signed data descriptors',
      [
        { name: 'README.md', data: 'hello\n', dataDescriptor: true },
        { name: 'terraform-provider-x_v1.0.0', data: big, dataDescriptor: true, unixMode: 0o100755 },
      ],
    ],
    [
      'descriptors without signature',
      [
        { name: 'a', data: 'aaaa', dataDescriptor: 'nosig' },
        { name: 'b', data: big, dataDescriptor: 'nosig' },
      ],
    ],
    [
      'sizes in the local header, stored and deflated',
      [
        { name: 'a', data: 'stored', method: 0 },
        { name: 'b', data: big },
      ],
    ],
    [
      'zip64 entries with descriptors',
      [
        { name: 'a', data: big, zip64: true, dataDescriptor: true },
        { name: 'b', data: 'x', zip64: true, dataDescriptor: true },
      ],
    ],
  ];

  it.each(layouts)('%s: every file entry gets a hint, and the hint is what the result uses', async (label, entries) => {
    const bytes = await buildZip(entries);
    const path = join(dir, `${label.replace(/\W+/g, '-')}.zip`);
    await writeFile(path, bytes);
    const streamed = await digestInChunks(bytes, 9, 65536);
    expect([...streamed.values()].map((d) => d.size).sort((a, b) => a - b)).toEqual(
      entries
        .map((e) => (typeof e.data === 'string' ? Buffer.byteLength(e.data) : (e.data as Buffer).length))
        .sort((a, b) => a - b),
    );
    expect(view(await hashZipPackage(path, { streamed }))).toEqual(view(await hashZipPackage(path)));
    // White box: a forged hint for the big entry changes the h1, so hints are used (not recomputed).
    const forged = new Map(
      [...streamed].map(([k, v]) => [k, v.size === big.length ? { ...v, sha256: Buffer.alloc(32, 1) } : v]),
    );
    const withForged = await hashZipPackage(path, { streamed: forged });
    const plain = await hashZipPackage(path);
    expect(withForged.h1.ok && plain.h1.ok).toBe(true);
    expect(withForged.h1.ok && withForged.h1.hash.text).not.toBe(plain.h1.ok && plain.h1.hash.text);
  });

  it('a hint whose compressed size disagrees with the central directory is ignored', async () => {
    const bytes = await buildZip([{ name: 'b', data: big, dataDescriptor: true }]);
    const path = join(dir, 'disagree.zip');
    await writeFile(path, bytes);
    const streamed = await digestInChunks(bytes, 5, 100_000);
    const off = new Map(
      [...streamed].map(([k, v]) => [k, { ...v, compressedSize: v.compressedSize + 1, sha256: Buffer.alloc(32, 2) }]),
    );
    expect(view(await hashZipPackage(path, { streamed: off }))).toEqual(view(await hashZipPackage(path)));
  });

  it('a truncated stream gives hints only for the complete entries', async () => {
    const bytes = await buildZip([
      { name: 'a', data: 'first', dataDescriptor: true },
      { name: 'b', data: big, dataDescriptor: true },
    ]);
    const streamed = await digestInChunks(bytes.subarray(0, Math.floor(bytes.length / 2)), 3, 50_000);
    expect([...streamed.values()].map((d) => d.size)).toEqual([5]);
  });

  it('through the worker pool: streamZip as a pipeline stage gives the hashZip result, and abort frees the worker', async () => {
    const bytes = await buildZip([
      { name: 'README.md', data: 'hi', dataDescriptor: true },
      { name: 'bin', data: big, dataDescriptor: true },
    ]);
    const path = join(dir, 'pool.zip');
    await writeFile(path, bytes);
    const pool = createHashPool({ concurrency: 1 });
    try {
      const abandoned = pool.streamZip();
      await pipeline(
        Readable.from([bytes.subarray(0, 1000)]),
        abandoned.transform,
        new Writable({ write: (_c, _e, cb) => cb() }),
      );
      abandoned.abort();
      const job = pool.streamZip();
      const chunks: Buffer[] = [];
      for (let at = 0; at < bytes.length; at += 16384) chunks.push(bytes.subarray(at, at + 16384));
      let passed = 0;
      await pipeline(
        Readable.from(chunks),
        job.transform,
        new Writable({ write: (c: Buffer, _e, cb) => ((passed += c.length), cb()) }),
      );
      expect(passed).toBe(bytes.length);
      expect(view(await job.finish(path))).toEqual(view(await hashZipPackage(path)));
      // The one worker is free again: a plain job runs.
      expect(view(await pool.hashZip(path))).toEqual(view(await hashZipPackage(path)));
    } finally {
      await pool.close();
    }
  });

  it('with no worker free, streamZip is a pass-through and finish hashes the file', async () => {
    const bytes = await buildZip([{ name: 'a', data: big, dataDescriptor: true }]);
    const path = join(dir, 'busy.zip');
    await writeFile(path, bytes);
    const pool = createHashPool({ concurrency: 1 });
    try {
      const holding = pool.streamZip();
      const second = pool.streamZip();
      await pipeline(Readable.from([bytes]), second.transform, new Writable({ write: (_c, _e, cb) => cb() }));
      const [a, b] = await Promise.all([
        second.finish(path),
        (async () => {
          await pipeline(Readable.from([bytes]), holding.transform, new Writable({ write: (_c, _e, cb) => cb() }));
          return holding.finish(path);
        })(),
      ]);
      expect(view(a)).toEqual(view(b));
      expect(view(a)).toEqual(view(await hashZipPackage(path)));
    } finally {
      await pool.close();
    }
  });
});

describe('the digester never holds the bytes up', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'provkit-zip-stream-liveness-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const MiB = 1024 * 1024;
  /** Deterministic, incompressible. */
  const noise = (size: number, seed: number): Buffer => {
    const next = rng(seed);
    const out = Buffer.allocUnsafe(size);
    for (let i = 0; i < size; i += 4) out.writeUInt32LE(Math.floor(next() * 2 ** 32), i);
    return out;
  };

  /** Archives of more than the 4 MiB the digester and the pool's tap hold, in shapes the parser does not follow to the end. */
  const shapes: Array<[string, () => Promise<Buffer>]> = [
    ['10 MiB that are not a zip', () => Promise.resolve(noise(10 * MiB, 1))],
    [
      'a valid zip behind 5 MiB of stub',
      () => buildZip([{ name: 'bin', data: 'provider\n' }], { prefixJunk: noise(5 * MiB, 2) }),
    ],
    [
      'a zip64 package whose first entry is stored (6 MiB)',
      () =>
        buildZip(
          [
            { name: 'bin', data: noise(6 * MiB, 3), method: 0, zip64: true },
            { name: 'README', data: 'x', zip64: true },
          ],
          { zip64: true },
        ),
    ],
    [
      'a deflated entry whose local header claims 2 GiB, then 5 MiB stored',
      async () => {
        const { bytes, layout } = await buildZipWithLayout([
          { name: 'a', data: 'lying header' },
          { name: 'b', data: noise(5 * MiB, 4), method: 0 },
        ]);
        const out = Buffer.from(bytes);
        out.writeUInt32LE(0x7fffffff, layout.entries[0]!.localHeaderOffset + 18);
        return out;
      },
    ],
    // Names of 40,000 bytes: few entries, 3 MiB of central directory (more than the digester buffers).
    [
      '3 MiB of central directory',
      () =>
        buildZip(
          Array.from({ length: 80 }, (_, i) => ({
            name: `${String(i).padStart(3, '0')}-${'n'.repeat(40_000)}`,
            data: '',
            method: 0 as const,
          })),
        ),
    ],
  ];

  /** Whether `p` settles before the parser gets anything more; a write held for good shows as 'held'. */
  const settles = (p: Promise<unknown>): Promise<'taken' | 'held'> =>
    Promise.race([
      p.then(() => 'taken' as const),
      new Promise<'held'>((resolve) => setTimeout(() => resolve('held'), 5000)),
    ]);

  it.each(shapes)(
    '%s: every write is taken, and the result equals the plain file pass',
    async (label, make) => {
      const bytes = await make();
      expect(bytes.length).toBeGreaterThan(4 * MiB);
      const path = join(dir, `${label.replace(/\W+/g, '-')}.zip`);
      await writeFile(path, bytes);
      const d = new ZipStreamDigester();
      const held: number[] = [];
      for (let at = 0; at < bytes.length; at += 256 * 1024) {
        if ((await settles(d.write(bytes.subarray(at, at + 256 * 1024)))) === 'held') {
          held.push(at);
          break;
        }
      }
      expect(held).toEqual([]);
      const streamed = await d.end();
      expect(view(await hashZipPackage(path, { streamed }))).toEqual(view(await hashZipPackage(path)));
    },
    60_000,
  );

  it('through the worker pool: a 10 MiB body that is not a zip passes the tap whole, and finish reports the zip error', async () => {
    const bytes = noise(10 * MiB, 5);
    const path = join(dir, 'pool-junk.zip');
    await writeFile(path, bytes);
    const pool = createHashPool({ concurrency: 1 });
    try {
      const job = pool.streamZip();
      const chunks: Buffer[] = [];
      for (let at = 0; at < bytes.length; at += 256 * 1024) chunks.push(bytes.subarray(at, at + 256 * 1024));
      let passed = 0;
      const flowed = pipeline(
        Readable.from(chunks),
        job.transform,
        new Writable({ write: (c: Buffer, _e, cb) => ((passed += c.length), cb()) }),
      );
      expect(await settles(flowed)).toBe('taken');
      expect(passed).toBe(bytes.length);
      const r = await job.finish(path);
      expect(r.h1.ok).toBe(false);
      expect(view(r)).toEqual(view(await hashZipPackage(path)));
    } finally {
      await pool.close();
    }
  }, 60_000);
});
