/**
 * provkit's command line: global flags, then one subcommand. Each command
 * parses its flags, calls the library, renders, and returns the exit code
 * (0 success, 1 error).
 */
import { resolve } from 'node:path';

import { resolveFlavor } from '../addresses/index.js';
import { ProvkitError } from '../errors.js';
import { parseFlags } from './flags.js';
import type { CliIO, GlobalOptions } from './io.js';
import { VERSION } from './version.js';

export type { CliIO } from './io.js';

const HELP = `Usage: provkit [global options] <command> [options] [args]

Mirrors OpenTofu/Terraform provider packages and computes and verifies their
lock-file hashes (zh: and h1:), byte for byte like the reference tools.

Commands:
  lock       Write the providers' hashes for each platform into .terraform.lock.hcl
  mirror     Copy the providers into a mirror directory with its index files
  hash       Print the zh:/h1: hashes of provider packages (zips or directories)
  install    Install the providers into .terraform/providers and update the lock file (init)
  verify     Check the lock file against a mirror offline (for CI)
  bundle     Create or import an air-gap bundle (bundle create | bundle import)
  serve      Serve a mirror directory as a network mirror (HTTPS)
  version    Print the provkit version

Global options (before or after the command):
  -flavor=tofu|terraform   Default registry host, lock-file header and messages
                           (default: tofu, or $PROVKIT_FLAVOR)
  -chdir=DIR               Work in DIR
  -help                    Show this help
`;

type Command = (args: readonly string[], io: CliIO, globals: GlobalOptions) => Promise<number>;

/**
 * Commands are loaded when run: a run imports only its own command's modules
 * (openpgp, the HCL parser, the HTTP stack…), which keeps start-up short for
 * quick runs such as an incremental mirror or `version`.
 */
const COMMANDS: Readonly<Record<string, () => Promise<{ run: Command; help: string }>>> = {
  hash: async () => import('./commands/hash.js').then((m) => ({ run: m.hashCommand, help: m.HASH_HELP })),
  lock: async () => import('./commands/lock.js').then((m) => ({ run: m.lockCommand, help: m.LOCK_HELP })),
  install: async () => import('./commands/install.js').then((m) => ({ run: m.installCommand, help: m.INSTALL_HELP })),
  verify: async () => import('./commands/verify.js').then((m) => ({ run: m.verifyCommand, help: m.VERIFY_HELP })),
  mirror: async () => import('./commands/mirror.js').then((m) => ({ run: m.mirrorCommand, help: m.MIRROR_HELP })),
  bundle: async () => import('./commands/bundle.js').then((m) => ({ run: m.bundleCommand, help: m.BUNDLE_HELP })),
  serve: async () => import('./commands/serve.js').then((m) => ({ run: m.serveCommand, help: m.SERVE_HELP })),
};

export async function main(argv: readonly string[], io: CliIO): Promise<number> {
  try {
    // Global flags may appear before or after the subcommand (issue #2); the
    // subcommand's own flags pass through untouched.
    const global = parseFlags(argv, { flavor: 'string', chdir: 'string', help: 'bool', h: 'bool', version: 'bool' }, true);
    // The command is the first argument that is not a flag; command flags
    // given before it (`provkit -json hash x.zip`) are passed on to it.
    const at = global.positionals.findIndex((a) => !a.startsWith('-'));
    const name = at < 0 ? undefined : global.positionals[at];
    const rest = global.positionals.filter((_, i) => i !== at);
    if (global.bools.get('version') || name === 'version') {
      io.stdout.write(`provkit v${VERSION}\n`);
      return 0;
    }
    const load = name === undefined ? undefined : COMMANDS[name];
    if (global.bools.get('help') || global.bools.get('h') || name === undefined || name === 'help') {
      const topic = name === 'help' ? rest[0] : name;
      const loadTopic = topic === undefined ? undefined : COMMANDS[topic];
      io.stdout.write(loadTopic ? (await loadTopic()).help : HELP);
      return name === undefined && !global.bools.get('help') && !global.bools.get('h') ? 1 : 0;
    }
    if (!load) {
      io.stderr.write(`Error: unknown command ${JSON.stringify(name)}\n\n${HELP}`);
      return 1;
    }
    const command = await load();
    const flavor = resolveFlavor(global.strings.get('flavor'), io.env);
    const chdir = global.strings.get('chdir');
    const globals: GlobalOptions = { flavor, cwd: chdir === undefined ? io.cwd : resolve(io.cwd, chdir) };
    return await command.run(rest, io, globals);
  } catch (err) {
    if (err instanceof ProvkitError) {
      io.stderr.write(`Error: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}
