/**
 * Diagnostic helpers shared by the configuration decoder. Diagnostics are the
 * one {@link Diagnostic} of provkit (src/errors.ts): severity, the reference's
 * Summary and Detail, the source range they are about, and the code
 * ({@link ErrorCode.INVALID_CONFIGURATION}, {@link WarningCode.CONFIGURATION_WARNING}).
 *
 * Pure: no I/O.
 */
import { readRefusal } from '../fs/read.js';
import { goQuote } from '../go/index.js';
import { type Diagnostic, type DiagnosticRange, ErrorCode, rangeText, WarningCode } from '../errors.js';
import type { Range } from '../hcl/index.js';
import { rangeString } from '../hcl/index.js';

export type { Diagnostic } from '../errors.js';
export type { Range } from '../hcl/index.js';
export { hasErrors } from '../hcl/index.js';

/** An error diagnostic about `range` (a place in a file, or a file as a whole: {@link fileRange}). */
export function errorDiag(summary: string, detail: string, range: DiagnosticRange): Diagnostic {
  return { severity: 'error', summary, detail, range, code: ErrorCode.INVALID_CONFIGURATION };
}

/** A warning diagnostic about `range`. */
export function warningDiag(summary: string, detail: string, range: DiagnosticRange): Diagnostic {
  return { severity: 'warning', summary, detail, range, code: WarningCode.CONFIGURATION_WARNING };
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
 * The range of the reference's "sourceless" diagnostics that are still about
 * one file or directory: the file, no position (as `src/lockfile/file.ts`'s).
 */
export function fileRange(filename: string): DiagnosticRange {
  return { filename };
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
  return d.range === undefined ? '' : rangeText(d.range);
}
