/**
 * Hashing across cores: a pool of worker threads, each hashing one package at
 * a time (inflate runs on libuv's thread pool, SHA-256 and CRC-32 on the
 * worker's thread, so one package already keeps about two cores busy and
 * several packages fill the machine).
 *
 * Contract: at most `concurrency` packages are hashed at once; jobs queue
 * beyond that. Results are the same values the in-process functions return
 * (errors are rebuilt as ProvkitError with the same code and context).
 * Workers are started lazily, kept while the pool is open, and do not keep
 * the process alive while idle. `concurrency: 0` hashes in this thread.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

import { ErrorCode, ProvkitError, type SerializedError } from '../errors.js';
import { hashPackageDir } from './dir-package.js';
import type { Hash } from './hash.js';
import { hashZipPackage, type FormResult, type ZipHashOptions, type ZipPackageHashes } from './zip-package.js';

export interface HashPoolOptions extends ZipHashOptions {
  /** Packages hashed at once; default `os.availableParallelism()`. 0 = no workers. */
  concurrency?: number;
}

export interface HashPool {
  /** `knownZh`: the archive's zh: when already computed from these bytes (not computed again). */
  hashZip(path: string, knownZh?: Hash): Promise<ZipPackageHashes>;
  hashDir(path: string): Promise<Hash>;
  /** Stops the workers; pending jobs fail with ABORTED. */
  close(): Promise<void>;
}

/** Messages between the pool and its workers (plain data only). */
export type WorkerRequest = { id: number; kind: 'zip' | 'dir'; path: string; options: ZipHashOptions };
export type WorkerResponse =
  | { id: number; ok: true; zip?: SerializedZipHashes; dir?: Hash }
  | { id: number; ok: false; error: SerializedError };

type SerializedForm = { ok: true; hash: Hash } | { ok: false; error: SerializedError };
export type SerializedZipHashes = Omit<ZipPackageHashes, 'h1' | 'h1Zip'> & { h1: SerializedForm; h1Zip: SerializedForm };

export function serializeZipHashes(r: ZipPackageHashes): SerializedZipHashes {
  const form = (f: FormResult): SerializedForm => (f.ok ? f : { ok: false, error: f.error.toJSON() });
  return { ...r, h1: form(r.h1), h1Zip: form(r.h1Zip) };
}

function deserializeZipHashes(r: SerializedZipHashes): ZipPackageHashes {
  const form = (f: SerializedForm): FormResult => (f.ok ? f : { ok: false, error: ProvkitError.fromJSON(f.error) });
  return { ...r, h1: form(r.h1), h1Zip: form(r.h1Zip) };
}

export function toSerializedError(err: unknown): SerializedError {
  if (err instanceof ProvkitError) return err.toJSON();
  return { code: ErrorCode.IO, message: err instanceof Error ? err.message : String(err) };
}

interface Job {
  request: WorkerRequest;
  resolve: (r: WorkerResponse) => void;
  reject: (e: ProvkitError) => void;
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
  const zipOptions: ZipHashOptions = options.limits ? { limits: options.limits } : {};
  if (concurrency === 0) {
    return {
      hashZip: (path, knownZh) => hashZipPackage(path, knownZh ? { ...zipOptions, knownZh } : zipOptions),
      hashDir: (path) => hashPackageDir(path),
      close: () => Promise.resolve(),
    };
  }

  const idle: Worker[] = [];
  const busy = new Map<Worker, Job>();
  const queue: Job[] = [];
  let started = 0;
  let nextId = 1;
  let closed = false;

  const spawn = (): Worker => {
    const w = new Worker(workerURL());
    started += 1;
    w.on('message', (msg: WorkerResponse) => {
      const job = busy.get(w);
      busy.delete(w);
      w.unref();
      idle.push(w);
      job?.resolve(msg);
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
      if (busy.has(w) || idle.includes(w)) die(new Error(`exited with code ${code}`));
    });
    return w;
  };

  const pump = (): void => {
    while (queue.length > 0 && !closed) {
      let w = idle.pop();
      if (!w) {
        if (started >= concurrency) return;
        w = spawn();
      }
      const job = queue.shift()!;
      busy.set(w, job);
      w.ref();
      w.postMessage(job.request);
    }
  };

  const submit = (kind: 'zip' | 'dir', path: string, options: ZipHashOptions = zipOptions): Promise<WorkerResponse> =>
    new Promise((resolve, reject) => {
      if (closed) {
        reject(new ProvkitError(ErrorCode.ABORTED, 'hash pool is closed'));
        return;
      }
      queue.push({ request: { id: nextId++, kind, path, options }, resolve, reject });
      pump();
    });

  return {
    async hashZip(path, knownZh) {
      const r = await submit('zip', path, knownZh ? { ...zipOptions, knownZh } : zipOptions);
      if (!r.ok) throw ProvkitError.fromJSON(r.error);
      return deserializeZipHashes(r.zip!);
    },
    async hashDir(path) {
      const r = await submit('dir', path);
      if (!r.ok) throw ProvkitError.fromJSON(r.error);
      return r.dir!;
    },
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
}
