/**
 * provkit's command line: global flags, then one subcommand. Each command
 * parses its flags, calls the library, renders, and returns the exit code
 * (0 success, 1 error).
 */
import { resolve } from 'node:path';

import {
  describeError,
  type Diagnostic,
  diagnosticFromError,
  ErrorCode,
  ProvkitError,
  systemErrorCode,
  systemErrorText,
  errorText,
} from '../errors.js';
import { terminalText } from '../ui/escape.js';
import { fitHelp } from '../ui/help.js';
import { renderDiagnostic } from '../ui/human.js';
import { parseFlags } from './flags.js';
import { nameSuggestion } from '../go/index.js';
import { eitherSignal } from '../net/index.js';
import { flavorRule } from './flavor.js';
import { type CliIO, EXIT_OUTPUT_CLOSED, type GlobalOptions } from './io.js';
import { humanStyle } from './render.js';
import { colorAllowed, extractViewFlags, OutputSession, type ViewFlags } from './view.js';

export type { CliIO } from './io.js';
export { EXIT_OUTPUT_CLOSED } from './io.js';
export { describeError } from '../errors.js';
export { removeRegisteredNow } from '../fs/cleanup.js';

const HELP = `Usage: provkit [global options] <command> [options] [args]

Mirrors OpenTofu/Terraform provider packages and computes and verifies their
lock-file hashes (zh: and h1:), byte for byte like the reference tools.

Commands:
  lock       Write the providers' hashes for each platform into .terraform.lock.hcl
  mirror     Copy the providers into a mirror directory with its index files
  hash       Print the zh:/h1: hashes of provider packages (zips or directories)
  install    Install the providers into .terraform/providers and update the lock file (init)
  verify     Check the lock file against a mirror offline (for CI)
  audit      Show who vouches for every lock-file hash and check it against the policy
  keys       Show the signing keys of the providers' releases, flagging expired,
             changed and unpinned ones
  bundle     Create or import an air-gap bundle (bundle create | bundle import)
  serve      Serve a mirror directory as a network mirror (HTTPS); -upstream: a
             pull-through mirror that fills itself, -offline: what it stored
  version    Print the provkit version

Global options (before or after the command):
  -flavor=tofu|terraform   Default registry host, lock-file header and messages
                           (default: $PROVKIT_FLAVOR, else terraform for a project
                           whose .terraform.lock.hcl "terraform init" wrote or
                           lists registry.terraform.io providers only, else tofu)
  -no-color                No colour (also NO_COLOR=1); colour only on a terminal
  -json-into=FILE          Write the -json stream into FILE as well as the human
                           output (OpenTofu 1.12)
  -chdir=DIR               Work in DIR
  -help                    Show this help

Environment (the ones an air gap needs):
  SSL_CERT_FILE, NODE_EXTRA_CA_CERTS   CA bundle (PEM) for registries and mirrors
  HTTPS_PROXY, HTTP_PROXY, NO_PROXY    Proxy for https and http URLs, and hosts without one
  TF_CLI_CONFIG_FILE                   The CLI configuration (provider_installation,
                                       credentials, network_mirror); default:
                                       the reference's files in the home directory
  TF_TOKEN_<host>                      A registry or mirror host's API token
  PROVKIT_CACHE_DIR                    provkit's cache (default $XDG_CACHE_HOME/provkit,
                                       else ~/.cache/provkit)
  PROVKIT_HASH_STORE                   Hash store directory (default <cache>/hashes; off: none)
  TF_PLUGIN_CACHE_DIR                  install: the shared plugin cache
  TF_DATA_DIR                          install: instead of .terraform
  TF_PROVIDER_DOWNLOAD_RETRY           Download retries (default 2)
  PROVKIT_HTTP_TUNING                  Timeouts and retries, a comma-separated list of connect=MS, idle=MS, retries=N, backoff=MS, retry-after-max=MS
  PROVKIT_ZIP_LIMITS                   entries=N,bytes=N[K|M|G],ratio=N (docs/reliability.md)
  PROVKIT_DOWNLOADS                    Archives downloaded at once, 1 to 64 (default 8; -downloads=N overrides it)
  PROVKIT_FLAVOR                       tofu or terraform (see -flavor)
  NO_COLOR                             No colour (as -no-color)

Documentation: README.md, docs/ (shipped in the package).
`;

type Command = (args: readonly string[], io: CliIO, globals: GlobalOptions) => Promise<number>;

/**
 * A command, its help, and whether it handles {@link CliIO.outputClosed}
 * itself (it has temporary files or a commit to roll back: it stops and
 * cleans up, see `runInterruptible`); the others are simply abandoned when
 * their output is closed.
 */
interface CommandModule {
  readonly run: Command;
  readonly help: string;
  readonly interruptible?: boolean;
}

/**
 * Commands are loaded when run: a run imports only its own command's modules
 * (openpgp, the HCL parser, the HTTP stack…), which keeps start-up short for
 * quick runs such as an incremental mirror or `version`.
 */
const COMMANDS: Readonly<Record<string, () => Promise<CommandModule>>> = {
  hash: async () => import('./commands/hash.js').then((m) => ({ run: m.hashCommand, help: m.HASH_HELP })),
  lock: async () =>
    import('./commands/lock.js').then((m) => ({ run: m.lockCommand, help: m.LOCK_HELP, interruptible: true })),
  install: async () =>
    import('./commands/install.js').then((m) => ({ run: m.installCommand, help: m.INSTALL_HELP, interruptible: true })),
  verify: async () => import('./commands/verify.js').then((m) => ({ run: m.verifyCommand, help: m.VERIFY_HELP })),
  audit: async () =>
    import('./commands/audit.js').then((m) => ({ run: m.auditCommand, help: m.AUDIT_HELP, interruptible: true })),
  keys: async () =>
    import('./commands/keys.js').then((m) => ({ run: m.keysCommand, help: m.KEYS_HELP, interruptible: true })),
  mirror: async () =>
    import('./commands/mirror.js').then((m) => ({ run: m.mirrorCommand, help: m.MIRROR_HELP, interruptible: true })),
  bundle: async () =>
    import('./commands/bundle.js').then((m) => ({ run: m.bundleCommand, help: m.BUNDLE_HELP, interruptible: true })),
  serve: async () => import('./commands/serve.js').then((m) => ({ run: m.serveCommand, help: m.SERVE_HELP })),
};

/** The streams of {@link CliIO} as far as the EPIPE watch needs them (process.stdout is one). */
interface Watchable {
  on(event: 'error', listener: (err: unknown) => void): unknown;
  off(event: 'error', listener: (err: unknown) => void): unknown;
}
const watchable = (s: unknown): s is Watchable =>
  typeof (s as Partial<Watchable> | null)?.on === 'function' && typeof (s as Partial<Watchable>).off === 'function';

/**
 * Watches stdout and stderr for their reader going away (EPIPE, or a write
 * after that). From then on nothing more is written to either (a write would
 * only fail again) and `closed` is aborted. Other stream errors are kept
 * for the caller (`failure`) rather than thrown from an event.
 */
function watchOutput(io: CliIO): { io: CliIO; closed: AbortSignal; failure: () => unknown; dispose(): void } {
  const controller = new AbortController();
  let failure: unknown;
  const onError = (err: unknown): void => {
    const code = systemErrorCode(err);
    if (code === 'EPIPE' || code === 'ERR_STREAM_DESTROYED' || code === 'ERR_STREAM_WRITE_AFTER_END') {
      if (!controller.signal.aborted)
        controller.abort(new ProvkitError(ErrorCode.ABORTED, 'the output was closed by its reader'));
    } else {
      failure ??= err;
    }
  };
  const streams: Watchable[] = [];
  for (const s of [io.stdout, io.stderr] as unknown[]) if (watchable(s)) streams.push(s);
  for (const s of streams) s.on('error', onError);
  const guard = (s: CliIO['stdout']): CliIO['stdout'] => ({
    write: (text: string) => (controller.signal.aborted ? false : s.write(text)),
    ...(s.isTTY === undefined ? {} : { isTTY: s.isTTY }),
    // The terminal's width as it is now (it may be resized during the run).
    get columns() {
      return s.columns;
    },
  });
  return {
    io: {
      ...io,
      stdout: guard(io.stdout),
      stderr: guard(io.stderr),
      outputClosed: eitherSignal(io.outputClosed, controller.signal),
    },
    closed: controller.signal,
    failure: () => failure,
    dispose() {
      for (const s of streams) s.off('error', onError);
    },
  };
}

/**
 * Runs provkit with `argv`. Returns the exit code: 0, 1 for any failure
 * (every error, expected or not, ends as one `Error: …` line or diagnostic
 * naming the file or URL; never a stack trace), 130/143 after SIGINT/SIGTERM,
 * {@link EXIT_OUTPUT_CLOSED} when the output's reader went away.
 */
export async function main(argv: readonly string[], rawIO: CliIO): Promise<number> {
  const watch = watchOutput(rawIO);
  const io = watch.io;
  try {
    const code = await runMain(argv, io, watch.closed);
    // A failed write reaches the 'error' listeners on a later tick (Node's
    // streams; bin/output.js): one turn of the event loop delivers the errors
    // of the last writes, so that output lost at the end is seen too.
    await new Promise((resolve) => setImmediate(resolve));
    if (watch.closed.aborted) return EXIT_OUTPUT_CLOSED;
    // Output lost otherwise (stdout redirected to a full disk): the run failed.
    const lost = watch.failure();
    if (lost !== undefined) {
      io.stderr.write(`Error: cannot write to standard output: ${systemErrorText(lost)}\n`);
      return 1;
    }
    return code;
  } catch (err) {
    if (watch.closed.aborted) return EXIT_OUTPUT_CLOSED;
    io.stderr.write(`Error: ${terminalText(describeError(err))}\n`);
    return 1;
  } finally {
    watch.dispose();
  }
}

/**
 * A flag error as the reference reports it (`Error parsing command-line
 * flags: …` after the command's usage, in red where colour is allowed;
 * hashicorp/terraform internal/command/providers_lock.go), with provkit's
 * suggestion of the flag the user probably meant; under `-json`, a
 * diagnostic (INVALID_FLAGS) on the JSON streams.
 */
function reportFlagError(err: ProvkitError, io: CliIO, help: string, session: OutputSession): number {
  const suggestion = err.expected === undefined ? '' : `Did you mean ${err.expected}?\n`;
  if (session.json || session.jsonIntoUI()) {
    const d: Diagnostic = {
      severity: 'error',
      summary: 'Failed to parse command-line flags',
      detail: err.message,
      code: ErrorCode.INVALID_FLAGS,
      ...(err.expected === undefined ? {} : { hint: `Did you mean ${err.expected}?` }),
    };
    for (const ui of session.jsonUIs()) ui.diagnostic(d);
    if (session.json) return 1;
  }
  const red = session.color && io.stderr.isTTY === true;
  const [on, off] = red ? ['\u001b[31m', '\u001b[0m\u001b[0m'] : ['', ''];
  io.stderr.write(
    `${on}\n${fitHelp(help)}${off}\n${on}Error parsing command-line flags: ${terminalText(err.message)}\n${terminalText(suggestion)}${off}\n`,
  );
  return 1;
}

/** Any other failure before or around a command: the one conversion, on the run's streams. */
function reportError(err: unknown, io: CliIO, session: OutputSession): number {
  const d = diagnosticFromError(err, 'Error');
  for (const ui of session.jsonUIs()) ui.diagnostic(d);
  if (!session.json) {
    const red = session.color && io.stderr.isTTY === true;
    io.stderr.write(
      `${red ? '\u001b[1m\u001b[31mError: \u001b[0m' : 'Error: '}${terminalText(errorText(err))}\n${d.hint === undefined ? '' : `\n${terminalText(d.hint)}\n`}`,
    );
  }
  return 1;
}

/** The global flags (before or after the command). */
const GLOBAL_FLAGS = {
  flavor: 'string',
  chdir: 'string',
  help: 'bool',
  h: 'bool',
  // `-v`, `-version`, `--version` anywhere: the version (terraform's main.go aliases).
  version: 'bool',
  v: 'bool',
} as const;

async function runMain(argv: readonly string[], baseIO: CliIO, closed: AbortSignal): Promise<number> {
  let view: ViewFlags;
  let args: string[];
  try {
    ({ view, rest: args } = extractViewFlags(argv, true));
  } catch (err) {
    const session = new OutputSession(
      baseIO.stdout,
      argv.includes('-json'),
      colorAllowed(argv.includes('-no-color'), baseIO.env),
    );
    return err instanceof ProvkitError
      ? reportFlagError(err, baseIO, HELP, session)
      : reportError(err, baseIO, session);
  }
  const session = new OutputSession(baseIO.stdout, view.json, colorAllowed(view.noColor, baseIO.env));
  const io: CliIO = { ...baseIO, output: session };
  let help = HELP;
  try {
    // Global flags may appear before or after the subcommand; the
    // subcommand's own flags pass through untouched. `-chdir DIR` (a space,
    // not `=`) is accepted too; terraform and tofu refuse it ("Invalid -chdir
    // option: must include an equals sign").
    const global = parseFlags(args, GLOBAL_FLAGS, true);
    // The command is the first argument that is not a flag; command flags
    // given before it (`provkit -json hash x.zip`) are passed on to it.
    const at = global.positionals.findIndex((a) => !a.startsWith('-'));
    const name = at < 0 ? undefined : global.positionals[at];
    const rest = global.positionals.filter((_, i) => i !== at);
    const chdir = global.values.chdir;
    const cwd = chdir === undefined ? io.cwd : resolve(io.cwd, chdir);
    if (global.values.version || global.values.v || name === 'version') {
      // Its -json is terraform's version object, not the message stream (commands/version.ts).
      const { versionCommand } = await import('./commands/version.js');
      let flavor: GlobalOptions['flavor'] | undefined;
      try {
        flavor = flavorRule(global.values.flavor, io.env)(cwd).flavor;
      } catch {
        // A bad -flavor does not stop the version from being printed.
      }
      return await versionCommand(io, cwd, view.json || rest.some((a) => /^--?json(=true)?$/.test(a)), flavor);
    }
    const load = name === undefined ? undefined : COMMANDS[name];
    if (global.values.help || global.values.h || name === undefined || name === 'help') {
      const topic = name === 'help' ? rest[0] : name;
      const loadTopic = topic === undefined ? undefined : COMMANDS[topic];
      io.stdout.write(fitHelp(loadTopic ? (await loadTopic()).help : HELP));
      return name === undefined && !global.values.help && !global.values.h ? 1 : 0;
    }
    if (!load) {
      const meant = nameSuggestion(name, [...Object.keys(COMMANDS), 'version', 'help'], 'typed');
      const hint = meant === undefined ? undefined : `Did you mean ${JSON.stringify(meant)}?`;
      const d: Diagnostic = {
        severity: 'error',
        summary: 'Unknown command',
        detail: `unknown command ${JSON.stringify(name)}`,
        ...(hint === undefined ? {} : { hint }),
        code: ErrorCode.USAGE,
      };
      for (const ui of session.jsonUIs()) ui.diagnostic(d);
      // The usage as -help prints it (fitted to 80 columns).
      if (!session.json)
        io.stderr.write(
          `Error: unknown command ${JSON.stringify(name)}\n\n${hint === undefined ? '' : `${hint}\n\n`}${fitHelp(HELP)}`,
        );
      return 1;
    }
    const command = await load();
    help = command.help;
    const flavorIn = flavorRule(global.values.flavor, io.env);
    const { flavor, reason } = flavorIn(cwd);
    if (view.jsonInto !== undefined) {
      const problem = session.openJsonInto(view.jsonInto, cwd);
      if (problem) {
        for (const ui of session.jsonUIs()) ui.diagnostic(problem);
        if (!session.json) renderDiagnostic(problem, io.stderr, humanStyle(io, session.color));
        return 1;
      }
    }
    // The flavor note is the commands' (src/cli/flavor.ts noteFlavor): said only where the flavor changes something.
    const globals: GlobalOptions = {
      flavor,
      ...(reason === undefined ? {} : { flavorReason: reason }),
      flavorIn,
      cwd,
      color: session.color,
    };
    const run = command.run(rest, io, globals);
    if (command.interruptible) return await run;
    // Nothing to clean up: a command whose output nobody reads is left behind.
    return await Promise.race([run, abortedAs(closed, EXIT_OUTPUT_CLOSED)]);
  } catch (err) {
    if (err instanceof ProvkitError && err.code === ErrorCode.INVALID_FLAGS)
      return reportFlagError(err, io, help, session);
    // Anything else is a provkit bug: a diagnostic (INTERNAL), never a stack trace.
    return reportError(err, io, session);
  } finally {
    session.close();
  }
}

/** Resolves with `value` once `signal` is aborted (never before). */
function abortedAs(signal: AbortSignal, value: number): Promise<number> {
  return new Promise((resolveAborted) => {
    if (signal.aborted) resolveAborted(value);
    else signal.addEventListener('abort', () => resolveAborted(value), { once: true });
  });
}
