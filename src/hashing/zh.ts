/**
 * `zh:`: the SHA-256 of an archive's bytes (docs/reference.md §2.2), computed as the bytes
 * pass, so a download is hashed while it is written (ssri's integrity stream).
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';

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

/** `zh:` of a file, streamed in 1 MiB reads. Symlinks are followed, as `EvalSymlinks` does. */
export async function zhOfFile(path: string): Promise<Hash> {
  const sha = createHash('sha256');
  await pipeline(createReadStream(path, { highWaterMark: 1024 * 1024 }), async (source: AsyncIterable<Buffer>) => {
    for await (const chunk of source) sha.update(chunk);
  });
  return zhFromDigest(sha.digest());
}
