/**
 * provkit's public library API, curated: what `import { … } from 'provkit'`
 * gives. The library never prints; it returns values and emits typed events
 * (`InstallerEvent`) that the CLI's renderers display. Every name here is in
 * the API report (etc/provkit.api.md, `npm run api`), so a change to it is
 * deliberate; docs/api.md shows it in use, with examples the tests run.
 *
 * The parsers and the lower layers are behind subpath exports
 * (`provkit/hcl`, `provkit/config`, `provkit/cliconfig`, `provkit/net`,
 * `provkit/sources`, `provkit/layout`): usable, but not part of this
 * curated surface.
 */

// Errors: one base class with a stable code; one Diagnostic.
export {
  ErrorCode,
  WarningCode,
  ProvkitError,
  isProvkitError,
  describeError,
  diagnosticFromError,
  ERROR_SUMMARY,
  rangeText,
} from './errors.js';
export type {
  Diagnostic,
  DiagnosticCode,
  DiagnosticRange,
  ErrorContext,
  HclDiagnostic,
  SerializedError,
  SourcePos,
} from './errors.js';

// Addresses: providers, versions, constraints, platforms, flavors.
export {
  ProviderAddress,
  parseProviderSource,
  tryParseProviderSource,
  Version,
  parseVersion,
  tryParseVersion,
  VersionConstraints,
  parseConstraints,
  tryParseConstraints,
  versionMatches,
  Platform,
  parsePlatform,
  currentPlatform,
  SUPPORTED_PLATFORMS,
  FLAVORS,
  DEFAULT_FLAVOR,
  flavorInfo,
  defaultRegistryHost,
  parseFlavor,
} from './addresses/index.js';
export type {
  ConstraintOperator,
  Flavor,
  FlavorInfo,
  Hostname,
  PatternSegments,
  VersionConstraint,
} from './addresses/index.js';

// Hashing: typed hashes with a scheme; zh: and h1: of packages.
export {
  parseHash,
  H1,
  ZH,
  hashZipPackage,
  hashZipForms,
  hashPackageDir,
  zhOfFile,
  hashPath,
  hashPaths,
  createHashPool,
  openHashStore,
  DEFAULT_ZIP_LIMITS,
  DISPOSITION_KINDS,
} from './hashing/index.js';
export type {
  Hash,
  KnownScheme,
  FormResult,
  HashWarning,
  ZipForms,
  ZipPackageHashes,
  ZipHashOptions,
  PathHashResult,
  HashPool,
  HashPoolOptions,
  HashStore,
  HashStoreOptions,
  StoredHashes,
  ZipLimits,
  ReadProgress,
  Disposition,
  DispositionKind,
  StoredDisposition,
  HashDispositions,
  ZipStream,
} from './hashing/index.js';
export type { StreamedDigest } from './hashing/zip-reader.js';

// Lock files: parse, model, write; the verdict on a package.
export {
  LOCK_FILE_NAME,
  Locks,
  ProviderLock,
  newProviderLock,
  locksEqual,
  parseLockFile,
  serializeLocks,
  lockFileHeader,
  loadLockFile,
  saveLockFile,
  allowedHashes,
  verifyPackage,
  lockFileFlavor,
} from './lockfile/index.js';
export type { LoadedLockFile, LockParseResult, PackageHashes, Verdict } from './lockfile/index.js';

// Sources: where packages come from, and the factory the CLI uses.
export {
  createRegistrySource,
  credentialsFromEnv,
  staticCredentials,
  chainCredentials,
  FilesystemMirrorSource,
  NetworkMirrorSource,
  OciMirrorSource,
  RegistrySource,
  ServiceDiscovery,
  MultiSource,
  MemoizeSource,
  sourceFromCliConfig,
  signaturePolicy,
  signatureSwitchesFromEnv,
} from './sources/index.js';
export type {
  AvailableVersions,
  CachedVerification,
  CredentialsLookup,
  DiscoveredHost,
  SignatureCache,
  SignaturePolicy,
  SignatureSwitches,
  RegistrySourceSettings,
  ServiceDiscoveryOptions,
  ServiceMap,
  FilesystemMirrorOptions,
  NetworkMirrorOptions,
  OciMirrorOptions,
  RegistrySourceOptions,
  MultiSourceSelector,
  PackageAuthentication,
  PackageLocation,
  PackageMeta,
  PackageMetaHints,
  ProviderPattern,
  Source,
  SourceContext,
  Trust,
  TrustedHash,
  Descriptor,
  MirrorHashAuthentication,
  OciBlobAuthentication,
  OciManifestContext,
  ProviderIndex,
  RegistryAuthentication,
  ScanWarning,
  SourceErrorContext,
  SignatureOutcome,
} from './sources/index.js';
export { processCliConfigContext } from './cliconfig/index.js';
export type { CliConfigContext, HostOS } from './cliconfig/index.js';
// Where in a configuration file a parsed block is (a complete DiagnosticRange).
export type { Pos, Range } from './hcl/index.js';
export type { AuditPolicy, AuditProviderRule, AuditRule, PlatformPolicy, PolicyResult } from './config/index.js';
// HTTP: the one client, over any fetch (node-fetch with proxies and CAs by default, or globalThis.fetch).
export { HttpClient, createNodeFetch } from './net/index.js';
export type {
  HttpClientOptions,
  HttpResponse,
  RequestOptions,
  SendOptions,
  DownloadOptions,
  DownloadResult,
  FetchLike,
  FetchInit,
  FetchResponse,
  FetchHeaders,
  ByteStream,
  HttpMethod,
  NetEvents,
  NodeFetch,
  NodeFetchOptions,
  BearerCredential,
  Clock,
  BackoffOptions,
  Env,
  OciClient,
  OciRepository,
  RepositoryAddress,
  ChunkReader,
  FetchedManifest,
  ManifestCondition,
  OciAuth,
  OciClientOptions,
  OciCredentials,
  OciCredentialsLookup,
  Challenge,
} from './net/index.js';

// Operations: what the commands run, with their options and outcomes.
// Lock a directory: the one pipeline of `provkit lock` (and of each root of `lock -recursive`).
export { lockModule } from './installer/lock-module.js';
export type { LockModuleOptions, ModuleLockOutcome, ModuleLockStatus } from './installer/lock-module.js';
export { PlatformInference } from './installer/platforms.js';
export type { ChosenPlatforms, InferenceVia, Inferred, PlatformOrigin } from './installer/platforms.js';
export { runLock } from './installer/lock.js';
export { selectVersion } from './installer/select-version.js';
export { FetchCache } from './installer/fetch-cache.js';
export type { FetchCacheOptions, LockedPackage, FetchCacheStats } from './installer/fetch-cache.js';
export type { LockOptions, LockOutcome, ProviderFailure } from './installer/lock.js';
export type { FetchRunOptions } from './installer/run-options.js';
export type { Requirement } from './addresses/index.js';
export { runMirror } from './installer/mirror.js';
export type { MirrorOptions, MirrorOutcome, MirrorFailure, MirrorHashes } from './installer/mirror.js';
// Install a directory's providers: the one pipeline of `provkit install` (the provider step of init).
export { installModule } from './installer/install-module.js';
export type { InstallModuleOptions, ModuleInstallOutcome, ModuleInstallStatus } from './installer/install-module.js';
export { runInstall } from './installer/install.js';
export type {
  LockFileAction,
  InstallOptions,
  InstallOutcome,
  InstalledPackage,
  InstallFailure,
  InstallPhase,
} from './installer/install.js';
export { runVerify } from './installer/verify.js';
export type {
  UnvouchedHashes,
  VerifiedPackage,
  VerifyOptions,
  VerifyOutcome,
  VerifyProblem,
  VerifyProblemCode,
} from './installer/verify.js';
export { createBundle } from './bundles/create.js';
export type { BundleCreateOptions, BundleCreateOutcome, BundleFailure } from './bundles/create.js';
export { BUNDLE_FORMAT } from './bundles/manifest.js';
export type { BundleManifest, BundleMember, BundlePackage, BundleProvider } from './bundles/manifest.js';
export { importBundle } from './bundles/import.js';
export type { BundleImportOptions, BundleImportOutcome } from './bundles/import.js';
export { extractPackage } from './installer/extract.js';
export type { ExtractLimits, ExtractOptions, ExtractResult } from './installer/extract.js';
export type { DirMutexOptions, MutexHolder } from './fs/dir-mutex.js';
export type {
  InstallerEvent,
  EventSink,
  AuthLabel,
  LockChange,
  PackageHash,
  ProgressPhase,
} from './installer/events.js';
