/**
 * The network mirror source (docs/reference.md §4.3 items 64–70; OpenTofu
 * `http_mirror_source.go`, docs `provider-network-mirror-protocol`).
 *
 * - The base URL must be `https:` with a host. Endpoints are resolved
 *   relative to it **as URLs**, so a base without a trailing `/` loses its
 *   last path segment (docs/reference.md §10 item 142: `https://host/mirror` makes every
 *   provider "not found"); the not-found error then carries a hint.
 * - `GET BASE/HOST/NS/TYPE/index.json` (HOST in comparison form, i.e.
 *   punycode) → versions; unparsable versions are skipped with a warning.
 * - `GET BASE/HOST/NS/TYPE/VERSION.json` → archives per platform: `url`
 *   resolved against the final URL of that document, `hashes` parsed.
 * - JSON must be served as `application/json` (parameters allowed).
 * - The mirror host's token goes with the JSON requests only; archives are
 *   fetched without credentials (docs/reference.md §4.3 item 68). At most 5 redirects;
 *   the JSON requests are not retried (RetryMax 0).
 * - Reported hashes carry trust `reported-by-mirror`; after the download at
 *   least one `h1:`/`zh:` must match (see fetch.ts). An empty list means the
 *   package is installed unverified: the metadata gets a warning.
 *
 * Fixed on purpose (docs/reference.md §4.3 item 70): a provider host with a port works (the
 * reference builds the relative path `localhost:8443/…`, which parses as a URL
 * with scheme `localhost`); here the path is always resolved as a path.
 */
import type { Flavor, Platform, ProviderAddress, Version } from '../addresses/index.js';
import {
  compareVersions,
  flavorInfo,
  goQuote,
  parsePlatform,
  tryParseVersion,
  unsafeNameReason,
} from '../addresses/index.js';
import { isProvkitError, errorText, ErrorCode } from '../errors.js';
import { parseHash, preferredHashes, type Hash } from '../hashing/index.js';
import { type HttpClient, type HttpResponse } from '../net/index.js';
import type { CredentialsLookup } from './credentials.js';
import {
  encodePath,
  jsonApiHeaders,
  jsonObject,
  mediaType,
  METADATA_LIMITS,
  metadataTooLarge,
  urlBasename,
  urlHostname,
} from './http-util.js';
import {
  platformNotSupported,
  sourceError,
  withContext,
  type AvailableVersions,
  type PackageMeta,
  type Source,
  type TrustedHash,
} from './source.js';

/**
 * Where a {@link NetworkMirrorSource} asks: a network mirror's base URL (the provider network mirror protocol), and
 * how.
 */
export interface NetworkMirrorOptions {
  /** The mirror base URL (https; keep the trailing `/`). */
  readonly baseUrl: string;
  /** The HTTP client the mirror's index documents and packages are fetched with. */
  readonly http: HttpClient;
  /** The flavor: the default registry host and the words of messages. */
  readonly flavor: Flavor;
  /** Token lookup for the mirror's own host. */
  readonly credentials?: CredentialsLookup;
  /** `X-Terraform-Version` header value (omitted when undefined). */
  readonly terraformVersion?: string;
  /**
   * OpenTofu 1.12 `trust_all_hashes`: report every platform's hashes (still
   * `reported-by-mirror`), not only the target's.
   */
  readonly trustAllHashes?: boolean;
}

/** See the module comment. */
export class NetworkMirrorSource implements Source {
  private readonly base: URL;

  /**
   * @throws {ProvkitError} `INVALID_SOURCE_CONFIG` for a URL that is not
   *   `https:` with a host (the reference's text).
   */
  constructor(private readonly options: NetworkMirrorOptions) {
    let url: URL | undefined;
    try {
      url = new URL(options.baseUrl);
    } catch {
      url = undefined;
    }
    if (url === undefined || url.protocol !== 'https:' || url.host === '') {
      throw sourceError(
        ErrorCode.INVALID_SOURCE_CONFIG,
        `Cannot use ${JSON.stringify(options.baseUrl)} as a URL for a network provider mirror: the mirror must be at an https: URL.`,
        { url: options.baseUrl },
      );
    }
    this.base = url;
  }

  /** {@inheritDoc Source.forDisplay} */
  forDisplay(): string {
    return this.base.href;
  }

  /**
   * The versions the mirror's `HOST/NS/TYPE/index.json` lists for `provider`, sorted.
   *
   * @throws {ProvkitError} `PROVIDER_NOT_FOUND` (404), `UNAUTHORIZED`,
   *   `INVALID_RESPONSE`, `NET_*`.
   */
  async availableVersions(provider: ProviderAddress, signal?: AbortSignal): Promise<AvailableVersions> {
    const url = this.endpoint(provider, 'index.json');
    const res = await this.getJson(url, provider, undefined, signal);
    if (res.status === 404) {
      throw sourceError(
        ErrorCode.PROVIDER_NOT_FOUND,
        `provider ${provider.toString()} was not found in any of the search locations`,
        {
          provider,
          url: res.url,
          ...(this.base.pathname.endsWith('/')
            ? {}
            : {
                hint: `the mirror URL ${this.base.href} has no trailing "/", so its last path segment is dropped when resolving ${url.href}`,
              }),
        },
      );
    }
    const doc = this.document(res, provider);
    const raw = doc['versions'];
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      throw this.invalid(
        `invalid response from provider mirror ${this.base.href} for ${provider.toString()}: "versions" must be an object`,
        provider,
        res.url,
      );
    }
    const versions: Version[] = [];
    const warnings: string[] = [];
    for (const s of Object.keys(raw)) {
      const v = tryParseVersion(s);
      if (v.ok) versions.push(v.version);
      else
        warnings.push(
          `provider mirror ${this.base.href} lists an invalid version ${JSON.stringify(s)} for ${provider.toString()}: ${v.error.message}; ignoring it`,
        );
    }
    versions.sort(compareVersions);
    return { versions, warnings };
  }

  /**
   * The package for `platform` as the version's `VERSION.json` describes it: its URL and the hashes the mirror
   * reports (each `reported-by-mirror`).
   *
   * @throws {ProvkitError} `PLATFORM_NOT_SUPPORTED` (no archive for the
   *   platform), `INVALID_RESPONSE` (including a 404 for a version the index
   *   listed, which is a hard error), `UNAUTHORIZED`, `NET_*`.
   */
  async packageMeta(
    provider: ProviderAddress,
    version: Version,
    platform: Platform,
    signal?: AbortSignal,
  ): Promise<PackageMeta> {
    const url = this.endpoint(provider, `${version.toString()}.json`);
    const ctx = { provider, version, platform };
    const res = await this.getJson(url, provider, version, signal);
    if (res.status === 404) {
      throw this.invalid(
        `provider mirror does not have archive index for previously-reported ${provider.toString()} version ${version.toString()}`,
        provider,
        res.url,
        ctx,
      );
    }
    const doc = this.document(res, provider, version);
    const archives = doc['archives'];
    if (typeof archives !== 'object' || archives === null || Array.isArray(archives)) {
      throw this.invalid(
        `invalid response from provider mirror ${this.base.href} for ${provider.toString()} ${version.toString()}: "archives" must be an object`,
        provider,
        res.url,
        ctx,
      );
    }
    const byPlatform = archives as Record<string, unknown>;
    // Every key is a platform name, or the document is refused (names become paths: addresses/names.ts).
    const listed: Platform[] = [];
    for (const key of Object.keys(byPlatform)) {
      try {
        listed.push(parsePlatform(key));
      } catch (err) {
        throw this.invalid(
          `provider mirror ${this.base.href} returned an invalid platform ${goQuote(key)} in the "archives" of ${provider.toString()} ${version.toString()}: ${errorText(err)}`,
          provider,
          res.url,
          ctx,
        );
      }
    }
    const entry = byPlatform[platform.toString()];
    if (entry === undefined) {
      throw platformNotSupported(
        `provider mirror ${this.base.href} does not have a package of ${provider.toString()} ${version.toString()} for ${platform.toString()}`,
        { ...ctx, url: res.url },
        listed,
      );
    }
    const target = this.archive(entry, res.url, ctx);
    // The URL's last segment names the download (a path component): a plain name (addresses/names.ts).
    const filename = urlBasename(target.url);
    const badName = unsafeNameReason(filename);
    if (badName !== undefined) {
      throw this.invalid(
        `provider mirror returned an archive URL whose file name ${goQuote(filename)} cannot be used: ${badName}`,
        provider,
        res.url,
        ctx,
      );
    }
    const mirror = this.base.href;
    const reported: TrustedHash[] = target.hashes.map((hash) => ({
      hash,
      trust: { kind: 'reported-by-mirror', mirror },
      platform,
    }));
    if (this.options.trustAllHashes) {
      for (const otherPlatform of listed) {
        if (otherPlatform.equals(platform)) continue;
        const other = byPlatform[otherPlatform.toString()];
        for (const hash of this.archive(other, res.url, { ...ctx, platform: otherPlatform }).hashes) {
          reported.push({ hash, trust: { kind: 'reported-by-mirror', mirror }, platform: otherPlatform });
        }
      }
    }
    const warnings: string[] = [];
    const required = preferredHashes(target.hashes);
    if (target.hashes.length > 0 && required.length === 0) {
      throw this.invalid(
        `this version of ${flavorInfo(this.options.flavor).productName} does not support any of the checksum formats given for this provider`,
        provider,
        res.url,
        ctx,
      );
    }
    if (target.hashes.length === 0) {
      warnings.push(
        `provider mirror ${mirror} lists no checksums for ${provider.toString()} ${version.toString()} (${platform.toString()}): the package cannot be verified`,
      );
    }
    return {
      provider,
      version,
      platform,
      filename,
      location: { kind: 'http', url: target.url.href },
      reportedHashes: reported,
      ...(required.length > 0 ? { authentication: { kind: 'mirror-hashes', mirror, hashes: required } } : {}),
      warnings,
      source: mirror,
    };
  }

  /** `BASE/HOST/NS/TYPE/<leaf>`, resolved as a path (`./`), so a `host:port` segment stays a path. */
  private endpoint(provider: ProviderAddress, leaf: string): URL {
    return new URL(`./${encodePath(provider.hostname, provider.namespace, provider.type, leaf)}`, this.base);
  }

  private credential(): { credential: { host: string; token: string } } | Record<string, never> {
    const host = urlHostname(this.base);
    const token = host === undefined ? undefined : this.options.credentials?.(host);
    return token === undefined ? {} : { credential: { host: this.base.host, token } };
  }

  private async getJson(
    url: URL,
    provider: ProviderAddress,
    version: Version | undefined,
    signal: AbortSignal | undefined,
  ): Promise<HttpResponse> {
    const kind = version === undefined ? 'mirrorIndex' : 'mirrorVersion';
    let res: HttpResponse;
    try {
      res = await this.options.http.get(url.href, {
        headers: jsonApiHeaders(this.options.terraformVersion),
        ...this.credential(),
        // The registry client's retries, as the reference borrows them
        // (hashicorp/terraform internal/getproviders/http_mirror_source.go:
        // `retryableClient.RetryMax = discoveryRetry`).
        maxRedirects: 5,
        maxBytes: METADATA_LIMITS[kind],
        ...(signal === undefined ? {} : { signal }),
      });
    } catch (rawErr) {
      const err = metadataTooLarge(rawErr, kind);
      if (isProvkitError(err, ErrorCode.NET_TOO_MANY_REDIRECTS)) {
        throw sourceError(
          ErrorCode.NET_TOO_MANY_REDIRECTS,
          `failed to query provider mirror ${this.base.href} for ${provider.toString()}: too many redirects`,
          {
            provider,
            ...(version === undefined ? {} : { version }),
            url: url.href,
            cause: err,
          },
        );
      }
      throw withContext(
        err,
        { provider, ...(version === undefined ? {} : { version }), url: url.href },
        `failed to query provider mirror ${this.base.href} for ${provider.toString()}`,
      );
    }
    if (res.status === 401 || res.status === 403) {
      // The reference always claims credentials were given here (docs/reference.md §4.3 item 65).
      const final = new URL(res.url);
      throw sourceError(ErrorCode.UNAUTHORIZED, `host ${final.host} rejected the given authentication credentials`, {
        provider,
        ...(version === undefined ? {} : { version }),
        url: res.url,
        found: String(res.status),
      });
    }
    if (res.status !== 200 && res.status !== 404) {
      throw sourceError(
        ErrorCode.NET_HTTP_STATUS,
        `failed to query provider mirror ${this.base.href} for ${provider.toString()}: server returned unsuccessful status ${res.status}`,
        { provider, ...(version === undefined ? {} : { version }), url: res.url, found: String(res.status) },
      );
    }
    return res;
  }

  private document(res: HttpResponse, provider: ProviderAddress, version?: Version): Record<string, unknown> {
    const ctx = { provider, ...(version === undefined ? {} : { version }) };
    if (mediaType(res.headers.get('content-type')) !== 'application/json') {
      throw this.invalid('response has invalid Content-Type: must be application/json', provider, res.url, {
        ...ctx,
        found: res.headers.get('content-type') ?? '',
      });
    }
    const doc = jsonObject(res.body);
    if (doc === undefined) {
      throw this.invalid(
        `invalid response from provider mirror ${this.base.href} for ${provider.toString()}: not a JSON object`,
        provider,
        res.url,
        ctx,
      );
    }
    return doc;
  }

  private archive(
    entry: unknown,
    docUrl: string,
    ctx: { provider: ProviderAddress; version: Version; platform: Platform },
  ): { url: URL; hashes: Hash[] } {
    const e = typeof entry === 'object' && entry !== null ? (entry as Record<string, unknown>) : {};
    const rawUrl = e['url'];
    if (typeof rawUrl !== 'string' || rawUrl === '') {
      throw this.invalid(
        `provider mirror returned an archive entry without a "url" for ${ctx.platform.toString()}`,
        ctx.provider,
        docUrl,
        ctx,
      );
    }
    let url: URL;
    try {
      url = new URL(rawUrl, docUrl);
    } catch (err) {
      throw this.invalid(
        `provider mirror returned an invalid archive URL ${JSON.stringify(rawUrl)}: ${errorText(err)}`,
        ctx.provider,
        docUrl,
        ctx,
      );
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      throw this.invalid(
        `provider mirror returned an archive URL with unsupported scheme ${JSON.stringify(url.protocol)}`,
        ctx.provider,
        docUrl,
        ctx,
      );
    }
    const rawHashes = e['hashes'] ?? [];
    if (!Array.isArray(rawHashes))
      throw this.invalid(
        'provider mirror returned invalid provider hashes: "hashes" must be a list',
        ctx.provider,
        docUrl,
        ctx,
      );
    const hashes: Hash[] = [];
    for (const h of rawHashes) {
      try {
        if (typeof h !== 'string') throw new Error('not a string');
        hashes.push(parseHash(h));
      } catch (err) {
        throw this.invalid(
          `provider mirror returned invalid provider hash ${JSON.stringify(h)}: ${errorText(err)}`,
          ctx.provider,
          docUrl,
          ctx,
        );
      }
    }
    return { url, hashes };
  }

  private invalid(
    message: string,
    provider: ProviderAddress,
    url: string,
    ctx: { version?: Version; platform?: Platform; found?: string } = {},
  ): Error {
    return sourceError(ErrorCode.INVALID_RESPONSE, message, { provider, url, ...ctx });
  }
}
