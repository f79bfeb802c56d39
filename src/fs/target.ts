/**
 * Checks on a directory a command is about to write into, so that the user
 * reads which path is wrong before any work is done (rather than a system
 * error about some file inside it later).
 */
import { mkdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';

import { ErrorCode, fileError, ProvkitError, systemErrorCode } from '../errors.js';

/**
 * Resolves when `dir` is a directory (symlinks followed) or does not exist
 * yet but could be created: its nearest existing ancestor is a directory.
 * Permissions are not checked here (root ignores them; the write reports them).
 *
 * @param what how the message starts, e.g. `cannot mirror into`.
 * @throws {ProvkitError} NOT_A_DIRECTORY naming `dir` and the file in the way; IO
 */
export async function checkDirectoryTarget(dir: string, what: string): Promise<void> {
  let path = dir;
  for (;;) {
    let st;
    try {
      // eslint-disable-next-line no-await-in-loop -- one ancestor after another, nearest first
      st = await stat(path);
    } catch (err) {
      const code = systemErrorCode(err);
      const parent = dirname(path);
      if ((code === 'ENOENT' || code === 'ENOTDIR') && parent !== path) {
        path = parent;
        continue;
      }
      throw fileError(err, what, dir);
    }
    if (st.isDirectory()) return;
    throw new ProvkitError(
      ErrorCode.NOT_A_DIRECTORY,
      path === dir ? `${what} ${dir}: it exists and is not a directory` : `${what} ${dir}: ${path} is not a directory`,
      { file: path },
    );
  }
}

/**
 * Resolves when `dir` is an existing directory (symlinks followed): a
 * directory a command reads from (a filesystem mirror), checked once before
 * any work so that a wrong path is one message, not one per provider.
 *
 * @param what what the directory is, e.g. `the -fs-mirror directory`.
 * @throws {ProvkitError} NOT_FOUND (`WHAT DIR does not exist`), NOT_A_DIRECTORY, IO
 */
export async function checkDirectorySource(dir: string, what: string): Promise<void> {
  let st;
  try {
    st = await stat(dir);
  } catch (err) {
    if (systemErrorCode(err) === 'ENOENT' || systemErrorCode(err) === 'ENOTDIR')
      throw new ProvkitError(ErrorCode.NOT_FOUND, `${what} ${dir} does not exist`, { file: dir, cause: err });
    throw fileError(err, `cannot read ${what}`, dir);
  }
  if (!st.isDirectory())
    throw new ProvkitError(ErrorCode.NOT_A_DIRECTORY, `${what} ${dir} is not a directory`, { file: dir });
}

/**
 * `mkdir -p` that reports the real reason: Node's recursive `mkdir` says
 * ENOENT where the file system is read-only (or the parent is a file), so
 * each missing directory is made on its own, nearest first.
 *
 * @throws {ProvkitError} naming `dir` (`what`: how the message starts), NOT_A_DIRECTORY, IO
 */
export async function makeDirectory(dir: string, what: string): Promise<void> {
  const missing: string[] = [];
  for (let path = dir; ; path = dirname(path)) {
    // eslint-disable-next-line no-await-in-loop -- one ancestor after another, nearest first
    const st = await stat(path).catch((err: unknown) => {
      const code = systemErrorCode(err);
      // ENOTDIR: a file above; the walk up finds and names it.
      if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
      throw fileError(err, what, dir);
    });
    if (st?.isDirectory()) break;
    if (st !== undefined) {
      throw new ProvkitError(
        ErrorCode.NOT_A_DIRECTORY,
        path === dir
          ? `${what} ${dir}: it exists and is not a directory`
          : `${what} ${dir}: ${path} is not a directory`,
        { file: path },
      );
    }
    if (dirname(path) === path) break;
    missing.unshift(path);
  }
  for (const path of missing) {
    try {
      // eslint-disable-next-line no-await-in-loop -- parents before children
      await mkdir(path, 0o755);
    } catch (err) {
      if (systemErrorCode(err) !== 'EEXIST') throw fileError(err, what, dir);
    }
  }
}
