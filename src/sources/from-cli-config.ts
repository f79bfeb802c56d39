/**
 * Builds the concrete sources from settings: the one place that names them
 * (CONTRIBUTING.md house style 8: a single factory maps configuration to
 * sources). The CLI (src/cli/wiring.ts) and library users
 * ({@link sourceFromCliConfig}) get the same `provider_installation`
 * semantics from it.
 */
import { readdir } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

import { DEFAULT_FLAVOR, type Flavor, tryHostnameForComparison } from '../addresses/index.js';
import {
  type CliConfig,
  type CliConfigContext,
  type InstallationMethod,
  loadCliConfig,
  ociCredentialsLookup,
  tokenForHost,
} from '../cliconfig/index.js';
import { ErrorCode, ProvkitError } from '../errors.js';
import { expandLevel1, HttpClient, OciClient, parseRepositoryAddress, type RepositoryAddress } from '../net/index.js';
import { chainCredentials, credentialsFromEnv, staticCredentials, type CredentialsLookup } from './credentials.js';
import { FilesystemMirrorSource } from './fs-mirror.js';
import { MemoizeSource } from './memoize.js';
import { MultiSource, type MultiSourceSelector, type ProviderPattern } from './multi.js';
import { NetworkMirrorSource } from './net-mirror.js';
import { OciMirrorSource } from './oci-mirror.js';
import {
  RegistrySource,
  ServiceDiscovery,
  openSignatureCache,
  signaturePolicy,
  type ServiceMap,
  type SignatureCache,
  type SignaturePolicy,
} from './registry/index.js';
import type { Source } from './source.js';

/**
 * What the factory needs: the CLI configuration's context (flavor, the
 * environment, home directory, OS, working directory) and the HTTP client
 * every network source shares.
 */
export interface SourceContext extends CliConfigContext {
  readonly http: HttpClient;
}

/**
 * The sources of the CLI configuration (`TF_CLI_CONFIG_FILE`,
 * `~/.terraformrc`, `~/.tofurc`, … as the flavor finds it): its
 * `provider_installation` methods or the implied ones, with credentials,
 * `host` blocks and the flavor's signature policy, as `tofu init` or
 * `terraform init` would use them. For library users:
 *
 *     const source = await sourceFromCliConfig({ ...processCliConfigContext('tofu'), http: new HttpClient() });
 */
export async function sourceFromCliConfig(ctx: SourceContext): Promise<Source> {
  return installationSourceFor(ctx, await loadCliConfig(ctx));
}

/** Options of {@link createRegistrySource}; every field has a default. */
export interface RegistrySourceSettings {
  /** Whose registry rules, default host and signature policy (default `tofu`). */
  readonly flavor?: Flavor;
  /** The HTTP client every request goes through (default `new HttpClient()`: proxies and CAs from `process.env`). */
  readonly http?: HttpClient;
  /**
   * Bearer tokens for registry hosts: a map of hostnames as written (Unicode,
   * optional port) to tokens, as `credentials "HOST"` blocks of a CLI
   * configuration, or a lookup. The `TF_TOKEN_<host>` variables of
   * {@link RegistrySourceSettings.env} win over them, as in the reference
   * (docs/reference.md §7 item 103). A token goes to its host's discovery and
   * registry API only, never with archives, SHA256SUMS or signatures.
   */
  readonly credentials?: Readonly<Record<string, string>> | CredentialsLookup;
  /**
   * Services per host, replacing service discovery for it, as `host "NAME" {
   * services = {…} }` of a CLI configuration: for example
   * `{ 'registry.example.com': { 'providers.v1': 'https://registry.example.com/v1/providers/' } }`.
   */
  readonly hosts?: Readonly<Record<string, ServiceMap>> | ReadonlyMap<string, ServiceMap>;
  /**
   * The environment read for `TF_TOKEN_<host>` and the flavor's signature
   * switches (`OPENTOFU_ENFORCE_GPG_VALIDATION`, `OPENTOFU_ENFORCE_GPG_EXPIRATION`);
   * default `process.env`. Pass `{}` to read none.
   */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Signature checks remembered across runs (none by default; the CLI keeps them beside the hash store). */
  readonly signatureCache?: SignatureCache;
}

/**
 * A ready origin-registry source (provider registry protocol v1): service
 * discovery once per host, credentials, host overrides, the flavor's
 * signature policy, and memoised, so each question (versions of a provider,
 * download metadata of a package) is asked of the registry once however many
 * times a run asks it. What `tofu init` uses for the `direct` installation
 * method; {@link sourceFromCliConfig} also reads a CLI configuration's
 * mirrors, credentials and hosts.
 *
 * @throws {ProvkitError} `INVALID_SOURCE_CONFIG` for an invalid hostname in
 *   `hosts`; without `http`, what `new HttpClient()` throws.
 */
export function createRegistrySource(settings: RegistrySourceSettings = {}): Source {
  const env = settings.env ?? process.env;
  const flavor = settings.flavor ?? DEFAULT_FLAVOR;
  const given = settings.credentials;
  return memoizedRegistry({
    http: settings.http ?? new HttpClient(),
    flavor,
    credentials: chainCredentials(
      credentialsFromEnv(env),
      ...(given === undefined ? [] : [typeof given === 'function' ? given : staticCredentials(given)]),
    ),
    hosts: settings.hosts,
    policy: signaturePolicy(flavor, env),
    signatureCache: settings.signatureCache,
  });
}

/**
 * The origin-registry source of a CLI configuration (as {@link createRegistrySource}).
 * Credentials: `TF_TOKEN_<host>` variables, then `credentials` blocks;
 * service discovery honours `host` blocks; remembered signature checks live
 * beside the hash store.
 */
export function registrySourceFor(
  ctx: SourceContext,
  cli: CliConfig,
  options: {
    /**
     * `false`: the registry source itself, which asks again each time and
     * keeps no documents past their requests (a long-running pull-through
     * mirror keeps answers for as long as it should,
     * pull-through/origin.ts). Default true.
     */
    readonly memoize?: boolean;
    /**
     * A signature by an expired key is reported (`expired`, with a warning)
     * instead of refused, whatever the flavor: `provkit keys` shows and
     * flags such keys rather than failing on them. Default false.
     */
    readonly tolerateExpiredKeys?: boolean;
  } = {},
): Source {
  // By the name as written (Unicode): ServiceDiscovery validates it as svchost
  // does, which refuses the punycode comparison form the map is keyed by.
  const hosts = new Map<string, ServiceMap>();
  for (const h of cli.hosts.values()) hosts.set(h.name, h.services);
  return memoizedRegistry({
    http: ctx.http,
    flavor: ctx.flavor,
    // The CLI configuration already holds the TF_TOKEN_* variables (cli.envTokens), which win over credentials blocks.
    credentials: (host) => tokenForHost(cli, host),
    hosts,
    policy: {
      ...signaturePolicy(ctx.flavor, ctx.env),
      ...(options.tolerateExpiredKeys === true ? { enforceExpiration: false } : {}),
    },
    signatureCache: signatureCacheFor(ctx),
    memoize: options.memoize !== false,
  });
}

/** One discovery (once per host) and one registry source, under a {@link MemoizeSource}. */
function memoizedRegistry(o: {
  http: HttpClient;
  flavor: Flavor;
  credentials: CredentialsLookup;
  hosts: RegistrySourceSettings['hosts'];
  policy: SignaturePolicy;
  signatureCache: SignatureCache | undefined;
  /** False: the bare registry source, keeping no document past its request (registrySourceFor). */
  memoize?: boolean;
}): Source {
  const discovery = new ServiceDiscovery({
    http: o.http,
    credentials: o.credentials,
    ...(o.hosts === undefined ? {} : { overrides: o.hosts }),
  });
  const registry = new RegistrySource({
    http: o.http,
    discovery,
    flavor: o.flavor,
    credentials: o.credentials,
    signaturePolicy: o.policy,
    ...(o.signatureCache === undefined ? {} : { signatureCache: o.signatureCache }),
    ...(o.memoize === false ? { keepDocuments: false } : {}),
  });
  return o.memoize === false ? registry : new MemoizeSource(registry);
}

/** provkit's cache directory: `PROVKIT_CACHE_DIR`, else `$XDG_CACHE_HOME/provkit`, else `~/.cache/provkit`. */
export function cacheBase(env: SourceContext['env'], homeDir: string = homedir()): string {
  return env['PROVKIT_CACHE_DIR'] ?? join(env['XDG_CACHE_HOME'] ?? join(env['HOME'] ?? homeDir, '.cache'), 'provkit');
}

/**
 * Where the hash store (hashing/store.ts) lives: `PROVKIT_HASH_STORE` names
 * the directory (relative to the working directory), `off` disables it; by
 * default `hashes/` in the cache directory. Remembered signature checks
 * (sources/registry/signature.ts) live in its `signatures/` directory.
 */
export function hashStoreDir(env: SourceContext['env'], cwd: string, homeDir: string = homedir()): string | undefined {
  const setting = env['PROVKIT_HASH_STORE'];
  if (setting === 'off') return undefined;
  return setting !== undefined && setting !== '' ? resolve(cwd, setting) : join(cacheBase(env, homeDir), 'hashes');
}

function signatureCacheFor(ctx: SourceContext): SignatureCache | undefined {
  const dir = hashStoreDir(ctx.env, ctx.cwd, ctx.homeDir);
  return dir === undefined ? undefined : openSignatureCache(join(dir, 'signatures'));
}

/**
 * The sources the CLI configuration's `provider_installation` names (or the
 * implied local mirrors plus the registries), composed in order with their
 * include/exclude patterns, first match as the reference (docs/reference.md §4.4, §7).
 */
export async function installationSourceFor(ctx: SourceContext, cli: CliConfig): Promise<Source> {
  const selectors: MultiSourceSelector[] = [];
  const impliedMirrors = cli.providerInstallation.methods.filter((m) => m.kind === 'filesystem_mirror' && m.implied);
  // The implied direct method leaves alone every provider an implied local mirror has (docs/reference.md §7 item 100).
  const inLocalMirrors = (
    await Promise.all(impliedMirrors.map((mirror) => providersIn(resolve(ctx.cwd, (mirror as { path: string }).path))))
  ).flat();
  for (const m of cli.providerInstallation.methods) {
    const exclude: ProviderPattern[] = [...m.exclude];
    if (m.kind === 'direct' && m.excludeProvidersInLocalMirrors) exclude.push(...inLocalMirrors);
    selectors.push({ source: sourceFor(m, ctx, cli), include: m.include, exclude });
  }
  return new MultiSource(selectors);
}

function sourceFor(m: InstallationMethod, ctx: SourceContext, cli: CliConfig): Source {
  switch (m.kind) {
    case 'filesystem_mirror':
      return new FilesystemMirrorSource({ baseDir: resolve(ctx.cwd, m.path), flavor: ctx.flavor });
    case 'network_mirror':
      return netMirrorSourceFor(m.url, ctx, cli, m.trustAllHashes);
    case 'direct':
      return registrySourceFor(ctx, cli);
    case 'oci_mirror':
      return new OciMirrorSource({ client: ociClientFor(ctx, cli), repositoryFor: m.repositoryFor });
  }
}

/**
 * An OCI registry client for a run: credentials as OpenTofu finds them
 * (`oci_credentials` blocks, `oci_default_credentials`, Docker-style config
 * files; cliconfig/oci-credentials.ts), upload chunks of
 * `PROVKIT_OCI_CHUNK_SIZE` bytes (default 8 MiB; docs/oci.md).
 */
export function ociClientFor(ctx: SourceContext, cli: CliConfig): OciClient {
  const chunk = ctx.env['PROVKIT_OCI_CHUNK_SIZE'];
  const chunkSize = chunk !== undefined && /^[1-9][0-9]*$/.test(chunk) ? Number(chunk) : undefined;
  return new OciClient({
    http: ctx.http,
    credentials: ociCredentialsLookup(cli, { env: ctx.env, homeDir: ctx.env['HOME'] ?? ctx.homeDir, os: ctx.os }),
    ...(chunkSize === undefined ? {} : { chunkSize }),
  });
}

/**
 * The repository of a provider under an RFC 6570 level 1 template
 * (`-oci-mirror`, `oci://` targets): `{hostname}`, `{namespace}`, `{type}`
 * expanded and the result parsed as a repository address, as
 * `tofu providers lock -oci-mirror` does (opentofu/opentofu
 * internal/command/providers_lock.go).
 */
export function templateRepositoryMapping(
  template: string,
): (p: { hostname: string; namespace: string; type: string }) => RepositoryAddress {
  return (p) => {
    let uri: string;
    try {
      uri = expandLevel1(template, { hostname: p.hostname, namespace: p.namespace, type: p.type });
    } catch (err) {
      throw new ProvkitError(
        ErrorCode.INVALID_SOURCE_CONFIG,
        `error while expanding uri template: ${(err as Error).message}`,
      );
    }
    return parseRepositoryAddress(uri);
  };
}

/** The OCI mirror of `-oci-mirror=TEMPLATE` (or an `oci://` mirror). */
export function ociMirrorSourceFor(template: string, ctx: SourceContext, cli: CliConfig): OciMirrorSource {
  return new OciMirrorSource({ client: ociClientFor(ctx, cli), repositoryFor: templateRepositoryMapping(template) });
}

/**
 * A network mirror at `url`, from a `network_mirror` block or `-net-mirror`.
 * Either way it gets the credentials source of the CLI configuration for its
 * host (`TF_TOKEN_…` variables, then `credentials` blocks), as the reference:
 * terraform's `providers lock -net-mirror` passes `c.Services.CredentialsSource()`
 * to `getproviders.NewHTTPMirrorSource` (hashicorp/terraform
 * internal/command/providers_lock.go), which looks the mirror's host up in it
 * (internal/getproviders/http_mirror_source.go `mirrorHostCredentials`).
 * The token goes with the JSON documents only (sources/net-mirror.ts).
 */
export function netMirrorSourceFor(url: string, ctx: SourceContext, cli: CliConfig, trustAllHashes?: boolean): Source {
  return new NetworkMirrorSource({
    baseUrl: url,
    http: ctx.http,
    flavor: ctx.flavor,
    credentials: (host: string) => tokenForHost(cli, host),
    ...(trustAllHashes === undefined ? {} : { trustAllHashes }),
  });
}

/** Exact patterns for every `HOST/NS/TYPE` directory of a mirror (missing mirror: none). */
async function providersIn(dir: string): Promise<ProviderPattern[]> {
  const names = async (d: string): Promise<string[]> =>
    (await readdir(d, { withFileTypes: true }).catch(() => [])).filter((e) => e.isDirectory()).map((e) => e.name);
  const out: ProviderPattern[] = [];
  // A three-level walk, in order (the mirrors are small; order keeps the pattern list stable).
  for (const host of await names(dir)) {
    const hn = tryHostnameForComparison(host);
    if (!hn.ok) continue;
    // eslint-disable-next-line no-await-in-loop
    for (const namespace of await names(join(dir, host))) {
      // eslint-disable-next-line no-await-in-loop
      for (const type of await names(join(dir, host, namespace))) out.push({ hostname: hn.hostname, namespace, type });
    }
  }
  return out;
}
