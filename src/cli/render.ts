/**
 * Picks the renderer for a command: human lines (stdout) and diagnostics
 * (stderr) in the reference's form, or `-json` lines (stdout). On a
 * terminal, human output also gets colour (unless turned off) and the live
 * progress display (src/ui/progress.ts); piped output and `-json` never do.
 */
import type { InstallerEvent } from '../installer/events.js';
import { type DiagnosticFrame, type HumanStyle, renderDiagnostic, renderEventHuman, renderLockSuccess, type Diagnostic, type TextSink } from '../ui/human.js';
import { JsonUI } from '../ui/json.js';
import { ProgressDisplay } from '../ui/progress.js';
import type { CliIO, GlobalOptions } from './io.js';
import { VERSION } from './version.js';

export interface Renderer {
  event(e: InstallerEvent): void;
  diagnostic(d: Diagnostic): void;
  /** Renders the errors and returns the exit code 1. */
  fail(errors: readonly Diagnostic[]): number;
  lockSuccess(changed: boolean): void;
  /** A final summary line (`-json`: a `summary` message). */
  summary(message: string, fields: Record<string, unknown>): void;
}

export interface RendererOptions {
  /**
   * Colour allowed (no `-no-color`, no `NO_COLOR`); it is still written only
   * to a terminal. Default: allowed unless `NO_COLOR` is set (non-empty).
   */
  readonly color?: boolean;
  /**
   * How diagnostics are framed: `meta` (default) as `providers lock` and
   * `providers mirror` print them, `view` as `init` does (see src/ui/human.ts).
   */
  readonly frame?: DiagnosticFrame;
}

/** Columns of a terminal when the stream is one; terraform's default of 78 otherwise (`terminal.Streams` `defaultColumns`). */
function columnsOf(s: { isTTY?: boolean; columns?: number }): number {
  return s.isTTY === true && s.columns !== undefined && s.columns > 0 ? s.columns : 78;
}

/** The human style of a run (colour per stream, the width diagnostics wrap to, their frame). */
export function humanStyle(io: CliIO, options: RendererOptions = {}): HumanStyle {
  const noColor = io.env['NO_COLOR'];
  const allowed = options.color ?? (noColor === undefined || noColor === '');
  return {
    color: allowed && io.stdout.isTTY === true,
    diagnosticColor: allowed && io.stderr.isTTY === true,
    width: columnsOf(io.stderr),
    frame: options.frame ?? 'meta',
  };
}

export function createRenderer(io: CliIO, globals: GlobalOptions, json: boolean, options: RendererOptions = {}): Renderer {
  if (json) {
    const ui = new JsonUI(io.stdout);
    ui.version(VERSION);
    return {
      event: (e) => ui.event(e),
      diagnostic: (d) => ui.diagnostic(d),
      fail(errors) {
        for (const d of errors) ui.diagnostic(d);
        return 1;
      },
      lockSuccess: (changed) => ui.summary(changed ? 'Lock file updated' : 'Lock file already up to date', { changed }),
      summary: (message, fields) => ui.summary(message, fields),
    };
  }
  const style = humanStyle(io, options);
  const progress =
    io.stdout.isTTY === true ? new ProgressDisplay({ out: io.stdout, flavor: globals.flavor, columns: () => columnsOf(io.stdout), color: style.color }) : undefined;
  // Every write goes around the live display, when there is one.
  const through = (sink: TextSink): TextSink => (progress ? { write: (text: string) => progress.print(sink, text), isTTY: sink.isTTY === true } : sink);
  const out = through(io.stdout);
  const err = through(io.stderr);
  return {
    event(e) {
      const note = progress?.event(e);
      renderEventHuman(e, out, err, globals.flavor, style);
      if (note !== undefined) out.write(note);
    },
    diagnostic: (d) => renderDiagnostic(d, err, style, out),
    fail(errors) {
      progress?.stop();
      for (const d of errors) renderDiagnostic(d, io.stderr, style, io.stdout);
      return 1;
    },
    lockSuccess(changed) {
      progress?.stop();
      renderLockSuccess(changed, globals.flavor, io.stdout, style);
    },
    summary(message) {
      progress?.stop();
      io.stdout.write(`\n${message}\n`);
    },
  };
}
