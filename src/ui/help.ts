/**
 * Help text fitted to 80 columns, as terraform's and tofu's help fits a
 * standard terminal. An entry (a flag or variable line whose description
 * starts after a run of two or more spaces, with the lines indented to that
 * column below it) that has a line longer than `width` is reflowed as one
 * paragraph, its continuation lines indented to the description column; any
 * other long line is wrapped at spaces with its own indentation. A word
 * longer than the room left (a `KEY=VALUE` list) stays whole on its line.
 * Entries that fit are left exactly as written.
 */
export const HELP_WIDTH = 80;

const width = (s: string): number => [...s].length;

export function fitHelp(text: string, limit: number = HELP_WIDTH): string {
  const lines = text.split('\n');
  const out: string[] = [];
  for (let i = 0; i < lines.length; ) {
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
    else out.push(...wrap(line.slice(0, indent), entry.map((l) => l.slice(lead(l) === indent && l !== line ? indent : indent).trim()).join(' '), indent, limit));
    i = end;
  }
  return out.join('\n');
}

function lead(line: string): number {
  return /^ */.exec(line)![0].length;
}

/** `first` then the words of `body`, lines of at most `limit` columns, continuations indented by `indent`. */
function wrap(first: string, body: string, indent: number, limit: number): string[] {
  if (width(first) + width(body) <= limit) return [first + body];
  const out: string[] = [];
  let current = first;
  let empty = true;
  for (const word of body.split(' ').filter((w) => w !== '')) {
    if (!empty && width(current) + 1 + width(word) > limit) {
      out.push(current);
      current = ' '.repeat(indent);
      empty = true;
    }
    current += empty ? word : ` ${word}`;
    empty = false;
  }
  out.push(current);
  return out;
}
