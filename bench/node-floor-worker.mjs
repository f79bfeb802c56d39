// The Node floor's hash worker (bench/node-floor.mjs): for each archive, the
// SHA-256 of every byte (its zh:) and provkit's stream digester (inflate,
// SHA-256 and CRC-32 of every entry: src/hashing/zip-stream.ts, built to
// dist/ by `npm run build`), as a lock's hash worker does; no file, no
// authoritative pass, no lock logic.
//
// Messages in: {kind:'start'}, {kind:'chunk', buf: ArrayBuffer, n}, {kind:'end'}.
// Out: {ack: n} once a chunk is digested, {spare: ArrayBuffer} when its memory
// may be reused, {done, zh, entries} after 'end'.
import { createHash } from 'node:crypto';
import { parentPort } from 'node:worker_threads';

import { ZipStreamDigester } from '../dist/hashing/zip-stream.js';

if (!parentPort) throw new Error('bench/node-floor-worker.mjs runs as a worker thread');
const port = parentPort;
/** @type {import('node:crypto').Hash | undefined} */
let sha;
/** @type {ZipStreamDigester | undefined} */
let digester;

port.on('message', (/** @type {{kind: string, buf?: ArrayBuffer, n?: number}} */ m) => {
  if (m.kind === 'start') {
    sha = createHash('sha256');
    digester = new ZipStreamDigester(undefined, (chunk) => {
      const buf = chunk.buffer;
      if (chunk.byteOffset === 0 && chunk.length === buf.byteLength) port.postMessage({ spare: buf }, [buf]);
    });
    return;
  }
  if (!sha || !digester) throw new Error(`node-floor worker: ${m.kind} before start`);
  if (m.kind === 'chunk' && m.buf && m.n !== undefined) {
    const view = Buffer.from(m.buf, 0, m.n);
    sha.update(view);
    const n = m.n;
    void digester.write(view).then(() => port.postMessage({ ack: n }));
    return;
  }
  if (m.kind === 'end') {
    const zh = sha.digest('hex');
    void digester.end().then((entries) => port.postMessage({ done: true, zh, entries: entries.size }));
  }
});
