/**
 * How a failure inside one attempt of {@link HttpClient} becomes the
 * attempt's outcome: pure functions of values, no HTTP, no files, no state.
 *
 * The exchange (`client.ts`), the body (`body.ts`) and the download
 * (`download.ts`) report what went wrong as a {@link Failure} value, never by
 * throwing; {@link settle} then applies the attempt's state (the caller's
 * abort, a timeout of the exchange) and gives the {@link AttemptOutcome} that
 * the retry loop (`retry-loop.ts`) consumes. In this order:
 * 1. `final`: reaches the caller as it is, never retried (a `verify` hook's
 *    verdict, a file-system error, an expected size not met);
 * 2. the caller's signal aborted: `ABORTED`, final;
 * 3. a timeout of the exchange fired: `NET_TIMEOUT`, retryable;
 * 4. `verdict`, the exchange's own error (a short body, a body over the
 *    limit, a bad redirect): as it says, with ` (after N attempts)` added to a
 *    retryable one after the first attempt;
 * 5. `thrown`, whatever a fetch or a stream threw (a reset, a refused
 *    connection, TLS): `NET_CONNECTION`, retryable unless a certificate was
 *    refused (another attempt cannot fix that; retryablehttp does not retry
 *    unknown authorities either).
 */
import { ErrorCode, errorText, ProvkitError } from '../errors.js';
import { isRetryableStatus, parseRetryAfter } from './retry.js';
import type { AttemptOutcome } from './retry-loop.js';
import type { HttpMethod } from './types.js';

/** A failure inside one attempt, before the attempt's state is applied (see the module comment). */
export type Failure =
  | { readonly kind: 'final'; readonly error: unknown }
  | { readonly kind: 'verdict'; readonly error: ProvkitError; readonly retryable: boolean }
  | { readonly kind: 'thrown'; readonly cause: unknown };

/** A step of an attempt: its value, or what went wrong. */
export type Step<T> = { readonly kind: 'ok'; readonly value: T } | Failure;

/** What {@link settle} needs to know about the attempt, read when the failure is settled. */
export interface AttemptState {
  readonly method: HttpMethod;
  /** The URL as messages show it (redacted). */
  readonly url: string;
  /** 1-based. */
  readonly attempt: number;
  /** The caller's signal, if it has aborted. */
  readonly aborted: { readonly reason: unknown } | undefined;
  /** Why the exchange's timer fired, if it did. */
  readonly timedOut: string | undefined;
}

/** TLS failures that another attempt cannot fix. */
const TLS_CERT_CODES: ReadonlySet<string> = new Set([
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

/** The attempt's outcome for `failure` (see the module comment for the order of the rules). */
export function settle(failure: Failure, s: AttemptState): AttemptOutcome<never> {
  if (failure.kind === 'final') return failure;
  const cause = failure.kind === 'verdict' ? failure.error : failure.cause;
  if (s.aborted !== undefined) {
    return {
      kind: 'final',
      error: new ProvkitError(ErrorCode.ABORTED, `request to ${s.url} was interrupted`, {
        url: s.url,
        cause: s.aborted.reason,
      }),
    };
  }
  if (s.timedOut !== undefined) {
    return retryable(
      new ProvkitError(ErrorCode.NET_TIMEOUT, `${s.method} ${s.url}: ${s.timedOut}${attemptsSuffix(s.attempt)}`, {
        url: s.url,
        cause,
      }),
    );
  }
  if (failure.kind === 'verdict') {
    const e = failure.error;
    if (!failure.retryable) return { kind: 'final', error: e };
    return retryable(
      s.attempt > 1
        ? new ProvkitError(e.code, `${e.message}${attemptsSuffix(s.attempt)}`, { ...e.toJSON(), cause: e })
        : e,
    );
  }
  const e = new ProvkitError(
    ErrorCode.NET_CONNECTION,
    `${s.method} ${s.url}: ${errorText(cause)}${attemptsSuffix(s.attempt)}`,
    { url: s.url, ...serverCause(cause, s.url), cause },
  );
  const code = errCode(cause);
  return code !== undefined && TLS_CERT_CODES.has(code) ? { kind: 'final', error: e } : retryable(e);
}

function retryable(e: ProvkitError): AttemptOutcome<never> {
  return { kind: 'retryable', error: e, reason: `${e.code}: ${e.message}` };
}

/**
 * A response's status before it is consumed: a retryable one (429, 5xx but
 * 501) is a retryable outcome unless this is the last attempt, when it is
 * handed to the caller like any other (undefined: consume it).
 */
export function statusOutcome(
  res: { readonly status: number; readonly statusText: string; readonly headers: { get(name: string): string | null } },
  url: string,
  last: boolean,
  now: number,
): AttemptOutcome<never> | undefined {
  if (!isRetryableStatus(res.status) || last) return undefined;
  const reason = `HTTP ${statusLine(res)}`;
  return {
    kind: 'retryable',
    error: new ProvkitError(ErrorCode.NET_HTTP_STATUS, `unsuccessful request to ${url}: ${reason}`, {
      url,
      found: String(res.status),
    }),
    reason,
    status: res.status,
    retryAfterMs: parseRetryAfter(res.headers.get('retry-after'), now),
  };
}

/**
 * A connection failure that is the server's, not the request's, as the
 * diagnostic of its cause (`summary`, `detail` and `hint` of the error,
 * naming the server and nothing of the request): every request to that
 * server fails alike, and a run says it once (src/installer/causes.ts).
 * A server that answers a TLS handshake in plain text, one that refuses
 * connections, a host name that does not resolve; other failures (a reset,
 * a certificate) are left to the request's message.
 */
function serverCause(cause: unknown, url: string): { summary?: string; detail?: string; hint?: string } {
  const code = errCode(cause);
  let origin: string;
  let host: string;
  try {
    const u = new URL(url);
    origin = u.origin;
    host = u.host;
  } catch {
    return {};
  }
  const text = errorText(cause);
  if (text.startsWith('the server answered in plain text')) {
    return {
      summary: 'The server does not speak TLS',
      detail: `The server at ${origin} answered in plain text, not TLS: it serves http, not https, on this port.`,
      hint: 'Registries, network mirrors and OCI registries are reached over https only, as OpenTofu and Terraform reach them: give the server a TLS certificate, or use the port it serves https on.',
    };
  }
  if (code === 'ECONNREFUSED') {
    return {
      summary: 'Cannot connect to the server',
      detail: `Nothing accepts connections at ${host} (${origin}): connection refused.`,
      hint: 'Check the host and port, and that the server is running.',
    };
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    const name = (() => {
      try {
        return new URL(url).hostname;
      } catch {
        return host;
      }
    })();
    return {
      summary: "Cannot resolve the server's name",
      detail: `The host name ${name} (${origin}) does not resolve: ${code === 'ENOTFOUND' ? 'no such host' : 'temporary failure in name resolution'}.`,
      hint: 'Check the spelling of the host name and the name resolution (DNS, /etc/hosts) of this machine.',
    };
  }
  return {};
}

/** A file-system error as `IO` (`NOT_FOUND` for ENOENT) naming `file`; anything else unchanged. */
export function ioError(err: unknown, file: string): unknown {
  if (err instanceof ProvkitError) return err;
  const code = errCode(err);
  if (code === undefined || !/^E[A-Z]+$/.test(code)) return err;
  return new ProvkitError(code === 'ENOENT' ? ErrorCode.NOT_FOUND : ErrorCode.IO, `${file}: ${errorText(err)}`, {
    file,
    cause: err,
  });
}

/** The `code` of an error or of the first of its causes that has one. */
function errCode(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  const cause = (err as { cause?: unknown }).cause;
  return cause === undefined ? undefined : errCode(cause);
}

export function attemptsSuffix(attempt: number): string {
  return attempt > 1 ? ` (after ${attempt} attempts)` : '';
}

/** `200 OK`, or `200` when the status text is empty. */
export function statusLine(res: { readonly status: number; readonly statusText: string }): string {
  return res.statusText ? `${res.status} ${res.statusText}` : String(res.status);
}
