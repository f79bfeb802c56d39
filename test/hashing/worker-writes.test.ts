// issue 13: a stream job's worker writes the download's temporary file
// (pool.ts `ZipStream.writeFile`, `WorkerFileSink`) and computes its zh:
// (`ZipStream.digest`). The ownership rules pinned here:
// - the caller's buffers are never taken: the writer copies them into blocks
//   of its own, and only those blocks are transferred to the worker; a
//   buffer written to it is intact afterwards;
// - a transferred block is not reused by the sender while the worker holds
//   it: blocks come back (as spares) only once digested, so many rounds on
//   one pool, with recycled blocks, still write and hash every byte right;
// - a resume (`offset` > 0) hashes the kept prefix and does not write it
//   again; the file and the digest are those of the whole body;
// - the file descriptor is closed once the worker is done with it, also
//   when the pool is closed mid-stream (the writer then fails, no hang).
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createHashPool, hashZipPackage, type ZipPackageHashes } from '../../src/hashing/index.js';
import { buildZip } from '../support/zip-writer.js';

let dir: string;
let zip: Buffer;

/** Deterministic bytes that deflate somewhat. */
function text(bytes: number, seed: number): Buffer {
  const out = Buffer.alloc(bytes);
  let s = seed >>> 0;
  for (let i = 0; i < bytes; i += 1) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    out[i] = 97 + ((s >>> 16) % 13);
  }
  return out;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'provkit-worker-writes-'));
  zip = await buildZip([
    { name: 'terraform-provider-x_v1.0.0', data: text(3 * 1024 * 1024 + 17, 1), unixMode: 0o100755 },
    { name: 'stored.bin', data: text(700 * 1024, 2), method: 0 },
    { name: 'README.md', data: 'worker writes\n' },
  ]);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** `buf` cut into chunks of the sizes given, in turn (each chunk a copy in its own memory). */
function chunks(buf: Buffer, sizes: number[]): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0, i = 0; at < buf.length; i += 1) {
    const n = Math.min(sizes[i % sizes.length]!, buf.length - at);
    out.push(Buffer.from(buf.subarray(at, at + n)));
    at += n;
  }
  return out;
}

function view(r: ZipPackageHashes): unknown {
  const form = (f: ZipPackageHashes['h1']): unknown => (f.ok ? f.hash.text : f.error.code);
  return { zh: r.zh.text, h1: form(r.h1), h1Zip: form(r.h1Zip), entryCount: r.entryCount };
}

const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');
/** This process's open descriptors on files under the test directory. */
const openFds = (): string[] =>
  readdirSync('/proc/self/fd').flatMap((fd) => {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      return target.startsWith(dir) ? [target] : [];
    } catch {
      return [];
    }
  });

describe('the hash worker writes the file it hashes', () => {
  it('many rounds on one pool (recycled blocks): every file and digest is the body’s, the caller’s buffers intact', async () => {
    const pool = createHashPool({ concurrency: 2 });
    const plain = view(
      await hashZipPackage(
        await (async () => {
          const p = join(dir, 'plain.zip');
          await writeFile(p, zip);
          return p;
        })(),
      ),
    );
    try {
      const sizes = [[16 * 1024], [1, 300 * 1024, 5], [256 * 1024], [64 * 1024 + 3, 16 * 1024]];
      for (let round = 0; round < 3; round += 1) {
        await Promise.all(
          sizes.slice(round % 2, (round % 2) + 2).map(async (cut, k) => {
            const tmp = join(dir, `r${round}-${k}.partial`);
            const s = pool.streamZip();
            expect(s.writes).toBe(true);
            const input = chunks(zip, cut);
            const copies = input.map((c) => Buffer.from(c));
            await pipeline(Readable.from(input), s.writeFile(tmp, 0, 0o644)!);
            // Not detached, not changed: the writer copied them.
            input.forEach((c, i) => expect(c.equals(copies[i]!)).toBe(true));
            expect(readFileSync(tmp).equals(zip)).toBe(true);
            const d = await s.digest();
            expect({ zh: d.zh.text, size: d.size }).toEqual({ zh: `zh:${sha(zip)}`, size: zip.length });
            expect(view(await s.finish(tmp, d.zh))).toEqual(plain);
          }),
        );
      }
      expect(openFds()).toEqual([]);
    } finally {
      await pool.close();
    }
  });

  it('a resume: the kept prefix is hashed, not written again; the file and zh: are the whole body’s', async () => {
    const pool = createHashPool({ concurrency: 1 });
    try {
      for (const kept of [1, 256 * 1024, 1024 * 1024 + 4321]) {
        const tmp = join(dir, `resume-${kept}.partial`);
        await writeFile(tmp, zip.subarray(0, kept));
        const s = pool.streamZip();
        // The client feeds the prefix (read back from the file) and then the rest.
        await pipeline(Readable.from(chunks(zip, [16 * 1024])), s.writeFile(tmp, kept, 0o644)!);
        expect(readFileSync(tmp).equals(zip)).toBe(true);
        const d = await s.digest();
        expect(d.zh.text).toBe(`zh:${sha(zip)}`);
        expect(d.size).toBe(zip.length);
        expect((await s.finish(tmp, d.zh)).zh.text).toBe(`zh:${sha(zip)}`);
      }
    } finally {
      await pool.close();
    }
  });

  it('refuses an existing file (created exclusively) and closes nothing it did not open', async () => {
    const pool = createHashPool({ concurrency: 1 });
    try {
      const tmp = join(dir, 'exists.partial');
      await writeFile(tmp, 'someone else’s');
      const s = pool.streamZip();
      await expect(
        pipeline(Readable.from(chunks(zip, [64 * 1024])), s.writeFile(tmp, 0, 0o644)!),
      ).rejects.toMatchObject({ code: 'EEXIST' });
      s.abort();
      expect(readFileSync(tmp, 'utf8')).toBe('someone else’s');
    } finally {
      await pool.close();
    }
  });

  it('a stream abandoned before its writer closes (a download refused as its last bytes arrived): the writer still closes, its file closed, nothing hangs', async () => {
    const pool = createHashPool({ concurrency: 1 });
    try {
      const s = pool.streamZip();
      const w = s.writeFile(join(dir, 'abandoned.partial'), 0, 0o644)!;
      await new Promise<void>((resolve, reject) =>
        w.write(zip.subarray(0, 64 * 1024), (e) => (e ? reject(e) : resolve())),
      );
      s.abort();
      // The digest waits for the job's answer (here: abandoned), so the worker's answer has come first.
      await expect(s.digest()).rejects.toBeDefined();
      const closed = new Promise<void>((resolve) => w.once('close', () => resolve()));
      w.destroy();
      await closed;
      expect(openFds()).toEqual([]);
    } finally {
      await pool.close();
    }
  });

  it('the pool closed mid-stream: the writer fails, its file is closed, nothing hangs', async () => {
    const pool = createHashPool({ concurrency: 1 });
    const tmp = join(dir, 'closed.partial');
    const s = pool.streamZip();
    const input = chunks(zip, [64 * 1024]);
    let sent = 0;
    const source = Readable.from(
      (async function* () {
        for (const c of input) {
          sent += 1;
          if (sent === 8) await pool.close();
          yield c;
        }
      })(),
    );
    await expect(pipeline(source, s.writeFile(tmp, 0, 0o644)!)).rejects.toBeDefined();
    expect(openFds()).toEqual([]);
    expect(existsSync(tmp)).toBe(true); // the caller (net/client.ts) removes it
  });
});
