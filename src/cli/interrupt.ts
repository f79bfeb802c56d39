/**
 * Signals, the one place a command meets them: SIGINT, SIGTERM and SIGHUP
 * (and a closed stdout) abort a running command through an `AbortSignal`
 * and decide its exit code ({@link interruptOnSignals},
 * {@link runInterruptible}, which src/cli/resources.ts `runInterruptibleWith`
 * runs with the run's resources); a server (`serve`) instead runs until the
 * first SIGINT or SIGTERM and then stops after the work in flight
 * ({@link stopSignal}). bin/provkit.js keeps the process-wide handlers.
 */
import { setMaxListeners } from 'node:events';

import { type Diagnostic, ErrorCode, ProvkitError, WarningCode } from '../errors.js';
import { terminalText } from '../ui/escape.js';
import { type CliIO, EXIT_OUTPUT_CLOSED, type SignalName, type SignalSource } from './io.js';

/** A run that SIGINT or SIGTERM interrupts (see {@link interruptOnSignals}). */
export interface Interrupt {
  readonly signal: AbortSignal;
  /** 130 after SIGINT, 143 after SIGTERM, 129 after SIGHUP, 141 when the output was closed, undefined while nothing came. */
  readonly exitCode: number | undefined;
  /** Removes the handlers (bin/provkit.js keeps a process-wide one; see there). */
  dispose(): void;
}

/** The exit code after each signal a command treats as an interrupt (128 + its number). */
const SIGNAL_EXIT = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const;

/**
 * Turns SIGINT, SIGTERM and SIGHUP into an abort of the running command: the
 * first signal aborts `signal` (downloads stop, temporary files are removed,
 * the lock file and a mirror stay as they were) and the command then exits
 * 130, 143 or 129; a second signal exits at once with that code (registered
 * temporary paths are still removed, see src/fs/cleanup.ts). `outputClosed`
 * (the reader of stdout went away) aborts the same way, with
 * {@link EXIT_OUTPUT_CLOSED}. Shared by `lock`, `mirror`, `install` and `bundle`.
 * `signals`: where the signals come from (the process; a test's emitter).
 */
export function interruptOnSignals(outputClosed?: AbortSignal, signals: SignalSource = process): Interrupt {
  const controller = new AbortController();
  // Each run derives its own signal from this one (installer/abort.ts
  // `runSignal`) and holds one listener on it; but `lock -recursive` runs 8
  // roots at once, each with its lockModule, its run and the shared fetch
  // cache listening: Node's leak warning at 11 listeners would be printed on
  // stderr in the middle of a healthy run.
  setMaxListeners(0, controller.signal);
  let exitCode: number | undefined;
  const handlers = (Object.keys(SIGNAL_EXIT) as SignalName[]).map((name) => {
    const handler = (): void => {
      if (exitCode !== undefined) process.exit(exitCode);
      exitCode = SIGNAL_EXIT[name];
      controller.abort(new ProvkitError(ErrorCode.ABORTED, `interrupted by ${name}`));
    };
    signals.on(name, handler);
    return [name, handler] as const;
  });
  const onClosed = (): void => {
    if (exitCode !== undefined) return;
    exitCode = EXIT_OUTPUT_CLOSED;
    controller.abort(outputClosed?.reason);
  };
  if (outputClosed?.aborted) onClosed();
  else outputClosed?.addEventListener('abort', onClosed, { once: true });
  return {
    signal: controller.signal,
    get exitCode() {
      return exitCode;
    },
    dispose() {
      // A signal after this point finds the command done (committed or
      // rolled back): it must not kill the process on its way out. One
      // listener that ignores it stays (bin/provkit.js leaves signals to any
      // other listener), added before the run's own go.
      let guarded = lateSignalGuards.get(signals);
      if (!guarded) {
        guarded = new Set();
        lateSignalGuards.set(signals, guarded);
      }
      for (const [name] of handlers) {
        if (!guarded.has(name)) {
          guarded.add(name);
          signals.on(name, ignoreLateSignal);
        }
      }
      for (const [name, handler] of handlers) signals.off(name, handler);
      outputClosed?.removeEventListener('abort', onClosed);
    },
  };
}

/** The signals of each source that have their late-signal guard (one each, added once). */
const lateSignalGuards = new WeakMap<SignalSource, Set<SignalName>>();
function ignoreLateSignal(): void {
  // See Interrupt.dispose: the command has finished; its exit code stands.
}

/**
 * Runs a command body under {@link interruptOnSignals}. An interrupted run
 * reports it and returns 130/143 (nothing was changed); a body that still
 * finished successfully had committed everything before the signal took
 * effect, so its 0 stands (the state is "fully updated", never mixed).
 */
export async function runInterruptible(
  io: CliIO,
  what: string,
  body: (signal: AbortSignal) => Promise<number>,
  /** What an interrupted run had already done (default: "nothing was changed"). */
  changed: () => string = () => 'nothing was changed',
): Promise<number> {
  const interrupt = interruptOnSignals(io.outputClosed, io.signals);
  // Under -json (and -json-into) the interrupt is a diagnostic on the JSON
  // streams too; stderr keeps its line unless stdout is the JSON stream.
  const report = (d: Diagnostic, text: string): void => {
    for (const ui of io.output?.jsonUIs() ?? []) ui.diagnostic(d);
    if (io.output?.json !== true) io.stderr.write(terminalText(text));
  };
  try {
    const code = await body(interrupt.signal);
    if (interrupt.exitCode === undefined) return code;
    // Nobody reads the output any more: stop quietly, as terraform does (killed by SIGPIPE).
    if (interrupt.exitCode === EXIT_OUTPUT_CLOSED) return EXIT_OUTPUT_CLOSED;
    if (code === 0) {
      // The signal came after the last commit: everything was done, and is kept.
      const detail = `${what} was already complete when the interrupt arrived; all changes are in place.`;
      report(
        {
          severity: 'warning',
          summary: 'Interrupted after completion',
          detail,
          code: WarningCode.INTERRUPTED_AFTER_COMMIT,
        },
        `Warning: ${detail}\n`,
      );
      return 0;
    }
  } catch (err) {
    if (interrupt.exitCode === undefined) throw err;
    if (interrupt.exitCode === EXIT_OUTPUT_CLOSED) return EXIT_OUTPUT_CLOSED;
  } finally {
    interrupt.dispose();
  }
  // One line for the one cause: `provkit lock was interrupted by SIGINT; nothing was changed.`
  const reason = interrupt.signal.reason instanceof Error ? interrupt.signal.reason.message : 'interrupted';
  const detail = `${what} was ${reason.startsWith('interrupted') ? reason : `interrupted (${reason})`}; ${changed()}.`;
  report({ severity: 'error', summary: 'Interrupted', detail, code: ErrorCode.ABORTED }, `Error: ${detail}\n`);
  return interrupt.exitCode;
}

/**
 * Resolves with the name of the first SIGINT or SIGTERM (and stops listening
 * for them): a server's stop. `signals`: where they come from (the process;
 * a test's emitter).
 */
export function stopSignal(signals: SignalSource = process): Promise<'SIGINT' | 'SIGTERM'> {
  return new Promise((done) => {
    const stop = (s: 'SIGINT' | 'SIGTERM'): void => {
      signals.off('SIGINT', onInt);
      signals.off('SIGTERM', onTerm);
      done(s);
    };
    const onInt = (): void => stop('SIGINT');
    const onTerm = (): void => stop('SIGTERM');
    signals.on('SIGINT', onInt);
    signals.on('SIGTERM', onTerm);
  });
}
