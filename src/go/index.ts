/**
 * Go's semantics where provkit must reproduce the reference tools' bytes:
 * `strconv.Quote` (the `%q` verb), `strings.TrimSpace`, `path.Clean`,
 * `json.MarshalIndent` and Go's string order (UTF-8 bytes). The one place
 * for them: every layer above uses these, none keeps a copy.
 *
 * Pure: no I/O. The bottom layer (eslint.config.js): imports nothing of src/.
 */

// ---------------------------------------------------------------------------
// Strings

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

// ---------------------------------------------------------------------------
// Paths

/**
 * Go `path.Clean` (and `filepath.Clean` on Unix) for `/`-separated paths:
 * empty and `.` segments dropped, `..` resolved lexically (kept at the start
 * of a relative path), no trailing slash; `''` becomes `.`.
 */
export function goPathClean(p: string): string {
  if (p === '') return '.';
  const rooted = p.startsWith('/');
  const out: string[] = [];
  for (const seg of p.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      if (out.length > 0 && out[out.length - 1] !== '..') out.pop();
      else if (!rooted) out.push('..');
      continue;
    }
    out.push(seg);
  }
  const joined = out.join('/');
  if (rooted) return `/${joined}`;
  return joined === '' ? '.' : joined;
}

// ---------------------------------------------------------------------------
// JSON

/** A JSON value as Go's encoding/json sees it. */
export type GoJSON = null | boolean | number | string | readonly GoJSON[] | { readonly [key: string]: GoJSON };

/**
 * A string as Go's `encoding/json` writes it: JSON.stringify matches Go for
 * quotes, backslashes and control characters (Go ≥ 1.22 also writes \b and
 * \f); Go additionally escapes the HTML characters and the JavaScript line
 * separators (`go/src/encoding/json/encode.go`, `appendString`).
 */
export function goJSONString(s: string): string {
  return JSON.stringify(s).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * Go's `json.MarshalIndent(v, "", "  ")` for maps (keys sorted by bytes),
 * arrays and scalars: empty objects and arrays print as `{}` and `[]`; no
 * trailing newline. Objects given here are maps: their keys are sorted.
 */
export function goMarshalIndent(value: GoJSON, indent = ''): string {
  if (value === null || typeof value === 'boolean' || typeof value === 'number') return JSON.stringify(value);
  if (typeof value === 'string') return goJSONString(value);
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    const items = value as readonly GoJSON[];
    if (items.length === 0) return '[]';
    return `[\n${items.map((v) => inner + goMarshalIndent(v, inner)).join(',\n')}\n${indent}]`;
  }
  const obj = value as { readonly [key: string]: GoJSON };
  const keys = Object.keys(obj).sort(compareBytewise);
  if (keys.length === 0) return '{}';
  return `{\n${keys.map((k) => `${inner}${goJSONString(k)}: ${goMarshalIndent(obj[k]!, inner)}`).join(',\n')}\n${indent}}`;
}
