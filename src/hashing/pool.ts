/**
 * Hashing across cores: a pool of worker threads, each hashing one package
 * file at a time and any number of downloads as they stream (inflate, SHA-256 and CRC-32 in the worker's own thread: inflate.ts;
 * the worker's file writes go to libuv's thread pool), so that several
 * packages fill the machine.
 *
 * Contract: at most `concurrency` packages are hashed at once while more
 * than {@link HashPoolOptions.shareUpTo} file jobs are waiting or running;
 * once the rest of the batch fits in `shareUpTo`, all of it runs at once, on
 * one worker each (the tail of a batch shares the cores instead of one
 * package running alone at the end: 5 equal packages on 2 cores take 2.5
 * package-times, not 3, as 2 + 3 at once; bench/PROFILE.md). Jobs queue
 * beyond that. Streamed archives (`streamZip`) never queue: each gets a
 * worker of its own up to `shareUpTo` workers, then they share the least
 * loaded, several on one worker. Results are the same values the in-process functions return
 * (errors are rebuilt as ProvkitError with the same code and context).
 * Workers are started lazily, kept while the pool is open, and do not keep
 * the process alive while idle. `concurrency: 0` hashes in this thread.
 */
import { createHash } from 'node:crypto';
import { close as closeFd, open as openFd } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Transform, Writable, type TransformCallback } from 'node:stream';
import { createRequire } from 'node:module';
import type * as WorkerThreads from 'node:worker_threads';
import type { Worker } from 'node:worker_threads';

import { ErrorCode, ProvkitError, type SerializedError, errorText } from '../errors.js';
import { DOWNLOAD_BLOCK } from '../fs/blocks.js';
import { usableCores } from '../fs/cores.js';
import { hashPackageDir } from './dir-package.js';
import { asHash, zhFromDigest, type Hash } from './hash.js';
import { type FormResult, type ZipForms, type ZipHashOptions, type ZipPackageHashes } from './zip-package.js';
import { type ReadProgress, ZhStream } from './zh.js';
import { hashWithDigests, hashZipFileOnce, zipFormsFileOnce, ZipStreamDigester } from './zip-stream.js';

/** How {@link createHashPool} sizes its workers, and the archive limits every zip job applies. */
export interface HashPoolOptions extends ZipHashOptions {
  /** Packages hashed at once; default the cores this process may use (fs/cores.ts: the CPUs, lowered to a container's CPU quota). 0 = no workers. */
  concurrency?: number;
  /**
   * `hashZip` of an archive at most this large runs in the calling thread
   * (default 0: never). For commands whose start-up counts (a small lock):
   * starting a worker costs more than hashing a small zip.
   */
  inThreadBytes?: number;
  /**
   * File jobs (`hashZip`, `hashDir`) waiting or running at or below which
   * every one of them gets a worker; default `2 * concurrency - 1` (at
   * least `concurrency`): the most a tail can need for equal packages to
   * end together (a third job on 2 cores), with at most `concurrency - 1`
   * extra workers. Each extra worker costs a V8 isolate (~8 MB RSS, its
   * start-up CPU) and is stopped once the queue is empty; all at once for
   * 5 (`2 * concurrency + 1`) measured +0.2–0.6 CPU-s and +30 MB for the
   * same balance (bench/PROFILE.md). It also bounds the threads that
   * streamed jobs start, one each, before they share (see
   * {@link HashPool.streamZip}); streamed jobs are not counted among the
   * file jobs.
   */
  shareUpTo?: number;
}

/**
 * Hashes packages on worker threads (see the module comment of src/hashing/pool.ts): file jobs bounded by the
 * pool's concurrency, streams spread over its workers. Results are the same as the in-thread functions' ({@link
 * hashZipPackage}, {@link hashPackageDir}). Close it once with `close()`.
 */
export interface HashPool {
  /**
   * `knownZh`: the archive's zh: when already computed from these bytes (not
   * computed again). `onProgress`: how far the job has read the file (from a
   * worker, at most every {@link PROGRESS_EVERY_MS} and once at the end).
   */
  hashZip(path: string, knownZh?: Hash, onProgress?: ReadProgress): Promise<ZipPackageHashes>;
  /**
   * Both `h1:` forms of a zip without its `zh:` (zip-stream.ts
   * `zipFormsFileOnce`): for a caller that records no `zh:` of the archive
   * and keeps no hash store, one SHA-256 pass over its bytes less. Scheduled
   * as {@link hashZip}, and reports progress as it does.
   */
  hashZipForms(path: string, onProgress?: ReadProgress): Promise<ZipForms>;
  /**
   * The `h1:` of an unpacked package directory (Go dirhash `Hash1` of its files; {@link hashPackageDir}), computed
   * on a worker.
   */
  hashDir(path: string): Promise<Hash>;
  /**
   * Hashes a zip while its bytes arrive (zip-stream.ts): put
   * {@link ZipStream.transform} in the download's pipeline, then call
   * {@link ZipStream.finish} with the written file. Starts at once: on a
   * worker of its own while fewer than {@link shareUpTo} workers run, else
   * on the least loaded, which then carries other streams (and a file job)
   * besides; a closed pool gives a plain pass-through whose `finish` fails.
   */
  streamZip(): ZipStream;
  /**
   * The most file jobs the pool runs at once at the tail of a batch (see
   * {@link HashPoolOptions.shareUpTo}).
   */
  readonly shareUpTo: number;
  /** Stops the workers; pending jobs fail with ABORTED. */
  close(): Promise<void>;
}

/** One archive hashed as it streams; see {@link HashPool.streamZip}. */
export interface ZipStream {
  /** A pass-through for the archive's bytes, in order from the first. */
  readonly transform: Transform;
  /**
   * True when {@link writeFile} gives a writer: a worker runs this stream, and
   * it can write the file itself. An attempt uses either {@link transform}
   * (before its own file) or that writer, never both.
   */
  readonly writes: boolean;
  /**
   * The writer of a download's temporary file (net/client.ts
   * `DownloadOptions.writeFile`): it gathers the bytes into blocks and moves
   * each block to the worker (transferred, not copied), which hashes it and
   * writes it at its place in `path` (bytes before `offset`, a resumed
   * download's kept prefix, are hashed, not written). The file is opened and
   * closed in this thread (`wx`, or `r+` for a resume), and closed only once
   * the worker has confirmed that it writes to it no more. Undefined when
   * {@link writes} is false.
   */
  writeFile(path: string, offset: number, mode: number): Writable | undefined;
  /**
   * The `zh:` and length of every byte that passed {@link transform} or the
   * writer, in order (call once the pipeline finished): computed by the
   * worker that hashes them, or in this thread when no worker runs this stream.
   */
  digest(): Promise<{ zh: Hash; size: number }>;
  /**
   * The hashes of the complete file those bytes were written to (call once,
   * after the pipeline finished). The same result as `hashZip(path, knownZh)`.
   */
  finish(path: string, knownZh?: Hash): Promise<ZipPackageHashes>;
  /** Abandons the job (a failed or restarted download); frees its worker. */
  abort(): void;
}

/** Messages between the pool and its workers (plain data only). */
export type WorkerRequest =
  /** `progress`: answer {@link WorkerProgress} messages while the file is read. */
  | { id: number; kind: 'zip' | 'forms' | 'dir'; path: string; options: ZipHashOptions; progress?: boolean }
  /**
   * A streamed archive: `stream-start`, then `stream-chunk`… (with
   * `stream-file` / `stream-file-done` around the chunks the worker writes,
   * and `stream-digest` after the last), then `stream-finish` or `stream-abort`.
   */
  | { id: number; kind: 'stream-start'; options: ZipHashOptions }
  /** The first `bytes` bytes of `chunk` (default: all) are the stream's next bytes; the buffer is the worker's now. */
  | { id: number; kind: 'stream-chunk'; chunk: ArrayBuffer; bytes?: number }
  /** From now on, write the stream's bytes at and after `offset` to `fd` at their stream position (the fd stays the pool's: the worker never closes it). */
  | { id: number; kind: 'stream-file'; fd: number; offset: number }
  /** Stop writing to the stream's file; answered with a {@link WorkerFileDone} once no more writes to it can happen. */
  | { id: number; kind: 'stream-file-done' }
  /** Answered with a {@link WorkerDigest} of every byte received so far. */
  | { id: number; kind: 'stream-digest' }
  | { id: number; kind: 'stream-finish'; path: string; options: ZipHashOptions }
  | { id: number; kind: 'stream-abort' };
/** A job's final answer. */
export type WorkerResponse =
  { id: number; ok: true; zip?: SerializedZipHashes; dir?: Hash } | { id: number; ok: false; error: SerializedError };
/** How far a file job has read its file (not a final answer). */
export type WorkerProgress = { id: number; progress: { bytes: number; total: number } };
/** Progress of a file job is sent at most this often (and once more when the file is read). */
export const PROGRESS_EVERY_MS = 100;
/** A `stream-chunk` of this many bytes was taken in (not a final answer). */
export type WorkerAck = { id: number; ack: number };
/** A `stream-chunk`'s memory, digested and handed back for reuse (not a final answer, not tied to a job). */
export type WorkerSpare = { spare: ArrayBuffer };
/** SHA-256 (hex) and count of the stream's bytes received (not a final answer). */
export type WorkerDigest = { id: number; digest: { sha256: string; size: number } };
/** A write to a stream's file failed (`done` false, sent at once), or the worker is done with the file (`done` true). */
export type WorkerFileDone = {
  id: number;
  file: { done: boolean; written: number; error?: { message: string; code?: string; syscall?: string } };
};
type WorkerMessage = WorkerResponse | WorkerAck | WorkerSpare | WorkerDigest | WorkerFileDone | WorkerProgress;

/**
 * ArrayBuffers the workers handed back, for the taps' copies: a download
 * then copies into memory already mapped instead of a fresh buffer per block
 * (page faults, and garbage a worker's heap collects late: peak RSS), bench/PROFILE.md.
 */
class Spares {
  private readonly free: ArrayBuffer[] = [];
  constructor(private readonly max: number) {}
  put(buf: ArrayBuffer): void {
    if (this.free.length < this.max) this.free.push(buf);
  }
  /** A spare of exactly `size` bytes, else a new one. */
  take(size: number): ArrayBuffer {
    const i = this.free.findIndex((b) => b.byteLength === size);
    // Not zero-filled: every byte of a block is written before it is sent.
    return i < 0 ? Buffer.allocUnsafeSlow(size).buffer : this.free.splice(i, 1)[0]!;
  }
  /** A copy of `chunk` in its own ArrayBuffer (a spare of exactly its size when there is one). */
  copy(chunk: Buffer): ArrayBuffer {
    const i = this.free.findIndex((b) => b.byteLength === chunk.length);
    if (i < 0) return chunk.buffer.slice(chunk.byteOffset, chunk.byteOffset + chunk.length) as ArrayBuffer;
    const buf = this.free.splice(i, 1)[0]!;
    new Uint8Array(buf).set(chunk);
    return buf;
  }
}

type SerializedForm = { ok: true; hash: Hash } | { ok: false; error: SerializedError };
/** A `zip` job's {@link ZipPackageHashes} or a `forms` job's {@link ZipForms} (no `zh`), as plain data. */
export type SerializedZipHashes = Omit<ZipForms, 'h1' | 'h1Zip'> & {
  zh?: Hash;
  h1: SerializedForm;
  h1Zip: SerializedForm;
};

export function serializeZipHashes(r: ZipForms | ZipPackageHashes): SerializedZipHashes {
  const form = (f: FormResult): SerializedForm => (f.ok ? f : { ok: false, error: f.error.toJSON() });
  return { ...r, h1: form(r.h1), h1Zip: form(r.h1Zip) };
}

function deserializeForms(r: SerializedZipHashes): ZipForms {
  // Structured cloning drops the hashes' toString/toJSON (hash.ts asHash): given back here.
  const form = (f: SerializedForm): FormResult =>
    f.ok ? { ...f, hash: asHash(f.hash) } : { ok: false, error: ProvkitError.fromJSON(f.error) };
  const { zh: _zh, ...rest } = r;
  return { ...rest, h1: form(r.h1), h1Zip: form(r.h1Zip) };
}

function deserializeZipHashes(r: SerializedZipHashes): ZipPackageHashes {
  if (r.zh === undefined) throw new ProvkitError(ErrorCode.WORKER_FAILED, `hash worker returned no zh: for ${r.path}`);
  return { ...deserializeForms(r), zh: asHash(r.zh) };
}

export function toSerializedError(err: unknown): SerializedError {
  if (err instanceof ProvkitError) return err.toJSON();
  return { code: ErrorCode.IO, message: errorText(err) };
}

interface Job {
  request: WorkerRequest;
  resolve: (r: WorkerResponse) => void;
  reject: (e: ProvkitError) => void;
  /** A file job (`zip`, `dir`): counted by `shareUpTo`. */
  file?: boolean;
  onProgress?: ReadProgress;
}

/** Bytes of a stream job sent to its worker and not yet taken in, before the download waits. */
const STREAM_IN_FLIGHT = 2 * 1024 * 1024;

/**
 * The pass-through of a stream job: hands a copy of each chunk to `post`
 * (its own ArrayBuffer, moved to the worker; downloads arrive in blocks, see
 * net/download.ts `coalesce`), and holds the pipeline while more than
 * {@link STREAM_IN_FLIGHT} bytes wait for the hasher (backpressure reaches
 * the network).
 */
class CopyingTap extends Transform {
  private inFlight = 0;
  private waiting: (() => void) | undefined;
  private detached = false;
  /** Bytes that passed, and bytes that went to the worker (equal unless it was detached early). */
  passed = 0;
  posted = 0;

  constructor(
    private readonly post: (chunk: ArrayBuffer) => void,
    private readonly spares: Spares,
  ) {
    super();
  }

  /** The hasher took `n` bytes in. */
  ack(n: number): void {
    this.inFlight -= n;
    if (this.inFlight <= STREAM_IN_FLIGHT) this.wakeWriter();
  }

  /** Stop copying (the job was abandoned); bytes still pass through. */
  detach(): void {
    this.detached = true;
    this.wakeWriter();
  }

  private wakeWriter(): void {
    const w = this.waiting;
    this.waiting = undefined;
    w?.();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.passed += chunk.length;
    if (!this.detached && chunk.length > 0) {
      const copy = this.spares.copy(chunk);
      this.inFlight += copy.byteLength;
      this.posted += copy.byteLength;
      this.post(copy);
    }
    if (this.detached || this.inFlight <= STREAM_IN_FLIGHT) {
      cb(null, chunk);
      return;
    }
    this.waiting = () => cb(null, chunk);
  }
}

/** What a {@link WorkerFileSink} asks of its stream job. */
interface SinkChannel {
  /** A block of `DOWNLOAD_BLOCK` bytes to fill (a spare when there is one). */
  take(): ArrayBuffer;
  /** Moves `buf` to the worker: its first `bytes` bytes are the stream's next. */
  chunk(buf: ArrayBuffer, bytes: number): void;
  /** Tells the worker to write the bytes at and after `offset` to `fd`. */
  file(fd: number, offset: number): void;
  /**
   * Resolves once the worker writes to the file no more: it answered
   * `stream-file-done` (with the bytes it wrote), or it is gone (`written` -1).
   */
  fileDone(): Promise<{ written: number; error?: Error }>;
}

/**
 * A download's temporary file, written by the hash worker (see
 * {@link ZipStream.writeFile}). Bytes are copied once, into blocks of
 * {@link DOWNLOAD_BLOCK} (memory the worker hands back after digesting: no fresh
 * buffer per block); each full block is transferred to the worker, never
 * touched here again. The file descriptor is this thread's: opened before the
 * first block, closed after the worker confirmed it writes no more (never
 * while a write may still come: the number could name another file by then).
 * Every failure is this stream's error: a write error the worker reports, the
 * worker gone before the end, or fewer bytes written than received.
 */
class WorkerFileSink extends Writable {
  private fd: number | undefined;
  private block: Buffer | undefined;
  private used = 0;
  private inFlight = 0;
  private waiting: (() => void) | undefined;
  /** Bytes received, the kept prefix included. */
  received = 0;
  private failure: Error | undefined;
  private released: Promise<{ written: number; error?: Error }> | undefined;

  constructor(
    readonly path: string,
    private readonly offset: number,
    private readonly mode: number,
    private readonly ch: SinkChannel,
  ) {
    super({ highWaterMark: DOWNLOAD_BLOCK });
  }

  /** The worker took `n` bytes in. */
  ack(n: number): void {
    this.inFlight -= n;
    if (this.inFlight <= STREAM_IN_FLIGHT) this.wake();
  }

  /** The stream cannot go on (see the class comment); the next write or the end fails with `err`. */
  fail(err: Error): void {
    this.failure ??= err;
    this.wake();
  }

  private wake(): void {
    const w = this.waiting;
    this.waiting = undefined;
    w?.();
  }

  override _construct(cb: (err?: Error | null) => void): void {
    openFd(this.path, this.offset > 0 ? 'r+' : 'wx', this.mode, (err, fd) => {
      if (err) {
        cb(err);
        return;
      }
      this.fd = fd;
      this.ch.file(fd, this.offset);
      cb();
    });
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    if (this.failure) {
      cb(this.failure);
      return;
    }
    this.received += chunk.length;
    this.copyIn(chunk);
    if (this.inFlight <= STREAM_IN_FLIGHT) {
      cb();
      return;
    }
    this.waiting = () => cb(this.failure);
  }

  /** Copies `chunk` into blocks, sending each full one. */
  private copyIn(chunk: Buffer): void {
    for (let at = 0; at < chunk.length;) {
      this.block ??= Buffer.from(this.ch.take());
      const n = chunk.copy(this.block, this.used, at);
      this.used += n;
      at += n;
      if (this.used === this.block.length) this.send();
    }
  }

  /** Moves the block to the worker (this thread keeps no reference to it). */
  private send(): void {
    const block = this.block!;
    const n = this.used;
    this.block = undefined;
    this.used = 0;
    this.inFlight += n;
    this.ch.chunk(block.buffer as ArrayBuffer, n);
  }

  override _final(cb: (err?: Error | null) => void): void {
    if (this.failure) {
      cb(this.failure);
      return;
    }
    if (this.used > 0) this.send();
    this.release().then(
      (r) => {
        const expected = Math.max(0, this.received - this.offset);
        if (r.error) this.fail(r.error);
        else if (r.written !== expected)
          this.fail(
            new ProvkitError(
              ErrorCode.WORKER_FAILED,
              `internal: the hash worker wrote ${r.written} of ${expected} bytes to ${this.path}`,
            ),
          );
        cb(this.failure);
      },
      (err: Error) => cb(err),
    );
  }

  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    this.block = undefined;
    this.release().then(
      () => cb(err),
      (e: Error) => cb(err ?? e),
    );
  }

  /** Once: waits until the worker writes no more, then closes the file. */
  private release(): Promise<{ written: number; error?: Error }> {
    this.released ??= (async () => {
      const fd = this.fd;
      if (fd === undefined) return { written: 0 };
      const r = await this.ch.fileDone();
      this.fd = undefined;
      await new Promise<void>((resolve, reject) => closeFd(fd, (e) => (e ? reject(e) : resolve())));
      return r;
    })();
    return this.released;
  }
}

/** What a stream job does with its worker's messages. */
interface StreamHandlers {
  ack(n: number): void;
  digest(d: { sha256: string; size: number }): void;
  file(f: WorkerFileDone['file']): void;
}

/** A worker's file-write failure as the system error it was (net/download.ts names the file). */
function writeError(e: { message: string; code?: string; syscall?: string }, path: string | undefined): Error {
  return Object.assign(new Error(e.message), {
    ...(e.code === undefined ? {} : { code: e.code }),
    ...(e.syscall === undefined ? {} : { syscall: e.syscall }),
    ...(path === undefined ? {} : { path }),
  });
}

let workerThreadsModule: typeof WorkerThreads | undefined;
/**
 * `node:worker_threads`, loaded when the first worker starts: a run that
 * hashes only in its own thread (a small lock from a filesystem mirror) does
 * not pay for loading it (issue 13, start-up).
 */
function workerThreads(): typeof WorkerThreads {
  workerThreadsModule ??= createRequire(import.meta.url)('node:worker_threads') as typeof WorkerThreads;
  return workerThreadsModule;
}

/**
 * Where the worker's code lives. Compiled, it sits beside this file. When this
 * module runs from TypeScript source (tests, tsx), Node cannot start a `.ts`
 * worker, so the compiled worker in dist/ is used (`npm test` builds first).
 */
function workerURL(): URL {
  return import.meta.url.endsWith('.ts')
    ? new URL('../../dist/hashing/worker.js', import.meta.url)
    : new URL('./worker.js', import.meta.url);
}

/** Adds `by` to `w`'s count in `counts`; a count that reaches 0 is removed (absent: none). */
function count(counts: Map<Worker, number>, w: Worker, by: 1 | -1): void {
  const n = (counts.get(w) ?? 0) + by;
  if (n > 0) counts.set(w, n);
  else counts.delete(w);
}

/** The worker thread carrying each of a pool's streams (see {@link streamThreadOf}). */
const streamThreads = new WeakMap<ZipStream, number>();

/**
 * The `threadId` of the worker that hashes `stream`, a {@link HashPool.streamZip}
 * result; undefined for a stream hashed in this thread. For tests and
 * diagnostics of how streams are spread over the workers (not part of the
 * package's API).
 */
export function streamThreadOf(stream: ZipStream): number | undefined {
  return streamThreads.get(stream);
}

/**
 * A pool of worker threads that hash packages (see {@link HashPool}); workers start when the first job comes, and
 * `close()` ends them. Owned by the caller: close it once when done, or the process keeps its threads.
 */
export function createHashPool(options: HashPoolOptions = {}): HashPool {
  const concurrency = options.concurrency ?? usableCores();
  const inThreadBytes = options.inThreadBytes ?? 0;
  const shareUpTo = Math.max(concurrency, options.shareUpTo ?? 2 * concurrency - 1);
  const zipOptions: ZipHashOptions = options.limits ? { limits: options.limits } : {};
  if (concurrency === 0) {
    return {
      hashZip: (path, knownZh, onProgress) => hashZipFileOnce(path, withZh(zipOptions, knownZh), onProgress),
      hashZipForms: (path, onProgress) => zipFormsFileOnce(path, zipOptions, onProgress),
      hashDir: (path) => hashPackageDir(path),
      streamZip: () => inProcessStream(zipOptions),
      shareUpTo: 1,
      close: () => Promise.resolve(),
    };
  }

  /** Workers with no job at all (unreferenced: they do not keep the process alive). */
  const idle: Worker[] = [];
  /** Each worker's file job (`hashZip`, `hashZipForms`, `hashDir`): at most one per worker. */
  const busy = new Map<Worker, Job>();
  /** Stream jobs by id, with the worker carrying each; a worker carries any number of them besides its file job. */
  const streamJobs = new Map<number, { worker: Worker; job: Job }>();
  /** Stream jobs per worker (absent: none). */
  const load = new Map<Worker, number>();
  /**
   * Stream jobs per worker whose bytes are still arriving (absent: none): a
   * stream whose download is complete only has its buffered tail and the
   * central directory left, so its worker is nearly free for the next one.
   */
  const arriving = new Map<Worker, number>();
  /** Every worker started and not stopped. */
  const live = new Set<Worker>();
  const queue: Job[] = [];
  let started = 0;
  /** Extra workers being stopped (their exit is not a failure). */
  const retired = new Set<Worker>();
  let nextId = 1;
  let closed = false;
  // Enough for every stream job's blocks in flight and in its digester
  // (2 × STREAM_IN_FLIGHT of 256 KiB blocks): fewer made blocks come back too
  // late and fresh ones are made (measured: 200 of 790 for two 99 MB
  // streams with 16 per worker, 138 with 32).
  const spares = new Spares(concurrency * 32);
  /** Stream jobs by id, for their messages (acks, digests, file releases). */
  const streams = new Map<number, StreamHandlers>();
  /** Workers that exited, and what waits for a worker's exit (a file release). */
  const exited = new WeakSet<Worker>();
  const onExit = new Map<Worker, Set<() => void>>();
  /** Resolves when `w` has exited (at once if it has); `cancel` forgets the wait. */
  const whenExited = (w: Worker, f: () => void): (() => void) => {
    if (exited.has(w)) {
      f();
      return () => undefined;
    }
    let set = onExit.get(w);
    if (!set) onExit.set(w, (set = new Set()));
    set.add(f);
    return () => set.delete(f);
  };

  const spawn = (): Worker => {
    const w = new (workerThreads().Worker)(workerURL());
    started += 1;
    live.add(w);
    w.on('message', (msg: WorkerMessage) => {
      if ('spare' in msg) {
        spares.put(msg.spare);
        return;
      }
      // A stream's messages go to the stream by its id (a file's release may
      // be answered after the job itself: the worker may run another job by then).
      if ('ack' in msg) {
        streams.get(msg.id)?.ack(msg.ack);
        return;
      }
      if ('digest' in msg) {
        streams.get(msg.id)?.digest(msg.digest);
        return;
      }
      if ('file' in msg) {
        streams.get(msg.id)?.file(msg.file);
        return;
      }
      if ('progress' in msg) {
        const job = busy.get(w);
        if (job?.request.id === msg.id) job.onProgress?.(msg.progress.bytes, msg.progress.total);
        return;
      }
      const stream = streamJobs.get(msg.id);
      if (stream?.worker === w) {
        streamJobs.delete(msg.id);
        count(load, w, -1);
        stream.job.resolve(msg);
      } else {
        const job = busy.get(w);
        busy.delete(w);
        job?.resolve(msg);
      }
      if (busy.has(w) || load.has(w)) {
        pump();
        return;
      }
      w.unref();
      idle.push(w);
      retireExtras();
      pump();
    });
    const die = (err: unknown): void => {
      if (!live.delete(w)) return;
      const failure = (): ProvkitError =>
        new ProvkitError(ErrorCode.WORKER_FAILED, `hash worker failed: ${errorText(err)}`, { cause: err });
      const job = busy.get(w);
      busy.delete(w);
      started -= 1;
      const i = idle.indexOf(w);
      if (i >= 0) idle.splice(i, 1);
      job?.reject(failure());
      load.delete(w);
      arriving.delete(w);
      for (const [id, stream] of streamJobs) {
        if (stream.worker !== w) continue;
        streamJobs.delete(id);
        stream.job.reject(failure());
      }
      pump();
    };
    w.on('error', die);
    w.on('exit', (code) => {
      exited.add(w);
      for (const f of onExit.get(w) ?? []) f();
      onExit.delete(w);
      if (retired.delete(w)) return;
      die(new Error(`exited with code ${code}`));
    });
    return w;
  };

  /**
   * A batch's extra workers (beyond `concurrency`) are not kept once the
   * batch is done (memory): stopped when no file job waits and no stream
   * runs. Not before: while streams run, the next download's stream takes
   * an idle worker instead of starting one (~60 ms of CPU each).
   */
  const retireExtras = (): void => {
    while (started > concurrency && queue.length === 0 && streamJobs.size === 0 && idle.length > 0) {
      const w = idle.pop()!;
      started -= 1;
      live.delete(w);
      retired.add(w);
      void w.terminate();
    }
  };

  /**
   * Workers the pool may run now: `concurrency`, or every pending file job
   * when they all fit in `shareUpTo` (the module comment). Equal jobs then
   * finish in N / cores package-times on 2 cores: 2 + 2 + the last 3 at once for 7.
   */
  const workerLimit = (): number => {
    const pendingFiles = queue.length + busy.size;
    return pendingFiles <= shareUpTo ? Math.max(concurrency, pendingFiles) : concurrency;
  };

  const pump = (): void => {
    while (queue.length > 0 && !closed && busy.size < workerLimit()) {
      // A worker with no job, else a new one, else the least loaded worker
      // that only carries streams (they share its thread).
      let w = idle.pop();
      if (!w && started < workerLimit()) w = spawn();
      w ??= leastLoaded((x) => !busy.has(x));
      if (!w) return;
      const job = queue.shift()!;
      busy.set(w, job);
      w.ref();
      w.postMessage(job.request);
    }
  };

  /**
   * The live worker passing `ok` with the fewest jobs that still take work:
   * streams whose bytes are arriving, plus one for a file job; among those,
   * the fewest streams. A download queue frees a slot at an archive's last
   * byte (installer/download-queue.ts), so the next stream starts while the
   * previous one's tail is hashed: counting that tail as a whole stream put
   * two arriving streams on one worker and left another's core idle at the
   * end (5 × 100 MB on loopback, 2 cores: 0.7 s).
   */
  const leastLoaded = (ok: (w: Worker) => boolean): Worker | undefined => {
    let best: { w: Worker; working: number; streams: number } | undefined;
    for (const w of live) {
      if (!ok(w)) continue;
      const working = (arriving.get(w) ?? 0) + (busy.has(w) ? 1 : 0);
      const streams = load.get(w) ?? 0;
      if (best === undefined || working < best.working || (working === best.working && streams < best.streams))
        best = { w, working, streams };
    }
    return best?.w;
  };

  /**
   * A stream job is carried by one worker from its first byte to `finish`,
   * and starts at once, never queued (queueing would buffer the download):
   * on a worker with no job, else on a new one while fewer than
   * `shareUpTo` run, else on the least loaded, which then carries several
   * (worker.ts keys its streams by id). However many streams the caller's
   * network limit runs (installer/download-queue.ts), every one is hashed
   * as it arrives and the threads stay at most `shareUpTo`; a worker that
   * falls behind stops taking bytes (`STREAM_IN_FLIGHT` per stream), which
   * holds its downloads (bench/PROFILE.md "WAN").
   *
   * Why `shareUpTo` and not `concurrency` (bench/PROFILE.md "Streams on
   * their own threads"): a stream cannot move to another worker, so with
   * `concurrency` threads the tail of a batch was uneven: 5 × 100 MB on 2
   * cores ended with 2 streams on one worker (half a core each) and 1 on
   * the other, whose core then idled for ~0.6 s while the pair finished.
   * With a thread each, the OS shares the cores among the streams evenly,
   * as it does for a batch's file jobs; the extra threads stop when their
   * jobs end (as a batch's extra workers do).
   */
  const streamZip = (): ZipStream => {
    if (closed) return passThroughStream((path, knownZh) => api.hashZip(path, knownZh));
    let w = idle.pop();
    if (!w && started < shareUpTo) w = spawn();
    w ??= leastLoaded(() => true) ?? spawn();
    const worker = w;
    const id = nextId++;
    let settle: { resolve: (r: WorkerResponse) => void; reject: (e: ProvkitError) => void } | undefined;
    const answer = new Promise<WorkerResponse>((resolve, reject) => (settle = { resolve, reject }));
    // A rejection nobody awaits (an abandoned job) must not become unhandled.
    answer.catch(() => undefined);
    const post = (req: WorkerRequest, transfer?: ArrayBuffer[]): void => worker.postMessage(req, transfer);
    const tap = new CopyingTap((chunk) => post({ id, kind: 'stream-chunk', chunk }, [chunk]), spares);
    let sink: WorkerFileSink | undefined;
    let digestWaiter: ((d: { sha256: string; size: number }) => void) | undefined;
    let fileWaiter: ((f: { written: number; error?: Error }) => void) | undefined;
    /** The job is over: no more acks will come. */
    let over = false;
    const handlers: StreamHandlers = {
      ack: (n) => {
        tap.ack(n);
        sink?.ack(n);
      },
      digest: (d) => digestWaiter?.(d),
      file: (f) => {
        const error = f.error === undefined ? undefined : writeError(f.error, sink?.path);
        if (f.done) fileWaiter?.({ written: f.written, ...(error === undefined ? {} : { error }) });
        else if (error) sink?.fail(error);
      },
    };
    streams.set(id, handlers);
    /** Forgets the stream's handlers once nothing more can come for it. */
    const forget = (): void => {
      if (over && fileWaiter === undefined) streams.delete(id);
    };
    const ended = (err?: ProvkitError): void => {
      over = true;
      arrived();
      // Once the job has an answer (or its worker died) no more acks come: the
      // tap must not hold the download for them (pinned by test/e2e/stream-hasher.test.ts).
      tap.detach();
      // A writer cannot pass bytes on without the worker: its download fails.
      sink?.fail(
        err ??
          new ProvkitError(
            ErrorCode.WORKER_FAILED,
            'internal: the hash worker ended the stream before its file was complete',
          ),
      );
      forget();
    };
    const job: Job = {
      request: { id, kind: 'stream-start', options: zipOptions },
      resolve: (r) => {
        ended();
        settle!.resolve(r);
      },
      reject: (e) => {
        ended(e);
        settle!.reject(e);
      },
    };
    streamJobs.set(id, { worker, job });
    count(load, worker, 1);
    count(arriving, worker, 1);
    let pending = true;
    /** The stream's bytes are all in (its digest is asked for), or it ended: its worker's next stream may come. */
    const arrived = (): void => {
      if (!pending) return;
      pending = false;
      count(arriving, worker, -1);
    };
    worker.ref();
    post(job.request);
    let done = false;
    const channel: SinkChannel = {
      take: () => spares.take(DOWNLOAD_BLOCK),
      chunk: (buf, bytes) => post({ id, kind: 'stream-chunk', chunk: buf, bytes }, [buf]),
      file: (fd, offset) => post({ id, kind: 'stream-file', fd, offset }),
      fileDone: () =>
        new Promise((resolve) => {
          let cancel = (): void => undefined;
          // The job may already have its answer (abandoned: a download aborted as its last bytes were written):
          // its handlers were forgotten and its worker, with no job left, no longer keeps the process alive. The
          // worker still answers this (after its writes to the file, which must end before the file is closed),
          // so the handlers come back and the worker is held until that answer.
          const late = over;
          if (late) {
            streams.set(id, handlers);
            worker.ref();
          }
          fileWaiter = (f) => {
            fileWaiter = undefined;
            cancel();
            if (late && !busy.has(worker) && !load.has(worker)) worker.unref();
            resolve(f);
            forget();
          };
          // A worker that is gone writes no more: its environment ends only
          // once every file write it started has completed
          // (nodejs/node src/env.cc `Environment::CleanupHandles` waits for the requests), and 'exit' comes after.
          cancel = whenExited(worker, () =>
            fileWaiter?.({
              written: -1,
              error: new ProvkitError(ErrorCode.WORKER_FAILED, 'hash worker exited while writing a download'),
            }),
          );
          post({ id, kind: 'stream-file-done' });
        }),
    };
    const stream: ZipStream = {
      transform: tap,
      writes: true,
      writeFile: (path, offset, mode) => {
        if (sink !== undefined || tap.passed > 0)
          throw new ProvkitError(ErrorCode.IO, 'internal: a zip stream was given two writers');
        sink = new WorkerFileSink(path, offset, mode, channel);
        if (over)
          sink.fail(
            new ProvkitError(
              ErrorCode.WORKER_FAILED,
              'internal: the hash worker ended the stream before its file was complete',
            ),
          );
        return sink;
      },
      digest: async () => {
        arrived();
        const passed = sink ? sink.received : tap.passed;
        const got = await Promise.race([
          new Promise<{ sha256: string; size: number }>((resolve) => {
            digestWaiter = resolve;
            post({ id, kind: 'stream-digest' });
          }),
          answer.then(() => undefined),
        ]);
        // The worker must have seen every byte that passed, in order: else its zh: is not the file's.
        if (got === undefined || got.size !== passed || (!sink && tap.posted !== passed)) {
          throw new ProvkitError(
            ErrorCode.WORKER_FAILED,
            `internal: the hash worker saw ${got?.size ?? 'not all'} of the ${passed} bytes of a download`,
          );
        }
        return { zh: zhFromDigest(Buffer.from(got.sha256, 'hex')), size: got.size };
      },
      finish: async (path, knownZh) => {
        if (done) throw new ProvkitError(ErrorCode.IO, 'internal: a zip stream was finished twice');
        done = true;
        arrived();
        tap.detach();
        post({ id, kind: 'stream-finish', path, options: withZh(zipOptions, knownZh) });
        const r = await answer;
        if (!r.ok) throw ProvkitError.fromJSON(r.error);
        return deserializeZipHashes(r.zip!);
      },
      abort: () => {
        if (done) return;
        done = true;
        arrived();
        tap.detach();
        if (streamJobs.get(id)?.job === job) post({ id, kind: 'stream-abort' });
      },
    };
    streamThreads.set(stream, worker.threadId);
    return stream;
  };

  const submit = (
    kind: 'zip' | 'forms' | 'dir',
    path: string,
    options: ZipHashOptions = zipOptions,
    onProgress?: ReadProgress,
  ): Promise<WorkerResponse> =>
    new Promise((resolve, reject) => {
      if (closed) {
        reject(new ProvkitError(ErrorCode.ABORTED, 'hash pool is closed'));
        return;
      }
      queue.push({
        request: { id: nextId++, kind, path, options, ...(onProgress ? { progress: true } : {}) },
        resolve,
        reject,
        file: true,
        ...(onProgress ? { onProgress } : {}),
      });
      pump();
    });

  // In-thread jobs are bounded like the workers' (at most `concurrency` at
  // once): a caller may submit hundreds at a time (`provkit hash` of 800 zips).
  let inThreadRunning = 0;
  const inThreadWaiting: Array<() => void> = [];
  const inThread = async <T>(job: () => Promise<T>): Promise<T> => {
    while (inThreadRunning >= concurrency) {
      // eslint-disable-next-line no-await-in-loop -- waiting for a slot
      await new Promise<void>((resolve) => inThreadWaiting.push(resolve));
    }
    inThreadRunning += 1;
    try {
      return await job();
    } finally {
      inThreadRunning -= 1;
      inThreadWaiting.shift()?.();
    }
  };

  const api: HashPool = {
    async hashZip(path, knownZh, onProgress) {
      // A small archive is hashed here: starting a worker (a new V8 isolate
      // that loads the hashing modules) costs more CPU than hashing it, and a
      // tiny lock would pay that start-up for nothing. The size is
      // only a scheduling hint: the same function computes the same hashes
      // in either thread.
      if (inThreadBytes > 0 && (await fileSize(path)) <= inThreadBytes)
        return inThread(() => hashZipFileOnce(path, withZh(zipOptions, knownZh), onProgress));
      const r = await submit('zip', path, withZh(zipOptions, knownZh), onProgress);
      if (!r.ok) throw ProvkitError.fromJSON(r.error);
      return deserializeZipHashes(r.zip!);
    },
    async hashZipForms(path, onProgress) {
      // As hashZip: a small archive in this thread.
      if (inThreadBytes > 0 && (await fileSize(path)) <= inThreadBytes)
        return inThread(() => zipFormsFileOnce(path, zipOptions, onProgress));
      const r = await submit('forms', path, zipOptions, onProgress);
      if (!r.ok) throw ProvkitError.fromJSON(r.error);
      return deserializeForms(r.zip!);
    },
    async hashDir(path) {
      const r = await submit('dir', path);
      if (!r.ok) throw ProvkitError.fromJSON(r.error);
      return asHash(r.dir!);
    },
    streamZip,
    shareUpTo,
    async close() {
      closed = true;
      for (const job of queue.splice(0)) job.reject(new ProvkitError(ErrorCode.ABORTED, 'hash pool closed'));
      const all = [...live];
      idle.length = 0;
      live.clear();
      for (const [, job] of busy) job.reject(new ProvkitError(ErrorCode.ABORTED, 'hash pool closed'));
      busy.clear();
      for (const [, stream] of streamJobs) stream.job.reject(new ProvkitError(ErrorCode.ABORTED, 'hash pool closed'));
      streamJobs.clear();
      load.clear();
      await Promise.all(all.map((w) => w.terminate()));
    },
  };
  return api;
}

/** The size of a file, or Infinity when it cannot be read (the worker then reports the error as before). */
async function fileSize(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

function withZh(zipOptions: ZipHashOptions, knownZh: Hash | undefined): ZipHashOptions {
  return knownZh ? { ...zipOptions, knownZh } : zipOptions;
}

/**
 * No worker to spare: bytes pass (their `zh:` computed here, no worker being
 * involved), and the file is hashed at the end.
 */
function passThroughStream(hashZip: (path: string, knownZh?: Hash) => Promise<ZipPackageHashes>): ZipStream {
  const zh = new ZhStream();
  return {
    transform: zh,
    writes: false,
    writeFile: () => undefined,
    digest: () => Promise.resolve(zh.result()),
    finish: (path, knownZh) => hashZip(path, knownZh),
    abort: () => undefined,
  };
}

/** `concurrency: 0`: the streaming pass, and the `zh:`, run in this thread. */
function inProcessStream(zipOptions: ZipHashOptions): ZipStream {
  const digester = new ZipStreamDigester(zipOptions.limits);
  const sha = createHash('sha256');
  let size = 0;
  let ended = false;
  const transform = new Transform({
    transform: (chunk: Buffer, _enc, cb) => {
      sha.update(chunk);
      size += chunk.length;
      // The chunk is kept by the digester: hand it a copy the pipeline cannot reuse.
      void digester.write(Buffer.from(chunk)).then(() => cb(null, chunk));
    },
    flush: (cb) => {
      ended = true;
      cb();
    },
  });
  let digest: { zh: Hash; size: number } | undefined;
  return {
    transform,
    writes: false,
    writeFile: () => undefined,
    digest: () => {
      if (!ended)
        return Promise.reject(
          new ProvkitError(ErrorCode.IO, 'internal: the digest of a zip stream was asked before its end'),
        );
      digest ??= { zh: zhFromDigest(sha.digest()), size };
      return Promise.resolve(digest);
    },
    finish: (path, knownZh) => hashWithDigests(path, digester, withZh(zipOptions, knownZh)),
    abort: () => digester.stop(),
  };
}
