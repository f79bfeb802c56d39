/**
 * A fetched package's provenance: which of the hashes its source reported
 * are its own, and what vouches for each (hashing/disposition.ts; one
 * vocabulary for `lock`, `install`, `mirror`, `verify` and `audit`,
 * docs/provenance.md). Pure.
 */
import { type Disposition, groupDispositions, type Hash, type HashDispositions, isLocal } from '../hashing/index.js';
import type { Platform } from '../addresses/index.js';
import type { TrustedHash } from './source.js';

/** The dispositions `hashes` give `hash` (none: nobody vouches for it), strongest first. */
export function dispositionsOf(hashes: readonly TrustedHash[], hash: Hash): Disposition[] {
  return groupDispositions(
    hashes.filter((h) => h.hash.text === hash.text).map((h) => ({ hash: h.hash, disposition: h.trust })),
  ).flatMap((g) => g.dispositions);
}

/** What one package's hashes are, for {@link packageDispositions}. */
export interface PackageHashesInput {
  readonly platform: Platform;
  /** The archive's file name (a SHA256SUMS line naming it is the package's). */
  readonly filename?: string;
  /** The source's reported hashes plus what authentication verified (a fetch's `hashes`). */
  readonly hashes: readonly TrustedHash[];
  /** Hashes computed here from the package's bytes (its `h1:` forms, an unpacked directory's `h1:`). */
  readonly computed: readonly Hash[];
  /**
   * What a computed hash is when `hashes` does not say (no authentication:
   * a filesystem mirror's package): `computed-locally` from its path.
   */
  readonly local?: Disposition;
}

/**
 * The package's own hashes with their dispositions, strongest first: those
 * reported or verified for its platform or naming its file, and those
 * computed from its bytes, which are what its `zh:` was verified as
 * (`verified-locally` when a signature covered it, else
 * `computed-locally`). Hashes of other platforms' packages are left out.
 */
export function packageDispositions(input: PackageHashesInput): HashDispositions[] {
  const own = input.hashes.filter(
    (h) =>
      (h.platform !== undefined && h.platform.equals(input.platform)) ||
      (h.file !== undefined && h.file === input.filename),
  );
  const local = own.find((h) => isLocal(h.trust))?.trust ?? input.local;
  const pairs = [
    ...own.map((h) => ({ hash: h.hash, disposition: h.trust })),
    ...input.computed.map((hash) => ({ hash, disposition: local })),
  ];
  return groupDispositions(pairs).sort((a, b) => (a.hash.text < b.hash.text ? -1 : a.hash.text > b.hash.text ? 1 : 0));
}
