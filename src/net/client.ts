/**
 * The one HTTP client of provkit: policy over an injected {@link FetchLike}.
 *
 * What it does, for every request:
 * - follows redirects itself (at most `maxRedirects`, default 10 as Go's
 *   client), and drops the bearer credential for good as soon as a redirect
 *   leaves the credential's host or downgrades https to http;
 * - applies a **connect timeout** (until the response headers arrive) and an
 *   **idle timeout** (between two body chunks) per attempt;
 * - retries connection errors, timeouts, short bodies, 429 and 5xx (not 501)
 *   with exponential backoff, honouring `Retry-After` (see `retry.ts`); a
 *   retry restarts the whole exchange;
 * - checks the body length against `Content-Length` (unless the body was
 *   content-decoded) and against a caller's size limit;
 * - reports progress, redirects and retries through typed callbacks, and
 *   never prints.
 *
 * {@link HttpClient.download} streams a body to a temporary file beside the
 * destination (opened `wx`), runs caller-supplied pass-through streams (for
 * example a `zh:` hasher) and a verification hook, and renames into place only
 * when everything passed; on any failure the temporary file is removed, so a
 * destination is either absent, untouched or complete (CONTRIBUTING.md house style 3).
 *
 * A download whose body drops after N bytes resumes with `Range: bytes=N-`
 * (and `If-Range`: the strong ETag, else Last-Modified) when the 200 said
 * `Accept-Ranges: bytes` and had a `Content-Length`. Only a 206 whose
 * `Content-Range` continues exactly at N with the same total is used; a 200
 * or any other range starts over. The transforms of a resumed attempt are
 * fed the kept prefix (read back from the temporary file) before the new
 * bytes, so a hasher sees every byte once and in order.
 *
 * What it does not do: decide which hosts get credentials (callers pass a
 * {@link BearerCredential} bound to a host), parse JSON, or know about
 * providers. Errors are {@link ProvkitError}s with `NET_*` codes (see
 * `codes.ts`) or `ABORTED`, with `url` set.
 */
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

import { ErrorCode, ProvkitError } from '../errors.js';
import { tempPathBeside } from '../fs/temp-name.js';
import { NetErrorCode } from './codes.js';
import { Hop } from './exchange.js';
import { DEFAULT_BACKOFF, isRetryableStatus, parseRetryAfter, type BackoffOptions } from './retry.js';
import { retryLoop, type AttemptOutcome } from './retry-loop.js';
import { systemClock, type BearerCredential, type Clock, type FetchLike, type FetchResponse, type HttpMethod, type NetEvents } from './types.js';
import { parseHttpURL, redactURL, splitUserinfo } from './url.js';

/** Client-wide settings; every field has a default. */
export interface HttpClientOptions {
  readonly fetch: FetchLike;
  /** `User-Agent` of every request (default `provkit`). */
  readonly userAgent?: string;
  /** Per attempt and redirect hop: time until the response headers arrive (default 10 s, the reference's registry timeout; 0 = none). */
  readonly connectTimeoutMs?: number;
  /** Per attempt: longest gap between two body chunks (default 60 s; 0 = none). */
  readonly idleTimeoutMs?: number;
  /** Retries after the first attempt for {@link HttpClient.get} (default 1, OpenTofu's `TF_REGISTRY_DISCOVERY_RETRY` default). */
  readonly retries?: number;
  /** Retries for {@link HttpClient.download} (default 2, OpenTofu's `TF_PROVIDER_DOWNLOAD_RETRY` default). */
  readonly downloadRetries?: number;
  readonly backoff?: BackoffOptions;
  /** Upper bound for a server's `Retry-After` (default 60 s); a longer one is shortened to it. */
  readonly maxRetryAfterMs?: number;
  /** Default 10 (Go's client). */
  readonly maxRedirects?: number;
  readonly clock?: Clock;
  readonly events?: NetEvents;
  /** Least time between two progress events of one body (default 250 ms). */
  readonly progressIntervalMs?: number;
}

/** Per-request settings; unset fields fall back to the client's. */
export interface RequestOptions {
  /** Extra request headers (names are lower-cased). `user-agent` overrides the client's. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Sent as `Authorization: Bearer …` only to its host (see {@link BearerCredential}). */
  readonly credential?: BearerCredential;
  readonly retries?: number;
  readonly maxRedirects?: number;
  readonly connectTimeoutMs?: number;
  readonly idleTimeoutMs?: number;
  /** Refuse a body larger than this (`NET_RESPONSE_TOO_LARGE`, not retried). */
  readonly maxBytes?: number;
  readonly signal?: AbortSignal;
  /** Per-request callbacks, called after the client's own. */
  readonly events?: NetEvents;
}

/**
 * Options of {@link HttpClient.send}: any method, an optional body. A
 * request with a body is not retried unless `retries` says so, and its
 * redirects are not followed (the 3xx is returned).
 */
export interface SendOptions extends RequestOptions {
  readonly method: HttpMethod;
  readonly body?: Buffer;
}

/** A complete response of {@link HttpClient.get}. */
export interface HttpResponse {
  readonly status: number;
  readonly statusText: string;
  /** The URL that answered, after redirects (relative references resolve against it). */
  readonly url: string;
  readonly headers: { get(name: string): string | null };
  readonly body: Buffer;
  /** Attempts made, retries included. */
  readonly attempts: number;
}

export interface DownloadOptions extends RequestOptions {
  /** The body must be exactly this long (`NET_SIZE_MISMATCH`, not retried). */
  readonly expectedSize?: number;
  /**
   * Pass-through streams the body flows through before the file, created
   * afresh for each attempt (for example `() => [new ZhStream()]`).
   */
  readonly transforms?: () => Transform[];
  /**
   * Runs on the complete temporary file before it is renamed into place; a
   * throw aborts the download (not retried) and the temporary file is removed.
   */
  readonly verify?: (tempPath: string, info: { readonly size: number; readonly url: string }) => Promise<void>;
  /** File mode of the result (default 0o644). */
  readonly mode?: number;
}

export interface DownloadResult {
  readonly path: string;
  /** The URL that answered, after redirects. */
  readonly url: string;
  readonly size: number;
  readonly attempts: number;
  /** How many attempts continued a partial body with `Range` instead of starting over. */
  readonly resumes?: number;
}

/** What a download keeps between attempts (see {@link HttpClient.download}). */
interface ResumeState {
  /** The temporary file of the body so far, if any. */
  tmp: string | undefined;
  /** Bytes of the body in `tmp` (a prefix, in order). */
  kept: number;
  /** `If-Range` value: a strong ETag, else Last-Modified. */
  validator: string | undefined;
  /** The full body length, from the 200's Content-Length. */
  total: number | undefined;
  /** The 200 said `Accept-Ranges: bytes` and had a length. */
  resumable: boolean;
  resumes: number;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** TLS failures that another attempt cannot fix (retryablehttp does not retry unknown authorities either). */
const TLS_CERT_CODES = new Set([
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'CERT_SIGNATURE_FAILURE',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
]);

/** Errors created by the exchange itself that another attempt may cure. */
const retryable = new WeakSet<ProvkitError>();

/** Errors that came out of the response body (network side of a download pipeline). */
const fromBody = new WeakSet<object>();

/**
 * Wraps an error that must reach the caller unchanged and unretried: a
 * `verify` hook's verdict, a file-system failure.
 */
class FinalError extends Error {
  constructor(readonly error: unknown) {
    super('final');
  }
}

function ioError(err: unknown, file: string): unknown {
  if (err instanceof ProvkitError) return err;
  const code = errCode(err);
  if (code === undefined || !/^E[A-Z]+$/.test(code)) return err;
  return new ProvkitError(code === 'ENOENT' ? ErrorCode.NOT_FOUND : ErrorCode.IO, `${file}: ${describe(err)}`, { file, cause: err });
}

function markRetryable(e: ProvkitError): ProvkitError {
  retryable.add(e);
  return e;
}

function lowerHeaders(h: Readonly<Record<string, string>> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (h) for (const [k, v] of Object.entries(h)) out[k.toLowerCase()] = v;
  return out;
}

function describe(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return typeof code === 'string' && !err.message.includes(code) ? `${err.message} (${code})` : err.message;
  }
  return String(err);
}

function errCode(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  const cause = (err as { cause?: unknown }).cause;
  return cause === undefined ? undefined : errCode(cause);
}

/** The temporary file {@link HttpClient.download} writes beside `dest`: `.<name>.<random>.partial`. */
export function tempPathFor(dest: string): string {
  return tempPathBeside(dest, { ext: '.partial' });
}

interface Resolved {
  method: HttpMethod;
  body: Buffer | undefined;
  headers: Record<string, string>;
  credential: BearerCredential | undefined;
  retries: number;
  maxRedirects: number;
  connectTimeoutMs: number;
  idleTimeoutMs: number;
  maxBytes: number | undefined;
  signal: AbortSignal | undefined;
  events: NetEvents[];
}

/** See the module comment. Stateless apart from its options: share one per run. */
export class HttpClient {
  private readonly fetchImpl: FetchLike;
  private readonly clock: Clock;
  private readonly opts: HttpClientOptions;

  constructor(options: HttpClientOptions) {
    this.fetchImpl = options.fetch;
    this.clock = options.clock ?? systemClock;
    this.opts = options;
  }

  /**
   * GET `url` and read the whole body. Any final status is returned (the
   * caller maps 404, 401, … to its own errors); retryable statuses are
   * retried first, and the last such response is returned when retries run
   * out (`attempts` tells how many were made).
   *
   * @throws {ProvkitError} `NET_CONNECTION`, `NET_TIMEOUT`, `NET_SIZE_MISMATCH`
   *   (after retries), `NET_TOO_MANY_REDIRECTS`, `NET_RESPONSE_TOO_LARGE`,
   *   `ABORTED`, `USAGE` (not an http(s) URL).
   */
  async get(url: string, options: RequestOptions = {}): Promise<HttpResponse> {
    const o = this.resolve(options, options.retries ?? this.opts.retries ?? 1);
    return this.run(url, o, async (res, hop, attempts) => {
      const chunks: Buffer[] = [];
      for await (const chunk of this.body(res, hop, o)) chunks.push(chunk);
      return {
        status: res.status,
        statusText: res.statusText,
        url: hop.href,
        headers: res.headers,
        body: Buffer.concat(chunks),
        attempts,
      };
    });
  }

  /**
   * One request with any method (the OCI registry client's `HEAD`, `PUT`,
   * `POST`, `PATCH`); the whole body is read (none for `HEAD`). Statuses,
   * redirects (`GET`/`HEAD` only), credentials and errors as {@link get};
   * retries only for `GET`/`HEAD` unless `retries` is given.
   */
  async send(url: string, options: SendOptions): Promise<HttpResponse> {
    const idempotent = options.method === 'GET' || options.method === 'HEAD';
    const o = this.resolve(options, options.retries ?? (idempotent ? (this.opts.retries ?? 1) : 0), options.method, options.body);
    return this.run(url, o, async (res, hop, attempts) => {
      const chunks: Buffer[] = [];
      if (options.method === 'HEAD') {
        // No body (its Content-Length describes the GET's); Node's parser reads none.
        if (res.body !== null) for await (const _ of res.body) hop.touch();
      } else for await (const chunk of this.body(res, hop, o)) chunks.push(chunk);
      return {
        status: res.status,
        statusText: res.statusText,
        url: hop.url,
        headers: res.headers,
        body: Buffer.concat(chunks),
        attempts,
      };
    });
  }

  /**
   * GET `url` into `destPath`, verify-then-commit (see the module comment).
   * The destination's directory is created if needed. Any status other than
   * 200 (or a 206 to a resume, see the module comment) fails, after retries,
   * with `unsuccessful request to URL: STATUS`. The temporary file survives
   * between attempts only while a resume is possible, and never this call.
   *
   * @throws {ProvkitError} as {@link get}, plus `NET_HTTP_STATUS`, `IO`, and
   *   whatever `verify` throws. The destination is never left partial.
   */
  async download(url: string, destPath: string, options: DownloadOptions = {}): Promise<DownloadResult> {
    const o = this.resolve(options, options.retries ?? this.opts.downloadRetries ?? 2);
    try {
      await mkdir(dirname(destPath), { recursive: true });
    } catch (err) {
      throw ioError(err, dirname(destPath));
    }
    /** State carried across attempts, for a resume with `Range`. */
    const st: ResumeState = { tmp: undefined, kept: 0, validator: undefined, total: undefined, resumable: false, resumes: 0 };
    const rangeHeaders = (): Record<string, string> | undefined =>
      st.tmp !== undefined && st.resumable && st.kept > 0
        ? { range: `bytes=${st.kept}-`, ...(st.validator === undefined ? {} : { 'if-range': st.validator }) }
        : undefined;
    try {
      return await this.run(
        url,
        o,
        async (res, hop, attempts) => {
          const resuming = st.tmp !== undefined && st.kept > 0 && res.status === 206;
          if (res.status === 206 && !resuming) {
            hop.abort();
            throw markRetryable(new ProvkitError(NetErrorCode.CONNECTION, `GET ${hop.url}: unexpected 206 Partial Content to a request without Range`, { url: hop.url }));
          }
          if (res.status !== 200 && !resuming) {
            hop.abort();
            throw new ProvkitError(NetErrorCode.HTTP_STATUS, `unsuccessful request to ${hop.url}: ${statusLine(res)}${attemptsSuffix(attempts)}`, {
              url: hop.url,
              found: String(res.status),
            });
          }
          let offset = 0;
          if (resuming) {
            // The server must send exactly the rest of the same representation.
            const cr = parseContentRange(res.headers.get('content-range'));
            if (cr === undefined || cr.start !== st.kept || (st.total !== undefined && cr.total !== st.total) || cr.end !== cr.total - 1) {
              hop.abort();
              await this.discardPartial(st);
              throw markRetryable(
                new ProvkitError(NetErrorCode.CONNECTION, `GET ${hop.url}: the resumed response's Content-Range ${JSON.stringify(res.headers.get('content-range'))} does not continue byte ${st.kept}`, {
                  url: hop.url,
                }),
              );
            }
            offset = st.kept;
            st.resumes += 1;
            for (const e of o.events) e.onResume?.({ url: hop.url, offset, total: cr.total });
          } else {
            // A full body: whatever a previous attempt kept is worthless now.
            await this.discardPartial(st);
            const declared = res.headers.get('content-length');
            const encoded = (res.headers.get('content-encoding') ?? 'identity').trim().toLowerCase() !== 'identity';
            st.total = declared !== null && /^\d+$/.test(declared.trim()) && !encoded ? Number(declared.trim()) : undefined;
            st.validator = strongValidator(res.headers.get('etag')) ?? res.headers.get('last-modified') ?? undefined;
            st.resumable = st.total !== undefined && /(^|,)\s*bytes\s*(,|$)/i.test(res.headers.get('accept-ranges') ?? '');
            st.tmp = tempPathFor(destPath);
          }
          const tmp = st.tmp!;
          let size = offset;
          let file: WriteStream | undefined;
          try {
            const body = this.body(res, hop, o, (n) => (size = offset + n), true, offset);
            // On a resume the transforms (a zh: hasher) are fed the kept prefix
            // first, so that they see every byte exactly once and in order; the
            // prefix is dropped again before the file, which is appended to.
            const source = Readable.from(offset > 0 ? prefixThen(createReadStream(tmp, { start: 0, end: offset - 1 }), body) : body);
            file = createWriteStream(tmp, offset > 0 ? { flags: 'r+', start: offset } : { flags: 'wx', mode: options.mode ?? 0o644 });
            // Blocks first: every later stage (hashers, the file) then handles
            // 16 times fewer chunks than the body's TLS-record-sized ones.
            const stages: Array<NodeJS.ReadableStream | NodeJS.WritableStream | NodeJS.ReadWriteStream> = [source, coalesce(), ...(options.transforms?.() ?? [])];
            if (offset > 0) stages.push(skipBytes(offset));
            // Bytes reaching the file keep the idle timer off too: while the
            // body waits for a slow (but moving) pipeline, the download is not idle.
            stages.push(touching(hop), file);
            // A timeout or the caller's abort ends the exchange, but the body
            // only notices while the pipeline reads it: a stage that stopped
            // taking bytes (backpressure) would leave the body parked and the
            // pipeline waiting for ever. So they tear the whole pipeline down
            // (pinned by test/e2e/stream-hasher.test.ts). (Other aborts of the hop come with a body error.)
            const halt = new AbortController();
            const onHopAbort = (): void => {
              if (hop.timedOut !== undefined || o.signal?.aborted) halt.abort(hop.controller.signal.reason);
            };
            hop.controller.signal.addEventListener('abort', onHopAbort, { once: true });
            if (hop.controller.signal.aborted) onHopAbort();
            try {
              await pipeline(stages, { signal: halt.signal });
            } catch (err) {
              // A body error, a timeout or an abort is the network's (mapped and
              // maybe retried by run); anything else (the file, a transform) is final.
              if ((typeof err === 'object' && err !== null && fromBody.has(err)) || halt.signal.aborted) {
                await this.keepPartial(st, file);
                throw err;
              }
              throw new FinalError(ioError(err, tmp));
            } finally {
              hop.controller.signal.removeEventListener('abort', onHopAbort);
            }
            if (options.expectedSize !== undefined && size !== options.expectedSize) {
              throw new FinalError(
                new ProvkitError(
                  NetErrorCode.SIZE_MISMATCH,
                  `incorrect response size: expected ${options.expectedSize} bytes, but got ${size} bytes from ${hop.url}`,
                  { url: hop.url, expected: String(options.expectedSize), found: String(size) },
                ),
              );
            }
            try {
              await options.verify?.(tmp, { size, url: hop.url });
              await rename(tmp, destPath);
              st.tmp = undefined;
            } catch (err) {
              throw new FinalError(ioError(err, destPath));
            }
          } catch (err) {
            if (!(typeof err === 'object' && err !== null && fromBody.has(err))) await this.discardPartial(st);
            throw err;
          }
          return { path: destPath, url: hop.url, size, attempts, resumes: st.resumes };
        },
        rangeHeaders,
      );
    } finally {
      // Retries exhausted, aborted, or a final error: no temporary file survives.
      await this.discardPartial(st);
    }
  }

  /** After a body failure: remember how many bytes reached the temporary file (all of them, in order). */
  private async keepPartial(st: ResumeState, file: WriteStream): Promise<void> {
    if (!file.closed) await new Promise<void>((resolveClose) => file.once('close', () => resolveClose()));
    if (!st.resumable || st.tmp === undefined) {
      await this.discardPartial(st);
      return;
    }
    st.kept = await stat(st.tmp).then((s) => s.size).catch(() => 0);
  }

  private async discardPartial(st: ResumeState): Promise<void> {
    const tmp = st.tmp;
    st.tmp = undefined;
    st.kept = 0;
    if (tmp !== undefined) await rm(tmp, { force: true });
  }

  private resolve(options: RequestOptions, retries: number, method: HttpMethod = 'GET', body?: Buffer): Resolved {
    const headers: Record<string, string> = { 'user-agent': this.opts.userAgent ?? 'provkit', ...lowerHeaders(options.headers) };
    return {
      method,
      body,
      headers,
      credential: options.credential,
      retries: Math.max(0, retries),
      maxRedirects: options.maxRedirects ?? this.opts.maxRedirects ?? 10,
      connectTimeoutMs: options.connectTimeoutMs ?? this.opts.connectTimeoutMs ?? 10_000,
      idleTimeoutMs: options.idleTimeoutMs ?? this.opts.idleTimeoutMs ?? 60_000,
      maxBytes: options.maxBytes,
      signal: options.signal,
      events: [this.opts.events, options.events].filter((e): e is NetEvents => e !== undefined),
    };
  }

  /**
   * The retry loop around {@link open} + `consume`: a retryable status is
   * retried while attempts remain, then handed to `consume` like any other.
   */
  private async run<T>(
    url: string,
    o: Resolved,
    consume: (res: FetchResponse, hop: Hop, attempts: number) => Promise<T>,
    extraHeaders?: () => Record<string, string> | undefined,
  ): Promise<T> {
    parseHttpURL(url);
    const shown = redactURL(url);
    return retryLoop<T>(
      {
        retries: o.retries,
        backoff: this.opts.backoff ?? DEFAULT_BACKOFF,
        maxRetryAfterMs: this.opts.maxRetryAfterMs,
        sleep: (ms, signal) => this.clock.sleep(ms, signal),
        signal: o.signal,
        aborted: (reason) => new ProvkitError(ErrorCode.ABORTED, `request to ${shown} was interrupted`, { url: shown, cause: reason }),
        onAttempt: (attempt) => {
          for (const e of o.events) e.onRequest?.({ url: shown, attempt });
        },
        onRetry: (notice) => {
          for (const e of o.events) e.onRetry?.({ url: shown, ...notice });
        },
      },
      (attempt, last) => this.attempt(url, shown, o, attempt, last, consume, extraHeaders),
    );
  }

  /**
   * One attempt of {@link run}: {@link open} + `consume`, its outcome as a
   * value. A retryable status is a failure unless this is the last attempt
   * (then `consume` gets it like any other); whatever `consume` or the
   * exchange throws is mapped by {@link mapError}, except a {@link FinalError}.
   */
  private async attempt<T>(
    url: string,
    shown: string,
    o: Resolved,
    attempt: number,
    last: boolean,
    consume: (res: FetchResponse, hop: Hop, attempts: number) => Promise<T>,
    extraHeaders?: () => Record<string, string> | undefined,
  ): Promise<AttemptOutcome<T>> {
    let hop: Hop | undefined;
    try {
      const opened = await this.open(url, o, extraHeaders?.());
      hop = opened.hop;
      const res = opened.res;
      if (!isRetryableStatus(res.status) || last) return { ok: true, value: await consume(res, hop, attempt) };
      hop.abort();
      const reason = `HTTP ${statusLine(res)}`;
      const failure = new ProvkitError(NetErrorCode.HTTP_STATUS, `unsuccessful request to ${hop.url}: ${reason}`, { url: hop.url, found: String(res.status) });
      return { ok: false, failure, retryable: true, reason, status: res.status, retryAfterMs: parseRetryAfter(res.headers.get('retry-after'), this.clock.now()) };
    } catch (err) {
      if (err instanceof FinalError) return { ok: false, failure: err.error, retryable: false, reason: 'final' };
      const e = this.mapError(err, hop, shown, o, attempt);
      return { ok: false, failure: e, retryable: retryable.has(e), reason: `${e.code}: ${e.message}` };
    } finally {
      hop?.dispose();
    }
  }

  /** Sends the request and follows redirects; resolves with the final response and its hop. */
  private async open(url: string, o: Resolved, extra?: Record<string, string>): Promise<{ res: FetchResponse; hop: Hop }> {
    let current = parseHttpURL(url);
    let credential = o.credential;
    for (let redirects = 0; ; redirects++) {
      const hop = new Hop(this.clock, current, o.signal);
      try {
        const headers = { ...o.headers, ...extra };
        const sent = splitUserinfo(current);
        if (credential !== undefined && current.host === credential.host) headers['authorization'] = `${credential.scheme ?? 'Bearer'} ${credential.token}`;
        else if (sent.authorization !== undefined && headers['authorization'] === undefined) headers['authorization'] = sent.authorization;
        // eslint-disable-next-line no-await-in-loop -- once per hop, before its timer starts
        if (this.fetchImpl.prepare) await this.fetchImpl.prepare(sent.href);
        hop.arm(o.connectTimeoutMs, `no response from ${hop.url} within ${o.connectTimeoutMs} ms`);
        // eslint-disable-next-line no-await-in-loop -- each redirect hop depends on the previous one
        const res = await this.fetchImpl(sent.href, {
          method: o.method,
          headers,
          redirect: 'manual',
          signal: hop.controller.signal,
          ...(o.body === undefined ? {} : { body: o.body }),
        });
        hop.disarm();
        const location = res.headers.get('location');
        // Only GET and HEAD follow redirects: an upload's Location is the caller's business.
        const follows = o.method === 'GET' || o.method === 'HEAD';
        if (!follows || !REDIRECT_STATUSES.has(res.status) || location === null) return { res, hop };
        hop.abort();
        if (redirects >= o.maxRedirects) {
          throw new ProvkitError(NetErrorCode.TOO_MANY_REDIRECTS, `${o.method} ${redactURL(url)}: stopped after ${o.maxRedirects} redirects`, { url: redactURL(url) });
        }
        let next: URL;
        try {
          next = parseHttpURL(new URL(location, current).href);
        } catch (err) {
          throw new ProvkitError(NetErrorCode.CONNECTION, `${o.method} ${hop.url}: invalid redirect to ${JSON.stringify(redactURL(location))}`, {
            url: hop.url,
            cause: err,
          });
        }
        const dropped = credential !== undefined && (next.host !== credential.host || (current.protocol === 'https:' && next.protocol === 'http:'));
        if (dropped) credential = undefined;
        for (const e of o.events) e.onRedirect?.({ from: hop.url, to: redactURL(next), status: res.status, credentialsDropped: dropped });
        hop.dispose();
        current = next;
      } catch (err) {
        // The hop keeps its timeout state for mapError.
        hop.dispose();
        throw new HopError(err, hop);
      }
    }
  }

  /** The body of `res` as chunks, with the idle timeout, size checks and progress events. */
  private async *body(res: FetchResponse, hop: Hop, o: Resolved, onSize?: (n: number) => void, tag = false, offset = 0): AsyncGenerator<Buffer> {
    try {
      yield* this.bodyChunks(res, hop, o, onSize, offset);
    } catch (err) {
      if (tag && typeof err === 'object' && err !== null) fromBody.add(err);
      throw err;
    }
  }

  /** `offset`: bytes of this body a previous attempt already delivered (a resumed download); counts for `maxBytes` and progress. */
  private async *bodyChunks(res: FetchResponse, hop: Hop, o: Resolved, onSize?: (n: number) => void, offset = 0): AsyncGenerator<Buffer> {
    const header = res.headers.get('content-length');
    const declared = header !== null && /^\d+$/.test(header.trim()) ? Number(header.trim()) : undefined;
    const encoded = (res.headers.get('content-encoding') ?? 'identity').trim().toLowerCase() !== 'identity';
    const total = encoded ? undefined : declared;
    if (o.maxBytes !== undefined && total !== undefined && offset + total > o.maxBytes) {
      hop.abort();
      throw new ProvkitError(NetErrorCode.RESPONSE_TOO_LARGE, `response from ${hop.url} is ${offset + total} bytes, more than the limit of ${o.maxBytes}`, {
        url: hop.url,
        expected: String(o.maxBytes),
        found: String(offset + total),
      });
    }
    const interval = this.opts.progressIntervalMs ?? 250;
    const progress = o.events.filter((e) => e.onProgress !== undefined);
    let received = 0;
    let lastEvent = this.clock.now();
    const idleMessage = `no data from ${hop.url} for ${o.idleTimeoutMs} ms`;
    hop.armIdle(o.idleTimeoutMs, idleMessage);
    try {
      if (res.body !== null) {
        // The loop body is inside a try so that a connection lost mid-body
        // with a declared length becomes the reference's size error.
        for await (const raw of guardShortBody(res.body, () => received, total, hop)) {
          const chunk = Buffer.isBuffer(raw) ? raw : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
          hop.touch();
          received += chunk.length;
          onSize?.(received);
          if (o.maxBytes !== undefined && offset + received > o.maxBytes) {
            hop.abort();
            throw new ProvkitError(NetErrorCode.RESPONSE_TOO_LARGE, `response from ${hop.url} is larger than the limit of ${o.maxBytes} bytes`, {
              url: hop.url,
              expected: String(o.maxBytes),
            });
          }
          if (progress.length > 0 && this.clock.now() - lastEvent >= interval) {
            lastEvent = this.clock.now();
            for (const e of progress) e.onProgress?.({ url: hop.url, received: offset + received, total: total === undefined ? undefined : offset + total });
          }
          yield chunk;
        }
      }
    } finally {
      hop.disarm();
    }
    if (total !== undefined && received !== total) {
      throw markRetryable(
        new ProvkitError(NetErrorCode.SIZE_MISMATCH, `incorrect response size: expected ${total} bytes, but got ${received} bytes from ${hop.url}`, {
          url: hop.url,
          expected: String(total),
          found: String(received),
        }),
      );
    }
    for (const e of progress) e.onProgress?.({ url: hop.url, received: offset + received, total: total === undefined ? undefined : offset + total });
  }

  /** Turns whatever an attempt threw into a ProvkitError, marking the retryable ones. */
  private mapError(err: unknown, hop: Hop | undefined, url: string, o: Resolved, attempt: number): ProvkitError {
    if (err instanceof HopError) {
      hop = err.hop;
      err = err.cause;
    }
    const at = hop?.url ?? url;
    if (o.signal?.aborted) {
      return new ProvkitError(ErrorCode.ABORTED, `request to ${at} was interrupted`, { url: at, cause: o.signal.reason });
    }
    if (hop?.timedOut !== undefined) {
      return markRetryable(new ProvkitError(NetErrorCode.TIMEOUT, `${o.method} ${at}: ${hop.timedOut}${attemptsSuffix(attempt)}`, { url: at, cause: err }));
    }
    if (err instanceof ProvkitError) {
      if (retryable.has(err) && attempt > 1) {
        return markRetryable(new ProvkitError(err.code, `${err.message}${attemptsSuffix(attempt)}`, { ...err.toJSON(), cause: err }));
      }
      return err;
    }
    const code = errCode(err);
    const e = new ProvkitError(NetErrorCode.CONNECTION, `${o.method} ${at}: ${describe(err)}${attemptsSuffix(attempt)}`, { url: at, cause: err });
    return code !== undefined && TLS_CERT_CODES.has(code) ? e : markRetryable(e);
  }
}

/**
 * Re-throws a body error as `NET_SIZE_MISMATCH` (retryable, with the original
 * as `cause`) when a length was declared and not reached: a dropped connection
 * reads as "incorrect response size" as in the reference. Timeouts and
 * aborts keep their own meaning (the hop records them).
 */
async function* guardShortBody(
  body: AsyncIterable<Uint8Array>,
  received: () => number,
  total: number | undefined,
  hop: Hop,
): AsyncGenerator<Uint8Array> {
  try {
    yield* body;
  } catch (err) {
    const got = received();
    if (total !== undefined && got < total && hop.timedOut === undefined && !hop.controller.signal.aborted) {
      throw markRetryable(
        new ProvkitError(NetErrorCode.SIZE_MISMATCH, `incorrect response size: expected ${total} bytes, but got ${got} bytes from ${hop.url}`, {
          url: hop.url,
          expected: String(total),
          found: String(got),
          cause: err,
        }),
      );
    }
    throw err;
  }
}

/** `bytes START-END/TOTAL` of a 206, or undefined when absent or malformed. */
function parseContentRange(value: string | null): { start: number; end: number; total: number } | undefined {
  const m = value === null ? null : /^\s*bytes\s+(\d+)-(\d+)\/(\d+)\s*$/i.exec(value);
  if (!m) return undefined;
  const [start, end, total] = [Number(m[1]), Number(m[2]), Number(m[3])];
  return start <= end && end < total ? { start, end, total } : undefined;
}

/** A strong ETag (weak ones, `W/"…"`, must not be used with If-Range, RFC 9110 §13.1.5). */
function strongValidator(etag: string | null): string | undefined {
  if (etag === null) return undefined;
  const t = etag.trim();
  return t.startsWith('"') ? t : undefined;
}

/** The kept prefix of a partial download, then the rest of the body. */
async function* prefixThen(prefix: AsyncIterable<Buffer | string>, rest: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  for await (const chunk of prefix) yield Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
  yield* rest;
}

/** Drops the first `n` bytes of a stream (the prefix a resumed download re-fed to its transforms). */
function skipBytes(n: number): Transform {
  let left = n;
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      if (left >= chunk.length) {
        left -= chunk.length;
        done();
        return;
      }
      const out = left > 0 ? chunk.subarray(left) : chunk;
      left = 0;
      done(null, out);
    },
  });
}

/** A pass-through that tells `hop` bytes are moving (see {@link Hop.touch}). */
function touching(hop: Hop): Transform {
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      hop.touch();
      done(null, chunk);
    },
  });
}

/** Size of the writes a download makes to its file. */
const FILE_WRITE_BLOCK = 256 * 1024;

/**
 * Gathers the body's small chunks (a TLS record is at most 16 KiB) into
 * blocks of {@link FILE_WRITE_BLOCK}: every stage after it runs 16 times less
 * often, and every file write is a job for libuv's thread pool, and tens of
 * thousands of them per package kept the event loop waiting on the pool's
 * lock while zlib jobs filled the pool (measured with bench/commands.ts:
 * 2.2 s of the main thread in `writeBuffer` for 5 × 100 MB). One copy per
 * byte is far cheaper.
 */
function coalesce(): Transform {
  let block: Buffer | undefined;
  let used = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      for (let at = 0; at < chunk.length; ) {
        block ??= Buffer.allocUnsafe(FILE_WRITE_BLOCK);
        const n = chunk.copy(block, used, at);
        used += n;
        at += n;
        if (used === block.length) {
          this.push(block);
          block = undefined;
          used = 0;
        }
      }
      done();
    },
    flush(done) {
      if (block && used > 0) this.push(block.subarray(0, used));
      done();
    },
  });
}

/** Carries the hop that failed out of {@link HttpClient.open}. */
class HopError extends Error {
  constructor(
    override readonly cause: unknown,
    readonly hop: Hop,
  ) {
    super('hop failed');
  }
}

function attemptsSuffix(attempt: number): string {
  return attempt > 1 ? ` (after ${attempt} attempts)` : '';
}

function statusLine(res: { status: number; statusText: string }): string {
  return res.statusText ? `${res.status} ${res.statusText}` : String(res.status);
}

/** `200 OK`-style status text for messages. */
export function formatStatus(res: { status: number; statusText: string }): string {
  return statusLine(res);
}
