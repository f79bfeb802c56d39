/**
 * The dependency lock model (`internal/depsfile/locks.go`).
 *
 * Contract: a {@link ProviderLock} made by {@link newProviderLock} holds its
 * hashes sorted and de-duplicated (every write path of the reference goes
 * through `NewProviderLock`); one loaded from a file keeps the file's order
 * and duplicates (docs/reference.md §3.1 item 37), so that {@link locksEqual} sees an
 * unsorted file as changed, as the reference does.
 */
import { ProviderAddress, type Version, VersionConstraints } from '../addresses/index.js';
import { type Hash, normalizeHashes, preferredHashes } from '../hashing/index.js';

/**
 * One provider's entry of a lock file (`provider "ADDRESS" { version, constraints, hashes }`;
 * `depsfile.ProviderLock`). Immutable; build one with {@link newProviderLock} to get the reference's sorted, de-
 * duplicated hashes.
 */
export class ProviderLock {
  /**
   * A lock as given (hashes kept in their order, duplicates too); see {@link newProviderLock} for the reference's
   * normal form.
   */
  constructor(
    /** The provider's address (the block's label). */
    readonly provider: ProviderAddress,
    /** The selected version (`version`). */
    readonly version: Version,
    /** The configuration's constraints when it was locked (`constraints`; empty when none were given). */
    readonly constraints: VersionConstraints,
    /**
     * The `hashes` list: as the file has them when parsed (order and duplicates kept), sorted and de-duplicated
     * when made by {@link newProviderLock}.
     */
    readonly hashes: readonly Hash[],
  ) {
    Object.freeze(this);
  }

  /** The `h1:`/`zh:` hashes, in stored order (`PreferredHashes`). */
  preferredHashes(): Hash[] {
    return preferredHashes(this.hashes);
  }

  /**
   * `ContainsAll`: whether every hash of `target` is here. Both lists are
   * walked as sorted lists, as the reference does.
   */
  containsAll(target: ProviderLock): boolean {
    let i = 0;
    for (const want of target.hashes) {
      while (i < this.hashes.length && this.hashes[i]!.text < want.text) i += 1;
      if (i >= this.hashes.length || this.hashes[i]!.text !== want.text) return false;
    }
    return true;
  }
}

/** `NewProviderLock`: hashes sorted (byte order) and de-duplicated. */
export function newProviderLock(
  provider: ProviderAddress,
  version: Version,
  constraints: VersionConstraints | undefined,
  hashes: Iterable<Hash>,
): ProviderLock {
  return new ProviderLock(provider, version, constraints ?? new VersionConstraints(), normalizeHashes(hashes));
}

/** An immutable set of provider locks, keyed by provider. */
export class Locks {
  private readonly byKey: ReadonlyMap<string, ProviderLock>;

  /** The set of `locks`, one per provider (a later lock for the same provider replaces an earlier one). */
  constructor(locks: Iterable<ProviderLock> = []) {
    const m = new Map<string, ProviderLock>();
    for (const l of locks) m.set(l.provider.toComparisonString(), l);
    this.byKey = m;
    Object.freeze(this);
  }

  /** How many providers are locked. */
  get size(): number {
    return this.byKey.size;
  }

  /**
   * The lock of `addr` (compared as the reference compares addresses: case-insensitively for host and namespace),
   * or undefined.
   */
  provider(addr: ProviderAddress): ProviderLock | undefined {
    return this.byKey.get(addr.toComparisonString());
  }

  /** All locks sorted by provider (`Provider.LessThan`). */
  all(): ProviderLock[] {
    return [...this.byKey.values()].sort((a, b) => ProviderAddress.compare(a.provider, b.provider));
  }

  /** A copy with `lock` added or replaced (`SetProvider`). */
  with(lock: ProviderLock): Locks {
    return new Locks([...this.byKey.values(), lock]);
  }

  /** A copy without `addr` (`RemoveProvider`). */
  without(addr: ProviderAddress): Locks {
    return new Locks([...this.byKey.values()].filter((l) => !l.provider.equals(addr)));
  }
}

/**
 * `Locks.Equal`: same providers, same versions (Go `==`, metadata included)
 * and the same hashes item by item. Constraints are **not** compared, so a
 * constraints-only change does not make `init` rewrite the file (docs/reference.md §3.3 item 42).
 */
export function locksEqual(a: Locks, b: Locks): boolean {
  if (a.size !== b.size) return false;
  for (const la of a.all()) {
    const lb = b.provider(la.provider);
    if (!lb || !la.version.equals(lb.version)) return false;
    if (la.hashes.length !== lb.hashes.length) return false;
    if (la.hashes.some((h, i) => h.text !== lb.hashes[i]!.text)) return false;
  }
  return true;
}
