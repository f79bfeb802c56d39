/**
 * The data model of the CLI configuration: what `src/sources` (the
 * multi-source) and the network layer consume.
 *
 * Plain data; no I/O.
 */
import type { Hostname, ProviderAddress } from '../addresses/index.js';
import type { Diagnostic } from '../errors.js';
import type { Range } from '../hcl/index.js';
import type { RepositoryAddress } from '../net/oci/reference.js';
import type { ProviderPattern, ProviderSelector } from '../addresses/index.js';

/**
 * A problem in the CLI configuration: the one {@link Diagnostic} of provkit,
 * coded `INVALID_CLI_CONFIGURATION` or `CLI_CONFIGURATION_WARNING`. Many of the
 * reference's are "sourceless" (no file position); provkit gives a range where
 * it knows one (the CLI prints them without, as terraform does).
 */
export type CliConfigDiagnostic = Diagnostic;

/** A plain value read from the CLI configuration (HCL 1 semantics: literals only). */
export type PlainValue = null | boolean | number | string | PlainValue[] | { [key: string]: PlainValue };

/** Fields shared by every installation method. */
interface MethodBase extends ProviderSelector {
  readonly include: readonly ProviderPattern[];
  readonly exclude: readonly ProviderPattern[];
  /** Where the method was written, when it comes from a file. */
  readonly range?: Range;
}

/** `filesystem_mirror { path, include, exclude }`. */
export interface FilesystemMirrorMethod extends MethodBase {
  readonly kind: 'filesystem_mirror';
  /** The mirror directory, as written (relative paths are relative to the working directory). */
  readonly path: string;
  /** True for the implied local mirrors used when there is no `provider_installation` block. */
  readonly implied?: boolean;
}

/** `network_mirror { url, include, exclude, download_retry_count, trust_all_hashes }`. */
export interface NetworkMirrorMethod extends MethodBase {
  readonly kind: 'network_mirror';
  /** The mirror's base URL: https, with a host (checked); a trailing `/` is needed for relative resolution (not added). */
  readonly url: string;
  readonly downloadRetryCount?: number;
  /** OpenTofu 1.12 `trust_all_hashes`. */
  readonly trustAllHashes?: boolean;
}

/** `direct { include, exclude, download_retry_count }`: the provider's origin registry. */
export interface DirectMethod extends MethodBase {
  readonly kind: 'direct';
  readonly downloadRetryCount?: number;
  /**
   * Set on the implied `direct` method only: every provider found in any of
   * the implied local mirrors (at any version) must also be excluded (spec
   * docs/reference.md §7 item 100). The consumer applies it, since it needs a mirror scan.
   */
  readonly excludeProvidersInLocalMirrors?: boolean;
}

/**
 * OpenTofu's `oci_mirror { repository_template, include, exclude }`
 * (docs/oci.md): providers from OCI registry repositories.
 */
export interface OciMirrorMethod extends MethodBase {
  readonly kind: 'oci_mirror';
  /** The template as written. */
  readonly repositoryTemplate: string;
  /**
   * The repository of a provider: the template evaluated and parsed
   * (cliconfig/oci-template.ts).
   *
   * @throws {Error} with the reference's text when the result is not a repository address.
   */
  readonly repositoryFor: (provider: ProviderAddress) => RepositoryAddress;
}

/** One provider installation method, consulted in order as a multi-source (docs/reference.md §4.4). */
export type InstallationMethod = FilesystemMirrorMethod | NetworkMirrorMethod | DirectMethod | OciMirrorMethod;

/** An `oci_credentials "PREFIX" { … }` block (OpenTofu): credentials for the repositories under a `registry[/path]` prefix. */
export type OciCredentialsBlock = { readonly prefix: string; readonly range?: Range } & (
  | { readonly kind: 'basic'; readonly username: string; readonly password: string }
  | { readonly kind: 'oauth'; readonly accessToken: string; readonly refreshToken: string }
  | { readonly kind: 'helper'; readonly helper: string }
);

/** The `oci_default_credentials { … }` block (OpenTofu); its defaults when absent. */
export interface OciDefaultCredentials {
  /** Look for Docker-style config files (and other ambient credentials); default true. */
  readonly discoverAmbientCredentials: boolean;
  /** Read exactly these Docker-style config files (absolute paths) instead of searching the usual places. */
  readonly dockerStyleConfigFiles?: readonly string[];
  /** A credential helper for every registry without a more specific setting. */
  readonly dockerCredentialsHelper?: string;
  readonly range?: Range;
}

/** A `dev_overrides` entry: the provider is taken from `dir`, bypassing versions and the lock file. */
export interface DevOverride {
  readonly provider: ProviderAddress;
  /** The directory, cleaned (`filepath.Clean`). */
  readonly dir: string;
}

/** The provider installation configuration in effect. */
export interface ProviderInstallation {
  /** True when built from the implied local mirrors because no `provider_installation` block exists. */
  readonly implied: boolean;
  readonly methods: readonly InstallationMethod[];
  /** `dev_overrides`, keyed by the provider's display string. */
  readonly devOverrides: ReadonlyMap<string, DevOverride>;
}

/** A `host "name" { services = { … } }` block: service discovery replaced for that host. */
export interface HostConfig {
  /** The hostname as written. */
  readonly name: string;
  readonly hostname: Hostname;
  /** The forced discovery document (`"providers.v1" = "https://…"`, …). */
  readonly services: Readonly<Record<string, PlainValue>>;
}

/** A `credentials "host" { token = "…" }` block. */
export interface CredentialsConfig {
  readonly hostname: Hostname;
  /** The `token` attribute; `undefined` when the block has none (then it gives no credentials). */
  readonly token?: string;
  /** Every attribute of the block. */
  readonly attributes: Readonly<Record<string, PlainValue>>;
}

/** A `credentials_helper "type" { args = [...] }` block (parsed; not run by provkit). */
export interface CredentialsHelperConfig {
  readonly type: string;
  readonly args: readonly string[];
}

/** The merged CLI configuration. */
export interface CliConfig {
  /** The files read, in merge order (main file first, then the config directory's). */
  readonly files: readonly string[];
  /** `TF_PLUGIN_CACHE_DIR`, else `plugin_cache_dir` of the main file, else of the config-directory files; env expanded. */
  readonly pluginCacheDir?: string;
  /** Sticky: true when any file or `TF_PLUGIN_CACHE_MAY_BREAK_DEPENDENCY_LOCK_FILE` turns it on. */
  readonly pluginCacheMayBreakDependencyLockFile: boolean;
  /** `host` blocks by hostname (comparison form); later files win. */
  readonly hosts: ReadonlyMap<Hostname, HostConfig>;
  /** `credentials` blocks by hostname (comparison form); later files win. */
  readonly credentials: ReadonlyMap<Hostname, CredentialsConfig>;
  /** `TF_TOKEN_*` variables by hostname (comparison form). They take precedence over `credentials`. */
  readonly envTokens: ReadonlyMap<Hostname, string>;
  readonly credentialsHelper?: CredentialsHelperConfig;
  readonly providerInstallation: ProviderInstallation;
  /** `oci_credentials` blocks of every file, in merge order. */
  readonly ociCredentials: readonly OciCredentialsBlock[];
  /** The one `oci_default_credentials` block, if any. */
  readonly ociDefaultCredentials?: OciDefaultCredentials;
  readonly diagnostics: readonly CliConfigDiagnostic[];
}
