/**
 * Text to the terminal: the one rule (docs/reliability.md, "Names from
 * outside, text to the terminal").
 *
 * Human output is provkit's words with values in them, and many values come
 * from outside: a registry's or mirror's error text, file and directory names
 * of the tree being locked, configuration values, URLs. Before any of it is
 * written, every rune that is not printable is written as Go's `%q` writes it
 * (`\x1b`, `\r`, `\u202e`; src/go `goEscape`): no escape sequence reaches the
 * terminal (a screen clear, a window title), and no carriage return or line
 * break from outside starts a line that looks like provkit's (`- Retrieved …`,
 * `Success!`), whether the output is a terminal or a file.
 *
 * - {@link terminalLine}: a line of output (an event, a `- ROOT: …` line, a
 *   name, a summary): everything, line breaks included.
 * - {@link terminalText}: text whose line breaks are provkit's own (a
 *   diagnostic's detail, a summary with a list): line breaks and tabs stay.
 *   The line breaks a detail cannot tell apart from provkit's are those of
 *   an error's message, which is one line by construction (`ProvkitError`,
 *   src/errors.ts).
 *
 * Only the human renderers (src/ui/human.ts, diagnostic.ts, lock-tree.ts,
 * progress.ts, and the CLI's few lines of its own) call these; `-json`
 * writes the same values as JSON strings, unescaped (src/ui/json.ts).
 */
import { goEscape } from '../go/index.js';

/** A line of human output: every non-printable rune escaped, `\n` too. */
export function terminalLine(s: string): string {
  return goEscape(s);
}

/** Multi-line human text: every non-printable rune escaped except `\n` and `\t`. */
export function terminalText(s: string): string {
  return goEscape(s, '\n\t');
}
