/**
 * The decisions of `providers mirror` (mirror.ts, and the version choice of
 * `mirror oci://`, oci-publish.ts) as pure functions: from the requirements,
 * the lock file, the versions the source reports and the archives the target
 * already holds, to a plan saying which version of each provider is
 * mirrored (and why), or why none is, and for each platform whether its
 * package is fetched or an archive already there is checked and kept.
 * mirror.ts runs the plan (fetches, verifies, writes); this module does no
 * I/O, so the rules are tested as a table (test/installer/mirror-plan.test.ts),
 * as OpenTofu tests its installer (internal/providercache/installer_test.go).
 */
import type { Flavor, Platform, ProviderAddress, Version, Requirement } from '../addresses/index.js';
import { ErrorCode, ProvkitError } from '../errors.js';
import type { Hash } from '../hashing/index.js';
import { packedFileName, providerDirPath } from '../layout/index.js';
import { allowedHashes, archiveMatch, type Locks } from '../lockfile/index.js';
import type { AvailableVersions } from '../sources/index.js';
import { selectVersion } from './select-version.js';

/** A failure of the mirror run (mirror.ts re-exports it). */
export interface MirrorFailure {
  /** Absent for failures that concern the whole mirror (the indexes). */
  readonly provider?: ProviderAddress;
  /** The version, when the failure is about one. */
  readonly version?: Version;
  /** The platform, when the failure is about one package. */
  readonly platform?: Platform;
  /** One line for a list of failures (the cause's summary, said once for the packages it stopped). */
  readonly summary: string;
  /** The error, with its code and context fields. */
  readonly error: ProvkitError;
}

/** The version mirrored for one requirement, or why there is none. */
export type MirrorSelection =
  | { readonly kind: 'selected'; readonly version: Version; readonly reason: 'lock' | 'constraints' | 'unconstrained' }
  | { readonly kind: 'failed'; readonly failure: MirrorFailure };

/**
 * Whether the source is asked for a provider's versions: not when the lock
 * file has entries and none for this provider (the run fails it without a
 * request, as the reference's `providers mirror`).
 */
export function mirrorNeedsVersions(req: Requirement, locks: Locks): boolean {
  return locks.size === 0 || locks.provider(req.provider) !== undefined;
}

/**
 * The version `mirror` takes for a requirement (docs/reference.md §6.2
 * item 93.2): the lock file's when the lock file has entries (a provider
 * missing from it fails), else the newest meeting the constraints.
 * `available` is what the source reported (or the error it gave); undefined
 * when it was not asked ({@link mirrorNeedsVersions}).
 */
export function chooseMirrorVersion(
  req: Requirement,
  locks: Locks,
  available: AvailableVersions | ProvkitError | undefined,
  flavor: Flavor,
): MirrorSelection {
  const { provider } = req;
  const locked = locks.size > 0 ? locks.provider(provider) : undefined;
  if (locks.size > 0 && !locked) {
    return {
      kind: 'failed',
      failure: {
        provider,
        summary: 'Provider not found in lockfile',
        error: new ProvkitError(ErrorCode.NOT_FOUND, `Failed to find ${provider.toString()} in the lock file`, {
          provider: provider.toString(),
        }),
      },
    };
  }
  const notAvailable = (error: ProvkitError): MirrorSelection => ({
    kind: 'failed',
    failure: { provider, summary: 'Provider not available', error },
  });
  if (available === undefined)
    return notAvailable(
      new ProvkitError(ErrorCode.INTERNAL, `internal: the versions of ${provider.toString()} were not asked for`),
    );
  if (available instanceof ProvkitError) return notAvailable(available);
  try {
    const { version, reason } = selectVersion(provider, available.versions, req.constraints, locked?.version, flavor);
    return { kind: 'selected', version, reason };
  } catch (err) {
    if (err instanceof ProvkitError) return notAvailable(err);
    throw err;
  }
}

/** `HOST/NS/TYPE/terraform-provider-TYPE_VERSION_OS_ARCH.zip`: where a package lives in a packed mirror. */
export function mirrorArchivePath(provider: ProviderAddress, version: Version, platform: Platform): string {
  return `${providerDirPath(provider)}/${packedFileName(provider, version, platform)}`;
}

/** What the run does for one package. */
export interface MirrorStep {
  readonly provider: ProviderAddress;
  readonly version: Version;
  readonly platform: Platform;
  /** {@link mirrorArchivePath}. */
  readonly rel: string;
  /**
   * `fetch`: the target has no archive there; `verify-existing`: it has one,
   * kept when it authenticates against the source's metadata, fetched again
   * otherwise (the incremental mirror, mirror.ts).
   */
  readonly action: 'fetch' | 'verify-existing';
}

/** The steps of one selected version: one per platform, in the order given. `present`: the archive paths the target holds. */
export function planMirrorPackages(
  provider: ProviderAddress,
  version: Version,
  platforms: readonly Platform[],
  present: ReadonlySet<string>,
): MirrorStep[] {
  return platforms.map((platform) => {
    const rel = mirrorArchivePath(provider, version, platform);
    return { provider, version, platform, rel, action: present.has(rel) ? 'verify-existing' : 'fetch' };
  });
}

/** Everything the run is given and has learnt before it fetches. */
export interface MirrorPlanInput {
  readonly requirements: readonly Requirement[];
  readonly locks: Locks;
  readonly platforms: readonly Platform[];
  readonly flavor: Flavor;
  /** What the source reported per provider (`toComparisonString()`), for those it was asked about. */
  readonly versions: ReadonlyMap<string, AvailableVersions | ProvkitError>;
  /** Archive paths (relative, {@link mirrorArchivePath}) already in the target. */
  readonly present: ReadonlySet<string>;
}

/** One provider's part of a {@link MirrorPlan}. */
export interface MirrorProviderPlan {
  readonly provider: ProviderAddress;
  readonly selection: MirrorSelection;
  /** Empty when the selection failed. */
  readonly steps: readonly MirrorStep[];
}

/** The whole plan, per requirement in order (the run carries the providers out concurrently). */
export function planMirror(input: MirrorPlanInput): MirrorProviderPlan[] {
  return input.requirements.map((req) => {
    const selection = chooseMirrorVersion(
      req,
      input.locks,
      input.versions.get(req.provider.toComparisonString()),
      input.flavor,
    );
    const steps =
      selection.kind === 'selected'
        ? planMirrorPackages(req.provider, selection.version, input.platforms, input.present)
        : [];
    return { provider: req.provider, selection, steps };
  });
}

/**
 * The hashes the lock file records for a provider at the version mirrored
 * (`mirror` and `mirror oci://` check every package against them,
 * {@link lockHashMismatch}): the lock's `h1:`/`zh:` when it locks that
 * version, else none. The lock's hashes are per version, not per platform:
 * a package of any platform must match one of them, as `install` requires
 * (docs/reference.md §3.4 items 47–48).
 */
export function lockedHashesFor(locks: Locks, provider: ProviderAddress, version: Version): Hash[] {
  return allowedHashes(locks.provider(provider), version);
}

/**
 * Checks an archive `mirror` writes or keeps against the lock file
 * (docs/provenance.md, "mirror checks the lock file"): undefined when the
 * lock records no hashes for the version or the archive matches one of them
 * (its `zh:`, or its zip-form `h1:`, as `install` checks an archive);
 * otherwise the `LOCKFILE_CHECKSUM_MISMATCH` error naming the provider,
 * version and platform, the hashes expected (the lock's) and found (the
 * package's), with a hint. `h1Zip` null: not computed (the lock has no
 * `h1:` to compare it with) or not computable.
 */
export function lockHashMismatch(
  locks: Locks,
  provider: ProviderAddress,
  version: Version,
  platform: Platform,
  pkg: { readonly zh: Hash; readonly h1Zip: Hash | null },
): ProvkitError | undefined {
  const allowed = lockedHashesFor(locks, provider, version);
  if (allowed.length === 0 || archiveMatch(allowed, pkg) !== undefined) return undefined;
  const expected = allowed.map((h) => h.text).join(', ');
  const found = [pkg.zh.text, ...(pkg.h1Zip ? [pkg.h1Zip.text] : [])].join(', ');
  return new ProvkitError(
    ErrorCode.LOCKFILE_CHECKSUM_MISMATCH,
    [
      `the package matches none of the hashes the lock file records for ${version.toString()}`,
      `  expected one of: ${expected}`,
      `  found: ${found}`,
    ],
    {
      provider: provider.toString(),
      version: version.toString(),
      platform: platform.toString(),
      expected,
      found,
      hint: `If the lock file is right, the source serves another package than the one locked: find out why before mirroring it. If the package is right (the lock file has no hashes for ${platform.toString()} yet), add them with "provkit lock -platform=${platform.toString()}" first, or mirror it anyway with -ignore-lock-hashes.`,
    },
  );
}
