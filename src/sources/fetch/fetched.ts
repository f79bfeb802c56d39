/**
 * What a fetch returns (fetch.ts), and the checks whoever records its hashes
 * makes: one package, one set of bytes, one set of hashes (docs/reliability.md).
 * Which kind of archive result comes back is the fetch's
 * {@link ArchiveHashing} (strategy.ts).
 */
import type { Platform, ProviderAddress, Version } from '../../addresses/index.js';
import { ErrorCode, ProvkitError } from '../../errors.js';
import { makeHash, type Hash, type ZipForms, type ZipPackageHashes } from '../../hashing/index.js';
import { authenticationLabel, type PackageMeta, type TrustedHash } from '../source.js';
import { localDisposition } from './authenticate.js';

/** The package a fetch was for. */
export interface PackageIdentity {
  readonly provider: ProviderAddress;
  readonly version: Version;
  readonly platform: Platform;
}

/** A fetched, authenticated archive. */
export interface FetchedArchive {
  readonly kind: 'archive';
  /** The package whose metadata this was fetched by (see {@link checkFetchedFor}). */
  readonly identity: PackageIdentity;
  readonly path: string;
  /** The archive's `zh:`, computed from its bytes as they were written. */
  readonly zh: Hash;
  readonly size: number;
  /** Where it came from (final URL after redirects, or the local path). */
  readonly from: string;
  /** The metadata's reported hashes plus what authentication verified, each with its reason. */
  readonly hashes: readonly TrustedHash[];
  /** The reference's summary (`signed`, `signing skipped`, `verified checksum`, `unauthenticated`). */
  readonly label: ReturnType<typeof authenticationLabel>;
  /** The signing key, when signed. */
  readonly keyId?: string;
  /**
   * The zip's hashes (`zh:` and both `h1:` forms), computed from the bytes
   * this fetch wrote before they were committed to `path` (or, for a store
   * hit, the store's entry for {@link zh}); their `zh:` is {@link zh}.
   */
  readonly zipHashes: ZipPackageHashes;
  /**
   * True when nothing was fetched: the registry's signed `zh:` named an
   * archive whose hashes a hash store already held ({@link storedArchive});
   * `path` is then the store entry, not an archive.
   */
  readonly stored?: boolean;
  readonly warnings: readonly string[];
}

/**
 * A local archive read in place for its `h1:` forms alone (hashing
 * `h1-forms-when-unauthenticated`, strategy.ts): nothing to authenticate, so
 * no `zh:` was computed. Checked as a {@link FetchedArchive} is (the same
 * file before and after the read).
 */
export type FetchedForms = Omit<FetchedArchive, 'kind' | 'zh' | 'zipHashes' | 'keyId' | 'stored'> & {
  readonly kind: 'archive-forms';
  readonly forms: ZipForms;
};

/** A fetched, authenticated archive whose `h1:` forms were not asked for (hashing `zh-only`, strategy.ts). */
export type FetchedBytes = Omit<FetchedArchive, 'kind' | 'zipHashes'> & { readonly kind: 'archive-bytes' };

/** An unpacked directory from a filesystem mirror: not copied, nothing to authenticate. */
export interface FetchedDirectory {
  readonly kind: 'dir';
  readonly identity: PackageIdentity;
  readonly path: string;
  readonly hashes: readonly TrustedHash[];
  readonly label: 'unauthenticated';
  readonly warnings: readonly string[];
}

/** A fetched and authenticated package: an archive (with its hashes) or an unpacked directory. */
export type FetchedPackage = FetchedArchive | FetchedDirectory;

/**
 * Checks that `fetched` is the package (provider, version, platform) whose
 * hashes the caller is about to record, and that its hashes are those of its
 * own bytes (the `zh:` they were computed for is the archive's). Call it
 * wherever a fetched package's hashes are recorded (a lock, an index, a
 * manifest): a mix-up then fails loudly instead of writing a wrong hash.
 *
 * @throws {ProvkitError} `IO` ("internal: …") on a mismatch.
 */
export function checkFetchedFor(
  fetched: FetchedPackage | FetchedForms | FetchedBytes,
  provider: ProviderAddress,
  version: Version,
  platform: Platform,
): void {
  const id = fetched.identity;
  const same = id.provider.equals(provider) && id.version.equals(version) && id.platform.equals(platform);
  const zhOk = fetched.kind !== 'archive' || fetched.zipHashes.zh.text === fetched.zh.text;
  if (same && zhOk) return;
  const what = `${provider.toString()} ${version.toString()} ${platform.toString()}`;
  throw new ProvkitError(
    ErrorCode.IO,
    same
      ? `internal: the hashes of ${what} were computed for other bytes (${fetched.kind === 'archive' ? `${fetched.zipHashes.zh.text}, not ${fetched.zh.text}` : ''})`
      : `internal: the package fetched for ${id.provider.toString()} ${id.version.toString()} ${id.platform.toString()} was about to be recorded for ${what}`,
    { provider: provider.toString(), version: version.toString(), platform: platform.toString(), file: fetched.path },
  );
}

/**
 * The `zh:` a registry vouches for before any download (its SHA256SUMS line,
 * whose signature `packageMeta` already checked; the download would have to
 * match it), or undefined for other sources.
 */
export function expectedZh(meta: PackageMeta): Hash | undefined {
  const auth = meta.authentication;
  return auth?.kind === 'registry' ? makeHash('zh:', auth.sha256) : undefined;
}

/** The signing key of a registry package whose signature verified. */
export function signingKeyOf(meta: PackageMeta): string | undefined {
  const auth = meta.authentication;
  return auth?.kind === 'registry' && auth.signature.kind === 'signed' ? auth.signature.keyId : undefined;
}

/**
 * A registry package known by its hashes instead of its bytes: what
 * `fetchPackage` would return, for `stored` hashes of the archive whose
 * `zh:` is {@link expectedZh} (see hashing/store.ts for why that is sound).
 * The `zh:` counts as verified locally: it was, when the store was filled.
 */
export function storedArchive(meta: PackageMeta, stored: ZipPackageHashes): FetchedArchive {
  const auth = meta.authentication;
  const zh = expectedZh(meta);
  if (auth?.kind !== 'registry' || zh === undefined || zh.text !== stored.zh.text) {
    throw new ProvkitError(
      ErrorCode.IO,
      'internal: stored hashes used for a package without a matching registry checksum',
    );
  }
  const hashes: TrustedHash[] = [
    ...meta.reportedHashes,
    { hash: zh, trust: localDisposition(meta), platform: meta.platform },
  ];
  const keyId = signingKeyOf(meta);
  return {
    kind: 'archive',
    identity: { provider: meta.provider, version: meta.version, platform: meta.platform },
    path: stored.path,
    zh,
    size: auth.packageSize ?? 0,
    from: stored.path,
    hashes,
    label: authenticationLabel(hashes),
    ...(keyId === undefined ? {} : { keyId }),
    zipHashes: stored,
    stored: true,
    warnings: [...meta.warnings],
  };
}
