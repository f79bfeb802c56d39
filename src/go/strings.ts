/**
 * Go's string semantics where provkit must reproduce the reference tools'
 * bytes: `strings.TrimSpace`, `unicode.IsPrint`, `strconv.Quote` (the `%q`
 * verb) and Go's string order (UTF-8 bytes).
 *
 * Pure: no I/O.
 */

const GO_SPACE =
  /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+|[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/gu;

/**
 * Go's `strings.TrimSpace`: trims Unicode `White_Space` (which, unlike JS
 * `String.prototype.trim`, includes U+0085 and excludes U+FEFF).
 */
export function goTrimSpace(s: string): string {
  // Nothing to trim when both ends are printable ASCII (0x21-0x7e is no White_Space).
  const first = s.charCodeAt(0);
  const last = s.charCodeAt(s.length - 1);
  if (first > 0x20 && first < 0x7f && last > 0x20 && last < 0x7f) return s;
  return s.replace(GO_SPACE, '');
}

/**
 * Go's `unicode.IsPrint`: letters, marks, numbers, punctuation, symbols and the
 * ASCII space only (so U+00A0 and the other spaces are not printable).
 * Printable ASCII (0x20-0x7e) is all of those; the class, which costs ~0.4 ms
 * to build (more at start-up, before ICU is warm), is built for the first
 * other character. Used by {@link goQuote} and by hclwrite's quoting
 * (src/hcl/write.ts).
 */
let goPrintable: RegExp | undefined;
/** Go's `unicode.IsPrint`: whether the code point `cp` is printed as itself by `%q` (strconv.Quote). */
export function isGoPrint(cp: number): boolean {
  if (cp < 0x7f) return cp >= 0x20;
  if (cp < 0xa0) return false;
  return (goPrintable ??= /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u).test(String.fromCodePoint(cp));
}

/** One rune that Go's `%q` does not print as it is: its escape (`\n`, `\x1b`, `\u202e`, `\U0001f600`). */
function goEscapeRune(cp: number): string {
  switch (cp) {
    case 0x07:
      return '\\a';
    case 0x08:
      return '\\b';
    case 0x0c:
      return '\\f';
    case 0x0a:
      return '\\n';
    case 0x0d:
      return '\\r';
    case 0x09:
      return '\\t';
    case 0x0b:
      return '\\v';
    default:
      if (cp < 0x20 || cp === 0x7f) return '\\x' + cp.toString(16).padStart(2, '0');
      if (cp < 0x10000) return '\\u' + cp.toString(16).padStart(4, '0');
      return '\\U' + cp.toString(16).padStart(8, '0');
  }
}

/**
 * Go's `strconv.Quote` (the `%q` verb; `go/src/strconv/quote.go`): double
 * quotes, `\"` and `\\`, printable runes raw, others as
 * `\a \b \f \n \r \t \v`, `\xHH`, `\uHHHH` or `\UHHHHHHHH` (lower-case hex).
 * A lone UTF-16 surrogate, which Go cannot see, is written as U+FFFD.
 */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    let cp = ch.codePointAt(0) ?? 0xfffd;
    if (cp >= 0xd800 && cp <= 0xdfff) cp = 0xfffd;
    if (cp === 0x22 || cp === 0x5c) out += '\\' + ch;
    else out += isGoPrint(cp) ? String.fromCodePoint(cp) : goEscapeRune(cp);
  }
  return out + '"';
}

/**
 * `s` with every rune that is not printable (Go's `unicode.IsPrint`: control
 * characters, DEL, C1 controls, format characters such as U+202E, line and
 * paragraph separators) written as `%q` writes it (`\x1b`, `\r`, `\u202e`),
 * except the characters of `keep` (`"\n\t"`: line breaks and tabs stay), and
 * nothing else changed: no quotes added, `"` and `\` kept. The rule the
 * human renderer applies to everything it prints (src/ui/escape.ts).
 */
export function goEscape(s: string, keep = ''): string {
  // Fast path: printable ASCII needs nothing.
  if (/^[\x20-\x7e]*$/.test(s)) return s;
  let out = '';
  for (const ch of s) {
    let cp = ch.codePointAt(0) ?? 0xfffd;
    if (cp >= 0xd800 && cp <= 0xdfff) cp = 0xfffd;
    if (isGoPrint(cp) || keep.includes(ch)) out += String.fromCodePoint(cp);
    else out += goEscapeRune(cp);
  }
  return out;
}

/**
 * `s` on one line: its line breaks (`\n`, `\r`, `\v`, `\f`, U+0085, U+2028,
 * U+2029) written as `%q` writes them, everything else as it is.
 */
export function goOneLine(s: string): string {
  return /[\n\r\v\f\u0085\u2028\u2029]/.test(s)
    ? s.replace(/[\n\r\v\f\u0085\u2028\u2029]/g, (c) => goEscapeRune(c.codePointAt(0)!))
    : s;
}

/**
 * Compares two strings as Go compares them (`<`, `strings.Compare`,
 * `sort.Strings`): by their UTF-8 bytes, which is the same as comparing code
 * points (not UTF-16 code units, as JS `<` and the default `sort()` do).
 * Returns a negative number, zero or a positive number.
 */
export function compareBytewise(a: string, b: string): number {
  if (a === b) return 0;
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const ca = a.codePointAt(i) ?? 0;
    const cb = b.codePointAt(j) ?? 0;
    if (ca !== cb) return ca < cb ? -1 : 1;
    i += ca > 0xffff ? 2 : 1;
    j += cb > 0xffff ? 2 : 1;
  }
  if (i < a.length) return 1;
  if (j < b.length) return -1;
  return 0;
}
