/**
 * Retry policy: which failures are retried and how long to wait.
 *
 * Modelled on go-retryablehttp as OpenTofu configures it (docs/reference.md §4.1 items
 * 57–58): connection errors, 429 and every 5xx except 501 are retried, with
 * an exponential backoff from `minMs` doubling up to `maxMs`, and a
 * `Retry-After` header (seconds or an HTTP date) on a 429 or 503 replaces the
 * computed delay.
 */

/** Backoff bounds. The reference uses 1 s and 30 s. */
export interface BackoffOptions {
  /** The delay before the first retry, in milliseconds; each further retry doubles it (retryablehttp's `RetryWaitMin`). */
  readonly minMs: number;
  /** The longest computed delay, in milliseconds (retryablehttp's `RetryWaitMax`); a `Retry-After` has its own cap. */
  readonly maxMs: number;
}

/** The backoff between retries unless a caller says otherwise: from 1 s, doubling, up to 30 s. */
export const DEFAULT_BACKOFF: BackoffOptions = { minMs: 1000, maxMs: 30_000 };

/** Whether a response status is worth another attempt (429, 5xx except 501). */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || (status >= 500 && status <= 599 && status !== 501);
}

/**
 * `Retry-After` in milliseconds: a non-negative integer number of seconds, or
 * an HTTP date (relative to `nowMs`, never negative). Undefined when absent or
 * unparsable.
 */
export function parseRetryAfter(value: string | null, nowMs: number): number | undefined {
  if (value === null) return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const date = Date.parse(v);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - nowMs);
}

/**
 * The delay before retry number `retry` (1 for the first retry): `minMs ·
 * 2^(retry-1)`, capped at `maxMs`; or the server's `Retry-After` (for 429 and
 * 503 only, as retryablehttp), capped at `maxRetryAfterMs`.
 */
export function retryDelay(
  retry: number,
  backoff: BackoffOptions,
  response?: { status: number; retryAfterMs: number | undefined },
  maxRetryAfterMs = 60_000,
): number {
  if (response && (response.status === 429 || response.status === 503) && response.retryAfterMs !== undefined) {
    return Math.min(response.retryAfterMs, maxRetryAfterMs);
  }
  return Math.min(backoff.minMs * 2 ** (retry - 1), backoff.maxMs);
}
