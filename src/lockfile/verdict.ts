/**
 * What the lock file says about a package or a configuration, as pure
 * functions (docs/reference.md §3.4): the hashes a package must match, the
 * trust-on-first-use verdict on a package, and whether the lock covers the
 * configuration. Updating the lock is merge.ts; what it records, record.ts.
 */
import { type Flavor, flavorInfo, type ProviderAddress, type Requirement, type Version } from '../addresses/index.js';
import { type Hash, H1, ZH } from '../hashing/index.js';
import type { Locks, ProviderLock } from './model.js';

/**
 * The hashes a package must match (docs/reference.md §3.4 item 47): the lock's `h1:`/`zh:` when the
 * lock is for the selected version, otherwise none (nothing to verify).
 */
export function allowedHashes(lock: ProviderLock | undefined, version: Version): Hash[] {
  return lock && lock.version.equals(version) ? lock.preferredHashes() : [];
}

/** What was computed for the package being installed. */
/**
 * What is known of a package to check it against a lock: an archive's `zh:` and zip-form `h1:` (null when it has
 * none), or a directory's `h1:`.
 */
export type PackageHashes =
  | {
      readonly kind: 'archive';
      readonly zh: Hash;
      /** HashZip (zip form): what the reference checks an archive with. */
      readonly h1Zip: Hash | null;
    }
  | { readonly kind: 'dir'; readonly h1: Hash };

/**
 * The outcome of {@link verifyPackage}: `match` (the hash that matched), `mismatch` (the reference's message), or
 * `unverified` (nothing to check against: trust on first use).
 */
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
    const hit = archiveMatch(allowed, pkg);
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
 * The first allowed hash an archive matches (docs/reference.md §3.4 item 48): a `zh:` equal to the
 * archive's SHA-256, or an `h1:` equal to its zip form; undefined when none does.
 */
export function archiveMatch(
  allowed: readonly Hash[],
  pkg: { readonly zh: Hash; readonly h1Zip: Hash | null },
): Hash | undefined {
  return allowed.find(
    (h) =>
      (h.scheme === ZH && h.text === pkg.zh.text) ||
      (h.scheme === H1 && pkg.h1Zip !== null && h.text === pkg.h1Zip.text),
  );
}

/**
 * `VerifyDependencySelections` (docs/reference.md §3.4 item 51; hashicorp/terraform and
 * opentofu/opentofu internal/configs/config.go): whether the lock covers the
 * configuration. Returns the reference's messages, sorted.
 */
export function verifyDependencySelections(locks: Locks, requirements: readonly Requirement[]): string[] {
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
      errors.push(
        `provider ${provider.toString()}: locked version selection ${lock.version.toString()} doesn't match the updated version constraints ${JSON.stringify(constraints.toString())}`,
      );
    } else {
      errors.push(
        `provider ${provider.toString()}: version constraints ${JSON.stringify(constraints.toString())} don't match the locked version selection ${lock.version.toString()}`,
      );
    }
  }
  return errors.sort();
}
