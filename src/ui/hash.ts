/**
 * Renders the results of `provkit hash`.
 *
 * Human form, one path: for a zip, line 1 the lock-file `h1:` (extracted
 * form) and line 2 the `zh:`; for a directory, its `h1:`. Several paths: one
 * block per path, the path on its own line then those lines, blocks separated
 * by a blank line. Warnings and errors go to stderr.
 *
 * `-json`: the messages of docs/json-ui.md (after the `version` message
 * every stream starts with), one `package_hash` per path: `path`, `h1`,
 * `zh`, `h1_zip`, `warnings` (and `error` with `code` and `message` when the
 * package is refused; `h1` is then null, and a `diagnostic` follows, as for
 * every error).
 */
import { diagnosticFromError } from '../errors.js';
import type { PathHashResult } from '../hashing/index.js';
import type { JsonUI } from './json.js';
import { terminalLine } from './escape.js';

export interface TextSink {
  write(text: string): unknown;
}

interface Row {
  path: string;
  h1: string | null;
  zh: string | null;
  h1_zip: string | null;
  warnings: { code: string; message: string; entries: readonly string[] }[];
  error?: { code: string; message: string };
}

function toRow(r: PathHashResult): Row {
  switch (r.kind) {
    case 'dir':
      return { path: r.path, h1: r.h1.text, zh: null, h1_zip: null, warnings: [] };
    case 'error':
      return {
        path: r.path,
        h1: null,
        zh: null,
        h1_zip: null,
        warnings: [],
        error: { code: r.error.code, message: r.error.message },
      };
    case 'zip': {
      const z = r.zip;
      const row: Row = {
        path: r.path,
        h1: z.h1.ok ? z.h1.hash.text : null,
        zh: z.zh.text,
        h1_zip: z.h1Zip.ok ? z.h1Zip.hash.text : null,
        warnings: z.warnings.map((w) => ({ code: w.code, message: w.message, entries: w.entries })),
      };
      if (!z.h1.ok) row.error = { code: z.h1.error.code, message: z.h1.error.message };
      return row;
    }
  }
}

/** True when any path failed (the command exits 1). */
export function anyHashFailed(results: readonly PathHashResult[]): boolean {
  return results.some((r) => r.kind === 'error' || (r.kind === 'zip' && !r.zip.h1.ok));
}

export function renderHashHuman(results: readonly PathHashResult[], out: TextSink, err: TextSink): void {
  const many = results.length > 1;
  let first = true;
  for (const r of results) {
    const row = toRow(r);
    // A path and a zip's entry names are text from outside: escaped (src/ui/escape.ts).
    for (const w of row.warnings) err.write(`${terminalLine(`Warning: ${row.path}: ${w.message}`)}\n`);
    if (row.error) {
      err.write(`${terminalLine(`Error: ${row.error.message}`)}\n`);
      continue;
    }
    const lines = r.kind === 'zip' ? [row.h1, row.zh] : [row.h1];
    if (many) out.write(`${first ? '' : '\n'}${terminalLine(row.path)}\n`);
    first = false;
    out.write(lines.map((l) => `${l ?? ''}\n`).join(''));
  }
}

export function renderHashJSON(results: readonly PathHashResult[], uis: readonly JsonUI[]): void {
  for (const r of results) {
    const { path, ...fields } = toRow(r);
    const level = fields.error ? 'error' : fields.warnings.length > 0 ? 'warn' : 'info';
    const message = fields.error ? `${path}: ${fields.error.message}` : `${path}: ${fields.h1 ?? ''}`;
    for (const ui of uis) {
      ui.message(level, message, 'package_hash', { path, ...fields });
      if (r.kind === 'error') ui.diagnostic(diagnosticFromError(r.error, 'Invalid provider package'));
      else if (r.kind === 'zip' && !r.zip.h1.ok)
        ui.diagnostic(diagnosticFromError(r.zip.h1.error, 'Invalid provider package'));
    }
  }
}
