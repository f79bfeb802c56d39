/**
 * `src/sources`: where provider packages come from (docs/reference.md §4).
 *
 * One {@link Source} interface (versions of a provider; metadata of one
 * package, with typed trust for every reported hash and the authentication to
 * run after the fetch), its implementations (registry protocol v1, filesystem
 * mirror, network mirror), decorators (multi-source with include/exclude
 * patterns, memoising), test doubles, and {@link fetchPackage}, which
 * downloads or copies any location verify-then-commit.
 *
 * What it does not do: choose versions, extract packages, decide which hashes
 * go into a lock file (that policy reads the {@link Trust} of each hash), or
 * print. Network access goes through an injected `HttpClient` (`src/net`).
 */
export { authenticationLabel, platformNotSupported, sourceError, withContext } from './source.js';
export type {
  AvailableVersions,
  MirrorHashAuthentication,
  OciBlobAuthentication,
  PackageAuthentication,
  PackageLocation,
  PackageMeta,
  PackageMetaHints,
  RegistryAuthentication,
  SignatureOutcome,
  Source,
  SourceErrorContext,
  Trust,
  TrustedHash,
} from './source.js';
export * from './fetch/index.js';
export { dispositionsOf, packageDispositions } from './provenance.js';
export type { PackageHashesInput } from './provenance.js';
export { FilesystemMirrorSource } from './fs-mirror.js';
export type { FilesystemMirrorOptions, ScanWarning } from './fs-mirror.js';
export { chainCredentials, credentialsFromEnv, staticCredentials } from './credentials.js';
export type { CredentialsLookup } from './credentials.js';
export { NetworkMirrorSource } from './net-mirror.js';
export {
  OciMirrorSource,
  PACKAGE_MEDIA_TYPE,
  PROVIDER_ARTIFACT_TYPE,
  PROVIDER_TARGET_ARTIFACT_TYPE,
  readDescriptor,
  selectImageManifest,
  selectLayer,
} from './oci-mirror.js';
export type { Descriptor, OciManifestContext, OciMirrorOptions, ProviderIndex } from './oci-mirror.js';
export type { NetworkMirrorOptions } from './net-mirror.js';
export * from './registry/index.js';
export { canHandleProvider, MultiSource, parseProviderPatterns, patternMatches } from './multi.js';
export type { MultiSourceSelector, ProviderPattern } from './multi.js';
export { MemoizeSource } from './memoize.js';
export { HangingSource, MockSource } from './testing.js';
export type { MockPackage, MockSourceOptions, SourceCall } from './testing.js';
export {
  cacheBase,
  createRegistrySource,
  hashStoreDir,
  installationSourceFor,
  netMirrorSourceFor,
  ociClientFor,
  ociMirrorSourceFor,
  registrySourceFor,
  sourceFromCliConfig,
  templateRepositoryMapping,
} from './from-cli-config.js';
export type { RegistrySourceSettings, SourceContext } from './from-cli-config.js';
