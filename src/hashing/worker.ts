/**
 * Worker-thread entry of the hash pool (pool.ts): hashes one package per
 * message and answers with plain data. A streamed archive spans several
 * messages: `stream-start`, `stream-chunk`… (each acknowledged once taken
 * in, for the sender's backpressure), then `stream-finish` (hash the written
 * file with the streamed digests) or `stream-abort`. Every chunk of a stream
 * also goes into its `zh:` (answered by `stream-digest`), and, between
 * `stream-file` and `stream-file-done`, is written to the download's
 * temporary file at its position (pool.ts `WorkerFileSink`).
 */
import { createHash, type Hash as Sha } from 'node:crypto';
import { write as fsWrite } from 'node:fs';
import { parentPort } from 'node:worker_threads';

import { ErrorCode, ProvkitError, systemErrorCode, systemErrorSyscall, errorText } from '../errors.js';
import { hashPackageDir } from './dir-package.js';
import {
  serializeZipHashes,
  toSerializedError,
  type WorkerAck,
  type WorkerDigest,
  type WorkerFileDone,
  PROGRESS_EVERY_MS,
  type WorkerProgress,
  type WorkerRequest,
  type WorkerResponse,
  type WorkerSpare,
} from './pool.js';
import { hashWithDigests, hashZipFileOnce, zipFormsFileOnce, ZipStreamDigester } from './zip-stream.js';

const port = parentPort;
if (!port) throw new Error('hashing/worker.js must run in a worker thread');

/** A stream's file: the pool's descriptor, where writing starts, what was written, the first failure, the writes under way. */
interface StreamFile {
  fd: number;
  offset: number;
  written: number;
  error?: { message: string; code?: string; syscall?: string };
  /** Settles when every write queued so far is done (they run one after the other). */
  last: Promise<void>;
}

interface StreamState {
  digester: ZipStreamDigester;
  /** The `zh:` of every byte received, and their count (= the next byte's position). */
  sha: Sha;
  size: number;
}

const streams = new Map<number, StreamState>();
/**
 * Stream files by stream id, from `stream-file` to `stream-file-done`
 * (independent of the stream: an aborted or finished stream may still have
 * writes under way, and its file is released only once they are done).
 */
const files = new Map<number, StreamFile>();

/**
 * Chunks whose bytes a file write still reads: their memory goes back to the
 * pool (a spare the pool fills with other bytes) only once the write is done.
 */
const writing = new WeakMap<ArrayBuffer, Promise<void>>();

/**
 * Queues the write of `view` (the stream's bytes from position `pos`), the
 * part at and after the file's offset, at its position. Asynchronous: the
 * copy into the page cache runs on libuv's pool, while this thread goes on
 * inflating and hashing (synchronous writes made this thread the busiest,
 * bench/PROFILE.md). `onError` is called once, at the first failure.
 */
function queueWrite(f: StreamFile, view: Buffer, pos: number, onError: () => void): Promise<void> | undefined {
  const from = Math.max(0, f.offset - pos);
  if (from >= view.length) return undefined;
  const done = f.last.then(async () => {
    if (f.error) return;
    try {
      for (let at = from; at < view.length;) {
        // eslint-disable-next-line no-await-in-loop -- one write after the other, each at its position
        const n = await new Promise<number>((resolve, reject) =>
          fsWrite(f.fd, view, at, view.length - at, pos + at, (err, bytes) => (err ? reject(err) : resolve(bytes))),
        );
        at += n;
        f.written = pos + at - f.offset;
      }
    } catch (err) {
      const code = systemErrorCode(err);
      const syscall = systemErrorSyscall(err);
      f.error = {
        message: errorText(err),
        ...(code === undefined ? {} : { code }),
        ...(syscall === undefined ? {} : { syscall }),
      };
      onError();
    }
  });
  f.last = done;
  writing.set(view.buffer as ArrayBuffer, done);
  return done;
}

port.on('message', (req: WorkerRequest) => {
  const reply = (res: WorkerResponse | WorkerAck | WorkerDigest | WorkerFileDone): void => port.postMessage(res);
  switch (req.kind) {
    case 'stream-start':
      streams.set(req.id, {
        // Each chunk's memory goes back to the pool once digested (pool.ts `Spares`).
        digester: new ZipStreamDigester(req.options.limits, (chunk) => {
          const buf = chunk.buffer as ArrayBuffer;
          if (chunk.byteOffset !== 0 || chunk.length !== buf.byteLength) return;
          const spare = (): void => port.postMessage({ spare: buf } satisfies WorkerSpare, [buf]);
          // Never while a write still reads it (then it is not handed back if the write failed: no matter).
          const pending = writing.get(buf);
          if (pending) void pending.then(spare);
          else spare();
        }),
        sha: createHash('sha256'),
        size: 0,
      });
      return;
    case 'stream-chunk': {
      const st = streams.get(req.id);
      const n = req.bytes ?? req.chunk.byteLength;
      if (!st) return;
      const view = Buffer.from(req.chunk, 0, n);
      // zh: and the file first, synchronously: the digester keeps the view.
      st.sha.update(view);
      const f = files.get(req.id);
      const written = f
        ? queueWrite(f, view, st.size, () =>
            reply({
              id: req.id,
              file: { done: false, written: f.written, ...(f.error === undefined ? {} : { error: f.error }) },
            }),
          )
        : undefined;
      st.size += n;
      // Taken in once digested and written: the sender's window then bounds
      // the memory the writes hold too (RSS), not only the digester's.
      void Promise.all([st.digester.write(view), written]).then(() => reply({ id: req.id, ack: n }));
      return;
    }
    case 'stream-file': {
      if (streams.has(req.id))
        files.set(req.id, { fd: req.fd, offset: req.offset, written: 0, last: Promise.resolve() });
      return;
    }
    case 'stream-file-done': {
      // Messages are handled in order: every chunk sent before this one has
      // its write queued; the answer waits for the last of them.
      const f = files.get(req.id);
      files.delete(req.id);
      void (f?.last ?? Promise.resolve()).then(() =>
        reply({
          id: req.id,
          file: { done: true, written: f?.written ?? -1, ...(f?.error === undefined ? {} : { error: f.error }) },
        }),
      );
      return;
    }
    case 'stream-digest': {
      const st = streams.get(req.id);
      if (st) reply({ id: req.id, digest: { sha256: st.sha.copy().digest('hex'), size: st.size } });
      return;
    }
    case 'stream-abort': {
      streams.get(req.id)?.digester.stop();
      streams.delete(req.id);
      reply({ id: req.id, ok: false, error: new ProvkitError(ErrorCode.ABORTED, 'zip stream abandoned').toJSON() });
      return;
    }
    case 'stream-finish': {
      const digester = streams.get(req.id)?.digester;
      streams.delete(req.id);
      void (async (): Promise<WorkerResponse> => {
        try {
          return {
            id: req.id,
            ok: true,
            zip: serializeZipHashes(await hashWithDigests(req.path, digester, req.options)),
          };
        } catch (err) {
          return { id: req.id, ok: false, error: toSerializedError(err) };
        }
      })().then(reply);
      return;
    }
    default: {
      const job = req;
      // How far the job has read its file, at most every PROGRESS_EVERY_MS and once at the end.
      let sent = 0;
      const progress = job.progress
        ? (bytes: number, total: number): void => {
            const now = Date.now();
            if (bytes < total && now - sent < PROGRESS_EVERY_MS) return;
            sent = now;
            port.postMessage({ id: job.id, progress: { bytes, total } } satisfies WorkerProgress);
          }
        : undefined;
      void (async (): Promise<WorkerResponse> => {
        try {
          if (job.kind === 'zip')
            return {
              id: job.id,
              ok: true,
              zip: serializeZipHashes(await hashZipFileOnce(job.path, job.options, progress)),
            };
          if (job.kind === 'forms')
            return {
              id: job.id,
              ok: true,
              zip: serializeZipHashes(await zipFormsFileOnce(job.path, job.options, progress)),
            };
          return { id: job.id, ok: true, dir: await hashPackageDir(job.path) };
        } catch (err) {
          return { id: job.id, ok: false, error: toSerializedError(err) };
        }
      })().then(reply);
    }
  }
});
