/**
 * `providers lock`: fetch every requested provider for every platform,
 * compute its hashes, and merge them into the locks (docs/reference.md §6.1 items 88–91,
 * §3.3 item 43).
 *
 * Beyond the reference: all (provider, platform) pairs are fetched and hashed
 * concurrently (network and CPU bounded separately: `networkConcurrency` and
 * the hash pool), and no package is fetched twice in one run: packages are
 * fetched and hashed by a {@link FetchCache} (fetch-cache.ts), which
 * `lock -recursive` shares between all the root modules of a tree, while
 * version selection and the merge stay per root (this function, once per root).
 *
 * Which hashes are recorded (docs/reference.md §6.1 item 91, §10 items 139–141): the `h1:` of each platform's package as extracted, plus
 * those the lock file layer's one rule keeps (lockfile/record.ts, the same
 * rule `install` uses): every hash a verified signature covers; for the
 * OpenTofu flavor also hashes verified against the archive and, for its
 * default registry without enforced signatures, reported ones.
 */
import { type Flavor, Platform, type ProviderAddress, type Requirement, type Version } from '../addresses/index.js';
import type { ProvkitError } from '../errors.js';
import { asProvkitError, type Diagnostic, ErrorCode, WarningCode } from '../errors.js';
import { goTrimSpace } from '../go/index.js';
import type { Hash } from '../hashing/index.js';
import {
  hashesToRecord,
  type Locks,
  mergeProvidersLock,
  newProviderLock,
  type PlatformLockResult,
  reportedHashesTrusted,
} from '../lockfile/index.js';
import type { TrustedHash } from '../sources/index.js';
import { type EventSink, ignoreEvents, type LockChange } from './events.js';
import type { FetchCache } from './fetch-cache.js';
import { abortable, abortableSource, withSignal } from './abort.js';
import { causeDiagnostic, groupByCause } from './causes.js';
import { querySelectVersion } from './select-version.js';

/**
 * What one run of `providers lock` over one module is given. One way in:
 * the packages come from `cache` (the fetch-and-hash cache, which a single
 * `lock` opens for itself and `lock -recursive` shares between the roots of
 * a flavor), and the versions and metadata from the same cache's source
 * (`cache.source`), so the two can never disagree.
 */
export interface LockOptions {
  /** The providers to lock, with their constraints. */
  readonly requirements: readonly Requirement[];
  /** The platforms to lock (installer/platforms.ts chooses them for a module). */
  readonly platforms: readonly Platform[];
  /** Whose rules apply: version constraints, which hashes are recorded (lockfile/record.ts). */
  readonly flavor: Flavor;
  /** The locks so far (the lock file's): locked versions are kept, their hashes merged into. */
  readonly oldLocks: Locks;
  /**
   * The fetch-and-hash cache the run's packages come from; its source is the
   * run's source. Owned by the caller (the run never closes it); its own
   * sink receives the package events (`fetch_start`, `fetch_complete`, …).
   */
  readonly cache: FetchCache;
  /** The run's own events: `provider_selected`, `hashes_obtained`, source warnings. */
  readonly events?: EventSink;
  /** Aborts the run (the cache's own signal aborts its packages). */
  readonly signal?: AbortSignal;
  /**
   * `-all-platforms`: also lock every platform the source publishes for the
   * selected version (registries list them; a filesystem mirror holds them):
   * from the registry's `packages`
   * h1: where that is trusted (OpenTofu's default registry), otherwise each
   * fetched and hashed.
   */
  readonly allPlatforms?: boolean;
  /** `OPENTOFU_ENFORCE_GPG_VALIDATION` in effect (read once, by the caller, from its environment). */
  readonly enforceSignatures?: boolean;
}

/** A provider (or one of its packages) that could not be locked, and why. */
export interface ProviderFailure {
  /** The provider that failed, as its requirement named it (normalised); its lock is left as it was. */
  readonly provider: ProviderAddress;
  /**
   * The platform, when the failure is about one package; absent when it is about the provider as a whole (no
   * version meets the constraints, the source does not know it).
   */
  readonly platform?: Platform;
  /**
   * Why: a {@link ProvkitError} with its code and context (for the one {@link Diagnostic} of it: {@link
   * diagnosticFromError}).
   */
  readonly error: ProvkitError;
}

/** What {@link runLock} produced: the merged locks, or the failures. */
export interface LockOutcome {
  /** The merged locks; only meaningful when `failures` is empty. */
  readonly locks: Locks;
  /** Providers or packages that could not be locked; empty when the run succeeded. */
  readonly failures: readonly ProviderFailure[];
  /** True when the merged locks hold hashes the old ones did not. */
  readonly changed: boolean;
}

/**
 * The hashes of one fetched package that `providers lock` records beside its
 * `h1:`: the lock file layer's one rule (lockfile/record.ts).
 */
function recordedHashes(
  provider: ProviderAddress,
  hashes: readonly TrustedHash[],
  flavor: Flavor,
  enforceSignatures: boolean,
): Hash[] {
  return hashesToRecord({
    flavor,
    operation: 'providers-lock',
    reportedTrusted: reportedHashesTrusted(provider, enforceSignatures),
    hashes,
  });
}

/**
 * Locks `requirements` for `platforms` (see the module comment): the merged
 * locks, and a failure per provider (and platform) that could not be locked.
 *
 * @throws {ProvkitError} `ABORTED` when `signal` aborts (installer/abort.ts:
 *   no source call and no fetch after it, whatever the source rejected with).
 */
export async function runLock(options: LockOptions): Promise<LockOutcome> {
  return abortable('locking', options.signal, (signal) => lockWith(withSignal(options, signal)));
}

async function lockWith(options: LockOptions): Promise<LockOutcome> {
  const events = options.events ?? ignoreEvents;
  const { cache } = options;
  // Versions and metadata asked by the run itself: nothing after the abort (installer/abort.ts).
  const source = abortableSource(cache.source, options.signal, 'locking');
  const failures: ProviderFailure[] = [];
  const results: PlatformLockResult[] = [];
  const changes: Array<{ provider: ProviderAddress; platform: Platform; change: LockChange }> = [];

  const lockOne = async (req: Requirement): Promise<void> => {
    const { provider } = req;
    const prior = options.oldLocks.provider(provider);
    let version: Version;
    try {
      version = await querySelectVersion(source, req, prior?.version, {
        flavor: options.flavor,
        events,
        signal: options.signal,
        onWarnings: (warnings) => {
          for (const w of warnings)
            events({ type: 'warning', code: WarningCode.SOURCE_WARNING, summary: w, detail: '', provider });
        },
      });
    } catch (err) {
      failures.push({ provider, error: asProvkitError(err) });
      return;
    }
    let platforms = options.platforms;
    if (options.allPlatforms) {
      // A registry's (or OCI mirror's) published list; a filesystem mirror's
      // packages, packed `*_OS_ARCH.zip` and unpacked `OS_ARCH/` alike.
      const published =
        (await source.publishedPlatforms?.(provider, version, options.signal).catch(() => undefined)) ??
        (await source.localPlatforms?.(provider, version).catch(() => undefined)) ??
        [];
      platforms = [...platforms, ...published.filter((p) => !platforms.some((q) => q.equals(p)))];
    }
    const record = (platform: Platform, hashes: Hash[]): void => {
      results.push({ provider, version, constraints: req.constraints, hashes });
      // "No change" is judged per platform against the old entry (docs/reference.md §6.1 item 90, `ContainsAll`).
      const change: LockChange = !prior
        ? 'new-provider'
        : prior.containsAll(newProviderLock(provider, version, req.constraints, hashes))
          ? 'unchanged'
          : 'added';
      changes.push({ provider, platform, change });
    };
    await Promise.all(
      platforms.map(async (platform) => {
        try {
          // -all-platforms beyond the requested ones: a platform whose h1: the
          // registry's `packages` extension reports, where that is recorded
          // as trusted (OpenTofu's default registry, see recordedHashes), is
          // locked from it without a download (docs/hash-store.md).
          if (!options.platforms.some((q) => q.equals(platform))) {
            const meta = await source.packageMeta(provider, version, platform, options.signal);
            const trusted = meta.reportedHashes.filter(
              (h) =>
                h.hash.scheme === 'h1:' &&
                h.platform?.equals(platform) === true &&
                recordedHashes(provider, [h], options.flavor, options.enforceSignatures ?? false).length > 0,
            );
            if (trusted.length > 0) {
              record(
                platform,
                recordedHashes(provider, meta.reportedHashes, options.flavor, options.enforceSignatures ?? false),
              );
              return;
            }
          }
          // Fetched and hashed once per cache (fetch-cache.ts).
          const pkg = await cache.lock(provider, version, platform);
          record(platform, [
            pkg.h1,
            ...recordedHashes(provider, pkg.hashes, options.flavor, options.enforceSignatures ?? false),
          ]);
        } catch (err) {
          failures.push({ provider, platform, error: asProvkitError(err) });
        }
      }),
    );
  };

  await Promise.all(options.requirements.map(lockOne));
  // Report in a stable order: providers as the lock sorts them, then platforms as given.
  const order = (p: ProviderAddress): number => options.requirements.findIndex((r) => r.provider.equals(p));
  // Platforms as requested, then any others (-all-platforms) in platform order.
  const rank = (p: Platform): number => {
    const i = options.platforms.findIndex((q) => q.equals(p));
    return i >= 0 ? i : options.platforms.length;
  };
  changes.sort(
    (a, b) =>
      order(a.provider) - order(b.provider) ||
      rank(a.platform) - rank(b.platform) ||
      Platform.compare(a.platform, b.platform),
  );
  // "Now tracked in the lock file" is only true when the lock will be written:
  // after a failure or an interrupt it is not, and the reference prints none
  // of these lines.
  if (failures.length === 0 && options.signal?.aborted !== true)
    for (const c of changes) events({ type: 'hashes_obtained', ...c });
  // Results in a fixed order, so the merge's "last platform wins" is deterministic.
  results.sort((a, b) => order(a.provider) - order(b.provider));
  const locks = mergeProvidersLock(options.oldLocks, results);
  return { locks, failures, changed: changes.some((c) => c.change !== 'unchanged') };
}

/**
 * The reference's "Could not retrieve providers for locking" diagnostics for
 * a failed `providers lock`, one per platform (a failure of no platform, the
 * version query, counts for all of `platforms`), as
 * internal/command/providers_lock.go in hashicorp/terraform v1.11.4 and
 * opentofu/opentofu words them; the code and hint are the first failure's
 * for the platform (in provider order). `location` names the root module
 * (`lock -recursive`).
 */
export function lockFailureDiagnostics(
  failures: readonly ProviderFailure[],
  platforms: readonly Platform[],
  flavor: Flavor,
  location?: string,
): Diagnostic[] {
  const product = flavor === 'terraform' ? 'Terraform' : 'OpenTofu';
  // A cause shared by providers (a server, a registry) is said once, with the providers and platforms it stopped.
  const { causes, rest } = groupByCause(failures);
  const causeDiags = causes.map((g) => {
    const platformsOf = (p: ProviderAddress): string =>
      [
        ...new Set(
          g.failures
            .filter((f) => f.provider.equals(p))
            .flatMap((f) => (f.platform ? [f.platform.toString()] : platforms.map(String))),
        ),
      ].join(', ');
    const items = g.failures.map((f) => `${f.provider.toString()} (${platformsOf(f.provider)})`);
    return causeDiagnostic(g.error, 'Providers not locked', items);
  });
  const byPlatform = new Map<string, string[]>();
  const codes = new Map<string, ErrorCode>();
  const hints = new Map<string, string>();
  for (const f of rest) {
    const key = f.platform?.toString() ?? platforms.map(String).join(', ');
    byPlatform.set(key, [...(byPlatform.get(key) ?? []), `- ${f.provider.toString()}: ${f.error.message}`]);
    if (!codes.has(key)) codes.set(key, f.error.code);
    if (!hints.has(key) && f.error.hint !== undefined) hints.set(key, f.error.hint);
  }
  return [
    ...causeDiags,
    ...[...byPlatform.entries()].sort().map(([plat, lines]) => ({
      severity: 'error' as const,
      code: codes.get(plat) ?? ErrorCode.INTERNAL,
      ...(hints.has(plat) ? { hint: hints.get(plat)! } : {}),
      summary: 'Could not retrieve providers for locking',
      // InstallerError.Error() (internal/providercache/installer.go) ends with
      // strings.TrimSpace: the last line loses its trailing space ("…the given
      // constraints " for a provider with none), the others keep theirs.
      detail: `${product} failed to fetch the requested providers for ${plat} in order to calculate their checksums: some providers could not be installed:\n${goTrimSpace([...new Set(lines)].sort().join('\n'))}.`,
      ...(location === undefined ? {} : { range: { filename: location } }),
    })),
  ];
}
