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

/** Whether any diagnostic is an error. */
export function hasErrors(diagnostics: readonly Diagnostic[]): boolean {
  return diagnostics.some((d) => d.severity === 'error');
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

/**
 * hclsyntax's `nameSuggestion`: the first of `suggestions` within a
 * Levenshtein distance of less than 3 from `given`, or `''`.
 */
export function nameSuggestion(given: string, suggestions: readonly string[]): string {
  for (const s of suggestions) {
    if (levenshtein(given, s) < 3) return s;
  }
  return '';
}

function levenshtein(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  let prev = Array.from({ length: y.length + 1 }, (_, i) => i);
  for (let i = 1; i <= x.length; i++) {
    const cur = [i];
    for (let j = 1; j <= y.length; j++) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1;
      cur.push(Math.min((prev[j] ?? 0) + 1, (cur[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost));
    }
    prev = cur;
  }
  return prev[y.length] ?? 0;
}
