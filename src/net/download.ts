/**
 * Download to a file, one attempt at a time: the body of a response streams
 * through the caller's pass-through transforms into a temporary file beside
 * the destination, which is verified and renamed into place only when
 * everything passed. Used by {@link HttpClient.download} (`client.ts`), whose
 * retry loop calls {@link receive} once per attempt with the download's
 * {@link PartialDownload}.
 *
 * Contract:
 * - The temporary file (`tempPathFor`: `.<name>.<random>.partial` beside the
 *   destination) is opened `wx` (unique per use); on a final failure it is
 *   removed, so a destination is either absent, untouched or complete
 *   (CONTRIBUTING.md house style 3). It survives between attempts only while
 *   a resume is possible, and never the download ({@link PartialDownload.discard}).
 * - Statuses: 200 starts over; a 206 is used only to resume (any other 206 is
 *   a retryable `NET_CONNECTION`); any other status is a final
 *   `NET_HTTP_STATUS` "unsuccessful request to URL: STATUS".
 * - Resume: a body that drops after N bytes is resumed with `Range: bytes=N-`
 *   (and `If-Range`: the strong ETag, else Last-Modified) when the 200 said
 *   `Accept-Ranges: bytes` and had a `Content-Length`. Only a 206 whose
 *   `Content-Range` continues exactly at N with the same total is used
 *   ({@link continuesAt}); another range is a retryable `NET_CONNECTION` and
 *   the next attempt starts over. The transforms of a resumed attempt are fed
 *   the kept prefix (read back from the temporary file) before the new bytes,
 *   so a hasher sees every byte once and in order.
 * - A body failure (a dropped connection, a short body: `body.ts`) ends the
 *   pipeline rather than tearing it down, so every stage flushes what it
 *   holds and the temporary file keeps every byte received: a resume
 *   continues from the last of them, not from whatever part had reached the
 *   disk when the connection dropped (which, on a busy machine, could be
 *   nothing). The attempt is then the body's failure. A timeout or the
 *   caller's abort tears the pipeline down and discards it; a failure of the
 *   file or a transform is final (`IO`); so are an expected size not met
 *   (`NET_SIZE_MISMATCH`) and whatever `verify` throws.
 *
 * Failures are values ({@link Step}); the only state is the per-download
 * {@link PartialDownload}.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { Readable, Transform, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

import { ProvkitError, ErrorCode } from '../errors.js';
import { tempPathBeside } from '../fs/temp-name.js';
import { DOWNLOAD_BLOCK } from '../fs/blocks.js';
import { BodyReader, checkedLength, type BodyLimits } from './body.js';
import type { Hop } from './exchange.js';
import { attemptsSuffix, ioError, statusLine, type Step } from './failure.js';
import type { FetchResponse } from './types.js';

/** What {@link receive} needs of `DownloadOptions`. */
export interface DownloadSpec {
  readonly expectedSize?: number;
  readonly transforms?: () => Transform[];
  readonly verify?: (tempPath: string, info: { readonly size: number; readonly url: string }) => Promise<void>;
  readonly mode?: number;
  /** See `DownloadOptions.writeFile` (client.ts). */
  readonly writeFile?: (tempPath: string, offset: number, mode: number) => Writable | undefined;
  /** The caller's signal: its abort tears the pipeline down. */
  readonly signal?: AbortSignal | undefined;
}

/** What {@link HttpClient.download} wrote. */
export interface DownloadResult {
  /** The file written: the `destPath` the caller gave, complete and renamed into place. */
  readonly path: string;
  /** The URL that answered, after redirects. */
  readonly url: string;
  /** The file's size in bytes. */
  readonly size: number;
  /** Attempts made, retries included. */
  readonly attempts: number;
  /** How many attempts continued a partial body with `Range` instead of starting over. */
  readonly resumes?: number;
}

/** The temporary file {@link HttpClient.download} writes beside `dest`: `.<name>.<random>.partial`. */
export function tempPathFor(dest: string): string {
  return tempPathBeside(dest, { ext: '.partial' });
}

/** `bytes START-END/TOTAL` of a 206, or undefined when absent or malformed. */
export function parseContentRange(value: string | null): { start: number; end: number; total: number } | undefined {
  const m = value === null ? null : /^\s*bytes\s+(\d+)-(\d+)\/(\d+)\s*$/i.exec(value);
  if (!m) return undefined;
  const [start, end, total] = [Number(m[1]), Number(m[2]), Number(m[3])];
  return start <= end && end < total ? { start, end, total } : undefined;
}

/** Whether a 206's `Content-Range` is exactly the rest, from byte `kept`, of a body of `total` bytes (when known). */
export function continuesAt(
  range: { start: number; end: number; total: number } | undefined,
  kept: number,
  total: number | undefined,
): boolean {
  return (
    range !== undefined &&
    range.start === kept &&
    (total === undefined || range.total === total) &&
    range.end === range.total - 1
  );
}

/** A strong ETag (weak ones, `W/"…"`, must not be used with If-Range, RFC 9110 §13.1.5). */
export function strongValidator(etag: string | null): string | undefined {
  if (etag === null) return undefined;
  const t = etag.trim();
  return t.startsWith('"') ? t : undefined;
}

/** What a 200 says about resuming its body: its length, its `If-Range` validator, whether ranges are accepted. */
export function resumeInfo(headers: FetchResponse['headers']): {
  total: number | undefined;
  validator: string | undefined;
  resumable: boolean;
} {
  const total = checkedLength(headers);
  return {
    total,
    validator: strongValidator(headers.get('etag')) ?? headers.get('last-modified') ?? undefined,
    resumable: total !== undefined && /(^|,)\s*bytes\s*(,|$)/i.test(headers.get('accept-ranges') ?? ''),
  };
}

/** The temporary file of one download and what a resume needs, carried from one attempt to the next. */
export class PartialDownload {
  /** The temporary file of the body so far, if any. */
  private tmp: string | undefined;
  /** Bytes of the body in `tmp` (a prefix, in order). */
  private kept = 0;
  /** `If-Range` value: a strong ETag, else Last-Modified. */
  private validator: string | undefined;
  /** The full body length, from the 200's Content-Length. */
  private total: number | undefined;
  /** The 200 said `Accept-Ranges: bytes` and had a length. */
  private resumable = false;
  resumes = 0;

  constructor(readonly dest: string) {}

  /** The headers of the next attempt: `Range` (and `If-Range`) when a prefix is kept. */
  rangeHeaders(): Record<string, string> | undefined {
    return this.tmp !== undefined && this.resumable && this.kept > 0
      ? { range: `bytes=${this.kept}-`, ...(this.validator === undefined ? {} : { 'if-range': this.validator }) }
      : undefined;
  }

  /** Removes the temporary file, if any: the next attempt starts over. */
  async discard(): Promise<void> {
    const tmp = this.tmp;
    this.tmp = undefined;
    this.kept = 0;
    if (tmp !== undefined) await rm(tmp, { force: true });
  }

  /** One attempt of the download (see the module comment). */
  async receive(
    res: FetchResponse,
    hop: Hop,
    attempt: number,
    spec: DownloadSpec,
    limits: BodyLimits,
  ): Promise<Step<DownloadResult>> {
    const resuming = this.tmp !== undefined && this.kept > 0 && res.status === 206;
    if (res.status === 206 && !resuming) {
      hop.abort();
      return verdict(
        new ProvkitError(
          ErrorCode.NET_CONNECTION,
          `GET ${hop.url}: unexpected 206 Partial Content to a request without Range`,
          { url: hop.url },
        ),
        true,
      );
    }
    if (res.status !== 200 && !resuming) {
      hop.abort();
      const error = new ProvkitError(
        ErrorCode.NET_HTTP_STATUS,
        `unsuccessful request to ${hop.url}: ${statusLine(res)}${attemptsSuffix(attempt)}`,
        {
          url: hop.url,
          found: String(res.status),
        },
      );
      return verdict(error, false);
    }
    let offset = 0;
    if (resuming) {
      // The server must send exactly the rest of the same representation.
      const range = parseContentRange(res.headers.get('content-range'));
      if (!continuesAt(range, this.kept, this.total)) {
        hop.abort();
        const message = `GET ${hop.url}: the resumed response's Content-Range ${JSON.stringify(res.headers.get('content-range'))} does not continue byte ${this.kept}`;
        await this.discard();
        return verdict(new ProvkitError(ErrorCode.NET_CONNECTION, message, { url: hop.url }), true);
      }
      offset = this.kept;
      this.resumes += 1;
      for (const e of limits.events) e.onResume?.({ url: hop.url, offset, total: range!.total });
    } else {
      // A full body: whatever a previous attempt kept is worthless now.
      await this.discard();
      ({ total: this.total, validator: this.validator, resumable: this.resumable } = resumeInfo(res.headers));
      this.tmp = tempPathFor(this.dest);
    }
    return this.write(this.tmp!, offset, res, hop, attempt, spec, limits);
  }

  /** Streams the body (after the kept prefix, on a resume) through the transforms into `tmp`, then verifies and renames. */
  private async write(
    tmp: string,
    offset: number,
    res: FetchResponse,
    hop: Hop,
    attempt: number,
    spec: DownloadSpec,
    limits: BodyLimits,
  ): Promise<Step<DownloadResult>> {
    let transforms: Transform[];
    try {
      transforms = spec.transforms?.() ?? [];
    } catch (err) {
      // The caller's factory: settled as the exchange's own failures were before issue 12.
      await this.discard();
      return { kind: 'thrown', cause: err };
    }
    const reader = new BodyReader(res, hop, limits, offset);
    // A body failure ends the body's chunks (see the module comment).
    const body = reader.chunks('end');
    // On a resume the transforms (a zh: hasher) are fed the kept prefix
    // first, so that they see every byte exactly once and in order; the
    // prefix is dropped again before the file, which is appended to.
    const source = Readable.from(
      offset > 0 ? prefixThen(createReadStream(tmp, { start: 0, end: offset - 1 }), body) : body,
    );
    const writer = spec.writeFile?.(tmp, offset, spec.mode ?? 0o644);
    const file: Writable =
      writer ??
      createWriteStream(tmp, offset > 0 ? { flags: 'r+', start: offset } : { flags: 'wx', mode: spec.mode ?? 0o644 });
    // Blocks first: every later stage (hashers, the file) then handles
    // 16 times fewer chunks than the body's TLS-record-sized ones. A writer
    // of its own gathers its blocks itself (into memory it reuses) and skips
    // the kept prefix itself.
    const stages: Array<NodeJS.ReadableStream | NodeJS.WritableStream | NodeJS.ReadWriteStream> = [
      source,
      ...(writer ? [] : [coalesce()]),
      ...transforms,
    ];
    if (offset > 0 && !writer) stages.push(skipBytes(offset));
    // Bytes reaching the file keep the idle timer off too: while the
    // body waits for a slow (but moving) pipeline, the download is not idle.
    stages.push(touching(hop), file);
    const failed = await runPipeline(stages, hop, spec.signal);
    if (failed === undefined && reader.failure !== undefined) {
      // The network's: every byte received is in the file; keep it for a
      // resume (settled and maybe retried by the client).
      await this.keep(file);
      return reader.failure;
    }
    if (failed !== undefined) {
      if (failed.halted) {
        // A timeout or the caller's abort (settled as such by the client); no resume from it.
        await closed(file);
        await this.discard();
        return { kind: 'thrown', cause: failed.error };
      }
      // The file or a transform: final.
      await this.discard();
      return { kind: 'final', error: ioError(failed.error, tmp) };
    }
    const size = offset + reader.received;
    if (spec.expectedSize !== undefined && size !== spec.expectedSize) {
      await this.discard();
      const error = new ProvkitError(
        ErrorCode.NET_SIZE_MISMATCH,
        `incorrect response size: expected ${spec.expectedSize} bytes, but got ${size} bytes from ${hop.url}`,
        {
          url: hop.url,
          expected: String(spec.expectedSize),
          found: String(size),
        },
      );
      return { kind: 'final', error };
    }
    try {
      await spec.verify?.(tmp, { size, url: hop.url });
      await rename(tmp, this.dest);
      this.tmp = undefined;
    } catch (err) {
      await this.discard();
      return { kind: 'final', error: ioError(err, this.dest) };
    }
    return { kind: 'ok', value: { path: this.dest, url: hop.url, size, attempts: attempt, resumes: this.resumes } };
  }

  /** After a body failure: remember how many bytes reached the temporary file (all of them, in order). */
  private async keep(file: Writable): Promise<void> {
    await closed(file);
    if (!this.resumable || this.tmp === undefined) {
      await this.discard();
      return;
    }
    this.kept = await stat(this.tmp)
      .then((s) => s.size)
      .catch(() => 0);
  }
}

/**
 * Runs the pipeline; undefined when it finished, else what it rejected with
 * and whether the exchange's timeout or the caller's abort tore it down.
 *
 * A timeout or the caller's abort ends the exchange, but the body only
 * notices while the pipeline reads it: a stage that stopped taking bytes
 * (backpressure) would leave the body parked and the pipeline waiting for
 * ever. So they tear the whole pipeline down (pinned by
 * test/e2e/stream-hasher.test.ts). (Other aborts of the hop come with a body
 * error.)
 */
async function runPipeline(
  stages: Array<NodeJS.ReadableStream | NodeJS.WritableStream | NodeJS.ReadWriteStream>,
  hop: Hop,
  signal: AbortSignal | undefined,
): Promise<{ error: unknown; halted: boolean } | undefined> {
  const halt = new AbortController();
  const onHopAbort = (): void => {
    if (hop.timedOut !== undefined || signal?.aborted) halt.abort(hop.controller.signal.reason);
  };
  hop.controller.signal.addEventListener('abort', onHopAbort, { once: true });
  if (hop.controller.signal.aborted) onHopAbort();
  try {
    await pipeline(stages, { signal: halt.signal });
    return undefined;
  } catch (error) {
    // Node's pipeline reports a failed stage by rejecting: the boundary where it becomes a value.
    return { error, halted: halt.signal.aborted };
  } finally {
    hop.controller.signal.removeEventListener('abort', onHopAbort);
  }
}

function verdict(error: ProvkitError, retryable: boolean): Step<never> {
  return { kind: 'verdict', error, retryable };
}

async function closed(file: Writable): Promise<void> {
  if (!file.closed) await new Promise<void>((resolveClose) => file.once('close', () => resolveClose()));
}

/** The kept prefix of a partial download, then the rest of the body. */
async function* prefixThen(
  prefix: AsyncIterable<Buffer | string>,
  rest: AsyncIterable<Buffer>,
): AsyncGenerator<Buffer> {
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

/**
 * Gathers the body's small chunks (a TLS record is at most 16 KiB) into
 * blocks of {@link DOWNLOAD_BLOCK}: every stage after it runs 16 times less
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
      for (let at = 0; at < chunk.length;) {
        block ??= Buffer.allocUnsafe(DOWNLOAD_BLOCK);
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
