/**
 * Several sources as one, selected per provider by include/exclude patterns,
 * as `provider_installation { … }` configures them (spec §4.4 items 71–72,
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
import {
  compareVersions,
  defaultRegistryHost,
  tryHostnameForComparison,
  tryParseProviderPart,
  type Flavor,
  type Platform,
  type ProviderAddress,
  type Version,
} from '../addresses/index.js';
import { isProvkitError } from '../errors.js';
import { SourceErrorCode } from './codes.js';
import { sourceError, type AvailableVersions, type PackageMeta, type Source } from './source.js';

const WILDCARD = '*';

/** A parsed include/exclude pattern; `*` matches anything in its position. */
export interface ProviderPattern {
  readonly hostname: string;
  readonly namespace: string;
  readonly type: string;
}

/**
 * Parses patterns (Go `ParseMultiSourceMatchingPatterns`), with the
 * reference's error texts, including its quirk of printing the *type*
 * segment in the bad-namespace error.
 *
 * @throws {ProvkitError} `INVALID_SOURCE_CONFIG`.
 */
export function parseProviderPatterns(patterns: readonly string[], flavor: Flavor): ProviderPattern[] {
  return patterns.map((str) => {
    const fail = (message: string) => sourceError(SourceErrorCode.INVALID_SOURCE_CONFIG, message, { found: str });
    let parts = str.split('/');
    if (parts.length < 2 || parts.length > 3) {
      throw fail(`invalid provider matching pattern ${JSON.stringify(str)}: must have either two or three slash-separated segments`);
    }
    let hostname = defaultRegistryHost(flavor);
    if (parts.length === 3) {
      const given = parts[0] ?? '';
      if (given === WILDCARD) {
        hostname = WILDCARD;
      } else {
        const h = tryHostnameForComparison(given);
        if (!h.ok) throw fail(`invalid hostname in provider matching pattern ${JSON.stringify(str)}: ${h.error}`);
        hostname = h.hostname;
      }
      parts = parts.slice(1);
    }
    const [nsGiven = '', typeGiven = ''] = parts;
    const norm = (s: string): string | undefined => {
      if (s === WILDCARD) return s;
      const r = tryParseProviderPart(s);
      return r.ok ? r.value : undefined;
    };
    const type = norm(typeGiven);
    if (type === undefined) {
      throw fail(`invalid provider type ${JSON.stringify(typeGiven)} in provider matching pattern ${JSON.stringify(str)}: must either be the wildcard * or a provider type name`);
    }
    const namespace = norm(nsGiven);
    if (namespace === undefined) {
      throw fail(`invalid registry namespace ${JSON.stringify(typeGiven)} in provider matching pattern ${JSON.stringify(str)}: must either be the wildcard * or a literal namespace`);
    }
    if (hostname === WILDCARD && !(namespace === WILDCARD && type === WILDCARD)) {
      throw fail(`invalid provider matching pattern ${JSON.stringify(str)}: hostname can be a wildcard only if both namespace and provider type are also wildcards`);
    }
    if (namespace === WILDCARD && type !== WILDCARD) {
      throw fail(`invalid provider matching pattern ${JSON.stringify(str)}: namespace can be a wildcard only if the provider type is also a wildcard`);
    }
    return { hostname, namespace, type };
  });
}

/** Whether `pattern` matches `provider`. */
export function patternMatches(pattern: ProviderPattern, provider: ProviderAddress): boolean {
  return (
    (pattern.hostname === WILDCARD || pattern.hostname === provider.hostname) &&
    (pattern.namespace === WILDCARD || pattern.namespace === provider.namespace) &&
    (pattern.type === WILDCARD || pattern.type === provider.type)
  );
}

/** One installation method of a multi-source. */
export interface MultiSourceSelector {
  readonly source: Source;
  /** Undefined or empty: every provider not excluded. */
  readonly include?: readonly ProviderPattern[];
  readonly exclude?: readonly ProviderPattern[];
}

/** Whether `selector` handles `provider` (exclusion first). */
export function canHandleProvider(selector: MultiSourceSelector, provider: ProviderAddress): boolean {
  if (selector.exclude?.some((p) => patternMatches(p, provider))) return false;
  if (selector.include === undefined || selector.include.length === 0) return true;
  return selector.include.some((p) => patternMatches(p, provider));
}

function isSkippable(err: unknown, ...codes: readonly string[]): boolean {
  return codes.some((c) => isProvkitError(err) && err.code === c);
}

/** See the module comment. */
export class MultiSource implements Source {
  constructor(private readonly selectors: readonly MultiSourceSelector[]) {}

  /** The sources that handle `provider` (all of them without one), one per line. */
  forDisplay(provider?: ProviderAddress): string {
    return this.selectors
      .filter((s) => provider === undefined || canHandleProvider(s, provider))
      .map((s) => s.source.forDisplay(provider))
      .join('\n');
  }

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
        if (isSkippable(err, SourceErrorCode.REGISTRY_PROVIDER_UNKNOWN)) {
          registryUnknown ??= err as Error;
          continue;
        }
        if (isSkippable(err, SourceErrorCode.PROVIDER_NOT_FOUND)) continue;
        throw err;
      }
      for (const v of r.versions) versions.set(v.toString(), v);
      warnings.push(...r.warnings);
    }
    if (versions.size === 0) {
      if (registryUnknown !== undefined) throw registryUnknown;
      const sources = this.selectors.filter((s) => canHandleProvider(s, provider)).map((s) => s.source.forDisplay(provider));
      throw sourceError(SourceErrorCode.PROVIDER_NOT_FOUND, `provider ${provider.toString()} was not found in any of the search locations`, {
        provider,
        ...(sources.length > 0 ? { hint: `searched:\n${sources.map((s) => `- ${s}`).join('\n')}` } : {}),
      });
    }
    return { versions: [...versions.values()].sort(compareVersions), warnings };
  }

  async packageMeta(provider: ProviderAddress, version: Version, platform: Platform, signal?: AbortSignal): Promise<PackageMeta> {
    for (const selector of this.selectors) {
      if (!canHandleProvider(selector, provider)) continue;
      try {
        // eslint-disable-next-line no-await-in-loop -- the first source in configuration order wins
        return await selector.source.packageMeta(provider, version, platform, signal);
      } catch (err) {
        if (isSkippable(err, SourceErrorCode.PROVIDER_NOT_FOUND, SourceErrorCode.REGISTRY_PROVIDER_UNKNOWN, SourceErrorCode.PLATFORM_NOT_SUPPORTED)) continue;
        throw err;
      }
    }
    throw sourceError(SourceErrorCode.PLATFORM_NOT_SUPPORTED, `provider ${provider.toString()} ${version.toString()} is not available for ${platform.toString()}`, {
      provider,
      version,
      platform,
    });
  }
}
