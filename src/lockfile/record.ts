/**
 * Which hashes a run records in the lock file: the one rule, for `providers
 * lock` and for `init` (`provkit install`) alike (docs/reference.md §5.2
 * item 79, §6.1 item 91, §9 item 125).
 *
 * Beside the `h1:` of the package as extracted (always recorded; the callers
 * add it) a lock records, of the hashes a source reported with their trust:
 * - every flavor: hashes a verified signature covers (every line of a signed
 *   SHA256SUMS, all platforms): hashicorp/terraform and opentofu/opentofu
 *   internal/providercache/installer.go, `signedHashes`;
 * - OpenTofu only: hashes the authentication verified against the package
 *   bytes (the archive's `zh:`, a network mirror's matching `zh:`/`h1:`, an
 *   OCI blob's `zh:`, docs/oci.md "Reading"): installer.go `localHashes`.
 *   Terraform records none of these (observed with terraform 1.11.4: a lock
 *   from `-net-mirror` holds only the `h1:`, even when the mirror lists `zh:`);
 * - OpenTofu only, when reported hashes are trusted (see
 *   {@link reportedHashesTrusted}): what the registry (its `packages`
 *   extension included) or a network/OCI mirror reported, unchecked.
 *
 * Both commands run the same installer in both references
 * (internal/command/providers_lock.go installs each platform with
 * `InstallNewProvidersForce`, which differs from `init` only in not checking
 * the old lock's hashes), so the operation does not change the result; it is
 * an input so that the table (test/lockfile/record.test.ts) states that for
 * every case.
 *
 * The trust kinds are the one vocabulary of provenance
 * (hashing/disposition.ts `DispositionKind`): {@link recorded} switches on
 * every kind, so a new kind fails to compile here until this rule decides it.
 */
import { defaultRegistryHost, type Flavor, type ProviderAddress } from '../addresses/index.js';
import { type DispositionKind, type Hash, normalizeHashes } from '../hashing/index.js';

/** Why a hash is believed: a disposition's kind (hashing/disposition.ts). */
export type HashTrustKind = DispositionKind;

/** A hash with the kind of its trust; src/sources `TrustedHash` is one. */
export interface HashWithTrust {
  readonly hash: Hash;
  readonly trust: { readonly kind: HashTrustKind };
}

/** The run that records hashes: `providers lock` (`provkit lock`) or `init` (`provkit install`). */
export type LockOperation = 'providers-lock' | 'init';

export interface RecordInput {
  readonly flavor: Flavor;
  readonly operation: LockOperation;
  /** Whether reported (unsigned, unchecked) hashes are trusted: {@link reportedHashesTrusted}. */
  readonly reportedTrusted: boolean;
  readonly hashes: readonly HashWithTrust[];
}

/**
 * Whether OpenTofu trusts reported hashes for `provider` (docs/reference.md
 * §5.2 item 79): only on its default registry (`registry.opentofu.org`), and
 * not with `OPENTOFU_ENFORCE_GPG_VALIDATION=true`. Terraform never does
 * ({@link hashesToRecord} checks the flavor).
 */
export function reportedHashesTrusted(provider: ProviderAddress, enforceSignatures: boolean): boolean {
  return provider.hostname === defaultRegistryHost('tofu') && !enforceSignatures;
}

/** Whether one hash of that trust is recorded; see the module comment. */
function recorded(kind: HashTrustKind, flavor: Flavor, reportedTrusted: boolean): boolean {
  switch (kind) {
    case 'signed':
      return true;
    // OpenTofu's `VerifiedLocally` covers both: computed here from the bytes.
    case 'verified-locally':
    case 'computed-locally':
      return flavor === 'tofu';
    case 'reported-by-registry':
    case 'reported-by-mirror':
      return flavor === 'tofu' && reportedTrusted;
  }
}

/**
 * The hashes of `input.hashes` a lock records (beside the package's own
 * `h1:`), sorted (byte order) and de-duplicated, as the lock file holds them.
 * `input.operation` does not change the result (see the module comment).
 */
export function hashesToRecord(input: RecordInput): Hash[] {
  return normalizeHashes(
    input.hashes.filter((h) => recorded(h.trust.kind, input.flavor, input.reportedTrusted)).map((h) => h.hash),
  );
}
