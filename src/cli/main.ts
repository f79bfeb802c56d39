/**
 * provkit's command line: global flags, then one subcommand. Each command
 * parses its flags, calls the library, renders, and returns the exit code
 * (0 success, 1 error).
 */
import { resolve } from 'node:path';

import { resolveFlavor } from '../addresses/index.js';
import { ProvkitError } from '../errors.js';
import { HASH_HELP, hashCommand } from './commands/hash.js';
import { parseFlags } from './flags.js';
import type { CliIO, GlobalOptions } from './io.js';
import { VERSION } from './version.js';
import { LOCK_HELP, lockCommand } from './commands/lock.js';
import { INSTALL_HELP, installCommand } from './commands/install.js';
import { VERIFY_HELP, verifyCommand } from './commands/verify.js';
import { MIRROR_HELP, mirrorCommand } from './commands/mirror.js';
import { BUNDLE_HELP, bundleCommand } from './commands/bundle.js';
import { SERVE_HELP, serveCommand } from './commands/serve.js';

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

const COMMANDS: Readonly<Record<string, { run: Command; help: string }>> = {
  hash: { run: hashCommand, help: HASH_HELP },
  lock: { run: lockCommand, help: LOCK_HELP },
  install: { run: installCommand, help: INSTALL_HELP },
  verify: { run: verifyCommand, help: VERIFY_HELP },
  mirror: { run: mirrorCommand, help: MIRROR_HELP },
  bundle: { run: bundleCommand, help: BUNDLE_HELP },
  serve: { run: serveCommand, help: SERVE_HELP },
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
    const command = name === undefined ? undefined : COMMANDS[name];
    if (global.bools.get('help') || global.bools.get('h') || name === undefined || name === 'help') {
      const topic = name === 'help' ? rest[0] : name;
      const cmd = topic === undefined ? undefined : COMMANDS[topic];
      io.stdout.write(cmd ? cmd.help : HELP);
      return name === undefined && !global.bools.get('help') && !global.bools.get('h') ? 1 : 0;
    }
    if (!command) {
      io.stderr.write(`Error: unknown command ${JSON.stringify(name)}\n\n${HELP}`);
      return 1;
    }
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
