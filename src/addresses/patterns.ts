/**
 * Provider matching patterns, of `include` / `exclude` in a
 * `provider_installation` method and of the `audit` policy's `provider`
 * blocks (config/audit-policy.ts) (`getproviders.ParseMultiSourceMatchingPatterns`,
 * `MultiSourceSelector.CanHandleProvider`; docs/reference.md §4.4 item 71):
 *
 * - `namespace/type` (on the flavor's default registry host) or
 *   `hostname/namespace/type`, each part possibly the wildcard (an asterisk);
 * - a wildcard hostname requires a wildcard namespace and type, and a
 *   wildcard namespace requires a wildcard type;
 * - parts are normalised as in provider addresses (case, Unicode, punycode
 *   hostnames), so `registry.OpenTofu.org/HashiCorp/*` matches
 *   `registry.opentofu.org/hashicorp/aws`;
 * - a method handles a provider when no exclude pattern matches and either
 *   there are no include patterns or one of them matches.
 *
 * Error texts are the reference's, including its quirk: the bad-namespace
 * error prints the *type* segment.
 *
 * Pure: no I/O.
 */
import { goQuote } from '../go/index.js';
import { defaultRegistryHost, type Flavor } from './flavor.js';
import { tryHostnameForComparison } from './hostname.js';
import { type ProviderAddress, tryParseProviderPart } from './provider.js';
import { ErrorCode, ProvkitError } from '../errors.js';

/** The wildcard of a pattern segment. */
export const WILDCARD = '*';

/** The segments a pattern matches with (a {@link ProviderPattern} without its text): each normalised, or {@link WILDCARD}. */
export interface PatternSegments {
  /** The registry host in the comparison form provider addresses use (`hostnameForComparison`), or `*`. */
  readonly hostname: string;
  /** The namespace, normalised as a provider address's (Go `ParseProviderPart`: IDNA-mapped, so lower case), or `*`. */
  readonly namespace: string;
  /** The provider type, normalised as the namespace is, or `*`. */
  readonly type: string;
}

/** One parsed pattern. Segments are normalised (hostname in comparison form) or {@link WILDCARD}. */
export interface ProviderPattern extends PatternSegments {
  /** The pattern as written. */
  readonly text: string;
}

/** Include and exclude patterns of an installation method. */
export interface ProviderSelector {
  readonly include: readonly ProviderPattern[];
  readonly exclude: readonly ProviderPattern[];
}

function normalizePart(s: string): { ok: true; value: string } | { ok: false } {
  if (s === WILDCARD) return { ok: true, value: s };
  const r = tryParseProviderPart(s);
  return r.ok ? { ok: true, value: r.value } : { ok: false };
}

/**
 * Parses one pattern.
 *
 * @throws {ProvkitError} `INVALID_PROVIDER_PATTERN` with the reference's text,
 *   e.g. `invalid provider matching pattern "*\/foo": namespace can be a wildcard only if the provider type is also a wildcard`.
 */
export function parseProviderPattern(text: string, flavor: Flavor): ProviderPattern {
  const fail = (message: string): never => {
    throw new ProvkitError(ErrorCode.INVALID_PROVIDER_PATTERN, message, { found: text });
  };
  let parts = text.split('/');
  if (parts.length < 2 || parts.length > 3) {
    fail(`invalid provider matching pattern ${goQuote(text)}: must have either two or three slash-separated segments`);
  }
  let hostname: string = defaultRegistryHost(flavor);
  if (parts.length === 3) {
    const given = parts[0] ?? '';
    if (given === WILDCARD) {
      hostname = WILDCARD;
    } else {
      const hn = tryHostnameForComparison(given);
      if (!hn.ok) fail(`invalid hostname in provider matching pattern ${goQuote(text)}: ${hn.ok ? '' : hn.error}`);
      else hostname = hn.hostname;
    }
    parts = parts.slice(1);
  }
  const type = normalizePart(parts[1] ?? '');
  if (!type.ok) {
    return fail(
      `invalid provider type ${goQuote(parts[1] ?? '')} in provider matching pattern ${goQuote(text)}: must either be the wildcard * or a provider type name`,
    );
  }
  const namespace = normalizePart(parts[0] ?? '');
  if (!namespace.ok) {
    // Sic: the reference names the type segment here.
    return fail(
      `invalid registry namespace ${goQuote(parts[1] ?? '')} in provider matching pattern ${goQuote(text)}: must either be the wildcard * or a literal namespace`,
    );
  }
  if (hostname === WILDCARD && !(namespace.value === WILDCARD && type.value === WILDCARD)) {
    fail(
      `invalid provider matching pattern ${goQuote(text)}: hostname can be a wildcard only if both namespace and provider type are also wildcards`,
    );
  }
  if (namespace.value === WILDCARD && type.value !== WILDCARD) {
    fail(
      `invalid provider matching pattern ${goQuote(text)}: namespace can be a wildcard only if the provider type is also a wildcard`,
    );
  }
  return { hostname, namespace: namespace.value, type: type.value, text };
}

/**
 * Parses a list of patterns; the first bad one is the error.
 *
 * @throws {ProvkitError} `INVALID_PROVIDER_PATTERN`, see {@link parseProviderPattern}.
 */
export function parseProviderPatterns(texts: readonly string[], flavor: Flavor): ProviderPattern[] {
  return texts.map((t) => parseProviderPattern(t, flavor));
}

/** Whether one pattern matches `provider` (`MultiSourceMatchingPatterns.MatchesProvider`). */
export function patternMatches(pattern: PatternSegments, provider: ProviderAddress): boolean {
  return (
    (pattern.hostname === WILDCARD || pattern.hostname === provider.hostname) &&
    (pattern.namespace === WILDCARD || pattern.namespace === provider.namespace) &&
    (pattern.type === WILDCARD || pattern.type === provider.type)
  );
}

/** Whether any of `patterns` matches `provider`. */
export function anyPatternMatches(patterns: readonly PatternSegments[], provider: ProviderAddress): boolean {
  return patterns.some((p) => patternMatches(p, provider));
}

/**
 * `CanHandleProvider`: not excluded, and included (no include patterns
 * include everything). Exclusions win.
 */
export function selectorMatches(selector: ProviderSelector, provider: ProviderAddress): boolean {
  if (anyPatternMatches(selector.exclude, provider)) return false;
  if (selector.include.length > 0) return anyPatternMatches(selector.include, provider);
  return true;
}
