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
import { streamThreadOf } from '../../src/hashing/pool.js';
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
  /**
   * The in-thread file pass (hashZipPackage) of each of `paths`, computed once:
   * every test below compares another way of hashing with it.
   */
  let expected: unknown[] = [];

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
    expected = await Promise.all(paths.map((p) => outcome(hashZipPackage(p))));
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

  it('more streams than workers: with concurrency 2, eight streams start at once, each hashed as it arrives (half through the worker-written file, half through the tap), chunks interleaved; every result equals the file pass', async () => {
    const zips = paths.slice(0, 8);
    const want = expected.slice(0, 8);
    const pool = createHashPool({ concurrency: 2 });
    const dir = await mkdtemp(join(tmpdir(), 'provkit-pool-streams-'));
    try {
      const streams = zips.map(() => pool.streamZip());
      // None falls back to a pass-through: the download queue decides how many run, not the cores.
      expect(streams.map((s) => s.writes)).toEqual(zips.map(() => true));
      const got = await Promise.all(
        streams.map(async (s, i) => {
          const bytes = await readFile(zips[i]!);
          // Small chunks so that the streams' messages interleave on each worker:
          // at least 64 per archive over 256 KiB, each from 4 KiB up to 64 KiB,
          // all below zip-stream.ts's ACC_BLOCK (256 KiB, the copying path).
          const size = Math.min(64 * 1024, Math.max(4096, Math.ceil(bytes.length / 64)));
          const chunks = Array.from({ length: Math.ceil(bytes.length / size) }, (_, k) =>
            bytes.subarray(k * size, (k + 1) * size),
          );
          if (i % 2 === 0) {
            const file = join(dir, `${i}.zip`);
            await pipeline(Readable.from(chunks), s.writeFile(file, 0, 0o644)!);
            expect((await s.digest()).size).toBe(bytes.length);
            // The written file is byte for byte the archive: its file pass is the expected result (messages name it).
            expect(await readFile(file)).toEqual(bytes);
            expect(await outcome(s.finish(file))).toEqual(await outcome(hashZipPackage(file)));
            return want[i];
          }
          await pipeline(Readable.from(chunks), s.transform, new Writable({ write: (_c, _e, cb) => cb() }));
          return outcome(s.finish(zips[i]!));
        }),
      );
      expect(got).toEqual(want);
      // The pool keeps working for file jobs and streams after them.
      expect(await outcome(pool.hashZip(zips[0]!))).toEqual(want[0]);
    } finally {
      await pool.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it.runIf(process.platform === 'linux')(
    'streams get a thread each up to shareUpTo, then share: with concurrency 2, a third stream starts a third worker (not a second stream on a busy one, whose pair would end 0.6 s after the lone stream on 5 × 100 MB), a fourth shares, and the extra threads stop when the streams end',
    async () => {
      // The process's OS threads (/proc/self/task): a worker is one more. Counted once they are steady, so that
      // a previous test's pool still stopping its threads is not mistaken for this one's.
      const threads = (): number => readdirSync('/proc/self/task').length;
      const steady = async (): Promise<number> => {
        for (let last = -1; ;) {
          const now = threads();
          if (now === last) return now;
          last = now;
          await new Promise((r) => setTimeout(r, 50));
        }
      };
      const pool = createHashPool({ concurrency: 2 });
      expect(pool.shareUpTo).toBe(3);
      try {
        const before = await steady();
        const streams = [pool.streamZip(), pool.streamZip(), pool.streamZip()];
        expect(threads() - before).toBe(3);
        streams.push(pool.streamZip());
        expect(threads() - before).toBe(3);
        // A stream that ends gives its worker back: the next one takes it, no new thread.
        streams[0]!.abort();
        await new Promise((r) => setTimeout(r, 100));
        streams.push(pool.streamZip());
        expect(await steady()).toBeLessThanOrEqual(before + 3);
        // Every stream still hashes to the file pass's result after the moves.
        const bytes = await readFile(paths[0]!);
        const got = await Promise.all(
          streams.slice(1).map(async (s) => {
            await pipeline(Readable.from([bytes]), s.transform, new Writable({ write: (_c, _e, cb) => cb() }));
            return outcome(s.finish(paths[0]!));
          }),
        );
        expect(got).toEqual(streams.slice(1).map(() => expected[0]));
        // The extra worker is stopped once its streams are done; the pool's `concurrency` stay (idle).
        expect(await steady()).toBe(before + 2);
      } finally {
        await pool.close();
      }
    },
  );

  it('a stream whose bytes are all in counts as nearly free: the next stream goes to its worker, not to one whose stream is still arriving (a download queue starts the next archive at the last byte, while the tail is hashed)', async () => {
    const pool = createHashPool({ concurrency: 2 });
    const sink = (): Writable => new Writable({ write: (_c, _e, cb) => cb() });
    try {
      const streams = [pool.streamZip(), pool.streamZip(), pool.streamZip()];
      const threads = streams.map(streamThreadOf);
      // One worker each (shareUpTo = 3).
      expect(new Set(threads).size).toBe(3);
      expect(threads.every((t) => typeof t === 'number')).toBe(true);
      // The second stream's download is complete; the others are still arriving.
      const bytes = await readFile(paths[0]!);
      await pipeline(Readable.from([bytes]), streams[1]!.transform, sink());
      expect((await streams[1]!.digest()).size).toBe(bytes.length);
      const next = pool.streamZip();
      expect(streamThreadOf(next)).toBe(threads[1]);
      // And the one after that shares a worker whose stream is still arriving, never the same twice in a row.
      const after = pool.streamZip();
      expect(streamThreadOf(after)).not.toBe(threads[1]);
      expect(await outcome(streams[1]!.finish(paths[0]!))).toEqual(expected[0]);
      for (const s of [...streams, next, after]) s.abort();
    } finally {
      await pool.close();
    }
  });

  it('one read of a local archive (hashZipFileOnce: zh: and the entries from the same blocks) equals the two-read file pass, errors included', async () => {
    for (const [i, p] of paths.entries()) {
      expect(await outcome(hashZipFileOnce(p)), p).toEqual(expected[i]);
    }
  }, 120_000);

  it('the authoritative pass over the bytes in memory (a small archive read whole) equals the pass over the file, errors included', async () => {
    let small = 0;
    for (const [i, p] of paths.entries()) {
      if (!existsSync(p)) continue;
      const bytes = readFileSync(p);
      if (bytes.length < 1024 * 1024) small++;
      expect(await outcome(hashZipPackage(p, { bytes })), p).toEqual(expected[i]);
    }
    // hashZipFileOnce takes this path for archives under its 1 MiB block: most of the corpus.
    expect(small).toBeGreaterThan(10);
  }, 120_000);
});
