/**
 * Version selection, shared by `lock`, `mirror`, `install` and `bundle
 * create`: the rule of the reference's installer
 * (opentofu/opentofu internal/providercache/installer.go,
 * `EnsureProviderVersions`).
 *
 * {@link selectVersion} is pure (no I/O); {@link querySelectVersion} asks
 * the source for the versions first and reports the choice. `mirror` keeps
 * a rule of its own around {@link selectVersion} (mirror-plan.ts
 * `chooseMirrorVersion`, mirror.ts `selectMirrorVersion`, which say why) and
 * reports its choice with the same event builder, `providerSelectedEvent`.
 */
import {
  type Flavor,
  flavorInfo,
  type ProviderAddress,
  type Requirement,
  type Version,
  type VersionConstraints,
} from '../addresses/index.js';
import { ErrorCode, ProvkitError } from '../errors.js';
import type { Source } from '../sources/index.js';
import { type EventSink, providerSelectedEvent } from './events.js';

/**
 * The version `providers lock` and `init` use (docs/reference.md §3.4 item 46): the locked one when
 * it still meets the constraints (and is still available), else the newest
 * acceptable one.
 */
export function selectVersion(
  provider: ProviderAddress,
  available: readonly Version[],
  constraints: VersionConstraints,
  locked: Version | undefined,
  flavor: Flavor,
): { version: Version; reason: 'lock' | 'constraints' | 'unconstrained' } {
  if (locked) {
    if (!constraints.matches(locked)) {
      throw new ProvkitError(
        ErrorCode.USAGE,
        `locked provider ${provider.toString()} ${locked.toString()} does not match configured version constraint ${constraints.toString()}; must use ${flavorInfo(flavor).command} init -upgrade to allow selection of new versions`,
        { provider: provider.toString(), version: locked.toString() },
      );
    }
    if (!available.some((v) => v.equals(locked))) {
      throw new ProvkitError(
        ErrorCode.NOT_FOUND,
        `the previously-selected version ${locked.toString()} is no longer available`,
        {
          provider: provider.toString(),
          version: locked.toString(),
        },
      );
    }
    return { version: locked, reason: 'lock' };
  }
  let best: Version | undefined;
  for (const v of available) if (constraints.matches(v) && (!best || v.greaterThan(best))) best = v;
  if (!best) {
    throw new ProvkitError(
      ErrorCode.NOT_FOUND,
      `no available releases match the given constraints ${constraints.toString()}`,
      {
        provider: provider.toString(),
      },
    );
  }
  return { version: best, reason: constraints.isEmpty ? 'unconstrained' : 'constraints' };
}

/**
 * Query the source for `req.provider`'s versions, hand its warnings to
 * `onWarnings` (each command reports them its own way), select with
 * {@link selectVersion}, and emit `provider_selected`: the one sequence of
 * `lock`, `install` and `bundle create`.
 *
 * @throws what the source rejects with, or {@link selectVersion}'s errors (no event then).
 */
export async function querySelectVersion(
  source: Pick<Source, 'availableVersions'>,
  req: Requirement,
  locked: Version | undefined,
  options: {
    readonly flavor: Flavor;
    readonly events: EventSink;
    readonly signal?: AbortSignal | undefined;
    readonly onWarnings?: (warnings: readonly string[]) => void;
  },
): Promise<Version> {
  const { provider, constraints } = req;
  const available = await source.availableVersions(provider, options.signal);
  options.onWarnings?.(available.warnings);
  const chosen = selectVersion(provider, available.versions, constraints, locked, options.flavor);
  options.events(providerSelectedEvent(req, chosen));
  return chosen.version;
}
