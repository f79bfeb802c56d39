/**
 * Who vouches for the hashes `provkit verify` checked (docs/provenance.md,
 * "What `verify` says"), in the one vocabulary of hashing/disposition.ts and
 * through the one rule of a package's dispositions (sources/provenance.ts
 * `packageDispositions`). Pure: the runs (verify.ts, oci-verify.ts) gather
 * the evidence, these functions decide.
 *
 * - A hash verify computed from a package's bytes (the archive's `zh:`, both
 *   `h1:` forms; an unpacked directory's `h1:`) is `computed-locally`, with
 *   the path (or the OCI blob's URL): nobody signed those bytes here.
 * - It is `verified-locally` instead, with the key ID, when the hash store
 *   (hashing/store.ts) records the archive's `zh:` as `signed`: a
 *   SHA256SUMS whose signature verified listed it when the store entry was
 *   written (`lock`, `mirror`, `audit` from a registry). That `zh:` is then
 *   also `signed`, as the store records it (key ID, expiry, the document's
 *   URL). Verify is offline: it trusts the store's record, never asks the
 *   registry (`provkit audit` does).
 * - A hash the mirror lists for the package (a packed mirror's
 *   `VERSION.json`, an OCI mirror's manifest) is `reported-by-mirror`; one
 *   that matches the bytes is also what the bytes say. A listed hash that
 *   contradicts the bytes is not vouched for here: it is an `INDEX_MISMATCH`
 *   problem.
 * - A lock-file hash of a checked provider version that none of these
 *   vouches for, nor the store by its `zh:` (or as an `h1:` form of a store
 *   entry the lock's `zh:` names), has no disposition: nobody vouches for it
 *   now ({@link unvouchedLockHashes}).
 */
import type { Platform, ProviderAddress, Version } from '../addresses/index.js';
import type { Disposition, Hash, StoredDisposition, StoredHashes } from '../hashing/index.js';
import { packageDispositions, type TrustedHash } from '../sources/index.js';
import type { PackageHash } from './events.js';

/** One package `verify` checked, and who vouches for each of its hashes. */
export interface VerifiedPackage {
  /** The package's provider. */
  readonly provider: ProviderAddress;
  /** Its version (a locked one). */
  readonly version: Version;
  /** Its platform. */
  readonly platform: Platform;
  /** Where its bytes are: the archive's or directory's path, or the OCI blob's URL. */
  readonly location: string;
  /** Its hashes (computed here, and what the mirror lists for it), sorted by text, each with its dispositions. */
  readonly hashes: readonly PackageHash[];
}

/** Lock-file hashes of one checked provider version that nobody vouches for now. */
export interface UnvouchedHashes {
  /** The locked provider. */
  readonly provider: ProviderAddress;
  /** Its locked version. */
  readonly version: Version;
  /** Sorted by text. */
  readonly hashes: readonly Hash[];
}

/** What {@link verifiedPackageHashes} derives a package's dispositions from. */
export interface CheckedPackageEvidence {
  readonly platform: Platform;
  /** The package's bytes: a path or URL. */
  readonly from: string;
  /** Hashes computed here from the bytes. */
  readonly computed: readonly Hash[];
  /** The archive's `zh:` (none for an unpacked directory). */
  readonly zh?: Hash;
  /** What the hash store records for {@link zh}: who vouched for those bytes. */
  readonly stored?: readonly StoredDisposition[];
  /** The hashes the mirror lists for the package (`reported-by-mirror`), contradicted ones left out. */
  readonly reported?: readonly TrustedHash[];
}

/** A stored disposition without its time stamp. */
function unstamped(d: StoredDisposition): Disposition {
  const { at: _at, ...rest } = d;
  return rest;
}

/** The package's hashes with their dispositions (see the module comment). */
export function verifiedPackageHashes(e: CheckedPackageEvidence): PackageHash[] {
  const signed = (e.stored ?? []).filter((d) => d.kind === 'signed').map(unstamped);
  const first = signed[0];
  const local: Disposition =
    first?.kind === 'signed'
      ? { kind: 'verified-locally', from: e.from, keyId: first.keyId }
      : { kind: 'computed-locally', from: e.from };
  const zh = e.zh;
  const hashes: TrustedHash[] = [
    ...(zh === undefined ? [] : signed.map((trust) => ({ hash: zh, trust, platform: e.platform }))),
    ...(e.reported ?? []).map((r) => ({ ...r, platform: e.platform })),
  ];
  return packageDispositions({ platform: e.platform, hashes, computed: e.computed, local }).map((h) => ({
    ...h,
    platform: e.platform,
  }));
}

/**
 * What the hash store knows of a directory's files (an installed package,
 * an unpacked mirror's): the entry, among `stored` (the store's entries for
 * the lock's `zh:` hashes), one of whose `h1:` forms is the directory's
 * `h1:` — the same files as that archive's, so the directory is vouched for
 * as the entry records its `zh:`. Undefined when none is.
 */
export function storedEntryOfDirectory(
  h1: Hash,
  stored: ReadonlyArray<StoredHashes | undefined>,
): StoredHashes | undefined {
  return stored.find(
    (s) => s !== undefined && [s.hashes.h1, s.hashes.h1Zip].some((f) => f.ok && f.hash.text === h1.text),
  );
}

/**
 * The lock's hashes (`locked`) that nothing vouches for: none of the
 * checked packages' hashes (of any platform of the version) and no store
 * entry (`stored`: the store's entries for the lock's `zh:` hashes; an
 * entry vouches for its `zh:` when it records who vouched for it, and then
 * for its `h1:` forms). Sorted by text.
 */
export function unvouchedLockHashes(
  locked: readonly Hash[],
  packages: ReadonlyArray<Pick<VerifiedPackage, 'hashes'>>,
  stored: ReadonlyArray<StoredHashes | undefined> = [],
): Hash[] {
  const vouched = new Set<string>();
  for (const p of packages) for (const h of p.hashes) if (h.dispositions.length > 0) vouched.add(h.hash.text);
  for (const s of stored) {
    if (s === undefined || s.dispositions.length === 0) continue;
    vouched.add(s.hashes.zh.text);
    for (const f of [s.hashes.h1, s.hashes.h1Zip]) if (f.ok) vouched.add(f.hash.text);
  }
  const seen = new Set<string>();
  return locked
    .filter((h) => !vouched.has(h.text) && !seen.has(h.text) && seen.add(h.text))
    .sort((a, b) => (a.text < b.text ? -1 : a.text > b.text ? 1 : 0));
}
