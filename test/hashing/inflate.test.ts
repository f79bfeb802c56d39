// Issue 13: large entries are inflated in the hashing thread with reused
// buffers (src/hashing/inflate.ts, zip-reader.ts `inflateRange`) instead of
// through a zlib stream. The stream is kept as the fallback, selected with
// PROVKIT_INFLATE=stream: every result here (hashes, or the error code and
// message of each form) must be the same both ways, for packages hashed one
// at a time and many at once (sharing the thread's output buffer), in this
// thread and in the worker pool.
import { createCipheriv } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { join } from 'node:path';
import { constants, deflateRawSync } from 'node:zlib';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createHashPool, hashZipPackage, type ZipPackageHashes } from '../../src/hashing/index.js';
import { createRawInflater } from '../../src/hashing/inflate.js';
import { type StreamedDigests, ZipStreamDigester } from '../../src/hashing/zip-stream.js';
import { buildZipWithLayout, type ZipEntrySpec, type ZipLayout } from '../support/zip-writer.js';

/** A small seeded generator (chunk boundaries vary, reproducibly). */
function rng(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x / 2 ** 32;
  };
}

/** Deterministic incompressible bytes. */
function noise(n: number, seed: number): Buffer {
  const cipher = createCipheriv('aes-128-ctr', Buffer.alloc(16, seed), Buffer.alloc(16, seed + 1));
  return cipher.update(Buffer.alloc(n));
}

/** Half noise, half text: > 1 MiB compressed (the streamed path) and several MiB of output. */
function mixed(n: number, seed: number): Buffer {
  const text = Buffer.alloc(n - (n >> 2));
  text.fill(`provider ${seed} line of text that compresses well\n`);
  return Buffer.concat([noise(n >> 2, seed), text]);
}

function view(r: ZipPackageHashes): unknown {
  const form = (f: ZipPackageHashes['h1']): unknown =>
    f.ok ? f.hash.text : { code: f.error.code, message: f.error.message };
  return {
    zh: r.zh.text,
    h1: form(r.h1),
    h1Zip: form(r.h1Zip),
    entryCount: r.entryCount,
    uncompressedBytes: r.uncompressedBytes,
  };
}

let dir: string;
const cases: Array<{ name: string; path: string }> = [];

async function add(
  name: string,
  entries: ZipEntrySpec[],
  patch?: (zip: Buffer, layout: ZipLayout) => Buffer,
): Promise<void> {
  const { bytes: zip, layout } = await buildZipWithLayout(entries, {});
  const path = join(dir, `${name}.zip`);
  await writeFile(path, patch ? patch(Buffer.from(zip), layout) : zip);
  cases.push({ name, path });
}

/** Central directory compressed-size field of entry `i`. */
function setCentralCsize(
  zip: Buffer,
  layout: { entries: Array<{ centralHeaderOffset: number }> },
  i: number,
  value: number,
): Buffer {
  zip.writeUInt32LE(value, layout.entries[i]!.centralHeaderOffset + 20);
  return zip;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'provkit-inflate-'));
  const big = (seed: number, n = 6 * 1024 * 1024): ZipEntrySpec => ({
    name: `terraform-provider-x_v${seed}`,
    data: mixed(n, seed),
    level: 1,
    unixMode: 0o100755,
  });
  await add('plain', [{ name: 'README.md', data: 'hello\n' }, big(1)]);
  await add(
    'descriptor',
    [big(2), { name: 'LICENSE', data: 'MIT\n' }].map((e) => ({ ...e, dataDescriptor: true })),
  );
  await add('zip64', [
    { ...big(3), zip64: true },
    { name: 'b', data: 'b', zip64: true },
  ]);
  await add('two-big', [big(4), big(5, 5 * 1024 * 1024 + 17)]);
  await add('exact-out-chunks', [
    {
      name: 'exact',
      data: Buffer.concat([noise(1536 * 1024, 6), Buffer.alloc(4 * 1024 * 1024 - 1536 * 1024)]),
      level: 1,
    },
  ]);
  await add('crc-wrong', [{ ...big(7), crcOverride: 0x12345678 }]);
  await add('size-short', [{ ...big(8), sizeOverride: 6 * 1024 * 1024 - 1 }]);
  await add('size-long', [{ ...big(9), sizeOverride: 6 * 1024 * 1024 + 1 }]);
  // A deflate stream (> 1 MiB) that goes bad: a sync-flushed prefix, then a
  // block of the invalid type 3. Written as stored, then marked deflated.
  const bad = Buffer.concat([
    deflateRawSync(mixed(6 * 1024 * 1024, 10), { level: 1, finishFlush: constants.Z_SYNC_FLUSH }),
    Buffer.from([0x07, 0, 0, 0]),
  ]);
  await add('corrupt', [{ name: 'bad', data: bad, method: 0 }], (zip, layout) => {
    const e = layout.entries[0]!;
    zip.writeUInt16LE(8, e.localHeaderOffset + 8);
    zip.writeUInt16LE(8, e.centralHeaderOffset + 10);
    zip.writeUInt32LE(6 * 1024 * 1024, e.localHeaderOffset + 22);
    zip.writeUInt32LE(6 * 1024 * 1024, e.centralHeaderOffset + 24);
    return zip;
  });
  // The directory claims fewer compressed bytes than the stream has: the stream is cut short.
  await add('truncated', [big(11), { name: 'z', data: 'z' }], (zip, layout) =>
    setCentralCsize(zip, layout, 0, layout.entries[0]!.compressedSize - 1000),
  );
  // The directory claims more: the bytes after the end of the deflate stream are not data.
  await add('trailing', [big(12), { name: 'z', data: 'z' }], (zip, layout) =>
    setCentralCsize(zip, layout, 0, layout.entries[0]!.compressedSize + 20),
  );
  await add('empty-big-stored-mix', [
    { name: 'empty', data: '' },
    { name: 'stored', data: noise(2 * 1024 * 1024, 13), method: 0 },
    big(14),
  ]);
}, 120_000);

afterAll(async () => {
  delete process.env['PROVKIT_INFLATE'];
  await rm(dir, { recursive: true, force: true });
});

async function hashAll(mode: 'stream' | 'in-thread', together: boolean): Promise<Record<string, unknown>> {
  if (mode === 'stream') process.env['PROVKIT_INFLATE'] = 'stream';
  else delete process.env['PROVKIT_INFLATE'];
  try {
    const out: Record<string, unknown> = {};
    if (together) {
      const rs = await Promise.all(cases.map((c) => hashZipPackage(c.path)));
      cases.forEach((c, i) => (out[c.name] = view(rs[i]!)));
    } else {
      for (const c of cases) out[c.name] = view(await hashZipPackage(c.path));
    }
    return out;
  } finally {
    delete process.env['PROVKIT_INFLATE'];
  }
}

describe('in-thread inflate with reused buffers', () => {
  it('is available on this Node (else every run would take the stream)', () => {
    const inflater = createRawInflater();
    expect(inflater).toBeDefined();
    inflater?.close();
  });

  it('gives the stream path results, one at a time and all at once, errors included', async () => {
    const reference = await hashAll('stream', false);
    // The cases do exercise the error paths.
    expect(reference['corrupt']).toMatchObject({ h1: { code: 'ZIP_CORRUPT_DATA' } });
    expect(reference['truncated']).toMatchObject({ h1: { code: 'ZIP_SIZE' } });
    expect(reference['crc-wrong']).toMatchObject({ h1: { code: 'ZIP_CHECKSUM' } });
    expect(reference['size-short']).toMatchObject({ h1: { code: 'ZIP_SIZE' } });
    expect(reference['size-long']).toMatchObject({ h1: { code: 'ZIP_SIZE' } });
    expect(typeof (reference['trailing'] as { h1: unknown }).h1).toBe('string');
    expect(typeof (reference['zip64'] as { h1: unknown }).h1).toBe('string');
    expect(await hashAll('in-thread', false)).toEqual(reference);
    expect(await hashAll('in-thread', true)).toEqual(reference);
    expect(await hashAll('stream', true)).toEqual(reference);
  }, 120_000);

  it('through the worker pool, many at once, the same results', async () => {
    const reference = await hashAll('stream', false);
    const pool = createHashPool({ concurrency: 2 });
    try {
      const rs = await Promise.all([...cases, ...cases].map((c) => pool.hashZip(c.path)));
      const out: Record<string, unknown> = {};
      rs.forEach((r, i) => {
        const name = cases[i % cases.length]!.name;
        expect(view(r)).toEqual(reference[name]);
        out[name] = view(r);
      });
      expect(out).toEqual(reference);
    } finally {
      await pool.close();
    }
  }, 120_000);

  it('streamed while arriving in chunks of any size: the same hints as the stream path, and the file pass with them gives the same results', async () => {
    const reference = await hashAll('stream', false);
    const next = rng(13);
    for (const c of cases) {
      const bytes = await readFile(c.path);
      const chunks: Buffer[] = [];
      for (let at = 0; at < bytes.length;) {
        const n = 1 + Math.floor(next() * (next() < 0.3 ? 4096 : 600_000));
        chunks.push(bytes.subarray(at, at + n));
        at += n;
      }
      const digest = async (mode: 'stream' | 'in-thread'): Promise<StreamedDigests> => {
        if (mode === 'stream') process.env['PROVKIT_INFLATE'] = 'stream';
        try {
          const d = new ZipStreamDigester();
          for (const chunk of chunks) await d.write(chunk);
          return await d.end();
        } finally {
          delete process.env['PROVKIT_INFLATE'];
        }
      };
      const inThread = await digest('in-thread');
      expect([...inThread.entries()], c.name).toEqual([...(await digest('stream')).entries()]);
      if (['plain', 'two-big', 'exact-out-chunks', 'zip64'].includes(c.name))
        expect(inThread.size, c.name).toBeGreaterThan(0);
      expect(view(await hashZipPackage(c.path, { streamed: inThread })), c.name).toEqual(reference[c.name]);
    }
  }, 120_000);

  it('downloads hashed as they stream through the pool, two at a time, three rounds (the tap reuses the memory the workers hand back): the same results', async () => {
    const reference = await hashAll('stream', false);
    const pool = createHashPool({ concurrency: 2 });
    const stream = async (c: { name: string; path: string }): Promise<unknown> => {
      const job = pool.streamZip();
      const bytes = await readFile(c.path);
      // 256 KiB blocks, as net/client.ts `coalesce` delivers them, each its own buffer.
      const blocks: Buffer[] = [];
      for (let at = 0; at < bytes.length; at += 256 * 1024)
        blocks.push(Buffer.from(bytes.subarray(at, at + 256 * 1024)));
      await pipeline(Readable.from(blocks), job.transform, new Writable({ write: (_c, _e, cb) => cb() }));
      return view(await job.finish(c.path));
    };
    try {
      for (let round = 0; round < 3; round++) {
        for (let i = 0; i < cases.length; i += 2) {
          const pair = cases.slice(i, i + 2);
          const got = await Promise.all(pair.map(stream));
          pair.forEach((c, j) => expect(got[j], `${c.name} round ${round}`).toEqual(reference[c.name]));
        }
      }
    } finally {
      await pool.close();
    }
  }, 240_000);

  it('the inflater reports the end of the stream and leaves the bytes after it', () => {
    const data = mixed(3 * 1024 * 1024, 20);
    const compressed = deflateRawSync(data, { level: 1 });
    const input = Buffer.concat([compressed, Buffer.from('PK\x07\x08 after')]);
    const inflater = createRawInflater()!;
    const pieces: Buffer[] = [];
    let used = 0;
    for (let at = 0; at < input.length && !inflater.ended; at += 65536)
      used += inflater.write(input.subarray(at, at + 65536), (o) => pieces.push(Buffer.from(o)));
    inflater.finish(() => undefined);
    inflater.close();
    expect(inflater.ended).toBe(true);
    expect(used).toBe(compressed.length);
    expect(Buffer.concat(pieces).equals(data)).toBe(true);
  });
});
