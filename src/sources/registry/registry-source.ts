/**
 * The provider registry source, protocol v1 (docs/reference.md §4.1 items 52–58, §8.5;
 * OpenTofu `registry_source.go`, `registry_client.go`).
 *
 * - Discovery gives the `providers.v1` base URL of the provider's host
 *   (see `discovery.ts`); `NS/TYPE/versions` and
 *   `NS/TYPE/VERSION/download/OS/ARCH` resolve against it as URLs (keep its
 *   trailing `/`).
 * - API requests carry `X-Terraform-Version` and, when the host has a token,
 *   `Authorization: Bearer` — bound to the API's host (the reference sends the
 *   token of the provider's host to wherever its discovery document points
 *   the API). They are retried (`retries`, default 1, as
 *   `TF_REGISTRY_DISCOVERY_RETRY`).
 * - The download response is validated (protocols `>= 5, < 7` when given,
 *   `os`/`arch` echoed, URLs http(s) resolved against the response URL,
 *   `shasum` 64 hex digits, OpenTofu 1.12 `packages` parsed), then the
 *   SHA256SUMS document and its signature are fetched **without** token and
 *   without `X-Terraform-Version`, the document must list `filename` with
 *   `shasum`, and the signature is checked (see `signature.ts`) before the
 *   answer. The archive's URL and `shasum` are given to `hints.archiveURL`
 *   before that (a caller may begin the download meanwhile, believing nothing
 *   of it before the answer: sources/fetch/archive.ts `authenticatedMeta`).
 * - Reported hashes: `shasum` (registry-reported), every SHA256SUMS line as
 *   `signed` (or registry-reported when OpenTofu skipped the check), every
 *   `packages` hash of every platform (registry-reported, with its platform).
 *   A SHA256SUMS that is not a checksum list contributes none, as in the
 *   reference (only the archive's own zh: is then recorded after the fetch).
 * - What `fetchPackage` checks after the download: the `packages` size and
 *   the archive's SHA-256 (see `RegistryAuthentication`).
 *
 * Not memoised: wrap it in `MemoizeSource` (OpenTofu memoises `direct`;
 * `providers lock` uses it bare and repeats the versions call per platform).
 */
import pLimit from 'p-limit';

import {
  compareVersions,
  flavorInfo,
  goOneLine,
  goQuote,
  parseConstraints,
  parsePlatform,
  tryParseVersion,
  versionMatches,
  type Flavor,
  Platform,
  type ProviderAddress,
  unsafeNameReason,
  type Version,
} from '../../addresses/index.js';
import { isProvkitError, type ProvkitError, errorText, ErrorCode } from '../../errors.js';
import { makeHash, parseHash, type Hash } from '../../hashing/index.js';
import { formatStatus, isRetryableStatus, type HttpClient, type HttpResponse } from '../../net/index.js';
import type { CredentialsLookup } from '../credentials.js';
import {
  encodePath,
  jsonApiHeaders,
  jsonObject,
  METADATA_LIMITS,
  metadataTooLarge,
  type MetadataKind,
} from '../http-util.js';
import {
  platformNotSupported,
  sourceError,
  withContext,
  type AvailableVersions,
  type PackageMeta,
  type PackageMetaHints,
  type Source,
  type TrustedHash,
} from '../source.js';
import { acceptableHashes, findChecksum } from './checksums.js';
import type { ServiceDiscovery } from './discovery.js';
import {
  cacheKeyOf,
  checkChecksumsSignature,
  type SignatureCheck,
  signaturePolicy,
  preloadSignatureVerifier,
  type SignatureCache,
  type SignaturePolicy,
  type SigningKey,
} from './signature.js';

/** Plugin protocol versions the reference supports (`SupportedPluginProtocols`). */
const SUPPORTED_PROTOCOLS = parseConstraints('>= 5, < 7');

/**
 * How a {@link RegistrySource} talks to provider registries (provider registry protocol v1). {@link
 * createRegistrySource} builds one with every default.
 */
export interface RegistrySourceOptions {
  /** The HTTP client of API requests, SHA256SUMS files and signatures. */
  readonly http: HttpClient;
  /** Shared per run, so each host is discovered once. */
  readonly discovery: ServiceDiscovery;
  /** The flavor: the default registry host, the signature policy and the words of messages. */
  readonly flavor: Flavor;
  /** Tokens for registry hosts (`TF_TOKEN_…`, `credentials` blocks); none by default. */
  readonly credentials?: CredentialsLookup;
  /** `X-Terraform-Version` of API requests (omitted when undefined). */
  readonly terraformVersion?: string;
  /** Retries of API, SHA256SUMS and signature requests (default 1). */
  readonly retries?: number;
  /** Default: {@link signaturePolicy}(flavor) without environment switches. */
  readonly signaturePolicy?: SignaturePolicy;
  /** Verifications remembered across runs (none by default). */
  readonly signatureCache?: SignatureCache;
  /**
   * `false`: a SHA256SUMS document or signature is shared by the requests
   * for it in flight only, then fetched again, so that a long-lived source (a
   * pull-through mirror) neither grows without bound nor keeps a bad
   * signature after the registry fixed it. Default true: kept for the
   * source's life (one run).
   */
  readonly keepDocuments?: boolean;
}

/** OpenTofu 1.12 `packages` entry of one platform. */
interface PackageEntry {
  hashes: Hash[];
  size: number;
}

interface VersionsEntry {
  version: Version;
  protocols: Version[];
  /** The `platforms` the versions list names (entries that do not parse are left out). */
  platforms: Platform[];
}

function isHex64(s: unknown): s is string {
  return typeof s === 'string' && /^[0-9a-fA-F]{64}$/.test(s);
}

/** See the module comment. */
export class RegistrySource implements Source {
  private readonly policy: SignaturePolicy;
  /** Versions with their protocols, for protocol suggestions. */
  private readonly versionsSeen = new Map<string, VersionsEntry[]>();
  /** SHA256SUMS documents and signatures by URL (see `file`). */
  private readonly documents = new Map<string, Promise<Buffer>>();
  /** Signature checks by their inputs (see `checkSignature`). */
  private readonly checks = new Map<string, Promise<SignatureCheck>>();
  /** One signature check at a time, in the order asked (see `checkSignature`). */
  private readonly checking = pLimit(1);

  /** A source over the provider registries `options.discovery` finds; nothing is asked until a method is called. */
  constructor(private readonly options: RegistrySourceOptions) {
    this.policy = options.signaturePolicy ?? signaturePolicy(options.flavor);
  }

  /** {@inheritDoc Source.forDisplay} */
  forDisplay(provider?: ProviderAddress): string {
    return provider === undefined ? 'provider registries' : `registry ${provider.displayHostname}`;
  }

  /**
   * The versions the registry's versions endpoint lists for `provider`, sorted (after service discovery of its host).
   *
   * @throws {ProvkitError} `REGISTRY_PROVIDER_UNKNOWN` (404),
   *   `UNAUTHORIZED`, `SERVICE_DISCOVERY`, `INVALID_RESPONSE` (including any
   *   unparsable version), `NET_*`.
   */
  async availableVersions(provider: ProviderAddress, signal?: AbortSignal): Promise<AvailableVersions> {
    const { entries, warnings } = await this.fetchVersions(provider, signal);
    const distinct = new Map<string, Version>();
    for (const e of entries) distinct.set(e.version.toString(), e.version);
    return { versions: [...distinct.values()].sort(compareVersions), warnings };
  }

  /** The platforms the registry's versions list names for `version` (sorted). */
  async publishedPlatforms(
    provider: ProviderAddress,
    version: Version,
    signal?: AbortSignal,
  ): Promise<Platform[] | undefined> {
    const entries =
      this.versionsSeen.get(provider.toComparisonString()) ?? (await this.fetchVersions(provider, signal)).entries;
    const entry = entries.find((e) => e.version.equals(version));
    return entry ? [...entry.platforms].sort((a, b) => Platform.compare(a, b)) : undefined;
  }

  /**
   * The package for `platform` from the registry's download endpoint, its
   * SHA256SUMS and their signature fetched and checked against the flavor's
   * signature policy: the hashes reported, each with who vouches for it.
   *
   * @throws {ProvkitError} `PLATFORM_NOT_SUPPORTED` (404),
   *   `PROTOCOL_NOT_SUPPORTED`, `INVALID_RESPONSE`, `CHECKSUM_MISMATCH`
   *   (SHA256SUMS does not list the archive with its `shasum`),
   *   `SIGNATURE_INVALID`, `UNAUTHORIZED`, `SERVICE_DISCOVERY`, `NET_*`.
   */
  async packageMeta(
    provider: ProviderAddress,
    version: Version,
    platform: Platform,
    signal?: AbortSignal,
    hints?: PackageMetaHints,
  ): Promise<PackageMeta> {
    const ctx = { provider, version, platform };
    const base = await this.baseURL(provider, signal);
    const url = new URL(
      `./${encodePath(provider.namespace, provider.type, version.toString(), 'download', platform.os, platform.arch)}`,
      base,
    );
    const res = await this.api(url, 'download', provider, signal, ctx);
    if (res.status === 404) {
      const has = await this.publishedPlatforms(provider, version, signal).catch(() => undefined);
      throw platformNotSupported(
        `provider ${provider.toString()} ${version.toString()} is not available for ${platform.toString()}`,
        { ...ctx, url: res.url },
        has,
      );
    }
    const body = this.expectJson(res, provider, ctx);
    const invalid = (message: string): ProvkitError =>
      sourceError(ErrorCode.INVALID_RESPONSE, message, { ...ctx, url: res.url });

    // protocols
    const protocols = Array.isArray(body['protocols']) ? body['protocols'] : [];
    const protoVersions: Version[] = [];
    for (const p of protocols) {
      const v = typeof p === 'string' ? tryParseVersion(p) : undefined;
      if (v === undefined || !v.ok)
        throw invalid(
          `registry response includes invalid version string ${JSON.stringify(p)}${v && !v.ok ? `: ${v.error.message}` : ''}`,
        );
      protoVersions.push(v.version);
    }
    if (protoVersions.length > 0 && !protoVersions.some((v) => versionMatches(v, SUPPORTED_PROTOCOLS))) {
      const suggestion = await this.protocolSuggestion(provider, version, signal).catch(() => undefined);
      throw sourceError(
        ErrorCode.PROTOCOL_NOT_SUPPORTED,
        `provider ${provider.toString()} ${version.toString()} is not supported by this version of ${flavorInfo(this.options.flavor).productName}`,
        {
          ...ctx,
          url: res.url,
          found: protocols.join(', '),
          ...(suggestion === undefined
            ? {}
            : {
                hint: `the newest version compatible with this ${flavorInfo(this.options.flavor).command} is ${suggestion.toString()}`,
              }),
        },
      );
    }

    // target echo
    const os = body['os'];
    const arch = body['arch'];
    if (os !== platform.os || arch !== platform.arch) {
      throw invalid(
        `registry response to request for ${platform.toString()} archive has incorrect target ${String(os)}_${String(arch)}`,
      );
    }

    // URLs, resolved against the response URL; plain http is accepted (docs/reference.md §8.2 item 112).
    const link = (field: string, what: string): URL => {
      const raw = body[field];
      let u: URL | undefined;
      try {
        u = typeof raw === 'string' && raw !== '' ? new URL(raw, res.url) : undefined;
      } catch {
        u = undefined;
      }
      if (u === undefined)
        throw invalid(`registry response includes invalid ${what} URL ${JSON.stringify(raw ?? null)}`);
      if (u.protocol !== 'https:' && u.protocol !== 'http:')
        throw invalid(
          `registry response includes ${what} URL with unsupported scheme ${JSON.stringify(u.protocol.slice(0, -1))}`,
        );
      return u;
    };
    const downloadURL = link('download_url', 'download');
    const shasumsURL = link('shasums_url', 'SHA256SUMS');
    const signatureURL = link('shasums_signature_url', 'SHA256SUMS signature');

    const shasum = body['shasum'];
    if (!isHex64(shasum))
      throw invalid(
        `registry response includes invalid SHA256 hash ${JSON.stringify(shasum ?? null)}: must be 64 hexadecimal digits`,
      );
    const sha256 = shasum.toLowerCase();
    const filename = typeof body['filename'] === 'string' ? body['filename'] : '';
    // A name that becomes a path (the download's file name): a plain name or nothing (addresses/names.ts).
    const badName = unsafeNameReason(filename);
    if (badName !== undefined)
      throw invalid(`registry response includes invalid filename ${goQuote(filename)}: ${badName}`);

    const keys = this.signingKeys(body, invalid);
    const packages = this.packages(body, invalid);

    // Where the archive is and which zh: the registry says it has, before any of it is authenticated: the
    // caller may warm that host meanwhile (a hint, trusted with nothing: PackageMetaHints).
    try {
      hints?.archiveURL?.(downloadURL.href, makeHash('zh:', sha256), packages?.get(platform.toString())?.size);
    } catch {
      // A hint only.
    }

    // The documents, without credentials or X-Terraform-Version. Both are
    // requested at once (one round trip to the registry, not two); a failure
    // is reported as before, the checksums' first.
    const documentP = this.file(
      shasumsURL,
      'checksums',
      'failed to retrieve authentication checksums for provider',
      ctx,
      signal,
    );
    const signatureP = this.file(
      signatureURL,
      'signature',
      'failed to retrieve cryptographic signature for provider',
      ctx,
      signal,
    );
    // Not awaited when the checksums fail: that must not be an unhandled rejection.
    signatureP.catch(() => undefined);
    const document = await documentP;
    const signature = await signatureP;

    // Step 1 (OpenTofu 1.12 `packages`), the parts that need no archive.
    let packageSize: number | undefined;
    if (packages !== undefined) {
      const entry = packages.get(platform.toString());
      if (entry === undefined)
        throw invalid(`registry response missing package with platform ${JSON.stringify(platform.toString())}`);
      if (!(entry.size > 0)) throw invalid(`registry response has invalid package size ${entry.size}`);
      const zhs = entry.hashes.filter((h) => h.scheme === 'zh:');
      for (const zh of zhs) {
        if (zh.value !== sha256) {
          throw invalid(
            `registry response expected sha256sum is ${JSON.stringify(sha256)}, which does not match the platform's value of ${JSON.stringify(zh.value)}`,
          );
        }
      }
      if (zhs.length === 0)
        throw invalid('registry response does not contain matching sha256sum package entry and is invalid');
      packageSize = entry.size;
    }

    // Step 2: the document lists the archive with that checksum.
    const docText = document.toString('utf8');
    const line = findChecksum(docText, filename, sha256);
    if (!line.ok) {
      throw sourceError(ErrorCode.CHECKSUM_MISMATCH, line.error, {
        ...ctx,
        url: shasumsURL.href,
        expected: `zh:${sha256}`,
      });
    }

    // Step 4: the signature.
    const check = await this.checkSignature(document, signature, keys, provider, signatureURL).catch((err: unknown) => {
      throw withContext(err, { ...ctx, url: signatureURL.href });
    });

    const warnings: string[] = [...check.warnings];
    const reported: TrustedHash[] = [
      { hash: makeHash('zh:', sha256), trust: { kind: 'reported-by-registry', url: res.url }, platform },
    ];
    const lines = acceptableHashes(docText);
    if (lines.blankLines.length > 0) {
      warnings.push(
        `the SHA256SUMS of ${provider.toString()} ${version.toString()} has blank lines (line ${lines.blankLines.join(', ')}); they were skipped (Terraform 1.11 crashes on them)`,
      );
    }
    if (lines.malformed !== undefined) {
      warnings.push(
        `the SHA256SUMS of ${provider.toString()} ${version.toString()} is not a checksum list (${lines.malformed}); only the downloaded archive's checksum will be recorded`,
      );
    }
    // Who vouches for each line (hashing/disposition.ts): the key, its expiry and the document.
    const lineTrust: TrustedHash['trust'] =
      check.kind === 'signed'
        ? {
            kind: 'signed',
            keyId: check.keyId,
            keyExpires: check.keyExpires,
            ...(check.expired ? { expired: true } : {}),
            url: shasumsURL.href,
          }
        : { kind: 'reported-by-registry', url: shasumsURL.href };
    lines.hashes.forEach((hash, i) => {
      const file = lines.files[i];
      reported.push({ hash, trust: lineTrust, ...(file === undefined ? {} : { file }) });
    });
    if (packages !== undefined) {
      for (const [p, entry] of packages) {
        const plat = parsePlatform(p);
        for (const hash of entry.hashes)
          reported.push({ hash, trust: { kind: 'reported-by-registry', url: res.url }, platform: plat });
      }
    }

    return {
      provider,
      version,
      platform,
      filename,
      protocols: protocols.map(String),
      location: { kind: 'http', url: downloadURL.href },
      reportedHashes: reported,
      authentication: {
        kind: 'registry',
        sha256,
        checksumsUrl: shasumsURL.href,
        signatureUrl: signatureURL.href,
        signature:
          check.kind === 'signed'
            ? {
                kind: 'signed',
                keyId: check.keyId,
                expired: check.expired,
                keyExpires: check.keyExpires,
                fingerprint: check.fingerprint,
              }
            : { kind: 'skipped', reason: check.reason },
        ...(packageSize === undefined ? {} : { packageSize }),
      },
      warnings,
      source: this.forDisplay(provider),
    };
  }

  // -------------------------------------------------------------------------

  private async fetchVersions(
    provider: ProviderAddress,
    signal: AbortSignal | undefined,
  ): Promise<{ entries: VersionsEntry[]; warnings: string[] }> {
    const base = await this.baseURL(provider, signal);
    const url = new URL(`./${encodePath(provider.namespace, provider.type, 'versions')}`, base);
    const res = await this.api(url, 'versions', provider, signal, { provider });
    if (res.status === 404) {
      throw sourceError(
        ErrorCode.REGISTRY_PROVIDER_UNKNOWN,
        `provider registry ${provider.displayHostname} does not have a provider named ${provider.toString()}`,
        { provider, url: res.url },
      );
    }
    const body = this.expectJson(res, provider, { provider });
    const list = body['versions'];
    if (!Array.isArray(list)) {
      throw sourceError(
        ErrorCode.INVALID_RESPONSE,
        `invalid response from provider registry ${provider.displayHostname} for ${provider.toString()}: "versions" must be a list`,
        {
          provider,
          url: res.url,
        },
      );
    }
    const entries: VersionsEntry[] = [];
    for (const item of list) {
      const raw = typeof item === 'object' && item !== null ? (item as Record<string, unknown>)['version'] : undefined;
      const v = typeof raw === 'string' ? tryParseVersion(raw) : undefined;
      if (v === undefined || !v.ok) {
        throw sourceError(
          ErrorCode.INVALID_RESPONSE,
          `registry response includes invalid version string ${JSON.stringify(raw ?? null)}${v && !v.ok ? `: ${v.error.message}` : ''}`,
          { provider, url: res.url },
        );
      }
      const protos = (item as Record<string, unknown>)['protocols'];
      const protocols = (Array.isArray(protos) ? protos : []).flatMap((p) => {
        const pv = typeof p === 'string' ? tryParseVersion(p) : undefined;
        return pv?.ok ? [pv.version] : [];
      });
      const plats = (item as Record<string, unknown>)['platforms'];
      const platforms = (Array.isArray(plats) ? plats : []).flatMap((p) => {
        const rec = typeof p === 'object' && p !== null ? (p as Record<string, unknown>) : {};
        const os = rec['os'];
        const arch = rec['arch'];
        if (typeof os !== 'string' || typeof arch !== 'string') return [];
        // A platform becomes paths and file names (-all-platforms locks and mirrors each):
        // one that is not a platform name is refused with the whole answer, as in "packages".
        try {
          return [parsePlatform(`${os}_${arch}`)];
        } catch (err) {
          throw sourceError(
            ErrorCode.INVALID_RESPONSE,
            `registry response includes invalid platform ${goQuote(`${os}_${arch}`)} for ${provider.toString()} ${v.version.toString()}: ${errorText(err)}`,
            { provider, url: res.url },
          );
        }
      });
      entries.push({ version: v.version, protocols, platforms });
    }
    this.versionsSeen.set(provider.toComparisonString(), entries);
    // The registry's own text, each on one line (a `- ` line of a warning's detail: docs/reliability.md).
    const warnings = Array.isArray(body['warnings'])
      ? body['warnings'].filter((w): w is string => typeof w === 'string').map(goOneLine)
      : [];
    return { entries, warnings };
  }

  /** The newest release other than `version` whose protocols this tool supports (the reference's suggestion). */
  private async protocolSuggestion(
    provider: ProviderAddress,
    version: Version,
    signal: AbortSignal | undefined,
  ): Promise<Version | undefined> {
    const entries =
      this.versionsSeen.get(provider.toComparisonString()) ?? (await this.fetchVersions(provider, signal)).entries;
    const fitting = entries
      .filter(
        (e) =>
          !e.version.equals(version) &&
          !e.version.isPrerelease &&
          e.protocols.some((p) => versionMatches(p, SUPPORTED_PROTOCOLS)),
      )
      .map((e) => e.version)
      .sort(compareVersions);
    return fitting.at(-1);
  }

  private async baseURL(provider: ProviderAddress, signal: AbortSignal | undefined): Promise<URL> {
    const product = flavorInfo(this.options.flavor).productName;
    const discovering = this.options.discovery.discover(provider.hostname, signal);
    // Signatures will be checked and nothing remembers past checks: openpgp.js loads while discovery is in flight.
    if (this.options.signatureCache === undefined) preloadSignatureVerifier();
    const host = await discovering.catch((err: unknown) => {
      throw withContext(err, { provider });
    });
    let svc;
    try {
      svc = host.serviceURL('providers.v1');
    } catch (err) {
      throw withContext(err, { provider });
    }
    if (svc.kind === 'found') return svc.url;
    const message =
      svc.kind === 'other-version'
        ? `host ${provider.displayHostname} does not support the provider registry protocol required by this ${product} version, but may be compatible with a different ${product} version`
        : `host ${provider.displayHostname} does not offer a ${product} provider registry`;
    throw sourceError(ErrorCode.SERVICE_DISCOVERY, message, { provider });
  }

  /** An API request with the token and headers, with status handling common to both endpoints. */
  private async api(
    url: URL,
    kind: MetadataKind,
    provider: ProviderAddress,
    signal: AbortSignal | undefined,
    ctx: { provider: ProviderAddress; version?: Version; platform?: Platform },
  ): Promise<HttpResponse> {
    const token = this.options.credentials?.(provider.hostname);
    let res: HttpResponse;
    try {
      res = await this.options.http.get(url.href, {
        headers: jsonApiHeaders(this.options.terraformVersion),
        ...(token === undefined ? {} : { credential: { host: url.host, token } }),
        ...(this.options.retries === undefined ? {} : { retries: this.options.retries }),
        maxBytes: METADATA_LIMITS[kind],
        ...(signal === undefined ? {} : { signal }),
      });
    } catch (err) {
      if (isProvkitError(err, 'ABORTED')) throw withContext(err, ctx);
      throw withContext(
        metadataTooLarge(err, kind),
        { ...ctx, url: url.href },
        `could not query provider registry for ${provider.toString()}`,
      );
    }
    if (res.status === 401 || res.status === 403) {
      throw sourceError(
        ErrorCode.UNAUTHORIZED,
        token === undefined
          ? `host ${provider.displayHostname} requires authentication credentials`
          : `host ${provider.displayHostname} rejected the given authentication credentials`,
        { ...ctx, url: res.url, found: String(res.status) },
      );
    }
    if (res.status !== 200 && res.status !== 404) {
      const detail = isRetryableStatus(res.status)
        ? `the request failed${res.attempts > 1 ? ` after ${res.attempts} attempts` : ''}, please try again later: ${formatStatus(res)} returned from ${res.url}`
        : formatStatus(res);
      throw sourceError(
        ErrorCode.NET_HTTP_STATUS,
        `could not query provider registry for ${provider.toString()}: ${detail}`,
        {
          ...ctx,
          url: res.url,
          found: String(res.status),
        },
      );
    }
    return res;
  }

  private expectJson(
    res: HttpResponse,
    provider: ProviderAddress,
    ctx: { provider: ProviderAddress; version?: Version; platform?: Platform },
  ): Record<string, unknown> {
    const body = jsonObject(res.body);
    if (body === undefined) {
      throw sourceError(
        ErrorCode.INVALID_RESPONSE,
        `could not query provider registry for ${provider.toString()}: the response is not a JSON object`,
        {
          ...ctx,
          url: res.url,
        },
      );
    }
    return body;
  }

  /**
   * The signature check of a SHA256SUMS document, once per provider and
   * (document, signature, keys), kept as the documents are (`file`; with
   * `keepDocuments: false`, shared in flight only); a failure is not kept.
   * Every platform of a version shares its document, so a run checks each
   * release once, not once per platform: the check is CPU on the main thread
   * (openpgp.js parses the keys and verifies), and the first archives'
   * requests wait behind it (bench/results-wan.md, "round trips in series").
   * For the same reason the checks run one at a time, in the order asked:
   * openpgp.js awaits between its steps, so checks run together interleave
   * and all end together, the first release's (the first download's) as late
   * as the last; one after another, the first ends after its own work alone.
   */
  private checkSignature(
    document: Buffer,
    signature: Buffer,
    keys: Parameters<typeof checkChecksumsSignature>[0]['keys'],
    provider: ProviderAddress,
    signatureURL: URL,
  ): Promise<SignatureCheck> {
    const key = `${provider.toString()}\0${cacheKeyOf(document, signature, keys)}`;
    const shared = this.checks.get(key);
    if (shared) return shared;
    const mine = this.checking(() =>
      checkChecksumsSignature({
        document,
        signature,
        keys,
        provider,
        policy: this.policy,
        signatureUrl: signatureURL.href,
        ...(this.options.signatureCache ? { cache: this.options.signatureCache } : {}),
      }),
    );
    this.checks.set(key, mine);
    const forget = (): void => {
      if (this.checks.get(key) === mine) this.checks.delete(key);
    };
    mine.then(this.options.keepDocuments === false ? forget : undefined, forget);
    return mine;
  }

  /**
   * SHA256SUMS or its signature: no token, no X-Terraform-Version, the
   * registry client's retries. One document serves every platform of a
   * version, so it is fetched once per URL for the life of the source
   * (concurrent askers share the request; with `keepDocuments: false`, only
   * they); a failure is not kept: a caller that waited on a failed request
   * asks again for itself.
   */
  private async file(
    url: URL,
    kind: MetadataKind,
    what: string,
    ctx: { provider: ProviderAddress; version: Version; platform: Platform },
    signal: AbortSignal | undefined,
  ): Promise<Buffer> {
    const shared = this.documents.get(url.href);
    if (shared) {
      const got = await shared.catch(() => undefined);
      if (got !== undefined) return got;
    }
    const mine = this.fetchFile(url, kind, what, ctx, signal);
    this.documents.set(url.href, mine);
    const forget = (): void => {
      if (this.documents.get(url.href) === mine) this.documents.delete(url.href);
    };
    mine.then(this.options.keepDocuments === false ? forget : undefined, forget);
    return mine;
  }

  private async fetchFile(
    url: URL,
    kind: MetadataKind,
    what: string,
    ctx: { provider: ProviderAddress; version: Version; platform: Platform },
    signal: AbortSignal | undefined,
  ): Promise<Buffer> {
    let res: HttpResponse;
    try {
      res = await this.options.http.get(url.href, {
        ...(this.options.retries === undefined ? {} : { retries: this.options.retries }),
        maxBytes: METADATA_LIMITS[kind],
        ...(signal === undefined ? {} : { signal }),
      });
    } catch (err) {
      if (isProvkitError(err, 'ABORTED')) throw withContext(err, ctx);
      throw withContext(
        metadataTooLarge(err, kind),
        { ...ctx, url: url.href },
        `could not query provider registry for ${ctx.provider.toString()}: ${what}`,
      );
    }
    if (res.status !== 200) {
      throw sourceError(
        ErrorCode.NET_HTTP_STATUS,
        `could not query provider registry for ${ctx.provider.toString()}: ${what}: ${formatStatus(res)} returned from ${new URL(res.url).host}`,
        { ...ctx, url: res.url, found: String(res.status) },
      );
    }
    return res.body;
  }

  private signingKeys(body: Record<string, unknown>, invalid: (m: string) => ProvkitError): SigningKey[] {
    const sk = body['signing_keys'];
    if (sk === undefined || sk === null) return [];
    const list = typeof sk === 'object' ? (sk as Record<string, unknown>)['gpg_public_keys'] : undefined;
    if (list === undefined || list === null) return [];
    if (!Array.isArray(list))
      throw invalid('registry response includes invalid signing_keys: "gpg_public_keys" must be a list');
    return list.map((k) => {
      const o = typeof k === 'object' && k !== null ? (k as Record<string, unknown>) : {};
      const armor = o['ascii_armor'];
      if (typeof armor !== 'string') throw invalid('registry response includes a signing key without "ascii_armor"');
      const trust = o['trust_signature'];
      return { asciiArmor: armor, ...(typeof trust === 'string' && trust !== '' ? { trustSignature: trust } : {}) };
    });
  }

  /** OpenTofu 1.12 `packages`: every key a platform, every hash parsable, or the whole response is refused. */
  private packages(
    body: Record<string, unknown>,
    invalid: (m: string) => ProvkitError,
  ): Map<string, PackageEntry> | undefined {
    const raw = body['packages'];
    if (raw === undefined || raw === null) return undefined;
    if (typeof raw !== 'object' || Array.isArray(raw))
      throw invalid('registry response includes invalid "packages": must be an object');
    const out = new Map<string, PackageEntry>();
    for (const [key, value] of Object.entries(raw as Record<string, unknown>)) {
      try {
        parsePlatform(key);
      } catch (err) {
        throw invalid(`registry response includes invalid platform ${goQuote(key)} in "packages": ${errorText(err)}`);
      }
      const o = typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
      const hashes: Hash[] = [];
      for (const h of Array.isArray(o['hashes']) ? o['hashes'] : []) {
        try {
          if (typeof h !== 'string') throw new Error('not a string');
          hashes.push(parseHash(h));
        } catch (err) {
          throw invalid(
            `registry response includes invalid hash ${JSON.stringify(h)} for ${key} in "packages": ${errorText(err)}`,
          );
        }
      }
      const size = typeof o['package_size'] === 'number' ? o['package_size'] : 0;
      out.set(key, { hashes, size });
    }
    return out;
  }
}
