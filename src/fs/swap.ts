/**
 * The one directory swap: a complete directory (or symlink) built beside its
 * target is put in place by `rename`. An absent target or an empty directory
 * is simply replaced; any other existing target is refused or, when
 * replacing, moved aside (a {@link tempPathBeside} name, tag `old`), the new
 * one renamed in, and the old one removed.
 *
 * Contract: at every instant the target is the old tree or the new one,
 * except for the moment between the two renames of a replacement; when the
 * second rename fails the old tree is renamed back, so a failed swap leaves
 * the old tree (and `tempPath` untouched, for the caller to remove). A
 * process killed between the two renames leaves the old tree beside the
 * target under its `old` name, where the next run's sweep
 * ({@link removeTempsBeside} with tag `old`, under the target's mutex) finds it.
 */
import { mkdir, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';

import { ErrorCode, ProvkitError, systemErrorCode, errorText } from '../errors.js';
import { tempPathBeside } from './temp-name.js';

/** The file-system calls a swap makes (injectable, so that tests can fail one). */
export interface SwapFs {
  readonly rename: (from: string, to: string) => Promise<void>;
  readonly rm: (path: string, options: { recursive: true; force: true }) => Promise<void>;
  readonly mkdir: (path: string, options: { recursive: true; mode: number }) => Promise<string | undefined>;
}

const nodeFs: SwapFs = { rename, rm, mkdir };

export interface SwapOptions {
  /** An existing, non-empty target: refuse it (`fail`) or replace it (`replace`). */
  readonly existing: 'fail' | 'replace';
  /** How error messages start, followed by the target: e.g. `cannot install the package at`. */
  readonly what: string;
  /** For tests: the file-system calls to use. */
  readonly fs?: SwapFs;
}

const messageOf = (err: unknown): string => errorText(err);

/**
 * Renames the complete `tempPath` to `target` (see the module comment);
 * `target`'s parent directories are created (0755).
 *
 * @throws ProvkitError IO naming the target (`options.what` TARGET: why)
 */
export async function swapDirInto(tempPath: string, target: string, options: SwapOptions): Promise<void> {
  const fs = options.fs ?? nodeFs;
  const fail = (why: string, cause: unknown): ProvkitError =>
    new ProvkitError(ErrorCode.IO, `${options.what} ${target}: ${why}`, { file: target, cause });
  await fs.mkdir(dirname(target), { recursive: true, mode: 0o755 });
  try {
    await fs.rename(tempPath, target);
    return;
  } catch (err) {
    const code = systemErrorCode(err);
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST' && code !== 'ENOTDIR' && code !== 'EISDIR')
      throw fail(messageOf(err), err);
    if (options.existing === 'fail') throw fail('something is already there', err);
  }
  const aside = tempPathBeside(target, { tag: 'old' });
  await fs.rename(target, aside);
  try {
    await fs.rename(tempPath, target);
  } catch (err) {
    await fs.rename(aside, target).catch(() => undefined);
    throw fail(messageOf(err), err);
  }
  await fs.rm(aside, { recursive: true, force: true });
}
