/**
 * The one HTTP client of provkit: policy over an injected {@link FetchLike},
 * and the composition of its parts.
 *
 * What it does, for every request:
 * - follows redirects itself (at most `maxRedirects`, default 10 as Go's
 *   client), and drops the bearer credential for good as soon as a redirect
 *   leaves the credential's host or downgrades https to http;
 * - applies a **connect timeout** (until the response headers arrive) and an
 *   **idle timeout** (between two body chunks) per attempt (`exchange.ts`);
 * - retries connection errors, timeouts, short bodies, 429 and 5xx (not 501)
 *   with exponential backoff, honouring `Retry-After` (`retry-loop.ts`,
 *   `retry.ts`); a retry restarts the whole exchange;
 * - checks the body length against `Content-Length` (unless the body was
 *   content-decoded) and against a caller's size limit (`body.ts`);
 * - reports progress, redirects and retries through typed callbacks, and
 *   never prints.
 *
 * {@link HttpClient.download} streams a body to a temporary file beside the
 * destination, verifies it and renames it into place, resuming a dropped
 * body with `Range` (`download.ts`); a destination is either absent,
 * untouched or complete.
 *
 * Each attempt's result is a value: the parts report failures as values
 * (`failure.ts`), the attempt settles them into an outcome, the retry loop
 * decides. Only the public methods throw, to their caller.
 *
 * What it does not do: decide which hosts get credentials (callers pass a
 * {@link BearerCredential} bound to a host), parse JSON, or know about
 * providers. Errors are {@link ProvkitError}s with `NET_*` codes (see
 * `codes.ts`) or `ABORTED`, with `url` set.
 */
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Transform, Writable } from 'node:stream';

import { ErrorCode, isProvkitError, ProvkitError } from '../errors.js';
import { BodyReader, drain, type BodyLimits } from './body.js';
import { PartialDownload, type DownloadResult } from './download.js';
import { Hop } from './exchange.js';
import { type LearntRedirect, LearntRedirects, type ProbeResult } from './learnt-redirects.js';
import { createNodeFetch } from './node-fetch.js';
import { ioError, settle, statusLine, statusOutcome, type Step } from './failure.js';
import { DEFAULT_BACKOFF, type BackoffOptions } from './retry.js';
import { retryLoop, type AttemptOutcome, type Settled } from './retry-loop.js';
import {
  systemClock,
  type BearerCredential,
  type Clock,
  type FetchLike,
  type FetchResponse,
  type HttpMethod,
  type NetEvents,
} from './types.js';
import { checkHttpURL, parseHttpURL, redactURL, splitUserinfo } from './url.js';

export type { DownloadResult } from './download.js';
export { tempPathFor } from './download.js';

/** Client-wide settings; every field has a default. */
export interface HttpClientOptions {
  /**
   * The HTTP exchange (default: {@link createNodeFetch} over `process.env`,
   * with its proxies and CA variables, as the CLI uses). `globalThis.fetch`
   * is one too.
   */
  readonly fetch?: FetchLike;
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
  /** Waits between retries: the least and the most (default 1 s and 30 s). */
  readonly backoff?: BackoffOptions;
  /** Upper bound for a server's `Retry-After` (default 60 s); a longer one is shortened to it. */
  readonly maxRetryAfterMs?: number;
  /** Default 10 (Go's client). */
  readonly maxRedirects?: number;
  /** The clock the timeouts and retry waits use (default the system clock); tests inject their own. */
  readonly clock?: Clock;
  /** Callbacks for every request (attempts, redirects, retries, progress). */
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
  /**
   * Retries after the first attempt (default: the client's `retries` for a `GET` or `HEAD`, none for another
   * method of {@link HttpClient.send}, the client's `downloadRetries` for a download).
   */
  readonly retries?: number;
  /** Redirects followed at most (default the client's `maxRedirects`). */
  readonly maxRedirects?: number;
  /** Time until the response headers arrive, per attempt and hop (default the client's `connectTimeoutMs`). */
  readonly connectTimeoutMs?: number;
  /** Longest gap between two body chunks, per attempt (default the client's `idleTimeoutMs`). */
  readonly idleTimeoutMs?: number;
  /** Refuse a body larger than this (`NET_RESPONSE_TOO_LARGE`, not retried). */
  readonly maxBytes?: number;
  /** Stops the request and its retries: the call rejects with a `ProvkitError` `ABORTED`. */
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
  /** The request method. */
  readonly method: HttpMethod;
  /** The request body, sent as it is (no `Content-Type` is added: give it in `headers`). */
  readonly body?: Buffer;
}

/** A complete response of {@link HttpClient.get}. */
export interface HttpResponse {
  /** The HTTP status code of the last response (after redirects). */
  readonly status: number;
  /** The status line's reason phrase (`OK`, `Not Found`), as the server sent it. */
  readonly statusText: string;
  /** The URL that answered, after redirects (relative references resolve against it). */
  readonly url: string;
  /** The response headers, as `FetchHeaders`: `name` in any case, null for a header not sent. */
  readonly headers: { get(name: string): string | null };
  /** The whole body (bounded by {@link RequestOptions.maxBytes}). */
  readonly body: Buffer;
  /** Attempts made, retries included. */
  readonly attempts: number;
}

/** Options of {@link HttpClient.download}: a request's, and what the file must be. */
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
  /**
   * The writer of the temporary file, in place of the client's own (a hash
   * worker that sees every byte writes them too: hashing/pool.ts
   * `ZipStream.writeFile`), or undefined for the client's. Called once per
   * attempt, after `transforms`, with the temporary file, where this
   * attempt's bytes start (`offset` > 0: a resume; the writer is then fed the
   * kept prefix first, as the transforms are, and must not write it again)
   * and the mode. It must create the file as the client does (`wx`, or `r+`
   * from `offset`), write every byte after the prefix at its position, fail
   * when it cannot, and emit `close` only once no write to the file can
   * happen any more. The blocks written to it are its own (the client does
   * not touch a block after writing it).
   */
  readonly writeFile?: (tempPath: string, offset: number, mode: number) => Writable | undefined;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

interface Resolved {
  /** A download's first attempt may start where a learnt redirect leads ({@link HttpClient.learnRedirect}). */
  learnt: boolean;
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

/**
 * See the module comment. Stateless apart from its options and the redirects
 * it learnt ahead ({@link HttpClient.learnRedirect}): share one per run.
 */
export class HttpClient {
  private readonly fetchImpl: FetchLike;
  private readonly clock: Clock;
  private readonly opts: HttpClientOptions;
  private readonly learnt = new LearntRedirects();

  /**
   * @throws {ProvkitError} without `fetch`: `USAGE` for an unusable proxy
   *   variable, `IO` for an unreadable CA file (see {@link createNodeFetch}).
   */
  constructor(options: HttpClientOptions = {}) {
    // Its idle keep-alive sockets do not hold the event loop (Node's Agent unrefs a free socket).
    this.fetchImpl = options.fetch ?? createNodeFetch({ env: process.env }).fetch;
    this.clock = options.clock ?? systemClock;
    this.opts = options;
  }

  /**
   * A hint that `count` requests to `url`'s origin are coming: connections
   * are opened now, in the background, so that they find them ready
   * ({@link FetchLike.preconnect}; nothing when the fetch cannot). Never
   * fails: a connection that cannot be opened is the request's to report.
   */
  preconnect(url: string, count: number): void {
    try {
      this.fetchImpl.preconnect?.(url, count);
    } catch {
      // A hint only (see above).
    }
  }

  /**
   * Calls `then` once a {@link download} from `url`'s origin was redirected
   * (at once if one was), never otherwise: the moment a coming download of
   * `url` is worth learning ahead ({@link learnRedirect}; an origin that
   * serves its archives directly is never probed). The client is the one
   * home of which origins redirect (net/learnt-redirects.ts). A `url` that
   * is not http(s) never calls it.
   */
  whenRedirecting(url: string, then: () => void): void {
    let parsed: URL;
    try {
      parsed = parseHttpURL(url);
    } catch {
      return;
    }
    this.learnt.whenRedirecting(parsed, then);
  }

  /**
   * Learns where a coming download of `url` will be redirected, ahead of it
   * (net/learnt-redirects.ts): one `GET` of `url` whose redirect is not
   * followed, with the headers and the credential the download's first
   * request would carry. When it answers with a redirect, the first attempt
   * of the next {@link download} of `url` starts at its target, as if the
   * origin had just answered so again (the same `onRedirect` event and
   * credential rule), saving that round trip. Only an origin from which a
   * download was redirected is asked this way (until one answers without a
   * redirect: the body is then not read). Resolves to the target's origin
   * (to warm connections there), or `undefined`; never fails.
   */
  async learnRedirect(
    url: string,
    options: Pick<RequestOptions, 'headers' | 'credential' | 'signal'> = {},
  ): Promise<string | undefined> {
    let current: URL;
    try {
      current = parseHttpURL(url);
    } catch {
      return undefined;
    }
    const o = this.resolve(options, 0);
    const probe = async (): Promise<ProbeResult> => {
      const hop = new Hop(this.clock, current, o.signal);
      try {
        const sent = splitUserinfo(current);
        const headers = { ...o.headers };
        if (o.credential !== undefined && current.host === o.credential.host)
          headers['authorization'] = `${o.credential.scheme ?? 'Bearer'} ${o.credential.token}`;
        else if (sent.authorization !== undefined && headers['authorization'] === undefined)
          headers['authorization'] = sent.authorization;
        if (this.fetchImpl.prepare) await this.fetchImpl.prepare(sent.href);
        hop.arm(o.connectTimeoutMs, `no response from ${hop.url} within ${o.connectTimeoutMs} ms`);
        const res = await this.fetchImpl(sent.href, {
          method: 'GET',
          headers,
          redirect: 'manual',
          signal: hop.controller.signal,
        });
        hop.disarm();
        const location = res.headers.get('location');
        // A redirect's small body, or the start of an archive served directly: not read.
        hop.abort();
        if (!REDIRECT_STATUSES.has(res.status) || location === null)
          return res.status >= 200 && res.status < 300 ? { kind: 'direct' } : { kind: 'failed' };
        const target = redirectTarget(location, current);
        if ('cause' in target) return { kind: 'failed' };
        return { kind: 'redirect', redirect: { to: target.url, status: res.status, at: this.clock.now() } };
      } catch {
        return { kind: 'failed' };
      } finally {
        hop.dispose();
      }
    };
    const learnt = await this.learnt.learn(current, probe);
    return learnt?.to.origin;
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
      const body = await new BodyReader(res, hop, this.limits(o)).readAll();
      if (body.kind !== 'ok') return body;
      return {
        kind: 'ok',
        value: {
          status: res.status,
          statusText: res.statusText,
          url: hop.href,
          headers: res.headers,
          body: body.value,
          attempts,
        },
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
    const o = this.resolve(
      options,
      options.retries ?? (idempotent ? (this.opts.retries ?? 1) : 0),
      options.method,
      options.body,
    );
    return this.run(url, o, async (res, hop, attempts) => {
      let body: Step<Buffer>;
      if (options.method === 'HEAD') {
        // No body (its Content-Length describes the GET's); Node's parser reads none.
        body = (await drain(res, hop)) ?? { kind: 'ok', value: Buffer.alloc(0) };
      } else body = await new BodyReader(res, hop, this.limits(o)).readAll();
      if (body.kind !== 'ok') return body;
      return {
        kind: 'ok',
        value: {
          status: res.status,
          statusText: res.statusText,
          url: hop.url,
          headers: res.headers,
          body: body.value,
          attempts,
        },
      };
    });
  }

  /**
   * GET `url` into `destPath`, verify-then-commit (see `download.ts`).
   * The destination's directory is created if needed. Any status other than
   * 200 (or a 206 to a resume) fails, after retries, with `unsuccessful
   * request to URL: STATUS`. The temporary file survives between attempts
   * only while a resume is possible, and never this call.
   *
   * @throws {ProvkitError} as {@link get}, plus `NET_HTTP_STATUS`, `IO`, and
   *   whatever `verify` throws. The destination is never left partial.
   */
  async download(url: string, destPath: string, options: DownloadOptions = {}): Promise<DownloadResult> {
    const o = { ...this.resolve(options, options.retries ?? this.opts.downloadRetries ?? 2), learnt: true };
    try {
      await mkdir(dirname(destPath), { recursive: true, mode: 0o755 });
    } catch (err) {
      throw ioError(err, dirname(destPath));
    }
    const partial = new PartialDownload(destPath);
    try {
      return await this.run(
        url,
        o,
        (res, hop, attempts) => partial.receive(res, hop, attempts, options, this.limits(o)),
        () => partial.rangeHeaders(),
      );
    } finally {
      // Retries exhausted, aborted, or a final error: no temporary file survives.
      await partial.discard();
    }
  }

  private resolve(options: RequestOptions, retries: number, method: HttpMethod = 'GET', body?: Buffer): Resolved {
    const headers: Record<string, string> = {
      'user-agent': this.opts.userAgent ?? 'provkit',
      ...lowerHeaders(options.headers),
    };
    return {
      learnt: false,
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

  private limits(o: Resolved): BodyLimits {
    return {
      maxBytes: o.maxBytes,
      idleTimeoutMs: o.idleTimeoutMs,
      progressIntervalMs: this.opts.progressIntervalMs ?? 250,
      events: o.events,
      clock: this.clock,
    };
  }

  /**
   * The retry loop around {@link open} + `consume`: a retryable status is
   * retried while attempts remain, then handed to `consume` like any other.
   * Throws (the public boundary) the settled failure.
   */
  private async run<T>(
    url: string,
    o: Resolved,
    consume: (res: FetchResponse, hop: Hop, attempts: number) => Promise<Step<T>>,
    extraHeaders?: () => Record<string, string> | undefined,
  ): Promise<T> {
    parseHttpURL(url);
    const shown = redactURL(url);
    const settled: Settled<T> = await retryLoop<T>(
      {
        retries: o.retries,
        backoff: this.opts.backoff ?? DEFAULT_BACKOFF,
        maxRetryAfterMs: this.opts.maxRetryAfterMs,
        sleep: (ms, signal) => this.clock.sleep(ms, signal),
        signal: o.signal,
        aborted: (reason) =>
          new ProvkitError(ErrorCode.ABORTED, `request to ${shown} was interrupted`, { url: shown, cause: reason }),
        onAttempt: (attempt) => {
          for (const e of o.events) e.onRequest?.({ url: shown, attempt });
        },
        onRetry: (notice) => {
          for (const e of o.events) e.onRetry?.({ url: shown, ...notice });
        },
      },
      (attempt, last) => this.attempt(url, o, attempt, last, consume, extraHeaders),
    );
    if (settled.kind === 'final') throw settled.error;
    return settled.value;
  }

  /**
   * One attempt of {@link run}: {@link open} + `consume`, its outcome as a
   * value. A retryable status is a retryable outcome unless this is the last
   * attempt (then `consume` gets it like any other); a failure of the
   * exchange or of `consume` is settled with the hop's state ({@link settle}).
   */
  private async attempt<T>(
    url: string,
    o: Resolved,
    attempt: number,
    last: boolean,
    consume: (res: FetchResponse, hop: Hop, attempts: number) => Promise<Step<T>>,
    extraHeaders?: () => Record<string, string> | undefined,
  ): Promise<AttemptOutcome<T>> {
    const { hop, step } = await this.open(url, o, extraHeaders?.());
    try {
      const settleAt = (failure: Exclude<Step<unknown>, { kind: 'ok' }>): AttemptOutcome<T> =>
        settle(failure, {
          method: o.method,
          url: hop.url,
          attempt,
          aborted: o.signal?.aborted ? { reason: o.signal.reason } : undefined,
          timedOut: hop.timedOut,
        });
      if (step.kind !== 'ok') return settleAt(step);
      const res = step.value;
      const status = statusOutcome(res, hop.url, last, this.clock.now());
      if (status !== undefined) {
        hop.abort();
        return status;
      }
      // `consume` reports its failures as values; a throw would be a defect
      // or a caller's callback, settled as the exchange's (as before issue 12).
      const consumed = await consume(res, hop, attempt).catch((cause: unknown): Step<T> => ({ kind: 'thrown', cause }));
      return consumed.kind === 'ok' ? consumed : settleAt(consumed);
    } finally {
      hop.dispose();
    }
  }

  /**
   * Sends the request and follows redirects: the final response, or the
   * failure, with the hop it happened on (whose timeout state settles it).
   * A download's first attempt starts where a redirect learnt ahead leads
   * ({@link learnRedirect}); when that ends in a failure or an error status,
   * it starts again from `url` itself, so that a learnt redirect can only
   * save time.
   */
  private async open(
    url: string,
    o: Resolved,
    extra?: Record<string, string>,
  ): Promise<{ hop: Hop; step: Step<FetchResponse> }> {
    const learnt =
      o.learnt && extra === undefined && o.maxRedirects > 0
        ? await this.learnt.take(parseHttpURL(url), () => this.clock.now())
        : undefined;
    if (learnt === undefined) return this.follow(url, o, extra, undefined);
    const via = await this.follow(url, o, extra, learnt);
    // The learnt target failed (an expired signed URL, a CDN that went away): the origin is asked, as without it.
    if ((via.step.kind === 'ok' && via.step.value.status < 400) || o.signal?.aborted === true) return via;
    via.hop.abort();
    via.hop.dispose();
    return this.follow(url, o, extra, undefined);
  }

  /** {@link open}'s hops, from `url` or, with `learnt`, from where it leads. */
  private async follow(
    url: string,
    o: Resolved,
    extra: Record<string, string> | undefined,
    learnt: LearntRedirect | undefined,
  ): Promise<{ hop: Hop; step: Step<FetchResponse> }> {
    let current = parseHttpURL(url);
    let credential = o.credential;
    let first = 0;
    if (learnt !== undefined) {
      const next = learnt.to;
      const dropped =
        credential !== undefined &&
        (next.host !== credential.host || (current.protocol === 'https:' && next.protocol === 'http:'));
      if (dropped) credential = undefined;
      for (const e of o.events)
        e.onRedirect?.({
          from: redactURL(current),
          to: redactURL(next),
          status: learnt.status,
          credentialsDropped: dropped,
        });
      current = next;
      first = 1;
    }
    for (let redirects = first; ; redirects++) {
      const hop = new Hop(this.clock, current, o.signal);
      const headers = { ...o.headers, ...extra };
      const sent = splitUserinfo(current);
      if (credential !== undefined && current.host === credential.host)
        headers['authorization'] = `${credential.scheme ?? 'Bearer'} ${credential.token}`;
      else if (sent.authorization !== undefined && headers['authorization'] === undefined)
        headers['authorization'] = sent.authorization;
      try {
        // eslint-disable-next-line no-await-in-loop -- once per hop, before its timer starts
        if (this.fetchImpl.prepare) await this.fetchImpl.prepare(sent.href);
        hop.arm(o.connectTimeoutMs, `no response from ${hop.url} within ${o.connectTimeoutMs} ms`);
        // eslint-disable-next-line no-await-in-loop -- each redirect hop depends on the previous one
        const res = await this.fetchImpl(sent.href, {
          method: o.method,
          headers,
          redirect: 'manual',
          signal: hop.controller.signal,
          ...(o.body === undefined ? {} : { body: overArrayBuffer(o.body) }),
        });
        hop.disarm();
        const location = res.headers.get('location');
        // Only GET and HEAD follow redirects: an upload's Location is the caller's business.
        const follows = o.method === 'GET' || o.method === 'HEAD';
        if (!follows || !REDIRECT_STATUSES.has(res.status) || location === null)
          return { hop, step: { kind: 'ok', value: res } };
        hop.abort();
        if (redirects >= o.maxRedirects) {
          const error = new ProvkitError(
            ErrorCode.NET_TOO_MANY_REDIRECTS,
            `${o.method} ${redactURL(url)}: stopped after ${o.maxRedirects} redirects`,
            { url: redactURL(url) },
          );
          return failed(hop, { kind: 'verdict', error, retryable: false });
        }
        const target = redirectTarget(location, current);
        if ('cause' in target) {
          const error = new ProvkitError(
            ErrorCode.NET_CONNECTION,
            `${o.method} ${hop.url}: invalid redirect to ${JSON.stringify(redactURL(location))}`,
            { url: hop.url, cause: target.cause },
          );
          return failed(hop, { kind: 'verdict', error, retryable: false });
        }
        const next = target.url;
        // A download's origin that redirects: its next archive URLs are worth learning ahead (learnRedirect).
        if (o.learnt && redirects === 0) this.learnt.sawRedirect(current);
        const dropped =
          credential !== undefined &&
          (next.host !== credential.host || (current.protocol === 'https:' && next.protocol === 'http:'));
        if (dropped) credential = undefined;
        for (const e of o.events)
          e.onRedirect?.({ from: hop.url, to: redactURL(next), status: res.status, credentialsDropped: dropped });
        hop.dispose();
        current = next;
      } catch (cause) {
        // The injected fetch (or a caller's callback) reports failure by throwing: the boundary where it becomes a value.
        // A refusal by the fetch's own policy (NET_REFUSED) is its verdict: no attempt can change it.
        if (isProvkitError(cause, ErrorCode.NET_REFUSED)) return failed(hop, { kind: 'final', error: cause });
        return failed(hop, { kind: 'thrown', cause });
      }
    }
  }
}

/**
 * `body` as {@link FetchInit} types it: over an `ArrayBuffer` (what Node's
 * `Buffer.from`, `alloc` and `concat` make), a copy for one over a
 * `SharedArrayBuffer`.
 */
function overArrayBuffer(body: Buffer): Buffer<ArrayBuffer> {
  return body.buffer instanceof ArrayBuffer ? (body as Buffer<ArrayBuffer>) : Buffer.from(body);
}

/** A failed hop: disposed (it keeps its timeout state for {@link settle}). */
function failed(hop: Hop, step: Exclude<Step<FetchResponse>, { kind: 'ok' }>): { hop: Hop; step: Step<FetchResponse> } {
  hop.dispose();
  return { hop, step };
}

/** Where a redirect's `Location` leads (resolved against the current URL): an http(s) URL, or why not. */
function redirectTarget(location: string, current: URL): { readonly url: URL } | { readonly cause: unknown } {
  let resolved: URL;
  try {
    resolved = new URL(location, current);
  } catch (cause) {
    // The URL parser says why only by throwing.
    return { cause };
  }
  const checked = checkHttpURL(resolved.href);
  return checked instanceof ProvkitError ? { cause: checked } : { url: checked };
}
function lowerHeaders(h: Readonly<Record<string, string>> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (h) for (const [k, v] of Object.entries(h)) out[k.toLowerCase()] = v;
  return out;
}

/** `200 OK`-style status text for messages. */
export function formatStatus(res: { status: number; statusText: string }): string {
  return statusLine(res);
}
