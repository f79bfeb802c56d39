/**
 * `zh:`: the SHA-256 of an archive's bytes (docs/reference.md §2.2), computed as the bytes
 * pass, so a download is hashed while it is written (ssri's integrity stream).
 */
import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { Transform, type TransformCallback } from 'node:stream';

import { type Hash, zhFromDigest } from './hash.js';

/**
 * A pass-through that hashes and counts what flows through it. After the
 * stream has finished, {@link ZhStream.result} holds the `zh:` and the size.
 */
export class ZhStream extends Transform {
  private readonly sha = createHash('sha256');
  private bytes = 0;
  private done: { zh: Hash; size: number } | undefined;

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.sha.update(chunk);
    this.bytes += chunk.length;
    cb(null, chunk);
  }

  override _flush(cb: TransformCallback): void {
    this.done = { zh: zhFromDigest(this.sha.digest()), size: this.bytes };
    cb();
  }

  /** The `zh:` and byte count; throws if the stream has not finished. */
  result(): { zh: Hash; size: number } {
    if (!this.done) throw new Error('ZhStream.result() called before the stream finished');
    return this.done;
  }
}

/**
 * How far a read of a file has come: `bytes` read of its `total` size
 * (called after each read; the bytes only grow). For a progress display
 * (src/ui/progress.ts), through the installer's `fetch_progress` events.
 */
export type ReadProgress = (bytes: number, total: number) => void;

/** Bytes per read of {@link zhOfFile}. */
const ZH_READ = 1024 * 1024;

/**
 * `zh:` of a file, read sequentially in 1 MiB reads into one buffer that is
 * reused (the digest is updated synchronously before the next read): a fresh
 * buffer per read cost page faults and garbage collection, ~0.3 CPU-s per
 * 200 MB on the incompressible benchmark (bench/commands.ts). Symlinks are followed,
 * as `EvalSymlinks` does. `onProgress` is told the bytes read after each read.
 */
export async function zhOfFile(path: string, onProgress?: ReadProgress): Promise<Hash> {
  const sha = createHash('sha256');
  const fh = await open(path, 'r');
  try {
    const total = onProgress ? (await fh.stat()).size : 0;
    const buf = Buffer.allocUnsafeSlow(ZH_READ);
    for (let pos = 0; ;) {
      // eslint-disable-next-line no-await-in-loop -- sequential reads into one buffer
      const { bytesRead } = await fh.read(buf, 0, ZH_READ, pos);
      if (bytesRead === 0) break;
      sha.update(buf.subarray(0, bytesRead));
      pos += bytesRead;
      onProgress?.(pos, Math.max(total, pos));
    }
  } finally {
    await fh.close();
  }
  return zhFromDigest(sha.digest());
}
