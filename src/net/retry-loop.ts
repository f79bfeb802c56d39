/**
 * The retry loop of {@link HttpClient}, as a function of the attempts'
 * outcomes and a clock: no HTTP, no files, no module state, nothing thrown.
 *
 * Each attempt reports its outcome as a value ({@link AttemptOutcome}, see
 * `failure.ts` for how failures become one); the loop decides whether to try
 * again, how long to wait (exponential backoff, or the server's `Retry-After`
 * on a 429/503: see `retry.ts`, modelled on go-retryablehttp as OpenTofu
 * configures it), tells the caller before each attempt and before each wait,
 * and stops early when the caller's signal aborts (also during the backoff).
 * It resolves with the settled outcome ({@link Settled}): the value, or the
 * error the public method throws to its caller.
 *
 * With `retries` = R there are at most R + 1 attempts; attempt number R + 1 is
 * told it is the last (`last: true`), so that a retryable status it receives
 * can be handed back as an ordinary response instead of a failure.
 */
import { retryDelay, type BackoffOptions } from './retry.js';
import type { Clock } from './types.js';

/** What one attempt came to. */
export type AttemptOutcome<T> =
  | { readonly kind: 'ok'; readonly value: T }
  | {
      /** Another attempt may cure it (a connection error, a timeout, a short body, a 429/5xx). */
      readonly kind: 'retryable';
      /** What the caller gets when no attempt is left. */
      readonly error: unknown;
      /** The short text of `onRetry` (`HTTP 503 Service Unavailable`, `NET_TIMEOUT: …`). */
      readonly reason: string;
      /** The HTTP status of a retryable response; undefined for a failure without one. */
      readonly status?: number;
      /** The response's `Retry-After` in milliseconds (used for 429 and 503 only). */
      readonly retryAfterMs?: number | undefined;
    }
  | { readonly kind: 'final'; readonly error: unknown };

/** How the loop ended: the successful value, or the error for the caller. */
export type Settled<T> =
  { readonly kind: 'ok'; readonly value: T } | { readonly kind: 'final'; readonly error: unknown };

/** Before waiting to retry (the payload of `NetEvents.onRetry` minus the URL). */
export interface RetryNotice {
  readonly attempt: number;
  readonly delayMs: number;
  readonly reason: string;
  readonly status?: number;
}

export interface RetryLoopOptions {
  /** Retries after the first attempt (negative counts as 0). */
  readonly retries: number;
  readonly backoff: BackoffOptions;
  /** Cap on a server's `Retry-After` (default of {@link retryDelay}: 60 s). */
  readonly maxRetryAfterMs?: number | undefined;
  /** The backoff wait; rejects when `signal` aborts (the clock's contract). */
  readonly sleep: Clock['sleep'];
  readonly signal?: AbortSignal | undefined;
  /** The error settled with when `signal` has aborted (checked before each attempt and after an interrupted wait). */
  readonly aborted: (reason: unknown) => unknown;
  /** Before each attempt (1-based). */
  readonly onAttempt?: (attempt: number) => void;
  /** Before each backoff wait. */
  readonly onRetry?: (notice: RetryNotice) => void;
}

/**
 * Runs `attempt` until it succeeds, fails for good, or the retries run out;
 * resolves with the successful value or the last failure (or the `aborted`
 * error), as a {@link Settled} value.
 */
export async function retryLoop<T>(
  options: RetryLoopOptions,
  attempt: (n: number, last: boolean) => Promise<AttemptOutcome<T>>,
): Promise<Settled<T>> {
  const retries = Math.max(0, options.retries);
  const aborted = (): Settled<T> | undefined =>
    options.signal?.aborted ? { kind: 'final', error: options.aborted(options.signal.reason) } : undefined;
  for (let n = 1; ; n++) {
    const stop = aborted();
    if (stop) return stop;
    options.onAttempt?.(n);
    const last = n > retries;
    // eslint-disable-next-line no-await-in-loop -- attempts are sequential by definition
    const outcome = await attempt(n, last);
    if (outcome.kind === 'ok') return outcome;
    if (outcome.kind === 'final' || last) return { kind: 'final', error: outcome.error };
    const delayMs =
      outcome.status === undefined
        ? retryDelay(n, options.backoff)
        : retryDelay(
            n,
            options.backoff,
            { status: outcome.status, retryAfterMs: outcome.retryAfterMs },
            options.maxRetryAfterMs,
          );
    options.onRetry?.({
      attempt: n,
      delayMs,
      reason: outcome.reason,
      ...(outcome.status === undefined ? {} : { status: outcome.status }),
    });
    // eslint-disable-next-line no-await-in-loop -- the backoff between attempts
    const interrupted = await options.sleep(delayMs, options.signal).then(
      () => undefined,
      () => aborted(),
    );
    if (interrupted) return interrupted;
  }
}
