/**
 * Diagnostic helpers shared by the configuration decoder. Diagnostics are the
 * HCL ones (`src/hcl` `Diagnostic`): severity, the reference's Summary and
 * Detail, and the source range they are about.
 *
 * Pure: no I/O.
 */
import { readRefusal } from '../fs/read.js';
import { goQuote } from '../go/index.js';
import type { Diagnostic, Range } from '../hcl/index.js';
import { rangeString } from '../hcl/index.js';

export type { Diagnostic, Range } from '../hcl/index.js';
export { hasErrors } from '../hcl/index.js';

/** An error diagnostic. */
export function errorDiag(summary: string, detail: string, range: Range): Diagnostic {
  return { severity: 'error', summary, detail, range };
}

/** A warning diagnostic. */
export function warningDiag(summary: string, detail: string, range: Range): Diagnostic {
  return { severity: 'warning', summary, detail, range };
}

/**
 * The reference's "Failed to read file" for `rel` (`The file "main.tf" could
 * not be read.`), with provkit's reason when it refused the file
 * (fs/read.ts: a FIFO, a device, too large).
 */
export function fileReadFailed(rel: string, err: unknown): Diagnostic {
  const why = readRefusal(err);
  return errorDiag(
    'Failed to read file',
    `The file ${goQuote(rel)} could not be read${why === undefined ? '' : `: ${why}`}.`,
    fileRange(rel),
  );
}

/**
 * A zero-width range at the start of `filename`, for the reference's
 * "sourceless" diagnostics that are still about one file or directory.
 * Line and column are 0, as `src/lockfile/file.ts` does.
 */
export function fileRange(filename: string): Range {
  const pos = { line: 0, column: 0, byte: 0 };
  return { filename, start: pos, end: pos };
}

/** The range covering `a` through `b` (hcl.RangeBetween). */
export function between(a: Range, b: Range): Range {
  return { filename: a.filename, start: a.start, end: b.end };
}

/** hcl.Range.String(): `file:line,col-col` (used inside the reference's Detail texts). */
export function formatRange(r: Range): string {
  return rangeString(r);
}

/**
 * `file:line:col` of a diagnostic's start, the form provkit prints in front
 * of a message (line and column are omitted when unknown).
 */
export function diagnosticLocation(d: Diagnostic): string {
  const r = d.range;
  if (r.start.line === 0) return r.filename;
  return `${r.filename}:${r.start.line}:${r.start.column}`;
}
