/**
 * The decisions of `provkit install` (install.ts, init's provider step) as
 * pure functions: from a requirement, its lock entry, `-upgrade`, the
 * versions the source reports and the `h1:` of what the target and the
 * plugin cache already hold, to the version installed (and why), where the
 * package comes from (kept in place, linked from the cache, fetched) and
 * whether the source is asked at all. install.ts runs them step by step
 * (hashing a directory only when the step before did not decide); this
 * module does no I/O, so the rules are tested as a table
 * (test/installer/install-plan.test.ts), as OpenTofu tests its installer
 * (internal/providercache/installer_test.go).
 */
import type { Flavor, Version, Requirement } from '../addresses/index.js';
import { ProvkitError, ErrorCode } from '../errors.js';
import type { Hash } from '../hashing/index.js';
import { allowedHashes, type ProviderLock } from '../lockfile/index.js';
import { selectVersion } from './select-version.js';

/**
 * Step 1 (docs/reference.md §3.4 item 46, §5.6 item 87): the locked version unless
 * `upgrade`, when it still meets the constraints; the source's versions are
 * then asked only before a fetch (`locked`). Otherwise the newest acceptable
 * version, which needs them now (`query`).
 *
 * @throws ProvkitError VERSION_SELECTION (OpenTofu: 0.0.0 locked or the only
 *   version allowed), USAGE (the locked version no longer meets the constraints)
 */
export function installSelection(
  req: Requirement,
  lock: ProviderLock | undefined,
  options: { readonly upgrade: boolean; readonly flavor: Flavor },
): { readonly kind: 'locked'; readonly version: Version } | { readonly kind: 'query' } {
  const { provider, constraints } = req;
  const locked = options.upgrade ? undefined : lock?.version;
  const zeroOnly =
    constraints.terms.length === 1 &&
    constraints.terms[0]?.operator === '=' &&
    constraints.terms[0].boundary.toString() === '0.0.0';
  if (options.flavor === 'tofu' && (locked?.toString() === '0.0.0' || (!locked && zeroOnly))) {
    throw new ProvkitError(
      ErrorCode.VERSION_SELECTION,
      [
        '0.0.0 is not a valid provider version. ',
        'If the version 0.0.0 is intended to represent a non-published provider, consider using dev_overrides - https://opentofu.org/docs/cli/config/config-file/#development-overrides-for-provider-developers',
      ],
      { provider: provider.toString(), version: '0.0.0' },
    );
  }
  // Checks the constraints only; availability is checked when the source is asked.
  if (locked)
    return { kind: 'locked', version: selectVersion(provider, [locked], constraints, locked, options.flavor).version };
  return { kind: 'query' };
}

const matches = (allowed: readonly Hash[], h1: Hash): boolean => allowed.some((h) => h.text === h1.text);

/**
 * Step 2a (docs/reference.md §5.2 item 78.1): the package directory in the
 * target is kept ("Using previously-installed") when the lock records hashes
 * for the version and one is its `h1:`.
 */
export function reuseInstalled(allowed: readonly Hash[], installed: Hash | undefined): boolean {
  return installed !== undefined && allowed.length > 0 && matches(allowed, installed);
}

/**
 * Step 2b (docs/reference.md §5.2 items 78.3, 78.4): the plugin cache's
 * package is linked when its `h1:` is one the lock records, or, when the lock
 * records none for the version, with `plugin_cache_may_break_dependency_lock_file`.
 */
export function reuseCached(
  allowed: readonly Hash[],
  cached: Hash | undefined,
  cacheMayBreakLockFile: boolean,
): boolean {
  if (cached === undefined) return false;
  return allowed.length > 0 ? matches(allowed, cached) : cacheMayBreakLockFile;
}

/** What is known of one provider before anything is fetched. */
export interface InstallPlanInput {
  readonly requirement: Requirement;
  /** The old lock file's entry for the provider. */
  readonly lock: ProviderLock | undefined;
  readonly upgrade: boolean;
  readonly flavor: Flavor;
  /** The versions the source reports (used only where the plan asks for them). */
  readonly available: readonly Version[];
  /** `h1:` of the package directory the target holds for the chosen version (undefined: none, or not hashable). */
  readonly installed?: Hash;
  /** `h1:` of the plugin cache's package directory (undefined: no cache, none there, or not hashable). */
  readonly cached?: Hash;
  readonly cacheMayBreakLockFile?: boolean;
}

/** One provider's plan. */
export interface InstallPlan {
  readonly version: Version;
  readonly reason: 'lock' | 'constraints' | 'unconstrained';
  /** `previously-installed`: kept in the target; `cache`: linked from the plugin cache; `fetch`: fetched, checked against the lock, installed. */
  readonly action: 'previously-installed' | 'cache' | 'fetch';
  /**
   * When the source's versions are asked: `to-select` (no usable lock),
   * `before-fetch` (a locked version about to be fetched: still there?),
   * `never` (a locked version installed from the target or the cache: offline).
   */
  readonly asks: 'to-select' | 'before-fetch' | 'never';
}

/**
 * The steps of install.ts composed for one provider (see the module comment).
 *
 * @throws ProvkitError as {@link installSelection} and `selectVersion`
 *   (no acceptable version; a locked version no longer available, when fetched)
 */
export function planInstall(input: InstallPlanInput): InstallPlan {
  const { requirement: req, flavor } = input;
  const selection = installSelection(req, input.lock, input);
  let version: Version;
  let reason: InstallPlan['reason'];
  if (selection.kind === 'locked') {
    version = selection.version;
    reason = 'lock';
  } else {
    ({ version, reason } = selectVersion(req.provider, input.available, req.constraints, undefined, flavor));
  }
  const allowed = allowedHashes(input.lock, version);
  const asks = selection.kind === 'locked' ? 'before-fetch' : 'to-select';
  if (reuseInstalled(allowed, input.installed))
    return { version, reason, action: 'previously-installed', asks: asks === 'before-fetch' ? 'never' : asks };
  if (reuseCached(allowed, input.cached, input.cacheMayBreakLockFile === true))
    return { version, reason, action: 'cache', asks: asks === 'before-fetch' ? 'never' : asks };
  // A locked version about to be fetched must still be available.
  if (selection.kind === 'locked') selectVersion(req.provider, input.available, req.constraints, version, flavor);
  return { version, reason, action: 'fetch', asks };
}
