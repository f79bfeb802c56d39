/**
 * Provider package directories: the `.terraform/providers` target and the
 * global plugin cache share one layout, `BASE/HOST/NS/TYPE/VERSION/OS_ARCH`
 * (docs/reference.md §5.1 item 74). This module holds what both need:
 *
 * - {@link packageMutexPath}: where the directory mutex (src/fs/dir-mutex.ts)
 *   of a package lives, `BASE/HOST/NS/TYPE/VERSION/OS_ARCH.lock`, held while
 *   the package is installed (docs/reference.md §5.5 item 86, OpenTofu's
 *   `dir_modify.go`), so several `provkit install` processes can share one cache;
 * - {@link findExecutable}: the provider executable (docs/reference.md §5.1 item 75);
 * - {@link linkPackageDir}: install an unpacked package by linking to it
 *   (docs/reference.md §5.3 item 83: an absolute symlink, a copy when links are not possible);
 * - {@link TreeDirs}: the `HOST/NS/TYPE/VERSION` directories below a base,
 *   made one at a time and never through a symbolic link, and removed again
 *   when the run put nothing in them (docs/file-modes.md).
 */
import { cp, lstat, mkdir, readdir, realpath, rm, rmdir, stat, symlink } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';

import { pathComponent, type Platform, type ProviderAddress, type Version } from '../addresses/index.js';
import { ErrorCode, ProvkitError, systemErrorCode, errorText } from '../errors.js';
import { swapDirInto } from '../fs/swap.js';
import { tempPathBeside } from '../fs/temp-name.js';
import { compareBytewise } from '../go/index.js';
import { unpackedDirPath, versionDirPath } from '../layout/index.js';

/**
 * The directories between a base (`.terraform/providers`, the plugin cache,
 * an unpacked mirror) and its package directories, as one run makes them.
 *
 * {@link TreeDirs.make} creates `BASE/HOST/NS/TYPE/VERSION` one level at a
 * time. A level that exists must be a real directory: a symbolic link there
 * (pre-planted, or left by another tool) is refused with
 * `UNSAFE_INSTALL_PATH`, before anything is written, so nothing is ever
 * written outside the tree. Terraform 1.11.4 follows such a link and writes
 * the package through it (test/fixtures/install-safety/terraform-1.11.4.json).
 * The base itself may be a link: that is the user's choice of location. The
 * package directory (`OS_ARCH`) may be a link too: that is how a package is
 * installed from a cache (docs/reference.md §5.3 item 83); it is replaced, never written through.
 *
 * {@link TreeDirs.removeEmpty} removes, deepest first, the directories this
 * run created that are still empty (a failed install leaves none behind).
 * Directories that existed before are never removed. A concurrent run that
 * is about to use a directory this run just removed gets ENOENT once; `make`
 * retries that.
 */
export class TreeDirs {
  private readonly created = new Set<string>();

  /**
   * Makes `base` (recursively, links followed) and then each `/`-separated
   * level of `rel` below it (never through a link).
   *
   * @returns the directory `base/rel`.
   * @throws ProvkitError UNSAFE_INSTALL_PATH, IO
   */
  async make(base: string, rel: string): Promise<string> {
    for (let attempt = 0; ; attempt++) {
      try {
        // eslint-disable-next-line no-await-in-loop -- a retry after a concurrent removal
        return await this.makeOnce(base, rel);
      } catch (err) {
        if (systemErrorCode(err) !== 'ENOENT' || attempt >= 3) {
          if (err instanceof ProvkitError) throw err;
          throw new ProvkitError(ErrorCode.IO, `cannot create ${join(base, rel)}: ${errorText(err)}`, {
            file: join(base, rel),
            cause: err,
          });
        }
      }
    }
  }

  private async makeOnce(base: string, rel: string): Promise<string> {
    const absBase = resolve(base);
    const first = await mkdir(absBase, { recursive: true, mode: 0o755 });
    if (first !== undefined) {
      // Every level from the first one made down to the base is new.
      for (let d = absBase; d.length >= first.length; d = dirname(d)) this.created.add(d);
    }
    let dir = absBase;
    for (const part of rel.split('/').filter((x) => x !== '')) {
      dir = join(dir, part);
      try {
        // eslint-disable-next-line no-await-in-loop -- one level at a time, in order
        await mkdir(dir, { mode: 0o755 });
        this.created.add(dir);
        continue;
      } catch (err) {
        if (systemErrorCode(err) !== 'EEXIST') throw err;
      }
      // eslint-disable-next-line no-await-in-loop
      const st = await lstat(dir);
      if (st.isSymbolicLink()) {
        throw new ProvkitError(
          ErrorCode.UNSAFE_INSTALL_PATH,
          `${dir} is a symbolic link; provkit does not write through a link inside the provider directory ${absBase} (remove the link, or point the base directory itself elsewhere)`,
          { file: dir },
        );
      }
      if (!st.isDirectory())
        throw new ProvkitError(ErrorCode.UNSAFE_INSTALL_PATH, `${dir} is not a directory`, { file: dir });
    }
    return dir;
  }

  /** Removes the directories {@link make} created that are empty now, deepest first. */
  async removeEmpty(): Promise<void> {
    const dirs = [...this.created].sort((a, b) => b.length - a.length || (a < b ? 1 : -1));
    for (const d of dirs) {
      try {
        // eslint-disable-next-line no-await-in-loop -- children before their parents
        await rmdir(d);
        this.created.delete(d);
      } catch {
        // Not empty (a package, another run's files), or already gone: kept.
      }
    }
  }
}

/** `HOST/NS/TYPE/VERSION` of a package (the levels {@link TreeDirs.make} checks). */
export { versionDirPath };

/** `BASE/HOST/NS/TYPE/VERSION/OS_ARCH`. */
export function packageDir(base: string, provider: ProviderAddress, version: Version, platform: Platform): string {
  return join(base, unpackedDirPath(provider, version, platform));
}

/** The file of a package directory's mutex: `BASE/HOST/NS/TYPE/VERSION/OS_ARCH.lock` (docs/reference.md §5.5 item 86). */
export function packageMutexPath(
  base: string,
  provider: ProviderAddress,
  version: Version,
  platform: Platform,
): string {
  return join(base, versionDirPath(provider, version), pathComponent(`${platform.toString()}.lock`, 'lock file name'));
}

/**
 * The provider executable of the package at `dir` (docs/reference.md §5.1 item 75): the first entry
 * in byte order that is not a directory (symlinks count; the executable bit
 * is not checked) whose name is `terraform-provider-TYPE` followed by nothing,
 * `_` or `.`.
 *
 * @throws ProvkitError PROVIDER_BINARY_NOT_FOUND (the reference's text), IO
 */
export async function findExecutable(
  dir: string,
  provider: ProviderAddress,
  version?: Version,
  platform?: Platform,
): Promise<string> {
  const prefix = `terraform-provider-${provider.type}`;
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    throw new ProvkitError(ErrorCode.IO, `cannot read the package directory ${dir}: ${errorText(err)}`, {
      file: dir,
      cause: err,
    });
  }
  entries.sort((a, b) => compareBytewise(a.name, b.name));
  for (const e of entries) {
    if (e.isDirectory()) continue;
    if (!e.name.startsWith(prefix)) continue;
    const rest = e.name.slice(prefix.length);
    if (rest === '' || rest.startsWith('_') || rest.startsWith('.')) return join(dir, e.name);
  }
  throw new ProvkitError(
    ErrorCode.PROVIDER_BINARY_NOT_FOUND,
    `provider binary not found: could not find executable file starting with ${prefix}`,
    {
      file: dir,
      provider: provider.toString(),
      ...(version ? { version: version.toString() } : {}),
      ...(platform ? { platform: platform.toString() } : {}),
    },
  );
}

/** Whether two paths name the same file or directory (device and inode, as Go's `os.SameFile`). */
async function sameFile(a: string, b: string): Promise<boolean> {
  try {
    const [sa, sb] = await Promise.all([stat(a), stat(b)]);
    return sa.dev === sb.dev && sa.ino === sb.ino;
  } catch (err) {
    if (systemErrorCode(err) === 'ENOENT') return false;
    throw err;
  }
}

/**
 * Installs the unpacked package at `source` as `target` (docs/reference.md §5.3 item 83): refuses
 * to link a directory to itself, replaces whatever is at `target` with an
 * absolute symlink to `source` (atomically: the link is made beside the
 * target and renamed over it), or with a copy when symlinks cannot be made.
 *
 * @returns how it was installed.
 * @throws ProvkitError IO (including `cannot install existing provider directory … to itself`)
 */
export async function linkPackageDir(source: string, target: string): Promise<'symlink' | 'copy'> {
  const absSource = resolve(source);
  const absTarget = resolve(target);
  if (await sameFile(absSource, absTarget)) {
    throw new ProvkitError(ErrorCode.IO, `cannot install existing provider directory ${absTarget} to itself`, {
      file: absTarget,
    });
  }
  await mkdir(dirname(absTarget), { recursive: true, mode: 0o755 });
  const temp = tempPathBeside(absTarget, { tag: 'link' });
  try {
    try {
      await symlink(absSource, temp, 'dir');
    } catch (err) {
      const code = systemErrorCode(err);
      if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS') throw err;
      await mkdir(temp, { mode: 0o755 });
      await cp(absSource, temp, { recursive: true, dereference: false, preserveTimestamps: true });
      await swapDirInto(temp, absTarget, { existing: 'replace', what: 'cannot install the package at' });
      return 'copy';
    }
    await swapDirInto(temp, absTarget, { existing: 'replace', what: 'cannot install the package at' });
    return 'symlink';
  } catch (err) {
    await rm(temp, { recursive: true, force: true });
    if (err instanceof ProvkitError) throw err;
    throw new ProvkitError(ErrorCode.IO, `cannot link ${absTarget} to ${absSource}: ${errorText(err)}`, {
      file: absTarget,
      cause: err,
    });
  }
}

/**
 * What is at a package path: nothing, a directory (possibly through a
 * symlink, resolved), or something unusable (a file, a dangling link).
 */
export async function inspectPackageDir(
  dir: string,
): Promise<
  { readonly kind: 'absent' } | { readonly kind: 'dir'; readonly realPath: string } | { readonly kind: 'other' }
> {
  try {
    await lstat(dir);
  } catch (err) {
    if (systemErrorCode(err) === 'ENOENT') return { kind: 'absent' };
    throw err;
  }
  try {
    const real = await realpath(dir);
    return (await stat(real)).isDirectory() ? { kind: 'dir', realPath: real } : { kind: 'other' };
  } catch {
    return { kind: 'other' };
  }
}
