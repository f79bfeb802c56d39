/**
 * A directory tree as data, to check "byte-identical to before": every entry
 * under `root` by relative path (`/`-separated, sorted), files as
 * `MODE SHA256`, directories as `MODE dir`, symlinks as `-> TARGET`.
 * A missing root is `'absent'`. With `times`, each file also carries its
 * modification time (ns), so a file rewritten with the same bytes differs.
 */
import { createHash } from 'node:crypto';
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import { join } from 'node:path';

export type Tree = Record<string, string> | 'absent';

export async function treeSnapshot(root: string, options: { times?: boolean } = {}): Promise<Tree> {
  try {
    await lstat(root);
  } catch {
    return 'absent';
  }
  const out: Record<string, string> = {};
  const walk = async (abs: string, rel: string): Promise<void> => {
    const st = await lstat(abs, { bigint: true });
    const mode = (st.mode & 0o7777n).toString(8);
    if (st.isSymbolicLink()) {
      out[rel] = `-> ${await readlink(abs)}`;
    } else if (st.isDirectory()) {
      out[rel === '' ? '.' : rel] = `${mode} dir`;
      for (const name of (await readdir(abs)).sort()) {
        await walk(join(abs, name), rel === '' ? name : `${rel}/${name}`);
      }
    } else {
      const sha = createHash('sha256')
        .update(await readFile(abs))
        .digest('hex');
      out[rel] = options.times ? `${mode} ${sha} ${st.mtimeNs.toString()}` : `${mode} ${sha}`;
    }
  };
  await walk(root, '');
  return out;
}
