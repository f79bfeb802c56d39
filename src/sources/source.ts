/**
 * The one `Source` interface and the data it returns (docs/reference.md §4, OpenTofu
 * `internal/getproviders` `Source`, `PackageMeta`, `PackageAuthentication`).
 *
 * A source answers two questions: which versions of a provider exist, and
 * where the package of one (provider, version, platform) is and how it must be
 * authenticated. It does not download: {@link PackageMeta} is data, and
 * `fetchPackage` (fetch.ts) downloads or copies any location and performs the
 * authentication it describes.
 *
 * Trust is data: every hash a source reports carries a {@link Trust} saying
 * why it is believed, so the lock-file policy (which hashes to record, spec
 * docs/reference.md §5.2 item 79) is a pure function elsewhere.
 */
import type { Platform, ProviderAddress, Version } from '../addresses/index.js';
import { ErrorCode, ProvkitError } from '../errors.js';
import { type AuthLabel, type Disposition, dispositionsLabel, type Hash } from '../hashing/index.js';
import type { BearerCredential } from '../net/index.js';

/**
 * Why a hash is believed: one disposition (hashing/disposition.ts, the one
 * vocabulary of provenance; OpenTofu `HashDisposition`), one reason per entry.
 */
export type Trust = Disposition;

/**
 * A hash with the reason to believe it. The same hash may appear several
 * times with different reasons; consumers group by `hash.text`.
 */
export interface TrustedHash {
  /** The hash (`h1:`, `zh:`, or a scheme provkit does not know, kept as text). */
  readonly hash: Hash;
  /** Why it is believed: who vouches for it (a signed checksum, a mirror's index, a package hashed here…). */
  readonly trust: Trust;
  /**
   * The platform whose package this is a hash of, when known (registry
   * `packages`, mirror entries, the fetched archive). Absent for SHA256SUMS
   * lines, which may describe any file.
   */
  readonly platform?: Platform;
  /**
   * The file a SHA256SUMS line names (`terraform-provider-TYPE_VERSION_OS_ARCH.zip`),
   * for the lines of a registry's SHA256SUMS: which package a `zh:` is of.
   */
  readonly file?: string;
}

/** Where a package is. */
export type PackageLocation =
  | { readonly kind: 'local-archive'; readonly path: string }
  | { readonly kind: 'local-dir'; readonly path: string }
  | {
      readonly kind: 'http';
      readonly url: string;
      /**
       * The `Authorization` the download needs, bound to its host (an OCI
       * registry's blob). A function, so that the secret is never part of
       * the metadata's data.
       */
      readonly credential?: () => BearerCredential | undefined;
      /** Request headers of the download (an OCI blob's `Accept`). */
      readonly headers?: Readonly<Record<string, string>>;
    };

/** The outcome of the SHA256SUMS signature check, done when the metadata was fetched. */
export type SignatureOutcome =
  /**
   * Verified with the key `keyId` (16 upper-case hex; `fingerprint` 40), which
   * expires at `keyExpires` (ISO 8601, null: never). `expired`: tolerated with
   * a warning (OpenTofu, docs/reference.md §8.5 item 119).
   */
  | {
      readonly kind: 'signed';
      readonly keyId: string;
      readonly expired: boolean;
      readonly keyExpires?: string | null;
      readonly fingerprint?: string;
    }
  /** OpenTofu's default registry without keys and without enforcement (docs/reference.md §8.5 item 118). */
  | { readonly kind: 'skipped'; readonly reason: string };

/** What a registry package must pass after download (docs/reference.md §4.1 item 56, steps 1 and 3). */
export interface RegistryAuthentication {
  /** Tells this kind of {@link PackageAuthentication} from the others. */
  readonly kind: 'registry';
  /** Lower-case hex SHA-256 the archive must have (`shasum`; already found in SHA256SUMS). */
  readonly sha256: string;
  /** The release's SHA256SUMS (the download metadata's `shasums_url`), for messages. */
  readonly checksumsUrl: string;
  /** Its detached signature (`shasums_signature_url`), for messages. */
  readonly signatureUrl: string;
  /** How the signature check over the SHA256SUMS ended (before any download: a bad signature fails the metadata). */
  readonly signature: SignatureOutcome;
  /** The `packages` size of the target platform (OpenTofu 1.12 extension), when given. */
  readonly packageSize?: number;
}

/** A network mirror package: at least one of `hashes` must match the archive (docs/reference.md §4.3 item 69). */
export interface MirrorHashAuthentication {
  /** Tells this kind of {@link PackageAuthentication} from the others. */
  readonly kind: 'mirror-hashes';
  /** The mirror's base URL, for messages. */
  readonly mirror: string;
  /** The `h1:` and `zh:` hashes for the target platform (other schemes dropped); never empty. */
  readonly hashes: readonly Hash[];
}

/**
 * An OCI blob (OpenTofu `PackageOCIBlobArchive`): exactly `size` bytes
 * whose SHA-256 is the layer digest, which is the package's `zh:`.
 */
export interface OciBlobAuthentication {
  /** Tells this kind of {@link PackageAuthentication} from the others. */
  readonly kind: 'oci-blob';
  /** `sha256:HEX`. */
  readonly digest: string;
  /** The layer descriptor's size, in bytes: the blob must have exactly this many. */
  readonly size: number;
  /** `REGISTRY/REPOSITORY`, for messages. */
  readonly repository: string;
}

/**
 * What must be checked of a package after it is fetched, by kind: `registry` (SHA256SUMS and its signature),
 * `mirror-hashes` (hashes a network mirror lists), `oci-blob` (the blob's digest).
 */
export type PackageAuthentication = RegistryAuthentication | MirrorHashAuthentication | OciBlobAuthentication;

/**
 * What a caller of {@link Source.packageMeta} may hear before the answer: only to save time (warm a connection,
 * learn a redirect), never to trust anything. A hint that throws is ignored.
 */
export interface PackageMetaHints {
  /**
   * The archive's URL and the `zh:` the source expects of it, as soon as the source knows them and before it has
   * authenticated them (a registry: from the download metadata, while its SHA256SUMS and signature are still on their
   * way), and the archive's size when the source announces one (a registry's `packages` size). Nothing here is
   * checked yet: the package's authentication is in the answer.
   */
  readonly archiveURL?: (url: string, expectedZh: Hash, size?: number) => void;
}

/** Everything known about one package before it is fetched. */
export interface PackageMeta {
  /** The provider asked for, as `packageMeta` was given it. */
  readonly provider: ProviderAddress;
  /** The version asked for: the package is this exact version's. */
  readonly version: Version;
  /** The platform the package is built for. */
  readonly platform: Platform;
  /** The archive's file name (synthesised for unpacked directories, lower case for packed mirror files). */
  readonly filename: string;
  /** Plugin protocol versions, when the source knows them (registry only). */
  readonly protocols?: readonly string[];
  /** Where the package's bytes are: a local file or directory, or an http(s) URL to download. */
  readonly location: PackageLocation;
  /** Hashes believed before the download, each with its reason. */
  readonly reportedHashes: readonly TrustedHash[];
  /** What must be checked after the fetch; absent: nothing (filesystem mirrors, mirrors without hashes). */
  readonly authentication?: PackageAuthentication;
  /** Things a user should hear about (skipped signature, expired key, unverified mirror package). */
  readonly warnings: readonly string[];
  /** The source's {@link Source.forDisplay}, for messages. */
  readonly source: string;
}

/** What {@link Source.availableVersions} answers. */
export interface AvailableVersions {
  /** Distinct, sorted lowest first. */
  readonly versions: readonly Version[];
  /**
   * Things the source says about the provider a user should hear (a registry's `warnings`), one sentence each;
   * shown as a `warning` event.
   */
  readonly warnings: readonly string[];
}

/**
 * A place providers come from. Implementations: `RegistrySource`,
 * `FilesystemMirrorSource`, `NetworkMirrorSource`; decorators `MultiSource`,
 * `MemoizeSource`; test doubles `MockSource`, `HangingSource`.
 *
 * Errors are {@link ProvkitError}s naming the provider (and version, platform,
 * URL where known). The multi-source treats `PROVIDER_NOT_FOUND`,
 * `REGISTRY_PROVIDER_UNKNOWN` and `PLATFORM_NOT_SUPPORTED` as "ask the next
 * source"; see `codes.ts`.
 */
export interface Source {
  /** A short description for messages (a directory, a URL, "registry HOST"); `provider` narrows it where it matters. */
  forDisplay(provider?: ProviderAddress): string;
  /**
   * The versions of `provider` the source has, distinct and sorted lowest first. Throws a {@link ProvkitError}
   * (`PROVIDER_NOT_FOUND`, `REGISTRY_PROVIDER_UNKNOWN`, a network code) when it cannot say; `signal` aborts the
   * request.
   */
  availableVersions(provider: ProviderAddress, signal?: AbortSignal): Promise<AvailableVersions>;
  /**
   * What is known of one package before it is fetched: where it is, the hashes reported for it and how it is to be
   * authenticated. Throws `PLATFORM_NOT_SUPPORTED` when the version has no package for `platform`, another {@link
   * ProvkitError} when the source cannot answer; `signal` aborts the request. `hints` hear what the source learns on
   * the way (a source may say nothing).
   */
  packageMeta(
    provider: ProviderAddress,
    version: Version,
    platform: Platform,
    signal?: AbortSignal,
    hints?: PackageMetaHints,
  ): Promise<PackageMeta>;
  /**
   * The platforms a version is published for, where the source knows (the
   * registry's versions list); undefined otherwise. `lock -all-platforms` uses it.
   */
  publishedPlatforms?(
    provider: ProviderAddress,
    version: Version,
    signal?: AbortSignal,
  ): Promise<Platform[] | undefined>;
  /**
   * Local sources only (filesystem mirrors): the platforms this source holds
   * a package of for a version, sorted; reading them costs no download.
   * `lock` uses it to tell which platforms an existing lock file covers.
   */
  readonly localPlatforms?: ((provider: ProviderAddress, version: Version) => Promise<Platform[]>) | undefined;
}

/**
 * Context for {@link sourceError}: the `ErrorContext` fields (src/errors.ts) a source's errors carry, with the provider, version
 * and platform as values (rendered to text in the error).
 */
export interface SourceErrorContext {
  /** The provider the failure is about; the error's `provider`. */
  provider?: ProviderAddress;
  /** The version asked for; the error's `version`. */
  version?: Version;
  /** The platform asked for; the error's `platform`. */
  platform?: Platform;
  /** The URL asked when the failure happened (credentials never included). */
  url?: string;
  /** The file the failure is about (a filesystem mirror's), as the caller named it. */
  file?: string;
  /** What was expected, for a mismatch: a hash, a size, a content type. */
  expected?: string;
  /** What was found instead of `expected`. */
  found?: string;
  /** What the user can do about it. */
  hint?: string;
  /** For `PLATFORM_NOT_SUPPORTED` ({@link platformNotSupported}). */
  availablePlatforms?: readonly string[];
  /** A cause shared by every provider of the source, as a diagnostic (src/installer/causes.ts). */
  summary?: string;
  /** The detail of that cause's diagnostic, naming no provider (with `summary`). */
  detail?: string;
  /** The error this one wraps (the error's `cause`): kept for callers, never parsed for its text. */
  cause?: unknown;
}

/** A ProvkitError with the provider, version and platform rendered into its context fields. */
export function sourceError(code: ErrorCode, message: string, ctx: SourceErrorContext = {}): ProvkitError {
  const { provider, version, platform, ...rest } = ctx;
  return new ProvkitError(code, message, {
    ...rest,
    ...(provider === undefined ? {} : { provider: provider.toString() }),
    ...(version === undefined ? {} : { version: version.toString() }),
    ...(platform === undefined ? {} : { platform: platform.toString() }),
  });
}

/**
 * A copy of `err` with context added where it is missing and, optionally, a
 * message prefix. Keeps the code; the original becomes `cause`.
 */
export function withContext(err: unknown, ctx: SourceErrorContext, prefix?: string): unknown {
  if (!(err instanceof ProvkitError)) return err;
  const data = err.toJSON();
  const { code, message, ...fields } = data;
  const merged = {
    ...fields,
    ...(fields.provider === undefined && ctx.provider !== undefined ? { provider: ctx.provider.toString() } : {}),
    ...(fields.version === undefined && ctx.version !== undefined ? { version: ctx.version.toString() } : {}),
    ...(fields.platform === undefined && ctx.platform !== undefined ? { platform: ctx.platform.toString() } : {}),
    ...(fields.url === undefined && ctx.url !== undefined ? { url: ctx.url } : {}),
  };
  return new ProvkitError(code, prefix === undefined ? message : `${prefix}: ${message}`, { ...merged, cause: err });
}

/**
 * The reference's one-word summary of how a fetched package was
 * authenticated (`PackageAuthenticationResult.String`, docs/reference.md §8.5 item 120), in
 * priority order: `signed`, `signing skipped` (registry-reported hashes),
 * `verified checksum`, `unauthenticated` (hashing/disposition.ts `dispositionsLabel`).
 */
export function authenticationLabel(hashes: readonly TrustedHash[]): AuthLabel {
  return dispositionsLabel(hashes.map((h) => h.trust));
}

/**
 * The error of a source that has the version but not for `ctx.platform`
 * (`PLATFORM_NOT_SUPPORTED`): `message`, then the platforms it does have
 * (` (available for: darwin_arm64, linux_amd64)`), so that a typo or a
 * missing build is plain, and the same platforms, sorted, as the error's
 * `availablePlatforms` for callers (`MultiSource`, `install`'s diagnostic).
 * The reference's message stops before them (hashicorp/terraform v1.11.4
 * internal/getproviders/errors.go `ErrPlatformNotSupported`).
 */
export function platformNotSupported(
  message: string,
  ctx: SourceErrorContext,
  available: readonly (Platform | string)[] | undefined,
): ProvkitError {
  const names = [...new Set((available ?? []).map(String))].sort();
  if (names.length === 0) return sourceError(ErrorCode.PLATFORM_NOT_SUPPORTED, message, ctx);
  return sourceError(ErrorCode.PLATFORM_NOT_SUPPORTED, `${message} (available for: ${names.join(', ')})`, {
    ...ctx,
    availablePlatforms: names,
  });
}
