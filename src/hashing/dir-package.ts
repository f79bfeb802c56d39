/**
 * `h1:` of an unpacked provider package: Go's `dirhash.HashDir(dir, "", Hash1)`
 * after `filepath.EvalSymlinks(dir)` (docs/reference.md §2.3 item 25).
 *
 * Walk rules copied from `filepath.Walk`: entries are Lstat'ed, symlinked
 * directories are not descended into, every non-directory is a file (symlinks
 * included) and is read through the link. So a link to a file hashes the
 * target's bytes under the link's name; a link to a directory or a dangling
 * link is an error; empty directories, modes, owners and times do not count.
 *
 * Names are read as bytes (`readdir` with `encoding: 'buffer'`), never decoded.
 * Deviation: a FIFO, socket or device is refused instead of read (Go would
 * block on a FIFO forever).
 */
import { createReadStream } from 'node:fs';
import { lstat, readdir, realpath, stat } from 'node:fs/promises';

import { ErrorCode, ProvkitError, systemErrorCode, errorText } from '../errors.js';
import type { Hash } from './hash.js';
import { displayName, hash1 } from './h1.js';

const SEP = Buffer.from('/');

/**
 * Lists the files of a package directory as `/`-separated names (raw bytes).
 *
 * @throws ProvkitError NOT_A_DIRECTORY, NOT_FOUND, IO
 */
export async function listPackageFiles(root: string): Promise<Buffer[]> {
  const files: Buffer[] = [];
  const rootBuf = Buffer.from(root);
  const walk = async (rel: Buffer | null): Promise<void> => {
    const abs = rel ? Buffer.concat([rootBuf, SEP, rel]) : rootBuf;
    const names = await readdir(abs, { encoding: 'buffer' });
    // filepath.Walk visits names in lexical (byte) order; the order of the
    // list does not change the hash (Hash1 sorts) but keeps errors stable.
    names.sort((a, b) => Buffer.compare(a, b));
    for (const name of names) {
      const childRel = rel ? Buffer.concat([rel, SEP, name]) : name;
      // eslint-disable-next-line no-await-in-loop -- a walk in order, like filepath.Walk
      const st = await lstat(Buffer.concat([rootBuf, SEP, childRel]));
      if (st.isDirectory()) {
        // eslint-disable-next-line no-await-in-loop
        await walk(childRel);
      } else if (st.isFile() || st.isSymbolicLink()) {
        files.push(childRel);
      } else {
        throw new ProvkitError(ErrorCode.IO, `${root}: ${displayName(childRel)} is not a regular file or symlink`, {
          file: root,
          entry: displayName(childRel),
        });
      }
    }
  };
  await walk(null);
  return files;
}

/**
 * `h1:` of the package directory at `dir`.
 *
 * @throws ProvkitError NOT_A_DIRECTORY, NOT_FOUND, DIR_SYMLINK_TO_DIRECTORY,
 *   DIR_DANGLING_SYMLINK, HASH_NEWLINE_IN_NAME, IO
 */
export async function hashPackageDir(dir: string): Promise<Hash> {
  let root: string;
  try {
    root = await realpath(dir);
    if (!(await stat(root)).isDirectory()) {
      throw new ProvkitError(ErrorCode.NOT_A_DIRECTORY, `${dir} is not a directory`, { file: dir });
    }
  } catch (err) {
    if (err instanceof ProvkitError) throw err;
    throw ioError(dir, err);
  }
  let files: Buffer[];
  try {
    files = await listPackageFiles(root);
  } catch (err) {
    if (err instanceof ProvkitError) throw err;
    throw ioError(dir, err);
  }
  const rootBuf = Buffer.from(root);
  return hash1(files, async (name) => {
    const path = Buffer.concat([rootBuf, SEP, name]);
    const entry = displayName(name);
    try {
      const st = await stat(path);
      if (st.isDirectory()) {
        throw new ProvkitError(
          ErrorCode.DIR_SYMLINK_TO_DIRECTORY,
          `${dir}: read ${entry}: is a directory (a symlink to a directory)`,
          {
            file: dir,
            entry,
          },
        );
      }
    } catch (err) {
      if (err instanceof ProvkitError) throw err;
      if (systemErrorCode(err) === 'ENOENT') {
        throw new ProvkitError(
          ErrorCode.DIR_DANGLING_SYMLINK,
          `${dir}: open ${entry}: no such file or directory (a dangling symlink)`,
          {
            file: dir,
            entry,
            cause: err,
          },
        );
      }
      throw ioError(dir, err);
    }
    return createReadStream(path, { highWaterMark: 1024 * 1024 });
  });
}

function ioError(file: string, err: unknown): ProvkitError {
  const sys = systemErrorCode(err);
  const msg = errorText(err);
  if (sys === 'ENOENT')
    return new ProvkitError(ErrorCode.NOT_FOUND, `${file}: no such file or directory`, { file, cause: err });
  if (sys === 'ENOTDIR')
    return new ProvkitError(ErrorCode.NOT_A_DIRECTORY, `${file} is not a directory`, { file, cause: err });
  return new ProvkitError(ErrorCode.IO, `${file}: ${msg}`, { file, cause: err });
}
