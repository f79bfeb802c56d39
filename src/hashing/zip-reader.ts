/**
 * A zip reader that accepts and refuses exactly what the reference does.
 *
 * The reference reads provider packages with Go's `archive/zip`; this module
 * follows that reader's rules (src/archive/zip/reader.go), because a package
 * the reference accepts must hash the same here and one it refuses must be
 * refused (docs/reference.md §10 item 149):
 *
 * - the end record is searched in the last 1 KiB, then the last 65 KiB; junk
 *   after the archive is fine, and junk before it is fine even when offsets
 *   were not adjusted (Go's `baseOffset` heuristic);
 * - central-directory headers are read until one does not parse; the count
 *   read must equal the end record's count modulo 65536;
 * - names are raw bytes: no CP437 decoding, the UTF-8 flag and the 0x7075
 *   Unicode-path field are ignored; the central directory wins over the local
 *   header's name;
 * - only store (0) and deflate (8) are supported; the encryption flag is ignored;
 * - an entry's data must inflate to exactly its recorded size, and its CRC-32
 *   must match (a recorded CRC of 0 without a data descriptor is not checked);
 * - with a data descriptor, the descriptor's CRC must equal the directory's.
 *
 * It does not extract and does not judge names: see zip-package.ts.
 *
 * I/O: positional reads on a {@link ZipSource} (a FileHandle, or the bytes of
 * a small archive already in memory); entry data is streamed (constant memory
 * whatever the entry size) or, for small entries, inflated in one call.
 */
import { createHash } from 'node:crypto';
import type { Writable } from 'node:stream';
import { createInflateRaw, inflateRawSync } from 'node:zlib';

import { ErrorCode, ProvkitError, errorText } from '../errors.js';
import { crc32 } from './crc32.js';
import { displayName } from './h1.js';
import {
  EXTRA_ZIP64,
  FLAG_DATA_DESCRIPTOR,
  LEN_CENTRAL,
  LEN_END,
  LEN_END64,
  LEN_LOC64,
  LEN_LOCAL,
  MAX16,
  MAX32,
  METHOD_DEFLATE,
  METHOD_STORE,
  SIG_CENTRAL,
  SIG_DESCRIPTOR,
  SIG_END,
  SIG_END64,
  SIG_LOC64,
  SIG_LOCAL,
} from './zip-format.js';
import { createRawInflater } from './inflate.js';

/**
 * What the reader needs of an open archive: positional reads and its size.
 * A `FileHandle` is one; {@link MemoryZipSource} is the other.
 */
export interface ZipSource {
  read(buffer: Buffer, offset: number, length: number, position: number): Promise<{ bytesRead: number }>;
  stat(): Promise<{ size: number }>;
}

/**
 * An archive whose bytes are already in memory, read as a file would be
 * (zip-stream.ts `hashZipFileOnce`: a small archive was read whole for its
 * `zh:`, so the authoritative pass reads that copy instead of the file: no
 * second open and no round trip to the I/O threads per header).
 */
export class MemoryZipSource implements ZipSource {
  constructor(private readonly bytes: Uint8Array) {}

  read(buffer: Buffer, offset: number, length: number, position: number): Promise<{ bytesRead: number }> {
    const start = Math.min(position, this.bytes.length);
    const end = Math.min(start + length, this.bytes.length);
    buffer.set(this.bytes.subarray(start, end), offset);
    return Promise.resolve({ bytesRead: end - start });
  }

  stat(): Promise<{ size: number }> {
    return Promise.resolve({ size: this.bytes.length });
  }
}

/** One central-directory entry, as Go's `zip.File` sees it. */
export interface ZipEntry {
  /** Position in the central directory (0-based). */
  readonly index: number;
  /** Raw name bytes as stored in the central directory. */
  readonly name: Buffer;
  readonly creatorVersion: number;
  readonly flags: number;
  readonly method: number;
  readonly crc32: number;
  readonly compressedSize: number;
  readonly uncompressedSize: number;
  readonly externalAttrs: number;
  /** Absolute offset of the local header (base offset applied). */
  readonly headerOffset: number;
}

export interface ZipDirectory {
  readonly entries: readonly ZipEntry[];
  readonly size: number;
}

/**
 * Options that bound what a hostile archive can make us do. All are checked
 * on the central directory, before a single byte is inflated; since every
 * entry must inflate to exactly its recorded size (see {@link digestEntry}),
 * the recorded sizes bound the real work, and a zip bomb (a lying or
 * overlapping directory) is stopped at the directory or at its first
 * oversized entry.
 */
export interface ZipLimits {
  /** Most central-directory entries accepted. */
  maxEntries: number;
  /** Most bytes of content, as the sum of the recorded uncompressed sizes (default 8 GiB; the largest real providers unpack to about 1 GB). */
  maxTotalBytes?: number;
  /**
   * Highest ratio of the summed uncompressed sizes to the archive's size
   * (default 200; real provider packages are below 10, deflate alone cannot
   * exceed about 1032, overlapping-entry bombs reach 10^4 to 10^7). Only
   * checked once the content exceeds {@link RATIO_FLOOR_BYTES}, so a small
   * archive of zeros stays acceptable.
   */
  maxRatio?: number;
}

/** Content below this size is never refused for its compression ratio (64 MiB). */
export const RATIO_FLOOR_BYTES = 64 * 1024 * 1024;

/**
 * The archive limits applied when none are given: 250 000 entries, 8 GiB uncompressed in total, a compression ratio
 * of 200 above {@link RATIO_FLOOR_BYTES}. An archive over them is refused with a `ProvkitError`.
 */
export const DEFAULT_ZIP_LIMITS: Required<ZipLimits> = {
  maxEntries: 250_000,
  maxTotalBytes: 8 * 1024 ** 3,
  maxRatio: 200,
};

const SIZE_UNITS: Readonly<Record<string, number>> = {
  '': 1,
  b: 1,
  k: 1024,
  kb: 1024,
  kib: 1024,
  m: 1024 ** 2,
  mb: 1024 ** 2,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gb: 1024 ** 3,
  gib: 1024 ** 3,
};

/**
 * Parses a limits override such as `entries=500000,bytes=16GiB,ratio=1000`
 * (the `PROVKIT_ZIP_LIMITS` environment variable of the CLI): keys
 * `entries`, `bytes` (with an optional `K`/`M`/`G`/`KiB`/`MiB`/`GiB` unit,
 * powers of 1024) and `ratio`; unset keys keep their defaults. An empty text
 * gives the defaults.
 *
 * @throws ProvkitError USAGE naming the bad item
 */
export function parseZipLimits(text: string, base: Required<ZipLimits> = DEFAULT_ZIP_LIMITS): Required<ZipLimits> {
  const out = { ...base };
  for (const item of text
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '')) {
    const m = /^(entries|bytes|ratio)\s*=\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)$/.exec(item);
    const unit = SIZE_UNITS[(m?.[3] ?? '').toLowerCase()];
    if (!m || unit === undefined || (m[1] !== 'bytes' && m[3] !== '')) {
      throw new ProvkitError(
        ErrorCode.USAGE,
        `invalid zip limit ${JSON.stringify(item)}: expected entries=N, bytes=N[K|M|G] or ratio=N`,
        { found: item },
      );
    }
    const value = Number(m[2]) * unit;
    if (m[1] === 'entries') out.maxEntries = Math.floor(value);
    else if (m[1] === 'bytes') out.maxTotalBytes = Math.floor(value);
    else out.maxRatio = value;
  }
  return out;
}

function limitError(file: string, what: string, limit: string, found: string): ProvkitError {
  return new ProvkitError(
    ErrorCode.ZIP_LIMIT_EXCEEDED,
    `${file}: ${what} (limit ${limit}; set PROVKIT_ZIP_LIMITS to raise it)`,
    {
      file,
      expected: limit,
      found,
    },
  );
}

function formatError(file: string, why: string): ProvkitError {
  return new ProvkitError(ErrorCode.ZIP_FORMAT, `${file}: zip: not a valid zip file (${why})`, { file });
}

/** Reads `length` bytes at `position` (fewer only at the end of the file). */
export function readAt(fh: ZipSource, position: number, length: number): Promise<Buffer> {
  return readInto(fh, Buffer.allocUnsafe(length), position, length);
}

/** Reads little-endian fields sequentially (Go's `readBuf`). */
class Fields {
  pos = 0;
  constructor(readonly buf: Buffer) {}
  u16(): number {
    const v = this.buf.readUInt16LE(this.pos);
    this.pos += 2;
    return v;
  }
  u32(): number {
    const v = this.buf.readUInt32LE(this.pos);
    this.pos += 4;
    return v;
  }
  /** A 64-bit field; values beyond 2^53 cannot be file offsets here and read as Infinity. */
  u64(): number {
    const v = this.buf.readBigUInt64LE(this.pos);
    this.pos += 8;
    return v > BigInt(Number.MAX_SAFE_INTEGER) ? Number.POSITIVE_INFINITY : Number(v);
  }
  skip(n: number): void {
    this.pos += n;
  }
}

/** `findSignatureInBlock`: the last end-record signature whose comment fits in the block. */
function findEndSignature(b: Buffer): number {
  for (let i = b.length - LEN_END; i >= 0; i--) {
    if (b.readUInt32LE(i) === SIG_END) {
      const n = b.readUInt16LE(i + LEN_END - 2);
      // A truncated comment: Go gives up on this block (Info-ZIP ignores it).
      if (n + LEN_END + i > b.length) return -1;
      return i;
    }
  }
  return -1;
}

interface EndRecord {
  records: number;
  dirSize: number;
  dirOffset: number;
}

/** `readDirectoryEnd`: locates the central directory and the base offset. */
async function readDirectoryEnd(
  fh: ZipSource,
  size: number,
  file: string,
): Promise<{ end: EndRecord; baseOffset: number }> {
  let block: Buffer | undefined;
  let endOffset = 0;
  for (const [i, want] of [1024, 65 * 1024].entries()) {
    const len = Math.min(want, size);
    // eslint-disable-next-line no-await-in-loop -- the second read only happens when the first fails
    const buf = await readAt(fh, size - len, len);
    const p = findEndSignature(buf);
    if (p >= 0) {
      block = buf.subarray(p);
      endOffset = size - len + p;
      break;
    }
    if (i === 1 || len === size) break;
  }
  if (!block) throw formatError(file, 'no end of central directory record');

  const f = new Fields(block);
  f.skip(4);
  f.u16(); // number of this disk
  f.u16(); // disk with the central directory
  f.u16(); // records on this disk
  const end: EndRecord = { records: f.u16(), dirSize: f.u32(), dirOffset: f.u32() };
  // The zip64 end record is consulted when a field is saturated. (Go tests
  // the 32-bit size against 0xffff, not 0xffffffff; copied as is.)
  if (end.records === MAX16 || end.dirSize === MAX16 || end.dirOffset === MAX32) {
    const p = await findDirectory64End(fh, endOffset);
    if (p >= 0) {
      endOffset = p;
      const b = await readAt(fh, p, LEN_END64);
      if (b.length < LEN_END64) throw formatError(file, 'truncated zip64 end record');
      const g = new Fields(b);
      if (g.u32() !== SIG_END64) throw formatError(file, 'bad zip64 end record signature');
      g.skip(12);
      g.u32();
      g.u32();
      g.u64();
      end.records = g.u64();
      end.dirSize = g.u64();
      end.dirOffset = g.u64();
    }
  }
  if (!Number.isFinite(end.dirSize) || !Number.isFinite(end.dirOffset))
    throw formatError(file, 'directory offset out of range');
  let baseOffset = endOffset - end.dirSize - end.dirOffset;
  const o = baseOffset + end.dirOffset;
  if (o < 0 || o >= size) throw formatError(file, 'directory offset outside the file');
  // Go: when the end record implies a non-zero base offset but a valid header
  // sits at the unadjusted offset, the base offset is 0.
  if (baseOffset > 0) {
    const probe = await readAt(fh, end.dirOffset, LEN_CENTRAL);
    if (probe.length === LEN_CENTRAL && probe.readUInt32LE(0) === SIG_CENTRAL) {
      const nameLen = probe.readUInt16LE(28);
      const extraLen = probe.readUInt16LE(30);
      const commentLen = probe.readUInt16LE(32);
      const rest = await readAt(fh, end.dirOffset + LEN_CENTRAL, nameLen + extraLen + commentLen);
      if (
        rest.length === nameLen + extraLen + commentLen &&
        parseZip64Extra(probe, rest.subarray(nameLen, nameLen + extraLen)) !== null
      ) {
        baseOffset = 0;
      }
    }
  }
  return { end, baseOffset };
}

async function findDirectory64End(fh: ZipSource, endOffset: number): Promise<number> {
  const loc = endOffset - LEN_LOC64;
  if (loc < 0) return -1;
  const b = await readAt(fh, loc, LEN_LOC64);
  if (b.length < LEN_LOC64) return -1;
  const f = new Fields(b);
  if (f.u32() !== SIG_LOC64) return -1;
  if (f.u32() !== 0) return -1;
  const p = f.u64();
  if (f.u32() !== 1) return -1;
  return Number.isFinite(p) ? p : -1;
}

/**
 * Applies a central header's zip64 extra field (Go's `readDirectoryHeader`):
 * saturated sizes and offset are taken from it; returns null when a needed
 * value is missing (Go's ErrFormat).
 */
function parseZip64Extra(header: Buffer, extra: Buffer): { csize: number; usize: number; offset: number } | null {
  let csize = header.readUInt32LE(20);
  let usize = header.readUInt32LE(24);
  let offset = header.readUInt32LE(42);
  let needU = usize === MAX32;
  let needC = csize === MAX32;
  let needO = offset === MAX32;
  let p = 0;
  while (extra.length - p >= 4) {
    const tag = extra.readUInt16LE(p);
    const len = extra.readUInt16LE(p + 2);
    p += 4;
    if (extra.length - p < len) break;
    if (tag === EXTRA_ZIP64) {
      const field = new Fields(extra.subarray(p, p + len));
      if (needU) {
        needU = false;
        if (len - field.pos < 8) return null;
        usize = field.u64();
      }
      if (needC) {
        needC = false;
        if (len - field.pos < 8) return null;
        csize = field.u64();
      }
      if (needO) {
        needO = false;
        if (len - field.pos < 8) return null;
        offset = field.u64();
      }
    }
    p += len;
  }
  // An uncompressed size of 2^32-1 without zip64 is accepted (42.zip), the others are not.
  if (needC || needO) return null;
  return { csize, usize, offset };
}

/** Sequential reads over the file from a position, in blocks (Go's bufio over a section). */
class BlockReader {
  private buf: Buffer = Buffer.alloc(0);
  private pos: number;
  constructor(
    private readonly fh: ZipSource,
    start: number,
    private readonly size: number,
  ) {
    this.pos = start;
  }
  /** Exactly `n` bytes, or null at the end of the file. */
  async take(n: number): Promise<Buffer | null> {
    while (this.buf.length < n && this.pos < this.size) {
      const want = Math.min(Math.max(n - this.buf.length, 64 * 1024), this.size - this.pos);
      // eslint-disable-next-line no-await-in-loop -- refills one buffer in order
      const more = await readAt(this.fh, this.pos, want);
      if (more.length === 0) break;
      this.pos += more.length;
      this.buf = this.buf.length === 0 ? more : Buffer.concat([this.buf, more]);
    }
    if (this.buf.length < n) return null;
    const out = this.buf.subarray(0, n);
    this.buf = this.buf.subarray(n);
    return out;
  }
}

/**
 * Reads the central directory of the zip open on `fh`.
 *
 * @throws ProvkitError ZIP_FORMAT (not an archive the reference can open),
 *   ZIP_LIMIT_EXCEEDED (more entries than `limits.maxEntries`, more content
 *   than `limits.maxTotalBytes`, or a ratio above `limits.maxRatio`)
 */
export async function readZipDirectory(
  fh: ZipSource,
  file: string,
  limits: ZipLimits = DEFAULT_ZIP_LIMITS,
): Promise<ZipDirectory> {
  const { size } = await fh.stat();
  const { end, baseOffset } = await readDirectoryEnd(fh, size, file);
  const reader = new BlockReader(fh, baseOffset + end.dirOffset, size);
  const entries: ZipEntry[] = [];
  const maxTotal = limits.maxTotalBytes ?? DEFAULT_ZIP_LIMITS.maxTotalBytes;
  const maxRatio = limits.maxRatio ?? DEFAULT_ZIP_LIMITS.maxRatio;
  let total = 0;
  for (;;) {
    // eslint-disable-next-line no-await-in-loop -- headers are read in order
    const header = await reader.take(LEN_CENTRAL);
    if (!header || header.readUInt32LE(0) !== SIG_CENTRAL) break;
    const nameLen = header.readUInt16LE(28);
    const extraLen = header.readUInt16LE(30);
    const commentLen = header.readUInt16LE(32);
    // eslint-disable-next-line no-await-in-loop
    const rest = await reader.take(nameLen + extraLen + commentLen);
    if (!rest) break;
    const z = parseZip64Extra(header, rest.subarray(nameLen, nameLen + extraLen));
    if (!z) break;
    if (entries.length >= limits.maxEntries) {
      throw limitError(
        file,
        `more than ${limits.maxEntries} entries`,
        `at most ${limits.maxEntries} entries`,
        `more than ${limits.maxEntries}`,
      );
    }
    total += z.usize;
    if (total > maxTotal) {
      throw limitError(
        file,
        `the entries would unpack to more than ${maxTotal} bytes`,
        `at most ${maxTotal} bytes`,
        `${total} bytes or more`,
      );
    }
    entries.push({
      index: entries.length,
      name: Buffer.from(rest.subarray(0, nameLen)),
      creatorVersion: header.readUInt16LE(4),
      flags: header.readUInt16LE(8),
      method: header.readUInt16LE(10),
      crc32: header.readUInt32LE(16),
      compressedSize: z.csize,
      uncompressedSize: z.usize,
      externalAttrs: header.readUInt32LE(38),
      headerOffset: z.offset + baseOffset,
    });
  }
  if (total > RATIO_FLOOR_BYTES && total / Math.max(1, size) > maxRatio) {
    const ratio = Math.round(total / Math.max(1, size));
    throw limitError(
      file,
      `the entries would unpack to ${total} bytes from ${size}, a compression ratio of ${ratio}`,
      `a ratio of at most ${maxRatio}`,
      `${ratio}`,
    );
  }
  // Go compares only 16 bits: the count in the end record is truncated in zip32.
  if ((entries.length & 0xffff) !== end.records % 0x10000) {
    throw formatError(
      file,
      `the central directory has ${entries.length} readable entries, the end record says ${end.records}`,
    );
  }
  return { entries, size };
}

/** Go's `File.Mode().IsDir()`: a trailing `/`, or a directory mode from a Unix or FAT creator. */
export function entryIsDir(e: ZipEntry): boolean {
  if (e.name.length > 0 && e.name[e.name.length - 1] === 0x2f) return true;
  switch (e.creatorVersion >> 8) {
    case 3: // Unix
    case 19: // macOS
      return ((e.externalAttrs >>> 16) & 0xf000) === 0x4000;
    case 0: // FAT
    case 11: // NTFS
    case 14: // VFAT
      return (e.externalAttrs & 0x10) !== 0;
    default:
      return false;
  }
}

/** Go's `File.Mode()&ModeSymlink` for Unix creators. */
export function entryIsSymlink(e: ZipEntry): boolean {
  const creator = e.creatorVersion >> 8;
  return (creator === 3 || creator === 19) && ((e.externalAttrs >>> 16) & 0xf000) === 0xa000;
}

function entryError(code: ErrorCode, file: string, e: ZipEntry, why: string): ProvkitError {
  const entry = displayName(e.name);
  return new ProvkitError(code, `${file}: entry ${JSON.stringify(entry)}: ${why}`, { file, entry });
}

/** `findBodyOffset`: checks the local header and returns where the data starts. */
export async function entryDataOffset(fh: ZipSource, file: string, e: ZipEntry): Promise<number> {
  const b = await readAt(fh, e.headerOffset, LEN_LOCAL);
  if (b.length < LEN_LOCAL) throw entryError(ErrorCode.ZIP_FORMAT, file, e, 'local header beyond the end of the file');
  if (b.readUInt32LE(0) !== SIG_LOCAL)
    throw entryError(ErrorCode.ZIP_FORMAT, file, e, 'zip: not a valid zip file (bad local header signature)');
  return e.headerOffset + LEN_LOCAL + b.readUInt16LE(26) + b.readUInt16LE(28);
}

/**
 * What a streaming pass (zip-stream.ts) computed for the data starting at one
 * offset: the method, how many compressed bytes the data took, and the
 * content's size, SHA-256 and CRC-32.
 */
export interface StreamedDigest {
  /** The compression method the data was read with: 0 (store) or 8 (deflate). Used only for an entry of this method. */
  readonly method: number;
  /** Bytes of the archive the data took, from its first byte. Used only for an entry of this compressed size. */
  readonly compressedSize: number;
  /** Bytes of content (inflated, for deflate), checked against the entry's uncompressed size as a read is. */
  readonly size: number;
  /** The SHA-256 of the content, 32 bytes: what `Hash1` digests for the entry. */
  readonly sha256: Buffer;
  /** The CRC-32 (IEEE, unsigned) of the content, checked against the entry's as a read is. */
  readonly crc32: number;
}

/** Entries whose compressed size is at most this are read and inflated in one call. */
const SMALL_ENTRY = 1024 * 1024;
const READ_BLOCK = 1024 * 1024;
const INFLATE_CHUNK = 1024 * 1024;
const PIPE_BUFFER = 4 * 1024 * 1024;

/**
 * SHA-256 of an entry's content, read as Go's `File.Open` reads it, with the
 * size and CRC-32 checks of its `checksumReader`. Directory entries (a name
 * ending in `/`) read as empty when their recorded size is 0, else fail.
 *
 * @throws ProvkitError ZIP_FORMAT, ZIP_SIZE, ZIP_CHECKSUM, ZIP_UNSUPPORTED_METHOD, ZIP_CORRUPT_DATA
 */
export async function digestEntry(
  fh: ZipSource,
  file: string,
  e: ZipEntry,
  fileSize: number,
  streamed?: ReadonlyMap<number, StreamedDigest>,
): Promise<Buffer> {
  const start = await entryDataOffset(fh, file, e);
  const sha = createHash('sha256');
  if (e.name.length > 0 && e.name[e.name.length - 1] === 0x2f) {
    if (e.uncompressedSize !== 0)
      throw entryError(ErrorCode.ZIP_FORMAT, file, e, 'zip: not a valid zip file (directory entry with data)');
    return sha.digest();
  }
  if (e.method !== METHOD_STORE && e.method !== METHOD_DEFLATE) {
    throw entryError(
      ErrorCode.ZIP_UNSUPPORTED_METHOD,
      file,
      e,
      `zip: unsupported compression algorithm (method ${e.method})`,
    );
  }
  // The section Go reads is cut at the end of the file.
  const end = Math.min(start + e.compressedSize, fileSize);
  let crc = 0;
  let n = 0;
  const take = (chunk: Buffer): void => {
    n += chunk.length;
    if (n > e.uncompressedSize)
      throw entryError(ErrorCode.ZIP_SIZE, file, e, `content is larger than the recorded ${e.uncompressedSize} bytes`);
    sha.update(chunk);
    crc = crc32(chunk, crc);
  };

  // A streaming pass already read these very bytes (same start, same method,
  // exactly the compressed size the directory records): its digest is what
  // reading them again would give. Every check below still runs.
  const hint = streamed?.get(start);
  let digest: Buffer | undefined;
  if (
    hint &&
    hint.method === e.method &&
    hint.compressedSize === e.compressedSize &&
    start + e.compressedSize <= fileSize
  ) {
    if (hint.size > e.uncompressedSize)
      throw entryError(ErrorCode.ZIP_SIZE, file, e, `content is larger than the recorded ${e.uncompressedSize} bytes`);
    n = hint.size;
    crc = hint.crc32;
    digest = hint.sha256;
  } else if (e.method === METHOD_STORE) {
    for (let pos = start; pos < end;) {
      // eslint-disable-next-line no-await-in-loop -- sequential read of one entry
      const chunk = await readAt(fh, pos, Math.min(READ_BLOCK, end - pos));
      if (chunk.length === 0) break;
      pos += chunk.length;
      take(chunk);
    }
  } else if (end - start <= SMALL_ENTRY) {
    const compressed = await readAt(fh, start, Math.max(0, end - start));
    let out: Buffer;
    try {
      // maxOutputLength bounds memory against a lying size (a zip bomb): one
      // byte more than recorded is enough to know it is too long.
      out = inflateRawSync(compressed, { maxOutputLength: Math.max(1, e.uncompressedSize + 1) });
    } catch (err) {
      throw inflateError(file, e, err);
    }
    take(out);
  } else {
    await inflateRange(fh, file, e, start, end, take);
  }

  if (n !== e.uncompressedSize) {
    throw entryError(
      ErrorCode.ZIP_SIZE,
      file,
      e,
      `unexpected EOF: content is ${n} bytes, the recorded size is ${e.uncompressedSize}`,
    );
  }
  if (e.flags & FLAG_DATA_DESCRIPTOR) {
    // Go's readDataDescriptor: optional signature, then the CRC, which must
    // equal the central directory's; the sizes after it are ignored.
    const d = await readAt(fh, start + e.compressedSize, 16);
    const hasSig = d.length >= 4 && d.readUInt32LE(0) === SIG_DESCRIPTOR;
    const at = hasSig ? 4 : 0;
    if (d.length < at + 12) throw entryError(ErrorCode.ZIP_SIZE, file, e, 'unexpected EOF in the data descriptor');
    if (d.readUInt32LE(at) !== e.crc32 || crc !== e.crc32)
      throw entryError(ErrorCode.ZIP_CHECKSUM, file, e, 'zip: checksum error');
  } else if (e.crc32 !== 0 && crc !== e.crc32) {
    throw entryError(ErrorCode.ZIP_CHECKSUM, file, e, 'zip: checksum error');
  }
  return digest ?? sha.digest();
}

function inflateError(file: string, e: ZipEntry, err: unknown): ProvkitError {
  if (err instanceof ProvkitError) return err;
  const code = typeof err === 'object' && err !== null && 'code' in err ? String(err.code) : '';
  if (code === 'ERR_BUFFER_TOO_LARGE') {
    return entryError(ErrorCode.ZIP_SIZE, file, e, `content is larger than the recorded ${e.uncompressedSize} bytes`);
  }
  if (code === 'Z_BUF_ERROR') return entryError(ErrorCode.ZIP_SIZE, file, e, 'unexpected EOF in deflate data');
  const msg = errorText(err);
  return entryError(ErrorCode.ZIP_CORRUPT_DATA, file, e, `corrupt deflate data: ${msg}`);
}

/**
 * Writes `chunk` to `stream`; when its buffer is full, resolves once it
 * drains or closes (or `stop` settles), so a writer never piles up input.
 */
export async function writeWithBackpressure(stream: Writable, chunk: Buffer, stop?: Promise<unknown>): Promise<void> {
  if (stream.write(chunk)) return;
  await new Promise<void>((resolve) => {
    const go = (): void => {
      stream.off('drain', go);
      stream.off('close', go);
      resolve();
    };
    stream.once('drain', go);
    stream.once('close', go);
    void stop?.then(go);
  });
}

/** Reads `length` bytes at `position` into `buf` (fewer only at the end of the file); returns the filled part. */
async function readInto(fh: ZipSource, buf: Buffer, position: number, length: number): Promise<Buffer> {
  let done = 0;
  while (done < length) {
    // eslint-disable-next-line no-await-in-loop -- sequential fill of one buffer
    const { bytesRead } = await fh.read(buf, done, length - done, position + done);
    if (bytesRead === 0) break;
    done += bytesRead;
  }
  return buf.subarray(0, done);
}

/**
 * Inflates [start, end) in this thread (inflate.ts), handing each output
 * piece to `take`: two read buffers for the whole entry, alternating (the
 * next block is read while this one inflates), one output buffer per thread.
 * Stops reading at the end of the deflate stream (Go's reader reads no
 * further either). Falls back to {@link inflateStream} where the in-thread
 * inflater is not available.
 */
async function inflateRange(
  fh: ZipSource,
  file: string,
  e: ZipEntry,
  start: number,
  end: number,
  take: (chunk: Buffer) => void,
): Promise<void> {
  const inflater = createRawInflater();
  if (!inflater) {
    await inflateStream(fh, file, e, start, end, take);
    return;
  }
  const buffers = [Buffer.allocUnsafeSlow(READ_BLOCK), Buffer.allocUnsafeSlow(READ_BLOCK)] as const;
  let pos = start;
  let next = 0;
  const nextRead = (): Promise<Buffer> | undefined => {
    if (pos >= end) return undefined;
    const len = Math.min(READ_BLOCK, end - pos);
    const p = readInto(fh, buffers[next]!, pos, len);
    pos += len;
    next ^= 1;
    return p;
  };
  let pending = nextRead();
  try {
    while (pending) {
      // eslint-disable-next-line no-await-in-loop -- one read ahead, into the other buffer
      const chunk = await pending;
      pending = undefined;
      if (chunk.length === 0) break;
      pending = nextRead();
      inflater.write(chunk, take);
      if (inflater.ended) break;
    }
    inflater.finish(take);
  } catch (err) {
    throw inflateError(file, e, err);
  } finally {
    inflater.close();
    // A read still under way must not outlive the entry (the file is closed after it).
    await pending?.catch(() => undefined);
  }
}

/** Streams [start, end) through a raw inflater, handing each output chunk to `take`. */
async function inflateStream(
  fh: ZipSource,
  file: string,
  e: ZipEntry,
  start: number,
  end: number,
  take: (chunk: Buffer) => void,
): Promise<void> {
  // Generous buffers on both sides let the inflater (on libuv's thread pool)
  // run ahead of the hashing (on this thread) instead of taking turns.
  // (Node passes zlib options on to the Transform constructor; the type
  // ZlibOptions does not list the stream options.)
  const streamOptions: object = { readableHighWaterMark: PIPE_BUFFER, writableHighWaterMark: PIPE_BUFFER };
  const inflater = createInflateRaw({ chunkSize: INFLATE_CHUNK, ...streamOptions });
  // Errors reach us through the async iterator; this listener keeps a late
  // error (a write racing a destroy) from becoming an uncaught 'error' event.
  inflater.on('error', () => undefined);
  let failure: unknown;
  const consumed = (async (): Promise<void> => {
    for await (const chunk of inflater as AsyncIterable<Buffer>) {
      take(chunk);
    }
  })().catch((err: unknown) => {
    failure ??= err;
    inflater.destroy();
  });
  try {
    // One read ahead: the next block is read while the current one inflates.
    let pos = start;
    const nextRead = (): Promise<Buffer> | undefined => {
      if (pos >= end) return undefined;
      const p = readAt(fh, pos, Math.min(READ_BLOCK, end - pos));
      pos += Math.min(READ_BLOCK, end - pos);
      return p;
    };
    for (let pending = nextRead(); pending && failure === undefined;) {
      // eslint-disable-next-line no-await-in-loop -- bounded read-ahead keeps memory flat
      const chunk = await pending;
      if (chunk.length === 0) break;
      pending = nextRead();
      // eslint-disable-next-line no-await-in-loop -- backpressure
      await writeWithBackpressure(inflater, chunk);
    }
    if (!inflater.destroyed) inflater.end();
  } catch (err) {
    failure ??= err;
    inflater.destroy();
  }
  await consumed;
  if (failure !== undefined) throw inflateError(file, e, failure);
}
