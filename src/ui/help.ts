/**
 * Help text fitted to 80 columns, as terraform's and tofu's help fits a
 * standard terminal. An entry (a flag or variable line whose description
 * starts after a run of two or more spaces, with the lines indented to that
 * column below it) that has a line longer than `width` is reflowed as one
 * paragraph, its continuation lines indented to the description column; any
 * other long line is wrapped at spaces with its own indentation, by the
 * diagnostics' word wrap (src/ui/diagnostic.ts `wrapString`): a word longer
 * than the room left (a `KEY=VALUE` list) stays whole on its line.
 * Entries that fit are left exactly as written.
 */
import { wrapString } from './diagnostic.js';

export const HELP_WIDTH = 80;

const width = (s: string): number => [...s].length;

export function fitHelp(text: string, limit: number = HELP_WIDTH): string {
  const lines = text.split('\n');
  const out: string[] = [];
  for (let i = 0; i < lines.length;) {
    const line = lines[i]!;
    const column = /^( *\S(?:\S| (?! ))*) {2,}(?=\S)/.exec(line);
    if (!column) {
      out.push(...wrap(line.slice(0, lead(line)), line.slice(lead(line)), lead(line), limit));
      i += 1;
      continue;
    }
    const indent = column[0].length;
    let end = i + 1;
    while (end < lines.length && lead(lines[end]!) === indent && lines[end]!.trim() !== '') end += 1;
    const entry = lines.slice(i, end);
    if (entry.every((l) => width(l) <= limit)) out.push(...entry);
    else out.push(...wrap(line.slice(0, indent), entry.map((l) => l.slice(indent).trim()).join(' '), indent, limit));
    i = end;
  }
  return out.join('\n');
}

function lead(line: string): number {
  return /^ */.exec(line)![0].length;
}

/** `first` then `body` wrapped as diagnostics are (`wrapString`), continuation lines indented by `indent`. */
function wrap(first: string, body: string, indent: number, limit: number): string[] {
  if (width(first) + width(body) <= limit) return [first + body];
  return wrapString(body, limit - indent)
    .split('\n')
    .map((l, i) => (i === 0 ? first : ' '.repeat(indent)) + l);
}
