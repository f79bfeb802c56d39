/**
 * The narrow HTTP interface the rest of provkit is written against.
 *
 * {@link FetchLike} is a subset of WHATWG `fetch` that node-fetch, undici's
 * `fetch` and a ten-line test double all satisfy. Everything above `src/net`
 * receives an {@link HttpClient} (or a `FetchLike`) as a parameter; nothing
 * creates connections on its own (CONTRIBUTING.md house style 7).
 */

/** What the client passes to a {@link FetchLike}. */
export interface FetchInit {
  /** `PUT`, `POST` and `PATCH` are used by the OCI registry client (publishing), with a {@link body}. */
  readonly method: HttpMethod;
  /** Header names are lower case. */
  readonly headers: Readonly<Record<string, string>>;
  /** Always `manual`: the client follows redirects itself, to drop credentials across hosts. */
  readonly redirect: 'manual';
  /** Aborts the request: the fetch rejects, and a body being read stops with an error. */
  readonly signal: AbortSignal;
  /**
   * The request body (`PUT`, `POST`, `PATCH`), sent with its `Content-Length`; absent for `GET` and `HEAD`.
   * Bytes over an `ArrayBuffer`, as the WHATWG `BodyInit` of `RequestInit` takes them (so that
   * `globalThis.fetch` is a `FetchLike`); the client's are `Buffer`s.
   */
  readonly body?: Buffer<ArrayBuffer>;
}

/** The request methods provkit sends. */
export type HttpMethod = 'GET' | 'HEAD' | 'PUT' | 'POST' | 'PATCH';

/** Response headers, looked up case-insensitively. */
export interface FetchHeaders {
  /** The header's value (several joined with `, `), or null when the response has none; `name` in any case. */
  get(name: string): string | null;
}

/** What a {@link FetchLike} resolves to once the response headers have arrived. */
export interface FetchResponse {
  /** The HTTP status code (a 3xx too: redirects are not followed by the fetch). */
  readonly status: number;
  /** The status line's reason phrase (may be empty, as under HTTP/2). */
  readonly statusText: string;
  /** The response headers. */
  readonly headers: FetchHeaders;
  /**
   * The body as chunks, or as a WHATWG `ReadableStream` of them (what
   * `globalThis.fetch` gives under the DOM's types, which do not declare it
   * async-iterable). Must stop with an error when the request's signal is
   * aborted. `null` for a response without a body.
   */
  readonly body: AsyncIterable<Uint8Array> | ByteStream | null;
}

/** A WHATWG `ReadableStream` of bytes, as far as the client reads one (see {@link FetchResponse.body}). */
export interface ByteStream {
  /** A reader of the stream's chunks (`read`, `cancel`, `releaseLock`, as WHATWG streams define them). */
  getReader(): {
    read(): Promise<{ readonly done: boolean; readonly value?: Uint8Array }>;
    cancel(reason?: unknown): Promise<void>;
    releaseLock(): void;
  };
}

/**
 * One HTTP exchange without redirect following: resolves when the response
 * headers arrive, rejects on connection or TLS failure or when `init.signal`
 * aborts.
 */
export type FetchLike = ((url: string, init: FetchInit) => Promise<FetchResponse>) & {
  /**
   * Optional one-time set-up for a request to `url` (loading code, building
   * a TLS context), awaited by the client before the request's timers start,
   * so that lazy loading never counts against a connect timeout.
   */
  readonly prepare?: (url: string) => Promise<void>;
  /**
   * Optional: opens connections to `url`'s origin, in the background, until
   * `count` are open or opening, and keeps them for the next requests to it
   * (a request that finds none waits for a TCP and a TLS handshake, 2 round
   * trips, bench/PROFILE.md "WAN"). A hint: failures are not reported (a
   * request opens its own connection as before).
   */
  readonly preconnect?: (url: string, count: number) => void;
};

/**
 * Time, injectable so that tests run retries and timeouts in milliseconds or
 * with no real waiting at all.
 */
export interface Clock {
  /** Milliseconds since an arbitrary epoch (only differences are used). */
  now(): number;
  /** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Runs `fn` after `ms` unless cancelled; used for the connect and idle timeouts. */
  setTimer(fn: () => void, ms: number): { cancel(): void };
}

/**
 * The real clock (`Date.now`, `setTimeout`).
 *
 * `sleep` keeps the process alive: a retry backoff is work in progress, and
 * nothing else (no socket) holds the event loop while it waits. An unref'd
 * backoff let Node exit with 13 (an unsettled top-level await) after one
 * HTTP 500. The connect and idle timers of `setTimer` are unref'd: they only
 * guard a request whose socket already keeps the loop alive, and a timer left
 * behind must not keep a finished process running.
 */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason as Error);
        return;
      }
      const onAbort = (): void => {
        clearTimeout(t);
        reject(signal?.reason as Error);
      };
      const t = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
  setTimer: (fn, ms) => {
    const t = setTimeout(fn, ms);
    t.unref();
    return { cancel: () => clearTimeout(t) };
  },
};

/**
 * A bearer token and the one host it belongs to. The client sends it only
 * while the request URL's host equals {@link host} and never over plain http
 * after an https start, so a redirect to another host (or a downgrade) drops it.
 */
export interface BearerCredential {
  /** `hostname[:port]` as in a URL's `host` (lower case, punycode, default port omitted). */
  readonly host: string;
  /** The secret: the bearer token, or with `Basic` the base64 of `user:password`. Never logged. */
  readonly token: string;
  /**
   * The `Authorization` scheme (default `Bearer`). `Basic` (token =
   * base64 of `user:password`) is used for OCI registries that challenge
   * with Basic; the same host binding applies.
   */
  readonly scheme?: 'Bearer' | 'Basic';
}

/** Progress and retry notifications. All optional: an absent callback costs nothing. */
export interface NetEvents {
  /** Before each attempt (after redirects are resolved the URL may differ; see `onRedirect`). */
  onRequest?(e: { readonly url: string; readonly attempt: number }): void;
  /**
   * After a redirect response is followed: `from` and `to` URLs, the status, and whether credentials were dropped
   * (another host, or a downgrade to http).
   */
  onRedirect?(e: {
    readonly from: string;
    readonly to: string;
    readonly status: number;
    readonly credentialsDropped: boolean;
  }): void;
  /** Before waiting to retry. `reason` is a short text (`HTTP 503`, `NET_TIMEOUT: ...`). */
  onRetry?(e: {
    readonly url: string;
    readonly attempt: number;
    readonly delayMs: number;
    readonly reason: string;
    readonly status?: number;
  }): void;
  /** A download continues a partial body with `Range: bytes=OFFSET-` (the server answered 206). */
  onResume?(e: { readonly url: string; readonly offset: number; readonly total: number }): void;
  /** Body bytes received so far, throttled (see `progressIntervalMs`); always once at the end. */
  onProgress?(e: { readonly url: string; readonly received: number; readonly total: number | undefined }): void;
}
