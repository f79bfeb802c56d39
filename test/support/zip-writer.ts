/**
 * A small zip *writer* for tests and benchmarks (no dependencies: node:zlib only).
 *
 * It builds the zips that provkit must read: ordinary provider packages, the
 * corners of the format (data descriptors with and without signature, zip64
 * extras and end records, directory entries, raw non-UTF-8 names, symlink and
 * permission bits) and deliberately broken ones (forged CRC or size, junk
 * before or after the archive, a lying entry count). Entries may be streamed,
 * so a benchmark can write a 400 MB entry in constant memory.
 *
 * Contract:
 * - Output is deterministic: every entry carries the same fixed DOS timestamp
 *   ({@link DOS_DATE}/{@link DOS_TIME}, 2024-01-02 12:00:00), nothing depends on
 *   the clock or the host. With `encoder: 'portable'` even the deflate bytes
 *   depend on the input only; Node's zlib (the default encoder, a Chromium fork)
 *   emits other bytes than upstream zlib and may change between Node releases.
 * - Offsets in the central directory are absolute file offsets, so with
 *   `prefixJunk` the archive looks like a self-extracting one (readers that
 *   handle SFX archives accept it).
 * - The writer does not validate what the spec asks for: a directory with
 *   content, a name without a trailing slash marked `dir`, a forged CRC are all
 *   written as asked. It only refuses what it cannot encode (an entry of 4 GiB
 *   or more without `zip64`).
 *
 * Not a general archiver: no encryption, no multi-disk, no timestamps other
 * than the fixed one.
 */
import { open } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';

/** DOS date of every entry: 2024-01-02 (same as the conformance corpus). */
export const DOS_DATE = ((2024 - 1980) << 9) | (1 << 5) | 2;
/** DOS time of every entry: 12:00:00. */
export const DOS_TIME = 12 << 11;

/** Host system recorded in "version made by": decides how readers interpret the external attributes. */
export type ZipCreator = 'fat' | 'unix' | 'ntfs';

/**
 * Entry content. A Buffer or string (UTF-8) is held in memory. A function
 * returning a (sync or async) iterable of chunks is streamed chunk by chunk, in
 * constant memory; a yielded chunk must not be modified afterwards (zlib may
 * still be reading it), so yield fresh buffers.
 */
export type ZipEntryData = Buffer | string | (() => ChunkSource);

/** Chunks of a streamed entry. */
export type ChunkSource = Iterable<Uint8Array> | AsyncIterable<Uint8Array>;

export interface ZipEntrySpec {
  /** Name as stored. A string is written as UTF-8; a Buffer verbatim (for CP437, Latin-1 or invalid bytes). */
  name: string | Buffer;
  /** Content; empty when absent. */
  data?: ZipEntryData;
  /** 0 = stored, 8 = deflate. Default: 8 for files, 0 for `dir` entries. */
  method?: 0 | 8;
  /** zlib level for `encoder: 'zlib'` (default 6). */
  level?: number;
  /**
   * Deflate encoder. 'zlib' (default): fast, output depends on the zlib build.
   * 'portable': the fixed-Huffman encoder below ({@link portableDeflate}), whose
   * bytes depend on the input only; for checked-in fixtures that must
   * regenerate byte for byte on any machine. In-memory data only.
   */
  encoder?: 'zlib' | 'portable';
  /** A directory entry: MS-DOS directory bit, unix mode 040755 by default, no content by default. The name is kept as given (a trailing '/' is the caller's job). */
  dir?: boolean;
  /** Default 'unix'. */
  creator?: ZipCreator;
  /** Unix mode in the high 16 bits of the external attributes (any creator). Default 0100644, or 040755 for `dir`. E.g. 0o120777 for a symlink, 0o100755 for an executable. */
  unixMode?: number;
  /** The whole 32-bit external attributes field; overrides `dir`/`unixMode`/`creator` defaults. */
  externalAttrs?: number;
  /** General-purpose bit 11 (name is UTF-8). Default: set when `name` is a string with non-ASCII characters (as Go's archive/zip does). */
  utf8Flag?: boolean;
  /** Bit 3: CRC and sizes are zero in the local header and follow the data in a descriptor, with its optional signature (true) or without ('nosig'). */
  dataDescriptor?: boolean | 'nosig';
  /** Force zip64: sizes (and the offset in the central directory) stored as 0xFFFFFFFF with a 0x0001 extra field. Required for entries of 4 GiB or more. */
  zip64?: boolean;
  /** Raw extra-field bytes appended to both the local and the central header (e.g. a 0x5455 timestamp). */
  extra?: Buffer;
  /** Entry comment (central directory). */
  comment?: string | Buffer;
  /** CRC-32 to store instead of the real one (local header, descriptor and central directory). */
  crcOverride?: number;
  /** Uncompressed size to store instead of the real one (everywhere it is stored). */
  sizeOverride?: number;
}

export interface ZipOptions {
  /** Archive comment (end of central directory record). */
  comment?: string | Buffer;
  /** Bytes before the first local header (a self-extractor stub). */
  prefixJunk?: Buffer;
  /** Bytes after the end of central directory record (not counted in its comment length). */
  suffixJunk?: Buffer;
  /** Entry count to store in the end records instead of the real one. */
  entryCountOverride?: number;
  /** Force zip64 end records (sentinels in the classic record, the real values in the zip64 one). */
  zip64?: boolean;
}

/** Where an entry ended up, for tests that byte-patch the archive. Sizes and CRC are the real ones, not overrides. */
export interface ZipEntryLayout {
  name: Buffer;
  localHeaderOffset: number;
  dataOffset: number;
  compressedSize: number;
  uncompressedSize: number;
  crc32: number;
  centralHeaderOffset: number;
}

export interface ZipLayout {
  entries: ZipEntryLayout[];
  centralDirectoryOffset: number;
  centralDirectorySize: number;
  /** Offset of the classic end of central directory record. */
  endOfCentralDirectoryOffset: number;
  /** Total archive size, junk included. */
  size: number;
}

const SIG_LOCAL = 0x04034b50;
const SIG_CENTRAL = 0x02014b50;
const SIG_DESCRIPTOR = 0x08074b50;
const SIG_EOCD = 0x06054b50;
const SIG_ZIP64_EOCD = 0x06064b50;
const SIG_ZIP64_LOCATOR = 0x07064b50;
const U16_MAX = 0xffff;
const U32_MAX = 0xffffffff;
const CREATOR_CODE: Record<ZipCreator, number> = { fat: 0, unix: 3, ntfs: 10 };

/**
 * CRC-32 (IEEE) of `data`, continuing from `prev`. Uses zlib.crc32 (Node >= 20.15)
 * and falls back to a table in JS on older Node 20 releases.
 */
export function crc32(data: Uint8Array, prev = 0): number {
  return typeof zlib.crc32 === 'function' ? zlib.crc32(data, prev) : jsCrc32(data, prev);
}

let crcTable: Uint32Array | undefined;
function jsCrc32(data: Uint8Array, prev: number): number {
  if (!crcTable) {
    crcTable = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[n] = c >>> 0;
    }
  }
  let c = ~prev >>> 0;
  for (const byte of data) c = (crcTable[(c ^ byte) & 0xff] ?? 0) ^ (c >>> 8);
  return ~c >>> 0;
}

/**
 * Writes a zip to `path` (created or truncated), streaming entries; returns
 * where everything went. A failure leaves a partial file: callers that need
 * the file complete or absent write to a temporary name and rename.
 */
export async function writeZip(
  path: string,
  entries: readonly ZipEntrySpec[],
  opts: ZipOptions = {},
): Promise<ZipLayout> {
  const fh = await open(path, 'w');
  try {
    const sink = new FileSink(fh);
    const layout = await writeArchive(sink, entries, opts);
    await sink.flush();
    return layout;
  } finally {
    await fh.close();
  }
}

/** Builds a zip in memory (for small archives). */
export async function buildZip(entries: readonly ZipEntrySpec[], opts: ZipOptions = {}): Promise<Buffer> {
  return (await buildZipWithLayout(entries, opts)).bytes;
}

/** {@link buildZip}, plus the layout for byte-patching. */
export async function buildZipWithLayout(
  entries: readonly ZipEntrySpec[],
  opts: ZipOptions = {},
): Promise<{ bytes: Buffer; layout: ZipLayout }> {
  const sink = new MemorySink();
  const layout = await writeArchive(sink, entries, opts);
  return { bytes: sink.bytes(), layout };
}

// ---------------------------------------------------------------------------
// Sinks: append-only output plus rewriting of a header already written (a
// streamed entry's local header gets its CRC and sizes once the data is out).

interface ByteSink {
  readonly position: number;
  write(chunk: Uint8Array): Promise<void>;
  /** Overwrites bytes written earlier; never extends the output. */
  writeAt(offset: number, bytes: Buffer): Promise<void>;
}

/** Collects output in 1 MiB batches and writes with explicit positions (pwrite), so rewriting a header is a plain positioned write. */
class FileSink implements ByteSink {
  private static readonly BATCH = 1 << 20;
  position = 0;
  private readonly pending = Buffer.allocUnsafe(FileSink.BATCH);
  private pendingLength = 0;

  constructor(private readonly fh: FileHandle) {}

  async write(chunk: Uint8Array): Promise<void> {
    if (this.pendingLength + chunk.length > FileSink.BATCH) await this.flush();
    if (chunk.length >= FileSink.BATCH) {
      await this.writeFully(chunk, this.position);
    } else {
      this.pending.set(chunk, this.pendingLength);
      this.pendingLength += chunk.length;
    }
    this.position += chunk.length;
  }

  async writeAt(offset: number, bytes: Buffer): Promise<void> {
    await this.flush();
    await this.writeFully(bytes, offset);
  }

  async flush(): Promise<void> {
    if (this.pendingLength === 0) return;
    const n = this.pendingLength;
    this.pendingLength = 0;
    await this.writeFully(this.pending.subarray(0, n), this.position - n);
  }

  private async writeFully(bytes: Uint8Array, at: number): Promise<void> {
    for (let done = 0; done < bytes.length;) {
      const { bytesWritten } = await this.fh.write(bytes, done, bytes.length - done, at + done);
      done += bytesWritten;
    }
  }
}

/** Keeps copies of the chunks (callers may reuse theirs) and concatenates once at the end. */
class MemorySink implements ByteSink {
  position = 0;
  private readonly chunks: Buffer[] = [];

  write(chunk: Uint8Array): Promise<void> {
    this.chunks.push(Buffer.from(chunk));
    this.position += chunk.length;
    return Promise.resolve();
  }

  writeAt(offset: number, bytes: Buffer): Promise<void> {
    // Rewrites always target one header written by one write() call.
    let start = 0;
    for (const chunk of this.chunks) {
      if (offset >= start && offset + bytes.length <= start + chunk.length) {
        bytes.copy(chunk, offset - start);
        return Promise.resolve();
      }
      start += chunk.length;
    }
    return Promise.reject(new Error(`zip-writer: rewrite at ${offset} spans chunks`));
  }

  bytes(): Buffer {
    return Buffer.concat(this.chunks, this.position);
  }
}

// ---------------------------------------------------------------------------
// Archive assembly.

/** An entry with defaults resolved and its real CRC/sizes once written. */
interface Resolved {
  spec: ZipEntrySpec;
  name: Buffer;
  comment: Buffer;
  extra: Buffer;
  method: 0 | 8;
  flags: number;
  zip64: boolean;
  madeBy: number;
  externalAttrs: number;
  localHeaderOffset: number;
  dataOffset: number;
  crc: number;
  compressedSize: number;
  uncompressedSize: number;
}

interface Sums {
  crc: number;
  compressedSize: number;
  uncompressedSize: number;
}

async function writeArchive(sink: ByteSink, specs: readonly ZipEntrySpec[], opts: ZipOptions): Promise<ZipLayout> {
  if (opts.prefixJunk) await sink.write(opts.prefixJunk);
  const written: Resolved[] = [];
  for (const spec of specs) written.push(await writeEntry(sink, spec));

  const centralDirectoryOffset = sink.position;
  const centralOffsets: number[] = [];
  for (const e of written) {
    centralOffsets.push(sink.position);
    await sink.write(centralHeader(e));
  }
  const centralDirectorySize = sink.position - centralDirectoryOffset;

  const count = opts.entryCountOverride ?? written.length;
  const zip64End =
    (opts.zip64 ?? false) || count >= U16_MAX || centralDirectorySize >= U32_MAX || centralDirectoryOffset >= U32_MAX;
  if (zip64End) {
    const recordOffset = sink.position;
    const record = Buffer.alloc(56);
    record.writeUInt32LE(SIG_ZIP64_EOCD, 0);
    record.writeBigUInt64LE(44n, 4); // size of the rest of the record
    record.writeUInt16LE((CREATOR_CODE.unix << 8) | 45, 12);
    record.writeUInt16LE(45, 14);
    // disk numbers (16, 20) stay 0
    record.writeBigUInt64LE(BigInt(count), 24);
    record.writeBigUInt64LE(BigInt(count), 32);
    record.writeBigUInt64LE(BigInt(centralDirectorySize), 40);
    record.writeBigUInt64LE(BigInt(centralDirectoryOffset), 48);
    await sink.write(record);
    const locator = Buffer.alloc(20);
    locator.writeUInt32LE(SIG_ZIP64_LOCATOR, 0);
    locator.writeBigUInt64LE(BigInt(recordOffset), 8);
    locator.writeUInt32LE(1, 16); // total number of disks
    await sink.write(locator);
  }

  const endOfCentralDirectoryOffset = sink.position;
  const comment = toBytes(opts.comment);
  const eocd = Buffer.alloc(22);
  eocd.writeUInt32LE(SIG_EOCD, 0);
  eocd.writeUInt16LE(zip64End ? U16_MAX : count, 8);
  eocd.writeUInt16LE(zip64End ? U16_MAX : count, 10);
  eocd.writeUInt32LE(zip64End ? U32_MAX : centralDirectorySize, 12);
  eocd.writeUInt32LE(zip64End ? U32_MAX : centralDirectoryOffset, 16);
  eocd.writeUInt16LE(comment.length, 20);
  await sink.write(Buffer.concat([eocd, comment]));
  if (opts.suffixJunk) await sink.write(opts.suffixJunk);

  return {
    entries: written.map((e, i) => ({
      name: e.name,
      localHeaderOffset: e.localHeaderOffset,
      dataOffset: e.dataOffset,
      compressedSize: e.compressedSize,
      uncompressedSize: e.uncompressedSize,
      crc32: e.crc,
      centralHeaderOffset: centralOffsets[i] ?? 0,
    })),
    centralDirectoryOffset,
    centralDirectorySize,
    endOfCentralDirectoryOffset,
    size: sink.position,
  };
}

async function writeEntry(sink: ByteSink, spec: ZipEntrySpec): Promise<Resolved> {
  const dir = spec.dir ?? false;
  const name = typeof spec.name === 'string' ? Buffer.from(spec.name, 'utf8') : spec.name;
  const utf8 = spec.utf8Flag ?? (typeof spec.name === 'string' && /[^\x00-\x7f]/.test(spec.name));
  const dataDescriptor = spec.dataDescriptor ?? false;
  const creator = spec.creator ?? 'unix';
  const zip64 = spec.zip64 ?? false;
  const e: Resolved = {
    spec,
    name,
    comment: toBytes(spec.comment),
    extra: spec.extra ?? Buffer.alloc(0),
    method: spec.method ?? (dir ? 0 : 8),
    flags: (dataDescriptor ? 0x08 : 0) | (utf8 ? 0x800 : 0),
    zip64,
    madeBy: (CREATOR_CODE[creator] << 8) | (zip64 ? 45 : 20),
    externalAttrs: spec.externalAttrs ?? defaultExternalAttrs(creator, dir, spec.unixMode),
    localHeaderOffset: sink.position,
    dataOffset: 0,
    crc: 0,
    compressedSize: 0,
    uncompressedSize: 0,
  };

  let sums: Sums;
  const data = spec.data ?? Buffer.alloc(0);
  if (typeof data === 'function') {
    if (spec.encoder === 'portable') throw new Error('zip-writer: the portable encoder needs in-memory data');
    // Placeholder header of the final length; rewritten below unless a descriptor carries the values.
    await sink.write(localHeader(e, { crc: 0, compressedSize: 0, uncompressedSize: 0 }));
    e.dataOffset = sink.position;
    sums = await streamData(sink, data(), e.method, spec.level ?? 6);
    checkFits(e, sums);
    if (!dataDescriptor) await sink.writeAt(e.localHeaderOffset, localHeader(e, sums));
  } else {
    const raw = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    const stored = e.method === 0 ? raw : await deflate(raw, spec);
    sums = { crc: crc32(raw), compressedSize: stored.length, uncompressedSize: raw.length };
    checkFits(e, sums);
    await sink.write(localHeader(e, sums));
    e.dataOffset = sink.position;
    await sink.write(stored);
  }
  e.crc = sums.crc;
  e.compressedSize = sums.compressedSize;
  e.uncompressedSize = sums.uncompressedSize;
  if (dataDescriptor) await sink.write(descriptor(e, dataDescriptor === true));
  return e;
}

function deflate(raw: Buffer, spec: ZipEntrySpec): Promise<Buffer> {
  if (spec.encoder === 'portable') return Promise.resolve(portableDeflate(raw));
  return new Promise((resolve, reject) => {
    zlib.deflateRaw(raw, { level: spec.level ?? 6 }, (err, out) => (err ? reject(err) : resolve(out)));
  });
}

/** Streams one entry's data through CRC-32 (and deflate) into the sink; memory stays at a few chunks. */
async function streamData(sink: ByteSink, source: ChunkSource, method: 0 | 8, level: number): Promise<Sums> {
  const sums: Sums = { crc: 0, compressedSize: 0, uncompressedSize: 0 };
  async function* measure(chunks: ChunkSource): AsyncGenerator<Uint8Array> {
    for await (const chunk of chunks) {
      sums.crc = crc32(chunk, sums.crc);
      sums.uncompressedSize += chunk.length;
      yield chunk;
    }
  }
  async function drain(chunks: AsyncIterable<Uint8Array>): Promise<void> {
    for await (const chunk of chunks) {
      sums.compressedSize += chunk.length;
      await sink.write(chunk);
    }
  }
  if (method === 0) await drain(measure(source));
  else await pipeline(Readable.from(measure(source)), zlib.createDeflateRaw({ level, chunkSize: 256 * 1024 }), drain);
  return sums;
}

function checkFits(e: Resolved, sums: Sums): void {
  if (!e.zip64 && (sums.compressedSize >= U32_MAX || sums.uncompressedSize >= U32_MAX)) {
    throw new Error(`zip-writer: entry ${e.name.toString('latin1')} is 4 GiB or larger: set zip64: true`);
  }
}

function storedCrc(e: Resolved, sums: Sums): number {
  return e.spec.crcOverride ?? sums.crc;
}

function storedSize(e: Resolved, sums: Sums): number {
  return e.spec.sizeOverride ?? sums.uncompressedSize;
}

function localHeader(e: Resolved, sums: Sums): Buffer {
  // With a data descriptor the local header carries zeros (as Go and Info-ZIP write it).
  const zero = (e.flags & 0x08) !== 0;
  const crc = zero ? 0 : storedCrc(e, sums);
  const csize = zero ? 0 : sums.compressedSize;
  const usize = zero ? 0 : storedSize(e, sums);
  let extra = e.extra;
  if (e.zip64) {
    const z = Buffer.alloc(20);
    z.writeUInt16LE(0x0001, 0);
    z.writeUInt16LE(16, 2);
    z.writeBigUInt64LE(BigInt(usize), 4);
    z.writeBigUInt64LE(BigInt(csize), 12);
    extra = Buffer.concat([z, e.extra]);
  }
  const h = Buffer.alloc(30);
  h.writeUInt32LE(SIG_LOCAL, 0);
  h.writeUInt16LE(e.zip64 ? 45 : 20, 4);
  h.writeUInt16LE(e.flags, 6);
  h.writeUInt16LE(e.method, 8);
  h.writeUInt16LE(DOS_TIME, 10);
  h.writeUInt16LE(DOS_DATE, 12);
  h.writeUInt32LE(crc >>> 0, 14);
  h.writeUInt32LE(e.zip64 ? U32_MAX : csize, 18);
  h.writeUInt32LE(e.zip64 ? U32_MAX : usize, 22);
  h.writeUInt16LE(e.name.length, 26);
  h.writeUInt16LE(extra.length, 28);
  return Buffer.concat([h, e.name, extra]);
}

function descriptor(e: Resolved, signature: boolean): Buffer {
  const sums = { crc: e.crc, compressedSize: e.compressedSize, uncompressedSize: e.uncompressedSize };
  // Sizes are 8 bytes when the local header has a zip64 extra (APPNOTE 4.3.9.2).
  const d = Buffer.alloc(e.zip64 ? 24 : 16);
  d.writeUInt32LE(SIG_DESCRIPTOR, 0);
  d.writeUInt32LE(storedCrc(e, sums) >>> 0, 4);
  if (e.zip64) {
    d.writeBigUInt64LE(BigInt(e.compressedSize), 8);
    d.writeBigUInt64LE(BigInt(storedSize(e, sums)), 16);
  } else {
    d.writeUInt32LE(e.compressedSize, 8);
    d.writeUInt32LE(storedSize(e, sums), 12);
  }
  return signature ? d : d.subarray(4);
}

function centralHeader(e: Resolved): Buffer {
  const sums = { crc: e.crc, compressedSize: e.compressedSize, uncompressedSize: e.uncompressedSize };
  const usize = storedSize(e, sums);
  // Each field that does not fit (or all three when zip64 is forced) moves to the
  // 0x0001 extra, in the order APPNOTE 4.5.3 fixes: size, compressed size, offset.
  const big = [usize, e.compressedSize, e.localHeaderOffset].map((v) => e.zip64 || v >= U32_MAX);
  const moved = [usize, e.compressedSize, e.localHeaderOffset].filter((_, i) => big[i]);
  let extra = e.extra;
  if (moved.length > 0) {
    const z = Buffer.alloc(4 + 8 * moved.length);
    z.writeUInt16LE(0x0001, 0);
    z.writeUInt16LE(8 * moved.length, 2);
    moved.forEach((v, i) => z.writeBigUInt64LE(BigInt(v), 4 + 8 * i));
    extra = Buffer.concat([z, e.extra]);
  }
  const h = Buffer.alloc(46);
  h.writeUInt32LE(SIG_CENTRAL, 0);
  h.writeUInt16LE(e.madeBy, 4);
  h.writeUInt16LE(e.zip64 ? 45 : 20, 6);
  h.writeUInt16LE(e.flags, 8);
  h.writeUInt16LE(e.method, 10);
  h.writeUInt16LE(DOS_TIME, 12);
  h.writeUInt16LE(DOS_DATE, 14);
  h.writeUInt32LE(storedCrc(e, sums) >>> 0, 16);
  h.writeUInt32LE(big[1] ? U32_MAX : e.compressedSize, 20);
  h.writeUInt32LE(big[0] ? U32_MAX : usize, 24);
  h.writeUInt16LE(e.name.length, 28);
  h.writeUInt16LE(extra.length, 30);
  h.writeUInt16LE(e.comment.length, 32);
  // disk number start (34), internal attributes (36) stay 0
  h.writeUInt32LE(e.externalAttrs >>> 0, 38);
  h.writeUInt32LE(big[2] ? U32_MAX : e.localHeaderOffset, 42);
  return Buffer.concat([h, e.name, extra, e.comment]);
}

function defaultExternalAttrs(creator: ZipCreator, dir: boolean, unixMode: number | undefined): number {
  const dosBits = dir ? 0x10 : creator === 'unix' ? 0 : 0x20; // directory / archive bit
  const mode = unixMode ?? (creator === 'unix' ? (dir ? 0o40755 : 0o100644) : 0);
  return ((mode << 16) | dosBits) >>> 0;
}

function toBytes(s: string | Buffer | undefined): Buffer {
  return s === undefined ? Buffer.alloc(0) : typeof s === 'string' ? Buffer.from(s, 'utf8') : s;
}

// ---------------------------------------------------------------------------
// Portable deflate: one fixed-Huffman block (RFC 1951 3.2.6), greedy LZ77 over
// a 32 KiB window with hash chains. Compresses text about half as well as zlib
// and is slow (meant for fixtures of kilobytes), but its output is a pure
// function of the input, so checked-in fixtures regenerate identically
// whatever zlib Node was built with.

const LENGTH_BASE = [
  3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258,
];
const LENGTH_EXTRA = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0];
const DIST_BASE = [
  1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145,
  8193, 12289, 16385, 24577,
];
const DIST_EXTRA = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13];
const WINDOW = 32768;
const MAX_CHAIN = 64;

class BitWriter {
  private readonly out: number[] = [];
  private acc = 0;
  private count = 0;

  /** Appends `n` (≤ 16) bits of `value`, least significant first (how deflate packs everything but Huffman codes). */
  bits(value: number, n: number): void {
    this.acc |= value << this.count;
    this.count += n;
    while (this.count >= 8) {
      this.out.push(this.acc & 0xff);
      this.acc >>>= 8;
      this.count -= 8;
    }
  }

  /** Appends a Huffman code of `n` bits, most significant bit first. */
  code(value: number, n: number): void {
    let reversed = 0;
    for (let i = 0; i < n; i++) reversed |= ((value >>> i) & 1) << (n - 1 - i);
    this.bits(reversed, n);
  }

  finish(): Buffer {
    if (this.count > 0) this.out.push(this.acc & 0xff);
    return Buffer.from(this.out);
  }
}

function writeSymbol(w: BitWriter, sym: number): void {
  if (sym < 144) w.code(0x30 + sym, 8);
  else if (sym < 256) w.code(0x190 + sym - 144, 9);
  else if (sym < 280) w.code(sym - 256, 7);
  else w.code(0xc0 + sym - 280, 8);
}

/** Index of the largest base ≤ v. */
function bucket(bases: readonly number[], v: number): number {
  let i = bases.length - 1;
  while ((bases[i] ?? 0) > v) i--;
  return i;
}

/**
 * Raw deflate (no zlib header) of `input`; deterministic across platforms and
 * Node versions. Incompressible input (where the fixed-code block would be
 * larger) is emitted as stored blocks instead, as zlib does.
 */
export function portableDeflate(input: Uint8Array): Buffer {
  const fixed = fixedHuffmanBlock(input);
  const storedLength = input.length + 5 * Math.max(1, Math.ceil(input.length / 0xffff));
  return fixed.length <= storedLength ? fixed : storedBlocks(input);
}

/** Stored blocks (BTYPE 00) of at most 65535 bytes each. */
function storedBlocks(input: Uint8Array): Buffer {
  const parts: Buffer[] = [];
  let offset = 0;
  do {
    const n = Math.min(0xffff, input.length - offset);
    const header = Buffer.alloc(5);
    header[0] = offset + n === input.length ? 1 : 0; // BFINAL, BTYPE 00, padded to the byte
    header.writeUInt16LE(n, 1);
    header.writeUInt16LE(~n & 0xffff, 3);
    parts.push(header, Buffer.from(input.subarray(offset, offset + n)));
    offset += n;
  } while (offset < input.length);
  return Buffer.concat(parts);
}

function fixedHuffmanBlock(input: Uint8Array): Buffer {
  const w = new BitWriter();
  w.bits(1, 1); // BFINAL
  w.bits(1, 2); // BTYPE = 01, fixed Huffman codes
  const head = new Int32Array(1 << 15).fill(-1);
  const prev = new Int32Array(Math.max(input.length, 1));
  const at = (i: number): number => input[i] ?? 0;
  const hash = (i: number): number => ((at(i) << 10) ^ (at(i + 1) << 5) ^ at(i + 2)) & 0x7fff;
  const insert = (i: number): void => {
    if (i + 3 > input.length) return;
    const h = hash(i);
    prev[i] = head[h] ?? -1;
    head[h] = i;
  };

  let i = 0;
  while (i < input.length) {
    let bestLength = 0;
    let bestDistance = 0;
    if (i + 3 <= input.length) {
      const max = Math.min(258, input.length - i);
      let candidate = head[hash(i)] ?? -1;
      for (let chain = MAX_CHAIN; candidate >= 0 && i - candidate <= WINDOW && chain > 0; chain--) {
        let n = 0;
        while (n < max && input[candidate + n] === input[i + n]) n++;
        if (n > bestLength) {
          bestLength = n;
          bestDistance = i - candidate;
          if (n === max) break;
        }
        candidate = prev[candidate] ?? -1;
      }
    }
    if (bestLength >= 3) {
      const li = bucket(LENGTH_BASE, bestLength);
      writeSymbol(w, 257 + li);
      w.bits(bestLength - (LENGTH_BASE[li] ?? 0), LENGTH_EXTRA[li] ?? 0);
      const di = bucket(DIST_BASE, bestDistance);
      w.code(di, 5);
      w.bits(bestDistance - (DIST_BASE[di] ?? 0), DIST_EXTRA[di] ?? 0);
      for (let k = 0; k < bestLength; k++) insert(i + k);
      i += bestLength;
    } else {
      writeSymbol(w, at(i));
      insert(i);
      i++;
    }
  }
  writeSymbol(w, 256); // end of block
  return w.finish();
}
