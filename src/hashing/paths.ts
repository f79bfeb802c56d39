/**
 * Hashing of paths given by a user: a regular file is a packed package (zip),
 * a directory an unpacked one. All paths are hashed concurrently through the
 * pool (which bounds the parallelism); results keep the input order.
 */
import { stat } from 'node:fs/promises';

import { ErrorCode, ProvkitError, systemErrorCode, systemErrorText } from '../errors.js';
import type { Hash } from './hash.js';
import type { HashPool } from './pool.js';
import type { ZipPackageHashes } from './zip-package.js';

/**
 * The hashes of one path given by a user: a zip (`zh:` and both `h1:` forms), a directory (its `h1:`), or the error
 * that stopped it (not found, not a file or directory, an invalid archive).
 */
export type PathHashResult =
  | { readonly path: string; readonly kind: 'zip'; readonly zip: ZipPackageHashes }
  | { readonly path: string; readonly kind: 'dir'; readonly h1: Hash }
  | { readonly path: string; readonly kind: 'error'; readonly error: ProvkitError };

/**
 * Hashes the file or directory at `path` with `pool` (see {@link PathHashResult}). A {@link ProvkitError} is
 * returned as an `error` result, never thrown; anything else (a bug) is thrown.
 */
export async function hashPath(pool: HashPool, path: string): Promise<PathHashResult> {
  try {
    let st;
    try {
      st = await stat(path);
    } catch (err) {
      const sys = systemErrorCode(err);
      throw new ProvkitError(
        sys === 'ENOENT' ? ErrorCode.NOT_FOUND : ErrorCode.IO,
        `${path}: ${systemErrorText(err)}`,
        {
          file: path,
          cause: err,
        },
      );
    }
    if (st.isDirectory()) return { path, kind: 'dir', h1: await pool.hashDir(path) };
    if (!st.isFile()) throw new ProvkitError(ErrorCode.IO, `${path}: not a regular file or directory`, { file: path });
    return { path, kind: 'zip', zip: await pool.hashZip(path) };
  } catch (err) {
    if (err instanceof ProvkitError) return { path, kind: 'error', error: err };
    throw err;
  }
}

/** {@link hashPath} of every path, concurrently (the pool bounds the work); results in the order of `paths`. */
export function hashPaths(pool: HashPool, paths: readonly string[]): Promise<PathHashResult[]> {
  return Promise.all(paths.map((p) => hashPath(pool, p)));
}
