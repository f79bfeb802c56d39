/**
 * issue 12: how a failure inside one attempt becomes the attempt's outcome
 * (`src/net/failure.ts`), table-style: the rules the exchange, the body and
 * the download used to express with tagged errors and thrown control flow.
 */
import { describe, expect, it } from 'vitest';

import { ErrorCode, ProvkitError } from '../../src/errors.js';
import { settle, statusOutcome, type AttemptState, type Failure } from '../../src/net/failure.js';

const URL_ = 'https://example.test/p.zip';

function state(over: Partial<AttemptState> = {}): AttemptState {
  return { method: 'GET', url: URL_, attempt: 1, aborted: undefined, timedOut: undefined, ...over };
}

const reset = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
const tls = Object.assign(new Error('self-signed certificate'), { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' });
const tlsDeep = Object.assign(new Error('request failed'), {
  cause: Object.assign(new Error('unable to verify'), { code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' }),
});
const short = new ProvkitError(
  ErrorCode.NET_SIZE_MISMATCH,
  `incorrect response size: expected 10 bytes, but got 4 bytes from ${URL_}`,
  { url: URL_, expected: '10', found: '4' },
);
const tooLarge = new ProvkitError(
  ErrorCode.NET_RESPONSE_TOO_LARGE,
  `response from ${URL_} is 99 bytes, more than the limit of 10`,
  { url: URL_ },
);
const verifyVerdict = new Error('checksum mismatch');

interface Row {
  readonly name: string;
  readonly failure: Failure;
  readonly state?: Partial<AttemptState>;
  readonly kind: 'retryable' | 'final';
  readonly code?: string;
  readonly message?: string;
  /** The very object given (no new error made). */
  readonly same?: unknown;
}

const rows: Row[] = [
  {
    name: 'final passes through untouched',
    failure: { kind: 'final', error: verifyVerdict },
    kind: 'final',
    same: verifyVerdict,
  },
  {
    name: 'final wins over an abort and a timeout',
    failure: { kind: 'final', error: verifyVerdict },
    state: { aborted: { reason: 'x' }, timedOut: 'late' },
    kind: 'final',
    same: verifyVerdict,
  },
  {
    name: "the caller's abort: ABORTED, final, over a timeout and a verdict",
    failure: { kind: 'verdict', error: short, retryable: true },
    state: { aborted: { reason: 'SIGINT' }, timedOut: 'no data' },
    kind: 'final',
    code: ErrorCode.ABORTED,
    message: `request to ${URL_} was interrupted`,
  },
  {
    name: 'a timeout: NET_TIMEOUT, retryable, whatever was thrown',
    failure: { kind: 'thrown', cause: new Error('The operation was aborted') },
    state: { timedOut: `no data from ${URL_} for 50 ms` },
    kind: 'retryable',
    code: ErrorCode.NET_TIMEOUT,
    message: `GET ${URL_}: no data from ${URL_} for 50 ms`,
  },
  {
    name: 'a timeout after the first attempt says how many',
    failure: { kind: 'verdict', error: short, retryable: true },
    state: { timedOut: 'no response within 10 ms', attempt: 3, method: 'HEAD' },
    kind: 'retryable',
    code: ErrorCode.NET_TIMEOUT,
    message: `HEAD ${URL_}: no response within 10 ms (after 3 attempts)`,
  },
  {
    name: 'a retryable verdict on attempt 1: as it is',
    failure: { kind: 'verdict', error: short, retryable: true },
    kind: 'retryable',
    same: short,
  },
  {
    name: 'a retryable verdict later: the same code and context, the count added',
    failure: { kind: 'verdict', error: short, retryable: true },
    state: { attempt: 2 },
    kind: 'retryable',
    code: ErrorCode.NET_SIZE_MISMATCH,
    message: `${short.message} (after 2 attempts)`,
  },
  {
    name: 'a final verdict (too large): as it is, also later',
    failure: { kind: 'verdict', error: tooLarge, retryable: false },
    state: { attempt: 2 },
    kind: 'final',
    same: tooLarge,
  },
  {
    name: 'a connection error: NET_CONNECTION, retryable, its code in words',
    failure: { kind: 'thrown', cause: reset },
    kind: 'retryable',
    code: ErrorCode.NET_CONNECTION,
    message: `GET ${URL_}: connection reset by peer`,
  },
  {
    name: 'a connection error later says how many',
    failure: { kind: 'thrown', cause: new Error('connect ECONNREFUSED 127.0.0.1:1') },
    state: { attempt: 4, method: 'PUT' },
    kind: 'retryable',
    code: ErrorCode.NET_CONNECTION,
    message: `PUT ${URL_}: connect ECONNREFUSED 127.0.0.1:1 (after 4 attempts)`,
  },
  {
    name: 'a refused certificate: NET_CONNECTION, final',
    failure: { kind: 'thrown', cause: tls },
    kind: 'final',
    code: ErrorCode.NET_CONNECTION,
  },
  {
    name: "a refused certificate in the cause's cause: final",
    failure: { kind: 'thrown', cause: tlsDeep },
    kind: 'final',
    code: ErrorCode.NET_CONNECTION,
  },
  {
    name: 'a non-Error thrown value',
    failure: { kind: 'thrown', cause: 'boom' },
    kind: 'retryable',
    code: ErrorCode.NET_CONNECTION,
    message: `GET ${URL_}: boom`,
  },
];

describe('settle (a failure × the attempt state → the outcome)', () => {
  it.each(rows)('$name', (row) => {
    const outcome = settle(row.failure, state(row.state));
    expect(outcome.kind).toBe(row.kind);
    if (outcome.kind === 'ok') return;
    if (row.same !== undefined) expect(outcome.error).toBe(row.same);
    if (row.code !== undefined) expect(outcome.error).toMatchObject({ code: row.code });
    if (row.message !== undefined) expect((outcome.error as Error).message).toBe(row.message);
    const e = outcome.error as ProvkitError;
    if (outcome.kind === 'retryable') {
      expect(outcome.reason).toBe(`${e.code}: ${e.message}`);
      expect(outcome.status).toBeUndefined();
    }
    if (row.code !== undefined && row.code !== ErrorCode.ABORTED) expect(e.url).toBe(URL_);
  });

  it('keeps the cause: the thrown error, or the verdict a count was added to', () => {
    const thrown = settle({ kind: 'thrown', cause: reset }, state());
    expect(thrown.kind !== 'ok' && (thrown.error as Error).cause).toBe(reset);
    const later = settle({ kind: 'verdict', error: short, retryable: true }, state({ attempt: 2 }));
    expect(later.kind !== 'ok' && (later.error as ProvkitError).cause).toBe(short);
    expect(later.kind !== 'ok' && (later.error as ProvkitError).expected).toBe('10');
    const aborted = settle({ kind: 'thrown', cause: reset }, state({ aborted: { reason: 'SIGTERM' } }));
    expect(aborted.kind !== 'ok' && (aborted.error as Error).cause).toBe('SIGTERM');
  });
});

describe('statusOutcome (a status before it is consumed)', () => {
  const res = (status: number, statusText = '', retryAfter?: string) => ({
    status,
    statusText,
    headers: { get: (name: string) => (name === 'retry-after' ? (retryAfter ?? null) : null) },
  });
  const now = Date.parse('2026-01-01T00:00:00Z');

  it.each([200, 206, 304, 404, 501])('%i is consumed, never retried', (status) => {
    expect(statusOutcome(res(status), URL_, false, now)).toBeUndefined();
    expect(statusOutcome(res(status), URL_, true, now)).toBeUndefined();
  });

  it.each([429, 500, 502, 503, 599])('%i is retried, unless on the last attempt (then consumed)', (status) => {
    expect(statusOutcome(res(status), URL_, false, now)).toMatchObject({
      kind: 'retryable',
      status,
      reason: `HTTP ${status}`,
    });
    expect(statusOutcome(res(status), URL_, true, now)).toBeUndefined();
  });

  it.each([
    { retryAfter: undefined, ms: undefined, statusText: 'Service Unavailable', reason: 'HTTP 503 Service Unavailable' },
    { retryAfter: '7', ms: 7000, statusText: '', reason: 'HTTP 503' },
    {
      retryAfter: 'Thu, 01 Jan 2026 00:00:30 GMT',
      ms: 30_000,
      statusText: 'Service Unavailable',
      reason: 'HTTP 503 Service Unavailable',
    },
  ])('503 with Retry-After $retryAfter: $ms ms, reason "$reason"', ({ retryAfter, ms, statusText, reason }) => {
    const outcome = statusOutcome(res(503, statusText, retryAfter), URL_, false, now);
    expect(outcome).toMatchObject({ kind: 'retryable', status: 503, reason, retryAfterMs: ms });
    const error = outcome?.kind === 'retryable' ? (outcome.error as ProvkitError) : undefined;
    expect(error).toMatchObject({ code: ErrorCode.NET_HTTP_STATUS, found: '503', url: URL_ });
    expect(error?.message).toBe(`unsuccessful request to ${URL_}: ${reason}`);
  });
});
