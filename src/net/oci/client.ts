/**
 * A client of the OCI Distribution API v1.1
 * (opencontainers/distribution-spec spec.md), just what a provider mirror
 * needs: list tags, read manifests and blobs, and publish (check, mount and
 * upload blobs, put manifests).
 *
 * - Always https (`https://REGISTRY/v2/NAME/…`); the API root `GET /v2/` is
 *   never called (OpenTofu does not either: some registries challenge it
 *   even for anonymous pulls).
 * - Every request carries an explicit `Accept`; manifest reads list the OCI
 *   index and image manifest types (distribution 2.8 answers 404 to a
 *   manifest request whose `Accept` lacks the index type).
 * - A `401` is answered once per request (see `auth.ts`), then the request
 *   is repeated.
 * - Tag lists follow `Link: <…>; rel="next"` pages (a registry may ignore
 *   `n`, as distribution 2.8 does), bounded in total, all pages together
 *   ({@link TAG_LIST_LIMITS}): each page is read up to what is left of the
 *   byte budget, so memory and parsing stay bounded whatever a registry sends.
 * - Uploads (`POST …/blobs/uploads/`, then `PUT ?digest=` for a blob up to
 *   the chunk size, else `PATCH` chunks with `Content-Range` and a final
 *   `PUT`): the caller reads each chunk from its file, so memory stays at
 *   one chunk per upload whatever the blob's size. Mutating requests are
 *   not retried (an upload session cannot be resumed blindly); a failed
 *   blob upload fails the publish, and running it again skips what is there.
 *
 * Errors are {@link ProvkitError}s naming the URL, with the registry's OCI
 * error codes (`NAME_UNKNOWN: repository name not known to registry`) in the
 * message when it sent some.
 */
import { ErrorCode, ProvkitError } from '../../errors.js';
import type { HttpClient, HttpResponse } from '../client.js';
import type { BearerCredential, HttpMethod } from '../types.js';
import { OciAuth, type OciCredentialsLookup, parseChallenge, repositoryScope } from './auth.js';
import { parseDigest, sha256Digest } from './reference.js';

/** OCI media types provkit reads and writes. */
export const MediaType = {
  INDEX: 'application/vnd.oci.image.index.v1+json',
  MANIFEST: 'application/vnd.oci.image.manifest.v1+json',
  DESCRIPTOR: 'application/vnd.oci.descriptor.v1+json',
  CONFIG: 'application/vnd.oci.image.config.v1+json',
  EMPTY: 'application/vnd.oci.empty.v1+json',
  DOCKER_LIST: 'application/vnd.docker.distribution.manifest.list.v2+json',
  DOCKER_MANIFEST: 'application/vnd.docker.distribution.manifest.v2+json',
} as const;

/** Every manifest type, for reading a tag whose type is not known yet (ORAS-Go's `defaultManifestMediaTypes`). */
export const ALL_MANIFEST_TYPES = [
  MediaType.INDEX,
  MediaType.MANIFEST,
  MediaType.DOCKER_LIST,
  MediaType.DOCKER_MANIFEST,
] as const;

/** The largest manifest read (OpenTofu's `ociImageManifestSizeLimitMiB`, the distribution spec's recommended push limit). */
export const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;

/**
 * What a repository's tag list may hold, all pages together (docs/reliability.md,
 * "Metadata size limits"): far above any provider repository (one tag per
 * version) or a busy container repository (tens of thousands of tags, a few
 * MB of JSON).
 */
export const TAG_LIST_LIMITS = { bytes: 16 * 1024 * 1024, tags: 100_000, pages: 1_000 } as const;

/** Default upload chunk: blobs up to this size go in one request, larger ones in chunks of it. */
export const DEFAULT_CHUNK_SIZE = 8 * 1024 * 1024;

/** How an {@link OciClient} reaches its registry: the HTTP client, credentials, user agent, chunk size. */
export interface OciClientOptions {
  /** The client every request goes through (TLS, proxies, retries of reads); token requests too. */
  readonly http: HttpClient;
  /** Each repository's credentials, asked once per repository when a registry challenges; undefined: anonymous. */
  readonly credentials?: OciCredentialsLookup;
  /** Upload chunk size in bytes (default {@link DEFAULT_CHUNK_SIZE}). */
  readonly chunkSize?: number;
  /** The `User-Agent` of the token requests; undefined: none is set beyond the HTTP client's. */
  readonly userAgent?: string;
}

/** A manifest as read. */
export interface FetchedManifest {
  /** The response's `Content-Type` (media type only). */
  readonly mediaType: string | undefined;
  /** The manifest's bytes as the registry sent them (its digest is over exactly these). */
  readonly body: Buffer;
  /** The digest of {@link body}. */
  readonly digest: string;
  /** The URL it was read from, after redirects. */
  readonly url: string;
  /** The response's `ETag`, when the registry sent one (for a conditional update, {@link OciRepository.putManifestIf}). */
  readonly etag?: string;
}

/**
 * The precondition of a conditional manifest update (RFC 9110 §13.1): the
 * reference still names what was read (`If-Match` with its `ETag`), or
 * names nothing yet (`If-None-Match: *`).
 */
export type ManifestCondition = { readonly ifMatch: string } | { readonly ifNoneMatch: '*' };

/** Reads a chunk of a blob: `length` bytes from `offset`. */
export type ChunkReader = (offset: number, length: number) => Promise<Buffer>;

/** See the module comment. One per run: it holds the authentication state. */
export class OciClient {
  /** The authentication state (schemes, tokens, credentials) every repository of this client shares. */
  readonly auth: OciAuth;
  /** Upload chunk size in bytes: {@link OciClientOptions.chunkSize}, at least 1. */
  readonly chunkSize: number;

  constructor(private readonly options: OciClientOptions) {
    this.auth = new OciAuth(options.http, options.credentials, options.userAgent);
    this.chunkSize = Math.max(1, options.chunkSize ?? DEFAULT_CHUNK_SIZE);
  }

  /** A repository of a registry (`host[:port]`, `path/name`). */
  repository(registry: string, name: string): OciRepository {
    return new OciRepository(this.options.http, this.auth, registry, name, this.chunkSize);
  }
}

/** What a request needs besides its URL. */
interface CallOptions {
  readonly method: HttpMethod;
  readonly actions: readonly string[];
  /** More scopes (a mount's source repository). */
  readonly extraScopes?: readonly string[];
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: Buffer;
  readonly maxBytes?: number;
  readonly signal?: AbortSignal;
}

/** One repository; see {@link OciClient}. */
export class OciRepository {
  /** `https://REGISTRY` (the URL form: lower case, no default port). */
  readonly origin: string;
  private readonly host: string;

  constructor(
    private readonly http: HttpClient,
    private readonly auth: OciAuth,
    /** The registry, `host[:port]` as configured. */
    readonly registry: string,
    /** The repository's name in the registry (`path/name`), as the API's URLs carry it. */
    readonly name: string,
    private readonly chunkSize: number,
  ) {
    const u = new URL(`https://${registry}`);
    this.origin = u.origin;
    this.host = u.host;
  }

  /** `REGISTRY/NAME`, for messages. */
  toString(): string {
    return `${this.registry}/${this.name}`;
  }

  /** `https://REGISTRY/v2/NAME/` + rest. */
  url(rest: string): string {
    return `${this.origin}/v2/${this.name}/${rest}`;
  }

  /** `…/blobs/DIGEST`. */
  blobUrl(digest: string): string {
    return this.url(`blobs/${digest}`);
  }

  /** The `Authorization` a blob download should carry (what pulling from this repository needed so far). */
  pullCredential(): Promise<BearerCredential | undefined> {
    return this.auth.current(this.registry, this.host, this.name, [repositoryScope(this.name, ['pull'])]);
  }

  /** A request, answering one `401` challenge (see the module comment). */
  private async call(url: string, o: CallOptions): Promise<HttpResponse> {
    const scopes = [repositoryScope(this.name, o.actions), ...(o.extraScopes ?? [])];
    let answered = false;
    for (;;) {
      // eslint-disable-next-line no-await-in-loop -- at most two rounds: the request, and once more after a challenge
      const credential = await this.auth.current(this.registry, this.host, this.name, scopes);
      // eslint-disable-next-line no-await-in-loop
      const res = await this.http.send(url, {
        method: o.method,
        headers: o.headers,
        ...(o.body === undefined ? {} : { body: o.body }),
        ...(credential === undefined ? {} : { credential }),
        ...(o.maxBytes === undefined ? {} : { maxBytes: o.maxBytes }),
        ...(o.signal === undefined ? {} : { signal: o.signal }),
      });
      if (res.status !== 401 || answered) return res;
      answered = true;
      const challenge = parseChallenge(res.headers.get('www-authenticate'));
      if (challenge === undefined) return res;
      // eslint-disable-next-line no-await-in-loop -- at most one answered challenge per request
      if (!(await this.auth.answer(challenge, this.registry, this.name, scopes, credential, o.signal))) return res;
    }
  }

  /**
   * Every tag (all pages), within {@link TAG_LIST_LIMITS} in total.
   *
   * @returns undefined when the repository does not exist (404).
   * @throws {ProvkitError} `UNAUTHORIZED` (401/403), `INVALID_RESPONSE` (a
   *   list over the limits: the first page that breaks them is not read
   *   further), `ABORTED`, `NET_*`.
   */
  async listTags(signal?: AbortSignal): Promise<{ tags: string[]; notFound?: { codes: string[] } } | undefined> {
    const tags: string[] = [];
    const seen = new Set<string>();
    let bytes = 0;
    const tooLarge = (url: string, what: string): ProvkitError =>
      new ProvkitError(
        ErrorCode.INVALID_RESPONSE,
        `the tag list of ${this.toString()} is larger than provkit reads (${what} after ${seen.size} ${seen.size === 1 ? 'page' : 'pages'}; at most ${TAG_LIST_LIMITS.bytes} bytes, ${TAG_LIST_LIMITS.tags} tags and ${TAG_LIST_LIMITS.pages} pages in all)`,
        { url },
      );
    let next: string | undefined = this.url('tags/list');
    while (next !== undefined) {
      if (seen.has(next)) throw invalidResponse(`the tag list of ${this.toString()} pages without end (${next})`, next);
      if (seen.size >= TAG_LIST_LIMITS.pages) throw tooLarge(next, `more than ${TAG_LIST_LIMITS.pages} pages`);
      if (signal?.aborted)
        throw new ProvkitError(ErrorCode.ABORTED, `listing tags of ${this.toString()} was interrupted`, {
          url: next,
          cause: signal.reason,
        });
      seen.add(next);
      let res: HttpResponse;
      try {
        // eslint-disable-next-line no-await-in-loop -- pages follow one another
        res = await this.call(next, {
          method: 'GET',
          actions: ['pull'],
          headers: { accept: 'application/json' },
          // What is left of the budget: a page that would break it is cut there, unread.
          maxBytes: TAG_LIST_LIMITS.bytes - bytes,
          ...(signal ? { signal } : {}),
        });
      } catch (err) {
        if (err instanceof ProvkitError && err.code === ErrorCode.NET_RESPONSE_TOO_LARGE)
          throw tooLarge(next, `more than ${TAG_LIST_LIMITS.bytes} bytes`);
        throw err;
      }
      if (res.status === 404) {
        const codes = ociErrors(res).map((e) => e.code);
        // OpenTofu `errRepresentsOCIProviderNotFound`: a 404 without error
        // details, or with NAME_UNKNOWN / NAME_INVALID, means "no such repository".
        if (codes.length === 0 || codes.includes('NAME_UNKNOWN') || codes.includes('NAME_INVALID')) return undefined;
      }
      if (res.status !== 200) throw this.statusError(`listing tags of ${this.toString()}`, res);
      bytes += res.body.length;
      let doc: unknown;
      try {
        doc = JSON.parse(res.body.toString('utf8'));
      } catch {
        throw invalidResponse(`the tag list of ${this.toString()} is not JSON`, res.url);
      }
      const list = typeof doc === 'object' && doc !== null ? (doc as Record<string, unknown>)['tags'] : undefined;
      if (list !== null && list !== undefined && !Array.isArray(list))
        throw invalidResponse(`the tag list of ${this.toString()} has no "tags" array`, res.url);
      for (const t of list ?? []) if (typeof t === 'string') tags.push(t);
      if (tags.length > TAG_LIST_LIMITS.tags) throw tooLarge(res.url, `more than ${TAG_LIST_LIMITS.tags} tags`);
      next = nextLink(res);
    }
    return { tags };
  }

  /**
   * GET a manifest by tag or digest. The body is limited to `maxBytes`
   * (default {@link MAX_MANIFEST_BYTES}); when the registry names its digest
   * (`Docker-Content-Digest`) the body must match it.
   *
   * @returns undefined for 404.
   */
  async getManifest(
    reference: string,
    accept: readonly string[],
    signal?: AbortSignal,
    maxBytes = MAX_MANIFEST_BYTES,
  ): Promise<FetchedManifest | undefined> {
    const url = this.url(`manifests/${reference}`);
    let res: HttpResponse;
    try {
      res = await this.call(url, {
        method: 'GET',
        actions: ['pull'],
        headers: { accept: accept.join(', ') },
        maxBytes,
        ...(signal ? { signal } : {}),
      });
    } catch (err) {
      if (err instanceof ProvkitError && err.code === ErrorCode.NET_RESPONSE_TOO_LARGE) {
        throw new ProvkitError(
          ErrorCode.INVALID_RESPONSE,
          `manifest size exceeds the limit of ${maxBytes} bytes (${url})`,
          { url, cause: err },
        );
      }
      throw err;
    }
    if (res.status === 404) return undefined;
    if (res.status !== 200) throw this.statusError(`reading manifest ${reference} of ${this.toString()}`, res);
    const digest = sha256Digest(res.body);
    const claimed = res.headers.get('docker-content-digest');
    const d = claimed === null ? undefined : parseDigest(claimed.trim());
    if (d !== undefined && d.algorithm === 'sha256' && d.text !== digest) {
      throw invalidResponse(`manifest content does not match digest ${d.text} (${url})`, url);
    }
    const etag = res.headers.get('etag');
    return {
      mediaType: contentType(res),
      body: res.body,
      digest,
      url: res.url,
      ...(etag === null || etag.trim() === '' ? {} : { etag: etag.trim() }),
    };
  }

  /** Whether the repository has a blob (`HEAD …/blobs/DIGEST`). */
  async hasBlob(digest: string, signal?: AbortSignal): Promise<boolean> {
    return (await this.statBlob(digest, signal)) !== undefined;
  }

  /** `HEAD …/blobs/DIGEST`: undefined when absent; the size when the registry gives a `Content-Length`. */
  async statBlob(digest: string, signal?: AbortSignal): Promise<{ size?: number } | undefined> {
    const res = await this.call(this.blobUrl(digest), {
      method: 'HEAD',
      actions: ['pull', 'push'],
      headers: { accept: '*/*' },
      ...(signal ? { signal } : {}),
    });
    if (res.status === 404) return undefined;
    if (res.status !== 200)
      throw this.statusError(`checking blob ${digest} in ${this.toString()}`, res, ErrorCode.OCI_PUSH_REFUSED);
    const length = res.headers.get('content-length');
    return length !== null && /^\d+$/.test(length.trim()) ? { size: Number(length.trim()) } : {};
  }

  /**
   * Cross-repository mount (`POST …/blobs/uploads/?mount=DIGEST&from=REPO`).
   * Returns true when mounted; false when the registry declined (it then
   * may have opened an upload session, which is abandoned: registries expire them).
   */
  async mountBlob(digest: string, from: string, signal?: AbortSignal): Promise<boolean> {
    const url = this.url(`blobs/uploads/?mount=${encodeURIComponent(digest)}&from=${encodeURIComponent(from)}`);
    const res = await this.call(url, {
      method: 'POST',
      actions: ['pull', 'push'],
      extraScopes: [repositoryScope(from, ['pull'])],
      headers: { accept: '*/*', 'content-type': 'application/octet-stream' },
      body: Buffer.alloc(0),
      ...(signal ? { signal } : {}),
    });
    if (res.status === 201) return true;
    if (res.status === 202 || res.status === 404) return false;
    throw this.statusError(
      `mounting blob ${digest} from ${from} into ${this.toString()}`,
      res,
      ErrorCode.OCI_PUSH_REFUSED,
    );
  }

  /**
   * Uploads a blob of `size` bytes whose digest is `digest`, reading it
   * chunk by chunk (see the module comment). The registry checks the digest
   * when the upload is closed.
   *
   * @throws {ProvkitError} `OCI_PUSH_REFUSED`, `UNAUTHORIZED`, `NET_*`.
   */
  async pushBlob(digest: string, size: number, read: ChunkReader, signal?: AbortSignal): Promise<void> {
    const push = { actions: ['pull', 'push'], ...(signal ? { signal } : {}) } as const;
    const what = `uploading blob ${digest} to ${this.toString()}`;
    const start = await this.call(this.url('blobs/uploads/'), {
      ...push,
      method: 'POST',
      headers: { accept: '*/*', 'content-type': 'application/octet-stream' },
      body: Buffer.alloc(0),
    });
    if (start.status !== 202) throw this.statusError(what, start, ErrorCode.OCI_PUSH_REFUSED);
    let location = uploadLocation(start, what);
    let offset = 0;
    // Chunks while more than one chunk is left; the last part goes with the closing PUT.
    while (size - offset > this.chunkSize) {
      // eslint-disable-next-line no-await-in-loop -- an upload's chunks go in order
      const chunk = await read(offset, this.chunkSize);
      // eslint-disable-next-line no-await-in-loop
      const res = await this.call(location, {
        ...push,
        method: 'PATCH',
        headers: {
          accept: '*/*',
          'content-type': 'application/octet-stream',
          'content-range': `${offset}-${offset + chunk.length - 1}`,
        },
        body: chunk,
      });
      if (res.status !== 202) throw this.statusError(what, res, ErrorCode.OCI_PUSH_REFUSED);
      location = uploadLocation(res, what);
      offset += chunk.length;
    }
    const last = size > offset ? await read(offset, size - offset) : Buffer.alloc(0);
    const close = await this.call(withQuery(location, 'digest', digest), {
      ...push,
      method: 'PUT',
      headers: { accept: '*/*', 'content-type': 'application/octet-stream' },
      body: last,
    });
    if (close.status !== 201) throw this.statusError(what, close, ErrorCode.OCI_PUSH_REFUSED);
  }

  /**
   * `PUT …/manifests/REFERENCE` (a digest or a tag). The registry's
   * `Docker-Content-Digest`, when it sends one, must be the digest of `body`.
   */
  async putManifest(reference: string, mediaType: string, body: Buffer, signal?: AbortSignal): Promise<string> {
    const put = await this.putManifestIf(reference, mediaType, body, undefined, signal);
    if (!put.stored) throw new Error('unreachable: an unconditional PUT has no precondition to fail');
    return put.digest;
  }

  /**
   * {@link putManifest} with a precondition: `{ stored: false }` when the
   * registry refuses it (`412 Precondition Failed`: the reference changed
   * since it was read). A registry that does not support conditional
   * requests (distribution 2.8 ignores `If-Match` on a manifest `PUT`) stores
   * the manifest regardless; the caller checks after writing
   * (installer/oci-publish.ts).
   */
  async putManifestIf(
    reference: string,
    mediaType: string,
    body: Buffer,
    condition: ManifestCondition | undefined,
    signal?: AbortSignal,
  ): Promise<{ stored: true; digest: string } | { stored: false }> {
    const url = this.url(`manifests/${reference}`);
    const res = await this.call(url, {
      method: 'PUT',
      actions: ['pull', 'push'],
      headers: {
        accept: '*/*',
        'content-type': mediaType,
        ...(condition === undefined
          ? {}
          : 'ifMatch' in condition
            ? { 'if-match': condition.ifMatch }
            : { 'if-none-match': condition.ifNoneMatch }),
      },
      body,
      ...(signal ? { signal } : {}),
    });
    if (condition !== undefined && res.status === 412) return { stored: false };
    if (res.status !== 201)
      throw this.statusError(`putting manifest ${reference} into ${this.toString()}`, res, ErrorCode.OCI_PUSH_REFUSED);
    const digest = sha256Digest(body);
    const claimed = res.headers.get('docker-content-digest');
    if (claimed !== null && claimed.trim() !== '' && claimed.trim() !== digest) {
      throw new ProvkitError(
        ErrorCode.OCI_PUSH_REFUSED,
        `the registry stored manifest ${reference} of ${this.toString()} as ${claimed.trim()}, not ${digest}`,
        { url, expected: digest, found: claimed.trim() },
      );
    }
    return { stored: true, digest };
  }

  /** A status the caller cannot use, with the registry's OCI error codes. */
  statusError(what: string, res: HttpResponse, code: ErrorCode = ErrorCode.NET_HTTP_STATUS): ProvkitError {
    const errors = ociErrors(res);
    const detail =
      errors.length > 0 ? `: ${errors.map((e) => (e.message ? `${e.code}: ${e.message}` : e.code)).join('; ')}` : '';
    if (res.status === 401 || res.status === 403) {
      // The cause, said once for every repository it stops (src/installer/causes.ts).
      return new ProvkitError(
        ErrorCode.UNAUTHORIZED,
        `${what}: the registry ${this.registry} refused access (HTTP ${res.status})${detail}`,
        {
          url: res.url,
          found: String(res.status),
          summary: 'The OCI registry refused access',
          detail: `The OCI registry ${this.registry} answered HTTP ${res.status}${errors.length > 0 ? ` (${detail.slice(2)})` : ''}: ${res.status === 401 ? 'it wants credentials, and none it accepts were sent' : 'the credentials sent do not allow this'}.`,
          hint: `Give credentials for ${this.registry}: an oci_credentials "${this.registry}" block (username and password, or a token) in the CLI configuration, or a Docker-style config file (docker login ${this.registry}).`,
        },
      );
    }
    return new ProvkitError(code, `${what}: HTTP ${res.status}${detail} (${res.url})`, {
      url: res.url,
      found: String(res.status),
    });
  }
}

/** At most this many of a registry's errors, each cut to {@link MAX_OCI_ERROR_TEXT} characters, go into a message. */
const MAX_OCI_ERRORS = 5;
const MAX_OCI_ERROR_TEXT = 300;

/**
 * The `errors` of an OCI error body (`{"errors":[{"code","message"}]}`), or
 * none: the registry's own text, bounded (the first {@link MAX_OCI_ERRORS},
 * each cut to {@link MAX_OCI_ERROR_TEXT} characters). It reaches messages
 * as it is sent; ProvkitError keeps it on one line and the human renderer
 * escapes it (docs/reliability.md).
 */
export function ociErrors(res: HttpResponse): Array<{ code: string; message: string }> {
  try {
    const doc = JSON.parse(res.body.toString('utf8')) as unknown;
    const list = typeof doc === 'object' && doc !== null ? (doc as Record<string, unknown>)['errors'] : undefined;
    if (!Array.isArray(list)) return [];
    return list
      .flatMap((e: unknown) => {
        if (typeof e !== 'object' || e === null) return [];
        const r = e as Record<string, unknown>;
        const cut = (s: string): string => (s.length > MAX_OCI_ERROR_TEXT ? `${s.slice(0, MAX_OCI_ERROR_TEXT)}…` : s);
        return typeof r['code'] === 'string'
          ? [{ code: cut(r['code']), message: typeof r['message'] === 'string' ? cut(r['message']) : '' }]
          : [];
      })
      .slice(0, MAX_OCI_ERRORS);
  } catch {
    return [];
  }
}

function invalidResponse(message: string, url: string): ProvkitError {
  return new ProvkitError(ErrorCode.INVALID_RESPONSE, message, { url });
}

function contentType(res: HttpResponse): string | undefined {
  const h = res.headers.get('content-type');
  if (h === null) return undefined;
  const t = (h.split(';')[0] ?? '').trim().toLowerCase();
  return t === '' ? undefined : t;
}

/** `Link: <URL>; rel="next"`, resolved against the response URL. */
function nextLink(res: HttpResponse): string | undefined {
  const h = res.headers.get('link');
  if (h === null) return undefined;
  for (const part of h.split(',')) {
    const m = /^\s*<([^>]*)>\s*;(.*)$/.exec(part);
    if (!m || !/(^|;)\s*rel\s*=\s*"?next"?\s*(;|$)/i.test(m[2]!)) continue;
    try {
      return new URL(m[1]!, res.url).href;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** The absolute `Location` of an upload session. */
function uploadLocation(res: HttpResponse, what: string): string {
  const loc = res.headers.get('location');
  if (loc === null || loc === '')
    throw new ProvkitError(
      ErrorCode.OCI_PUSH_REFUSED,
      `${what}: the registry answered ${res.status} without an upload Location`,
      { url: res.url },
    );
  try {
    return new URL(loc, res.url).href;
  } catch {
    throw new ProvkitError(
      ErrorCode.OCI_PUSH_REFUSED,
      `${what}: the registry answered an invalid upload Location ${JSON.stringify(loc)}`,
      { url: res.url },
    );
  }
}

/** Adds `name=value` to a URL's query without re-encoding what is there (an upload's `_state`). */
function withQuery(url: string, name: string, value: string): string {
  const hash = url.indexOf('#');
  const base = hash < 0 ? url : url.slice(0, hash);
  return `${base}${base.includes('?') ? '&' : '?'}${name}=${encodeURIComponent(value)}`;
}
