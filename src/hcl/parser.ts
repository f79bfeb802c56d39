/**
 * Recursive-descent parser for the HCL native syntax (hashicorp/hcl
 * `hclsyntax/spec.md`), over the tokens of {@link tokenize}.
 *
 * Contract: {@link parseTokens} never throws and always terminates; for any
 * input it returns a structurally sound {@link Body} plus diagnostics. Parsing
 * is linear in the number of tokens (error recovery only ever moves forward).
 *
 * Error handling follows hclsyntax: the first syntax error switches the
 * parser into "recovery" mode, in which further syntax errors are not
 * reported (they are usually consequences of the first, as the parser resyncs
 * heuristically); lexical errors and "Attribute redefined" are always
 * reported. Diagnostic summaries and details are worded as hclsyntax words
 * them, so a user sees what Terraform/OpenTofu would say.
 *
 * Nesting is bounded ({@link MAX_NESTING}) so that hostile input cannot
 * overflow the call stack: past the limit, parsing stops with a diagnostic.
 */

import { syntaxError } from './diagnostics.js';
import type {
  AnonSymbolExpr,
  Attribute,
  BinaryOperator,
  Block,
  Body,
  Diagnostic,
  Expression,
  ForExpr,
  InvalidExpr,
  ObjectConsExpr,
  ObjectKeyExpr,
  Range,
  TemplateExpr,
  TemplateWrapExpr,
  Traverser,
  TupleConsExpr,
} from './ast.js';
import type { Token, TokenType } from './lexer.js';
import { nameSuggestion } from '../go/index.js';

/** Maximum nesting of blocks and expressions; deeper input is rejected with "Nesting too deep". */
export const MAX_NESTING = 256;

/** Binary operators by precedence level, lowest first (spec "Operations"). */
const BINARY_LEVELS: ReadonlyArray<Partial<Record<TokenType, BinaryOperator>>> = [
  { Or: '||' },
  { And: '&&' },
  { EqualOp: '==', NotEqual: '!=' },
  { LessThan: '<', GreaterThan: '>', LessThanEq: '<=', GreaterThanEq: '>=' },
  { Plus: '+', Minus: '-' },
  { Star: '*', Slash: '/', Percent: '%' },
];

const OPPOSITE: Partial<Record<TokenType, TokenType>> = {
  OBrace: 'CBrace',
  OBrack: 'CBrack',
  OParen: 'CParen',
  OQuote: 'CQuote',
  OHeredoc: 'CHeredoc',
  CBrace: 'OBrace',
  CBrack: 'OBrack',
  CParen: 'OParen',
  CQuote: 'OQuote',
  CHeredoc: 'OHeredoc',
  TemplateInterp: 'TemplateSeqEnd',
  TemplateControl: 'TemplateSeqEnd',
  TemplateSeqEnd: 'TemplateInterp',
};

const NUMBER_RE = /^[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?$/;

/** Renders a range as hcl.Range.String() does: `file:line,col-col` or `file:line,col-line,col`. */
export function rangeString(r: Range): string {
  return r.start.line === r.end.line
    ? `${r.filename}:${r.start.line},${r.start.column}-${r.end.column}`
    : `${r.filename}:${r.start.line},${r.start.column}-${r.end.line},${r.end.column}`;
}

/** The smallest range covering both `a` and `b` (which must be in order). */
export function rangeBetween(a: Range, b: Range): Range {
  return { filename: a.filename, start: a.start, end: b.end };
}

function emptyRangeAt(r: Range, atEnd: boolean): Range {
  const p = atEnd ? r.end : r.start;
  return { filename: r.filename, start: p, end: p };
}

/** Options of {@link parseTokens}. */
export interface ParseOptions {
  /**
   * Accept quoted attribute names (`"hashicorp/null" = "/path"`), as HCL 1
   * does. Terraform and OpenTofu read the CLI configuration (`.terraformrc`,
   * `*.tfrc`) with HCL 1, and its `dev_overrides` block is written that way.
   * Off by default: the native syntax reports "Invalid argument name".
   */
  quotedAttributeNames?: boolean;
}

/** Parses a whole configuration file (spec "Configuration Files"). */
export function parseTokens(
  tokens: readonly Token[],
  options: ParseOptions = {},
): { body: Body; diagnostics: Diagnostic[] } {
  const p = new Parser(tokens, options.quotedAttributeNames === true);
  const body = p.parseBody('EOF');
  return { body, diagnostics: p.diags };
}

class NestingError extends Error {}

/** hclsyntax's template "tokens": literal, interpolation, and directive markers. */
type TemplatePart =
  | { t: 'lit'; value: string; range: Range }
  | { t: 'interp'; expr: Expression; range: Range }
  | { t: 'if'; cond: Expression; range: Range }
  | { t: 'for'; keyVar: string; valueVar: string; coll: Expression; range: Range }
  | { t: 'end'; which: 'else' | 'endif' | 'endfor'; range: Range };

class Parser {
  readonly diags: Diagnostic[] = [];
  private pos = 0;
  private readonly includeNewlines: boolean[] = [true];
  /** See the module comment: once set, syntax errors are no longer reported. */
  private recovery = false;
  private depth = 0;
  private aborted = false;
  private readonly eof: Token;

  constructor(
    private readonly tokens: readonly Token[],
    private readonly quotedAttributeNames: boolean,
  ) {
    const last = tokens[tokens.length - 1];
    if (!last || last.type !== 'EOF') throw new Error('token list must end with EOF');
    this.eof = last;
  }

  // --- peeker -----------------------------------------------------------------

  /** Memo of the last skip over newlines, so repeated peeks stay O(1). */
  private skipFrom = -1;
  private skipTo = -1;

  private nextIndex(): number {
    if (this.aborted) return this.tokens.length - 1;
    const skipNewlines = !(this.includeNewlines[this.includeNewlines.length - 1] ?? true);
    let i = Math.min(this.pos, this.tokens.length - 1);
    if (skipNewlines && this.tokens[i]?.type === 'Newline') {
      if (this.skipFrom === i) return this.skipTo;
      const from = i;
      while (this.tokens[i]?.type === 'Newline') i++;
      i = Math.min(i, this.tokens.length - 1);
      this.skipFrom = from;
      this.skipTo = i;
    }
    return i;
  }

  private peek(): Token {
    return this.tokens[this.nextIndex()] ?? this.eof;
  }

  private read(): Token {
    const i = this.nextIndex();
    const tok = this.tokens[i] ?? this.eof;
    // Reading EOF moves past it (so prevRange() is EOF's); peeking stays clamped to it.
    this.pos = i + 1;
    return tok;
  }

  /** Range of the last token read (or of the first token, before any read). */
  private prevRange(): Range {
    return (this.tokens[Math.min(this.pos, this.tokens.length) - 1] ?? this.tokens[0] ?? this.eof).range;
  }

  private withNewlines<T>(include: boolean, fn: () => T): T {
    this.includeNewlines.push(include);
    try {
      return fn();
    } finally {
      this.includeNewlines.pop();
    }
  }

  /**
   * Runs `fn` one nesting level deeper. Past {@link MAX_NESTING} levels it
   * reports "Nesting too deep", makes the peeker see only EOF from then on,
   * and throws {@link NestingError}, which the top-level body catches.
   */
  private nested<T>(fn: () => T): T {
    this.deepen();
    try {
      return fn();
    } finally {
      this.depth--;
    }
  }

  /** Adds one nesting level (the caller must undo it), enforcing the limit. */
  private deepen(): void {
    if (this.depth >= MAX_NESTING) {
      if (!this.aborted) {
        this.aborted = true;
        const at = this.tokens[Math.min(this.pos, this.tokens.length - 1)] ?? this.eof;
        this.diags.push(
          syntaxError(
            'Nesting too deep',
            `Blocks and expressions may be nested at most ${MAX_NESTING} levels deep; parsing stopped here.`,
            at.range,
          ),
        );
      }
      throw new NestingError();
    }
    this.depth++;
  }

  // --- diagnostics and recovery --------------------------------------------

  private error(summary: string, detail: string, range: Range, context?: Range): void {
    this.diags.push(syntaxError(summary, detail, range, context));
  }

  /** Reports a syntax error unless in recovery or the lexer already reported the token. */
  private syntaxError(tok: Token | null, summary: string, detail: string, range: Range, context?: Range): void {
    if (!this.recovery && !(tok?.reported ?? false)) this.error(summary, detail, range, context);
  }

  /**
   * Skips to the token `end`, counting nested pairs of its opposite; returns
   * that token (or EOF), the peeker left after it.
   */
  private recover(end: TokenType): Token {
    const start = OPPOSITE[end];
    this.recovery = true;
    let nest = 0;
    for (;;) {
      const tok = this.read();
      let ty = tok.type;
      if (end === 'TemplateSeqEnd' && ty === 'TemplateControl') ty = 'TemplateInterp';
      if (ty === start) nest++;
      else if (ty === end) {
        if (nest < 1) return tok;
        nest--;
      } else if (ty === 'EOF') return tok;
    }
  }

  /** Skips to after the bracketed construct starting with the next `start` token. */
  private recoverOver(start: TokenType): void {
    const end = OPPOSITE[start] ?? 'EOF';
    for (;;) {
      const tok = this.read();
      if (tok.type === start || tok.type === 'EOF') break;
    }
    this.recover(end);
  }

  /** Skips to the newline that ends the current body item, honouring brackets. */
  private recoverAfterBodyItem(): void {
    this.recovery = true;
    const open: TokenType[] = [];
    for (;;) {
      const tok = this.read();
      switch (tok.type) {
        case 'Newline':
          if (open.length === 0) return;
          break;
        case 'EOF':
          return;
        case 'OBrace':
        case 'OBrack':
        case 'OParen':
        case 'OQuote':
        case 'OHeredoc':
        case 'TemplateInterp':
        case 'TemplateControl':
          open.push(tok.type);
          break;
        case 'CBrace':
        case 'CBrack':
        case 'CParen':
        case 'CQuote':
        case 'CHeredoc': {
          const opener = OPPOSITE[tok.type];
          while (open.length > 0 && open[open.length - 1] !== opener) open.pop();
          if (open.length > 0) open.pop();
          break;
        }
        case 'TemplateSeqEnd':
          while (
            open.length > 0 &&
            open[open.length - 1] !== 'TemplateInterp' &&
            open[open.length - 1] !== 'TemplateControl'
          ) {
            open.pop();
          }
          if (open.length > 0) open.pop();
          break;
        default:
          break;
      }
    }
  }

  // --- structure ---------------------------------------------------------------

  /** Parses a body up to `end`; the top-level call (EOF) also absorbs the nesting limit. */
  parseBody(end: 'EOF' | 'CBrace'): Body {
    const attributes: Attribute[] = [];
    const blocks: Block[] = [];
    const byName = new Map<string, Attribute>();
    const startRange = this.pos === 0 ? emptyRangeAt((this.tokens[0] ?? this.eof).range, false) : this.prevRange();
    let endRange: Range;
    for (;;) {
      const next = this.peek();
      if (next.type === end) {
        endRange = next.range;
        this.read();
        break;
      }
      if (next.type === 'Newline') {
        this.read();
        continue;
      }
      if (next.type === 'Ident' || (next.type === 'OQuote' && this.quotedAttributeNames)) {
        let item: Attribute | Block | null;
        try {
          item = this.parseBodyItem();
        } catch (e) {
          // Past the nesting limit: the parser is now aborted (it sees only
          // EOF), and the top-level body keeps the items parsed before.
          if (!(e instanceof NestingError) || this.depth > 0) throw e;
          continue;
        }
        if (item?.kind === 'Block') blocks.push(item);
        else if (item?.kind === 'Attribute') {
          const existing = byName.get(item.name);
          if (existing) {
            this.error(
              'Attribute redefined',
              `The argument "${item.name}" was already set at ${rangeString(existing.nameRange)}. Each argument may be set only once.`,
              item.nameRange,
            );
          } else {
            byName.set(item.name, item);
            attributes.push(item);
          }
        }
        continue;
      }
      if (next.type === 'EOF') {
        // Only reachable with end === 'CBrace'.
        this.syntaxError(
          null,
          'Unclosed configuration block',
          'There is no closing brace for this block before the end of the file. This may be caused by incorrect brace nesting elsewhere in this file.',
          startRange,
        );
        this.recovery = true;
        endRange = next.range;
        break;
      }
      const bad = this.read();
      if (bad.type === 'OQuote') {
        this.syntaxError(bad, 'Invalid argument name', 'Argument names must not be quoted.', bad.range);
      } else {
        this.syntaxError(
          bad,
          'Argument or block definition required',
          'An argument or block definition is required here.',
          bad.range,
        );
      }
      // As hclsyntax (parser.go ParseBody): skip to the end of this body and
      // stop; the partial tree keeps only the items before the bad token.
      // terraform decodes that partial tree (a lock file's provider block
      // cut here reports "Missing required argument" as well), so what
      // follows the bad token in this body must not be seen.
      endRange = this.prevRange();
      this.recover(end);
      break;
    }
    return {
      kind: 'Body',
      attributes,
      blocks,
      range: rangeBetween(startRange, endRange),
      endRange: emptyRangeAt(endRange, false),
    };
  }

  private parseBodyItem(): Attribute | Block | null {
    if (this.peek().type === 'OQuote') return this.parseQuotedAttribute();
    const ident = this.read();
    const next = this.peek();
    switch (next.type) {
      case 'Equal':
        return this.finishAttribute(ident, false);
      case 'OQuote':
      case 'OBrace':
      case 'Ident':
        return this.finishBlock(ident);
      default:
        this.syntaxError(
          next,
          'Argument or block definition required',
          'An argument or block definition is required here. To set an argument, use the equals sign "=" to introduce the argument value.',
          ident.range,
        );
        this.recoverAfterBodyItem();
        return null;
    }
  }

  /** HCL 1's `"name" = value` (only with the `quotedAttributeNames` option). */
  private parseQuotedAttribute(): Attribute | null {
    const [name, nameRange] = this.parseQuotedStringLiteral();
    const next = this.peek();
    if (next.type !== 'Equal') {
      this.syntaxError(
        next,
        'Argument or block definition required',
        'An argument definition is required here: a quoted name must be followed by an equals sign "=" and the argument value.',
        nameRange,
      );
      this.recoverAfterBodyItem();
      return null;
    }
    return this.finishAttribute({ text: name, range: nameRange }, false);
  }

  private finishAttribute(ident: Pick<Token, 'text' | 'range'>, singleLine: boolean): Attribute {
    const eq = this.read();
    const errorsBefore = this.diags.length;
    const expr = this.parseExpression();
    let endRange = this.prevRange();
    if (this.recovery && this.diags.length > errorsBefore) {
      if (!singleLine) this.recoverAfterBodyItem();
    } else if (!singleLine) {
      const end = this.peek();
      if (end.type !== 'Newline' && end.type !== 'EOF') {
        const comma = end.type === 'Comma';
        this.syntaxError(
          end,
          comma ? 'Unexpected comma after argument' : 'Missing newline after argument',
          comma
            ? 'Argument definitions must be separated by newlines, not commas. An argument definition must end with a newline.'
            : 'An argument definition must end with a newline.',
          end.range,
          rangeBetween(ident.range, end.range),
        );
        endRange = this.prevRange();
        this.recoverAfterBodyItem();
      } else {
        this.read();
      }
    }
    if (expr.range.end.byte > endRange.end.byte) endRange = expr.range;
    return {
      kind: 'Attribute',
      name: ident.text,
      expr,
      range: rangeBetween(ident.range, endRange),
      nameRange: ident.range,
      equalsRange: eq.range,
    };
  }

  private finishBlock(ident: Token): Block {
    const labels: string[] = [];
    const labelRanges: Range[] = [];
    let oBrace: Token | undefined;
    while (!oBrace) {
      const tok = this.peek();
      if (tok.type === 'OBrace') {
        oBrace = this.read();
      } else if (tok.type === 'OQuote') {
        const [label, range] = this.parseQuotedStringLiteral();
        labels.push(label);
        labelRanges.push(range);
      } else if (tok.type === 'Ident') {
        this.read();
        labels.push(tok.text);
        labelRanges.push(tok.range);
      } else {
        const context = rangeBetween(ident.range, tok.range);
        if (tok.type === 'Equal') {
          this.error(
            'Invalid block definition',
            'The equals sign "=" indicates an argument definition, and must not be used when defining a block.',
            tok.range,
            context,
          );
        } else if (tok.type === 'Newline') {
          this.error(
            'Invalid block definition',
            'A block definition must have block content delimited by "{" and "}", starting on the same line as the block header.',
            tok.range,
            context,
          );
        } else {
          this.syntaxError(
            tok,
            'Invalid block definition',
            'Either a quoted string block label or an opening brace ("{") is expected here.',
            tok.range,
            context,
          );
        }
        this.recoverAfterBodyItem();
        const last = labelRanges[labelRanges.length - 1] ?? ident.range;
        return {
          kind: 'Block',
          type: ident.text,
          labels,
          body: { kind: 'Body', attributes: [], blocks: [], range: ident.range, endRange: ident.range },
          typeRange: ident.range,
          labelRanges,
          openBraceRange: ident.range,
          closeBraceRange: last,
          range: rangeBetween(ident.range, last),
        };
      }
    }

    let body: Body;
    const after = this.peek().type;
    if (after === 'Newline' || after === 'EOF' || after === 'CBrace') {
      body = this.nested(() => this.parseBody('CBrace'));
    } else {
      body = this.nested(() => this.parseSingleAttrBody(oBrace));
      const close = this.peek();
      if (close.type === 'CBrace') {
        this.read();
      } else {
        if (close.type === 'Comma') {
          this.syntaxError(
            close,
            'Invalid single-argument block definition',
            'Single-line block syntax can include only one argument definition. To define multiple arguments, use the multi-line block syntax with one argument definition per line.',
            close.range,
          );
        } else if (close.type === 'Newline') {
          this.syntaxError(
            close,
            'Invalid single-argument block definition',
            "An argument definition on the same line as its containing block creates a single-line block definition, which must also be closed on the same line. Place the block's closing brace immediately after the argument definition.",
            close.range,
          );
        } else if (close.type === 'EOF') {
          this.syntaxError(
            close,
            'Unclosed configuration block',
            'There is no closing brace for this block before the end of the file. This may be caused by incorrect brace nesting elsewhere in this file.',
            oBrace.range,
            rangeBetween(ident.range, oBrace.range),
          );
        } else {
          this.syntaxError(
            close,
            'Invalid single-argument block definition',
            'A single-line block definition must end with a closing brace immediately after its single argument definition.',
            close.range,
          );
        }
        this.recover('CBrace');
      }
    }
    const cBraceRange = this.prevRange();

    const eol = this.peek();
    if (eol.type === 'Newline' || eol.type === 'EOF') {
      this.read();
    } else {
      this.syntaxError(
        eol,
        'Missing newline after block definition',
        'A block definition must end with a newline.',
        eol.range,
        rangeBetween(ident.range, eol.range),
      );
      this.recoverAfterBodyItem();
    }

    return {
      kind: 'Block',
      type: ident.text,
      labels,
      body,
      typeRange: ident.range,
      labelRanges,
      openBraceRange: oBrace.range,
      closeBraceRange: cBraceRange,
      range: rangeBetween(ident.range, cBraceRange),
    };
  }

  /** The body of `foo { bar = baz }`: one attribute, all on one line. */
  private parseSingleAttrBody(oBrace: Token): Body {
    const ident = this.read();
    const empty = (): Body => ({
      kind: 'Body',
      attributes: [],
      blocks: [],
      range: oBrace.range,
      endRange: oBrace.range,
    });
    if (ident.type !== 'Ident') {
      this.syntaxError(
        ident,
        'Argument or block definition required',
        'An argument or block definition is required here.',
        ident.range,
      );
      this.recoverAfterBodyItem();
      return empty();
    }
    const next = this.peek();
    if (next.type !== 'Equal') {
      if (next.type === 'OQuote' || next.type === 'OBrace' || next.type === 'Ident') {
        this.syntaxError(
          next,
          'Argument definition required',
          `A single-line block definition can contain only a single argument. If you meant to define argument ${JSON.stringify(ident.text)}, use an equals sign to assign it a value. To define a nested block, place it on a line of its own within its parent block.`,
          rangeBetween(ident.range, next.range),
        );
      } else {
        this.syntaxError(
          next,
          'Argument or block definition required',
          'An argument or block definition is required here. To set an argument, use the equals sign "=" to introduce the argument value.',
          ident.range,
        );
      }
      this.recoverAfterBodyItem();
      return empty();
    }
    const attr = this.finishAttribute(ident, true);
    return {
      kind: 'Body',
      attributes: [attr],
      blocks: [],
      range: attr.range,
      endRange: emptyRangeAt(attr.range, true),
    };
  }

  /** A block label: a quoted string without template sequences (spec `StringLit`). */
  private parseQuotedStringLiteral(): [string, Range] {
    const oQuote = this.read();
    let value = '';
    let endRange: Range;
    for (;;) {
      const tok = this.read();
      if (tok.type === 'CQuote') {
        endRange = tok.range;
        break;
      }
      if (tok.type === 'QuotedLit') {
        value += tok.value ?? '';
        continue;
      }
      if (tok.type === 'TemplateInterp' || tok.type === 'TemplateControl') {
        const which = tok.type === 'TemplateControl' ? '%' : '$';
        this.error(
          'Invalid string literal',
          `Template sequences are not allowed in this string. To include a literal "${which}", double it (as "${which}${which}") to escape it.`,
          tok.range,
          rangeBetween(oQuote.range, tok.range),
        );
        value += `${which}{ ... }`;
        this.recover('TemplateSeqEnd');
        continue;
      }
      if (tok.type === 'EOF') {
        this.error(
          'Unterminated string literal',
          'Unable to find the closing quote mark before the end of the file.',
          tok.range,
          rangeBetween(oQuote.range, tok.range),
        );
        endRange = tok.range;
        break;
      }
      this.error(
        'Invalid string literal',
        'This item is not valid in a string literal.',
        tok.range,
        rangeBetween(oQuote.range, tok.range),
      );
      this.recover('CQuote');
      endRange = tok.range;
      break;
    }
    return [value, rangeBetween(oQuote.range, endRange)];
  }

  // --- expressions ---------------------------------------------------------------

  parseExpression(): Expression {
    return this.nested(() => this.parseTernary());
  }

  private invalid(range: Range): InvalidExpr {
    return { kind: 'Invalid', range };
  }

  /**
   * Whether parsing since the diagnostic count `before` failed in a way that
   * left the peeker somewhere unreliable (an error while in recovery mode),
   * in which case callers resynchronize instead of continuing (as hclsyntax's
   * `p.recovery && diags.HasErrors()`).
   */
  private failed(before: number): boolean {
    return this.recovery && this.diags.length > before;
  }

  private parseTernary(): Expression {
    const before = this.diags.length;
    const startRange = this.peek().range;
    const cond = this.parseBinary(0);
    if (this.failed(before)) return cond;
    if (this.peek().type !== 'Question') return cond;
    this.read();
    const trueBefore = this.diags.length;
    const trueResult = this.parseExpression();
    if (this.failed(trueBefore)) return cond;
    const colon = this.peek();
    if (colon.type !== 'Colon') {
      this.error(
        'Missing false expression in conditional',
        'The conditional operator (...?...:...) requires a false expression, delimited by a colon.',
        colon.range,
        rangeBetween(startRange, colon.range),
      );
      return cond;
    }
    this.read();
    const falseBefore = this.diags.length;
    const falseResult = this.parseExpression();
    if (this.failed(falseBefore)) return cond;
    return {
      kind: 'Conditional',
      condition: cond,
      trueResult,
      falseResult,
      range: rangeBetween(cond.range, falseResult.range),
    };
  }

  private parseBinary(level: number): Expression {
    const ops = BINARY_LEVELS[level];
    if (!ops) return this.parseExpressionWithTraversals();
    const before = this.diags.length;
    let lhs = this.parseBinary(level + 1);
    if (this.failed(before)) return lhs;
    // `a + b + c` builds a left-deep tree: each operator counts as a level of
    // nesting, so that the tree depth stays bounded for recursive walkers.
    const depthBefore = this.depth;
    try {
      for (;;) {
        const op = ops[this.peek().type];
        if (op === undefined) return lhs;
        this.read();
        this.deepen();
        const rhsBefore = this.diags.length;
        const rhs = this.parseBinary(level + 1);
        lhs = { kind: 'BinaryOp', op, lhs, rhs, range: rangeBetween(lhs.range, rhs.range) };
        if (this.failed(rhsBefore)) return lhs;
      }
    } finally {
      this.depth = depthBefore;
    }
  }

  private parseExpressionWithTraversals(): Expression {
    const term = this.parseTerm();
    return this.parseTraversals(term);
  }

  private parseTraversals(from: Expression): Expression {
    // Index and relative-traversal nodes nest left-deep like binary operators.
    const depthBefore = this.depth;
    try {
      return this.parseTraversalsInner(from);
    } finally {
      this.depth = depthBefore;
    }
  }

  private parseTraversalsInner(from: Expression): Expression {
    let ret = from;
    for (;;) {
      const next = this.peek();
      if (next.type === 'Dot') {
        const dot = this.read();
        const attrTok = this.peek();
        if (attrTok.type === 'Ident') {
          this.read();
          const range = rangeBetween(dot.range, attrTok.range);
          ret = this.extendTraversal(ret, { type: 'attr', name: attrTok.text, range }, range);
        } else if (attrTok.type === 'NumberLit') {
          this.read();
          ret = this.extendTraversal(
            ret,
            this.legacyIndex(dot, attrTok, false),
            rangeBetween(dot.range, attrTok.range),
          );
        } else if (attrTok.type === 'Star') {
          this.deepen();
          ret = this.finishAttrSplat(ret, dot);
        } else {
          this.syntaxError(
            attrTok,
            'Invalid attribute name',
            'An attribute name is required after a dot.',
            attrTok.range,
          );
          this.recovery = true;
          return this.invalid(rangeBetween(from.range, dot.range));
        }
      } else if (next.type === 'OBrack') {
        const open = this.read();
        if (this.peek().type === 'Star') {
          this.read();
          let close = this.read();
          if (close.type !== 'CBrack') {
            this.syntaxError(
              close,
              'Missing close bracket on splat index',
              'The star for a full splat operator must be immediately followed by a closing bracket ("]").',
              close.range,
            );
            close = this.recover('CBrack');
          }
          const item: AnonSymbolExpr = { kind: 'AnonSymbol', range: rangeBetween(open.range, close.range) };
          const each = this.nested(() => this.parseTraversals(item));
          this.deepen();
          ret = {
            kind: 'Splat',
            source: ret,
            each,
            item,
            attrOnly: false,
            markerRange: item.range,
            range: rangeBetween(from.range, each.range),
          };
        } else {
          const keyBefore = this.diags.length;
          const { key, close } = this.withNewlines(false, () => {
            const k = this.parseExpression();
            if (this.failed(keyBefore)) return { key: k, close: this.recover('CBrack') };
            const c = this.read();
            if (c.type === 'CBrack') return { key: k, close: c };
            this.syntaxError(
              c,
              'Missing close bracket on index',
              'The index operator must end with a closing bracket ("]").',
              c.range,
            );
            return { key: k, close: this.recover('CBrack') };
          });
          const bracketRange = rangeBetween(open.range, close.range);
          const literalKey = constantKey(key);
          if (literalKey !== undefined) {
            ret = this.extendTraversal(
              ret,
              { type: 'index', key: literalKey.value, legacy: false, range: bracketRange },
              bracketRange,
            );
          } else {
            this.deepen();
            ret = { kind: 'Index', collection: ret, key, bracketRange, range: rangeBetween(from.range, bracketRange) };
          }
        }
      } else {
        return ret;
      }
    }
  }

  /** `.0`: the legacy index (spec "Index Operator"); `.0.1` lexes as one number and is refused. */
  private legacyIndex(dot: Token, num: Token, inSplat: boolean): Traverser {
    const range = rangeBetween(dot.range, num.range);
    const dotAt = num.text.indexOf('.');
    if (dotAt >= 0) {
      const first = num.text.slice(0, dotAt);
      const second = num.text.slice(dotAt + 1);
      this.error(
        'Invalid legacy index syntax',
        inSplat
          ? `When using the legacy index syntax, chaining two indexes together is not permitted. Use the proper index syntax with a full splat expression [*] instead, like [${first}][${second}].`
          : `When using the legacy index syntax, chaining two indexes together is not permitted. Use the proper index syntax instead, like [${first}][${second}].`,
        num.range,
      );
      return { type: 'index', key: null, legacy: true, range };
    }
    return { type: 'index', key: this.numberValue(num), legacy: true, range };
  }

  /** `.*` followed by `.name` / `.0` steps only (the attribute-only splat). */
  private finishAttrSplat(source: Expression, dot: Token): Expression {
    const marker = this.read(); // star
    const markerRange = rangeBetween(dot.range, marker.range);
    const item: AnonSymbolExpr = { kind: 'AnonSymbol', range: markerRange };
    const steps: Traverser[] = [];
    let lastRange = marker.range;
    while (this.peek().type === 'Dot') {
      const stepDot = this.read();
      const tok = this.peek();
      if (tok.type === 'NumberLit') {
        this.read();
        steps.push(this.legacyIndex(stepDot, tok, true));
        lastRange = tok.range;
        continue;
      }
      if (tok.type !== 'Ident') {
        if (tok.type === 'Star') {
          this.syntaxError(
            tok,
            'Nested splat expression not allowed',
            'A splat expression (*) cannot be used inside another attribute-only splat expression.',
            tok.range,
          );
        } else {
          this.syntaxError(tok, 'Invalid attribute name', 'An attribute name is required after a dot.', tok.range);
        }
        this.recovery = true;
        break;
      }
      this.read();
      steps.push({ type: 'attr', name: tok.text, range: rangeBetween(stepDot.range, tok.range) });
      lastRange = tok.range;
    }
    const first = steps[0];
    const each: Expression = first
      ? { kind: 'RelativeTraversal', source: item, traversal: steps, range: rangeBetween(first.range, lastRange) }
      : item;
    return {
      kind: 'Splat',
      source,
      each,
      item,
      attrOnly: true,
      markerRange,
      range: rangeBetween(source.range, lastRange),
    };
  }

  private extendTraversal(expr: Expression, step: Traverser, range: Range): Expression {
    if (expr.kind === 'ScopeTraversal' || expr.kind === 'RelativeTraversal') {
      expr.traversal.push(step);
      expr.range = rangeBetween(expr.range, range);
      return expr;
    }
    this.deepen();
    return { kind: 'RelativeTraversal', source: expr, traversal: [step], range: rangeBetween(expr.range, range) };
  }

  private numberValue(tok: Token): number {
    if (!NUMBER_RE.test(tok.text)) {
      this.error('Invalid number literal', 'Failed to recognize the value of this number literal.', tok.range);
      return Number.NaN;
    }
    return Number(tok.text);
  }

  private parseTerm(): Expression {
    const start = this.peek();
    switch (start.type) {
      case 'OParen': {
        const oParen = this.read();
        return this.withNewlines(false, (): Expression => {
          const before = this.diags.length;
          const expr = this.parseExpression();
          if (this.diags.length > before) {
            this.recover('CParen');
            return expr;
          }
          const close = this.peek();
          if (close.type !== 'CParen') {
            this.syntaxError(
              close,
              'Unbalanced parentheses',
              'Expected a closing parenthesis to terminate the expression.',
              close.range,
              rangeBetween(start.range, close.range),
            );
            this.recovery = true;
          }
          const cParen = this.read();
          return { kind: 'Parentheses', expression: expr, range: rangeBetween(oParen.range, cParen.range) };
        });
      }
      case 'NumberLit': {
        this.read();
        return {
          kind: 'Literal',
          valueType: 'number',
          value: this.numberValue(start),
          raw: start.text,
          range: start.range,
        };
      }
      case 'Ident': {
        this.read();
        const after = this.peek().type;
        if (after === 'OParen' || after === 'DoubleColon') return this.finishFunctionCall(start);
        switch (start.text) {
          case 'true':
          case 'false':
            return {
              kind: 'Literal',
              valueType: 'bool',
              value: start.text === 'true',
              keyword: start.text,
              range: start.range,
            };
          case 'null':
            return { kind: 'Literal', valueType: 'null', value: null, keyword: 'null', range: start.range };
          default:
            return {
              kind: 'ScopeTraversal',
              traversal: [{ type: 'root', name: start.text, range: start.range }],
              range: start.range,
            };
        }
      }
      case 'OQuote':
      case 'OHeredoc':
        return this.parseTemplate();
      case 'Minus':
      case 'Bang': {
        const tok = this.read();
        // Only a term with its traversals: -46+5 is (-46)+5, not -(46+5).
        const operand = this.nested(() => this.parseExpressionWithTraversals());
        return {
          kind: 'UnaryOp',
          op: start.type === 'Minus' ? '-' : '!',
          operand,
          symbolRange: tok.range,
          range: rangeBetween(tok.range, operand.range),
        };
      }
      case 'OBrack':
        return this.parseTupleCons();
      case 'OBrace':
        return this.parseObjectCons();
      default:
        if (start.type === 'EOF') {
          this.syntaxError(
            start,
            'Missing expression',
            'Expected the start of an expression, but found the end of the file.',
            start.range,
          );
        } else {
          this.syntaxError(
            start,
            'Invalid expression',
            'Expected the start of an expression, but found an invalid expression token.',
            start.range,
          );
        }
        this.recovery = true;
        return this.invalid(start.range);
    }
  }

  private finishFunctionCall(name: Token): Expression {
    let openTok = this.read();
    let fullName = name.text;
    let nameRange = name.range;
    while (openTok.type === 'DoubleColon') {
      const nextName = this.read();
      if (nextName.type !== 'Ident') {
        this.error(
          'Missing function name',
          'Function scope resolution symbol :: must be followed by a function name in this scope.',
          nextName.range,
          rangeBetween(name.range, nextName.range),
        );
        this.recoverOver('OParen');
        return this.invalid(rangeBetween(name.range, nextName.range));
      }
      fullName += `::${nextName.text}`;
      nameRange = rangeBetween(name.range, nextName.range);
      openTok = this.read();
    }
    if (openTok.type !== 'OParen') {
      this.error(
        'Missing open parenthesis',
        'Function selector must be followed by an open parenthesis to begin the function call.',
        openTok.range,
        rangeBetween(name.range, openTok.range),
      );
      this.recoverOver('OParen');
      return this.invalid(rangeBetween(name.range, openTok.range));
    }
    const open = openTok;
    return this.withNewlines(false, (): Expression => {
      const args: Expression[] = [];
      let expandFinal = false;
      let closeTok: Token = this.eof;
      for (;;) {
        if (this.peek().type === 'CParen') {
          closeTok = this.read();
          break;
        }
        const before = this.diags.length;
        const arg = this.parseExpression();
        args.push(arg);
        if (this.failed(before)) {
          const recovered = this.recover('CParen');
          closeTok = recovered;
          break;
        }
        const sep = this.read();
        if (sep.type === 'CParen') {
          closeTok = sep;
          break;
        }
        if (sep.type === 'Ellipsis') {
          expandFinal = true;
          if (this.peek().type !== 'CParen') {
            this.syntaxError(
              sep,
              'Missing closing parenthesis',
              'An expanded function argument (with ...) must be immediately followed by closing parentheses.',
              sep.range,
              rangeBetween(name.range, sep.range),
            );
            closeTok = this.recover('CParen');
          } else {
            closeTok = this.read();
          }
          break;
        }
        if (sep.type !== 'Comma') {
          if (sep.type === 'EOF') {
            this.syntaxError(
              sep,
              'Unterminated function call',
              'There is no closing parenthesis for this function call before the end of the file. This may be caused by incorrect parenthesis nesting elsewhere in this file.',
              rangeBetween(name.range, open.range),
            );
          } else {
            this.syntaxError(
              sep,
              'Missing argument separator',
              'A comma is required to separate each function argument from the next.',
              sep.range,
              rangeBetween(name.range, sep.range),
            );
          }
          closeTok = this.recover('CParen');
          break;
        }
        if (this.peek().type === 'CParen') {
          closeTok = this.read(); // trailing comma
          break;
        }
      }
      return {
        kind: 'FunctionCall',
        name: fullName,
        args,
        expandFinal,
        nameRange,
        openParenRange: open.range,
        closeParenRange: closeTok.range,
        range: rangeBetween(name.range, closeTok.range),
      };
    });
  }

  private parseTupleCons(): Expression {
    const open = this.read();
    return this.withNewlines(false, (): Expression => {
      if (isKeyword(this.peek(), 'for')) return this.finishFor(open);
      const items: Expression[] = [];
      let close: Token;
      for (;;) {
        if (this.peek().type === 'CBrack') {
          close = this.read();
          break;
        }
        const before = this.diags.length;
        items.push(this.parseExpression());
        if (this.failed(before)) {
          close = this.recover('CBrack');
          break;
        }
        const next = this.peek();
        if (next.type === 'CBrack') {
          close = this.read();
          break;
        }
        if (next.type !== 'Comma') {
          if (next.type === 'EOF') {
            this.syntaxError(
              next,
              'Unterminated tuple constructor expression',
              'There is no corresponding closing bracket before the end of the file. This may be caused by incorrect bracket nesting elsewhere in this file.',
              open.range,
            );
          } else {
            this.syntaxError(
              next,
              'Missing item separator',
              'Expected a comma to mark the beginning of the next item.',
              next.range,
              rangeBetween(open.range, next.range),
            );
          }
          close = this.recover('CBrack');
          break;
        }
        this.read();
      }
      const tuple: TupleConsExpr = {
        kind: 'TupleCons',
        items,
        openRange: open.range,
        range: rangeBetween(open.range, close.range),
      };
      return tuple;
    });
  }

  private parseObjectCons(): Expression {
    const open = this.read();
    // A for expression is not newline-sensitive, an object constructor is.
    const isFor = this.withNewlines(false, () => isKeyword(this.peek(), 'for'));
    if (isFor) return this.withNewlines(false, () => this.finishFor(open));
    return this.withNewlines(true, (): Expression => {
      const items: ObjectConsExpr['items'] = [];
      let close: Token;
      for (;;) {
        const next = this.peek();
        if (next.type === 'Newline') {
          this.read();
          continue;
        }
        if (next.type === 'CBrace') {
          close = this.read();
          break;
        }
        const forceNonLiteral = next.type === 'OParen';
        const keyBefore = this.diags.length;
        const keyExpr = this.parseExpression();
        if (this.failed(keyBefore)) {
          close = this.recover('CBrace');
          break;
        }
        const key: ObjectKeyExpr = { kind: 'ObjectKey', wrapped: keyExpr, forceNonLiteral, range: keyExpr.range };
        const sep = this.peek();
        if (sep.type !== 'Equal' && sep.type !== 'Colon') {
          const context = rangeBetween(open.range, sep.range);
          if (sep.type === 'Newline' || sep.type === 'Comma') {
            this.syntaxError(
              sep,
              'Missing attribute value',
              'Expected an attribute value, introduced by an equals sign ("=").',
              sep.range,
              context,
            );
          } else if (sep.type === 'Ident') {
            this.syntaxError(
              sep,
              'Missing key/value separator',
              'Expected an equals sign ("=") to mark the beginning of the attribute value. If you intended to given an attribute name containing periods or spaces, write the name in quotes to create a string literal.',
              sep.range,
              context,
            );
          } else if (sep.type === 'EOF') {
            this.syntaxError(
              sep,
              'Unterminated object constructor expression',
              'There is no corresponding closing brace before the end of the file. This may be caused by incorrect brace nesting elsewhere in this file.',
              open.range,
            );
          } else {
            this.syntaxError(
              sep,
              'Missing key/value separator',
              'Expected an equals sign ("=") to mark the beginning of the attribute value.',
              sep.range,
              context,
            );
          }
          close = this.recover('CBrace');
          break;
        }
        this.read();
        const valueBefore = this.diags.length;
        const value = this.parseExpression();
        items.push({ key, value });
        if (this.failed(valueBefore)) {
          close = this.recover('CBrace');
          break;
        }
        const after = this.peek();
        if (after.type === 'CBrace') {
          close = this.read();
          break;
        }
        if (after.type !== 'Comma' && after.type !== 'Newline') {
          if (after.type === 'EOF') {
            this.syntaxError(
              after,
              'Unterminated object constructor expression',
              'There is no corresponding closing brace before the end of the file. This may be caused by incorrect brace nesting elsewhere in this file.',
              open.range,
            );
          } else {
            this.syntaxError(
              after,
              'Missing attribute separator',
              'Expected a newline or comma to mark the beginning of the next attribute.',
              after.range,
              rangeBetween(open.range, after.range),
            );
          }
          close = this.recover('CBrace');
          break;
        }
        this.read();
      }
      return { kind: 'ObjectCons', items, openRange: open.range, range: rangeBetween(open.range, close.range) };
    });
  }

  /** The rest of a for expression (spec "For Expressions"), newlines already ignored. */
  private finishFor(open: Token): Expression {
    this.read(); // "for"
    const result = open.type === 'OBrace' ? 'object' : 'tuple';
    const closeType: TokenType = result === 'object' ? 'CBrace' : 'CBrack';
    const fail = (detail: string): Expression => {
      const at = this.peek();
      this.syntaxError(at, "Invalid 'for' expression", detail, at.range, rangeBetween(open.range, at.range));
      const close = this.recover(closeType);
      return this.invalid(rangeBetween(open.range, close.range));
    };
    if (this.peek().type !== 'Ident') return fail("For expression requires variable name after 'for'.");
    let keyVar = '';
    let valueVar = this.read().text;
    if (this.peek().type === 'Comma') {
      this.read();
      keyVar = valueVar;
      if (this.peek().type !== 'Ident') return fail('For expression requires value variable name after comma.');
      valueVar = this.read().text;
    }
    if (!isKeyword(this.peek(), 'in'))
      return fail("For expression requires the 'in' keyword after its name declarations.");
    this.read();
    const collBefore = this.diags.length;
    const collection = this.parseExpression();
    if (this.failed(collBefore)) {
      const close = this.recover(closeType);
      return this.invalid(rangeBetween(open.range, close.range));
    }
    if (this.peek().type !== 'Colon') return fail('For expression requires a colon after the collection expression.');
    this.read();
    const exprBefore = this.diags.length;
    let keyExpr: Expression | undefined;
    let valueExpr = this.parseExpression();
    if (this.peek().type === 'FatArrow') {
      this.read();
      keyExpr = valueExpr;
      valueExpr = this.parseExpression();
    }
    if (this.failed(exprBefore)) {
      const close = this.recover(closeType);
      return this.invalid(rangeBetween(open.range, close.range));
    }
    let group = false;
    let ellipsis: Token | undefined;
    if (this.peek().type === 'Ellipsis') {
      ellipsis = this.read();
      group = true;
    }
    let condition: Expression | undefined;
    if (isKeyword(this.peek(), 'if')) {
      this.read();
      const condBefore = this.diags.length;
      condition = this.parseExpression();
      if (this.failed(condBefore)) {
        const close = this.recover(closeType);
        return this.invalid(rangeBetween(open.range, close.range));
      }
    }
    let close: Token;
    if (this.peek().type === closeType) {
      close = this.read();
    } else {
      const at = this.peek();
      this.syntaxError(
        at,
        "Invalid 'for' expression",
        "Extra characters after the end of the 'for' expression.",
        at.range,
        rangeBetween(open.range, at.range),
      );
      close = this.recover(closeType);
    }
    const whole = rangeBetween(open.range, close.range);
    if (result === 'tuple') {
      if (keyExpr)
        this.error(
          "Invalid 'for' expression",
          'Key expression is not valid when building a tuple.',
          keyExpr.range,
          whole,
        );
      if (ellipsis)
        this.error(
          "Invalid 'for' expression",
          'Grouping ellipsis (...) cannot be used when building a tuple.',
          ellipsis.range,
          whole,
        );
    } else if (!keyExpr) {
      this.error(
        "Invalid 'for' expression",
        'Key expression is required when building an object.',
        valueExpr.range,
        whole,
      );
    }
    const expr: ForExpr = {
      kind: 'For',
      keyVar,
      valueVar,
      collection,
      valueExpr,
      group,
      result,
      openRange: open.range,
      closeRange: close.range,
      range: whole,
    };
    if (keyExpr) expr.keyExpr = keyExpr;
    if (condition) expr.condition = condition;
    return expr;
  }

  // --- templates -------------------------------------------------------------------

  private parseTemplate(): Expression {
    const open = this.read();
    const heredoc = open.type === 'OHeredoc' ? open.heredoc : undefined;
    const closer: TokenType = heredoc ? 'CHeredoc' : 'CQuote';
    const { parts, endRange } = this.parseTemplateParts(open, closer);
    if (heredoc?.flush) flushHeredoc(parts);
    const melded = meldLiterals(parts);
    const range = rangeBetween(open.range, endRange);
    const form = heredoc ? 'heredoc' : 'quoted';
    const only = melded[0];
    if (melded.length === 1 && only?.t === 'interp') {
      // Spec "Template Interpolation Unwrapping".
      const wrap: TemplateWrapExpr = { kind: 'TemplateWrap', wrapped: only.expr, form, range };
      if (heredoc) wrap.heredoc = { ...heredoc };
      return wrap;
    }
    const depthBefore = this.depth;
    let built: Expression[];
    try {
      built = this.buildTemplate(melded, endRange, range);
    } finally {
      this.depth = depthBefore;
    }
    const tmpl: TemplateExpr = { kind: 'Template', parts: built, form, range };
    if (heredoc) tmpl.heredoc = { ...heredoc };
    return tmpl;
  }

  private parseTemplateParts(open: Token, end: TokenType): { parts: TemplatePart[]; endRange: Range } {
    // hclsyntax's `startRange` (`p.NextRange()` after the opener): where the template's content begins.
    const startRange = this.peek().range;
    const parts: TemplatePart[] = [];
    let ltrimNext = false;
    let nextCanTrimPrev = false;
    let endRange: Range;
    const trimPrev = (canTrimPrev: boolean): void => {
      const prev = parts[parts.length - 1];
      if (canTrimPrev && prev?.t === 'lit') prev.value = trimRightSpace(prev.value);
    };
    for (;;) {
      const next = this.read();
      if (next.type === end) {
        endRange = next.range;
        break;
      }
      const ltrim = ltrimNext;
      ltrimNext = false;
      const canTrimPrev = nextCanTrimPrev;
      nextCanTrimPrev = false;
      if (next.type === 'QuotedLit' || next.type === 'StringLit') {
        const value = next.value ?? '';
        parts.push({ t: 'lit', value: ltrim ? trimLeftSpace(value) : value, range: next.range });
        nextCanTrimPrev = true;
        continue;
      }
      if (next.type === 'TemplateInterp') {
        if (next.strip === true) trimPrev(canTrimPrev);
        const r = this.withNewlines(false, () => {
          const expr = this.parseExpression();
          const close = this.peek();
          if (close.type !== 'TemplateSeqEnd') {
            if (close.type === 'EOF') {
              this.syntaxError(
                close,
                'Unclosed template interpolation sequence',
                'There is no closing brace for this interpolation sequence before the end of the file. This might be caused by incorrect nesting inside the given expression.',
                next.range,
              );
            } else if (close.type === 'Colon') {
              this.syntaxError(
                close,
                'Extra characters after interpolation expression',
                'Template interpolation doesn\'t expect a colon at this location. Did you intend this to be a literal sequence to be processed as part of another language? If so, you can escape it by starting with "$${" instead of just "${".',
                close.range,
                rangeBetween(next.range, close.range),
              );
            } else if ((close.type === 'CQuote' || close.type === 'OQuote') && end === 'CQuote') {
              this.syntaxError(
                close,
                'Unclosed template interpolation sequence',
                'There is no closing brace for this interpolation sequence before the end of the quoted template. This might be caused by incorrect nesting inside the given expression.',
                next.range,
              );
            } else {
              this.syntaxError(
                close,
                'Extra characters after interpolation expression',
                'Expected a closing brace to end the interpolation expression, but found extra characters.\n\nThis can happen when you include interpolation syntax for another language, such as shell scripting, but forget to escape the interpolation start token. If this is an embedded sequence for another language, escape it by starting with "$${" instead of just "${".',
                close.range,
                rangeBetween(next.range, close.range),
              );
            }
            return { expr, close: this.recover('TemplateSeqEnd') };
          }
          this.read();
          if (close.strip === true) ltrimNext = true;
          return { expr, close };
        });
        parts.push({ t: 'interp', expr: r.expr, range: rangeBetween(next.range, r.close.range) });
        continue;
      }
      if (next.type === 'TemplateControl') {
        if (next.strip === true) trimPrev(canTrimPrev);
        const part = this.withNewlines(false, () => this.parseDirective(next));
        if (part.part) parts.push(part.part);
        if (part.ltrimNext) ltrimNext = true;
        continue;
      }
      // Anything else ends the template abnormally (EOF, or a stray token):
      // hclsyntax parseTemplateParts reports it at that token, in the context
      // of the template's content (terraform 1.11.4 names the end of the
      // file for a heredoc that is never closed, test/fixtures/reference-runs/).
      this.syntaxError(
        next,
        'Unterminated template string',
        'No closing marker was found for the string.',
        next.range,
        rangeBetween(startRange, next.range),
      );
      this.recovery = true;
      const final = next.type === 'EOF' ? next : this.recover(end);
      endRange = final.range;
      break;
    }
    if (parts.length === 0) {
      // An empty template is the empty string (a zero-width literal after the opener).
      parts.push({ t: 'lit', value: '', range: emptyRangeAt(open.range, true) });
    }
    return { parts, endRange };
  }

  /** One `%{ ... }` directive, the opener already read. */
  private parseDirective(opener: Token): { part?: TemplatePart; ltrimNext: boolean } {
    const kw = this.peek();
    if (kw.type !== 'Ident') {
      this.syntaxError(
        kw,
        'Invalid template directive',
        'A template directive keyword ("if", "for", etc) is expected at the beginning of a %{ sequence.',
        kw.range,
        rangeBetween(opener.range, kw.range),
      );
      this.recover('TemplateSeqEnd');
      return { ltrimNext: false };
    }
    this.read();
    let part: TemplatePart;
    switch (kw.text) {
      case 'if': {
        const cond = this.parseExpression();
        part = { t: 'if', cond, range: rangeBetween(opener.range, this.peek().range) };
        break;
      }
      case 'else':
      case 'endif':
      case 'endfor':
        part = { t: 'end', which: kw.text, range: rangeBetween(opener.range, this.peek().range) };
        break;
      case 'for': {
        const bad = (detail: string): { ltrimNext: boolean } => {
          this.syntaxError(this.peek(), "Invalid 'for' directive", detail, this.peek().range);
          this.recover('TemplateSeqEnd');
          return { ltrimNext: false };
        };
        if (this.peek().type !== 'Ident') return bad("For directive requires variable name after 'for'.");
        let keyVar = '';
        let valueVar = this.read().text;
        if (this.peek().type === 'Comma') {
          this.read();
          keyVar = valueVar;
          if (this.peek().type !== 'Ident') return bad('For directive requires value variable name after comma.');
          valueVar = this.read().text;
        }
        if (!isKeyword(this.peek(), 'in')) return bad("For directive requires 'in' keyword after names.");
        this.read();
        const coll = this.parseExpression();
        part = { t: 'for', keyVar, valueVar, coll, range: rangeBetween(opener.range, this.peek().range) };
        break;
      }
      default: {
        const suggestion = nameSuggestion(kw.text, ['if', 'for', 'else', 'endif', 'endfor']);
        this.syntaxError(
          kw,
          'Invalid template control keyword',
          `${JSON.stringify(kw.text)} is not a valid template control keyword.${suggestion ? ` Did you mean ${JSON.stringify(suggestion)}?` : ''}`,
          kw.range,
          rangeBetween(opener.range, kw.range),
        );
        this.recover('TemplateSeqEnd');
        return { ltrimNext: false };
      }
    }
    const close = this.peek();
    if (close.type !== 'TemplateSeqEnd') {
      this.syntaxError(
        close,
        `Extra characters in ${kw.text} marker`,
        'Expected a closing brace to end the sequence, but found extra characters.',
        close.range,
        rangeBetween(opener.range, close.range),
      );
      this.recover('TemplateSeqEnd');
      return { part, ltrimNext: false };
    }
    this.read();
    return { part, ltrimNext: close.strip === true };
  }

  /**
   * Turns the flat parts into a tree, pairing `if`/`else`/`endif` and
   * `for`/`endfor` with an explicit stack (no recursion, so deep directive
   * nesting cannot overflow the call stack).
   */
  private buildTemplate(parts: TemplatePart[], endRange: Range, whole: Range): Expression[] {
    type Frame =
      | { t: 'root'; exprs: Expression[] }
      | {
          t: 'if';
          open: Extract<TemplatePart, { t: 'if' }>;
          then: Expression[];
          else: Expression[] | null;
          elseRange?: Range;
        }
      | { t: 'for'; open: Extract<TemplatePart, { t: 'for' }>; exprs: Expression[] };
    const root: Frame = { t: 'root', exprs: [] };
    const stack: Frame[] = [root];
    const top = (): Frame => stack[stack.length - 1] ?? root;
    const target = (f: Frame): Expression[] => (f.t === 'if' ? (f.else ?? f.then) : f.exprs);
    const emit = (e: Expression): void => {
      target(top()).push(e);
    };
    const tmpl = (exprs: Expression[], at: Range): TemplateExpr => {
      const first = exprs[0];
      const last = exprs[exprs.length - 1];
      if (!first || !last) {
        return {
          kind: 'Template',
          parts: [{ kind: 'Literal', valueType: 'string', value: '', range: at }],
          form: 'quoted',
          range: at,
        };
      }
      return { kind: 'Template', parts: exprs, form: 'quoted', range: rangeBetween(first.range, last.range) };
    };
    for (const part of parts) {
      switch (part.t) {
        case 'lit':
          emit({ kind: 'Literal', valueType: 'string', value: part.value, range: part.range });
          break;
        case 'interp':
          emit(part.expr);
          break;
        case 'if':
          this.deepen(); // undone by the caller's nesting bookkeeping (see parseTemplate)
          stack.push({ t: 'if', open: part, then: [], else: null });
          break;
        case 'for':
          this.deepen();
          stack.push({ t: 'for', open: part, exprs: [] });
          break;
        case 'end': {
          const f = top();
          if (f.t === 'root') {
            this.error(
              `Unexpected ${part.which} directive`,
              'The control directives within this template are unbalanced.',
              part.range,
            );
            break;
          }
          if (f.t === 'if') {
            if (part.which === 'else') {
              if (f.else === null) {
                f.else = [];
                f.elseRange = part.range;
              } else {
                this.error(
                  'Unexpected else directive',
                  `Already in the else clause for the if started at ${rangeString(f.open.range)}.`,
                  part.range,
                );
              }
              break;
            }
            stack.pop();
            if (part.which === 'endif') {
              emit({
                kind: 'TemplateIf',
                condition: f.open.cond,
                then: tmpl(f.then, emptyRangeAt(f.open.range, true)),
                else: tmpl(f.else ?? [], emptyRangeAt(part.range, false)),
                range: rangeBetween(f.open.range, part.range),
              });
            } else {
              this.error(
                `Unexpected ${part.which} directive`,
                `Expecting an endif directive for the if started at ${rangeString(f.open.range)}.`,
                part.range,
              );
              emit(this.invalid(part.range));
            }
            break;
          }
          // for
          if (part.which === 'else') {
            this.error('Unexpected else directive', 'An else clause is not expected for a for directive.', part.range);
            break;
          }
          stack.pop();
          if (part.which === 'endfor') {
            emit({
              kind: 'TemplateFor',
              keyVar: f.open.keyVar,
              valueVar: f.open.valueVar,
              collection: f.open.coll,
              body: tmpl(f.exprs, emptyRangeAt(f.open.range, true)),
              range: rangeBetween(f.open.range, part.range),
            });
          } else {
            this.error(
              `Unexpected ${part.which} directive`,
              `Expecting an endfor directive corresponding to the for directive at ${rangeString(f.open.range)}.`,
              part.range,
            );
            emit(this.invalid(part.range));
          }
          break;
        }
      }
    }
    while (stack.length > 1) {
      const f = stack.pop() as Frame;
      if (f.t === 'root') break;
      const what = f.t === 'if' ? 'if' : 'for';
      this.error(
        'Unexpected end of template',
        `The ${what} directive at ${rangeString(f.open.range)} is missing its corresponding end${what} directive.`,
        endRange,
      );
      emit(this.invalid(endRange));
    }
    const out = root.exprs;
    if (out.length === 0)
      out.push({ kind: 'Literal', valueType: 'string', value: '', range: emptyRangeAt(whole, false) });
    return out;
  }
}

// ---------------------------------------------------------------------------
// helpers

function isKeyword(tok: Token, kw: string): boolean {
  return tok.type === 'Ident' && tok.text === kw;
}

/** A constant index key: a literal, or a template that is a single string literal. */
function constantKey(expr: Expression): { value: string | number | boolean | null } | undefined {
  if (expr.kind === 'Literal') return { value: expr.value };
  if (expr.kind === 'Template' && expr.parts.length === 1) {
    const only = expr.parts[0];
    if (only?.kind === 'Literal' && only.valueType === 'string') return { value: only.value };
  }
  return undefined;
}

/** Go's unicode.IsSpace. */
export function isUnicodeSpace(cp: number): boolean {
  if (cp <= 0xff) return cp === 0x20 || (cp >= 0x09 && cp <= 0x0d) || cp === 0x85 || cp === 0xa0;
  return (
    cp === 0x1680 ||
    (cp >= 0x2000 && cp <= 0x200a) ||
    cp === 0x2028 ||
    cp === 0x2029 ||
    cp === 0x202f ||
    cp === 0x205f ||
    cp === 0x3000
  );
}

function trimLeftSpace(s: string): string {
  let i = 0;
  while (i < s.length && isUnicodeSpace(s.charCodeAt(i))) i++;
  return s.slice(i);
}

function trimRightSpace(s: string): string {
  let i = s.length;
  while (i > 0 && isUnicodeSpace(s.charCodeAt(i - 1))) i--;
  return s.slice(0, i);
}

/**
 * The `<<-` rule (spec "Template Expressions"): find the smallest number of
 * leading whitespace characters over the lines that start with literal text
 * and remove that many from each. As in hclsyntax, a line that is only
 * whitespace is neither counted nor trimmed, and a line that starts with an
 * interpolation counts as having no indentation.
 */
function flushHeredoc(parts: TemplatePart[]): void {
  let minSpaces = Number.POSITIVE_INFINITY;
  let newline = true;
  const adjust: Extract<TemplatePart, { t: 'lit' }>[] = [];
  for (const part of parts) {
    if (newline) {
      newline = false;
      let spaces = 0;
      if (part.t === 'lit') {
        const trimmed = trimLeftSpace(part.value);
        if (trimmed.length === 0 && part.value.endsWith('\n')) {
          spaces = Number.POSITIVE_INFINITY;
        } else {
          spaces = [...part.value.slice(0, part.value.length - trimmed.length)].length;
          adjust.push(part);
        }
      }
      if (spaces < minSpaces) minSpaces = spaces;
    }
    if (part.t === 'lit' && part.value.endsWith('\n')) newline = true;
  }
  if (!Number.isFinite(minSpaces) || minSpaces === 0) return;
  for (const lit of adjust) {
    const chars = [...lit.value];
    const removed = chars.slice(0, minSpaces).join('');
    lit.value = chars.slice(minSpaces).join('');
    const bytes = new TextEncoder().encode(removed).length;
    lit.range = {
      filename: lit.range.filename,
      start: {
        line: lit.range.start.line,
        column: lit.range.start.column + minSpaces,
        byte: lit.range.start.byte + bytes,
      },
      end: lit.range.end,
    };
  }
}

/** Merges consecutive literal parts (after stripping and flushing). */
function meldLiterals(parts: TemplatePart[]): TemplatePart[] {
  const out: TemplatePart[] = [];
  for (const part of parts) {
    const prev = out[out.length - 1];
    if (part.t === 'lit' && prev?.t === 'lit') {
      prev.value += part.value;
      prev.range = rangeBetween(prev.range, part.range);
    } else {
      out.push(part.t === 'lit' ? { ...part } : part);
    }
  }
  return out;
}
