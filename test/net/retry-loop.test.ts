/**
 * issue 12: the retry loop of the HTTP client as a pure function of the
 * attempts' outcomes and an injected clock (no HTTP, no timers).
 */
import { describe, expect, it } from 'vitest';

import { retryLoop, type AttemptOutcome, type RetryLoopOptions, type RetryNotice } from '../../src/net/retry-loop.js';

class Aborted extends Error {}

/** A fake clock: `sleep` records the wait and returns at once (or runs `during` first). */
function harness(retries: number, during?: (ms: number) => void) {
  const sleeps: number[] = [];
  const attempts: number[] = [];
  const retriesSeen: RetryNotice[] = [];
  const controller = new AbortController();
  const options: RetryLoopOptions = {
    retries,
    backoff: { minMs: 1000, maxMs: 30_000 },
    maxRetryAfterMs: 60_000,
    signal: controller.signal,
    sleep: (ms, signal) => {
      sleeps.push(ms);
      during?.(ms);
      return signal?.aborted ? Promise.reject(signal.reason as Error) : Promise.resolve();
    },
    aborted: (reason) => new Aborted(`aborted: ${String(reason)}`),
    onAttempt: (n) => attempts.push(n),
    onRetry: (notice) => retriesSeen.push(notice),
  };
  return { options, sleeps, attempts, retriesSeen, controller };
}

/** An attempt function that plays `outcomes` in order, recording `last`. */
function script<T>(outcomes: Array<AttemptOutcome<T>>): {
  fn: (n: number, last: boolean) => Promise<AttemptOutcome<T>>;
  lasts: boolean[];
} {
  const lasts: boolean[] = [];
  return {
    lasts,
    fn: (n, last) => {
      lasts.push(last);
      const o = outcomes[n - 1];
      if (o === undefined) throw new Error(`unexpected attempt ${n}`);
      return Promise.resolve(o);
    },
  };
}

const status = (code: number, retryAfterMs?: number): AttemptOutcome<string> => ({
  kind: 'retryable',
  error: new Error(`HTTP ${code}`),
  reason: `HTTP ${code}`,
  status: code,
  ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
});

describe('retryLoop (pure: outcomes × clock)', () => {
  it('500 then success: one retry after the first backoff step, the value returned', async () => {
    const h = harness(2);
    const s = script([status(500), { kind: 'ok', value: 'body' }]);
    await expect(retryLoop(h.options, s.fn)).resolves.toEqual({ kind: 'ok', value: 'body' });
    expect(h.attempts).toEqual([1, 2]);
    expect(s.lasts).toEqual([false, false]);
    expect(h.sleeps).toEqual([1000]);
    expect(h.retriesSeen).toEqual([{ attempt: 1, delayMs: 1000, reason: 'HTTP 500', status: 500 }]);
  });

  it('503 with Retry-After: the server delay replaces the backoff (capped by maxRetryAfterMs)', async () => {
    const h = harness(3);
    const s = script([status(503, 7000), status(503, 120_000), { kind: 'ok', value: 'ok' }]);
    await expect(retryLoop(h.options, s.fn)).resolves.toEqual({ kind: 'ok', value: 'ok' });
    expect(h.sleeps).toEqual([7000, 60_000]);
    expect(h.retriesSeen.map((r) => r.status)).toEqual([503, 503]);
  });

  it('Retry-After on a 500 is ignored (429 and 503 only, as retryablehttp)', async () => {
    const h = harness(1);
    const s = script([status(500, 9000), { kind: 'ok', value: 'ok' }]);
    await retryLoop(h.options, s.fn);
    expect(h.sleeps).toEqual([1000]);
  });

  it('non-retryable 404: final at once, no wait, no onRetry', async () => {
    const h = harness(5);
    const failure = new Error('404 Not Found');
    const s = script<string>([{ kind: 'final', error: failure }]);
    await expect(retryLoop(h.options, s.fn)).resolves.toEqual({ kind: 'final', error: failure });
    expect(h.attempts).toEqual([1]);
    expect(h.sleeps).toEqual([]);
    expect(h.retriesSeen).toEqual([]);
  });

  it('exhausting retries: R + 1 attempts, the last told it is last, exponential backoff, the last failure is the result', async () => {
    const h = harness(3);
    const fail = (i: number): AttemptOutcome<string> => ({
      kind: 'retryable',
      error: new Error(`reset ${i}`),
      reason: `NET_CONNECTION: reset ${i}`,
    });
    const s = script([fail(1), fail(2), fail(3), fail(4)]);
    expect(await retryLoop(h.options, s.fn)).toMatchObject({ kind: 'final', error: { message: 'reset 4' } });
    expect(h.attempts).toEqual([1, 2, 3, 4]);
    expect(s.lasts).toEqual([false, false, false, true]);
    expect(h.sleeps).toEqual([1000, 2000, 4000]);
    expect(h.retriesSeen.map((r) => r.reason)).toEqual([
      'NET_CONNECTION: reset 1',
      'NET_CONNECTION: reset 2',
      'NET_CONNECTION: reset 3',
    ]);
    expect(h.retriesSeen.every((r) => !('status' in r))).toBe(true);
  });

  it('retries: 0 makes one attempt, which is the last', async () => {
    const h = harness(0);
    const s = script([status(502)]);
    expect(await retryLoop(h.options, s.fn)).toMatchObject({ kind: 'final', error: { message: 'HTTP 502' } });
    expect(s.lasts).toEqual([true]);
    expect(h.sleeps).toEqual([]);
  });

  it('abort during backoff: the aborted error, no further attempt', async () => {
    const controller = { abort: (_why: string): void => undefined };
    const h = harness(4, () => controller.abort('user'));
    controller.abort = (why) => h.controller.abort(why);
    const s = script([status(503), { kind: 'ok', value: 'never' }]);
    const settled = await retryLoop(h.options, s.fn);
    const err = settled.kind === 'final' ? settled.error : undefined;
    expect(err).toBeInstanceOf(Aborted);
    expect((err as Error).message).toBe('aborted: user');
    expect(h.attempts).toEqual([1]);
    expect(h.sleeps).toEqual([1000]);
  });

  it('already aborted: no attempt at all', async () => {
    const h = harness(2);
    h.controller.abort('before');
    const s = script([{ kind: 'ok', value: 'never' }]);
    const settled = await retryLoop(h.options, s.fn);
    expect(settled.kind === 'final' && settled.error instanceof Aborted).toBe(true);
    expect(h.attempts).toEqual([]);
  });
});
