/**
 * Raw inflate in the calling thread, into one reused output buffer.
 *
 * Why: `zlib.createInflateRaw()` used as a stream costs more than the
 * inflating itself. Each 1 MiB of output is a job for libuv's thread pool, a
 * fresh 1 MiB buffer (page faults, `memset`-free but GC'd), a `push` through
 * the Readable machinery and a promise of the async iterator; and the hashing
 * thread and the pool thread take turns rather than overlap. Measured on one
 * bench package (bench/generate.ts: 98.7 MB zip, 430 MB entry; inflate +
 * SHA-256 + CRC-32): 1.5–2.0 CPU-s through the stream, 0.77–0.93 CPU-s with
 * this loop (bench/PROFILE.md).
 *
 * How: the synchronous entry point of Node's zlib binding, the one
 * `zlib.inflateRawSync` runs on (Node's lib/zlib.js `processChunkSync`):
 * `handle.writeSync(flush, in, inOff, inLen, out, outOff, outLen)`, which
 * leaves `[availOut, availIn]` in the stream's `_writeState`, and reports a
 * zlib error through `handle.onerror(message, errno, code)`. That is not a
 * documented API, so {@link createRawInflater} checks the shape and, once per
 * thread, inflates a known stream and compares the result; when either fails
 * it returns undefined and callers use the stream (the old path, kept).
 *
 * Semantics are those of the stream as used before (zip-reader.ts): output is
 * produced as input arrives; the end of the deflate stream is reached when
 * zlib stops taking input with output space left (bytes after it are not
 * consumed: `write` returns how many were); `finish` with no more input fails
 * with zlib's "unexpected end of file" (code `Z_BUF_ERROR`) unless the stream
 * ended; a corrupt stream fails with zlib's own message and code, exactly the
 * error object the stream would have emitted.
 */
import { constants as zlibConstants, createInflateRaw, type InflateRaw } from 'node:zlib';

/** Output buffer size (the stream used 1 MiB chunks too). */
const OUT_CHUNK = 1024 * 1024;
const Z_NO_FLUSH = zlibConstants.Z_NO_FLUSH;
const Z_FINISH = zlibConstants.Z_FINISH;

/**
 * Receives one piece of output: a view of the thread's reused output buffer,
 * valid only during the call (hash it, do not keep it). A throw stops the
 * inflater and propagates out of `write`/`finish`.
 */
export type InflateSink = (out: Buffer) => void;

export interface RawInflater {
  /**
   * Inflates `input`, handing every piece of output to `sink` before it
   * returns. Returns how many bytes of `input` were consumed: all of them,
   * unless the deflate stream ended inside `input` ({@link ended}).
   */
  write(input: Uint8Array, sink: InflateSink): number;
  /** No more input: flushes; throws zlib's error when the stream is incomplete. */
  finish(sink: InflateSink): void;
  /** The deflate stream's end was reached. */
  readonly ended: boolean;
  /** Frees zlib's state (idempotent). */
  close(): void;
}

/** The parts of Node's zlib binding handle used here (lib/zlib.js). */
interface ZlibHandle {
  writeSync(
    flush: number,
    input: Uint8Array,
    inOff: number,
    inLen: number,
    out: Uint8Array,
    outOff: number,
    outLen: number,
  ): void;
  onerror: (message: string, errno: number, code: string) => void;
}

interface ZlibInternals {
  _handle?: ZlibHandle | null;
  _writeState?: Uint32Array;
}

/** One output buffer per thread: every sink consumes its piece before `write` returns. */
let outBuffer: Buffer | undefined;
/** Per thread: undefined = not checked yet. */
let usable: boolean | undefined;

class HandleInflater implements RawInflater {
  private handle: ZlibHandle | undefined;
  private error: Error | undefined;
  private done = false;

  constructor(
    private readonly stream: InflateRaw,
    handle: ZlibHandle,
    private readonly state: Uint32Array,
    /** The self-test's small buffer (exercises the "output full" loop cheaply); else the thread's. */
    private readonly ownOut?: Buffer,
  ) {
    this.handle = handle;
    // Errors are reported here instead of destroying the stream (which would
    // emit them later, asynchronously): the same message, errno and code.
    handle.onerror = (message, errno, code) => {
      const err = new Error(message) as Error & { errno: number; code: string };
      err.errno = errno;
      err.code = code;
      this.error ??= err;
    };
  }

  get ended(): boolean {
    return this.done;
  }

  write(input: Uint8Array, sink: InflateSink): number {
    if (this.done || input.length === 0) return 0;
    return this.run(Z_NO_FLUSH, input, sink);
  }

  finish(sink: InflateSink): void {
    if (this.done) return;
    this.run(Z_FINISH, new Uint8Array(0), sink);
    // Z_FINISH without an error: the stream is complete.
    this.done = true;
  }

  private run(flush: number, input: Uint8Array, sink: InflateSink): number {
    const handle = this.handle;
    if (!handle) throw new Error('inflater is closed');
    const out = this.ownOut ?? (outBuffer ??= Buffer.allocUnsafeSlow(OUT_CHUNK));
    let inOff = 0;
    let inLen = input.length;
    try {
      for (;;) {
        handle.writeSync(flush, input, inOff, inLen, out, 0, out.length);
        if (this.error) throw this.error;
        const availOut = this.state[0]!;
        const availIn = this.state[1]!;
        inOff += inLen - availIn;
        inLen = availIn;
        const have = out.length - availOut;
        if (have > 0) sink(out.subarray(0, have));
        if (availOut !== 0) {
          // zlib stopped with output space left: the input is used up, or
          // the deflate stream ended with input left over.
          if (availIn > 0) this.done = true;
          return inOff;
        }
      }
    } catch (err) {
      this.close();
      throw err;
    }
  }

  close(): void {
    if (!this.handle) return;
    this.handle = undefined;
    this.done = true;
    this.stream.close();
  }
}

function open(ownOut?: Buffer): RawInflater | undefined {
  const stream = createInflateRaw();
  const internals = stream as unknown as ZlibInternals;
  const handle = internals._handle;
  const state = internals._writeState;
  if (!handle || typeof handle.writeSync !== 'function' || !(state instanceof Uint32Array) || state.length < 2) {
    stream.close();
    return undefined;
  }
  return new HandleInflater(stream, handle, state, ownOut);
}

// The self-test's input: SELF_TEST_LINE × 200, raw-deflated. A constant
// because compressing it at every start cost ~1.5 ms of zlib's deflate set-up
// (bench/PROFILE.md "Stop 23"). Made with
// `zlib.deflateRawSync(Buffer.from(SELF_TEST_LINE.repeat(200)), { level: 9 })`;
// any valid raw deflate stream of that text serves.
const SELF_TEST_LINE = 'provkit raw inflate self-test\n';
const SELF_TEST_DEFLATED = '7cnBDYAgEACwv1OwgEPxgIRIlMAF13cFB2i/HfPZV4s085vaXXuOklbp9Yyy4hjWWmuttdZaa6211lprrf2xHw==';

/** Inflates a known stream (with a stream end and trailing bytes) and compares, once per thread. */
function selfTest(): boolean {
  const data = Buffer.from(SELF_TEST_LINE.repeat(200));
  const compressed = Buffer.concat([Buffer.from(SELF_TEST_DEFLATED, 'base64'), Buffer.from('trailing')]);
  const inflater = open(Buffer.alloc(100));
  if (!inflater) return false;
  try {
    const pieces: Buffer[] = [];
    const sink: InflateSink = (o) => pieces.push(Buffer.from(o));
    let used = 0;
    // Pieces of 7 bytes: the stream ends inside a write, and output spans many.
    for (let at = 0; at < compressed.length && !inflater.ended; at += 7)
      used += inflater.write(compressed.subarray(at, at + 7), sink);
    inflater.finish(sink);
    return inflater.ended && used === compressed.length - 'trailing'.length && Buffer.concat(pieces).equals(data);
  } catch {
    return false;
  } finally {
    inflater.close();
  }
}

/**
 * A raw inflater working in this thread, or undefined where Node's zlib
 * binding does not have the expected shape (use the stream then).
 * `PROVKIT_INFLATE=stream` forces undefined (to test and compare the
 * fallback).
 */
export function createRawInflater(): RawInflater | undefined {
  return rawInflaterAvailable() ? open() : undefined;
}

/** Whether {@link createRawInflater} gives an inflater (now). */
export function rawInflaterAvailable(): boolean {
  if (process.env['PROVKIT_INFLATE'] === 'stream') return false;
  usable ??= selfTest();
  return usable;
}
