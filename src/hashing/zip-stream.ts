/**
 * Hashing a zip while it downloads (ARCHITECTURE.md, "The life of a lock run"): the archive's
 * bytes are parsed in arrival order, entry by entry from the local headers,
 * and each entry's data is inflated and digested (SHA-256, CRC-32, size) as
 * it arrives, so the CPU work overlaps the network instead of following it.
 *
 * The results are only *hints*, keyed by where an entry's data starts and how
 * many compressed bytes it took. The authoritative pass (zip-package.ts over
 * the finished file, following Go's `archive/zip` from the central directory)
 * still reads every header and data descriptor and runs every check; where the
 * central directory names an entry whose data starts at the same offset, with
 * the same method and exactly the compressed size consumed here, it takes the
 * digest instead of inflating again (see `digestEntry`). Those bytes are the
 * same bytes (the file was written from this very stream), so the outcome is
 * identical by construction; anything else (a zip whose local headers lie,
 * a stored entry with a data descriptor, junk, a corrupt stream) simply gets
 * no hint and is read from the file as before.
 *
 * Never throws on malformed input: it stops producing hints. Work is bounded by
 * the same limits as the file pass (total output, compression ratio).
 *
 * Never holds the bytes up for longer than it takes to digest what it
 * already has (pinned by test/e2e/stream-hasher.test.ts): `write` waits only while the parser is busy
 * with more than {@link PIPE_BUFFER} unparsed bytes; whenever the parser
 * waits for input, every waiting writer is let go; and once the parser has
 * stopped following the archive (not a zip, data before the first local
 * header, a zip64 stored entry, the central directory, any surprise), later
 * bytes are dropped unread and every write resolves at once. A download fed
 * through it therefore goes at the network's pace whatever the bytes are.
 */
import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { createInflateRaw } from 'node:zlib';

import { crc32 } from './crc32.js';
import {
  FLAG_DATA_DESCRIPTOR,
  LEN_LOCAL,
  MAX32,
  METHOD_DEFLATE,
  METHOD_STORE,
  SIG_CENTRAL,
  SIG_DESCRIPTOR,
  SIG_LOCAL,
} from './zip-format.js';
import { zhFromDigest } from './hash.js';
import type { ReadProgress } from './zh.js';
import { createRawInflater, rawInflaterAvailable } from './inflate.js';
import {
  hashZipForms,
  hashZipPackage,
  type ZipForms,
  type ZipHashOptions,
  type ZipPackageHashes,
} from './zip-package.js';
import {
  DEFAULT_ZIP_LIMITS,
  RATIO_FLOOR_BYTES,
  type StreamedDigest,
  writeWithBackpressure,
  type ZipLimits,
} from './zip-reader.js';

const INFLATE_CHUNK = 1024 * 1024;
const PIPE_BUFFER = 2 * 1024 * 1024;
/** Chunks below this size are copied into blocks of ACC_BLOCK bytes. */
const SMALL_CHUNK = 16 * 1024;
const ACC_BLOCK = 256 * 1024;
/** Fewest bytes handed to the inflater in one write, except at the end. */
const MIN_WRITE = 64 * 1024;
/** Most bytes handed to the inflater in one write. */
const WRITE_BLOCK = 1024 * 1024;

/** Hints by the absolute offset where an entry's data starts. */
export type StreamedDigests = Map<number, StreamedDigest>;

/**
 * Consumes a zip's bytes in order ({@link write}, then {@link end}) and
 * returns per-entry digests. `write` resolves when the chunk has been taken
 * in (for backpressure); chunks must not be modified afterwards.
 */
export class ZipStreamDigester {
  private readonly digests: StreamedDigests = new Map();
  /** Bytes received but not parsed yet, starting at absolute offset {@link base}. */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private base = 0;
  private ended = false;
  private stopped = false;
  /** The parser has returned: it follows no more bytes (see the module comment). */
  private steppedAside = false;
  private wake: (() => void) | undefined;
  private readonly loop: Promise<void>;
  private outputBytes = 0;
  private readonly maxTotal: number;
  private readonly maxRatio: number;
  /** Resolves writers waiting for the parser to catch up. */
  private drained: Array<() => void> = [];
  /** The block small chunks are gathered in (only ever written past `accUsed`). */
  private acc: Buffer | undefined;
  private accUsed = 0;

  /** Chunks given to {@link write} as they are (not copied), with the absolute offset where each ends. */
  private owned: Array<{ chunk: Buffer; end: number }> = [];
  private toGiveBack: Buffer[] = [];
  /** Entries are inflated in this thread (inflate.ts); fixed at construction. */
  private readonly inThread: boolean;

  /**
   * `giveBack`, when given, receives every chunk passed to {@link write} once
   * the digester holds no reference to any of its bytes any more (consumed or
   * dropped), so that the caller can reuse its memory (the worker hands the
   * ArrayBuffer back to the download's tap: pool.ts). It is called from a
   * later macrotask, never while a view of the chunk may still be in use.
   * Only offered when entries are inflated in this thread: the stream
   * fallback keeps views of consumed chunks to put bytes back.
   */
  constructor(
    limits: ZipLimits = DEFAULT_ZIP_LIMITS,
    private readonly giveBack?: (chunk: Buffer) => void,
  ) {
    this.inThread = rawInflaterAvailable();
    this.maxTotal = limits.maxTotalBytes ?? DEFAULT_ZIP_LIMITS.maxTotalBytes;
    this.maxRatio = limits.maxRatio ?? DEFAULT_ZIP_LIMITS.maxRatio;
    this.loop = this.run()
      .catch(() => undefined)
      .finally(() => this.stepAside());
  }

  /**
   * Takes a chunk; resolves at once unless the busy parser holds more than
   * {@link PIPE_BUFFER} unparsed bytes, and then as soon as it holds less or
   * waits for input (never later: see the module comment).
   */
  write(chunk: Buffer): Promise<void> {
    if (this.stopped || this.ended || this.steppedAside) {
      this.handBack(chunk);
      return Promise.resolve();
    }
    const kept = this.append(chunk);
    this.pendingBytes += chunk.length;
    if (kept && this.giveBack && this.inThread) this.owned.push({ chunk, end: this.base + this.pendingBytes });
    else this.handBack(chunk);
    this.poke();
    if (this.pendingBytes <= PIPE_BUFFER) return Promise.resolve();
    return new Promise((resolve) => this.drained.push(resolve));
  }

  /**
   * Queues a chunk. Small chunks are gathered into blocks, so that tiny
   * network reads cannot make the queue long (and its handling quadratic).
   */
  /** True when the chunk itself was queued, false when its bytes were copied. */
  private append(chunk: Buffer): boolean {
    if (chunk.length >= SMALL_CHUNK) {
      this.pending.push(chunk);
      return true;
    }
    const last = this.pending[this.pending.length - 1];
    const acc = this.acc;
    if (
      acc &&
      last &&
      last.buffer === acc.buffer &&
      last.byteOffset + last.length === acc.byteOffset + this.accUsed &&
      this.accUsed + chunk.length <= acc.length
    ) {
      chunk.copy(acc, this.accUsed);
      this.accUsed += chunk.length;
      this.pending[this.pending.length - 1] = acc.subarray(last.byteOffset - acc.byteOffset, this.accUsed);
      return false;
    }
    this.acc = Buffer.allocUnsafeSlow(ACC_BLOCK);
    chunk.copy(this.acc, 0);
    this.accUsed = chunk.length;
    this.pending.push(this.acc.subarray(0, this.accUsed));
    return false;
  }

  /** Gives `chunk` back (see the constructor), after the current macrotask. */
  private handBack(chunk: Buffer): void {
    if (!this.giveBack || !this.inThread) return;
    this.toGiveBack.push(chunk);
    if (this.toGiveBack.length === 1) {
      setImmediate(() => {
        const list = this.toGiveBack;
        this.toGiveBack = [];
        for (const c of list) this.giveBack!(c);
      });
    }
  }

  /** Hands back the chunks wholly before {@link base} (all of them when `all`). */
  private handBackConsumed(all: boolean): void {
    while (this.owned.length > 0 && (all || this.owned[0]!.end <= this.base)) this.handBack(this.owned.shift()!.chunk);
  }

  /** No more bytes: waits for the parser and returns the hints gathered. */
  async end(): Promise<StreamedDigests> {
    this.ended = true;
    this.poke();
    await this.loop;
    return this.digests;
  }

  /** Gives up (an aborted download); later writes are ignored. */
  stop(): void {
    this.stopped = true;
    this.pending = [];
    this.pendingBytes = 0;
    this.handBackConsumed(true);
    this.poke();
    this.release();
  }

  /** The parser returned: keep the hints, drop what is unparsed, and let every writer go from now on. */
  private stepAside(): void {
    this.steppedAside = true;
    this.pending = [];
    this.pendingBytes = 0;
    this.handBackConsumed(true);
    this.acc = undefined;
    this.releaseAll();
  }

  private poke(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  private release(): void {
    if (this.pendingBytes > PIPE_BUFFER && !this.stopped) return;
    this.releaseAll();
  }

  private releaseAll(): void {
    const waiting = this.drained;
    this.drained = [];
    for (const r of waiting) r();
  }

  /**
   * Waits until `n` unparsed bytes are there, or no more can come. A parser
   * that waits for input lets every writer go, whatever it holds: holding
   * them then would wait for bytes that cannot come.
   */
  private async waitFor(n: number): Promise<void> {
    while (this.pendingBytes < n && !this.ended && !this.stopped) {
      this.releaseAll();
      // eslint-disable-next-line no-await-in-loop -- waiting for the network
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  /** Waits until at least `n` unparsed bytes are there; false at the end of the stream. */
  private async need(n: number): Promise<boolean> {
    await this.waitFor(n);
    return !this.stopped && this.pendingBytes >= n;
  }

  private peek(n: number): Buffer {
    const first = this.pending[0];
    if (first && first.length >= n) return first.subarray(0, n);
    const parts: Buffer[] = [];
    let have = 0;
    for (const p of this.pending) {
      if (have >= n) break;
      parts.push(p);
      have += p.length;
    }
    return Buffer.concat(parts).subarray(0, n);
  }

  private skip(n: number): void {
    this.base += n;
    this.pendingBytes -= n;
    while (n > 0) {
      const first = this.pending[0]!;
      if (first.length <= n) {
        n -= first.length;
        this.pending.shift();
      } else {
        this.pending[0] = first.subarray(n);
        n = 0;
      }
    }
    this.handBackConsumed(false);
    this.release();
  }

  /** Waits for `n` unparsed bytes, or fewer but at least one at the end; false when there are none. */
  private async needSome(n: number): Promise<boolean> {
    await this.waitFor(n);
    return !this.stopped && this.pendingBytes > 0;
  }

  /**
   * Drops the next `n` bytes as they come (a header's size may be up to
   * 4 GiB: never wait for that many at once); false when the stream ends first.
   */
  private async discard(n: number): Promise<boolean> {
    while (n > 0) {
      // eslint-disable-next-line no-await-in-loop -- the bytes come in order
      const chunk = await this.nextChunk(n);
      if (!chunk) return false;
      n -= chunk.length;
    }
    return true;
  }

  /** The next unparsed chunk (at most `max` bytes), consumed; undefined at the end. */
  private async nextChunk(max: number): Promise<Buffer | undefined> {
    if (!(await this.need(1))) return undefined;
    const first = this.pending[0]!;
    const n = Math.min(first.length, max);
    const out = first.subarray(0, n);
    this.skip(n);
    return out;
  }

  private async run(): Promise<void> {
    for (;;) {
      // eslint-disable-next-line no-await-in-loop -- the entries come in order
      if (!(await this.need(4))) return;
      if (this.peek(4).readUInt32LE(0) !== SIG_LOCAL) return; // the central directory, or something we do not follow
      // eslint-disable-next-line no-await-in-loop
      if (!(await this.need(LEN_LOCAL))) return;
      const h = this.peek(LEN_LOCAL);
      const flags = h.readUInt16LE(6);
      const method = h.readUInt16LE(8);
      const localCsize = h.readUInt32LE(18);
      const nameLen = h.readUInt16LE(26);
      const extraLen = h.readUInt16LE(28);
      // eslint-disable-next-line no-await-in-loop
      if (!(await this.need(LEN_LOCAL + nameLen + extraLen))) return;
      this.skip(LEN_LOCAL + nameLen + extraLen);
      const start = this.base;
      let consumed: number;
      if (method === METHOD_DEFLATE) {
        // eslint-disable-next-line no-await-in-loop
        const r = await this.inflateEntry(start);
        if (!r) return;
        consumed = r;
        if (!(flags & FLAG_DATA_DESCRIPTOR) && localCsize !== MAX32) {
          // The next header is where the local header says the data ends.
          if (localCsize < consumed) return;
          // eslint-disable-next-line no-await-in-loop
          if (!(await this.discard(localCsize - consumed))) return;
        }
      } else if (method === METHOD_STORE && !(flags & FLAG_DATA_DESCRIPTOR) && localCsize !== MAX32) {
        // eslint-disable-next-line no-await-in-loop
        if (!(await this.storeEntry(start, localCsize))) return;
        consumed = localCsize;
      } else {
        return;
      }
      // eslint-disable-next-line no-await-in-loop
      if (flags & FLAG_DATA_DESCRIPTOR && !(await this.skipDescriptor())) return;
    }
  }

  /**
   * Skips a data descriptor: optional signature, CRC, then 32- or 64-bit
   * sizes. The width is whichever is followed by another header.
   */
  private async skipDescriptor(): Promise<boolean> {
    if (!(await this.need(4))) return false;
    const sig = this.peek(4).readUInt32LE(0) === SIG_DESCRIPTOR ? 4 : 0;
    for (const width of [12, 20]) {
      const len = sig + width;
      // eslint-disable-next-line no-await-in-loop
      if (!(await this.need(len + 4))) return false;
      const next = this.peek(len + 4).readUInt32LE(len);
      if (next === SIG_LOCAL || next === SIG_CENTRAL) {
        this.skip(len);
        return true;
      }
    }
    return false;
  }

  private account(n: number): boolean {
    this.outputBytes += n;
    if (this.outputBytes > this.maxTotal) return false;
    return !(
      this.outputBytes > RATIO_FLOOR_BYTES &&
      this.outputBytes / Math.max(1, this.base + this.pendingBytes) > this.maxRatio
    );
  }

  private async storeEntry(start: number, size: number): Promise<boolean> {
    const sha = createHash('sha256');
    let crc = 0;
    let left = size;
    while (left > 0) {
      // eslint-disable-next-line no-await-in-loop
      const chunk = await this.nextChunk(left);
      if (!chunk) return false;
      left -= chunk.length;
      sha.update(chunk);
      crc = crc32(chunk, crc);
      if (!this.account(chunk.length)) return false;
    }
    this.digests.set(start, { method: 0, compressedSize: size, size, sha256: sha.digest(), crc32: crc });
    return true;
  }

  /**
   * Inflates one deflate stream starting at the parser's position; returns the
   * compressed bytes it took (the bytes after its end stay unparsed), or
   * undefined on failure. In this thread, chunk by chunk as they arrive
   * (inflate.ts: no thread-pool round trip, no fresh buffers); with the
   * stream where that inflater is not available.
   */
  private async inflateEntry(start: number): Promise<number | undefined> {
    const inflater = this.inThread ? createRawInflater() : undefined;
    if (!inflater) return this.inflateEntryStream(start);
    const sha = createHash('sha256');
    let crc = 0;
    let size = 0;
    let consumed = 0;
    const sink = (out: Buffer): void => {
      sha.update(out);
      crc = crc32(out, crc);
      size += out.length;
      if (!this.account(out.length)) throw new Error('limit');
    };
    try {
      for (;;) {
        // eslint-disable-next-line no-await-in-loop -- the bytes come in order
        if (!(await this.needSome(1))) {
          if (this.stopped) return undefined;
          // No more bytes: complete only if the deflate stream ended exactly here.
          inflater.finish(sink);
          break;
        }
        const used = inflater.write(this.pending[0]!, sink);
        consumed += used;
        this.skip(used);
        if (inflater.ended) break;
        if (used === 0) return undefined; // zlib took nothing and did not end: give up rather than spin
      }
    } catch {
      return undefined;
    } finally {
      inflater.close();
    }
    this.digests.set(start, { method: 8, compressedSize: consumed, size, sha256: sha.digest(), crc32: crc });
    return consumed;
  }

  /** {@link inflateEntry} through a zlib stream (the fallback). */
  private async inflateEntryStream(start: number): Promise<number | undefined> {
    const streamOptions: object = { readableHighWaterMark: PIPE_BUFFER, writableHighWaterMark: PIPE_BUFFER };
    const inflater = createInflateRaw({ chunkSize: INFLATE_CHUNK, ...streamOptions });
    inflater.on('error', () => undefined);
    const sha = createHash('sha256');
    let crc = 0;
    let size = 0;
    let failed = false;
    let finished = false;
    const consumer = (async (): Promise<void> => {
      for await (const chunk of inflater as AsyncIterable<Buffer>) {
        sha.update(chunk);
        crc = crc32(chunk, crc);
        size += chunk.length;
        if (!this.account(chunk.length)) throw new Error('limit');
      }
    })()
      .catch(() => {
        failed = true;
        inflater.destroy();
      })
      .finally(() => {
        finished = true;
      });
    const done = consumer.then(() => 'done' as const);
    // Everything written to the inflater and not yet known to be consumed,
    // to put back what follows the end of the stream.
    const fed: Buffer[] = [];
    let fedBytes = 0;
    while (!finished && !this.stopped) {
      // eslint-disable-next-line no-await-in-loop -- the stream may end before more data is needed
      const ready = await Promise.race([this.needSome(MIN_WRITE), done]);
      if (ready === 'done' || finished) break;
      if (!ready) {
        // No more bytes: what was written may still complete the stream
        // (zlib is behind); if not, ending the input makes it fail.
        if (!this.stopped) inflater.end();
        break;
      }
      // Everything unparsed, up to a block, in one write (small network chunks cost a zlib round trip each).
      const parts: Buffer[] = [];
      let got = 0;
      while (this.pending.length > 0 && got < WRITE_BLOCK) {
        const p = this.pending.shift()!;
        parts.push(p);
        got += p.length;
      }
      const chunk = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
      this.pendingBytes -= chunk.length;
      this.base += chunk.length;
      this.release();
      fed.push(chunk);
      fedBytes += chunk.length;
      // Keep only what zlib has not consumed yet (written - bytesWritten).
      const unconsumed = this.base - start - inflater.bytesWritten;
      while (fed.length > 1 && fedBytes - fed[0]!.length >= unconsumed) {
        fedBytes -= fed[0]!.length;
        fed.shift();
      }
      // eslint-disable-next-line no-await-in-loop -- backpressure
      await writeWithBackpressure(inflater, chunk, done);
    }
    await consumer;
    if (failed || this.stopped) return undefined;
    const consumed = inflater.bytesWritten;
    // Put back the bytes after the end of the deflate stream.
    const totalFed = this.base - start;
    const extra = totalFed - consumed;
    if (extra < 0) return undefined;
    if (extra > 0) {
      const tail = Buffer.concat(fed).subarray(-extra);
      this.pending.unshift(tail);
      this.pendingBytes += extra;
      this.base -= extra;
    }
    this.digests.set(start, { method: 8, compressedSize: consumed, size, sha256: sha.digest(), crc32: crc });
    return consumed;
  }
}

/**
 * The hashes of the finished file `path`, using what `digester` streamed
 * from its bytes (none when there is no digester).
 */
export async function hashWithDigests(
  path: string,
  digester: ZipStreamDigester | undefined,
  options: ZipHashOptions,
): Promise<ZipPackageHashes> {
  return hashZipPackage(path, await withDigests(options, digester));
}

/** `options` with what `digester` saw of the archive (its `streamed` hints), once it has ended. */
async function withDigests(options: ZipHashOptions, digester: ZipStreamDigester | undefined): Promise<ZipHashOptions> {
  const streamed = digester ? await digester.end() : undefined;
  return streamed ? { ...options, streamed } : options;
}

/** Bytes per read of {@link hashZipFileOnce}. */
const FILE_BLOCK = 1024 * 1024;
/**
 * Bytes of {@link hashZipFileOnce}'s first read: an archive that fits is read
 * whole into a buffer of this size, not a 1 MiB block.
 */
const FIRST_READ = 64 * 1024;

/**
 * `zh:` and both `h1:` forms of an archive on disk from one sequential read
 * (issue 13: a local package is read once). Each block goes into the `zh:`
 * SHA-256 and through a {@link ZipStreamDigester}; the authoritative pass
 * (zip-package.ts) then reads the headers and the central directory and
 * takes each entry's digest from the hints where they match, as for a
 * download (the same bytes: this very read). Entries without a hint (a zip
 * the digester does not follow) are read again from the file, as before.
 * Blocks are reused once the digester hands them back, so memory stays
 * bounded and no fresh buffer is made per read.
 *
 * An archive that comes whole in the first read (up to 64 KiB: a README
 * demo's, a test's) needs no digester: the authoritative pass reads those
 * bytes in memory (ZipHashOptions.bytes), headers and entries alike.
 *
 * The result equals {@link hashZipPackage}'s, which this is whenever `knownZh`
 * or hints are given, and for every failure to read the file (the same
 * errors, raised there).
 */
export async function hashZipFileOnce(
  path: string,
  options: ZipHashOptions = {},
  onProgress?: ReadProgress,
): Promise<ZipPackageHashes> {
  if (options.knownZh || options.streamed) return hashZipPackage(path, options, onProgress);
  const sha = createHash('sha256');
  const pass = await readOnce(path, options, sha, onProgress);
  if (!pass) return hashZipPackage(path, options, onProgress);
  return hashZipPackage(path, { ...pass, knownZh: zhFromDigest(sha.digest()) });
}

/**
 * Both `h1:` forms of an archive on disk from one sequential read, as
 * {@link hashZipFileOnce} reads it, without the `zh:`: no SHA-256 of the
 * archive's bytes (~13 % of the CPU of hashing the benchmark's 99 MB zips,
 * ~40 % for an incompressible one; bench/PROFILE.md "Stop 27"). The result
 * equals {@link hashZipForms}'s.
 */
export async function zipFormsFileOnce(
  path: string,
  options: ZipHashOptions = {},
  onProgress?: ReadProgress,
): Promise<ZipForms> {
  if (options.streamed) return hashZipForms(path, options, onProgress);
  const pass = await readOnce(path, options, undefined, onProgress);
  return pass ? hashZipForms(path, pass) : hashZipForms(path, options, onProgress);
}

/**
 * Reads `path` once, sequentially, into `sha` (when given) and a
 * {@link ZipStreamDigester}; returns the options for the authoritative pass
 * (`options` with the digester's hints, or with the whole archive when the
 * first read held all of it), or undefined when the file could not be read
 * (the authoritative pass then raises the error). `onProgress` is told the
 * bytes read (and digested) after each read.
 */
async function readOnce(
  path: string,
  options: ZipHashOptions,
  sha: ReturnType<typeof createHash> | undefined,
  onProgress?: ReadProgress,
): Promise<ZipHashOptions | undefined> {
  let fh;
  try {
    fh = await open(path, 'r');
  } catch {
    return undefined;
  }
  // The digester hands back only chunks given to it, so a whole block is one
  // of ours (the first read and the last, short one are not reused). Nothing
  // else keeps a block: where the digester hands none back (the stream
  // fallback of the inflater), each is garbage once the digester is done with it.
  const free: Buffer[] = [];
  let digester: ZipStreamDigester | undefined;
  // The first read, held back from the digester until the next read says
  // whether it was the whole archive.
  let first: Buffer | undefined;
  try {
    const total = onProgress ? (await fh.stat()).size : 0;
    for (let pos = 0; ;) {
      const want = pos === 0 ? FIRST_READ : FILE_BLOCK;
      const buf = (pos > 0 ? free.pop() : undefined) ?? Buffer.allocUnsafeSlow(want);
      // eslint-disable-next-line no-await-in-loop -- one sequential read
      const { bytesRead } = await fh.read(buf, 0, want, pos);
      if (bytesRead === 0) break;
      const chunk = bytesRead === want ? buf : buf.subarray(0, bytesRead);
      sha?.update(chunk);
      pos += bytesRead;
      if (pos === bytesRead) {
        first = chunk;
        continue;
      }
      digester ??= new ZipStreamDigester(options.limits, (c) => {
        if (c.length === FILE_BLOCK) free.push(c);
      });
      /* eslint-disable no-await-in-loop -- backpressure from the digester */
      if (first) await digester.write(first);
      first = undefined;
      await digester.write(chunk);
      /* eslint-enable no-await-in-loop */
      onProgress?.(pos, Math.max(total, pos));
    }
  } catch {
    digester?.stop();
    return undefined;
  } finally {
    await fh.close().catch(() => undefined);
  }
  if (digester) return withDigests(options, digester);
  return first ? { ...options, bytes: first } : options;
}
