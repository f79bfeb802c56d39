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
  /**
   * The package's metadata, authenticated by its source: a value when the fetch began after it (every fetch but
   * one begun ahead), else the source's answer still on its way ({@link authenticatedMeta}).
   */
  readonly meta: PackageMeta | PendingMeta;
  readonly hashing: ArchiveHashing;
  /** The hash store's entry for the `zh:` the registry signs, when it has one (strategy.ts `store`). */
  readonly stored: ZipPackageHashes | undefined;
  readonly attempt: AttemptHashing;
  readonly signal?: AbortSignal;
  readonly events?: NetEvents;
  /** Temporary copies made so far: an error names the source or the destination, never them. */
  readonly temps: string[];
}

/**
 * A fetch begun before its source authenticated the package (fetch.ts `fetchPackageAhead`): the archive's URL as
 * the source named it, and the source's answer, which settles when it authenticated the package (a registry: its
 * SHA256SUMS lists the archive with the download metadata's `shasum`, and their signature verified) or failed to.
 */
export interface PendingMeta {
  readonly kind: 'pending';
  /** The URL the bytes are fetched from. */
  readonly url: string;
  /** The source's answer: rejects with the source's own error when the package is not authenticated. */
  readonly authenticated: Promise<PackageMeta>;
}

/**
 * The one gate between bytes fetched and anything believed of them: the package's metadata once its source has
 * authenticated it. Every check of a fetched archive (size, `zh:` against the signed `shasum`, a mirror's hashes)
 * and so every hash a fetch returns, stores or lets be recorded, and every rename into place, comes after this
 * settles; when it rejects the fetch fails with the source's error, as if the download had never begun. This is
 * OpenTofu's order (opentofu/opentofu internal/getproviders/package_authentication.go: the checks run on the
 * downloaded archive, and nothing of it is installed or recorded before they all passed), with the bytes allowed to
 * arrive while the SHA256SUMS and its signature are still on their way. A meta authenticated for another URL than
 * the one fetched is refused (`IO`): the bytes must be the ones the source vouches for.
 */
export async function authenticatedMeta(job: FetchJob): Promise<PackageMeta> {
  const { meta } = job;
  if (!isPending(meta)) return meta;
  const ready = await meta.authenticated;
  if (ready.location.kind !== 'http' || ready.location.url !== meta.url) {
    throw sourceError(
      ErrorCode.IO,
      'internal: the archive fetched ahead is not the one its source authenticated',
      fetchContext(ready),
    );
  }
  return ready;
}

/** True for a fetch begun before its source authenticated the package. */
export function isPending(meta: PackageMeta | PendingMeta): meta is PendingMeta {
  return 'kind' in meta && meta.kind === 'pending';
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
  // Nothing is checked, kept or returned before the source's authentication (authenticatedMeta).
  const meta = await authenticatedMeta(job);
  const hashZip = (p: string): Promise<ZipPackageHashes> => job.attempt.hashZip(p, got.zh);
  const verified = await authenticateArchive(meta, path, got, hashZip);
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
      { ...fetchContext(meta), expected: got.zh.text, found: zipHashes.zh.text },
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
  const { hashing } = job;
  const meta = await authenticatedMeta(job);
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
