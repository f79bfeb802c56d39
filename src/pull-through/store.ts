/**
 * Where a pull-through mirror keeps the packages it fetched: the one
 * interface of its two stores, a mirror directory (dir-store.ts, the layout
 * `provkit mirror` writes) and an OCI registry (oci-store.ts, the layout of
 * OCI publishing, which several replicas can share).
 *
 * Contract of every store:
 * - {@link PackageStore.put} takes an archive that was verified (its signed
 *   `zh:`, both `h1:` forms computed from its bytes) and makes it stored
 *   completely or not at all: a reader never sees part of a package, and a
 *   process killed in the middle leaves the store as it was (or with the
 *   package complete);
 * - what a store reports of a package ({@link StoredPackage.hashes}) is
 *   computed from the stored bytes (here, or earlier by this machine: the
 *   hash store), never read from an index document someone else wrote;
 * - two writers (two requests, two replicas) never lose each other's
 *   packages.
 */
import type { FileHandle } from 'node:fs/promises';

import type { Platform, ProviderAddress, Version } from '../addresses/index.js';
import type { ZipPackageHashes } from '../hashing/index.js';

/** A package the store holds. */
export interface StoredPackage {
  readonly platform: Platform;
  /** `zh:` and both `h1:` forms of the stored archive. */
  readonly hashes: ZipPackageHashes;
}

/** A verified package handed to {@link PackageStore.put}. */
export interface PackageToStore {
  readonly provider: ProviderAddress;
  readonly version: Version;
  readonly platform: Platform;
  /** The verified archive, in the store's {@link PackageStore.workDir} (the store may move it). */
  readonly path: string;
  readonly hashes: ZipPackageHashes;
  readonly size: number;
}

/** A stored archive opened for sending; the receiver closes the handle. */
export interface OpenedArchive {
  readonly handle: FileHandle;
  /** For messages. */
  readonly path: string;
  readonly size: number;
  /** From the archive's `zh:`: the same bytes have the same tag on every replica. */
  readonly etag: string;
  readonly mtime: Date;
}

/** See the module comment. */
export interface PackageStore {
  /** For messages and logs (`/srv/mirror`, `oci://registry/providers/{namespace}/{type}`). */
  readonly display: string;
  /** A new directory for one fetch, on the file system the store commits from; the caller removes it. */
  workDir(): Promise<string>;
  /** The versions the store holds packages of (any platform), sorted lowest first. */
  versions(provider: ProviderAddress, signal?: AbortSignal): Promise<Version[]>;
  /** The packages of one version the store holds, by platform (`os_arch`). */
  packages(provider: ProviderAddress, version: Version, signal?: AbortSignal): Promise<Map<string, StoredPackage>>;
  /** One stored package, or undefined. */
  lookup(
    provider: ProviderAddress,
    version: Version,
    platform: Platform,
    signal?: AbortSignal,
  ): Promise<StoredPackage | undefined>;
  /** The stored archive opened for reading, or undefined when it is not stored. */
  open(
    provider: ProviderAddress,
    version: Version,
    platform: Platform,
    signal?: AbortSignal,
  ): Promise<OpenedArchive | undefined>;
  /** Stores a verified package; see the module comment. */
  put(pkg: PackageToStore, signal?: AbortSignal): Promise<void>;
  /** Releases what the store holds open (temporary files of a cache). */
  close(): Promise<void>;
}

/** The ETag of an archive whose `zh:` is `zhHex`. */
export function archiveEtag(zhHex: string): string {
  return `"zh-${zhHex.slice(0, 32)}"`;
}
