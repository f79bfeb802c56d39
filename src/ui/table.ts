/**
 * A table of provkit's own (`audit`'s hashes, `keys`'s keys) fitted to the
 * output: aligned columns when the output is no terminal (one line per row,
 * for grep and diffs) or when every line fits the terminal; on a terminal too
 * narrow for that, one block per row, so that nothing is cut and no line
 * wraps in the middle of a column: the row's head cells (short: a platform
 * and a verdict, a key ID and its expiry) on one line, then each other cell
 * on a line of its own, indented, long ones wrapped at spaces with a hanging
 * indent (src/ui/wrap.ts). A word longer than the line (a hash, a
 * fingerprint) is never split: it stays whole and the terminal folds it.
 *
 * Cells are values from outside (provider addresses, URLs): each is escaped
 * here (src/ui/escape.ts `terminalLine`), so the lines returned are ready to
 * write.
 */
import { terminalLine } from './escape.js';
import { wrapHanging } from './wrap.js';

/** One column: its title, and whether it belongs to a row's first line when rows become blocks. */
export interface TableColumn {
  readonly title: string;
  /** Shown on the row's first line in the narrow layout; the others follow, one per line. */
  readonly head?: boolean;
  /** Written before the cell in the narrow layout (`versions 1.0.0, 1.1.0`), where the value alone is unclear. */
  readonly label?: string;
}

/** A row: its cells, one per column, and lines that belong under it (why it fails). */
export interface TableRow {
  readonly cells: readonly string[];
  readonly notes?: readonly string[];
}

const width = (s: string): number => [...s].length;

/**
 * The table's lines, each indented by `indent` spaces (`notes` by two more).
 * `columns`: the terminal's width, undefined when the output is no terminal
 * (the aligned layout, whatever its width). A line is kept below `columns`
 * (a line of exactly the width makes some terminals wrap the cursor).
 */
export function tableLines(
  columns: readonly TableColumn[],
  rows: readonly TableRow[],
  indent: number,
  terminalColumns: number | undefined,
): string[] {
  const pad = ' '.repeat(indent);
  const escaped = rows.map((r) => ({
    cells: r.cells.map((c) => terminalLine(c)),
    notes: (r.notes ?? []).map((n) => terminalLine(n)),
  }));
  const widths = columns.map((c, i) => Math.max(width(c.title), ...escaped.map((r) => width(r.cells[i] ?? ''))));
  const line = (cells: readonly string[]): string =>
    `${pad}${cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]! + c.length - width(c)))).join('  ')}`.trimEnd();
  const wide = [line(columns.map((c) => c.title))];
  for (const r of escaped) wide.push(line(r.cells), ...r.notes.map((n) => `${pad}  ${n}`));
  const limit = terminalColumns === undefined ? undefined : terminalColumns - 1;
  if (limit === undefined || limit <= indent + 8 || wide.every((l) => width(l) <= limit)) return wide;

  const out: string[] = [];
  const deeper = `${pad}  `;
  for (const r of escaped) {
    out.push(wrapHanging(`${pad}${r.cells.filter((_, i) => columns[i]!.head === true).join('  ')}`, limit, indent + 4));
    columns.forEach((c, i) => {
      const cell = r.cells[i] ?? '';
      if (c.head === true || cell === '') return;
      out.push(wrapHanging(`${deeper}${c.label === undefined ? '' : `${c.label} `}${cell}`, limit, indent + 4));
    });
    for (const n of r.notes) out.push(wrapHanging(`${deeper}${n}`, limit, indent + 4));
  }
  return out.flatMap((l) => l.split('\n'));
}

/**
 * One line of text around a table (a title, a finding), escaped and, on a
 * terminal, wrapped at spaces with a hanging indent two deeper than its own.
 */
export function fittedLines(text: string, terminalColumns: number | undefined): string[] {
  const e = terminalLine(text);
  if (terminalColumns === undefined || terminalColumns <= 1) return [e];
  return wrapHanging(e, terminalColumns - 1, e.length - e.trimStart().length + 2).split('\n');
}
