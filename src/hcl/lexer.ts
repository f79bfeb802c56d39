/**
 * Lexer for the HCL native syntax (hashicorp/hcl `hclsyntax/spec.md`,
 * "Lexical Elements" and "Templates").
 *
 * Contract: {@link tokenize} accepts any bytes, never throws, runs in time
 * linear in the input, and returns a token list that always ends with one
 * `EOF` token. Problems that are purely lexical (a character the language
 * does not use, bad UTF-8, a bad escape sequence, a string broken by a
 * newline, an unterminated comment) are reported as diagnostics here; tokens
 * that such a diagnostic already covers are marked `reported` so that the
 * parser does not report them again.
 *
 * Like hclsyntax's scanner, the lexer is modal: the main (expression) mode,
 * the quoted-template mode and the heredoc-template mode. Interpolations
 * (`${`) and directives (`%{`) re-enter the main mode until their matching
 * `}` or `~}`, tracked with a brace counter so that object constructors
 * inside an interpolation nest correctly.
 *
 * Deliberate differences from hclsyntax (all on invalid input):
 * - A newline inside a quoted string ends the string (with an "Invalid
 *   multi-line string" error and a zero-width synthetic closing quote) rather
 *   than continuing it, so the following lines are parsed normally.
 * - Runs of characters the language does not use give one token and one
 *   diagnostic, not one per character.
 * - An unterminated `/*` comment is an error ("Unterminated comment") rather
 *   than a `/` and a `*` token.
 */

import { syntaxError } from './diagnostics.js';
import type { Diagnostic, Pos, Range } from './ast.js';

/** Token types. Names follow hclsyntax's `TokenType` constants without the `Token` prefix. */
export type TokenType =
  | 'OBrace'
  | 'CBrace'
  | 'OBrack'
  | 'CBrack'
  | 'OParen'
  | 'CParen'
  | 'OQuote'
  | 'CQuote'
  | 'OHeredoc'
  | 'CHeredoc'
  | 'Star'
  | 'Slash'
  | 'Plus'
  | 'Minus'
  | 'Percent'
  | 'Equal'
  | 'EqualOp'
  | 'NotEqual'
  | 'LessThan'
  | 'LessThanEq'
  | 'GreaterThan'
  | 'GreaterThanEq'
  | 'And'
  | 'Or'
  | 'Bang'
  | 'Dot'
  | 'Comma'
  | 'DoubleColon'
  | 'Ellipsis'
  | 'FatArrow'
  | 'Question'
  | 'Colon'
  | 'TemplateInterp'
  | 'TemplateControl'
  | 'TemplateSeqEnd'
  /** A literal part of a quoted template: `value` has escapes resolved. */
  | 'QuotedLit'
  /** A literal part of a heredoc template (one line at most): `value` has `$${`/`%%{` resolved. */
  | 'StringLit'
  | 'NumberLit'
  | 'Ident'
  | 'Newline'
  | 'EOF'
  // Not part of the language; recognized to give a precise diagnostic.
  | 'BitwiseAnd'
  | 'BitwiseOr'
  | 'BitwiseNot'
  | 'BitwiseXor'
  | 'Apostrophe'
  | 'Backtick'
  | 'Semicolon'
  | 'Invalid';

/** A token. `text` is the source text exactly as written. */
export interface Token {
  type: TokenType;
  range: Range;
  text: string;
  /** QuotedLit/StringLit: the literal's value. */
  value?: string;
  /** TemplateInterp/TemplateControl: opened with `~`. TemplateSeqEnd: closed with `~`. */
  strip?: boolean;
  /** OHeredoc: the closing marker and whether it is the `<<-` (flush) form. */
  heredoc?: { marker: string; flush: boolean };
  /** A lexical diagnostic already covers this token. */
  reported?: boolean;
  /** Made up by the lexer for recovery (a zero-width closing quote at a newline). */
  synthetic?: boolean;
}

/** A comment, kept for tools; the parser never sees comments. */
export interface Comment {
  style: '#' | '//' | '/*';
  /** The comment text including its markers, without the newline that ends a line comment. */
  text: string;
  range: Range;
}

/** The output of {@link tokenize}. */
export interface LexResult {
  tokens: Token[];
  comments: Comment[];
  diagnostics: Diagnostic[];
  source: SourceText;
}

// ---------------------------------------------------------------------------
// Source text and positions

const utf8 = new TextDecoder('utf-8');
const SEGMENT_WINDOW = 256;
/** Invalid-character diagnostics reported per file; further ones are implied (binary files would flood). */
const MAX_INVALID_REPORTS = 10;
const SEGMENT_LOOKAHEAD = 64;
/** Made on first use: creating it initialises ICU (~10 ms), which most runs (no diagnostics) never need. */
let graphemeSegmenter: Intl.Segmenter | null | undefined;
function graphemes(): Intl.Segmenter | null {
  graphemeSegmenter ??=
    typeof Intl !== 'undefined' && typeof Intl.Segmenter === 'function'
      ? new Intl.Segmenter(undefined, { granularity: 'grapheme' })
      : null;
  return graphemeSegmenter;
}

/**
 * The bytes of one source file with a byte-offset → line/column mapping.
 *
 * Lines are found once (linear); a position costs a binary search. Columns
 * count grapheme clusters like hclsyntax (which uses textseg); a line that is
 * pure ASCII takes a fast path, other lines are segmented once, lazily, and
 * cached. A line with invalid UTF-8 counts code points (a bad byte counts as
 * one character).
 */
export class SourceText {
  readonly bytes: Uint8Array;
  readonly filename: string;
  /** Byte offset where the content starts: 3 when a UTF-8 byte order mark is skipped. */
  readonly contentStart: number;
  private readonly lineStarts: number[];
  private readonly lineAscii: boolean[];
  private readonly clusterCache = new Map<number, number[]>();
  private lineHint = 0;

  constructor(bytes: Uint8Array, filename: string) {
    this.bytes = bytes;
    this.filename = filename;
    this.contentStart = bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
    const starts = [this.contentStart];
    const ascii: boolean[] = [];
    let isAscii = true;
    for (let i = this.contentStart; i < bytes.length; i++) {
      const b = bytes[i] as number;
      if (b === 0x0a) {
        ascii.push(isAscii);
        isAscii = true;
        starts.push(i + 1);
      } else if (b >= 0x80) {
        isAscii = false;
      }
    }
    ascii.push(isAscii);
    this.lineStarts = starts;
    this.lineAscii = ascii;
  }

  /** The source text between two byte offsets. */
  text(start: number, end: number): string {
    return utf8.decode(this.bytes.subarray(start, end));
  }

  /** The position of a byte offset (clamped to the file). */
  pos(byte: number): Pos {
    const b = Math.max(this.contentStart, Math.min(byte, this.bytes.length));
    const starts = this.lineStarts;
    let lo: number;
    // Positions are mostly asked for in source order: try the last line first.
    const hint = this.lineHint;
    if ((starts[hint] as number) <= b && (hint + 1 >= starts.length || (starts[hint + 1] as number) > b)) {
      lo = hint;
    } else if (hint + 2 < starts.length && (starts[hint + 1] as number) <= b && (starts[hint + 2] as number) > b) {
      lo = hint + 1;
    } else {
      lo = 0;
      let hi = starts.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if ((starts[mid] as number) <= b) lo = mid;
        else hi = mid - 1;
      }
    }
    this.lineHint = lo;
    const lineStart = starts[lo] as number;
    let column: number;
    if (this.lineAscii[lo] === true) {
      column = b - lineStart + 1;
    } else {
      const clusters = this.clusterStarts(lo);
      let l = 0;
      let h = clusters.length;
      while (l < h) {
        const m = (l + h) >> 1;
        if ((clusters[m] as number) < b) l = m + 1;
        else h = m;
      }
      column = l + 1;
    }
    return { line: lo + 1, column, byte: byte < 0 ? 0 : Math.min(byte, this.bytes.length) };
  }

  /** The range between two byte offsets. */
  range(start: number, end: number): Range {
    return { filename: this.filename, start: this.pos(start), end: this.pos(end) };
  }

  /** Byte offsets where the characters of a non-ASCII line start. */
  private clusterStarts(line: number): number[] {
    const cached = this.clusterCache.get(line);
    if (cached) return cached;
    const start = this.lineStarts[line] as number;
    const next = this.lineStarts[line + 1];
    const end = next === undefined ? this.bytes.length : next;
    const out: number[] = [];
    let valid = true;
    for (let i = start; i < end;) {
      const [cp, len] = decodeUtf8(this.bytes, i);
      if (cp < 0) valid = false;
      out.push(i);
      i += len;
    }
    const segmenter = valid ? graphemes() : null;
    if (segmenter) {
      out.length = 0;
      const lineText = utf8.decode(this.bytes.subarray(start, end));
      // V8's segment iterator slows down quadratically on long strings, so
      // segment in windows. Each window starts at a cluster boundary found by
      // the previous one (with lookahead past its end), which is a true
      // boundary: grapheme rules only look back within the current cluster.
      let offset = start;
      let from = 0;
      while (from < lineText.length) {
        const to = Math.min(lineText.length, from + SEGMENT_WINDOW + SEGMENT_LOOKAHEAD);
        const piece = lineText.slice(from, to);
        let next = lineText.length;
        let prevIndex = 0;
        for (const seg of segmenter.segment(piece)) {
          if (to < lineText.length && seg.index >= SEGMENT_WINDOW) {
            next = from + seg.index;
            break;
          }
          offset += utf8ByteLength(piece, prevIndex, seg.index);
          prevIndex = seg.index;
          out.push(offset);
        }
        offset += utf8ByteLength(piece, prevIndex, next - from);
        from = next;
      }
    }
    this.clusterCache.set(line, out);
    return out;
  }
}

/** UTF-8 byte length of `s.slice(from, to)` (surrogate pairs are 4 bytes). */
function utf8ByteLength(s: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < to) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/**
 * Decodes the UTF-8 sequence at `i`: `[codePoint, length]`, or `[-1, 1]` for
 * a byte that does not start a valid, shortest-form, non-surrogate sequence.
 */
export function decodeUtf8(bytes: Uint8Array, i: number): [number, number] {
  const b0 = bytes[i];
  if (b0 === undefined) return [-1, 1];
  if (b0 < 0x80) return [b0, 1];
  const cont = (k: number): number => {
    const b = bytes[i + k];
    return b !== undefined && (b & 0xc0) === 0x80 ? b & 0x3f : -1;
  };
  if (b0 >= 0xc2 && b0 <= 0xdf) {
    const c1 = cont(1);
    return c1 < 0 ? [-1, 1] : [((b0 & 0x1f) << 6) | c1, 2];
  }
  if (b0 >= 0xe0 && b0 <= 0xef) {
    const c1 = cont(1);
    const c2 = cont(2);
    if (c1 < 0 || c2 < 0) return [-1, 1];
    const cp = ((b0 & 0x0f) << 12) | (c1 << 6) | c2;
    if (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff)) return [-1, 1];
    return [cp, 3];
  }
  if (b0 >= 0xf0 && b0 <= 0xf4) {
    const c1 = cont(1);
    const c2 = cont(2);
    const c3 = cont(3);
    if (c1 < 0 || c2 < 0 || c3 < 0) return [-1, 1];
    const cp = ((b0 & 0x07) << 18) | (c1 << 12) | (c2 << 6) | c3;
    if (cp < 0x10000 || cp > 0x10ffff) return [-1, 1];
    return [cp, 4];
  }
  return [-1, 1];
}

// ---------------------------------------------------------------------------
// Character classes

// Built on first use: a Unicode property class costs ~0.5 ms to build (ICU),
// and most configurations are ASCII (bench/PROFILE.md "Stop 26").
let idStart: RegExp | undefined;
let idContinue: RegExp | undefined;

/** Identifier start per the spec: `ID_Start`, plus `_` as hclsyntax's scanner allows. */
export function isIdentStart(cp: number): boolean {
  if (cp < 0x80) return (cp >= 0x61 && cp <= 0x7a) || (cp >= 0x41 && cp <= 0x5a) || cp === 0x5f;
  return (idStart ??= /^\p{ID_Start}$/u).test(String.fromCodePoint(cp));
}

/** Identifier continuation per the spec: `ID_Continue` or `-`. */
export function isIdentContinue(cp: number): boolean {
  if (cp < 0x80) {
    return (
      (cp >= 0x61 && cp <= 0x7a) ||
      (cp >= 0x41 && cp <= 0x5a) ||
      (cp >= 0x30 && cp <= 0x39) ||
      cp === 0x5f ||
      cp === 0x2d
    );
  }
  return (idContinue ??= /^\p{ID_Continue}$/u).test(String.fromCodePoint(cp));
}

const isDigit = (b: number | undefined): boolean => b !== undefined && b >= 0x30 && b <= 0x39;
const hexValue = (b: number | undefined): number => {
  if (b === undefined) return -1;
  if (b >= 0x30 && b <= 0x39) return b - 0x30;
  if (b >= 0x61 && b <= 0x66) return b - 0x61 + 10;
  if (b >= 0x41 && b <= 0x46) return b - 0x41 + 10;
  return -1;
};

/** ASCII characters with a main-mode rule besides the single-character tokens in SIMPLE. */
const MAIN_ASCII = new Set(Array.from(' \t\n#/"<>=!&|:.{}~', (ch) => ch.charCodeAt(0)));

const SIMPLE: Record<number, TokenType> = {
  0x5b: 'OBrack',
  0x5d: 'CBrack',
  0x28: 'OParen',
  0x29: 'CParen',
  0x2c: 'Comma',
  0x2a: 'Star',
  0x2f: 'Slash',
  0x25: 'Percent',
  0x2b: 'Plus',
  0x2d: 'Minus',
  0x3f: 'Question',
  0x5e: 'BitwiseXor',
  0x3b: 'Semicolon',
  0x60: 'Backtick',
  0x27: 'Apostrophe',
};

// ---------------------------------------------------------------------------
// The lexer

type Mode =
  | {
      kind: 'main';
      /** Brace depth whose closing `}` ends the enclosing template sequence; -1 at top level. */
      closeAt: number;
    }
  | { kind: 'quoted'; open: Token }
  | { kind: 'heredoc'; marker: Uint8Array; startOfLine: boolean; open: Token };

/**
 * Splits HCL source into tokens. `source` may be bytes (any bytes at all) or
 * a string (encoded as UTF-8 first). A UTF-8 byte order mark at the start is
 * skipped, as hclsyntax does.
 */
export function tokenize(source: Uint8Array | string, filename: string): LexResult {
  const bytes = typeof source === 'string' ? new TextEncoder().encode(source) : source;
  const src = new SourceText(bytes, filename);
  return new Lexer(src).run();
}

class Lexer {
  private readonly b: Uint8Array;
  private readonly n: number;
  private i: number;
  private braces = 0;
  private readonly modes: Mode[] = [{ kind: 'main', closeAt: -1 }];
  private readonly tokens: Token[] = [];
  private readonly comments: Comment[] = [];
  private readonly diags: Diagnostic[] = [];
  private toldBadUtf8 = false;
  private toldBitwise = 0;
  private toldSemicolon = false;
  private toldApostrophe = false;
  private toldBacktick = false;
  private toldInvalid = 0;

  constructor(private readonly src: SourceText) {
    this.b = src.bytes;
    this.n = src.bytes.length;
    this.i = src.contentStart;
  }

  run(): LexResult {
    while (this.i < this.n) {
      const mode = this.modes[this.modes.length - 1] as Mode;
      const before = this.i;
      if (mode.kind === 'main') this.scanMain(mode);
      else if (mode.kind === 'quoted') this.scanQuoted();
      else this.scanHeredoc(mode);
      // Every step consumes input or leaves its mode; guard the invariant anyway.
      if (this.i === before && this.modes[this.modes.length - 1] === mode) this.i++;
    }
    this.emit('EOF', this.n, this.n);
    return { tokens: this.tokens, comments: this.comments, diagnostics: this.diags, source: this.src };
  }

  private emit(type: TokenType, start: number, end: number, extra?: Partial<Token>): Token {
    const tok: Token = { type, range: this.src.range(start, end), text: this.src.text(start, end) };
    if (extra) Object.assign(tok, extra);
    this.tokens.push(tok);
    return tok;
  }

  private error(summary: string, detail: string, start: number, end: number): void {
    this.diags.push(syntaxError(summary, detail, this.src.range(start, end)));
  }

  private badUtf8(at: number): void {
    if (this.toldBadUtf8) return;
    this.toldBadUtf8 = true;
    this.error(
      'Invalid character encoding',
      'All input files must be UTF-8 encoded. Ensure that UTF-8 encoding is selected in your editor.',
      at,
      at + 1,
    );
  }

  // --- main mode ------------------------------------------------------------

  private scanMain(mode: { kind: 'main'; closeAt: number }): void {
    const b = this.b;
    const i = this.i;
    const c = b[i] as number;
    const next = b[i + 1];
    switch (c) {
      case 0x20:
      case 0x09:
        this.i++;
        return;
      case 0x0a:
        this.emit('Newline', i, i + 1);
        this.i++;
        return;
      case 0x0d:
        if (next === 0x0a) {
          this.emit('Newline', i, i + 2);
          this.i += 2;
          return;
        }
        break;
      case 0x23: // #
        this.lineComment(i, '#');
        return;
      case 0x2f: // /
        if (next === 0x2f) {
          this.lineComment(i, '//');
          return;
        }
        if (next === 0x2a) {
          this.blockComment(i);
          return;
        }
        break;
      case 0x22: {
        // "
        const open = this.emit('OQuote', i, i + 1);
        this.i++;
        this.modes.push({ kind: 'quoted', open });
        return;
      }
      case 0x3c: // <
        if (next === 0x3c && this.heredocStart(i)) return;
        if (next === 0x3d) return this.two('LessThanEq');
        return void this.one('LessThan');
      case 0x3e:
        return next === 0x3d ? this.two('GreaterThanEq') : void this.one('GreaterThan');
      case 0x3d:
        if (next === 0x3d) return this.two('EqualOp');
        if (next === 0x3e) return this.two('FatArrow');
        return void this.one('Equal');
      case 0x21:
        return next === 0x3d ? this.two('NotEqual') : void this.one('Bang');
      case 0x26:
        if (next === 0x26) return this.two('And');
        this.bitwise(i, ' Did you mean boolean AND ("&&")?', 'BitwiseAnd');
        return;
      case 0x7c:
        if (next === 0x7c) return this.two('Or');
        this.bitwise(i, ' Did you mean boolean OR ("||")?', 'BitwiseOr');
        return;
      case 0x3a:
        return next === 0x3a ? this.two('DoubleColon') : void this.one('Colon');
      case 0x2e:
        if (next === 0x2e && b[i + 2] === 0x2e) {
          this.emit('Ellipsis', i, i + 3);
          this.i += 3;
          return;
        }
        return void this.one('Dot');
      case 0x7b:
        this.braces++;
        return void this.one('OBrace');
      case 0x7d:
        this.closeBrace(mode, i, i + 1, false);
        return;
      case 0x7e: // ~
        if (next === 0x7d) {
          this.closeBrace(mode, i, i + 2, true);
          return;
        }
        this.bitwise(i, ' Did you mean boolean NOT ("!")?', 'BitwiseNot');
        return;
      default:
        break;
    }
    if (isDigit(c)) {
      this.number(i);
      return;
    }
    const simple = SIMPLE[c];
    if (simple !== undefined) {
      const tok = this.one(simple);
      this.checkOddToken(tok);
      return;
    }
    const [cp, len] = decodeUtf8(b, i);
    if (cp >= 0 && isIdentStart(cp)) {
      this.ident(i, len);
      return;
    }
    this.invalidRun(i);
  }

  private one(type: TokenType): Token {
    const tok = this.emit(type, this.i, this.i + 1);
    this.i += 1;
    return tok;
  }

  private two(type: TokenType): void {
    this.emit(type, this.i, this.i + 2);
    this.i += 2;
  }

  private closeBrace(mode: { kind: 'main'; closeAt: number }, start: number, end: number, strip: boolean): void {
    if (mode.closeAt === this.braces && mode.closeAt >= 0) {
      this.emit('TemplateSeqEnd', start, end, { strip });
      this.braces--;
      this.modes.pop();
    } else {
      // A `~}` that closes an ordinary brace is still a TemplateSeqEnd, so that
      // the parser reports the mismatch (as hclsyntax does).
      this.emit(strip ? 'TemplateSeqEnd' : 'CBrace', start, end, strip ? { strip } : undefined);
      this.braces--;
    }
    this.i = end;
  }

  private bitwise(i: number, suggestion: string, type: TokenType): void {
    const tok = this.one(type);
    tok.reported = true;
    if (this.toldBitwise < 4) {
      this.toldBitwise++;
      this.error('Unsupported operator', `Bitwise operators are not supported.${suggestion}`, i, i + 1);
    }
  }

  private checkOddToken(tok: Token): void {
    const at = tok.range.start.byte;
    if (tok.type === 'BitwiseXor') {
      tok.reported = true;
      if (this.toldBitwise < 4) {
        this.toldBitwise++;
        this.error('Unsupported operator', 'Bitwise operators are not supported.', at, at + 1);
      }
    } else if (tok.type === 'Semicolon') {
      tok.reported = true;
      if (!this.toldSemicolon) {
        this.toldSemicolon = true;
        this.error(
          'Invalid character',
          'The ";" character is not valid. Use newlines to separate arguments and blocks, and commas to separate items in collection values.',
          at,
          at + 1,
        );
      }
    } else if (tok.type === 'Apostrophe') {
      tok.reported = true;
      if (!this.toldApostrophe) {
        this.toldApostrophe = true;
        this.error(
          'Invalid character',
          'Single quotes are not valid. Use double quotes (") to enclose strings.',
          at,
          at + 1,
        );
      }
    } else if (tok.type === 'Backtick') {
      tok.reported = true;
      if (!this.toldBacktick) {
        this.toldBacktick = true;
        this.error(
          'Invalid character',
          'The "`" character is not valid. To create a multi-line string, use the "heredoc" syntax, like "<<EOT".',
          at,
          at + 1,
        );
      }
    }
  }

  /** A run of characters the language does not use, or of bad UTF-8: one token, one diagnostic. */
  private invalidRun(start: number): void {
    const b = this.b;
    let i = start;
    let bad = false;
    do {
      const [cp, len] = decodeUtf8(b, i);
      if (cp < 0) bad = true;
      i += len;
    } while (i < this.n && !this.startsToken(i));
    const tok = this.emit('Invalid', start, i, { reported: true });
    if (bad) {
      if (!this.toldBadUtf8) {
        this.toldBadUtf8 = true;
        this.diags.push(
          syntaxError(
            'Invalid character encoding',
            'All input files must be UTF-8 encoded. Ensure that UTF-8 encoding is selected in your editor.',
            tok.range,
          ),
        );
      }
    } else if (this.toldInvalid < MAX_INVALID_REPORTS) {
      this.toldInvalid++;
      this.diags.push(syntaxError('Invalid character', 'This character is not used within the language.', tok.range));
    }
    this.i = i;
  }

  /** Whether the main mode has a rule (other than "invalid") for the character at `i`. */
  private startsToken(i: number): boolean {
    const c = this.b[i] as number;
    if (c < 0x80) {
      if (c === 0x0d) return this.b[i + 1] === 0x0a;
      return MAIN_ASCII.has(c) || SIMPLE[c] !== undefined || isIdentStart(c) || isDigit(c);
    }
    const [cp] = decodeUtf8(this.b, i);
    return cp >= 0 && isIdentStart(cp);
  }

  private lineComment(start: number, style: '#' | '//'): void {
    const b = this.b;
    let i = start;
    while (i < this.n && b[i] !== 0x0a) i++;
    let textEnd = i;
    if (i < this.n && textEnd > start && b[textEnd - 1] === 0x0d) textEnd--;
    this.comments.push({ style, text: this.src.text(start, textEnd), range: this.src.range(start, textEnd) });
    // A line comment is equivalent to a newline (spec "Comments and Whitespace"):
    // the newline that ends it stays a Newline token.
    this.i = textEnd;
  }

  private blockComment(start: number): void {
    const b = this.b;
    let i = start + 2;
    while (i < this.n && !(b[i] === 0x2a && b[i + 1] === 0x2f)) i++;
    if (i >= this.n) {
      this.error(
        'Unterminated comment',
        'There is no closing marker ("*/") for this comment before the end of the file.',
        start,
        start + 2,
      );
      this.comments.push({ style: '/*', text: this.src.text(start, this.n), range: this.src.range(start, this.n) });
      this.i = this.n;
      return;
    }
    this.comments.push({ style: '/*', text: this.src.text(start, i + 2), range: this.src.range(start, i + 2) });
    this.i = i + 2;
  }

  /**
   * NumberLit per hclsyntax's scanner: a digit followed by digits, `.`, and
   * exponent marks (`e`/`E`, optional sign, digit), not ending with `.`.
   * Malformed numbers such as `1.2.3` become one token that the parser then
   * reports as an invalid number literal; `foo.0.1` thus lexes `0.1` as one
   * number, which is why the legacy index syntax cannot be chained (spec).
   */
  private number(start: number): void {
    const b = this.b;
    let i = start + 1;
    let end = i;
    for (;;) {
      const c = b[i];
      if (isDigit(c)) {
        i++;
        end = i;
      } else if (c === 0x2e) {
        i++;
      } else if (
        (c === 0x65 || c === 0x45) &&
        (isDigit(b[i + 1]) || ((b[i + 1] === 0x2b || b[i + 1] === 0x2d) && isDigit(b[i + 2])))
      ) {
        i += isDigit(b[i + 1]) ? 2 : 3;
        end = i;
      } else {
        break;
      }
    }
    this.emit('NumberLit', start, end);
    this.i = end;
  }

  private ident(start: number, firstLen: number): void {
    const b = this.b;
    let i = start + firstLen;
    while (i < this.n) {
      const c = b[i] as number;
      if (c < 0x80) {
        if (!isIdentContinue(c)) break;
        i++;
        continue;
      }
      const [cp, len] = decodeUtf8(b, i);
      if (cp < 0 || !isIdentContinue(cp)) break;
      i += len;
    }
    this.emit('Ident', start, i);
    this.i = i;
  }

  /** `<<EOT` or `<<-EOT` immediately followed by a newline; otherwise not a heredoc (returns false). */
  private heredocStart(start: number): boolean {
    const b = this.b;
    let i = start + 2;
    const flush = b[i] === 0x2d;
    if (flush) i++;
    const markerStart = i;
    const [cp0, len0] = decodeUtf8(b, i);
    if (cp0 < 0 || !isIdentStart(cp0)) return false;
    i += len0;
    while (i < this.n) {
      const [cp, len] = decodeUtf8(b, i);
      if (cp < 0 || !isIdentContinue(cp)) break;
      i += len;
    }
    const markerEnd = i;
    let nl = i;
    if (b[nl] === 0x0d) nl++;
    if (b[nl] !== 0x0a) return false;
    const marker = b.slice(markerStart, markerEnd);
    const open = this.emit('OHeredoc', start, markerEnd, {
      heredoc: { marker: this.src.text(markerStart, markerEnd), flush },
    });
    this.i = nl + 1;
    this.modes.push({ kind: 'heredoc', marker, startOfLine: true, open });
    return true;
  }

  // --- template modes -------------------------------------------------------

  /** `${`, `${~`, `%{`, `%{~` at `i`, entering the main mode. */
  private templateSeqStart(i: number): void {
    const strip = this.b[i + 2] === 0x7e;
    const end = i + (strip ? 3 : 2);
    this.emit(this.b[i] === 0x24 ? 'TemplateInterp' : 'TemplateControl', i, end, { strip });
    this.braces++;
    this.modes.push({ kind: 'main', closeAt: this.braces });
    this.i = end;
  }

  private scanQuoted(): void {
    const b = this.b;
    const start = this.i;
    const c = b[start] as number;
    if (c === 0x22) {
      this.emit('CQuote', start, start + 1);
      this.modes.pop();
      this.i++;
      return;
    }
    if ((c === 0x24 || c === 0x25) && b[start + 1] === 0x7b) {
      this.templateSeqStart(start);
      return;
    }
    if (c === 0x0a || c === 0x0d) {
      this.error(
        'Invalid multi-line string',
        'Quoted strings may not be split over multiple lines. To produce a multi-line string, either use the \\n escape to represent a newline character or use the "heredoc" multi-line template syntax.',
        start,
        start + 1,
      );
      this.emit('CQuote', start, start, { synthetic: true, reported: true });
      this.modes.pop();
      if (c === 0x0d && b[start + 1] !== 0x0a) this.i++; // a lone CR: skip it rather than report it again
      return;
    }
    // A literal run: up to a quote, a newline, or a template sequence.
    let value = '';
    let runStart = start;
    let i = start;
    const flush = (upTo: number): void => {
      if (upTo > runStart) value += this.src.text(runStart, upTo);
    };
    while (i < this.n) {
      const ch = b[i] as number;
      if (ch === 0x22 || ch === 0x0a || ch === 0x0d) break;
      if (ch === 0x24 || ch === 0x25) {
        if (b[i + 1] === 0x7b) break;
        if (b[i + 1] === ch && b[i + 2] === 0x7b) {
          // `$${` and `%%{` are the escapes for a literal `${` and `%{`.
          flush(i);
          value += String.fromCharCode(ch) + '{';
          i += 3;
          runStart = i;
          continue;
        }
        i++;
        continue;
      }
      if (ch === 0x5c) {
        flush(i);
        i = this.escape(i, (s) => (value += s));
        runStart = i;
        continue;
      }
      if (ch >= 0x80) {
        const [cp, len] = decodeUtf8(b, i);
        if (cp < 0) {
          flush(i);
          this.badUtf8(i);
          value += '\uFFFD';
          i++;
          runStart = i;
          continue;
        }
        i += len;
        continue;
      }
      i++;
    }
    flush(i);
    this.emit('QuotedLit', start, i, { value });
    this.i = i;
  }

  /** A backslash escape at `i` (spec "Template Expressions"); returns the offset after it. */
  private escape(i: number, out: (s: string) => void): number {
    const b = this.b;
    const sel = b[i + 1];
    const bad = (detail: string, end: number): void => this.error('Invalid escape sequence', detail, i, end);
    if (sel === undefined || sel === 0x0a || sel === 0x0d) {
      bad('Backslash must be followed by an escape sequence selector character.', i + 1);
      return i + 1;
    }
    switch (sel) {
      case 0x6e:
        out('\n');
        return i + 2;
      case 0x72:
        out('\r');
        return i + 2;
      case 0x74:
        out('\t');
        return i + 2;
      case 0x22:
        out('"');
        return i + 2;
      case 0x5c:
        out('\\');
        return i + 2;
      case 0x75: // \uNNNN
      case 0x55: {
        // \UNNNNNNNN
        const want = sel === 0x75 ? 4 : 8;
        let cp = 0;
        let k = 0;
        while (k < want) {
          const h = hexValue(b[i + 2 + k]);
          if (h < 0) break;
          cp = cp * 16 + h;
          k++;
        }
        const end = i + 2 + k;
        if (k !== want) {
          bad(
            sel === 0x75
              ? 'The \\u escape sequence must be followed by four hexadecimal digits.'
              : 'The \\U escape sequence must be followed by eight hexadecimal digits.',
            end,
          );
          out(this.src.text(i, end));
          return end;
        }
        if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
          bad(`Cannot encode character U+${cp.toString(16).padStart(4, '0')} in UTF-8.`, end);
          out(this.src.text(i, end));
          return end;
        }
        out(String.fromCodePoint(cp));
        return end;
      }
      default: {
        const [cp, len] = decodeUtf8(b, i + 1);
        const sym = cp < 0 ? '\uFFFD' : String.fromCodePoint(cp);
        bad(`The symbol ${JSON.stringify(sym)} is not a valid escape sequence selector.`, i + 1 + len);
        out(sym);
        return i + 1 + len;
      }
    }
  }

  private scanHeredoc(mode: { kind: 'heredoc'; marker: Uint8Array; startOfLine: boolean; open: Token }): void {
    const b = this.b;
    const start = this.i;
    if (mode.startOfLine) {
      // Is this line the closing marker? Surrounding whitespace is allowed on
      // it (for `<<` as well as `<<-`, as in hclsyntax), and it must be
      // followed by a newline: the spec's grammar ends a heredoc with
      // `Identifier Newline`, and Terraform rejects a marker at end of file.
      let lineEnd = start;
      while (lineEnd < this.n && b[lineEnd] !== 0x0a) lineEnd++;
      if (lineEnd < this.n) {
        let s = start;
        let e = lineEnd;
        while (s < e && isAsciiSpace(b[s] as number)) s++;
        while (e > s && isAsciiSpace(b[e - 1] as number)) e--;
        if (e - s === mode.marker.length && bytesEqual(b, s, mode.marker)) {
          this.emit('CHeredoc', s, e);
          const nlStart = b[lineEnd - 1] === 0x0d ? lineEnd - 1 : lineEnd;
          this.emit('Newline', nlStart, lineEnd + 1);
          this.modes.pop();
          this.i = lineEnd + 1;
          return;
        }
      }
    }
    const c = b[start] as number;
    if ((c === 0x24 || c === 0x25) && b[start + 1] === 0x7b) {
      mode.startOfLine = false;
      this.templateSeqStart(start);
      return;
    }
    // A literal run to the end of the line (newline included) or a template sequence.
    let value = '';
    let runStart = start;
    let i = start;
    let endedLine = false;
    while (i < this.n) {
      const ch = b[i] as number;
      if (ch === 0x0a) {
        i++;
        endedLine = true;
        break;
      }
      if (ch === 0x24 || ch === 0x25) {
        if (b[i + 1] === 0x7b) break;
        if (b[i + 1] === ch && b[i + 2] === 0x7b) {
          if (i > runStart) value += this.src.text(runStart, i);
          value += String.fromCharCode(ch) + '{';
          i += 3;
          runStart = i;
          continue;
        }
        i++;
        continue;
      }
      if (ch >= 0x80) {
        const [cp, len] = decodeUtf8(b, i);
        if (cp < 0) {
          if (i > runStart) value += this.src.text(runStart, i);
          this.badUtf8(i);
          value += '\uFFFD';
          i++;
          runStart = i;
          continue;
        }
        i += len;
        continue;
      }
      i++;
    }
    if (i > runStart) value += this.src.text(runStart, i);
    this.emit('StringLit', start, i, { value });
    mode.startOfLine = endedLine;
    this.i = i;
  }
}

function isAsciiSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0b || c === 0x0c;
}

function bytesEqual(b: Uint8Array, at: number, want: Uint8Array): boolean {
  for (let k = 0; k < want.length; k++) if (b[at + k] !== want[k]) return false;
  return true;
}
