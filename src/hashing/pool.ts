/**
 * Hashing across cores: a pool of worker threads, each hashing one package at
 * a time (inflate runs on libuv's thread pool, SHA-256 and CRC-32 on the
 * worker's thread, so one package already keeps about two cores busy and
 * several packages fill the machine).
 *
 * Contract: at most `concurrency` packages are hashed at once while more
 * than {@link HashPoolOptions.shareUpTo} file jobs are waiting or running;
 * once the rest of the batch fits in `shareUpTo`, all of it runs at once, on
 * one worker each (the tail of a batch shares the cores instead of one
 * package running alone at the end: 5 equal packages on 2 cores take 2.5
 * package-times, not 3, as 2 + 3 at once; bench/PROFILE.md). Jobs queue
 * beyond that. Results are the same values the in-process functions return
 * (errors are rebuilt as ProvkitError with the same code and context).
 * Workers are started lazily, kept while the pool is open, and do not keep
 * the process alive while idle. `concurrency: 0` hashes in this thread.
 */
import { stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { Transform, type TransformCallback } from 'node:stream';
import { Worker } from 'node:worker_threads';

import { ErrorCode, ProvkitError, type SerializedError } from '../errors.js';
import { hashPackageDir } from './dir-package.js';
import { asHash, type Hash } from './hash.js';
import { hashZipPackage, type FormResult, type ZipHashOptions, type ZipPackageHashes } from './zip-package.js';
import { hashWithDigests, ZipStreamDigester } from './zip-stream.js';

export interface HashPoolOptions extends ZipHashOptions {
  /** Packages hashed at once; default `os.availableParallelism()`. 0 = no workers. */
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
   * same balance (bench/PROFILE.md). Streamed jobs stay bounded by
   * `concurrency` (they are fed by the network).
   */
  shareUpTo?: number;
}

export interface HashPool {
  /** `knownZh`: the archive's zh: when already computed from these bytes (not computed again). */
  hashZip(path: string, knownZh?: Hash): Promise<ZipPackageHashes>;
  hashDir(path: string): Promise<Hash>;
  /**
   * Hashes a zip while its bytes arrive (zip-stream.ts): put
   * {@link ZipStream.transform} in the download's pipeline, then call
   * {@link ZipStream.finish} with the written file. When no worker is free the
   * stream is a plain pass-through and `finish` hashes the file as `hashZip`.
   */
  streamZip(): ZipStream;
  /** Stops the workers; pending jobs fail with ABORTED. */
  close(): Promise<void>;
}

/** One archive hashed as it streams; see {@link HashPool.streamZip}. */
export interface ZipStream {
  /** A pass-through for the archive's bytes, in order from the first. */
  readonly transform: Transform;
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
  | { id: number; kind: 'zip' | 'dir'; path: string; options: ZipHashOptions }
  /** A streamed archive: `stream-start`, `stream-chunk`…, then `stream-finish` or `stream-abort`. */
  | { id: number; kind: 'stream-start'; options: ZipHashOptions }
  | { id: number; kind: 'stream-chunk'; chunk: ArrayBuffer }
  | { id: number; kind: 'stream-finish'; path: string; options: ZipHashOptions }
  | { id: number; kind: 'stream-abort' };
/** A job's final answer. */
export type WorkerResponse = { id: number; ok: true; zip?: SerializedZipHashes; dir?: Hash } | { id: number; ok: false; error: SerializedError };
/** A `stream-chunk` of this many bytes was taken in (not a final answer). */
export type WorkerAck = { id: number; ack: number };
/** A `stream-chunk`'s memory, digested and handed back for reuse (not a final answer, not tied to a job). */
export type WorkerSpare = { spare: ArrayBuffer };

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
export type SerializedZipHashes = Omit<ZipPackageHashes, 'h1' | 'h1Zip'> & { h1: SerializedForm; h1Zip: SerializedForm };

export function serializeZipHashes(r: ZipPackageHashes): SerializedZipHashes {
  const form = (f: FormResult): SerializedForm => (f.ok ? f : { ok: false, error: f.error.toJSON() });
  return { ...r, h1: form(r.h1), h1Zip: form(r.h1Zip) };
}

function deserializeZipHashes(r: SerializedZipHashes): ZipPackageHashes {
  // Structured cloning drops the hashes' toString/toJSON (hash.ts asHash): given back here.
  const form = (f: SerializedForm): FormResult => (f.ok ? { ...f, hash: asHash(f.hash) } : { ok: false, error: ProvkitError.fromJSON(f.error) });
  return { ...r, zh: asHash(r.zh), h1: form(r.h1), h1Zip: form(r.h1Zip) };
}

export function toSerializedError(err: unknown): SerializedError {
  if (err instanceof ProvkitError) return err.toJSON();
  return { code: ErrorCode.IO, message: err instanceof Error ? err.message : String(err) };
}

interface Job {
  request: WorkerRequest;
  resolve: (r: WorkerResponse) => void;
  reject: (e: ProvkitError) => void;
  /** Stream jobs: chunk acknowledgements. */
  onAck?: (bytes: number) => void;
  /** A file job (`zip`, `dir`): counted by `shareUpTo`. */
  file?: boolean;
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
    if (!this.detached && chunk.length > 0) {
      const copy = this.spares.copy(chunk);
      this.inFlight += copy.byteLength;
      this.post(copy);
    }
    if (this.detached || this.inFlight <= STREAM_IN_FLIGHT) {
      cb(null, chunk);
      return;
    }
    this.waiting = () => cb(null, chunk);
  }
}

/**
 * Where the worker's code lives. Compiled, it sits beside this file. When this
 * module runs from TypeScript source (tests, tsx), Node cannot start a `.ts`
 * worker, so the compiled worker in dist/ is used (`npm test` builds first).
 */
function workerURL(): URL {
  return import.meta.url.endsWith('.ts') ? new URL('../../dist/hashing/worker.js', import.meta.url) : new URL('./worker.js', import.meta.url);
}

export function createHashPool(options: HashPoolOptions = {}): HashPool {
  const concurrency = options.concurrency ?? availableParallelism();
  const inThreadBytes = options.inThreadBytes ?? 0;
  const shareUpTo = Math.max(concurrency, options.shareUpTo ?? 2 * concurrency - 1);
  const zipOptions: ZipHashOptions = options.limits ? { limits: options.limits } : {};
  if (concurrency === 0) {
    return {
      hashZip: (path, knownZh) => hashZipPackage(path, withZh(zipOptions, knownZh)),
      hashDir: (path) => hashPackageDir(path),
      streamZip: () => inProcessStream(zipOptions),
      close: () => Promise.resolve(),
    };
  }

  const idle: Worker[] = [];
  const busy = new Map<Worker, Job>();
  const queue: Job[] = [];
  let started = 0;
  /** Extra workers being stopped (their exit is not a failure). */
  const retired = new Set<Worker>();
  let nextId = 1;
  let closed = false;
  // Enough for every stream job's blocks in flight (STREAM_IN_FLIGHT of 256 KiB blocks, net/download.ts).
  const spares = new Spares(concurrency * 16);

  const spawn = (): Worker => {
    const w = new Worker(workerURL());
    started += 1;
    w.on('message', (msg: WorkerResponse | WorkerAck | WorkerSpare) => {
      if ('spare' in msg) {
        spares.put(msg.spare);
        return;
      }
      const job = busy.get(w);
      if ('ack' in msg) {
        job?.onAck?.(msg.ack);
        return;
      }
      busy.delete(w);
      job?.resolve(msg);
      if (started > concurrency && queue.length === 0) {
        // A batch's extra worker: not kept once the batch is done (memory).
        started -= 1;
        retired.add(w);
        void w.terminate();
        return;
      }
      w.unref();
      idle.push(w);
      pump();
    });
    const die = (err: unknown): void => {
      const job = busy.get(w);
      busy.delete(w);
      started -= 1;
      const i = idle.indexOf(w);
      if (i >= 0) idle.splice(i, 1);
      job?.reject(new ProvkitError(ErrorCode.WORKER_FAILED, `hash worker failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err }));
      pump();
    };
    w.on('error', die);
    w.on('exit', (code) => {
      if (retired.delete(w)) return;
      if (busy.has(w) || idle.includes(w)) die(new Error(`exited with code ${code}`));
    });
    return w;
  };

  /**
   * Workers the pool may run now: `concurrency`, or every pending file job
   * when they all fit in `shareUpTo` (the module comment). Equal jobs then
   * finish in N / cores package-times on 2 cores: 2 + 2 + the last 3 at once for 7.
   */
  const workerLimit = (): number => {
    let busyFiles = 0;
    for (const j of busy.values()) if (j.file === true) busyFiles += 1;
    const pendingFiles = queue.length + busyFiles;
    // Streams count against the limit: a download's fallback to a file job
    // (no worker was free) still queues behind them, as before.
    return pendingFiles <= shareUpTo ? Math.max(concurrency, pendingFiles) : concurrency;
  };

  const pump = (): void => {
    while (queue.length > 0 && !closed && busy.size < workerLimit()) {
      let w = idle.pop();
      if (!w) {
        if (started >= workerLimit()) return;
        w = spawn();
      }
      const job = queue.shift()!;
      busy.set(w, job);
      w.ref();
      w.postMessage(job.request);
    }
  };

  /**
   * A stream job holds one worker from its first byte to `finish`; it only
   * starts when a worker is free now (queueing would buffer the download).
   */
  const streamZip = (): ZipStream => {
    // At most `concurrency` jobs at once when a stream starts (a batch's extra workers are not for streams).
    let w = closed || busy.size >= concurrency ? undefined : idle.pop();
    if (!w && !closed && busy.size < concurrency && started < concurrency) w = spawn();
    if (!w) return passThroughStream((path, knownZh) => api.hashZip(path, knownZh));
    const worker = w;
    const id = nextId++;
    let settle: { resolve: (r: WorkerResponse) => void; reject: (e: ProvkitError) => void } | undefined;
    const answer = new Promise<WorkerResponse>((resolve, reject) => (settle = { resolve, reject }));
    // A rejection nobody awaits (an abandoned job) must not become unhandled.
    answer.catch(() => undefined);
    const tap = new CopyingTap((chunk) => worker.postMessage({ id, kind: 'stream-chunk', chunk } satisfies WorkerRequest, [chunk]), spares);
    // Once the job has an answer (or its worker died) no more acks come: the
    // tap must not hold the download for them (pinned by test/e2e/stream-hasher.test.ts).
    const job: Job = {
      request: { id, kind: 'stream-start', options: zipOptions },
      resolve: (r) => {
        tap.detach();
        settle!.resolve(r);
      },
      reject: (e) => {
        tap.detach();
        settle!.reject(e);
      },
      onAck: (n) => tap.ack(n),
    };
    busy.set(worker, job);
    worker.ref();
    worker.postMessage(job.request);
    let done = false;
    return {
      transform: tap,
      finish: async (path, knownZh) => {
        if (done) throw new ProvkitError(ErrorCode.IO, 'internal: a zip stream was finished twice');
        done = true;
        tap.detach();
        worker.postMessage({ id, kind: 'stream-finish', path, options: withZh(zipOptions, knownZh) } satisfies WorkerRequest);
        const r = await answer;
        if (!r.ok) throw ProvkitError.fromJSON(r.error);
        return deserializeZipHashes(r.zip!);
      },
      abort: () => {
        if (done) return;
        done = true;
        tap.detach();
        if (busy.get(worker) === job) worker.postMessage({ id, kind: 'stream-abort' } satisfies WorkerRequest);
      },
    };
  };

  const submit = (kind: 'zip' | 'dir', path: string, options: ZipHashOptions = zipOptions): Promise<WorkerResponse> =>
    new Promise((resolve, reject) => {
      if (closed) {
        reject(new ProvkitError(ErrorCode.ABORTED, 'hash pool is closed'));
        return;
      }
      queue.push({ request: { id: nextId++, kind, path, options }, resolve, reject, file: true });
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
    async hashZip(path, knownZh) {
      // A small archive is hashed here: starting a worker (a new V8 isolate
      // that loads the hashing modules) costs more CPU than hashing it, and a
      // tiny lock would pay that start-up for nothing. The size is
      // only a scheduling hint: the same function computes the same hashes
      // in either thread.
      if (inThreadBytes > 0 && (await fileSize(path)) <= inThreadBytes) return inThread(() => hashZipPackage(path, withZh(zipOptions, knownZh)));
      const r = await submit('zip', path, withZh(zipOptions, knownZh));
      if (!r.ok) throw ProvkitError.fromJSON(r.error);
      return deserializeZipHashes(r.zip!);
    },
    async hashDir(path) {
      const r = await submit('dir', path);
      if (!r.ok) throw ProvkitError.fromJSON(r.error);
      return asHash(r.dir!);
    },
    streamZip,
    async close() {
      closed = true;
      for (const job of queue.splice(0)) job.reject(new ProvkitError(ErrorCode.ABORTED, 'hash pool closed'));
      const all = [...idle, ...busy.keys()];
      idle.length = 0;
      for (const [, job] of busy) job.reject(new ProvkitError(ErrorCode.ABORTED, 'hash pool closed'));
      busy.clear();
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

/** No worker to spare: bytes pass, and the file is hashed at the end. */
function passThroughStream(hashZip: (path: string, knownZh?: Hash) => Promise<ZipPackageHashes>): ZipStream {
  return {
    transform: new Transform({ transform: (chunk: Buffer, _enc, cb) => cb(null, chunk) }),
    finish: (path, knownZh) => hashZip(path, knownZh),
    abort: () => undefined,
  };
}

/** `concurrency: 0`: the streaming pass runs in this thread. */
function inProcessStream(zipOptions: ZipHashOptions): ZipStream {
  const digester = new ZipStreamDigester(zipOptions.limits);
  const transform = new Transform({
    transform: (chunk: Buffer, _enc, cb) => {
      // The chunk is kept by the digester: hand it a copy the pipeline cannot reuse.
      void digester.write(Buffer.from(chunk)).then(() => cb(null, chunk));
    },
  });
  return {
    transform,
    finish: (path, knownZh) => hashWithDigests(path, digester, withZh(zipOptions, knownZh)),
    abort: () => digester.stop(),
  };
}
