/**
 * Worker-thread entry of the hash pool (pool.ts): hashes one package per
 * message and answers with plain data. A streamed archive spans several
 * messages: `stream-start`, `stream-chunk`… (each acknowledged once taken
 * in, for the sender's backpressure), then `stream-finish` (hash the written
 * file with the streamed digests) or `stream-abort`.
 */
import { parentPort } from 'node:worker_threads';

import { ErrorCode, ProvkitError } from '../errors.js';
import { hashPackageDir } from './dir-package.js';
import { serializeZipHashes, toSerializedError, type WorkerAck, type WorkerRequest, type WorkerResponse, type WorkerSpare } from './pool.js';
import { hashZipPackage } from './zip-package.js';
import { hashWithDigests, ZipStreamDigester } from './zip-stream.js';

const port = parentPort;
if (!port) throw new Error('hashing/worker.js must run in a worker thread');

const streams = new Map<number, ZipStreamDigester>();

port.on('message', (req: WorkerRequest) => {
  const reply = (res: WorkerResponse | WorkerAck): void => port.postMessage(res);
  switch (req.kind) {
    case 'stream-start':
      // Each chunk's memory goes back to the pool's tap once digested (pool.ts `Spares`).
      streams.set(
        req.id,
        new ZipStreamDigester(req.options.limits, (chunk) => {
          const buf = chunk.buffer as ArrayBuffer;
          if (chunk.byteOffset === 0 && chunk.length === buf.byteLength) port.postMessage({ spare: buf } satisfies WorkerSpare, [buf]);
        }),
      );
      return;
    case 'stream-chunk': {
      const digester = streams.get(req.id);
      const n = req.chunk.byteLength;
      if (!digester) return;
      void digester.write(Buffer.from(req.chunk)).then(() => reply({ id: req.id, ack: n }));
      return;
    }
    case 'stream-abort': {
      streams.get(req.id)?.stop();
      streams.delete(req.id);
      reply({ id: req.id, ok: false, error: new ProvkitError(ErrorCode.ABORTED, 'zip stream abandoned').toJSON() });
      return;
    }
    case 'stream-finish': {
      const digester = streams.get(req.id);
      streams.delete(req.id);
      void (async (): Promise<WorkerResponse> => {
        try {
          return { id: req.id, ok: true, zip: serializeZipHashes(await hashWithDigests(req.path, digester, req.options)) };
        } catch (err) {
          return { id: req.id, ok: false, error: toSerializedError(err) };
        }
      })().then(reply);
      return;
    }
    default: {
      const job = req;
      void (async (): Promise<WorkerResponse> => {
        try {
          if (job.kind === 'zip') return { id: job.id, ok: true, zip: serializeZipHashes(await hashZipPackage(job.path, job.options)) };
          return { id: job.id, ok: true, dir: await hashPackageDir(job.path) };
        } catch (err) {
          return { id: job.id, ok: false, error: toSerializedError(err) };
        }
      })().then(reply);
    }
  }
});
