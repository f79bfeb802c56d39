/**
 * Opening what `serve` sends: only regular files that resolve inside the
 * served directory (pinned by test/e2e/serve-hardening.test.ts).
 *
 * A mirror directory may hold symlinks (the filesystem mirror layout allows a
 * packed archive or an unpacked package to be one, see
 * `sources/fs-mirror.ts`), and `tar -xf` of a hostile bundle can plant links
 * to `/etc/passwd` where `index.json` is expected. So every file is opened as:
 *
 * 1. `realpath` of the path, which must lie inside the served directory's
 *    own realpath (taken once, at start);
 * 2. `open(real, O_RDONLY | O_NOFOLLOW | O_NONBLOCK)`: the last component may
 *    not have turned into a link since, and a FIFO does not block the open;
 * 3. `fstat` of the descriptor: a regular file, or it is refused;
 * 4. what was opened is checked again, after the open, so a directory
 *    component swapped for a link between 1 and 2 is caught, not raced: on
 *    Linux the descriptor's own path (`/proc/self/fd/N`) must lie inside;
 *    elsewhere the realpath of the path must still lie inside and name the
 *    same file (device and inode) as the descriptor.
 *
 * Hard links are not links to this check: a hard link is a file of the
 * directory (and `tar` creates hard links only to members of the same
 * archive).
 */
import { constants, type BigIntStats } from 'node:fs';
import { open, readlink, realpath, stat, type FileHandle } from 'node:fs/promises';
import { sep } from 'node:path';

/** Why a file is not served. */
export type Refusal = 'missing' | 'outside' | 'not-a-file';

export type Opened =
  | { readonly ok: true; readonly handle: FileHandle; readonly st: BigIntStats; readonly real: Buffer }
  | { readonly ok: false; readonly why: Refusal; readonly real?: Buffer };

const FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);
const SEP = Buffer.from(sep);

/** True when `path` is `root` or below it (both real paths, as bytes). */
export function isInside(root: Buffer, path: Buffer): boolean {
  if (path.equals(root)) return true;
  const prefix = root.subarray(-SEP.length).equals(SEP) ? root : Buffer.concat([root, SEP]);
  return path.length > prefix.length && path.subarray(0, prefix.length).equals(prefix);
}

/** The real path of `path` (bytes), or undefined when it does not resolve. */
export async function realPathOf(path: string | Buffer): Promise<Buffer | undefined> {
  try {
    return await realpath(path, { encoding: 'buffer' });
  } catch {
    return undefined;
  }
}

/**
 * Opens `path` for reading when it is a regular file inside `root` (a real
 * path); the caller closes the handle.
 */
export async function openInside(root: Buffer, path: string | Buffer): Promise<Opened> {
  const real = await realPathOf(path);
  if (!real) return { ok: false, why: 'missing' };
  if (!isInside(root, real)) return { ok: false, why: 'outside', real };
  let handle: FileHandle;
  try {
    handle = await open(real, FLAGS);
  } catch {
    // ELOOP: the last component became a link after realpath; ENOENT: gone.
    return { ok: false, why: 'missing', real };
  }
  try {
    const st = await handle.stat({ bigint: true });
    if (!st.isFile()) {
      await handle.close();
      return { ok: false, why: 'not-a-file', real };
    }
    const opened = await openedPath(handle, real, st);
    if (!opened || !isInside(root, opened)) {
      await handle.close();
      return { ok: false, why: 'outside', real: opened ?? real };
    }
    return { ok: true, handle, st, real };
  } catch (err) {
    await handle.close().catch(() => undefined);
    throw err;
  }
}

/** Where the descriptor really is (see the module comment, step 4), or undefined when that cannot be established. */
async function openedPath(handle: FileHandle, real: Buffer, st: BigIntStats): Promise<Buffer | undefined> {
  try {
    const link = await readlink(`/proc/self/fd/${handle.fd}`, { encoding: 'buffer' });
    if (link.length > 0 && link[0] === 0x2f) return link;
  } catch {
    // No /proc (not Linux): the portable check below.
  }
  const again = await realPathOf(real);
  if (!again) return undefined;
  const now = await stat(again, { bigint: true }).catch(() => undefined);
  return now && now.dev === st.dev && now.ino === st.ino ? again : undefined;
}
