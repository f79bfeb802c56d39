/**
 * Atomic file replacement: write a temp file in the target's directory
 * (opened `wx`, so two writers never share one), fsync, chmod, rename over the
 * target. Readers see the old bytes or the new bytes, never a mix; on any
 * failure the temp file is removed and the target is untouched.
 */
import { chmod, open, rename, rm } from 'node:fs/promises';

import { tempPathBeside } from './temp-name.js';

/** Writes `bytes` to `path` atomically (temp file + rename), mode 0644 unless `mode` says otherwise. */
export async function writeFileAtomic(path: string, bytes: Uint8Array, mode = 0o644): Promise<void> {
  const tmp = tempPathBeside(path);
  let renamed = false;
  try {
    const fh = await open(tmp, 'wx', mode);
    try {
      await fh.writeFile(bytes);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await chmod(tmp, mode);
    await rename(tmp, path);
    renamed = true;
  } finally {
    if (!renamed) await rm(tmp, { force: true });
  }
}
