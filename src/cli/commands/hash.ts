/** `provkit hash [-json] [-concurrency=N] PATH...`: zh:/h1: of packages, zips or directories. */
import { hashPaths } from '../../hashing/index.js';
import { anyHashFailed, renderHashHuman, renderHashJSON } from '../../ui/hash.js';
import { parseFlags } from '../flags.js';
import type { CliIO, GlobalOptions } from '../io.js';
import { jsonUIsFor } from '../render.js';
import { withResources } from '../resources.js';
import { ErrorCode } from '../../errors.js';
import { resolve } from 'node:path';

export const HASH_HELP = `Usage: provkit hash [options] PATH...

  Prints the hashes of provider packages. For a zip: the lock-file h1: (the
  package as extracted) on line 1 and the zh: (SHA-256 of the zip) on line 2.
  For an unpacked package directory: its h1:. With several paths, one block
  per path headed by the path.

Options:
  -json            Machine-readable output (JSON lines; see docs/json-ui.md): a
                   package_hash message per path with path, h1, zh, h1_zip, warnings.
  -concurrency=N   Packages hashed at once (default: the cores, within a
                   container's CPU limit).
`;

export async function hashCommand(args: readonly string[], io: CliIO, globals: GlobalOptions): Promise<number> {
  const flags = parseFlags(args, { json: 'bool', concurrency: 'int' });
  const json = flags.values.json === true || io.output?.json === true;
  // -json: the message stream of docs/json-ui.md, whatever the working directory.
  const uis = jsonUIsFor(io, json);
  if (flags.positionals.length === 0) {
    for (const ui of uis)
      ui.diagnostic({
        severity: 'error',
        summary: 'Missing argument',
        detail: 'provkit hash needs at least one PATH.',
        code: ErrorCode.USAGE,
      });
    if (!json) io.stderr.write(`Error: provkit hash needs at least one PATH\n\n${HASH_HELP}`);
    return 1;
  }
  const concurrency = flags.values.concurrency;
  return withResources(io, globals, async (r) => {
    const results = await hashPaths(
      r.pool(concurrency === undefined ? {} : { concurrency }),
      flags.positionals.map((p) => (globals.cwd === io.cwd ? p : resolve(globals.cwd, p))),
    );
    // Paths are reported as the user typed them.
    const shown = results.map((x, i) => ({ ...x, path: flags.positionals[i]! }));
    renderHashJSON(shown, uis);
    if (!json) renderHashHuman(shown, io.stdout, io.stderr);
    return anyHashFailed(results) ? 1 : 0;
  });
}
