/**
 * `provkit keys`: the OpenPGP keys the providers' releases are signed with
 * (docs/provenance.md "Signing keys"). For every provider version asked —
 * the locked ones, and with `available` every version the configuration's
 * constraints allow — one platform's download metadata is asked of the
 * source, which fetches that version's SHA256SUMS and its detached
 * signature and checks it against the registry's keys
 * (sources/registry/signature.ts): the key that verified it is the
 * version's key. Nothing is downloaded.
 *
 * What is flagged ({@link keyFindings}, pure), judged with the audit
 * policy's settings for the provider (config/audit-policy.ts):
 * - `KEY_EXPIRED`: the key (or the signature) had expired when checked
 *   (OpenTofu accepts it with a warning, opentofu/opentofu#1769), unless the
 *   policy sets `allow_expired_keys`;
 * - `KEY_NOT_TRUSTED`: the policy pins `trusted_keys` and the key is not one
 *   of them, however the registry vouches for it;
 * - `KEY_CHANGED`: a version is signed by another key than the version
 *   before it (in version order), unless both keys are pinned (a rotation
 *   the policy already vouches for);
 * - `NOT_SIGNED`: no key vouches for the version, for a reason kept as
 *   data ({@link NotSignedReason}): the signature check was skipped
 *   (OpenTofu's default registry listing no keys, docs/reference.md §8.5
 *   item 118), the source is a mirror (a filesystem, network or OCI mirror
 *   holds no SHA256SUMS and no signature: docs/reference.md §4.2 item 62,
 *   §4.3 item 69), or the source does not list the version.
 *
 * Each request carries the policy that judges it (the `provkit.hcl` of the
 * root module that asked, docs/provenance.md "Signing keys"): one provider
 * asked by roots with different policies is two requests, judged apart, while
 * each version's signature is asked of the source once for the run.
 *
 * A fault of the source (registry down, a signature that does not verify)
 * is an error of the run (thrown), never a pass.
 */
import pLimit from 'p-limit';

import { type Flavor, ProviderAddress, type Version, type VersionConstraints } from '../addresses/index.js';
import { type AuditPolicy, auditRuleFor, type EffectiveAuditRule } from '../config/audit-policy.js';
import { compareBytewise } from '../go/index.js';
import type { Source } from '../sources/index.js';

/** One provider whose keys are asked for. */
export interface KeysRequest {
  readonly provider: ProviderAddress;
  /** The versions lock files select (may be empty: the provider is not locked). */
  readonly locked: readonly Version[];
  /** The configuration's constraints (for `available`: a version any of them allows); none: every version. */
  readonly constraints?: readonly VersionConstraints[];
  /** The audit policy that judges this provider's keys (default: {@link KeysOptions.policy}). */
  readonly policy?: AuditPolicy;
  /** The root modules that ask, as the working directory names them (`.`, `svc/a`); carried to the result. */
  readonly roots?: readonly string[];
}

/**
 * Why no key vouches for a version (stable codes: `-json` `not_signed_reason`, `reasons`):
 * - `signature-skipped`: the registry's signature check was skipped (it lists no key for the provider);
 * - `mirror`: the source is a mirror, which has no SHA256SUMS and no signature (a mirror vouches for no key);
 * - `not-available`: the source does not list the version.
 */
export type NotSignedReason = 'signature-skipped' | 'mirror' | 'not-available';

/** How one version's SHA256SUMS is signed. */
export type VersionSignature =
  | {
      readonly kind: 'signed';
      /** 16 upper-case hex digits. */
      readonly keyId: string;
      /** 40 upper-case hex digits, when the check reported it. */
      readonly fingerprint?: string;
      /** ISO 8601; null: the key never expires; undefined: not known. */
      readonly keyExpires?: string | null;
      /** The key or the signature had expired when it was checked. */
      readonly expired: boolean;
    }
  /** No key vouches for the version: `reason` why, `detail` in words (naming the source). */
  | { readonly kind: 'not-signed'; readonly reason: NotSignedReason; readonly detail: string };

/** One version and its signature. */
export interface KeyVersion {
  readonly version: Version;
  /** A lock file selects it. */
  readonly locked: boolean;
  readonly signature: VersionSignature;
}

/** Why a key or a version is flagged (stable codes: `-json` `findings`). */
export type KeyFindingCode = 'KEY_EXPIRED' | 'KEY_NOT_TRUSTED' | 'KEY_CHANGED' | 'NOT_SIGNED';

/** One thing flagged (or, with `flagged` false, noted: a rotation between two pinned keys). */
export interface KeyFinding {
  readonly code: KeyFindingCode;
  readonly message: string;
  /** The key it is about (absent for `NOT_SIGNED`). */
  readonly keyId?: string;
  /** The versions it is about, lowest first. */
  readonly versions: readonly Version[];
  /** Whether it fails the run (exit 2). */
  readonly flagged: boolean;
  /** `NOT_SIGNED` only: why, each reason once, sorted. */
  readonly reasons?: readonly NotSignedReason[];
}

/** One key that signs some of a provider's versions. */
export interface ProviderKey {
  readonly keyId: string;
  readonly fingerprint?: string;
  readonly keyExpires?: string | null;
  readonly expired: boolean;
  /** The versions it signs, lowest first. */
  readonly versions: readonly Version[];
  /** Whether the policy pins it (undefined: the policy pins no key). */
  readonly trusted?: boolean;
}

/** One provider's keys. */
export interface ProviderKeys {
  readonly provider: ProviderAddress;
  /** Every version asked, lowest first. */
  readonly versions: readonly KeyVersion[];
  /** The keys, in the order of the first version each signs. */
  readonly keys: readonly ProviderKey[];
  readonly findings: readonly KeyFinding[];
  /** Where the settings that judged it come from (`the default policy`, `provkit.hcl provider "…"`). */
  readonly policy: string;
  /** The policy file that judged it, as the working directory names it; undefined: the default policy. */
  readonly policyFile?: string;
  /** The root modules that asked (the request's `roots`). */
  readonly roots?: readonly string[];
}

/** What {@link runKeys} needs. */
export interface KeysOptions {
  readonly providers: readonly KeysRequest[];
  readonly source: Source;
  /** Also every available version the constraints allow, not only the locked ones. */
  readonly available?: boolean;
  /** The policy of the requests that carry none. */
  readonly policy?: AuditPolicy;
  /**
   * The source is a mirror (`-fs-mirror`, `-net-mirror`): it is asked for each
   * provider's versions (a fault is an error, never a pass), and no key
   * vouches for any of them (`mirror`). Default: a registry.
   */
  readonly mirror?: boolean;
  readonly flavor: Flavor;
  readonly signal?: AbortSignal;
  /** Versions asked at once (default 8). */
  readonly concurrency?: number;
}

/** The result of {@link runKeys}: providers sorted by address (then by policy file). */
export interface KeysOutcome {
  readonly providers: readonly ProviderKeys[];
}

/** See the module comment. @throws {ProvkitError} when a source fails. */
export async function runKeys(options: KeysOptions): Promise<KeysOutcome> {
  const { source, signal } = options;
  const limit = pLimit(options.concurrency ?? 8);
  // One question per provider and per version for the whole run, whichever requests share them.
  const listings = new Map<string, Promise<readonly Version[]>>();
  const listing = (provider: ProviderAddress): Promise<readonly Version[]> =>
    once(listings, provider.toComparisonString(), () =>
      limit(() => source.availableVersions(provider, signal)).then((a) => a.versions),
    );
  const signatures = new Map<string, Promise<VersionSignature>>();
  const signature = (provider: ProviderAddress, version: Version): Promise<VersionSignature> =>
    once(signatures, `${provider.toComparisonString()} ${version.toString()}`, async () => {
      if (options.mirror === true) {
        const has = (await listing(provider)).some((v) => v.equals(version));
        return has
          ? {
              kind: 'not-signed',
              reason: 'mirror',
              detail: `${source.forDisplay(provider)} is a mirror: no SHA256SUMS, no signature`,
            }
          : notAvailable(source, provider);
      }
      return limit(() => versionSignature(source, provider, version, signal));
    });
  const providers = await Promise.all(
    options.providers.map(async (req): Promise<ProviderKeys> => {
      const versions = new Map<string, { version: Version; locked: boolean }>();
      for (const v of req.locked) versions.set(v.toString(), { version: v, locked: true });
      if (options.available === true) {
        const all = await listing(req.provider);
        const constraints = req.constraints ?? [];
        const allowed = (v: Version): boolean => constraints.length === 0 || constraints.some((c) => c.matches(v));
        for (const v of all)
          if (allowed(v) && !versions.has(v.toString())) versions.set(v.toString(), { version: v, locked: false });
      }
      const asked = [...versions.values()].sort((a, b) => (a.version.lessThan(b.version) ? -1 : 1));
      const signed = await Promise.all(
        asked.map(async (a): Promise<KeyVersion> => ({ ...a, signature: await signature(req.provider, a.version) })),
      );
      const policy = req.policy ?? options.policy;
      const rule = auditRuleFor(policy, req.provider, options.flavor, false);
      return {
        provider: req.provider,
        versions: signed,
        ...keyFindings(signed, rule),
        policy: rule.from,
        ...(policy === undefined ? {} : { policyFile: policy.file }),
        ...(req.roots === undefined ? {} : { roots: req.roots }),
      };
    }),
  );
  return {
    providers: providers.sort(
      (a, b) =>
        ProviderAddress.compare(a.provider, b.provider) || compareBytewise(a.policyFile ?? '', b.policyFile ?? ''),
    ),
  };
}

/** The promise `key` maps to in `cache`, made by `make` the first time. */
function once<T>(cache: Map<string, Promise<T>>, key: string, make: () => Promise<T>): Promise<T> {
  let p = cache.get(key);
  if (p === undefined) cache.set(key, (p = make()));
  return p;
}

const notAvailable = (source: Source, provider: ProviderAddress): VersionSignature => ({
  kind: 'not-signed',
  reason: 'not-available',
  detail: `${source.forDisplay(provider)} does not list it`,
});

/** How `version` is signed: one platform's metadata carries the version's SHA256SUMS and its signature check. */
async function versionSignature(
  source: Source,
  provider: ProviderAddress,
  version: Version,
  signal: AbortSignal | undefined,
): Promise<VersionSignature> {
  const platforms = (await source.publishedPlatforms?.(provider, version, signal)) ?? [];
  const first = platforms[0];
  if (first === undefined) return notAvailable(source, provider);
  const meta = await source.packageMeta(provider, version, first, signal);
  const auth = meta.authentication;
  if (auth?.kind !== 'registry')
    return { kind: 'not-signed', reason: 'mirror', detail: `${meta.source} is a mirror: no SHA256SUMS, no signature` };
  const s = auth.signature;
  if (s.kind === 'skipped')
    return { kind: 'not-signed', reason: 'signature-skipped', detail: `signature check skipped: ${s.reason}` };
  return {
    kind: 'signed',
    keyId: s.keyId,
    ...(s.fingerprint === undefined ? {} : { fingerprint: s.fingerprint }),
    ...(s.keyExpires === undefined ? {} : { keyExpires: s.keyExpires }),
    expired: s.expired,
  };
}

/** The keys of `versions` (sorted lowest first) and what is flagged under `rule`. Pure; see the module comment. */
export function keyFindings(
  versions: readonly KeyVersion[],
  rule: Pick<EffectiveAuditRule, 'trustedKeys' | 'allowExpiredKeys' | 'from'>,
): { keys: ProviderKey[]; findings: KeyFinding[] } {
  const keys = new Map<string, ProviderKey & { versions: Version[] }>();
  const findings: KeyFinding[] = [];
  const pinned = (id: string): boolean | undefined => rule.trustedKeys?.includes(id);
  const unsigned: Version[] = [];
  let previous: { keyId: string; version: Version } | undefined;
  for (const v of versions) {
    const s = v.signature;
    if (s.kind !== 'signed') {
      unsigned.push(v.version);
      continue;
    }
    const k = keys.get(s.keyId);
    if (k === undefined) {
      const trusted = pinned(s.keyId);
      keys.set(s.keyId, {
        keyId: s.keyId,
        ...(s.fingerprint === undefined ? {} : { fingerprint: s.fingerprint }),
        ...(s.keyExpires === undefined ? {} : { keyExpires: s.keyExpires }),
        expired: s.expired,
        versions: [v.version],
        ...(trusted === undefined ? {} : { trusted }),
      });
    } else k.versions.push(v.version);
    if (previous !== undefined && previous.keyId !== s.keyId) {
      const both = pinned(previous.keyId) === true && pinned(s.keyId) === true;
      findings.push({
        code: 'KEY_CHANGED',
        message: `${v.version.toString()} is signed by key ${s.keyId}, ${previous.version.toString()} by key ${previous.keyId}${both ? ' (both are trusted_keys)' : ''}`,
        keyId: s.keyId,
        versions: [previous.version, v.version],
        flagged: !both,
      });
    }
    previous = { keyId: s.keyId, version: v.version };
  }
  for (const k of keys.values()) {
    if (k.expired)
      findings.push({
        code: 'KEY_EXPIRED',
        message: `key ${k.keyId} has expired${k.keyExpires ? ` (${k.keyExpires.slice(0, 10)})` : ''}`,
        keyId: k.keyId,
        versions: k.versions,
        flagged: !rule.allowExpiredKeys,
      });
    if (k.trusted === false)
      findings.push({
        code: 'KEY_NOT_TRUSTED',
        message: `key ${k.keyId} is not one of the trusted_keys of ${rule.from}`,
        keyId: k.keyId,
        versions: k.versions,
        flagged: true,
      });
  }
  if (unsigned.length > 0) {
    const notSigned = versions.flatMap((v) => (v.signature.kind === 'not-signed' ? [v.signature] : []));
    const details = [...new Set(notSigned.map((s) => s.detail))];
    findings.push({
      code: 'NOT_SIGNED',
      message: `no key vouches for ${unsigned.map(String).join(', ')} (${details.join('; ')})`,
      versions: unsigned,
      flagged: true,
      reasons: [...new Set(notSigned.map((s) => s.reason))].sort(),
    });
  }
  return { keys: [...keys.values()], findings };
}
