/**
 * Picks the renderer for a command: human lines (stdout) and boxed
 * diagnostics (stderr), or `-json` lines (stdout). With `-json-into=FILE`
 * (src/cli/view.ts) the human renderer also writes the `-json` stream into
 * FILE. Every `-json` stream starts with the `version` message, written once
 * by the run's output session whoever reports first.
 */
import type { Diagnostic } from '../errors.js';
import type { InstallerEvent } from '../installer/events.js';
import { renderDiagnostic, renderEventHuman, renderLockSuccess, type TextSink } from '../ui/human.js';
import { JsonUI } from '../ui/json.js';
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

/**
 * `stream` as the human renderers see it: a terminal only when colour is
 * allowed (`color`: no `-no-color`, no `NO_COLOR`) and it is one, so that
 * they write colour exactly then.
 */
export function humanSink(stream: CliIO['stdout'], color: boolean): TextSink {
  return { write: (text: string) => stream.write(text), isTTY: color && stream.isTTY === true };
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

export function createRenderer(io: CliIO, globals: GlobalOptions, json: boolean): Renderer {
  const uis = jsonUIsFor(io, json);
  const each = (f: (ui: JsonUI) => void): void => uis.forEach(f);
  if (json) {
    return {
      event: (e) => each((ui) => ui.event(e)),
      diagnostic: (d) => each((ui) => ui.diagnostic(d)),
      fail(errors) {
        for (const d of errors) each((ui) => ui.diagnostic(d));
        return 1;
      },
      lockSuccess: (changed) => each((ui) => ui.summary(changed ? 'Lock file updated' : 'Lock file already up to date', { changed })),
      summary: (message, fields) => each((ui) => ui.summary(message, fields)),
    };
  }
  const out = humanSink(io.stdout, globals.color);
  const err = humanSink(io.stderr, globals.color);
  return {
    event: (e) => {
      renderEventHuman(e, out, err, globals.flavor);
      each((ui) => ui.event(e));
    },
    diagnostic: (d) => {
      renderDiagnostic(d, err);
      each((ui) => ui.diagnostic(d));
    },
    fail(errors) {
      for (const d of errors) {
        renderDiagnostic(d, err);
        each((ui) => ui.diagnostic(d));
      }
      return 1;
    },
    lockSuccess: (changed) => {
      renderLockSuccess(changed, globals.flavor, out);
      each((ui) => ui.summary(changed ? 'Lock file updated' : 'Lock file already up to date', { changed }));
    },
    summary: (message, fields) => {
      io.stdout.write(`\n${message}\n`);
      each((ui) => ui.summary(message, fields));
    },
  };
}
