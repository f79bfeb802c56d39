/**
 * The directories of provkit's caches whose contents it trusts (the hash
 * store, remembered signature checks, a mirror's verification cache;
 * docs/hash-store.md, docs/file-modes.md): whoever can write them chooses
 * the hashes `lock` records, so nobody but their owner may.
 *
 * Created 0755 whatever the umask (the mode given to `mkdir` only loses bits
 * to a umask, so a umask of 000 cannot make them world-writable, as it did
 * when they were made with Node's default 0777), like the plugin cache's
 * directories (installer/cache.ts); their files are written 0644
 * (fs/atomic.ts). A directory of the chain that exists already, is ours and
 * is writable by group or others (made by an earlier provkit under umask
 * 000) loses those write bits.
 */
import { chmod, mkdir, stat } from 'node:fs/promises';
import { dirname, relative, resolve } from 'node:path';

/** The mode of a cache directory. */
export const CACHE_DIR_MODE = 0o755;

/**
 * `mkdir -p dir` with {@link CACHE_DIR_MODE}, then every directory from `base`
 * (inclusive) down to `dir` that this user owns is made not group- or
 * world-writable. `dir` must be `base` or inside it.
 *
 * @throws what `mkdir`, `stat` or `chmod` throw.
 */
export async function makeCacheDirectory(dir: string, base: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: CACHE_DIR_MODE });
  const uid = process.getuid?.();
  const top = resolve(base);
  const chain: string[] = [];
  for (let d = resolve(dir); ; d = dirname(d)) {
    chain.push(d);
    if (d === top || relative(top, d).startsWith('..') || dirname(d) === d) break;
  }
  for (const d of chain) {
    // eslint-disable-next-line no-await-in-loop -- a few directories, each checked once per run
    const st = await stat(d);
    // eslint-disable-next-line no-await-in-loop
    if ((st.mode & 0o022) !== 0 && (uid === undefined || st.uid === uid)) await chmod(d, st.mode & 0o7755);
  }
}
