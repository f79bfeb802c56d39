/**
 * How the reference updates locks, and its trust-on-first-use check, as pure
 * functions (docs/reference.md §3.3–3.4).
 *
 * Which hashes deserve recording is decided by the caller from the sources'
 * trust data (src/sources `Trust`); these functions assemble the new lock
 * entries from those lists exactly as the reference does.
 */
import { type Flavor, flavorInfo, type ProviderAddress, type Version, type VersionConstraints } from '../addresses/index.js';
import { type Hash, H1, ZH } from '../hashing/index.js';
import { type Locks, newProviderLock, type ProviderLock } from './model.js';

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
export function mergeInit(old: Locks, installed: readonly InstalledProvider[], required: readonly ProviderAddress[]): Locks {
  let locks = old;
  for (const p of installed) {
    const prior = old.provider(p.provider);
    const kept = prior && prior.version.equals(p.version) ? prior.preferredHashes() : [];
    locks = locks.with(newProviderLock(p.provider, p.version, p.constraints, [...kept, p.localHash, ...p.signedHashes]));
  }
  const keep = new Set(required.map((r) => r.toComparisonString()));
  for (const l of locks.all()) if (!keep.has(l.provider.toComparisonString())) locks = locks.without(l.provider);
  return locks;
}

/**
 * The hashes a package must match (docs/reference.md §3.4 item 47): the lock's `h1:`/`zh:` when the
 * lock is for the selected version, otherwise none (nothing to verify).
 */
export function allowedHashes(lock: ProviderLock | undefined, version: Version): Hash[] {
  return lock && lock.version.equals(version) ? lock.preferredHashes() : [];
}

/** What was computed for the package being installed. */
export type PackageHashes =
  | { readonly kind: 'archive'; readonly zh: Hash; /** HashZip (zip form): what the reference checks an archive with. */ readonly h1Zip: Hash | null }
  | { readonly kind: 'dir'; readonly h1: Hash };

export type Verdict =
  | { readonly kind: 'unverified'; readonly reason: 'no-lock-hashes' | 'only-zh-for-directory' }
  | { readonly kind: 'match'; readonly hash: Hash }
  | { readonly kind: 'mismatch'; readonly message: string };

/**
 * Trust on first use (docs/reference.md §3.4 items 48–49): with no allowed hashes there is nothing to
 * check; an archive must match a `zh:` (file SHA-256) or an `h1:` (zip form);
 * a directory is checked only when some allowed hash is not `zh:`, and must
 * then match an `h1:`. The mismatch messages are the reference's.
 */
export function verifyPackage(
  allowed: readonly Hash[],
  pkg: PackageHashes,
  provider: ProviderAddress,
  version: Version,
  flavor: Flavor,
): Verdict {
  if (allowed.length === 0) return { kind: 'unverified', reason: 'no-lock-hashes' };
  const url = flavorInfo(flavor).docsChecksumURL;
  if (pkg.kind === 'archive') {
    const hit = allowed.find((h) => (h.scheme === ZH && h.text === pkg.zh.text) || (h.scheme === H1 && pkg.h1Zip !== null && h.text === pkg.h1Zip.text));
    if (hit) return { kind: 'match', hash: hit };
    return {
      kind: 'mismatch',
      message: `the current package for ${provider.toString()} ${version.toString()} doesn't match any of the checksums previously recorded in the dependency lock file; for more information: ${url}`,
    };
  }
  if (allowed.every((h) => h.scheme === ZH)) return { kind: 'unverified', reason: 'only-zh-for-directory' };
  const hit = allowed.find((h) => h.scheme === H1 && h.text === pkg.h1.text);
  if (hit) return { kind: 'match', hash: hit };
  return {
    kind: 'mismatch',
    message: `the local package for ${provider.toString()} ${version.toString()} doesn't match any of the checksums previously recorded in the dependency lock file (this might be because the available checksums are for packages targeting different platforms); for more information: ${url}`,
  };
}

/**
 * `VerifyDependencySelections` (docs/reference.md §3.4 item 51; hashicorp/terraform and
 * opentofu/opentofu internal/configs/config.go): whether the lock covers the
 * configuration. Returns the reference's messages, sorted.
 */
export function verifyDependencySelections(
  locks: Locks,
  requirements: ReadonlyArray<{ readonly provider: ProviderAddress; readonly constraints: VersionConstraints }>,
): string[] {
  const errors: string[] = [];
  for (const { provider, constraints } of requirements) {
    const lock = locks.provider(provider);
    if (!lock) {
      errors.push(`provider ${provider.toString()}: required by this configuration but no version is selected`);
      continue;
    }
    // Only a locked version outside the constraints is a problem; the recorded
    // constraints only pick the wording (a lock made under other constraints
    // whose version still fits is consistent).
    if (constraints.matches(lock.version)) continue;
    if (lock.constraints.toString() !== constraints.toString()) {
      errors.push(`provider ${provider.toString()}: locked version selection ${lock.version.toString()} doesn't match the updated version constraints ${JSON.stringify(constraints.toString())}`);
    } else {
      errors.push(`provider ${provider.toString()}: version constraints ${JSON.stringify(constraints.toString())} don't match the locked version selection ${lock.version.toString()}`);
    }
  }
  return errors.sort();
}
