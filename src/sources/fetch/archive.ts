/**
 * The last step of every fetch (OpenTofu's `installFromLocalArchive`, which
 * its HTTP step hands the temporary file it downloaded to): a complete local
 * archive is authenticated (authenticate.ts) and hashed as the fetch's
 * {@link ArchiveHashing} asks, before anything is committed. The archive is
 * either the temporary file a download or a copy wrote (http.ts, copy.ts)
 * or a filesystem mirror's archive read in place ({@link readInPlace}).
 */
import type { Stats } from 'node:fs';
import { stat } from 'node:fs/promises';

import { ErrorCode } from '../../errors.js';
import { zhOfPackage, type Hash, type ZipForms, type ZipPackageHashes } from '../../hashing/index.js';
import type { NetEvents } from '../../net/index.js';
import { sourceError, type PackageMeta, type TrustedHash } from '../source.js';
import { authenticateArchive, fetchContext } from './authenticate.js';
import { type ArchiveHashing, type AttemptHashing, zipHasherOf } from './strategy.js';

/** One fetch: the package, how it is hashed, and what its steps share. */
export interface FetchJob {
  readonly meta: PackageMeta;
  readonly hashing: ArchiveHashing;
  /** The hash store's entry for the `zh:` the registry signs, when it has one (strategy.ts `store`). */
  readonly stored: ZipPackageHashes | undefined;
  readonly attempt: AttemptHashing;
  readonly signal?: AbortSignal;
  readonly events?: NetEvents;
  /** Temporary copies made so far: an error names the source or the destination, never them. */
  readonly temps: string[];
}

/** A complete, authenticated archive, with what was hashed of it. */
export interface CheckedArchive {
  readonly path: string;
  readonly size: number;
  /** Where it came from (final URL after redirects, or the local path). */
  readonly from: string;
  /** The bytes' `zh:`; absent only when the `h1:` forms alone were read (`forms`). */
  readonly zh?: Hash;
  /** What authentication verified. */
  readonly verified: readonly TrustedHash[];
  /** The zip's hashes; absent for `zh-only` and for the forms alone. */
  readonly zipHashes?: ZipPackageHashes;
  /** The `h1:` forms alone (strategy `h1-forms-when-unauthenticated`). */
  readonly forms?: ZipForms;
}

/**
 * Authenticates the complete file `path` whose bytes `got` describes (the
 * `zh:` and size the fetch computed as it wrote them) and hashes it, before
 * anything is committed.
 *
 * @throws {ProvkitError} `CHECKSUM_MISMATCH`; `IO` when the file is not the bytes that were hashed.
 */
export async function checkArchive(
  job: FetchJob,
  path: string,
  got: { readonly zh: Hash; readonly size: number },
): Promise<Pick<CheckedArchive, 'verified' | 'zipHashes'>> {
  const hashZip = (p: string): Promise<ZipPackageHashes> => job.attempt.hashZip(p, got.zh);
  const verified = await authenticateArchive(job.meta, path, got, hashZip);
  const zipHashes =
    job.stored && job.stored.zh.text === got.zh.text
      ? job.stored
      : (verified.zipHashes ?? (job.hashing.kind === 'zh-only' ? undefined : await hashZip(path)));
  if (zipHashes !== undefined && zipHashes.zh.text !== got.zh.text) {
    // The file is not (or no longer) the bytes the stream hashed: a local
    // archive changed while it was read, or a bug.
    throw sourceError(
      ErrorCode.IO,
      `${path} changed while it was being read: its zh: is ${zipHashes.zh.text}, the bytes read had ${got.zh.text}`,
      { ...fetchContext(job.meta), expected: got.zh.text, found: zipHashes.zh.text },
    );
  }
  return { verified: verified.hashes, ...(zipHashes === undefined ? {} : { zipHashes }) };
}

/**
 * Reads a local archive in place, no copy: one pass over the file gives
 * what the strategy asks for, its `zh:` and both `h1:` forms
 * (`zip-hashes`), its forms alone (`h1-forms-when-unauthenticated` with
 * nothing to authenticate) or its `zh:` alone (`zh-only`). The file must be
 * the same before and after (size, times, inode), else the hashes might
 * describe two different contents.
 *
 * @throws {ProvkitError} `IO` when the file changed while it was read; `CHECKSUM_MISMATCH`.
 */
export async function readInPlace(job: FetchJob, path: string): Promise<CheckedArchive> {
  const { meta, hashing } = job;
  job.signal?.throwIfAborted();
  const before = await stat(path);
  const hashZip = zipHasherOf(hashing);
  const formsOf =
    hashing.kind === 'h1-forms-when-unauthenticated' && meta.authentication === undefined
      ? hashing.hashZipForms
      : undefined;
  const zhAlone = !formsOf && hashing.kind === 'zh-only';
  const hashes = formsOf || zhAlone ? undefined : await hashZip(path);
  const forms = formsOf ? await formsOf(path) : undefined;
  const zhOfBytes = zhAlone ? await zhOfPackage(path) : undefined;
  const after = await stat(path);
  if (!sameFile(before, after)) {
    throw sourceError(ErrorCode.IO, `${path} changed while it was being read`, fetchContext(meta));
  }
  job.signal?.throwIfAborted();
  const read = { path, size: before.size, from: path };
  if (hashes) {
    const got = { zh: hashes.zh, size: before.size };
    const verified = await authenticateArchive(meta, path, got, () => Promise.resolve(hashes));
    const zipHashes = job.stored && job.stored.zh.text === hashes.zh.text ? job.stored : hashes;
    return { ...read, zh: hashes.zh, verified: verified.hashes, zipHashes };
  }
  if (zhOfBytes) {
    const got = { zh: zhOfBytes, size: before.size };
    const verified = await authenticateArchive(meta, path, got, (p) => hashZip(p, zhOfBytes));
    return { ...read, zh: zhOfBytes, verified: verified.hashes };
  }
  return { ...read, verified: [], ...(forms === undefined ? {} : { forms }) };
}

/** The same file, unchanged: inode, size and modification and change times. */
function sameFile(a: Stats, b: Stats): boolean {
  return a.ino === b.ino && a.dev === b.dev && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs;
}
