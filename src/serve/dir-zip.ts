/**
 * The zip `serve` sends for an unpacked package (`VERSION/OS_ARCH/`), built
 * once onto disk and then served like a packed archive (issue 12: a 300 MB
 * package used to be read whole into memory and deflated synchronously on
 * the event loop, blocking the server for seconds, and cached in memory
 * without bound).
 *
 * The zip is deterministic: entries in the order given (the caller sorts
 * them), deflate at zlib's default level, 1980-01-01 times, unix modes, no
 * directory entries, names as their raw bytes. Its extracted `h1:` is the
 * directory's `h1:` (Go `dirhash.HashDir`: the file names relative to the
 * package and the SHA-256 of each file's content, symlinked files read
 * through the link), and is computed while the files are read, from the
 * bytes that go into the zip.
 *
 * Memory is bounded by the stream buffers: each file is opened in turn (one
 * descriptor at a time), read from that descriptor, CRC'd and hashed, deflated by zlib on the thread pool and
 * written at its offset; the local header is written last (its sizes are
 * known only then). A file whose length differs from its `fstat` size (it
 * changed while being read) fails the build. Sizes and offsets must fit the
 * classic zip format (below 4 GiB, at most 65535 entries): provider packages
 * do; larger ones are refused rather than written wrong.
 */
import { createHash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createDeflateRaw } from 'node:zlib';

import { ErrorCode, ProvkitError } from '../errors.js';
import { crc32 } from '../hashing/crc32.js';
import { hash1FromDigests, type Hash, type NamedDigest } from '../hashing/index.js';
import {
  CREATOR_UNIX,
  DOS_DATE_1980,
  FLAG_UTF8,
  LEN_CENTRAL,
  LEN_END,
  LEN_LOCAL,
  MAX16,
  MAX32,
  METHOD_DEFLATE,
  SIG_CENTRAL,
  SIG_END,
  SIG_LOCAL,
  VERSION_20,
} from '../hashing/zip-format.js';

export interface ZipInput {
  /** The name in the package, `/`-separated raw bytes. */
  readonly name: Buffer;
  /** For messages. */
  readonly display: string;
  /** Opens the file when its turn comes (one open file at a time); the handle is closed here. */
  open(): Promise<{ readonly handle: FileHandle; readonly size: number; readonly mode: number }>;
}

export interface BuiltZip {
  /** Bytes written. */
  readonly size: number;
  /** The extracted-form `h1:` of the zip (= the directory's). */
  readonly h1: Hash;
}

/**
 * Writes the zip of `files` into `out` (an empty file opened for writing).
 * `signal` aborts the build (the file is then incomplete).
 *
 * @throws {ProvkitError} `IO` when a file changed while it was read or the package is too large for a classic zip.
 */
export async function writeDirZip(
  out: FileHandle,
  files: readonly ZipInput[],
  packageDir: string,
  signal?: AbortSignal,
): Promise<BuiltZip> {
  if (files.length > MAX16)
    throw new ProvkitError(ErrorCode.IO, `${packageDir}: too many files (${files.length}) to serve as a zip`, {
      file: packageDir,
    });
  const central: Buffer[] = [];
  const digests: NamedDigest[] = [];
  let offset = 0;
  for (const f of files) {
    // eslint-disable-next-line no-await-in-loop -- one file after the other, each at the offset the previous one ended
    const { handle, size, mode } = await f.open();
    const headerAt = offset;
    const dataAt = headerAt + LEN_LOCAL + f.name.length;
    let crc = 0;
    let read = 0;
    let written = 0;
    const sha = createHash('sha256');
    const tap = new Transform({
      transform(chunk: Buffer, _enc, done) {
        crc = crc32(chunk, crc);
        sha.update(chunk);
        read += chunk.length;
        done(null, chunk);
      },
    });
    try {
      // eslint-disable-next-line no-await-in-loop
      await pipeline(
        handle.createReadStream({ start: 0, autoClose: false }),
        tap,
        createDeflateRaw(),
        async (compressed: AsyncIterable<Buffer>) => {
          for await (const chunk of compressed) {
            await out.write(chunk, 0, chunk.length, dataAt + written);
            written += chunk.length;
          }
        },
        ...(signal ? [{ signal }] : []),
      );
    } finally {
      // eslint-disable-next-line no-await-in-loop -- FileHandle.close waits for reads still in flight
      await handle.close();
    }
    if (read !== size) {
      throw new ProvkitError(
        ErrorCode.IO,
        `${packageDir}: ${f.display} changed while it was zipped (${read} bytes read, ${size} expected)`,
        { file: packageDir, entry: f.display },
      );
    }
    if (read > MAX32 || written > MAX32 || dataAt + written > MAX32) {
      throw new ProvkitError(ErrorCode.IO, `${packageDir}: too large to serve as a zip (4 GiB)`, { file: packageDir });
    }
    const local = Buffer.alloc(LEN_LOCAL);
    local.writeUInt32LE(SIG_LOCAL, 0);
    local.writeUInt16LE(VERSION_20, 4);
    local.writeUInt16LE(FLAG_UTF8, 6);
    local.writeUInt16LE(METHOD_DEFLATE, 8);
    local.writeUInt16LE(0, 10);
    local.writeUInt16LE(DOS_DATE_1980, 12);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(written, 18);
    local.writeUInt32LE(read, 22);
    local.writeUInt16LE(f.name.length, 26);
    local.writeUInt16LE(0, 28);
    const head = Buffer.concat([local, f.name]);
    // eslint-disable-next-line no-await-in-loop
    await out.write(head, 0, head.length, headerAt);
    const ch = Buffer.alloc(LEN_CENTRAL);
    ch.writeUInt32LE(SIG_CENTRAL, 0);
    ch.writeUInt16LE((CREATOR_UNIX << 8) | VERSION_20, 4);
    ch.writeUInt16LE(VERSION_20, 6);
    ch.writeUInt16LE(FLAG_UTF8, 8);
    ch.writeUInt16LE(METHOD_DEFLATE, 10);
    ch.writeUInt16LE(0, 12);
    ch.writeUInt16LE(DOS_DATE_1980, 14);
    ch.writeUInt32LE(crc, 16);
    ch.writeUInt32LE(written, 20);
    ch.writeUInt32LE(read, 24);
    ch.writeUInt16LE(f.name.length, 28);
    ch.writeUInt32LE(((0o100000 | (mode & 0o777)) << 16) >>> 0, 38);
    ch.writeUInt32LE(headerAt, 42);
    central.push(ch, f.name);
    digests.push({ name: f.name, sha256: sha.digest() });
    offset = dataAt + written;
  }
  const cd = Buffer.concat(central);
  if (offset + cd.length > MAX32)
    throw new ProvkitError(ErrorCode.IO, `${packageDir}: too large to serve as a zip (4 GiB)`, { file: packageDir });
  const end = Buffer.alloc(LEN_END);
  end.writeUInt32LE(SIG_END, 0);
  end.writeUInt16LE(files.length, 8);
  end.writeUInt16LE(files.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  const tail = Buffer.concat([cd, end]);
  await out.write(tail, 0, tail.length, offset);
  return { size: offset + tail.length, h1: hash1FromDigests(digests) };
}
