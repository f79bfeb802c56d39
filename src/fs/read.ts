/**
 * Reading a file provkit was pointed at (configuration files, lock files, the
 * CLI configuration, policy, test files, `modules.json`, a mirror's JSON
 * documents, cache entries): the one helper, so that a planted file cannot
 * stop a run (docs/reliability.md, "Files provkit reads").
 *
 * - Only a regular file is read (symlinks followed). A FIFO, a device
 *   (`/dev/zero`, `/dev/tty`), a socket or a directory is refused with a
 *   {@link ProvkitError} naming the file and what it is. The file is opened
 *   `O_NONBLOCK`, so opening a FIFO returns at once instead of waiting for
 *   a writer (which would hold a thread of libuv's pool, and with it every
 *   later file operation of the process, its exit on a signal included), and
 *   the type is checked on the opened descriptor (`fstat`), not on the name.
 * - At most `maxBytes` are read (default {@link MAX_CONFIG_FILE_BYTES}); a
 *   larger file is refused before it is read, and one that grows while it is
 *   read is refused at the limit.
 * - Reading is a loop of bounded reads, each a separate turn of the event
 *   loop, that stops when `signal` aborts: an interrupt acts between two reads.
 *
 * Errors other than these keep Node's error (its `code`, `ENOENT` for a file
 * that does not exist), so callers can tell "absent" from "unreadable".
 */
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { open } from 'node:fs/promises';

import { ErrorCode, ProvkitError } from '../errors.js';

/** The largest configuration file provkit reads: far above any real one (generated `.tf.json` files run to a few MB). */
export const MAX_CONFIG_FILE_BYTES = 64 * 1024 * 1024;

/** Options of {@link readRegularFile}. */
export interface ReadFileOptions {
  /** Refuse a file larger than this (default {@link MAX_CONFIG_FILE_BYTES}). */
  readonly maxBytes?: number;
  /** Stop reading (an `ABORTED` error) when it aborts. */
  readonly signal?: AbortSignal;
}

const CHUNK = 1024 * 1024;
const FLAGS = constants.O_RDONLY | constants.O_NONBLOCK;

/** What a non-regular file is, in words. */
function kindOf(st: {
  isDirectory(): boolean;
  isFIFO(): boolean;
  isCharacterDevice(): boolean;
  isBlockDevice(): boolean;
  isSocket(): boolean;
}): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}

function notRegular(path: string, kind: string): ProvkitError {
  return new ProvkitError(
    ErrorCode.NOT_REGULAR_FILE,
    `${path} is ${kind}, not a regular file; provkit reads only regular files`,
    {
      file: path,
      found: kind,
    },
  );
}

function tooLarge(path: string, maxBytes: number): ProvkitError {
  return new ProvkitError(
    ErrorCode.FILE_TOO_LARGE,
    `${path} is larger than ${maxBytes} bytes, more than provkit reads`,
    {
      file: path,
      expected: String(maxBytes),
    },
  );
}

/**
 * Why {@link readRegularFile} refused a file, as a clause for a diagnostic
 * that names the file itself (`it is a FIFO (named pipe), not a regular
 * file`), or undefined for any other error.
 */
export function readRefusal(err: unknown): string | undefined {
  if (!(err instanceof ProvkitError)) return undefined;
  if (err.code === ErrorCode.NOT_REGULAR_FILE) return `it is ${err.found ?? 'not a regular file'}, not a regular file`;
  if (err.code === ErrorCode.FILE_TOO_LARGE) return `it is larger than ${err.expected ?? MAX_CONFIG_FILE_BYTES} bytes`;
  return undefined;
}

/**
 * The bytes of the regular file at `path` (see the module comment).
 *
 * @throws {ProvkitError} `NOT_REGULAR_FILE`, `FILE_TOO_LARGE`, `ABORTED`; Node's system errors (`ENOENT`, `EACCES`…).
 */
export async function readRegularFile(path: string, options: ReadFileOptions = {}): Promise<Buffer> {
  const maxBytes = options.maxBytes ?? MAX_CONFIG_FILE_BYTES;
  const fh = await open(path, FLAGS);
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw notRegular(path, kindOf(st));
    if (st.size > maxBytes) throw tooLarge(path, maxBytes);
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      if (options.signal?.aborted)
        throw new ProvkitError(ErrorCode.ABORTED, `reading ${path} was interrupted`, {
          file: path,
          cause: options.signal.reason,
        });
      const want = Math.min(CHUNK, maxBytes + 1 - total);
      // eslint-disable-next-line no-await-in-loop -- one bounded read after another
      const { bytesRead, buffer } = await fh.read(Buffer.allocUnsafe(want), 0, want, null);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total > maxBytes) throw tooLarge(path, maxBytes);
      chunks.push(buffer.subarray(0, bytesRead));
    }
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
  } finally {
    await fh.close();
  }
}

/**
 * {@link readRegularFile} for the few reads that must be synchronous (the
 * flavor read from the lock file before the command starts, a diagnostic's
 * source snippet). Same checks; no signal (the file is regular and bounded).
 */
export function readRegularFileSync(path: string, options: Omit<ReadFileOptions, 'signal'> = {}): Buffer {
  const maxBytes = options.maxBytes ?? MAX_CONFIG_FILE_BYTES;
  const fd = openSync(path, FLAGS);
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw notRegular(path, kindOf(st));
    if (st.size > maxBytes) throw tooLarge(path, maxBytes);
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const want = Math.min(CHUNK, maxBytes + 1 - total);
      const buf = Buffer.allocUnsafe(want);
      const n = readSync(fd, buf, 0, want, null);
      if (n === 0) break;
      total += n;
      if (total > maxBytes) throw tooLarge(path, maxBytes);
      chunks.push(buf.subarray(0, n));
    }
    return Buffer.concat(chunks, total);
  } finally {
    closeSync(fd);
  }
}
