/**
 * Worker-thread entry of the hash pool (pool.ts): hashes one package per
 * message and answers with plain data.
 */
import { parentPort } from 'node:worker_threads';

import { hashPackageDir } from './dir-package.js';
import { serializeZipHashes, toSerializedError, type WorkerRequest, type WorkerResponse } from './pool.js';
import { hashZipPackage } from './zip-package.js';

const port = parentPort;
if (!port) throw new Error('hashing/worker.js must run in a worker thread');

port.on('message', (req: WorkerRequest) => {
  const run = async (): Promise<WorkerResponse> => {
    try {
      if (req.kind === 'zip') return { id: req.id, ok: true, zip: serializeZipHashes(await hashZipPackage(req.path, req.options)) };
      return { id: req.id, ok: true, dir: await hashPackageDir(req.path) };
    } catch (err) {
      return { id: req.id, ok: false, error: toSerializedError(err) };
    }
  };
  void run().then((res) => port.postMessage(res));
});
