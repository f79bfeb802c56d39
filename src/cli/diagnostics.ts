/**
 * The diagnostics commands render beside their runs' events: configuration
 * and lock-file diagnostics (src/hcl's) as the one {@link Diagnostic}, in the
 * reference's order and with their source lines; the batch a command shows at
 * its end, as terraform does; and the warnings of a target's directory mutex.
 */
import { basename, resolve } from 'node:path';

import { type Diagnostic, WarningCode } from '../errors.js';
import type { DirMutexOptions } from '../fs/dir-mutex.js';
import { readRegularFileSync } from '../fs/read.js';
import { hasErrors } from '../hcl/index.js';
import { LOCK_FILE_NAME } from '../lockfile/index.js';
import { diagnosticSnippet, sourceRange } from '../ui/diagnostic.js';
import { sortedDiagnostics } from '../ui/human.js';
import type { Renderer } from './render.js';

/**
 * How a configuration or lock-file diagnostic about a file as a whole (no
 * position: "Failed to read file") is shown: the reference names no location,
 * and neither does provkit, except among many roots (`wholeFile`: `lock
 * -recursive`, `verify -recursive`), where the file's path says which.
 */
export function placed(d: Diagnostic, wholeFile = false): Diagnostic {
  if (d.range === undefined || d.range.start !== undefined || wholeFile) return d;
  const { range: _range, ...rest } = d;
  return rest;
}

/**
 * Configuration or lock-file diagnostics as the one {@link Diagnostic}, in
 * the reference's order (`tfdiags.Diagnostics.Sort`), each with its file and
 * line and, for a configuration file read from `cwd`, the source lines with
 * the subject underlined (terraform shows the lock file's as "source code
 * not available": its sources are the configuration's files only,
 * `Meta.configSources`).
 */
export function configDiagnostics(diagnostics: readonly Diagnostic[], cwd?: string, wholeFile = false): Diagnostic[] {
  const sources = new Map<string, Uint8Array | undefined>();
  const source = (filename: string): Uint8Array | undefined => {
    if (cwd === undefined || basename(filename) === LOCK_FILE_NAME) return undefined;
    if (!sources.has(filename)) {
      let bytes: Uint8Array | undefined;
      try {
        bytes = readRegularFileSync(resolve(cwd, filename));
      } catch {
        bytes = undefined;
      }
      sources.set(filename, bytes);
    }
    return sources.get(filename);
  };
  return sortedDiagnostics(diagnostics).map((d) => {
    const r = sourceRange(d.range);
    const src = r === undefined ? undefined : source(r.filename);
    const context = sourceRange(d.context);
    return {
      ...placed(d, wholeFile),
      ...(src === undefined || r === undefined ? {} : { snippet: diagnosticSnippet(src, r, context) }),
    };
  });
}

/**
 * Renders configuration or lock-file diagnostics ({@link configDiagnostics})
 * together; true when one is an error.
 */
export function reportDiagnostics(ui: Renderer, diagnostics: readonly Diagnostic[], cwd?: string): boolean {
  ui.diagnostics(configDiagnostics(diagnostics, cwd));
  return hasErrors(diagnostics);
}

/**
 * The diagnostics of a command that, as terraform's `providers lock`,
 * `providers mirror` and `init` do, shows its warnings at the end, all in one
 * sorted batch with whatever else it reports there (hashicorp/terraform
 * v1.11.4 internal/command/providers_lock.go: `c.showDiagnostics(diags)`
 * once, before "Success!"; test/fixtures/reference-runs/). Errors end the
 * run at once, with the warnings gathered so far.
 */
export class PendingDiagnostics {
  private readonly list: Diagnostic[] = [];

  constructor(
    private readonly ui: Renderer,
    private readonly cwd: string,
  ) {}

  /**
   * Adds configuration or lock-file diagnostics; when one is an error,
   * renders everything through the renderer's `fail` and returns true.
   */
  add(diagnostics: readonly Diagnostic[]): boolean {
    this.list.push(...configDiagnostics(diagnostics, this.cwd));
    if (!hasErrors(diagnostics)) return false;
    this.fail([]);
    return true;
  }

  /** Adds diagnostics of the command's own (an install's "Incomplete lock file information" warning). */
  push(...diagnostics: Diagnostic[]): void {
    this.list.push(...diagnostics);
  }

  /** Renders what is pending, in the reference's order, and forgets it. */
  flush(): void {
    if (this.list.length > 0) this.ui.diagnostics(sortedDiagnostics(this.list.splice(0)));
  }

  /** Fails with what is pending and `errors` (one batch, in the reference's order); returns 1. */
  fail(errors: readonly Diagnostic[]): number {
    return this.ui.fail(sortedDiagnostics([...this.list.splice(0), ...errors]));
  }
}

/**
 * The warnings of a target's directory mutex (fs/dir-mutex.ts) as a run
 * meets them: waiting for another run that holds it (`detail` is given the
 * holder's text, ` by process PID on HOST` or nothing), and a stale one
 * removed. Called a mutex, never a lock: a lock is the dependency lock file.
 */
export function targetMutexWarnings(
  ui: Renderer,
  waiting: { readonly summary: string; readonly detail: (holder: string) => string },
): Pick<DirMutexOptions, 'onWait' | 'onBreak'> {
  return {
    onWait: (w) =>
      ui.diagnostic({
        severity: 'warning',
        summary: waiting.summary,
        detail: waiting.detail(w.holder ? ` by process ${w.holder.pid} on ${w.holder.hostname}` : ''),
        code: WarningCode.MUTEX_WAIT,
      }),
    onBreak: (b) =>
      ui.diagnostic({
        severity: 'warning',
        summary: 'Stale mirror mutex removed',
        detail: `${b.path} (${b.reason})`,
        code: WarningCode.STALE_MUTEX_REMOVED,
      }),
  };
}
