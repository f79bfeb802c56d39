/**
 * Picks the renderer for a command: human lines (stdout) and diagnostics
 * (stderr) in the reference's form, or `-json` lines (stdout). On a
 * terminal, human output also gets colour (unless turned off) and the live
 * progress display (src/ui/progress.ts); piped output and `-json` never do.
 * With `-json-into=FILE` (src/cli/view.ts) the human renderer also writes
 * the `-json` stream into FILE. Every `-json` stream starts with the
 * `version` message, written once by the run's output session whoever
 * reports first.
 */
import type { InstallerEvent } from '../installer/events.js';
import {
  type Diagnostic,
  type DiagnosticFrame,
  type HumanStyle,
  renderDiagnostic,
  renderDiagnostics,
  renderEventHuman,
  renderLockSuccess,
  type TextSink,
} from '../ui/human.js';
import { terminalText } from '../ui/escape.js';
import { JsonUI } from '../ui/json.js';
import { ProgressDisplay } from '../ui/progress.js';
import type { CliIO, GlobalOptions } from './io.js';
import { VERSION } from './version.js';

export interface Renderer {
  event(e: InstallerEvent): void;
  diagnostic(d: Diagnostic): void;
  /**
   * Diagnostics reported together, in the order given: for a person with
   * similar warnings consolidated as the reference does
   * (src/ui/diagnostic.ts `consolidateWarnings`), under `-json` each one.
   */
  diagnostics(ds: readonly Diagnostic[]): void;
  /** Renders the diagnostics (as {@link diagnostics}: errors, and warnings reported with them) and returns the exit code 1. */
  fail(errors: readonly Diagnostic[]): number;
  lockSuccess(changed: boolean): void;
  /** A final summary line (`-json`: a `summary` message). */
  summary(message: string, fields: Record<string, unknown>): void;
  /** Takes the live progress display away for good, when there is one (before an interrupted run's one line). */
  stop(): void;
  /**
   * The `-json` stream on stdout (its version message written), for the
   * messages a command scopes itself (`JsonUI.scoped`: one root of a
   * `-recursive` run); undefined without `-json`. Commands take it from
   * here rather than build their own, so that stdout has one JSON stream.
   */
  readonly json: JsonUI | undefined;
}

export interface RendererOptions {
  /**
   * How diagnostics are framed: `meta` (default) as `providers lock` and
   * `providers mirror` print them, `view` as `init` does (see src/ui/human.ts).
   */
  readonly frame?: DiagnosticFrame;
  /**
   * Whether the human output has a line per package (`- Fetching…`,
   * `- Retrieved…`, retries); default true. `lock -check` without
   * `-verbose` has none (a summary for hooks); the live display on a
   * terminal and `-json` are the same either way.
   */
  readonly packageLines?: boolean;
  /** Warnings to stdout in the `meta` frame (`providers lock`, `providers mirror`; see src/ui/human.ts). */
  readonly warningsToStdout?: boolean;
}

/** The events whose human lines are package lines (see {@link RendererOptions.packageLines}). */
const PACKAGE_LINES: ReadonlySet<InstallerEvent['type']> = new Set([
  'fetch_start',
  'fetch_complete',
  'fetch_retry',
  'fetch_resume',
]);

/** Columns of a terminal when the stream is one; terraform's default of 78 otherwise (`terminal.Streams` `defaultColumns`). */
function columnsOf(s: { isTTY?: boolean; columns?: number | undefined }): number {
  return s.isTTY === true && s.columns !== undefined && s.columns > 0 ? s.columns : 78;
}

/** The width of `s` when it is a terminal; undefined otherwise (piped output keeps one line per entry). */
export function terminalColumns(s: { isTTY?: boolean; columns?: number | undefined }): number | undefined {
  return s.isTTY === true && s.columns !== undefined && s.columns > 0 ? s.columns : undefined;
}

/**
 * The human style of a run: colour per stream (`color`: allowed, no
 * `-no-color` and no `NO_COLOR`; written only to a terminal), the width
 * diagnostics wrap to, their frame.
 */
export function humanStyle(
  io: Pick<CliIO, 'stdout' | 'stderr'>,
  color: boolean,
  options: RendererOptions = {},
): HumanStyle {
  return {
    color: color && io.stdout.isTTY === true,
    diagnosticColor: color && io.stderr.isTTY === true,
    width: columnsOf(io.stderr),
    frame: options.frame ?? 'meta',
    ...(options.warningsToStdout === true ? { warningsToStdout: true } : {}),
  };
}

/**
 * The JSON streams a command writes to: stdout's when `json`, and the
 * `-json-into` file's when one was opened (each begun with the version
 * message). Without an output session (a command run in-process by a
 * test), stdout's is made here.
 */
export function jsonUIsFor(io: CliIO, json: boolean): JsonUI[] {
  const uis: JsonUI[] = [];
  if (json) {
    let ui = io.output?.jsonUI();
    if (!ui) {
      ui = new JsonUI(io.stdout);
      ui.version(VERSION);
    }
    uis.push(ui);
  }
  const into = io.output?.jsonIntoUI();
  if (into) uis.push(into);
  return uis;
}

export function createRenderer(
  io: CliIO,
  globals: GlobalOptions,
  json: boolean,
  options: RendererOptions = {},
): Renderer {
  const uis = jsonUIsFor(io, json);
  const each = (f: (ui: JsonUI) => void): void => uis.forEach(f);
  if (json) {
    return {
      event: (e) => each((ui) => ui.event(e)),
      diagnostic: (d) => each((ui) => ui.diagnostic(d)),
      diagnostics: (ds) => ds.forEach((d) => each((ui) => ui.diagnostic(d))),
      fail(errors) {
        for (const d of errors) each((ui) => ui.diagnostic(d));
        return 1;
      },
      lockSuccess: (changed) =>
        each((ui) => ui.summary(changed ? 'Lock file updated' : 'Lock file already up to date', { changed })),
      summary: (message, fields) => each((ui) => ui.summary(message, fields)),
      stop: () => undefined,
      json: uis[0],
    };
  }
  const packageLines = options.packageLines ?? true;
  const style = humanStyle(io, globals.color, options);
  const progress =
    io.stdout.isTTY === true
      ? new ProgressDisplay({
          out: io.stdout,
          flavor: globals.flavor,
          columns: () => columnsOf(io.stdout),
          color: style.color,
        })
      : undefined;
  // Every write goes around the live display, when there is one.
  const through = (sink: TextSink): TextSink =>
    progress
      ? {
          write: (text: string) => progress.print(sink, text),
          isTTY: sink.isTTY === true,
          // The terminal's width as it is when a line is rendered (src/ui/human.ts wraps to it).
          get columns() {
            return sink.columns;
          },
        }
      : sink;
  // Whether the run's own lines reached stdout (a quiet run's summary is then set apart by a blank line).
  let wrote = false;
  const display = through(io.stdout);
  const out: TextSink = {
    write: (text: string) => {
      wrote = true;
      return display.write(text);
    },
    ...(display.isTTY === undefined ? {} : { isTTY: display.isTTY }),
    get columns() {
      return display.columns;
    },
  };
  const err = through(io.stderr);
  return {
    event(e) {
      const note = progress?.event(e);
      each((ui) => ui.event(e));
      if (!packageLines && PACKAGE_LINES.has(e.type)) return;
      renderEventHuman(e, out, err, globals.flavor, style);
      if (note !== undefined) out.write(note);
    },
    diagnostic: (d) => {
      renderDiagnostic(d, err, style, out);
      each((ui) => ui.diagnostic(d));
    },
    diagnostics(ds) {
      renderDiagnostics(ds, err, style, out);
      for (const d of ds) each((ui) => ui.diagnostic(d));
    },
    fail(errors) {
      progress?.stop();
      renderDiagnostics(errors, io.stderr, style, io.stdout);
      for (const d of errors) each((ui) => ui.diagnostic(d));
      return 1;
    },
    lockSuccess(changed) {
      progress?.stop();
      renderLockSuccess(changed, globals.flavor, io.stdout, style);
      each((ui) => ui.summary(changed ? 'Lock file updated' : 'Lock file already up to date', { changed }));
    },
    summary(message, fields) {
      progress?.stop();
      io.stdout.write(`${packageLines || wrote ? '\n' : ''}${terminalText(message)}\n`);
      each((ui) => ui.summary(message, fields));
    },
    stop: () => progress?.stop(),
    json: undefined,
  };
}
