/**
 * Safe extraction of a provider zip into a package directory, exactly as the
 * reference extracts it (go-getter `ZipDecompressor{}` with `dir=true`,
 * `umask=0`; docs/reference.md §8.1 items 105–111,
 * §10 item 149).
 *
 * What lands on disk is what `src/hashing/zip-package.ts` simulates for the
 * lock file's `h1:` (the extracted form), so `hashPackageDir(target)` equals
 * the zip's extracted-form `h1:`:
 *
 * - entries in archive order; a directory entry (a trailing `/`, or a
 *   directory mode from a Unix or FAT creator) makes a directory, mode 0755
 *   whatever the zip says, as do missing parents (both subject to the process
 *   umask, as Go's `os.MkdirAll`);
 * - a later entry with the same (cleaned) name overwrites the earlier one;
 * - names are raw bytes, cleaned as Go's `filepath.Join` on a Unix host
 *   (`./x` → `x`, `a//b` → `a/b`; `\` is an ordinary byte);
 * - a symlink entry becomes a regular file holding the link text (go-getter
 *   never creates links, so extraction cannot escape through one);
 * - file modes come from the entry with no umask (docs/reference.md §8.1 item 109): Unix creators
 *   their permission bits, FAT/NTFS/VFAT creators 0666 (0444 when read-only),
 *   other creators 0.
 *
 * Refused before anything is written (provkit checks every name first, where
 * go-getter fails half-way and leaves the entries before the bad one behind):
 * an empty archive, a `..` segment (split on `/` and `\`), an absolute name
 * (provkit refuses `/x`, `\x` and `C:x` on purpose, like the hashing core;
 * the reference extracts `/tmp/x` as `tmp/x`), a file where a directory must
 * go or the reverse, a file name holding a newline (dirhash refuses it), a
 * name holding any other control character (`ZIP_UNSAFE_NAME`: terraform
 * 1.11.4 writes ESC and CR names to disk and fails half-way on NUL; provkit
 * never creates such a name, see test/fixtures/install-safety/), and
 * archives beyond {@link ExtractLimits}. Data errors (CRC, sizes, corrupt
 * deflate) are found while streaming.
 *
 * Deliberate deviations, none of which changes a hash:
 * - setuid, setgid and sticky bits are dropped (the reference `chmod`s them
 *   through; a package extracted by root into a shared cache must not carry a
 *   setuid binary);
 * - modes are applied after all entries are written, so a read-only entry
 *   followed by a duplicate of the same name does not fail as it would for a
 *   non-root user under go-getter;
 * - with `fileModeMask` (the plugin cache and unpacked mirrors, places
 *   several users or jobs share), the bits outside the mask are dropped too:
 *   the installer passes 0o755, so a zip's 0777/0666/0602 become
 *   0755/0644/0600 there (docs/file-modes.md). `.terraform/providers` keeps
 *   the reference's modes exactly.
 *
 * Atomicity: entries are streamed (constant memory) into a fresh directory
 * beside the target, which is renamed into place only once complete; on any
 * failure, or an abort, the temporary directory is removed, so an interrupted
 * extraction never leaves a half-written package at the target.
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { chmod, type FileHandle, lstat, mkdir, open, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createInflateRaw } from 'node:zlib';

import { ErrorCode, isProvkitError, ProvkitError, systemErrorCode, errorText } from '../errors.js';
import { swapDirInto } from '../fs/swap.js';
import { removeTempsBeside, tempPathBeside } from '../fs/temp-name.js';
import {
  DEFAULT_ZIP_LIMITS,
  displayName,
  type Hash,
  hash1FromDigests,
  type NamedDigest,
  type ZipLimits,
} from '../hashing/index.js';
import { crc32 } from '../hashing/crc32.js';
import { FLAG_DATA_DESCRIPTOR, METHOD_DEFLATE, METHOD_STORE, SIG_DESCRIPTOR } from '../hashing/zip-format.js';
import { planExtraction } from '../hashing/zip-package.js';
import { entryDataOffset, readAt, readZipDirectory, type ZipEntry } from '../hashing/zip-reader.js';

/** Bounds on what a hostile archive can make extraction do (docs/reference.md §8.1 item 105: the reference has none). */
export interface ExtractLimits {
  /** Most central-directory entries (default 250 000, as the hashing core). */
  readonly maxEntries: number;
  /**
   * Most bytes written, as the sum of the recorded uncompressed sizes (each
   * entry must inflate to exactly its recorded size, so this bounds the
   * output). Default 16 GiB.
   */
  readonly maxTotalBytes: number;
}

export const DEFAULT_EXTRACT_LIMITS: ExtractLimits = {
  maxEntries: DEFAULT_ZIP_LIMITS.maxEntries,
  maxTotalBytes: 16 * 1024 ** 3,
};

/** How {@link extractPackage} unpacks a provider package. */
export interface ExtractOptions {
  /** Limits of what one archive may extract to (entries, total bytes; default `DEFAULT_EXTRACT_LIMITS`), per field. */
  readonly limits?: Partial<ExtractLimits>;
  /** The archive limits of the hashing core (the ratio); entries and total bytes come from `limits`. */
  readonly zipLimits?: ZipLimits;
  /** Aborts the extraction: the temporary directory is removed and the target is left as it was. */
  readonly signal?: AbortSignal;
  /**
   * What to do when the target already exists and is not an empty directory:
   * `fail` (default) throws `IO`; `replace` swaps the new package in (the old
   * one is moved aside, then removed).
   */
  readonly existing?: 'fail' | 'replace';
  /**
   * Called with the complete temporary directory before it is renamed into
   * place; a rejection aborts the extraction and removes it (the installer
   * checks the provider executable here, so a package without one never lands).
   */
  readonly beforeCommit?: (tempDir: string) => Promise<void>;
  /**
   * Permission bits a file may keep (default 0o777: the reference's modes).
   * 0o755 strips group and world write for shared places (see the module comment).
   */
  readonly fileModeMask?: number;
}

/** What {@link extractPackage} put in place. */
export interface ExtractResult {
  /** The package directory (the target). */
  readonly dir: string;
  /**
   * `h1:` of the extracted tree, computed from the bytes as they were
   * written: equal to `hashPackageDir(dir)` (the lock file's new hash, docs/reference.md §5.2 item 79).
   */
  readonly h1: Hash;
  /** Regular files in the package. */
  readonly files: number;
  /** Bytes written, duplicates included. */
  readonly bytes: number;
}

/** One planned step, in archive order. */
export type ExtractionStep =
  | { readonly kind: 'dir'; readonly rel: Buffer }
  | { readonly kind: 'file'; readonly rel: Buffer; readonly entry: ZipEntry; readonly mode: number };

const SLASH = 0x2f;
const READ_BLOCK = 1024 * 1024;

function zipError(code: ErrorCode, zipPath: string, e: ZipEntry | undefined, why: string): ProvkitError {
  return new ProvkitError(code, `${zipPath}: ${why}`, { file: zipPath, ...(e ? { entry: displayName(e.name) } : {}) });
}

/**
 * The permission bits the reference gives an extracted file: Go's
 * `FileHeader.Mode()` perm bits (Unix and macOS creators: the mode's low
 * 9 bits; FAT, NTFS and VFAT: 0666, 0444 when the read-only attribute is set;
 * any other creator: 0). Special bits are dropped (see the module comment).
 */
export function entryFileMode(e: ZipEntry): number {
  switch (e.creatorVersion >> 8) {
    case 3: // Unix
    case 19: // macOS
      return (e.externalAttrs >>> 16) & 0o777;
    case 0: // FAT
    case 11: // NTFS
    case 14: // VFAT
      return e.externalAttrs & 0x01 ? 0o444 : 0o666;
    default:
      return 0;
  }
}

/**
 * Checks every name and returns the steps, or throws the first refusal in
 * archive order; nothing is written. The rules are the extracted form's
 * ({@link planExtraction} in src/hashing/zip-package.ts), so install and the
 * lock-file `h1:` refuse the same archives with the same codes; here names
 * with newlines are refused up front, and the total size is bounded.
 *
 * @throws ProvkitError ZIP_EMPTY, ZIP_PATH_TRAVERSAL, ZIP_ABSOLUTE_PATH,
 *   ZIP_EXTRACT_CONFLICT, HASH_NEWLINE_IN_NAME, ZIP_UNSAFE_NAME, ZIP_LIMIT_EXCEEDED
 */
export function planPackageExtraction(
  zipPath: string,
  entries: readonly ZipEntry[],
  limits: ExtractLimits = DEFAULT_EXTRACT_LIMITS,
): ExtractionStep[] {
  const plan = planExtraction(zipPath, entries, {
    maxTotalBytes: limits.maxTotalBytes,
    refuseNewlines: true,
    refuseControlCharacters: true,
  });
  if (plan.error) throw plan.error;
  return plan.steps.map((step) => (step.kind === 'file' ? { ...step, mode: entryFileMode(step.entry) } : step));
}

/** Whether a path exists (Lstat: a symlink counts, dangling or not). */
export async function pathExists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch (err) {
    if (systemErrorCode(err) === 'ENOENT') return false;
    throw err;
  }
}

/** Counts bytes, CRC-32 and SHA-256 of an entry's content; fails as soon as it exceeds the recorded size. */
class EntryCheck extends Transform {
  readonly sha = createHash('sha256');
  crc = 0;
  n = 0;
  constructor(
    private readonly limit: number,
    private readonly tooLong: () => ProvkitError,
  ) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.n += chunk.length;
    if (this.n > this.limit) {
      cb(this.tooLong());
      return;
    }
    this.sha.update(chunk);
    this.crc = crc32(chunk, this.crc);
    cb(null, chunk);
  }
}

async function* readRange(fh: FileHandle, start: number, end: number): AsyncGenerator<Buffer> {
  for (let pos = start; pos < end;) {
    // eslint-disable-next-line no-await-in-loop -- one block at a time keeps memory flat
    const chunk = await readAt(fh, pos, Math.min(READ_BLOCK, end - pos));
    if (chunk.length === 0) return;
    pos += chunk.length;
    yield chunk;
  }
}

function entryError(code: ErrorCode, zipPath: string, e: ZipEntry, why: string): ProvkitError {
  return zipError(code, zipPath, e, `entry ${JSON.stringify(displayName(e.name))}: ${why}`);
}

function streamError(zipPath: string, e: ZipEntry, err: unknown): ProvkitError {
  if (err instanceof ProvkitError) return err;
  const code = systemErrorCode(err) ?? '';
  if (code === 'ABORT_ERR')
    return new ProvkitError(ErrorCode.ABORTED, `${zipPath}: extraction was interrupted`, { file: zipPath, cause: err });
  if (code === 'Z_BUF_ERROR') return entryError(ErrorCode.ZIP_SIZE, zipPath, e, 'unexpected EOF in deflate data');
  if (code.startsWith('Z_'))
    return entryError(ErrorCode.ZIP_CORRUPT_DATA, zipPath, e, `corrupt deflate data: ${errorText(err)}`);
  return new ProvkitError(
    ErrorCode.IO,
    `${zipPath}: extracting ${JSON.stringify(displayName(e.name))}: ${errorText(err)}`,
    {
      file: zipPath,
      entry: displayName(e.name),
      cause: err,
    },
  );
}

/**
 * Streams one entry's content into `dest` (created or truncated, mode 0600
 * until the final chmod), with the checks of Go's `File.Open` reader: the
 * content must be exactly the recorded size and match the CRC-32 (a
 * recorded CRC of 0 without a data descriptor is not checked; a data
 * descriptor's CRC must equal the directory's). Returns the SHA-256.
 */
async function writeEntry(
  fh: FileHandle,
  zipPath: string,
  e: ZipEntry,
  fileSize: number,
  dest: Buffer,
  signal: AbortSignal | undefined,
): Promise<Buffer> {
  const start = await entryDataOffset(fh, zipPath, e);
  if (e.method !== METHOD_STORE && e.method !== METHOD_DEFLATE) {
    throw entryError(
      ErrorCode.ZIP_UNSUPPORTED_METHOD,
      zipPath,
      e,
      `zip: unsupported compression algorithm (method ${e.method})`,
    );
  }
  const end = Math.min(start + e.compressedSize, fileSize);
  const check = new EntryCheck(e.uncompressedSize, () =>
    entryError(ErrorCode.ZIP_SIZE, zipPath, e, `content is larger than the recorded ${e.uncompressedSize} bytes`),
  );
  const source = Readable.from(readRange(fh, start, end), { objectMode: false });
  const sink = createWriteStream(dest, { flags: 'w', mode: 0o600 });
  try {
    if (e.method === METHOD_DEFLATE) {
      const inflater = createInflateRaw({ chunkSize: 256 * 1024 });
      await pipeline(source, inflater, check, sink, signal ? { signal } : {});
    } else {
      await pipeline(source, check, sink, signal ? { signal } : {});
    }
  } catch (err) {
    throw streamError(zipPath, e, err);
  }
  if (check.n !== e.uncompressedSize) {
    throw entryError(
      ErrorCode.ZIP_SIZE,
      zipPath,
      e,
      `unexpected EOF: content is ${check.n} bytes, the recorded size is ${e.uncompressedSize}`,
    );
  }
  if (e.flags & FLAG_DATA_DESCRIPTOR) {
    const d = await readAt(fh, start + e.compressedSize, 16);
    const hasSig = d.length >= 4 && d.readUInt32LE(0) === SIG_DESCRIPTOR;
    const at = hasSig ? 4 : 0;
    if (d.length < at + 12) throw entryError(ErrorCode.ZIP_SIZE, zipPath, e, 'unexpected EOF in the data descriptor');
    if (d.readUInt32LE(at) !== e.crc32 || check.crc !== e.crc32)
      throw entryError(ErrorCode.ZIP_CHECKSUM, zipPath, e, 'zip: checksum error');
  } else if (e.crc32 !== 0 && check.crc !== e.crc32) {
    throw entryError(ErrorCode.ZIP_CHECKSUM, zipPath, e, 'zip: checksum error');
  }
  return check.sha.digest();
}

/**
 * Extracts the provider zip at `zipPath` into `target` (see the module
 * comment). `target`'s parent directories are created (0755). The target
 * must be absent or an empty directory unless `options.existing` is
 * `replace`.
 *
 * @returns the directory, its `h1:` (extracted form) and counts.
 * @throws ProvkitError with the zip reader's codes (ZIP_FORMAT, ZIP_CHECKSUM,
 *   ZIP_SIZE, ZIP_UNSUPPORTED_METHOD, ZIP_CORRUPT_DATA), the refusals of
 *   {@link planPackageExtraction}, ABORTED, NOT_FOUND (no such zip) or IO; `file`
 *   names the zip (or the target), `entry` the offending entry. Nothing is
 *   left behind at the target or beside it.
 */
export async function extractPackage(
  zipPath: string,
  target: string,
  options: ExtractOptions = {},
): Promise<ExtractResult> {
  const limits: ExtractLimits = { ...DEFAULT_EXTRACT_LIMITS, ...options.limits };
  const signal = options.signal;
  let fh: FileHandle;
  try {
    fh = await open(zipPath, 'r');
  } catch (err) {
    const code = systemErrorCode(err) === 'ENOENT' ? ErrorCode.NOT_FOUND : ErrorCode.IO;
    throw new ProvkitError(code, `${zipPath}: ${errorText(err)}`, {
      file: zipPath,
      cause: err,
    });
  }
  let temp: string | undefined;
  try {
    const { entries, size } = await readZipDirectory(fh, zipPath, {
      ...(options.zipLimits ?? DEFAULT_ZIP_LIMITS),
      maxEntries: limits.maxEntries,
      maxTotalBytes: limits.maxTotalBytes,
    });
    const steps = planPackageExtraction(zipPath, entries, limits);

    await mkdir(dirname(target), { recursive: true, mode: 0o755 });
    temp = tempPathBeside(target, { tag: 'extract' });
    // Created 0755 under the process umask, as go-getter's MkdirAll(dst, 0755).
    await mkdir(temp, { mode: 0o755 });
    const tempBuf = Buffer.from(temp);
    const abs = (rel: Buffer): Buffer => (rel.length === 0 ? tempBuf : Buffer.concat([tempBuf, Buffer.from('/'), rel]));
    const made = new Set<string>(['']);
    const mkdirAll = async (rel: Buffer): Promise<void> => {
      const key = rel.toString('latin1');
      if (made.has(key)) return;
      await mkdir(abs(rel), { recursive: true, mode: 0o755 });
      made.add(key);
    };

    const files = new Map<string, NamedDigest & { readonly rel: Buffer; readonly mode: number }>();
    let bytes = 0;
    for (const step of steps) {
      if (signal?.aborted)
        throw new ProvkitError(ErrorCode.ABORTED, `${zipPath}: extraction was interrupted`, { file: zipPath });
      if (step.kind === 'dir') {
        // eslint-disable-next-line no-await-in-loop -- entries are applied in archive order (later duplicates win)
        await mkdirAll(step.rel);
        continue;
      }
      const slash = step.rel.lastIndexOf(SLASH);
      // eslint-disable-next-line no-await-in-loop
      await mkdirAll(slash < 0 ? Buffer.alloc(0) : step.rel.subarray(0, slash));
      // eslint-disable-next-line no-await-in-loop
      const sha256 = await writeEntry(fh, zipPath, step.entry, size, abs(step.rel), signal);
      bytes += step.entry.uncompressedSize;
      files.set(step.rel.toString('latin1'), { name: step.rel, rel: step.rel, sha256, mode: step.mode });
    }
    // Modes last (the reference chmods each file as it goes; see the module comment).
    const mask = options.fileModeMask ?? 0o777;
    await Promise.all([...files.values()].map((f) => chmod(abs(f.rel), f.mode & mask)));
    const h1 = hash1FromDigests([...files.values()]);
    if (options.beforeCommit) await options.beforeCommit(temp);
    await swapDirInto(temp, target, { existing: options.existing ?? 'fail', what: 'cannot install the package at' });
    temp = undefined;
    return { dir: target, h1, files: files.size, bytes };
  } catch (err) {
    if (err instanceof ProvkitError) throw err;
    throw new ProvkitError(ErrorCode.IO, `${zipPath}: ${errorText(err)}`, {
      file: zipPath,
      cause: err,
    });
  } finally {
    await fh.close();
    if (temp !== undefined) await rm(temp, { recursive: true, force: true });
  }
}

/**
 * Removes temporary directories that interrupted extractions left beside
 * `target` (`.<name>.extract-*.tmp`, `.<name>.old-*.tmp`). Call it only while
 * holding the package's mutex, so no live extraction is removed.
 */
export async function removeStaleTemps(target: string): Promise<void> {
  await removeTempsBeside(target, ['extract', 'old', 'link']);
}

/** True when `err` is a refusal of the archive itself (as opposed to I/O trouble). */
export function isArchiveRefusal(err: unknown): boolean {
  return isProvkitError(err) && (err.code.startsWith('ZIP_') || err.code === ErrorCode.HASH_NEWLINE_IN_NAME);
}
