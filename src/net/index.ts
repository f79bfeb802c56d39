/**
 * `src/net`: the one HTTP layer of provkit.
 *
 * - {@link FetchLike}: the narrow fetch type every other layer is written
 *   against (injected, so tests need no network).
 * - {@link HttpClient}: policy over a `FetchLike` — timeouts, retries with
 *   backoff and `Retry-After`, redirects with credential scoping, size checks,
 *   progress events, and verify-then-commit downloads.
 * - {@link createNodeFetch}: the production `FetchLike` (node-fetch, proxies
 *   from the environment, extra CAs).
 *
 * What it does not do: JSON, providers, registries, hashing (a download takes
 * pass-through streams from the caller, so `src/hashing` stays above this
 * layer), printing. Errors: `ProvkitError` with the `NET_*` codes of
 * `ErrorCode` (src/errors.ts), `ABORTED`, `USAGE` or `IO`.
 */
export { HttpClient, formatStatus, tempPathFor } from './client.js';
export { parseHttpURL, redactURL } from './url.js';
export type {
  DownloadOptions,
  DownloadResult,
  HttpClientOptions,
  HttpResponse,
  RequestOptions,
  SendOptions,
} from './client.js';
export { createNodeFetch, trustedCAs } from './node-fetch.js';
export type { NodeFetch, NodeFetchOptions } from './node-fetch.js';
export { ProxyConfig } from './proxy.js';
export type { Env } from './proxy.js';
export { DEFAULT_BACKOFF, isRetryableStatus, parseRetryAfter, retryDelay } from './retry.js';
export type { BackoffOptions } from './retry.js';
export { systemClock } from './types.js';
export { eitherSignal } from './signals.js';
export { httpTuningFromEnv } from './tuning.js';
export type {
  BearerCredential,
  ByteStream,
  Clock,
  FetchHeaders,
  FetchInit,
  FetchLike,
  FetchResponse,
  HttpMethod,
  NetEvents,
} from './types.js';
export * from './oci/index.js';
