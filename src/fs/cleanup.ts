/**
 * Temporary files and directories that must not outlive the process.
 *
 * Every command removes its temporary files in `finally` blocks. Those do not
 * run when the process ends without unwinding: `process.exit` (a second
 * SIGINT, the entry point's signal handler), an uncaught exception, or the
 * SIGPIPE the entry point raises when the reader of stdout went away. Paths
 * registered here are removed then too, synchronously, from the process
 * `exit` event (and by {@link removeRegisteredNow}, which the entry point
 * calls before it raises a signal, which skips `exit`).
 *
 * SIGKILL skips everything: what must be found again after one lives in a
 * place a later run sweeps (a mirror target's staging directories, under the
 * target mutex).
 */
import { rmSync } from 'node:fs';

const registered = new Set<string>();
let hooked = false;

/**
 * Registers `path` (file or directory) for removal at exit; returns the
 * function that unregisters it (call it once the path was removed or
 * committed: a renamed-into-place staging directory must not be deleted).
 */
export function removeOnExit(path: string): () => void {
  if (!hooked) {
    hooked = true;
    process.on('exit', removeRegisteredNow);
  }
  registered.add(path);
  return () => {
    registered.delete(path);
  };
}

/** Removes every registered path now (best effort: the process is ending). */
export function removeRegisteredNow(): void {
  for (const path of registered) {
    try {
      rmSync(path, { recursive: true, force: true });
    } catch {
      // Nothing more can be done on the way out.
    }
  }
  registered.clear();
}
