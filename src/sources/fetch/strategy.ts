/**
 * How a fetch hashes the archive, as one value ({@link ArchiveHashing}): what
 * the caller gets back (fetched.ts) follows from it, and a combination that
 * means nothing (a hash store for a fetch that computes no `h1:`, the forms
 * alone for a fetch that must record a `zh:`) cannot be written.
 *
 * {@link AttemptHashing} is one fetch's hashing at work: the stages a write
 * of the archive goes through (a worker's streaming job, or a `zh:` hasher in
 * this thread), and the hashes of the file written.
 */
import type { Transform, Writable } from 'node:stream';

import { ErrorCode, ProvkitError } from '../../errors.js';
import {
  hashZipPackage,
  ZhStream,
  type Hash,
  type HashPool,
  type HashStore,
  type ZipForms,
  type ZipPackageHashes,
  type ZipStream,
} from '../../hashing/index.js';
import type { FetchedBytes, FetchedDirectory, FetchedForms, FetchedPackage } from './fetched.js';

/**
 * Hashes a whole zip (default `hashZipPackage`; a worker pool's `hashZip`).
 * `knownZh`: the `zh:` of these very bytes, computed as they were written to
 * the fetch's own file (not computed again, as a streaming job's `finish` is
 * given it).
 */
export type ZipHasher = (path: string, knownZh?: Hash) => Promise<ZipPackageHashes>;

/**
 * The archive's `zh:` and both `h1:` forms: the result is a
 * `FetchedArchive` whose `zipHashes` the caller records.
 */
export interface ZipHashesStrategy {
  readonly kind: 'zip-hashes';
  readonly hashZip?: ZipHasher;
  /**
   * Hash a download as it arrives (a pool's `streamZip`), so that the file
   * is not read again.
   */
  readonly streamZip?: () => ZipStream;
  /**
   * Hashes of archives seen before, by `zh:` (hashing/store.ts). A registry
   * package whose signed `zh:` is there is fetched (and checked against that
   * `zh:`) without being hashed: its `zipHashes` come from the store. Hashes
   * computed here are added to it.
   */
  readonly store?: HashStore;
}

/**
 * The bytes and their `zh:` alone (`mirror oci://` publishes the archive as
 * it is): the `h1:` forms (an inflate and a SHA-256 of everything the zip
 * holds) are computed only when authentication needs them (a network mirror
 * that lists only `h1:`), with `hashZip`. The result is a `FetchedBytes`.
 */
export interface ZhOnlyStrategy {
  readonly kind: 'zh-only';
  readonly hashZip?: ZipHasher;
}

/**
 * As `zip-hashes` (without a store), except that a local archive read in
 * place with nothing to authenticate (a filesystem mirror's) is read for its
 * `h1:` forms alone (`hashZipForms`, a pool's): the result is then a
 * `FetchedForms`, and no SHA-256 pass is spent on a `zh:` nobody records (a
 * `lock` from a filesystem mirror without a hash store).
 */
export interface FormsWhenUnauthenticatedStrategy {
  readonly kind: 'h1-forms-when-unauthenticated';
  readonly hashZip?: ZipHasher;
  readonly streamZip?: () => ZipStream;
  readonly hashZipForms: (path: string) => Promise<ZipForms>;
}

/** How a fetch hashes the archive (see the module comment). The default is `{ kind: 'zip-hashes' }`. */
export type ArchiveHashing = ZipHashesStrategy | ZhOnlyStrategy | FormsWhenUnauthenticatedStrategy;

/** What `fetchPackage` returns for a hashing strategy's kind. */
export type FetchedWith<K extends ArchiveHashing['kind']> = {
  'zip-hashes': FetchedPackage;
  'zh-only': FetchedBytes | FetchedDirectory;
  'h1-forms-when-unauthenticated': FetchedPackage | FetchedForms;
}[K];

/**
 * The `zip-hashes` strategy of a fetch that hashes with a worker pool: a
 * whole archive with the pool's `hashZip`, a download as it arrives with its
 * `streamZip`, and the hash store when there is one. One definition for
 * every command that fetches packages.
 */
export function poolHashing(pool: HashPool, store?: HashStore): ZipHashesStrategy {
  return {
    kind: 'zip-hashes',
    hashZip: (path, knownZh) => pool.hashZip(path, knownZh),
    streamZip: () => pool.streamZip(),
    ...(store === undefined ? {} : { store }),
  };
}

/** The strategy's whole-zip hasher, in this thread when it names none. */
export function zipHasherOf(hashing: ArchiveHashing): ZipHasher {
  return hashing.hashZip ?? ((p, knownZh) => hashZipPackage(p, knownZh ? { knownZh } : {}));
}

/**
 * One fetch's hashing at work. At most one streaming job per attempt (a
 * restarted download starts a new one); none when the store already holds
 * the archive's hashes (`stored`: the download is still checked against
 * its `zh:`).
 */
export class AttemptHashing {
  private zh: ZhStream | undefined;
  private stream: ZipStream | undefined;
  private streamed: Promise<ZipPackageHashes> | undefined;
  private readonly hashZipPlain: ZipHasher;

  constructor(
    private readonly hashing: ArchiveHashing,
    private readonly stored: ZipPackageHashes | undefined,
  ) {
    this.hashZipPlain = zipHasherOf(hashing);
  }

  /**
   * A new attempt's stages before the file: the streaming job's pass-through
   * (none when `writerAllowed` and its worker writes the file, see
   * {@link writeFile}) or, with no job, a `zh:` hasher in this thread.
   */
  start(writerAllowed: boolean): Transform[] {
    this.stream?.abort();
    this.zh = undefined;
    this.streamed = undefined;
    this.stream = this.stored || this.hashing.kind === 'zh-only' ? undefined : this.hashing.streamZip?.();
    if (!this.stream) return [(this.zh = new ZhStream())];
    return writerAllowed && this.stream.writes ? [] : [this.stream.transform];
  }

  /** The streaming job's worker writes the file it hashes (no copy of the bytes between threads). */
  readonly writeFile = (tmp: string, offset: number, mode: number): Writable | undefined =>
    this.stream?.writes ? this.stream.writeFile(tmp, offset, mode) : undefined;

  /**
   * The `zh:` and size of the bytes this attempt wrote: the streaming job's
   * worker computed them (it saw every byte), else the hasher in this thread.
   */
  async digest(): Promise<{ zh: Hash; size: number }> {
    if (this.stream) return this.stream.digest();
    if (this.zh === undefined) throw new ProvkitError(ErrorCode.IO, 'internal: the archive was not hashed');
    return this.zh.result();
  }

  /** The streamed job's result for the written file `p` (once), else the plain hasher. */
  hashZip(p: string, knownZh: Hash | undefined): Promise<ZipPackageHashes> {
    if (!this.stream) return this.hashZipPlain(p, knownZh);
    this.streamed ??= this.stream.finish(p, knownZh);
    return this.streamed;
  }

  /** Frees the streaming job's worker (a failed fetch). */
  abort(): void {
    this.stream?.abort();
  }
}
