/**
 * Atomic file replacement: write a temp file in the target's directory
 * (opened `wx`, so two writers never share one), fsync, chmod, rename over the
 * target. Readers see the old bytes or the new bytes, never a mix; on any
 * failure the temp file is removed and the target is untouched.
 */
import { chmod, open, rename, rm } from 'node:fs/promises';

import { ErrorCode, ProvkitError } from '../errors.js';
import { tempPathBeside } from './temp-name.js';

/**
 * Writes `bytes` to `path` atomically (temp file + rename), mode 0644 unless
 * `mode` says otherwise. When `signal` has aborted by the time the temp file
 * is complete, it is removed instead of renamed and the call rejects with
 * `ABORTED` (the signal's reason as cause): the target is untouched. The
 * rename is the commit: an abort after it changes nothing.
 */
export async function writeFileAtomic(
  path: string,
  bytes: Uint8Array,
  mode = 0o644,
  signal?: AbortSignal,
): Promise<void> {
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
    if (signal?.aborted === true)
      throw new ProvkitError(ErrorCode.ABORTED, `writing ${path} was interrupted`, { cause: signal.reason });
    await rename(tmp, path);
    renamed = true;
  } finally {
    if (!renamed) await rm(tmp, { force: true });
  }
}
