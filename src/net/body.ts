/**
 * The body of one response: read with the exchange's idle timeout, checked
 * against its `Content-Length` and a size limit, reported as progress.
 *
 * Contract:
 * - The declared length ({@link checkedLength}) is the `Content-Length` of a
 *   body that is not content-decoded (a decoded body's length is not the
 *   header's); a malformed header declares nothing. A body that ends before
 *   or after it is `NET_SIZE_MISMATCH` ("incorrect response size: expected N
 *   bytes, but got M bytes from URL", the reference's text), retryable; so is
 *   a connection lost mid-body while a length was declared (unless the
 *   exchange timed out or was aborted: those keep their meaning).
 * - A body over `maxBytes` (declared, or counted as it arrives) is
 *   `NET_RESPONSE_TOO_LARGE`, not retryable, and the exchange is aborted.
 * - The idle timeout runs from the first read to the end of the body; each
 *   chunk keeps it off ({@link Hop.armIdle}).
 * - Progress events: at most one per `progressIntervalMs` while the body
 *   arrives, and one at the end. `offset` (bytes a previous attempt already
 *   delivered, for a resumed download) counts for the limit and the progress.
 *
 * Failures are values: {@link BodyReader.failure}. A failed iteration of
 * {@link BodyReader.chunks} ends with a throw only because that is how an
 * iterator (or the stream pipeline that drains it) stops, or, when asked,
 * quietly (a download, so that its stages flush); callers decide by the
 * `failure` value and the identity of what was thrown, never by its type.
 */
import { ProvkitError, ErrorCode } from '../errors.js';
import type { Hop } from './exchange.js';
import type { Failure } from './failure.js';
import type { ByteStream, Clock, FetchResponse, NetEvents } from './types.js';

/** The body rules of one request. */
export interface BodyLimits {
  /** Refuse a body larger than this. */
  readonly maxBytes: number | undefined;
  /** Longest gap between two chunks (0 = none). */
  readonly idleTimeoutMs: number;
  /** Least time between two progress events. */
  readonly progressIntervalMs: number;
  /** The request's callbacks (`onProgress`; a download's `onResume`). */
  readonly events: readonly NetEvents[];
  readonly clock: Clock;
}

type Headers = FetchResponse['headers'];

/** The length a body is checked against: `Content-Length`, unless absent, malformed or the body is content-decoded. */
export function checkedLength(headers: Headers): number | undefined {
  const header = headers.get('content-length');
  const declared = header !== null && /^\d+$/.test(header.trim()) ? Number(header.trim()) : undefined;
  const encoded = (headers.get('content-encoding') ?? 'identity').trim().toLowerCase() !== 'identity';
  return encoded ? undefined : declared;
}

/** The body-length rule: the `NET_SIZE_MISMATCH` verdict when `received` is not the declared `total`. */
export function lengthMismatch(
  total: number | undefined,
  received: number,
  url: string,
  cause?: unknown,
): ProvkitError | undefined {
  if (total === undefined || received === total) return undefined;
  return new ProvkitError(
    ErrorCode.NET_SIZE_MISMATCH,
    `incorrect response size: expected ${total} bytes, but got ${received} bytes from ${url}`,
    {
      url,
      expected: String(total),
      found: String(received),
      ...(cause === undefined ? {} : { cause }),
    },
  );
}

/** Reads one response body once; see the module comment. */
export class BodyReader {
  // The state of the one read, written by the reader only (callers read it through the getters).
  private recordedFailure: Extract<Failure, { kind: 'verdict' | 'thrown' }> | undefined;
  private bytesReceived = 0;
  private readonly total: number | undefined;

  constructor(
    private readonly res: FetchResponse,
    private readonly hop: Hop,
    private readonly limits: BodyLimits,
    private readonly offset = 0,
  ) {
    this.total = checkedLength(res.headers);
  }

  /** Why the body failed; undefined while it has not. */
  get failure(): Failure | undefined {
    return this.recordedFailure;
  }

  /** What was thrown to end the iteration for {@link failure} (what a pipeline draining it rejects with). */
  get thrown(): unknown {
    const f = this.recordedFailure;
    return f === undefined ? undefined : f.kind === 'verdict' ? f.error : f.cause;
  }

  /** Bytes of this body received so far (`offset` not included). */
  get received(): number {
    return this.bytesReceived;
  }

  /**
   * The body as chunks (see the module comment); iterate once. Whatever ends
   * it with an error is recorded (also a throwing progress callback: it
   * fails the body, as it did before issue 12). With `atFailure: 'end'` the
   * iteration then simply ends (the failure is only {@link failure}): a
   * download's pipeline flushes every byte received instead of being torn
   * down (download.ts).
   */
  async *chunks(atFailure: 'throw' | 'end' = 'throw'): AsyncGenerator<Buffer> {
    try {
      yield* this.read();
    } catch (err) {
      if (this.recordedFailure === undefined) this.fail({ kind: 'thrown', cause: err });
      if (atFailure === 'throw') throw err;
    }
  }

  private async *read(): AsyncGenerator<Buffer> {
    const { hop, limits, offset, total } = this;
    if (limits.maxBytes !== undefined && total !== undefined && offset + total > limits.maxBytes) {
      hop.abort();
      throw this.fail(
        verdict(
          new ProvkitError(
            ErrorCode.NET_RESPONSE_TOO_LARGE,
            `response from ${hop.url} is ${offset + total} bytes, more than the limit of ${limits.maxBytes}`,
            {
              url: hop.url,
              expected: String(limits.maxBytes),
              found: String(offset + total),
            },
          ),
          false,
        ),
      );
    }
    const progress = limits.events.filter((e) => e.onProgress !== undefined);
    const report = (): void => {
      for (const e of progress)
        e.onProgress?.({
          url: hop.url,
          received: offset + this.bytesReceived,
          total: total === undefined ? undefined : offset + total,
        });
    };
    let lastEvent = limits.clock.now();
    hop.armIdle(limits.idleTimeoutMs, `no data from ${hop.url} for ${limits.idleTimeoutMs} ms`);
    try {
      if (this.res.body !== null) {
        for await (const raw of this.source(chunksOf(this.res.body))) {
          const chunk = Buffer.isBuffer(raw) ? raw : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
          hop.touch();
          this.bytesReceived += chunk.length;
          if (limits.maxBytes !== undefined && offset + this.bytesReceived > limits.maxBytes) {
            hop.abort();
            throw this.fail(
              verdict(
                new ProvkitError(
                  ErrorCode.NET_RESPONSE_TOO_LARGE,
                  `response from ${hop.url} is larger than the limit of ${limits.maxBytes} bytes`,
                  {
                    url: hop.url,
                    expected: String(limits.maxBytes),
                  },
                ),
                false,
              ),
            );
          }
          if (progress.length > 0 && limits.clock.now() - lastEvent >= limits.progressIntervalMs) {
            lastEvent = limits.clock.now();
            report();
          }
          yield chunk;
        }
      }
    } finally {
      hop.disarm();
    }
    const short = lengthMismatch(total, this.bytesReceived, hop.url);
    if (short !== undefined) throw this.fail(verdict(short, true));
    report();
  }

  /** Reads the whole body: the bytes, or the failure. */
  async readAll(): Promise<{ readonly kind: 'ok'; readonly value: Buffer } | Failure> {
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of this.chunks()) chunks.push(chunk);
    } catch (err) {
      // chunks() recorded it.
      return this.recordedFailure ?? { kind: 'thrown', cause: err };
    }
    return { kind: 'ok', value: Buffer.concat(chunks) };
  }

  /**
   * The raw body; an error it ends with is recorded: a `NET_SIZE_MISMATCH`
   * verdict (with the error as cause) when a length was declared and not
   * reached, so that a dropped connection reads as the reference's
   * "incorrect response size"; else the error itself.
   */
  private async *source(body: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
    try {
      yield* body;
    } catch (err) {
      const { hop, total } = this;
      const got = this.bytesReceived;
      if (total !== undefined && got < total && hop.timedOut === undefined && !hop.controller.signal.aborted) {
        throw this.fail(verdict(lengthMismatch(total, got, hop.url, err)!, true));
      }
      throw this.fail({ kind: 'thrown', cause: err });
    }
  }

  /** Records `failure`; returns what to throw to end the iteration. */
  private fail(failure: Extract<Failure, { kind: 'verdict' | 'thrown' }>): unknown {
    this.recordedFailure = failure;
    return this.thrown;
  }
}

/** Drains a body that is not read (a `HEAD`'s), keeping the idle timer off: undefined, or the failure. */
export async function drain(res: FetchResponse, hop: Hop): Promise<Failure | undefined> {
  if (res.body === null) return undefined;
  try {
    for await (const _ of chunksOf(res.body)) hop.touch();
  } catch (err) {
    return { kind: 'thrown', cause: err };
  }
  return undefined;
}

/** A body's chunks: the body itself when it is async-iterable, else read from its `ReadableStream` reader (cancelled when left early). */
function chunksOf(body: AsyncIterable<Uint8Array> | ByteStream): AsyncIterable<Uint8Array> {
  if (Symbol.asyncIterator in body) return body;
  return (async function* read(): AsyncGenerator<Uint8Array> {
    const reader = body.getReader();
    let done = false;
    try {
      for (;;) {
        // eslint-disable-next-line no-await-in-loop -- one chunk after the other
        const next = await reader.read();
        if (next.done) {
          done = true;
          return;
        }
        if (next.value !== undefined) yield next.value;
      }
    } finally {
      if (!done) await reader.cancel().catch(() => undefined);
      reader.releaseLock();
    }
  })();
}

function verdict(error: ProvkitError, retryable: boolean): Extract<Failure, { kind: 'verdict' }> {
  return { kind: 'verdict', error, retryable };
}
