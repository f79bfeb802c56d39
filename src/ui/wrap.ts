/**
 * Lines of provkit's own (lists that are not diagnostics, such as `verify`'s
 * problems) fitted to a terminal: broken at spaces only, as the diagnostics'
 * word wrap breaks (src/ui/diagnostic.ts `wrapString`), with a hanging indent
 * so that a wrapped entry still reads as one entry of the list. Only on a
 * terminal: piped output keeps one line per entry (the caller decides).
 */

/** Columns of `s`, counted in code points as `wrapString` counts them. */
const width = (s: string): number => [...s].length;

/**
 * `text` wrapped to lines of at most `limit` columns, every line after the
 * first indented by `indent` spaces. Breaks only at spaces, so a provider
 * address, a URL, a path or a hash is never split: a word longer than the
 * room left starts a line of its own and, when longer than that line too,
 * stays whole and overflows it. The spaces at a break are dropped; a line
 * of exactly `limit` columns fits. A `\n` in `text` starts a new (indented)
 * line. `limit` of 0 or less: `text` unchanged.
 */
export function wrapHanging(text: string, limit: number, indent = 2): string {
  if (limit <= 0) return text;
  const pad = ' '.repeat(indent);
  const out: string[] = [];
  text.split('\n').forEach((paragraph, i) => {
    let line = i === 0 ? '' : pad;
    let used = width(line);
    let words = 0;
    for (const [, space = '', word = ''] of paragraph.matchAll(/( *)([^ ]+)/g)) {
      const w = width(word);
      if (words > 0 && used + width(space) + w > limit) {
        out.push(line);
        line = pad + word;
        used = indent + w;
      } else {
        // The first word of a line keeps the spaces before it (a paragraph's own indentation).
        line += space + word;
        used += width(space) + w;
      }
      words += 1;
    }
    out.push(words === 0 ? '' : line);
  });
  return out.join('\n');
}
