/**
 * `src/addresses`: provider source addresses, hostnames, versions, version
 * constraints, platforms and the OpenTofu/Terraform flavor, parsed, printed
 * and ordered exactly as the reference tools do (docs/reference.md §1, items 1–19).
 *
 * What it does not do: no I/O, no network, no registry lookups, no lock-file
 * syntax (see `src/lockfile`), no printing. Every failure is a
 * `ProvkitError` with one of the codes `INVALID_PROVIDER_SOURCE`,
 * `INVALID_VERSION`, `INVALID_CONSTRAINT`, `INVALID_PLATFORM`,
 * `INVALID_FLAVOR`, whose message is the reference's own error text.
 */
export {
  DEFAULT_FLAVOR,
  defaultRegistryHost,
  FLAVOR_ENV_VAR,
  flavorInfo,
  FLAVORS,
  isFlavor,
  parseFlavor,
  resolveFlavor,
} from './flavor.js';
export type { Flavor, FlavorInfo } from './flavor.js';

// Go's string semantics, for the layers that quote the reference's messages (src/go/).
export { compareBytewise, goOneLine, goQuote, goTrimSpace } from '../go/index.js';
export {
  displayHostnameLenient,
  hostnameForComparison,
  hostnameForDisplay,
  idnaLookup,
  isValidHostname,
  tryHostnameForComparison,
} from './hostname.js';
export type { Hostname, HostnameResult, IdnaResult } from './hostname.js';

export {
  BUILTIN_HOST,
  BUILTIN_NAMESPACE,
  DEFAULT_NAMESPACE,
  impliedProviderForUnqualifiedType,
  LEGACY_NAMESPACE,
  newProviderAddress,
  parseProviderPart,
  parseProviderSource,
  ProviderAddress,
  sortProviders,
  TRANSITIONAL_BUILTIN_HOST,
  tryParseProviderPart,
  tryParseProviderSource,
} from './provider.js';

export {
  compareVersions,
  goVersionsRelease,
  isUnspecifiedVersion,
  parseVersion,
  prereleaseLessThan,
  sortVersions,
  tryParseVersion,
  UNSPECIFIED_VERSION,
  Version,
} from './version.js';
export type { GoVersionsRelease } from './version.js';

export {
  constraintsToString,
  mergeConstraints,
  newestMatching,
  NO_CONSTRAINTS,
  parseAndMergeConstraints,
  parseConstraints,
  tryParseConstraints,
  VersionConstraints,
  versionMatches,
} from './constraints.js';
export type { ConstraintOperator, VersionConstraint } from './constraints.js';

export { isPlatformWord, pathComponent, unsafeNameKind, unsafeNameReason } from './names.js';
export type { UnsafeNameKind } from './names.js';

export {
  comparePlatforms,
  currentPlatform,
  goarchFromNode,
  goosFromNode,
  parsePlatform,
  Platform,
  sortPlatforms,
  SUPPORTED_PLATFORMS,
} from './platform.js';
