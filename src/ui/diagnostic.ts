/**
 * Diagnostics in the reference's human form, byte for byte: terraform's
 * `internal/command/format/diagnostic.go` (`Diagnostic` with colour and the
 * `│` rule, `DiagnosticPlain` without), the source snippet of
 * `internal/command/views/json/diagnostic.go` (`NewDiagnostic`), the word
 * wrapping of `mitchellh/go-wordwrap` v1.0.1 and the `[red]`-style colour
 * codes of `mitchellh/colorstring` (hashicorp/terraform v1.11.4; OpenTofu's
 * copies of these files render the same). Pure: the caller supplies the
 * source text of the file a diagnostic points into, or none ("source code
 * not available", as the reference shows the lock file's diagnostics).
 */
import type { DiagnosticRange, SourcePos } from '../errors.js';
import { parseHCL, parseJSON, type JsonValue, type Pos, type Range } from '../hcl/index.js';
import { terminalLine, terminalText } from './escape.js';

/** A source snippet (`viewsjson.DiagnosticSnippet`): whole lines around the subject. */
export interface DiagnosticSnippet {
  /** The enclosing top-level block (`terraform`, `provider "null"`; `provider.null` in JSON), when there is one. */
  readonly context: string | undefined;
  /** The lines, joined by `\n` (no trailing newline). */
  readonly code: string;
  /** The 1-based line number of the first line of `code`. */
  readonly startLine: number;
  /** Byte offsets of the highlighted subject within `code` (UTF-8). */
  readonly highlightStart: number;
  readonly highlightEnd: number;
}

/** What the formatter needs of a diagnostic (`viewsjson.Diagnostic`). */
export interface FormattableDiagnostic {
  readonly severity: 'error' | 'warning';
  readonly summary: string;
  readonly detail: string;
  /** The subject's file and start, when the diagnostic has one (no start: a file or directory as a whole). */
  readonly range?: { readonly filename: string; readonly start?: { readonly line: number } };
  /** What to do about it (provkit's; the reference has none): after the detail, as `Hint: …`. */
  readonly hint?: string;
  /** Undefined with a range: "(source code not available)". */
  readonly snippet?: DiagnosticSnippet;
}

// ---------------------------------------------------------------------------
// mitchellh/colorstring

/** `colorstring.DefaultColors` plus the `purple` terraform's `Meta.Colorize` adds. */
const COLORS: Readonly<Record<string, string>> = {
  default: '39',
  _default_: '49',
  black: '30',
  red: '31',
  green: '32',
  yellow: '33',
  blue: '34',
  magenta: '35',
  cyan: '36',
  light_gray: '37',
  dark_gray: '90',
  light_red: '91',
  light_green: '92',
  light_yellow: '93',
  light_blue: '94',
  light_magenta: '95',
  light_cyan: '96',
  white: '97',
  _black_: '40',
  _red_: '41',
  _green_: '42',
  _yellow_: '43',
  _blue_: '44',
  _magenta_: '45',
  _cyan_: '46',
  _light_gray_: '47',
  _dark_gray_: '100',
  _light_red_: '101',
  _light_green_: '102',
  _light_yellow_: '103',
  _light_blue_: '104',
  _light_magenta_: '105',
  _light_cyan_: '106',
  _white_: '107',
  bold: '1',
  dim: '2',
  underline: '4',
  blink_slow: '5',
  blink_fast: '6',
  invert: '7',
  hidden: '8',
  reset: '0',
  reset_bold: '21',
  purple: '38;5;57',
};

/**
 * `colorstring.Colorize{Reset: true}.Color`: every `[name]` of a known colour
 * becomes its escape sequence (or nothing when `enabled` is false; unknown
 * names stay as written), and a reset is appended when one was replaced.
 */
export function colorize(s: string, enabled: boolean): string {
  let colored = false;
  const out = s.replace(/\[[a-z0-9_-]+\]/gi, (m) => {
    const code = COLORS[m.slice(1, -1)];
    if (code === undefined) return m;
    colored = true;
    return enabled ? `\u001b[${code}m` : '';
  });
  return colored && enabled ? `${out}\u001b[0m` : out;
}

// ---------------------------------------------------------------------------
// mitchellh/go-wordwrap v1.0.1

/** Go's `unicode.IsSpace`. */
const isSpace = (c: string): boolean =>
  /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]$/u.test(c);

/**
 * `wordwrap.WrapString(s, lim)`: breaks at white space only (a word longer
 * than the limit overflows), counting code points; a line break drops the
 * spaces before it; non-breaking spaces are part of words.
 */
export function wrapString(s: string, lim: number): string {
  let buf = '';
  let current = 0;
  let word = '';
  let wordLen = 0;
  let space = '';
  let spaceLen = 0;
  // The pending spaces and word go onto the line.
  const flush = (): void => {
    current += spaceLen + wordLen;
    buf += space + word;
    space = '';
    spaceLen = 0;
    word = '';
    wordLen = 0;
  };
  for (const char of s) {
    if (char === '\n') {
      if (word.length === 0) {
        if (current + spaceLen > lim) current = 0;
        else {
          current += spaceLen;
          buf += space;
        }
        space = '';
        spaceLen = 0;
      } else flush();
      buf += char;
      current = 0;
    } else if (isSpace(char) && char !== '\u00a0') {
      if (space.length === 0 || word.length > 0) flush();
      space += char;
      spaceLen++;
    } else {
      word += char;
      wordLen++;
      if (current + wordLen + spaceLen > lim && wordLen < lim) {
        buf += '\n';
        current = 0;
        space = '';
        spaceLen = 0;
      }
    }
  }
  if (word.length === 0) {
    if (current + spaceLen <= lim) buf += space;
  } else {
    buf += space + word;
  }
  return buf;
}

// ---------------------------------------------------------------------------
// The snippet (views/json/diagnostic.go NewDiagnostic)

const utf8 = new TextDecoder('utf-8');

/** hcl.Range.Overlaps, on byte offsets. */
function overlaps(a: { start: number; end: number }, b: { start: number; end: number }): boolean {
  if (a.start === a.end || b.start === b.end) return false;
  const contains = (r: { start: number; end: number }, o: number): boolean => o >= r.start && o < r.end;
  return contains(a, b.start) || contains(a, b.end) || contains(b, a.start) || contains(b, a.end);
}

/**
 * A diagnostic's range as a complete source range (every position's line,
 * column and byte known, as a parser's are), or undefined: only those can
 * show a snippet.
 */
export function sourceRange(r: DiagnosticRange | undefined): Range | undefined {
  if (r?.start === undefined || r.end === undefined) return undefined;
  const complete = (p: SourcePos): Pos | undefined =>
    p.line > 0 && p.column !== undefined && p.byte !== undefined
      ? { line: p.line, column: p.column, byte: p.byte }
      : undefined;
  const start = complete(r.start);
  const end = complete(r.end);
  return start === undefined || end === undefined ? undefined : { filename: r.filename, start, end };
}

/**
 * The snippet of `subject` (HCL's `Subject`) in `src`, widened to `context`
 * (HCL's `Context`) when given: every non-empty line the range overlaps
 * (`hcl.RangeScanner` with `bufio.ScanLines`: a line's `\r` is dropped, and
 * an empty line overlaps nothing, so it is left out), and the enclosing
 * block's name (`hcled.ContextString` of the subject's first byte minus one).
 */
export function diagnosticSnippet(src: Uint8Array, subject: Range, context?: Range): DiagnosticSnippet {
  const hl = { start: subject.start, end: subject.end };
  let snip: { start: Pos; end: Pos } = context ? { start: context.start, end: context.end } : { ...hl };
  // hcl.RangeOver(snippet, highlight): either empty gives the other.
  if (snip.start.byte === snip.end.byte) snip = { ...hl };
  else if (hl.start.byte !== hl.end.byte) {
    snip = {
      start: snip.start.byte < hl.start.byte ? snip.start : hl.start,
      end: snip.end.byte > hl.end.byte ? snip.end : hl.end,
    };
  }
  const snipBytes = {
    start: snip.start.byte,
    end: snip.end.byte === snip.start.byte ? snip.end.byte + 1 : snip.end.byte,
  };
  const hlBytes = { start: hl.start.byte, end: hl.end.byte === hl.start.byte ? hl.end.byte + 1 : hl.end.byte };

  const parts: Uint8Array[] = [];
  let codeStart = 0;
  let first = true;
  for (let pos = 0; pos < src.length;) {
    let nl = src.indexOf(0x0a, pos);
    const next = nl < 0 ? src.length : nl + 1;
    if (nl < 0) nl = src.length;
    const end = nl > pos && src[nl - 1] === 0x0d ? nl - 1 : nl;
    if (overlaps({ start: pos, end }, snipBytes)) {
      if (first) codeStart = pos;
      first = false;
      parts.push(src.subarray(pos, end));
    }
    pos = next;
  }
  const code = joinLines(parts);
  const clamp = (n: number): number => Math.max(0, Math.min(n, code.length));
  const start = hlBytes.start - codeStart;
  const highlightStart = clamp(start);
  const highlightEnd = clamp(start + (hlBytes.end - hlBytes.start));
  return {
    context: contextString(src, subject.filename, hlBytes.start - 1),
    code: utf8.decode(code),
    startLine: snip.start.line,
    // Offsets into the UTF-8 code (formatDiagnostic slices the bytes).
    highlightStart,
    highlightEnd,
  };
}

function joinLines(parts: Uint8Array[]): Uint8Array {
  const total = parts.reduce((n, p) => n + p.length, 0) + Math.max(0, parts.length - 1);
  const out = new Uint8Array(total);
  let at = 0;
  parts.forEach((p, i) => {
    if (i > 0) out[at++] = 0x0a;
    out.set(p, at);
    at += p.length;
  });
  return out;
}

/**
 * `hcled.ContextString`: for the native syntax, the top-level block whose
 * range holds `offset` (`TYPE "LABEL"…`, hclsyntax/navigation.go); for JSON,
 * the path of object properties and array indexes down to the innermost
 * object or array holding it (`provider.null`, json/navigation.go).
 */
function contextString(src: Uint8Array, filename: string, offset: number): string | undefined {
  let s = '';
  if (filename.endsWith('.json')) {
    const { value } = parseJSON(src, filename);
    if (value) s = jsonSteps(value, offset).join('').replace(/^\./, '');
  } else {
    const block = parseHCL(src, filename).body.blocks.find(
      (b) => offset >= b.range.start.byte && offset < b.range.end.byte,
    );
    if (block) s = [block.type, ...block.labels.map((l) => JSON.stringify(l))].join(' ');
  }
  return s === '' ? undefined : s;
}

function jsonSteps(v: JsonValue, offset: number): string[] {
  const inside = (x: JsonValue): boolean =>
    (x.kind === 'object' || x.kind === 'array') && offset >= x.range.start.byte && offset < x.range.end.byte;
  if (v.kind === 'object') {
    const p = v.props.find((a) => inside(a.value));
    if (p) return [`.${p.name}`, ...jsonSteps(p.value, offset)];
  } else if (v.kind === 'array') {
    const i = v.items.findIndex(inside);
    if (i >= 0) return [`[${i}]`, ...jsonSteps(v.items[i]!, offset)];
  }
  return [];
}

// ---------------------------------------------------------------------------
// format.Diagnostic and format.DiagnosticPlain

/**
 * `appendSourceSnippets`: `  on FILE line N, in CONTEXT:` and the numbered lines, the subject underlined.
 * The file's name and lines are text from outside: escaped (src/ui/escape.ts), the colour codes added after.
 */
function sourceSnippet(d: FormattableDiagnostic, color: boolean): string {
  if (!d.range) return '';
  const filename = terminalLine(d.range.filename);
  // A file or directory as a whole (a root module of `lock -recursive`): provkit's, the reference has none.
  if (d.range.start === undefined) return `  on ${filename}:\n\n`;
  if (!d.snippet) return `  on ${filename} line ${d.range.start.line}:\n  (source code not available)\n\n`;
  const s = d.snippet;
  let out = `  on ${filename} line ${d.range.start.line}${s.context === undefined ? '' : `, in ${terminalLine(s.context)}`}:\n`;
  const bytes = new TextEncoder().encode(s.code);
  let start = s.highlightStart;
  let end = s.highlightEnd;
  if (end < start) end = Math.min(start + 1, bytes.length);
  start = Math.max(0, Math.min(start, bytes.length));
  end = Math.max(0, Math.min(end, bytes.length));
  // fmt.Sprintf(color.Color("%s[underline]%s[reset]%s"), …): the reset Color appends lands after the format.
  const [u, r, tail] = color ? ['\u001b[4m', '\u001b[0m', '\u001b[0m'] : ['', '', ''];
  const part = (from: number, to?: number): string => terminalText(utf8.decode(bytes.subarray(from, to)));
  const code = `${part(0, start)}${u}${part(start, end)}${r}${part(end)}${tail}`;
  code.split('\n').forEach((line, i) => {
    out += `${String(s.startLine + i).padStart(4)}: ${line}\n`;
  });
  return `${out}\n`;
}

/** The detail, and the hint after it when there is one, escaped (src/ui/escape.ts). */
function detailText(d: FormattableDiagnostic): string {
  const detail = terminalText(d.detail);
  if (d.hint === undefined) return detail;
  const hint = terminalText(d.hint);
  return detail === '' ? `Hint: ${hint}` : `${detail}\n\nHint: ${hint}`;
}

/** The detail, each line not starting with a space word-wrapped at `lim` (none when `lim` ≤ 0). */
function wrappedDetail(detail: string, lim: number): string {
  if (detail === '') return '';
  if (lim <= 0) return `${detail}\n`;
  return detail
    .split('\n')
    .map((line) => `${line.startsWith(' ') ? line : wrapString(line, lim)}\n`)
    .join('');
}

/**
 * `format.Diagnostic`: the coloured form with the `╷ │ ╵` rule, the detail
 * wrapped at `width - 3`. `color` false gives the same text without escape
 * sequences (the reference never prints that form: without colour it prints
 * {@link formatDiagnosticPlain}).
 */
export function formatDiagnostic(d: FormattableDiagnostic, color: boolean, width: number): string {
  const c = (s: string): string => colorize(s, color);
  const [head, ruleLine, ruleStart, ruleEnd] =
    d.severity === 'error'
      ? [c('[bold][red]Error: [reset]'), c('[red]│[reset] '), c('[red]╷[reset]'), c('[red]╵[reset]')]
      : [c('[bold][yellow]Warning: [reset]'), c('[yellow]│[reset] '), c('[yellow]╷[reset]'), c('[yellow]╵[reset]')];
  // fmt.Fprintf(&buf, color.Color("[bold]%s[reset]\n\n"), summary): the appended reset follows the newlines.
  const summary = terminalText(d.summary);
  let buf = `${head}${color ? `\u001b[1m${summary}\u001b[0m\n\n\u001b[0m` : `${summary}\n\n`}`;
  buf += sourceSnippet(d, color);
  buf += wrappedDetail(detailText(d), width - 2 - 1);
  // bufio.Scanner's lines: a final newline ends the last line; `\r` before a newline is dropped.
  const lines = buf.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const emptyRule = ruleLine.trim();
  return `${ruleStart}\n${lines
    .map((l) => l.replace(/\r$/, ''))
    .map((l) => `${l === '' ? emptyRule : ruleLine}${l}\n`)
    .join('')}${ruleEnd}\n`;
}

/** `format.DiagnosticPlain`: a blank line, `Error: SUMMARY`, the snippet, the detail wrapped at `width - 1`. */
export function formatDiagnosticPlain(d: FormattableDiagnostic, width: number): string {
  let buf = `\n${d.severity === 'error' ? 'Error' : 'Warning'}: ${terminalText(d.summary)}\n\n`;
  buf += sourceSnippet(d, false);
  const detail = detailText(d);
  buf += width > 1 ? wrappedDetail(detail, width - 1) : detail === '' ? '' : `${detail}\n`;
  return buf;
}

/**
 * `tfdiags.Diagnostics.Sort` (stable): warnings before errors, then those
 * without a subject, then by file (fewer path segments first, then name)
 * and the subject's start and end.
 */
export function sortDiagnostics<
  T extends { severity: 'error' | 'warning'; subject?: { filename: string; start: number; end: number } | undefined },
>(diags: readonly T[]): T[] {
  return [...diags].sort((a, b) => {
    if (a.severity !== b.severity) return a.severity === 'warning' ? -1 : 1;
    const x = a.subject;
    const y = b.subject;
    if ((x === undefined) !== (y === undefined)) return x === undefined ? -1 : 1;
    if (x === undefined || y === undefined) return 0;
    if (x.filename !== y.filename) {
      const segs = (f: string): number => f.split('/').length;
      if (segs(x.filename) !== segs(y.filename)) return segs(x.filename) - segs(y.filename);
      return x.filename < y.filename ? -1 : 1;
    }
    return x.start - y.start || x.end - y.end;
  });
}

/**
 * `tfdiags.Diagnostics.ConsolidateWarnings(threshold)` (hashicorp/terraform
 * v1.11.4 internal/tfdiags/consolidate_warnings.go), as `Meta.showDiagnostics`
 * and `views.View.Diagnostics` apply it with threshold 1 before printing:
 * warnings with a source location that share a summary are shown once, the
 * first of them, its detail ending `(and one more similar warning
 * elsewhere)` or `(and N more similar warnings elsewhere)`. Errors and
 * warnings about no location pass through. Pure; the order is kept.
 */
export function consolidateWarnings<
  T extends {
    readonly severity: 'error' | 'warning';
    readonly summary: string;
    readonly detail: string;
    readonly range?: { readonly start?: unknown } | undefined;
  },
>(diags: readonly T[], threshold = 1): T[] {
  const out: (T | { group: T[] })[] = [];
  const seen = new Map<string, number>();
  const groups = new Map<string, { group: T[] }>();
  for (const d of diags) {
    if (d.severity !== 'warning' || d.range?.start === undefined) {
      out.push(d);
      continue;
    }
    const g = groups.get(d.summary);
    if (g) {
      g.group.push(d);
      continue;
    }
    const n = (seen.get(d.summary) ?? 0) + 1;
    seen.set(d.summary, n);
    if (n === threshold) {
      const group = { group: [d] };
      groups.set(d.summary, group);
      out.push(group);
      continue;
    }
    out.push(d);
  }
  return out.map((x) => {
    if (!('group' in x)) return x;
    const [first, ...rest] = x.group as [T, ...T[]];
    if (rest.length === 0) return first;
    const more =
      rest.length === 1
        ? '(and one more similar warning elsewhere)'
        : `(and ${rest.length} more similar warnings elsewhere)`;
    return { ...first, detail: first.detail === '' ? more : `${first.detail}\n\n${more}` };
  });
}
