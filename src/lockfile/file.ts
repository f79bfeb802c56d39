/**
 * The only file-system code of the lock file: load and atomic save. A run
 * reads the file once ({@link loadLockFile} gives the bytes beside the
 * locks, for the write decision of lockfile/write-decision.ts) and writes it
 * once (the bytes that decision made: {@link saveLockBytes}).
 *
 * Save is atomic (fs/atomic.ts): a failed run never leaves a half-written
 * lock file; the old file is either untouched or fully replaced (docs/reference.md §3.2
 * item 38, `replacefile.AtomicWriteFile`).
 */
import type { Flavor } from '../addresses/index.js';
import { ErrorCode, ProvkitError, systemErrorCode, errorText } from '../errors.js';
import { writeFileAtomic } from '../fs/atomic.js';
import { readRefusal, readRegularFile } from '../fs/read.js';
import { type LockParseResult, parseLockFile } from './parse.js';
import { Locks } from './model.js';
import { serializeLocks } from './serialize.js';

/** `.terraform.lock.hcl`: the lock file's name in a root module's directory. */
export const LOCK_FILE_NAME = '.terraform.lock.hcl';

/** A lock file as loaded: its locks and diagnostics, and the bytes they were parsed from. */
export interface LoadedLockFile extends LockParseResult {
  /** The file's bytes; undefined when there is no file (or it could not be read: then there is an error diagnostic). */
  readonly bytes: Buffer | undefined;
}

/**
 * Loads a lock file; a missing file is an empty set of locks with no
 * diagnostics (docs/reference.md §3.1 item 30). Diagnostics name the file `displayName` (default
 * `path`); the commands pass {@link LOCK_FILE_NAME}, as terraform names it
 * relative to the working directory (`on .terraform.lock.hcl line 4`).
 */
export async function loadLockFile(path: string, flavor: Flavor, displayName: string = path): Promise<LoadedLockFile> {
  let bytes: Buffer;
  try {
    // Regular files only, bounded (fs/read.ts).
    bytes = await readRegularFile(path);
  } catch (err) {
    if (systemErrorCode(err) === 'ENOENT') return { locks: new Locks(), diagnostics: [], bytes: undefined };
    const why = readRefusal(err);
    return {
      locks: new Locks(),
      bytes: undefined,
      diagnostics: [
        {
          severity: 'error',
          summary: 'Failed to read file',
          detail: `The configuration file ${JSON.stringify(path)} could not be read${why === undefined ? '' : `: ${why}`}.`,
          range: { filename: displayName },
          code: ErrorCode.INVALID_LOCK_FILE,
        },
      ],
    };
  }
  return { ...parseLockFile(bytes, displayName, flavor), bytes };
}

/**
 * Saves locks atomically; failures name the file, as the reference's message
 * does. Once `signal` has aborted, the file is left as it was and the call
 * rejects with `ABORTED`, as {@link saveLockBytes}.
 */
export function saveLockFile(path: string, locks: Locks, flavor: Flavor, signal?: AbortSignal): Promise<void> {
  return saveLockBytes(path, serializeLocks(locks, flavor), signal);
}

/**
 * Saves a lock file's bytes (serialized by the caller: the write decision's
 * `bytes`) atomically; failures as {@link saveLockFile}'s. Once `signal` has
 * aborted, the file is left as it was (the new bytes are not renamed into
 * place) and the call rejects with `ABORTED` (fs/atomic.ts).
 */
export async function saveLockBytes(path: string, bytes: Buffer, signal?: AbortSignal): Promise<void> {
  try {
    await writeFileAtomic(path, bytes, undefined, signal);
  } catch (err) {
    if (err instanceof ProvkitError && err.code === ErrorCode.ABORTED) throw err;
    throw new ProvkitError(
      ErrorCode.IO,
      `Error while writing new dependency lock information to ${path}: ${errorText(err)}.`,
      {
        summary: 'Failed to update dependency lock file',
        file: path,
        cause: err,
      },
    );
  }
}
