import type { OutputSession } from './view.js';

/** What a command may touch of the outside world (injected, so tests run commands in-process). */
export interface CliIO {
  /** `columns`: the terminal's width, when the stream is one (Node's `tty.WriteStream`). */
  readonly stdout: { write(text: string): unknown; isTTY?: boolean; columns?: number | undefined };
  readonly stderr: { write(text: string): unknown; isTTY?: boolean; columns?: number | undefined };
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /**
   * Aborted when the reader of the output went away (EPIPE: `provkit … | head -1`).
   * The command stops as if interrupted, quietly (see {@link EXIT_OUTPUT_CLOSED}).
   */
  readonly outputClosed?: AbortSignal;
  /**
   * The run's output session (`-json` streams, `-json-into`; src/cli/view.ts),
   * set by `main`. Without it, renderers make their own.
   */
  readonly output?: OutputSession;
  /**
   * Where SIGINT, SIGTERM and SIGHUP come from (src/cli/interrupt.ts):
   * the process, unless given (a test delivers them at a chosen moment of
   * an in-process run).
   */
  readonly signals?: SignalSource;
}

/** The signals a command meets: an interrupt of a run, or a server's stop. */
export type SignalName = 'SIGINT' | 'SIGTERM' | 'SIGHUP';

/** What delivers signals to a run: `process`, or a test's `EventEmitter`. */
export interface SignalSource {
  on(name: SignalName, listener: () => void): unknown;
  off(name: SignalName, listener: () => void): unknown;
}

/**
 * The exit status of a run whose output was closed by its reader: 128 +
 * SIGPIPE, what a shell reports for terraform (killed by SIGPIPE at its next
 * write) and for coreutils in `… | head -1`. bin/provkit.js ends the process
 * by that signal itself.
 */
export const EXIT_OUTPUT_CLOSED = 141;

/** Settings every command receives from the global flags. */
export interface GlobalOptions {
  /** The run's flavor: what src/cli/flavor.ts chooses for the working directory. */
  readonly flavor: 'tofu' | 'terraform';
  /** Why, when it was inferred from the project's lock file (src/cli/flavor.ts `noteFlavor` says it). */
  readonly flavorReason?: string;
  /**
   * The flavor a run in `dir` would have, by the same rule (`-flavor`,
   * `PROVKIT_FLAVOR`, else the lock file in `dir`): each root module's, for
   * `lock -recursive` and `verify -recursive`.
   */
  readonly flavorIn: (dir: string) => { readonly flavor: 'tofu' | 'terraform'; readonly reason?: string };
  /** The working directory after `-chdir`. */
  readonly cwd: string;
  /**
   * Colour allowed: no `-no-color`, no `NO_COLOR` (src/cli/view.ts). The
   * renderers write colour only where this is true and their stream is a
   * terminal.
   */
  readonly color: boolean;
}
