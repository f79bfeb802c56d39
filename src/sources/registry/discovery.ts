/**
 * Terraform-native service discovery (docs/reference.md §4.1 items 52–53; `opentofu/svchost`
 * `disco/`), once per host per run.
 *
 * - `GET https://HOST/.well-known/terraform.json` (HOST in comparison form,
 *   with its port), `Accept: application/json`, the host's token when there
 *   is one; the client's retries (default 1), the client's redirect limit, a
 *   10 s connect timeout by default. The reference's discovery client does not
 *   retry (svchost `disco.go` uses a plain `http.Client`), so one HTTP 500 or
 *   reset fails a whole `init`; retrying it changes no successful result and
 *   lets a run ride out a transient fault (a deliberate deviation,
 *   docs/reliability.md; pinned by test/e2e/fault-matrix.test.ts).
 * - 200 with media type `application/json` and a JSON object of at most
 *   1 MiB: the services. 404: the host has no services. Anything else fails.
 * - Results are cached per host for the life of the object (share one per
 *   run); failures are not cached, so a later call retries.
 * - `overrides` (CLI config `host "NAME" { services = {…} }`) replace
 *   discovery for a host entirely.
 * - A service URL (`providers.v1`) may be relative: it resolves against the
 *   *final* discovery URL; http(s) only, no user info, fragment dropped.
 */
import type { Hostname } from '../../addresses/index.js';
import { tryHostnameForComparison } from '../../addresses/index.js';
import { isProvkitError, ProvkitError, errorText, ErrorCode } from '../../errors.js';
import { type HttpClient } from '../../net/index.js';
import type { CredentialsLookup } from '../credentials.js';
import { jsonObject, mediaType, METADATA_LIMITS, metadataTooLarge } from '../http-util.js';
import { HostWarmer } from './warm-hosts.js';

/** A discovery document: service ID → value (usually a URL string). */
export type ServiceMap = Readonly<Record<string, unknown>>;

/** Options of a {@link ServiceDiscovery}. */
export interface ServiceDiscoveryOptions {
  /** The client that fetches `/.well-known/terraform.json`. */
  readonly http: HttpClient;
  /** The token of each host (`TF_TOKEN_…`, `credentials` blocks), sent with its discovery request. */
  readonly credentials?: CredentialsLookup;
  /** Forced services per host (keys as written: Unicode and ports allowed). */
  readonly overrides?: Readonly<Record<string, ServiceMap>> | ReadonlyMap<string, ServiceMap>;
  /** Default 10 s (`TF_REGISTRY_CLIENT_TIMEOUT`'s default). */
  readonly connectTimeoutMs?: number;
  /** Aborts every discovery this object starts without a signal of its own. */
  readonly signal?: AbortSignal;
}

/** The services of one host. */
export class DiscoveredHost {
  constructor(
    /** The host whose services these are. */
    readonly host: Hostname,
    /** Undefined when the host has none (404). */
    readonly services: ServiceMap | undefined,
    /** The final discovery URL, or undefined for an override. */
    readonly discoveryUrl: string | undefined,
  ) {}

  /**
   * The URL of service `id` (`providers.v1`): `found`, or why not —
   * `none` (no such service), `other-version` (`providers.vN` exists for
   * another N).
   *
   * @throws {ProvkitError} `SERVICE_DISCOVERY` for an unusable URL.
   */
  serviceURL(id: string): { kind: 'found'; url: URL } | { kind: 'none' } | { kind: 'other-version' } {
    const services = this.services;
    if (services === undefined) return { kind: 'none' };
    const raw = services[id];
    if (typeof raw !== 'string') {
      const name = id.slice(0, id.lastIndexOf('.'));
      return Object.keys(services).some((k) => k.startsWith(`${name}.`)) ? { kind: 'other-version' } : { kind: 'none' };
    }
    let url: URL;
    try {
      url = this.discoveryUrl === undefined ? new URL(raw) : new URL(raw, this.discoveryUrl);
    } catch (err) {
      throw new ProvkitError(ErrorCode.SERVICE_DISCOVERY, `Failed to parse service URL: ${JSON.stringify(raw)}`, {
        url: raw,
        cause: err,
      });
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      throw new ProvkitError(
        ErrorCode.SERVICE_DISCOVERY,
        `Service URL is using an unsupported scheme: ${url.protocol.slice(0, -1)}`,
        { url: raw },
      );
    }
    if (url.username !== '' || url.password !== '') {
      throw new ProvkitError(ErrorCode.SERVICE_DISCOVERY, 'Embedded username/password information is not permitted', {
        url: raw,
      });
    }
    url.hash = '';
    return { kind: 'found', url };
  }
}

/** See the module comment. */
export class ServiceDiscovery {
  private readonly cache = new Map<Hostname, Promise<DiscoveredHost>>();
  private readonly overrides = new Map<Hostname, ServiceMap>();
  /** Hosts whose discovery document has arrived (no more connections to warm for them). */
  private readonly answered = new Set<Hostname>();
  private readonly warmer: HostWarmer;

  /**
   * Service discovery (`/.well-known/terraform.json`) over `options.http`; each host is asked once for the
   * discovery's life, hosts in `options` overrides not at all.
   */
  constructor(private readonly options: ServiceDiscoveryOptions) {
    this.warmer = new HostWarmer(options.http);
    const given = options.overrides;
    const entries: Array<[string, ServiceMap]> =
      given === undefined
        ? []
        : given instanceof Map
          ? [...(given as ReadonlyMap<string, ServiceMap>)]
          : Object.entries(given as Readonly<Record<string, ServiceMap>>);
    for (const [given, services] of entries) {
      const h = tryHostnameForComparison(given);
      if (!h.ok)
        throw new ProvkitError(
          ErrorCode.INVALID_SOURCE_CONFIG,
          `The host ${JSON.stringify(given)} block has an invalid hostname: ${h.error}`,
          { found: given },
        );
      this.overrides.set(h.hostname, services);
    }
  }

  /**
   * The services of `host` (cached).
   *
   * @throws {ProvkitError} `SERVICE_DISCOVERY` (the reference's texts),
   *   `ABORTED`.
   */
  discover(host: Hostname, signal?: AbortSignal): Promise<DiscoveredHost> {
    const forced = this.overrides.get(host);
    if (forced !== undefined) return Promise.resolve(new DiscoveredHost(host, forced, undefined));
    let p = this.cache.get(host);
    if (p === undefined) {
      p = this.fetch(host, signal);
      this.cache.set(host, p);
      p.then(
        () => this.answered.add(host),
        () => this.cache.delete(host),
      );
    }
    // Each caller waiting for the document will ask the host next (warm-hosts.ts); a host block's services are not warmed.
    if (!this.answered.has(host)) this.warmer.expect(`https://${host.toString()}`);
    return p;
  }

  private async fetch(host: Hostname, signal: AbortSignal | undefined): Promise<DiscoveredHost> {
    const url = `https://${host}/.well-known/terraform.json`;
    const token = this.options.credentials?.(host);
    const fail = (message: string, extra: { cause?: unknown; found?: string } = {}): ProvkitError =>
      new ProvkitError(ErrorCode.SERVICE_DISCOVERY, message, { url, ...extra });
    let res;
    try {
      res = await this.options.http.get(url, {
        headers: { accept: 'application/json' },
        ...(token === undefined ? {} : { credential: { host: new URL(url).host, token } }),
        connectTimeoutMs: this.options.connectTimeoutMs ?? 10_000,
        maxBytes: METADATA_LIMITS.discovery,
        ...((signal ?? this.options.signal) ? { signal: signal ?? this.options.signal } : {}),
      });
    } catch (err) {
      if (isProvkitError(err, 'ABORTED')) throw err;
      if (isProvkitError(err, ErrorCode.NET_RESPONSE_TOO_LARGE)) {
        // The reference says "discovery doc response is too large" (svchost `disco.go`); this names the URL and the limit.
        const e = metadataTooLarge(err, 'discovery') as ProvkitError;
        const { code: _code, message, ...context } = e.toJSON();
        throw new ProvkitError(ErrorCode.SERVICE_DISCOVERY, message, { ...context, cause: err });
      }
      throw fail(`could not connect to ${host}: failed to request discovery document: ${errorText(err)}`, {
        cause: err,
      });
    }
    if (res.status === 404) return new DiscoveredHost(host, undefined, res.url);
    if (res.status !== 200) {
      throw fail(`failed to request discovery document: ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`, {
        found: String(res.status),
      });
    }
    const header = res.headers.get('content-type');
    const type = mediaType(header);
    if (type === undefined)
      throw fail(`discovery URL returned a malformed Content-Type ${JSON.stringify(header ?? '')}`);
    if (type !== 'application/json')
      throw fail(`discovery URL returned an unsupported Content-Type ${JSON.stringify(type)}`);
    const services = jsonObject(res.body);
    if (services === undefined) throw fail('failed to decode discovery document as a JSON object');
    return new DiscoveredHost(host, services, res.url);
  }
}
