/** `provkit hash [-json] [-concurrency=N] PATH...`: zh:/h1: of packages, zips or directories. */
import { hashPaths } from '../../hashing/index.js';
import { anyHashFailed, renderHashHuman, renderHashJSON } from '../../ui/hash.js';
import { parseFlags } from '../flags.js';
import type { CliIO, GlobalOptions } from '../io.js';
import { withResources } from '../resources.js';
import { resolve } from 'node:path';

export const HASH_HELP = `Usage: provkit hash [options] PATH...

  Prints the hashes of provider packages. For a zip: the lock-file h1: (the
  package as extracted) on line 1 and the zh: (SHA-256 of the zip) on line 2.
  For an unpacked package directory: its h1:. With several paths, one block
  per path headed by the path.

Options:
  -json            One JSON object per path: path, h1, zh, h1_zip, warnings.
  -concurrency=N   Packages hashed at once (default: the number of cores).
`;

export async function hashCommand(args: readonly string[], io: CliIO, globals: GlobalOptions): Promise<number> {
  const flags = parseFlags(args, { json: 'bool', concurrency: 'int' });
  if (flags.positionals.length === 0) {
    io.stderr.write(`Error: provkit hash needs at least one PATH\n\n${HASH_HELP}`);
    return 1;
  }
  const concurrency = flags.ints.get('concurrency');
  return withResources(io, globals, async (r) => {
    const results = await hashPaths(
      r.pool(concurrency === undefined ? {} : { concurrency }),
      flags.positionals.map((p) => (globals.cwd === io.cwd ? p : resolve(globals.cwd, p))),
    );
    // Paths are reported as the user typed them.
    const shown = results.map((x, i) => ({ ...x, path: flags.positionals[i]! }));
    if (flags.bools.get('json')) renderHashJSON(shown, io.stdout);
    else renderHashHuman(shown, io.stdout, io.stderr);
    return anyHashFailed(results) ? 1 : 0;
  });
}
