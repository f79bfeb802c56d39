/**
 * Running provkit as users run it: `bin/provkit.js` in a child process, with
 * a hermetic environment whose TMPDIR is a directory of the test's own, so
 * that "nothing left in TMPDIR" can be checked after every run. Servers for
 * these runs come from `./remote/` (another process again).
 *
 * ```ts
 * const w = await e2eWorkspace(reg.caPath);
 * const r = await runCli(['lock', '-platform=linux_amd64'], { cwd: w.project('a', mainTf), env: w.env });
 * expect(r.code).toBe(1);
 * expect(await w.tmpLeftovers()).toEqual([]);
 * await w.remove();
 * ```
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { checkedStreams, jsonUiStreamProblems, wantsJsonStream } from './json-ui-schema.js';

export const BIN = fileURLToPath(new URL('../../bin/provkit.js', import.meta.url));

export interface CliResult {
  /** The exit code, or 128 + the signal number when killed by a signal. */
  code: number;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** True when the run outlived `timeoutMs` and was killed. */
  timedOut: boolean;
}

export interface RunOptions {
  /** The working directory; default: the test process's. */
  cwd?: string;
  /**
   * The whole environment, on top of PATH: hermetic unless the test passes
   * `{ ...process.env, … }` (an undefined value leaves the name unset).
   */
  env: Record<string, string | undefined>;
  /** Kill (SIGKILL) after this long; default 60 s. A hang is a failure the test sees, not a test timeout. */
  timeoutMs?: number;
  /** Written to stdin (default: stdin is /dev/null). */
  input?: string;
  /** Run under this umask (`sh -c 'umask …; exec node …'`); default: the test process's. */
  umask?: number;
}

const SIGNALS: Record<string, number> = { SIGINT: 2, SIGKILL: 9, SIGTERM: 15, SIGPIPE: 13, SIGABRT: 6, SIGSEGV: 11 };

/** Runs `node bin/provkit.js ...args` and collects everything it printed. */
export function runCli(args: string[], opts: RunOptions): Promise<CliResult> {
  return startCli(args, opts).result;
}

/** A running provkit child (to signal it) and its outcome; see {@link runCli}. */
export interface StartedCli {
  readonly child: ChildProcess;
  readonly result: Promise<CliResult>;
  /** What it printed so far (stdout then stderr). */
  output(): string;
}

/** {@link runCli}, returning the child at once (for tests that send it signals). */
export function startCli(args: string[], opts: RunOptions): StartedCli {
  return startNode([BIN, ...args], opts, wantsJsonStream(args));
}

/**
 * Runs `node ...argv` (a script of the repository's other than provkit: a
 * benchmark floor, a module loaded in a fresh process) as {@link runCli} runs
 * provkit, and collects everything it printed.
 */
export function runNode(argv: string[], opts: RunOptions): Promise<CliResult> {
  return startNode(argv, opts, false).result;
}

/** {@link runNode}, rejecting (with what it printed on stderr) unless it exits 0, as `execFile` does. */
export async function runNodeOk(argv: string[], opts: RunOptions): Promise<CliResult> {
  const r = await runNode(argv, opts);
  if (r.code !== 0) throw new Error(`node ${argv.join(' ')} exited with ${r.code}:\n${r.stderr}`);
  return r;
}

/** `node ...argv`; its stdout is checked against docs/json-ui.md when `jsonStream`. */
function startNode(nodeArgv: string[], opts: RunOptions, jsonStream: boolean): StartedCli {
  let stdout = '';
  let stderr = '';
  let child!: ChildProcess;
  const args = nodeArgv.slice(1);
  const result = new Promise<CliResult>((resolve, reject) => {
    const [cmd, argv] =
      opts.umask === undefined
        ? [process.execPath, nodeArgv]
        : [
            '/bin/sh',
            ['-c', `umask ${opts.umask.toString(8).padStart(3, '0')} && exec "$0" "$@"`, process.execPath, ...nodeArgv],
          ];
    child = spawn(cmd, argv, {
      cwd: opts.cwd ?? process.cwd(),
      env: { PATH: process.env['PATH'] ?? '', ...opts.env },
      stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    let timedOut = false;
    child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    if (opts.input !== undefined) child.stdin?.end(opts.input);
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, opts.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      // Every -json stream in the suite is checked against the one
      // schema (test/support/json-ui-schema.ts); a run killed outright is not.
      if (jsonStream && !timedOut && signal !== 'SIGKILL') {
        checkedStreams.count += 1;
        const problems = jsonUiStreamProblems(stdout);
        if (problems.length > 0) {
          reject(
            new Error(
              `the -json output of provkit ${args.join(' ')} breaks docs/json-ui.md:\n${problems.join('\n')}\n` +
                `--- exit: ${code ?? 'none'}, signal: ${signal ?? 'none'}\n--- stdout:\n${stdout}\n--- stderr:\n${stderr}`,
            ),
          );
          return;
        }
      }
      resolve({ code: code ?? 128 + (SIGNALS[signal ?? ''] ?? 0), signal, stdout, stderr, timedOut });
    });
  });
  return { child, result, output: () => stdout + stderr };
}

export interface E2eWorkspace {
  /** The workspace root (projects, home, caches, TMPDIR live under it). */
  readonly base: string;
  /** The TMPDIR provkit runs with. */
  readonly tmp: string;
  /** The environment for {@link runCli}: hermetic, TMPDIR = {@link tmp}. */
  readonly env: Record<string, string>;
  /** Creates `base/name` with the given files (path → content) and returns it. */
  project(name: string, files?: Record<string, string>): string;
  /** What provkit left in its TMPDIR (names). */
  tmpLeftovers(): string[];
  /**
   * Files and directories anywhere in the workspace whose names only exist
   * while a run is in progress (`.partial` downloads, staging directories,
   * the mirror target mutex, `provkit-lock-*`…), as paths relative to {@link base}.
   */
  leftovers(): string[];
  remove(): void;
}

/**
 * A fresh workspace: an empty CLI configuration, HOME and cache inside it, no
 * plugin cache or data dir from the machine, the hash store off (each run must
 * meet the network), `caPath` trusted when given, and `extraEnv` on top.
 */
export function e2eWorkspace(caPath?: string, extraEnv: Record<string, string> = {}): E2eWorkspace {
  const base = mkdtempSync(join(tmpdir(), 'provkit-e2e-'));
  const tmp = join(base, 'tmp');
  mkdirSync(tmp);
  writeFileSync(join(base, 'empty.tfrc'), '');
  const env: Record<string, string> = {
    ...(caPath === undefined || caPath === '' ? {} : { SSL_CERT_FILE: caPath }),
    TF_CLI_CONFIG_FILE: join(base, 'empty.tfrc'),
    PROVKIT_CACHE_DIR: join(base, 'cache'),
    PROVKIT_HASH_STORE: 'off',
    PROVKIT_FLAVOR: '',
    HOME: base,
    TMPDIR: tmp,
    TF_DATA_DIR: '',
    TF_PLUGIN_CACHE_DIR: '',
    ...extraEnv,
  };
  return {
    base,
    tmp,
    env,
    project(name, files = {}) {
      const dir = join(base, name);
      mkdirSync(dir, { recursive: true });
      for (const [rel, text] of Object.entries(files)) {
        mkdirSync(join(dir, rel, '..'), { recursive: true });
        writeFileSync(join(dir, rel), text);
      }
      return dir;
    },
    tmpLeftovers: () => readdirSync(tmp).sort(),
    leftovers: () => inProgressNames(base),
    remove: () => rmSync(base, { recursive: true, force: true }),
  };
}

/** A root module requiring each `name = "SOURCE"` (optionally `SOURCE@CONSTRAINT`). */
export function requiresTf(providers: Record<string, string>): string {
  const lines = Object.entries(providers).map(([name, spec]) => {
    const [source, version] = spec.split('@');
    return `    ${name} = {\n      source = "${source ?? ''}"\n${version === undefined ? '' : `      version = "${version}"\n`}    }\n`;
  });
  return `terraform {\n  required_providers {\n${lines.join('')}  }\n}\n`;
}

/** Names that only exist while a run is in progress (or after one was killed). */
const IN_PROGRESS =
  /\.partial$|\.tmp$|\.new$|\.break$|^\.provkit-staging-|^\.provkit-mirror\.lock$|^\.?provkit-(install|lock|bundle)-/;

/** Paths under `root` (relative) whose last component matches {@link IN_PROGRESS}; the walk does not enter those. */
function inProgressNames(root: string, rel = ''): string[] {
  const found: string[] = [];
  for (const name of readdirSync(join(root, rel)).sort()) {
    const path = rel === '' ? name : `${rel}/${name}`;
    if (IN_PROGRESS.test(name)) {
      found.push(path);
      continue;
    }
    const st = lstatSync(join(root, path));
    if (st.isDirectory()) found.push(...inProgressNames(root, path));
  }
  return found;
}

/**
 * Output with every run of white space as one space: diagnostics are
 * wrapped to the terminal's width, or 78 columns when stderr is not one, as
 * terraform wraps them (src/ui/diagnostic.ts), so a long message is found in
 * them only once the wrapping is undone.
 */
export function flat(s: string): string {
  return s.replace(/\s+/g, ' ');
}

/** The messages of a `-json` stream (docs/json-ui.md: one JSON object per line), in order. */
export function jsonLines<T = Record<string, unknown>>(stdout: string): T[] {
  return stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as T);
}

/** The `package_hash` messages of a `provkit hash -json` stream (docs/json-ui.md), in order. */
export function packageHashes<T = Record<string, unknown>>(stdout: string): T[] {
  return jsonLines<{ type?: string } & T>(stdout).filter((l) => l.type === 'package_hash');
}
