/**
 * Several sources as one, selected per provider by include/exclude patterns,
 * as `provider_installation { … }` configures them (docs/reference.md §4.4 items 71–72,
 * §7 item 99; OpenTofu `multi_source.go`).
 *
 * - Patterns: `NS/TYPE` (on the flavor's default registry host) or
 *   `HOST/NS/TYPE`; a segment may be the wildcard `*`; a wildcard host needs
 *   wildcard namespace and type, a wildcard namespace a wildcard type.
 * - A selector handles a provider when no exclude pattern matches and either
 *   there are no include patterns or one matches.
 * - {@link MultiSource.availableVersions}: the union over every selector that
 *   handles the provider, asked in order; "not found" and "unknown to the
 *   registry" are skipped, any other error aborts. An empty union is
 *   `REGISTRY_PROVIDER_UNKNOWN` if a registry said so, else
 *   `PROVIDER_NOT_FOUND` listing the sources.
 * - {@link MultiSource.packageMeta}: the first selector, in order, that has
 *   the package; not-found, unknown and platform-unsupported are skipped, any
 *   other error aborts; nothing found is `PLATFORM_NOT_SUPPORTED`.
 */
import { compareVersions, type Flavor, type Platform, type ProviderAddress, type Version } from '../addresses/index.js';
import {
  anyPatternMatches,
  type PatternSegments,
  parseProviderPatterns as parseCliPatterns,
  patternMatches,
} from '../cliconfig/index.js';
import { isProvkitError, ErrorCode } from '../errors.js';
import {
  platformNotSupported,
  sourceError,
  type AvailableVersions,
  type PackageMeta,
  type PackageMetaHints,
  type Source,
} from './source.js';

/** A parsed include/exclude pattern; `*` matches anything in its position. */
export type ProviderPattern = PatternSegments;

/**
 * Parses patterns (Go `ParseMultiSourceMatchingPatterns`) with the CLI
 * configuration's parser, the reference's error texts included.
 *
 * @throws {ProvkitError} `INVALID_PROVIDER_PATTERN`.
 */
export function parseProviderPatterns(patterns: readonly string[], flavor: Flavor): ProviderPattern[] {
  return parseCliPatterns(patterns, flavor).map(({ hostname, namespace, type }) => ({ hostname, namespace, type }));
}

export { patternMatches };

/** One installation method of a multi-source. */
export interface MultiSourceSelector {
  /** The source this method asks. */
  readonly source: Source;
  /** Undefined or empty: every provider not excluded. */
  readonly include?: readonly ProviderPattern[];
  /** Providers this method never handles, even when `include` matches them (exclusion wins). */
  readonly exclude?: readonly ProviderPattern[];
}

/** Whether `selector` handles `provider` (exclusion first). */
export function canHandleProvider(selector: MultiSourceSelector, provider: ProviderAddress): boolean {
  if (anyPatternMatches(selector.exclude ?? [], provider)) return false;
  if (selector.include === undefined || selector.include.length === 0) return true;
  return anyPatternMatches(selector.include, provider);
}

function isSkippable(err: unknown, ...codes: readonly string[]): boolean {
  return codes.some((c) => isProvkitError(err) && err.code === c);
}

/** See the module comment. */
export class MultiSource implements Source {
  /**
   * Asks each of `selectors`, in order, that handles a provider (the `provider_installation` block's methods, as
   * the reference's `MultiSource`).
   */
  constructor(private readonly selectors: readonly MultiSourceSelector[]) {}

  /** The sources that handle `provider` (all of them without one), one per line. */
  forDisplay(provider?: ProviderAddress): string {
    return this.selectors
      .filter((s) => provider === undefined || canHandleProvider(s, provider))
      .map((s) => s.source.forDisplay(provider))
      .join('\n');
  }

  /**
   * The versions every selector that handles `provider` has, merged and sorted; a selector that does not know the
   * provider is skipped. Throws when none knows it.
   */
  async availableVersions(provider: ProviderAddress, signal?: AbortSignal): Promise<AvailableVersions> {
    const versions = new Map<string, Version>();
    const warnings: string[] = [];
    let registryUnknown: Error | undefined;
    for (const selector of this.selectors) {
      if (!canHandleProvider(selector, provider)) continue;
      let r: AvailableVersions;
      try {
        // eslint-disable-next-line no-await-in-loop -- sources are asked in configuration order, as the reference
        r = await selector.source.availableVersions(provider, signal);
      } catch (err) {
        if (isSkippable(err, ErrorCode.REGISTRY_PROVIDER_UNKNOWN)) {
          registryUnknown ??= err as Error;
          continue;
        }
        if (isSkippable(err, ErrorCode.PROVIDER_NOT_FOUND)) continue;
        throw err;
      }
      for (const v of r.versions) versions.set(v.toString(), v);
      warnings.push(...r.warnings);
    }
    if (versions.size === 0) {
      if (registryUnknown !== undefined) throw registryUnknown;
      const sources = this.selectors
        .filter((s) => canHandleProvider(s, provider))
        .map((s) => s.source.forDisplay(provider));
      throw sourceError(
        ErrorCode.PROVIDER_NOT_FOUND,
        `provider ${provider.toString()} was not found in any of the search locations`,
        {
          provider,
          ...(sources.length > 0 ? { hint: `searched:\n${sources.map((s) => `- ${s}`).join('\n')}` } : {}),
        },
      );
    }
    return { versions: [...versions.values()].sort(compareVersions), warnings };
  }

  /** The package of the first selector, in order, that handles `provider` and has this version for `platform`. */
  async packageMeta(
    provider: ProviderAddress,
    version: Version,
    platform: Platform,
    signal?: AbortSignal,
    hints?: PackageMetaHints,
  ): Promise<PackageMeta> {
    // The platforms the skipped sources said they have (platformNotSupported), for the final error.
    const available = new Set<string>();
    for (const selector of this.selectors) {
      if (!canHandleProvider(selector, provider)) continue;
      try {
        // eslint-disable-next-line no-await-in-loop -- the first source in configuration order wins
        return await selector.source.packageMeta(provider, version, platform, signal, hints);
      } catch (err) {
        if (
          isSkippable(
            err,
            ErrorCode.PROVIDER_NOT_FOUND,
            ErrorCode.REGISTRY_PROVIDER_UNKNOWN,
            ErrorCode.PLATFORM_NOT_SUPPORTED,
          )
        ) {
          if (isProvkitError(err)) for (const p of err.availablePlatforms ?? []) available.add(p);
          continue;
        }
        throw err;
      }
    }
    throw platformNotSupported(
      `provider ${provider.toString()} ${version.toString()} is not available for ${platform.toString()}`,
      { provider, version, platform },
      [...available],
    );
  }
}
