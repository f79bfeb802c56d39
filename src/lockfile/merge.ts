/**
 * How the reference updates locks, as pure functions (docs/reference.md §3.3).
 *
 * Which hashes deserve recording is decided by the one rule of record.ts;
 * these functions assemble the new lock entries from those lists exactly as
 * the reference does. Checking a package against the lock is verdict.ts.
 */
import type { ProviderAddress, Version, VersionConstraints } from '../addresses/index.js';
import type { Hash } from '../hashing/index.js';
import { type Locks, newProviderLock } from './model.js';

/** One provider's outcome for one platform in `providers lock`. */
export interface PlatformLockResult {
  readonly provider: ProviderAddress;
  readonly version: Version;
  readonly constraints: VersionConstraints;
  readonly hashes: readonly Hash[];
}

/**
 * `providers lock` (docs/reference.md §3.3 item 43): providers not processed stay untouched; for each
 * processed provider the hashes are the old entry's (unknown schemes kept)
 * plus every platform's, sorted and de-duplicated; version and constraints
 * come from the last platform's result. The file is always rewritten.
 */
export function mergeProvidersLock(old: Locks, results: readonly PlatformLockResult[]): Locks {
  let locks = old;
  const byProvider = new Map<string, PlatformLockResult[]>();
  for (const r of results) {
    const key = r.provider.toComparisonString();
    byProvider.set(key, [...(byProvider.get(key) ?? []), r]);
  }
  for (const list of byProvider.values()) {
    const last = list[list.length - 1]!;
    const prior = old.provider(last.provider);
    const hashes = [...(prior?.hashes ?? []), ...list.flatMap((r) => r.hashes)];
    locks = locks.with(newProviderLock(last.provider, last.version, last.constraints, hashes));
  }
  return locks;
}

/** One provider installed by `init`. */
export interface InstalledProvider {
  readonly provider: ProviderAddress;
  readonly version: Version;
  readonly constraints: VersionConstraints;
  /** The `h1:` of the installed directory (always recorded). */
  readonly localHash: Hash;
  /** Hashes that authentication vouched for (e.g. every zh: of a signed SHA256SUMS). */
  readonly signedHashes: readonly Hash[];
}

/**
 * `init` (docs/reference.md §3.3 item 41): each installed provider gets the old entry's preferred
 * hashes when the version is unchanged, plus the new local h1: and the signed
 * hashes; entries of providers no longer required are removed; providers
 * that failed keep their old entry.
 */
export function mergeInit(
  old: Locks,
  installed: readonly InstalledProvider[],
  required: readonly ProviderAddress[],
): Locks {
  let locks = old;
  for (const p of installed) {
    const prior = old.provider(p.provider);
    const kept = prior && prior.version.equals(p.version) ? prior.preferredHashes() : [];
    locks = locks.with(
      newProviderLock(p.provider, p.version, p.constraints, [...kept, p.localHash, ...p.signedHashes]),
    );
  }
  const keep = new Set(required.map((r) => r.toComparisonString()));
  for (const l of locks.all()) if (!keep.has(l.provider.toComparisonString())) locks = locks.without(l.provider);
  return locks;
}
