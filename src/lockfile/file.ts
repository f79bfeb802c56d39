/**
 * The only file-system code of the lock file: load and atomic save.
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

export const LOCK_FILE_NAME = '.terraform.lock.hcl';

/**
 * Loads a lock file; a missing file is an empty set of locks with no
 * diagnostics (docs/reference.md §3.1 item 30). Diagnostics name the file `displayName` (default
 * `path`); the commands pass {@link LOCK_FILE_NAME}, as terraform names it
 * relative to the working directory (`on .terraform.lock.hcl line 4`).
 */
export async function loadLockFile(path: string, flavor: Flavor, displayName: string = path): Promise<LockParseResult> {
  let bytes: Buffer;
  try {
    // Regular files only, bounded (fs/read.ts).
    bytes = await readRegularFile(path);
  } catch (err) {
    if (systemErrorCode(err) === 'ENOENT') return { locks: new Locks(), diagnostics: [] };
    const why = readRefusal(err);
    const pos = { line: 0, column: 0, byte: 0 };
    return {
      locks: new Locks(),
      diagnostics: [
        {
          severity: 'error',
          summary: 'Failed to read file',
          detail: `The configuration file ${JSON.stringify(path)} could not be read${why === undefined ? '' : `: ${why}`}.`,
          range: { filename: displayName, start: pos, end: pos },
        },
      ],
    };
  }
  return parseLockFile(bytes, displayName, flavor);
}

/** Saves locks atomically; failures name the file, as the reference's message does. */
export async function saveLockFile(path: string, locks: Locks, flavor: Flavor): Promise<void> {
  try {
    await writeFileAtomic(path, serializeLocks(locks, flavor));
  } catch (err) {
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
