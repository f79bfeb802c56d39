/**
 * The two `h1:` forms of a packed provider package, and its `zh:`.
 *
 * The reference hashes a zip two ways (docs/reference.md §2.3 items 26–28,
 * §10 items 146–148):
 *
 * - the **zip form** (`dirhash.HashZip`): every central-directory entry as
 *   stored, directory entries (read as empty) and duplicate names (listed
 *   twice, both read from the last entry) included. `providers mirror` writes
 *   it into `VERSION.json`; installing from an archive checks the lock with it.
 * - the **extracted form** (`dirhash.HashDir` of what go-getter extracts): the
 *   lock file's `h1:`. Directory entries make directories and contribute
 *   nothing, a later duplicate overwrites an earlier one, names are cleaned
 *   (`./x` → `x`, `a//b` → `a/b`, `/abs` → `abs`), symlink entries become
 *   regular files holding the link text.
 *
 * The extracted form is computed without extracting: the extraction is
 * simulated over a virtual tree, with go-getter's refusals (`..` segments,
 * empty archives, a file where a directory must go). provkit also refuses
 * absolute names on purpose (conformance `absolute`: a name that escapes the
 * package under another extractor is an attack, not a package).
 *
 * Every entry is read once, in archive order (sequential I/O); both forms are
 * assembled from those per-entry digests.
 */
import { open } from 'node:fs/promises';

import { ErrorCode, ProvkitError, errorText } from '../errors.js';
import type { Hash } from './hash.js';
import { displayName, hash1FromDigests, type NamedDigest } from './h1.js';
import { type ReadProgress, zhOfFile } from './zh.js';
import {
  DEFAULT_ZIP_LIMITS,
  digestEntry,
  entryDataOffset,
  entryIsDir,
  entryIsSymlink,
  MemoryZipSource,
  readZipDirectory,
  type StreamedDigest,
  type ZipEntry,
  type ZipLimits,
  type ZipSource,
} from './zip-reader.js';

/** One form's outcome: its hash, or why the reference would not produce one. */
export type FormResult =
  { readonly ok: true; readonly hash: Hash } | { readonly ok: false; readonly error: ProvkitError };

/** A note about a package that is hashed but deserves attention. */
export interface HashWarning {
  /** Stable code: `H1_FORMS_DIFFER` or `ZIP_SYMLINK_ENTRY`. */
  readonly code: 'H1_FORMS_DIFFER' | 'ZIP_SYMLINK_ENTRY';
  /** One line describing it (entry names escaped for display). */
  readonly message: string;
  /** The entries responsible, for display. */
  readonly entries: readonly string[];
}

/**
 * Both `h1:` forms of a packed package and what reading it found: all of
 * {@link ZipPackageHashes} but the `zh:` ({@link hashZipForms}, for a caller
 * that records no `zh:` and so need not spend a SHA-256 pass over the
 * archive's bytes on one).
 */
export interface ZipForms {
  /** The archive's path, as given. */
  readonly path: string;
  /** The lock-file `h1:`: the package as extracted. */
  readonly h1: FormResult;
  /** The `h1:` over the entries as stored (what `providers mirror` writes to VERSION.json). */
  readonly h1Zip: FormResult;
  /** What reading the archive found that deserves attention (forms that differ, symlink entries). */
  readonly warnings: readonly HashWarning[];
  /** How many entries the archive has (directories included). */
  readonly entryCount: number;
  /** Sum of the recorded uncompressed sizes. */
  readonly uncompressedBytes: number;
}

/** The `zh:` and both `h1:` forms of a packed package ({@link hashZipPackage}). */
export interface ZipPackageHashes extends ZipForms {
  /** The `zh:`: SHA-256 of the archive's bytes. */
  readonly zh: Hash;
}

/** Options of {@link hashZipPackage} and the pool's zip jobs. */
export interface ZipHashOptions {
  /**
   * Limits an archive must stay within (entries, total size, compression ratio); default {@link
   * DEFAULT_ZIP_LIMITS}.
   */
  limits?: ZipLimits;
  /**
   * The archive's `zh:` when the caller already computed it from these bytes
   * (a download hashes as it writes): it is not computed again.
   */
  knownZh?: Hash;
  /**
   * Per-entry digests a streaming pass computed from these bytes as they
   * arrived (zip-stream.ts), used where the central directory agrees.
   */
  streamed?: ReadonlyMap<number, StreamedDigest>;
  /**
   * The whole archive, when the caller read all of it from `path` (zip-stream.ts
   * `hashZipFileOnce`, a small archive): read instead of the file. These must
   * be the bytes `knownZh` was computed from.
   */
  bytes?: Uint8Array;
}

const SLASH = 0x2f;
const BACKSLASH = 0x5c;

/** go-getter's `containsDotDot`: a `..` segment, splitting on `/` and `\`. */
export function containsDotDot(name: Uint8Array): boolean {
  let segStart = 0;
  for (let i = 0; i <= name.length; i++) {
    if (i === name.length || name[i] === SLASH || name[i] === BACKSLASH) {
      if (i - segStart === 2 && name[segStart] === 0x2e && name[segStart + 1] === 0x2e) return true;
      segStart = i + 1;
    }
  }
  return false;
}

/** An absolute name under any common extractor: `/x`, `\x`, or a drive letter `C:`. */
export function isAbsoluteName(name: Uint8Array): boolean {
  if (name.length === 0) return false;
  if (name[0] === SLASH || name[0] === BACKSLASH) return true;
  const c = name[0]!;
  return name.length >= 2 && name[1] === 0x3a && ((c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a));
}

/**
 * The path an entry extracts to, relative to the package directory: Go's
 * `filepath.Join(dst, name)` on a Unix host, for names without `..`
 * (empty and `.` segments dropped; `\` is an ordinary byte there).
 */
export function cleanEntryPath(name: Uint8Array): Buffer {
  const parts: Buffer[] = [];
  let segStart = 0;
  const buf = Buffer.from(name.buffer, name.byteOffset, name.byteLength);
  for (let i = 0; i <= buf.length; i++) {
    if (i === buf.length || buf[i] === SLASH) {
      const seg = buf.subarray(segStart, i);
      if (seg.length > 0 && !(seg.length === 1 && seg[0] === 0x2e)) parts.push(seg);
      segStart = i + 1;
    }
  }
  const out: Buffer[] = [];
  parts.forEach((p, i) => {
    if (i > 0) out.push(Buffer.from('/'));
    out.push(p);
  });
  return Buffer.concat(out);
}

type EntryRead = { ok: true; digest: Buffer } | { ok: false; error: ProvkitError };

function asProvkitError(err: unknown, file: string): ProvkitError {
  if (err instanceof ProvkitError) return err;
  const msg = errorText(err);
  return new ProvkitError(ErrorCode.IO, `${file}: ${msg}`, { file, cause: err });
}

/**
 * Computes `zh:` and both `h1:` forms of the zip at `path`.
 *
 * Never throws for a malformed archive: each form carries its own error, so a
 * caller can, for instance, still record the zip form of a package whose
 * extraction is refused (conformance `traversal`). Throws only when the file
 * itself cannot be read (IO, NOT_FOUND).
 */
export async function hashZipPackage(
  path: string,
  options: ZipHashOptions = {},
  onProgress?: ReadProgress,
): Promise<ZipPackageHashes> {
  const zhPromise = options.knownZh ? Promise.resolve(options.knownZh) : zhOfPackage(path);
  const [zh, forms] = await Promise.all([zhPromise, hashZipForms(path, options, onProgress)]);
  return { ...forms, zh };
}

/**
 * Both `h1:` forms of the archive at `path`, as {@link hashZipPackage} gives
 * them, without its `zh:` (`options.knownZh` is not used). Never throws for a
 * malformed archive or an unreadable file: each form carries its error.
 * `onProgress`: how far into the file the reads have come (headers and
 * entries are read in archive order).
 */
export async function hashZipForms(
  path: string,
  options: ZipHashOptions = {},
  onProgress?: ReadProgress,
): Promise<ZipForms> {
  const forms = await computeForms(
    path,
    options.limits ?? DEFAULT_ZIP_LIMITS,
    options.streamed,
    options.bytes,
    onProgress,
  );
  return { path, ...forms };
}

/**
 * `fh` telling `onProgress` the furthest byte of the file's `size` read so
 * far: the entries are read in archive order, so it grows as they are.
 */
function reportingReads(fh: ZipSource, size: number, onProgress: ReadProgress): ZipSource {
  let furthest = 0;
  return {
    stat: () => fh.stat(),
    async read(buffer, offset, length, position) {
      const got = await fh.read(buffer, offset, length, position);
      const end = position + got.bytesRead;
      if (end > furthest) {
        furthest = end;
        onProgress(furthest, size);
      }
      return got;
    },
  };
}

/**
 * The `zh:` of the archive at `path`, failing as {@link hashZipPackage} fails
 * when the file cannot be read (NOT_FOUND, IO, naming the file).
 */
export async function zhOfPackage(path: string, onProgress?: ReadProgress): Promise<Hash> {
  try {
    return await zhOfFile(path, onProgress);
  } catch (err) {
    const code = typeof err === 'object' && err !== null && 'code' in err ? err.code : undefined;
    throw new ProvkitError(code === 'ENOENT' ? ErrorCode.NOT_FOUND : ErrorCode.IO, `${path}: ${errorText(err)}`, {
      file: path,
      cause: err,
    });
  }
}

interface Forms {
  h1: FormResult;
  h1Zip: FormResult;
  warnings: HashWarning[];
  entryCount: number;
  uncompressedBytes: number;
}

async function computeForms(
  path: string,
  limits: ZipLimits,
  streamed: ReadonlyMap<number, StreamedDigest> | undefined,
  bytes: Uint8Array | undefined,
  onProgress: ReadProgress | undefined,
): Promise<Forms> {
  let file: ZipSource & { close?(): Promise<void> };
  try {
    file = bytes ? new MemoryZipSource(bytes) : await open(path, 'r');
  } catch (err) {
    const failed: FormResult = { ok: false, error: asProvkitError(err, path) };
    return { h1: failed, h1Zip: failed, warnings: [], entryCount: 0, uncompressedBytes: 0 };
  }
  try {
    let entries: readonly ZipEntry[];
    let size: number;
    try {
      ({ entries, size } = await readZipDirectory(file, path, limits));
    } catch (err) {
      const failed: FormResult = { ok: false, error: asProvkitError(err, path) };
      return { h1: failed, h1Zip: failed, warnings: [], entryCount: 0, uncompressedBytes: 0 };
    }
    // The entries' reads, from the first, tell how far the work has come.
    const fh = onProgress ? reportingReads(file, size, onProgress) : file;

    // The last entry of each raw name is the one HashZip reads.
    const lastByName = new Map<string, number>();
    for (const e of entries) lastByName.set(e.name.toString('latin1'), e.index);

    // Read every entry either form needs, once, in archive order.
    const reads = new Map<number, EntryRead>();
    for (const e of entries) {
      const isLast = lastByName.get(e.name.toString('latin1')) === e.index;
      const endsSlash = e.name.length > 0 && e.name[e.name.length - 1] === SLASH;
      const zipFormReads = isLast; // HashZip opens the last entry of every name, directories included
      const extractReads = !entryIsDir(e);
      if (!zipFormReads && !extractReads) continue;
      try {
        // A directory entry is opened by HashZip only: it checks the local
        // header and the recorded size, and reads nothing.
        // Sequential I/O in archive order is the fast path.
        /* eslint-disable no-await-in-loop */
        const digest = endsSlash
          ? await digestDirectoryEntry(fh, path, e)
          : await digestEntry(fh, path, e, size, streamed);
        /* eslint-enable no-await-in-loop */
        reads.set(e.index, { ok: true, digest });
      } catch (err) {
        reads.set(e.index, { ok: false, error: asProvkitError(err, path) });
      }
    }

    const h1Zip = zipForm(path, entries, lastByName, reads);
    const h1 = extractedForm(path, entries, reads);
    const warnings: HashWarning[] = [];
    if (h1.ok && h1Zip.ok && h1.hash.text !== h1Zip.hash.text) warnings.push(divergence(entries));
    const links = entries.filter(entryIsSymlink).map((e) => displayName(e.name));
    if (links.length > 0) {
      warnings.push({
        code: 'ZIP_SYMLINK_ENTRY',
        message:
          'symlink entries: the reference installs each as a regular file holding the link text (unzip would make a link)',
        entries: links,
      });
    }
    const uncompressedBytes = entries.reduce((sum, e) => sum + e.uncompressedSize, 0);
    return { h1, h1Zip, warnings, entryCount: entries.length, uncompressedBytes };
  } finally {
    await file.close?.();
  }
}

async function digestDirectoryEntry(
  fh: Parameters<typeof entryDataOffset>[0],
  path: string,
  e: ZipEntry,
): Promise<Buffer> {
  await entryDataOffset(fh, path, e);
  if (e.uncompressedSize !== 0) {
    throw new ProvkitError(
      ErrorCode.ZIP_FORMAT,
      `${path}: entry ${JSON.stringify(displayName(e.name))}: zip: not a valid zip file (directory entry with data)`,
      {
        file: path,
        entry: displayName(e.name),
      },
    );
  }
  return EMPTY_SHA256;
}

const EMPTY_SHA256 = Buffer.from('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', 'hex');

/** HashZip: all names as stored; the first failure in sorted order is Go's error. */
function zipForm(
  path: string,
  entries: readonly ZipEntry[],
  lastByName: Map<string, number>,
  reads: Map<number, EntryRead>,
): FormResult {
  const files: NamedDigest[] = [];
  const sorted = [...entries].sort((a, b) => Buffer.compare(a.name, b.name));
  for (const e of sorted) {
    if (e.name.includes(0x0a)) {
      return hashOrError(path, [{ name: e.name, sha256: EMPTY_SHA256 }]);
    }
    const read = reads.get(lastByName.get(e.name.toString('latin1'))!)!;
    if (!read.ok) return read;
    files.push({ name: e.name, sha256: read.digest });
  }
  return hashOrError(path, files);
}

function hashOrError(path: string, files: NamedDigest[]): FormResult {
  try {
    return { ok: true, hash: hash1FromDigests(files) };
  } catch (err) {
    if (err instanceof ProvkitError) {
      const error = new ProvkitError(err.code, `${path}: entry ${JSON.stringify(err.entry ?? '')}: ${err.message}`, {
        ...err.toJSON(),
        file: path,
      });
      return { ok: false, error };
    }
    throw err;
  }
}

/** One step of an extraction, in archive order. */
export type ExtractionStep =
  | { readonly kind: 'dir'; readonly rel: Buffer }
  | { readonly kind: 'file'; readonly rel: Buffer; readonly entry: ZipEntry };

export interface ExtractionPlanOptions {
  /** Most bytes the files may add up to (recorded sizes, duplicates included). Default: unbounded. */
  readonly maxTotalBytes?: number;
  /**
   * Refuse a name with a newline as soon as it is met. The reference extracts
   * such a name and only its HashDir refuses it afterwards, so the extracted
   * form leaves this off (an earlier data error is then reported first, as
   * the reference does); the installer turns it on, since the package could
   * never be locked.
   */
  readonly refuseNewlines?: boolean;
  /**
   * Refuse a name holding a control character (`ZIP_UNSAFE_NAME`), see
   * {@link controlCharacterAt}. The reference extracts ESC and CR as they are
   * and fails on NUL half-way; the installer turns this on so that no such
   * name is ever created (docs/file-modes.md, "Names with control characters"). A newline in a file name stays
   * `HASH_NEWLINE_IN_NAME` when `refuseNewlines` is on.
   */
  readonly refuseControlCharacters?: boolean;
}

/**
 * The offset of the first control character in a name, or -1: C0 (0x00–0x1f),
 * DEL (0x7f), and C1 (U+0080–U+009F) written in UTF-8 (0xc2 0x80–0x9f), which
 * terminals interpret as escapes.
 */
export function controlCharacterAt(name: Buffer): number {
  for (let i = 0; i < name.length; i++) {
    const b = name[i]!;
    if (b < 0x20 || b === 0x7f) return i;
    if (b === 0xc2 && i + 1 < name.length && name[i + 1]! >= 0x80 && name[i + 1]! <= 0x9f) return i;
  }
  return -1;
}

/**
 * go-getter's zip extraction, simulated over a virtual tree: the steps it
 * would take, in archive order, up to the first refusal (`..` segments, an
 * empty archive, a file where a directory must go or the reverse; and, by
 * provkit's choice, absolute names). Pure: nothing is read or written. Both
 * the extracted-form `h1:` here and the installer's extraction
 * (src/installer/extract.ts) follow it, so they accept and refuse alike.
 */
export function planExtraction(
  path: string,
  entries: readonly ZipEntry[],
  options: ExtractionPlanOptions = {},
): { readonly steps: readonly ExtractionStep[]; readonly error?: ProvkitError } {
  const steps: ExtractionStep[] = [];
  const fail = (
    code: ErrorCode,
    e: ZipEntry | undefined,
    why: string,
    extra: { expected?: string } = {},
  ): { steps: ExtractionStep[]; error: ProvkitError } => ({
    steps,
    error: new ProvkitError(code, `${path}: ${why}`, {
      file: path,
      ...(e ? { entry: displayName(e.name) } : {}),
      ...extra,
    }),
  });
  if (entries.length === 0) return fail(ErrorCode.ZIP_EMPTY, undefined, 'empty archive');
  const kinds = new Map<string, 'dir' | 'file'>();
  /** MkdirAll of `p` (a cleaned path, possibly empty for the root): the first prefix that is a file, if any. */
  const fileInTheWay = (p: Buffer): Buffer | undefined => {
    let at = 0;
    while (at < p.length) {
      let next = p.indexOf(SLASH, at);
      if (next < 0) next = p.length;
      const key = p.subarray(0, next).toString('latin1');
      if (kinds.get(key) === 'file') return p.subarray(0, next);
      kinds.set(key, 'dir');
      at = next + 1;
    }
    return undefined;
  };
  const conflict = (e: ZipEntry, prefix: Buffer): { steps: ExtractionStep[]; error: ProvkitError } =>
    fail(
      ErrorCode.ZIP_EXTRACT_CONFLICT,
      e,
      `entry ${JSON.stringify(displayName(e.name))} needs ${JSON.stringify(displayName(prefix))} to be a directory, but an earlier entry made it a file`,
    );
  const maxTotal = options.maxTotalBytes ?? Number.POSITIVE_INFINITY;
  let total = 0;
  for (const e of entries) {
    if (containsDotDot(e.name))
      return fail(ErrorCode.ZIP_PATH_TRAVERSAL, e, `entry contains '..': ${displayName(e.name)}`);
    if (isAbsoluteName(e.name)) {
      return fail(
        ErrorCode.ZIP_ABSOLUTE_PATH,
        e,
        `entry has an absolute name: ${displayName(e.name)} (refused: it would escape the package directory)`,
      );
    }
    const rel = cleanEntryPath(e.name);
    const unsafe = () =>
      fail(
        ErrorCode.ZIP_UNSAFE_NAME,
        e,
        `entry ${JSON.stringify(displayName(e.name))}: the name has a control character (refused: provkit never creates such names)`,
      );
    if (options.refuseControlCharacters && entryIsDir(e) && controlCharacterAt(rel) >= 0) return unsafe();
    if (entryIsDir(e)) {
      const inTheWay = fileInTheWay(rel);
      if (inTheWay) return conflict(e, inTheWay);
      steps.push({ kind: 'dir', rel });
      continue;
    }
    const slash = rel.lastIndexOf(SLASH);
    const inTheWay = fileInTheWay(slash < 0 ? Buffer.alloc(0) : rel.subarray(0, slash));
    if (inTheWay) return conflict(e, inTheWay);
    const key = rel.toString('latin1');
    if (rel.length === 0 || kinds.get(key) === 'dir') {
      return fail(
        ErrorCode.ZIP_EXTRACT_CONFLICT,
        e,
        `entry ${JSON.stringify(displayName(e.name))} is a file where the package has a directory`,
      );
    }
    if (options.refuseNewlines && rel.includes(0x0a)) {
      return fail(
        ErrorCode.HASH_NEWLINE_IN_NAME,
        e,
        `entry ${JSON.stringify(displayName(e.name))}: dirhash: filenames with newlines are not supported`,
      );
    }
    if (options.refuseControlCharacters && controlCharacterAt(rel) >= 0) return unsafe();
    total += e.uncompressedSize;
    if (total > maxTotal) {
      return fail(ErrorCode.ZIP_LIMIT_EXCEEDED, undefined, `the package would extract to more than ${maxTotal} bytes`, {
        expected: `at most ${maxTotal} bytes`,
      });
    }
    kinds.set(key, 'file');
    steps.push({ kind: 'file', rel, entry: e });
  }
  return { steps };
}

/**
 * The extracted form: the files {@link planExtraction} leaves, each with the
 * content of the last entry written there, then HashDir of that tree. A data
 * error of an entry extracted before a refused name is reported first, as
 * the reference (which extracts in archive order) reports it.
 */
function extractedForm(path: string, entries: readonly ZipEntry[], reads: Map<number, EntryRead>): FormResult {
  const plan = planExtraction(path, entries);
  const files = new Map<string, NamedDigest>();
  for (const step of plan.steps) {
    if (step.kind !== 'file') continue;
    const read = reads.get(step.entry.index)!;
    if (!read.ok) return read;
    files.set(step.rel.toString('latin1'), { name: step.rel, sha256: read.digest });
  }
  if (plan.error) return { ok: false, error: plan.error };
  return hashOrError(path, [...files.values()]);
}

/** Names the entries that make the two forms differ. */
function divergence(entries: readonly ZipEntry[]): HashWarning {
  const reasons: string[] = [];
  const responsible = new Set<string>();
  const add = (label: string, list: ZipEntry[]): void => {
    if (list.length === 0) return;
    const names = [...new Set(list.map((e) => displayName(e.name)))];
    names.forEach((n) => responsible.add(n));
    reasons.push(`${label}: ${names.map((n) => JSON.stringify(n)).join(', ')}`);
  };
  const endsSlash = (e: ZipEntry): boolean => e.name.length > 0 && e.name[e.name.length - 1] === SLASH;
  add('directory entries', entries.filter(endsSlash));
  add(
    'directories by mode without a trailing "/"',
    entries.filter((e) => !endsSlash(e) && entryIsDir(e)),
  );
  const seen = new Map<string, number>();
  for (const e of entries) seen.set(e.name.toString('latin1'), (seen.get(e.name.toString('latin1')) ?? 0) + 1);
  add(
    'duplicate names',
    entries.filter((e) => (seen.get(e.name.toString('latin1')) ?? 0) > 1),
  );
  add(
    'names that extraction rewrites',
    entries.filter((e) => !entryIsDir(e) && !cleanEntryPath(e.name).equals(e.name)),
  );
  return {
    code: 'H1_FORMS_DIFFER',
    message:
      `the zip form and the extracted form of this package have different h1: hashes (${reasons.join('; ')}). ` +
      'A lock file holding only the extracted h1: does not verify this archive when installing from it.',
    entries: [...responsible].sort(),
  };
}
