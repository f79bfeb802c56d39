/**
 * Picks the renderer for a command: human lines (stdout) and boxed
 * diagnostics (stderr), or `-json` lines (stdout; diagnostics also go to
 * stderr in human form only in human mode).
 */
import type { InstallerEvent } from '../installer/events.js';
import { renderDiagnostic, renderEventHuman, renderLockSuccess, type Diagnostic } from '../ui/human.js';
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

export function createRenderer(io: CliIO, globals: GlobalOptions, json: boolean): Renderer {
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
  return {
    event: (e) => renderEventHuman(e, io.stdout, io.stderr, globals.flavor),
    diagnostic: (d) => renderDiagnostic(d, io.stderr),
    fail(errors) {
      for (const d of errors) renderDiagnostic(d, io.stderr);
      return 1;
    },
    lockSuccess: (changed) => renderLockSuccess(changed, globals.flavor, io.stdout),
    summary: (message) => io.stdout.write(`\n${message}\n`),
  };
}
