/**
 * A small reader for the JSON variant of the configuration language
 * (`.tf.json`, `.tofu.json`; hashicorp/hcl `json/spec.md`), enough to find
 * provider requirements.
 *
 * Two steps, as in hcl's `json` package:
 * 1. {@link parseJSON}: strict JSON (RFC 8259) into a tree of values that
 *    keep their source ranges, with diagnostics naming file:line:col.
 *    Duplicate object keys are kept (they are how JSON writes repeated
 *    blocks), in order.
 * 2. {@link jsonToExpression}: a JSON value as an HCL expression, so that the
 *    static evaluation of `src/hcl` applies unchanged. Strings are literal:
 *    the JSON syntax processes template sequences only when evaluating with
 *    an evaluation context, which static analysis never has.
 *
 * The schema-directed interpretation of objects as bodies (which keys are
 * attributes, which are blocks with labels) lives in `src/config/body.ts`.
 *
 * With `{ hcl1: true }` it reads as HCL 1's JSON parser does, which the
 * reference uses for CLI configuration files: a trailing comma in an object
 * or an array, and a missing comma between two members, are accepted
 * (confirmed with terraform 1.11.4). Everything else stays strict, and the
 * errors are the HCL 2 parser's.
 *
 * Pure: no I/O, never throws for bad input.
 */
import { syntaxError } from './diagnostics.js';
import type { Diagnostic, Expression, ObjectKeyExpr, Range, Traverser } from './ast.js';
import { goQuote, nameSuggestion } from '../go/index.js';
import { SourceText } from './lexer.js';
import { parseHCL } from './parse.js';

/** A JSON value with its source range. */
export type JsonValue = JsonObject | JsonArray | JsonString | JsonNumber | JsonBool | JsonNull;

/** `{ … }`: its properties, and the ranges of the whole and of its braces. */
export interface JsonObject {
  kind: 'object';
  /** Properties in source order; duplicate names are kept. */
  props: JsonProperty[];
  range: Range;
  openRange: Range;
  closeRange: Range;
}
/** `[ … ]`: its items, and the ranges of the whole and of its opening bracket. */
export interface JsonArray {
  kind: 'array';
  items: JsonValue[];
  range: Range;
  openRange: Range;
}
/** A string, its escapes decoded. */
export interface JsonString {
  kind: 'string';
  value: string;
  range: Range;
}
/** A number: as written (`raw`) and as a value. */
export interface JsonNumber {
  kind: 'number';
  raw: string;
  value: number;
  range: Range;
}
/** `true` or `false`. */
export interface JsonBool {
  kind: 'bool';
  value: boolean;
  range: Range;
}
/** `null`. */
export interface JsonNull {
  kind: 'null';
  range: Range;
}
/** One `"name": value` of an object, with the range of its name. */
export interface JsonProperty {
  name: string;
  nameRange: Range;
  value: JsonValue;
}

/** The result of {@link parseJSON}. */
export interface JsonParseResult {
  /** The top-level value; `undefined` when the input has a syntax error. */
  value: JsonValue | undefined;
  diagnostics: Diagnostic[];
}

/** provkit's own bound on nesting (hcl has none; Go's stack is deeper than JavaScript's). */
const MAX_DEPTH = 256;

type TokenType = '{' | '}' | '[' | ']' | ',' | ':' | '=' | 'keyword' | 'string' | 'number' | 'eof' | 'invalid';

interface Token {
  readonly type: TokenType;
  /** Byte offsets in the source. */
  readonly start: number;
  readonly end: number;
}

/** A value that did not parse (hcl's `invalidVal`): its parent keeps going, the whole result is invalid. */
interface InvalidValue {
  kind: 'invalid';
  range: Range;
}

type Node = JsonValue | InvalidValue;

/**
 * Parses `source` as one JSON value, as hcl's `json` package does
 * (hashicorp/hcl v2 json/scanner.go, parser.go `parseFileContent`): a lax
 * scanner, then a parser that reports an error and goes on, so that, as in
 * the reference, a truncated file reports "Unclosed object" at every
 * unclosed brace, outermost first. The result has a value only when there is
 * no error. A byte order mark is skipped. Bytes that are not UTF-8 are an
 * "Invalid character encoding" error.
 */
export function parseJSON(
  source: Uint8Array | string,
  filename: string,
  options: { hcl1?: boolean } = {},
): JsonParseResult {
  const r = parseJSONNode(source, filename, options);
  return {
    value: r.diagnostics.length === 0 && r.node.kind !== 'invalid' ? r.node : undefined,
    diagnostics: r.diagnostics,
  };
}

/**
 * A configuration file in the JSON syntax (hcl `json.Parse`): {@link parseJSON},
 * and "Root value must be object" when the value is neither an object nor an
 * array (or did not parse).
 */
export function parseJSONFile(source: Uint8Array | string, filename: string): JsonParseResult {
  const r = parseJSONNode(source, filename, {});
  if (r.node.kind === 'object' || r.node.kind === 'array') {
    return { value: r.diagnostics.length === 0 ? r.node : undefined, diagnostics: r.diagnostics };
  }
  if (r.encoding) return { value: undefined, diagnostics: r.diagnostics };
  return {
    value: undefined,
    diagnostics: [
      ...r.diagnostics,
      syntaxError(
        'Root value must be object',
        'The root value in a JSON-based configuration must be either a JSON object or a JSON array of objects.',
        startRangeOf(r.node),
      ),
    ],
  };
}

/** `node.StartRange()`: an object's or array's opening bracket, else the whole value. */
function startRangeOf(n: Node): Range {
  return n.kind === 'object' || n.kind === 'array' ? n.openRange : n.range;
}

function parseJSONNode(
  source: Uint8Array | string,
  filename: string,
  options: { hcl1?: boolean },
): { node: Node; diagnostics: Diagnostic[]; encoding?: true } {
  const bytes = typeof source === 'string' ? new TextEncoder().encode(source) : source;
  const src = new SourceText(bytes, filename);
  const bad = firstInvalidUtf8(bytes);
  if (bad >= 0) {
    const range = src.range(bad, bad + 1);
    return {
      node: { kind: 'invalid', range },
      diagnostics: [
        syntaxError(
          'Invalid character encoding',
          'All input files must be UTF-8 encoded. Ensure that UTF-8 encoding is selected in your editor.',
          range,
        ),
      ],
      encoding: true,
    };
  }
  const p = new JsonParser(bytes, src, options.hcl1 === true);
  const node = p.value(0);
  if (p.diags.length === 0 && p.peek().type !== 'eof') {
    p.error('Extraneous data after value', 'Extra characters appear after the JSON value.', p.peek());
  }
  return { node, diagnostics: p.diags };
}

function firstInvalidUtf8(bytes: Uint8Array): number {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return -1;
  } catch {
    // Find the offset for the diagnostic.
    for (let i = 0; i < bytes.length;) {
      const b = bytes[i] as number;
      const len = b < 0x80 ? 1 : b >= 0xc2 && b < 0xe0 ? 2 : b >= 0xe0 && b < 0xf0 ? 3 : b >= 0xf0 && b < 0xf5 ? 4 : 0;
      if (len === 0) return i;
      for (let k = 1; k < len; k++) if (((bytes[i + k] ?? 0) & 0xc0) !== 0x80) return i;
      i += len;
    }
    return 0;
  }
}

const decoder = new TextDecoder('utf-8');

const isAlpha = (c: number): boolean => (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a);

/**
 * hcl json/scanner.go `scan`: the tokens of the whole input, then `eof`.
 * Strings run to an unescaped quote or a control character, numbers over
 * `-+.eE0-9`, keywords over letters and `_`; any other byte is one `invalid`
 * token, after which scanning stops.
 */
function scan(b: Uint8Array, from: number): Token[] {
  const tokens: Token[] = [];
  let i = from;
  for (;;) {
    while (i < b.length && (b[i] === 0x20 || b[i] === 0x0a || b[i] === 0x0d || b[i] === 0x09)) i++;
    if (i >= b.length) {
      tokens.push({ type: 'eof', start: i, end: i });
      return tokens;
    }
    const c = b[i] as number;
    const start = i;
    if (c === 0x7b || c === 0x7d || c === 0x5b || c === 0x5d || c === 0x2c || c === 0x3a || c === 0x3d) {
      tokens.push({ type: String.fromCharCode(c) as TokenType, start, end: ++i });
    } else if (c === 0x22) {
      i++;
      let escaping = false;
      while (i < b.length) {
        const x = b[i] as number;
        if (x === 0x5c) {
          escaping = !escaping;
          i++;
        } else if (x === 0x22) {
          i++;
          if (!escaping) break;
          escaping = false;
        } else if (x < 0x20) {
          break;
        } else {
          i++;
          escaping = false;
        }
      }
      tokens.push({ type: 'string', start, end: i });
    } else if (c === 0x2d || c === 0x2b || c === 0x2e || (c >= 0x30 && c <= 0x39)) {
      while (i < b.length && /[-+.eE0-9]/.test(String.fromCharCode(b[i] as number))) i++;
      tokens.push({ type: 'number', start, end: i });
    } else if (isAlpha(c)) {
      while (i < b.length && (isAlpha(b[i] as number) || b[i] === 0x5f)) i++;
      tokens.push({ type: 'keyword', start, end: i });
    } else {
      // One character (hcl marks one byte; a whole UTF-8 sequence here, so that a range never splits one).
      const len = c < 0x80 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
      tokens.push({ type: 'invalid', start, end: Math.min(b.length, start + len) });
      tokens.push({ type: 'eof', start: start + len, end: start + len });
      return tokens;
    }
  }
}

class JsonParser {
  readonly diags: Diagnostic[] = [];
  private readonly tokens: Token[];
  private pos = 0;
  /** Set when nesting went too deep: everything above stops without more errors. */
  private aborted = false;

  constructor(
    private readonly b: Uint8Array,
    private readonly src: SourceText,
    /** HCL 1's lenient separators (see the module comment). */
    private readonly hcl1 = false,
  ) {
    this.tokens = scan(b, src.contentStart);
  }

  peek(): Token {
    return this.tokens[this.pos]!;
  }

  private read(): Token {
    const t = this.tokens[this.pos]!;
    if (t.type !== 'eof') this.pos++;
    return t;
  }

  private range(t: { start: number; end: number }): Range {
    return this.src.range(t.start, t.end);
  }

  /** Reports an error at a token (or byte span), or at a range. */
  error(summary: string, detail: string, at: { start: number; end: number } | Range, context?: Range): void {
    const range = typeof at.start === 'number' ? this.range(at as { start: number; end: number }) : (at as Range);
    this.diags.push(syntaxError(summary, detail, range, context));
  }

  /** `parseValue`: a value, or an invalid one (its error reported) that its parent carries on with. */
  value(depth: number): Node {
    const tok = this.peek();
    const invalid = (n: Node | undefined): Node => n ?? { kind: 'invalid', range: this.range(tok) };
    if (depth > MAX_DEPTH) {
      this.error('Nesting too deep', 'This JSON value is nested too deeply.', tok);
      this.aborted = true;
      return invalid(undefined);
    }
    switch (tok.type) {
      case '{':
        return invalid(this.object(depth));
      case '[':
        return invalid(this.array(depth));
      case 'number':
        return invalid(this.number());
      case 'string':
        return invalid(this.string());
      case 'keyword':
        return invalid(this.keyword());
      case '}':
        this.error(
          'Missing JSON value',
          'A JSON value must start with a brace, a bracket, a number, a string, or a keyword.',
          tok,
        );
        return invalid(undefined);
      case ']':
        this.error(
          'Missing array element value',
          'A JSON value must start with a brace, a bracket, a number, a string, or a keyword.',
          tok,
        );
        return invalid(undefined);
      case 'eof':
        this.error('Missing value', 'The JSON data ends prematurely.', tok);
        return invalid(undefined);
      default:
        this.error(
          'Invalid start of value',
          'A JSON value must start with a brace, a bracket, a number, a string, or a keyword.',
          tok,
        );
        return invalid(undefined);
    }
  }

  /** `recover`: skips to what seems the end of the construct, counting `open`/`close` pairs from `tok`. */
  private recover(tok: Token, open: TokenType, close: TokenType): void {
    let depth = 1;
    for (let t = tok; ; t = this.read()) {
      if (t.type === open) depth++;
      else if (t.type === close) {
        depth--;
        if (depth <= 1) return;
      } else if (t.type === 'eof') return;
    }
  }

  private object(depth: number): JsonObject | undefined {
    const open = this.read();
    const props: JsonProperty[] = [];
    for (;;) {
      if (this.peek().type === '}') break;
      const key = this.value(depth + 1);
      if (this.aborted) return undefined;
      if (key.kind !== 'string') {
        this.error(
          'Invalid object property name',
          'A JSON object property name must be a string',
          key.kind === 'object' || key.kind === 'array' ? key.openRange : key.range,
        );
        return undefined;
      }
      const colon = this.read();
      if (colon.type !== ':') {
        this.recover(colon, '{', '}');
        if (colon.type === '}' || colon.type === ',') {
          this.error(
            'Missing object value',
            'A JSON object attribute must have a value, introduced by a colon.',
            colon,
          );
        } else if (colon.type === '=') {
          this.error(
            'Missing property value colon',
            'JSON uses a colon as its name/value delimiter, not an equals sign.',
            colon,
          );
        } else {
          this.error(
            'Missing property value colon',
            "A colon must appear between an object property's name and its value.",
            colon,
          );
        }
        return undefined;
      }
      const value = this.value(depth + 1);
      if (this.aborted) return undefined;
      // An invalid value stands in the object as JSON `null` would; the object as a whole is invalid anyway.
      props.push({
        name: key.value,
        nameRange: key.range,
        value: value.kind === 'invalid' ? { kind: 'null', range: value.range } : value,
      });
      const next = this.peek();
      if (next.type === ',') {
        const comma = this.read();
        if (this.peek().type === '}') {
          if (this.hcl1) break;
          this.error(
            'Trailing comma in object',
            'JSON does not permit a trailing comma after the final property in an object.',
            comma,
          );
          return undefined;
        }
        continue;
      }
      if (next.type === 'eof') {
        this.error('Unclosed object', 'No closing brace was found for this JSON object.', open);
        return undefined;
      }
      if (next.type === ']') {
        const tok = this.read();
        this.error('Mismatched braces', 'A JSON object must be closed with a brace, not a bracket.', tok);
        return undefined;
      }
      if (next.type === '}') break;
      if (next.type === 'string' && this.hcl1) continue;
      this.recover(this.read(), '{', '}');
      this.error(
        'Missing attribute seperator comma',
        'A comma must appear between each property definition in an object.',
        this.peek(),
      );
      return undefined;
    }
    const close = this.read();
    return {
      kind: 'object',
      props,
      range: this.src.range(open.start, close.end),
      openRange: this.range(open),
      closeRange: this.range(close),
    };
  }

  private array(depth: number): JsonArray | undefined {
    const open = this.read();
    const items: JsonValue[] = [];
    for (;;) {
      if (this.peek().type === ']') break;
      const v = this.value(depth + 1);
      if (this.aborted) return undefined;
      items.push(v.kind === 'invalid' ? { kind: 'null', range: v.range } : v);
      const next = this.peek();
      if (next.type === ',') {
        const comma = this.read();
        if (this.peek().type === ']') {
          if (this.hcl1) break;
          this.error(
            'Trailing comma in array',
            'JSON does not permit a trailing comma after the final value in an array.',
            comma,
          );
          return undefined;
        }
        continue;
      }
      if (next.type === ':') {
        this.recover(this.read(), '[', ']');
        this.error('Invalid array value', 'A colon is not used to introduce values in a JSON array.', this.peek());
        return undefined;
      }
      if (next.type === 'eof') {
        this.recover(this.read(), '[', ']');
        // hcl's summary says "object" here too.
        this.error('Unclosed object', 'No closing bracket was found for this JSON array.', open);
        return undefined;
      }
      if (next.type === '}') {
        const tok = this.read();
        this.recover(tok, '[', ']');
        this.error('Mismatched brackets', 'A JSON array must be closed with a bracket, not a brace.', tok);
        return undefined;
      }
      if (next.type === ']') break;
      if ((next.type === '{' || next.type === '[' || next.type === 'string') && this.hcl1) continue;
      this.recover(this.read(), '[', ']');
      this.error(
        'Missing attribute seperator comma',
        'A comma must appear between each value in an array.',
        this.peek(),
      );
      return undefined;
    }
    const close = this.read();
    return { kind: 'array', items, range: this.src.range(open.start, close.end), openRange: this.range(open) };
  }

  /** `parseNumber`: Go's `encoding/json` number grammar over the whole token. */
  private number(): JsonNumber | undefined {
    const tok = this.read();
    const raw = decoder.decode(this.b.subarray(tok.start, tok.end));
    if (!/^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/.test(raw)) {
      this.error('Invalid JSON number', 'There is a syntax error in the given JSON number.', tok);
      return undefined;
    }
    return { kind: 'number', raw, value: Number(raw), range: this.range(tok) };
  }

  /**
   * `parseString`: the token through Go's `json.Unmarshal`; its error's
   * offset (bytes read up to and including the bad one, or the token's
   * length when it ends early) becomes a one-byte subject in the token's
   * context.
   */
  private string(): JsonString | undefined {
    const tok = this.read();
    const b = this.b;
    let bad: number | undefined;
    let hasEscape = false;
    let closed = false;
    for (let i = tok.start + 1; i < tok.end && bad === undefined; i++) {
      const c = b[i] as number;
      if (c === 0x22) {
        closed = true;
        break;
      }
      if (c !== 0x5c) continue;
      hasEscape = true;
      const e = b[i + 1];
      if (e === undefined || i + 1 >= tok.end) break;
      if (e === 0x75) {
        for (let k = 2; k < 6; k++) {
          const h = b[i + k];
          if (i + k >= tok.end) break;
          if (h === undefined || !isHex(h)) {
            bad = i + k + 1;
            break;
          }
        }
        i += 5;
        continue;
      }
      if (!'"\\/bfnrt'.includes(String.fromCharCode(e))) bad = i + 2;
      i += 1;
    }
    if (bad === undefined && !closed) bad = tok.end;
    if (bad !== undefined) {
      const at = { start: bad, end: bad + 1 };
      this.error('Invalid JSON string', 'There is a syntax error in the given JSON string.', at, this.range(tok));
      return undefined;
    }
    const raw = decoder.decode(b.subarray(tok.start + 1, tok.end - 1));
    const value = hasEscape ? (JSON.parse(`"${raw}"`) as string) : raw;
    return { kind: 'string', value, range: this.range(tok) };
  }

  /** `parseKeyword`: `true`, `false`, `null`; anything else with a suggestion. */
  private keyword(): JsonValue | undefined {
    const tok = this.read();
    const word = decoder.decode(this.b.subarray(tok.start, tok.end));
    const range = this.range(tok);
    if (word === 'true' || word === 'false') return { kind: 'bool', value: word === 'true', range };
    if (word === 'null') return { kind: 'null', range };
    if (word === 'undefined' || word === 'NaN' || word === 'Infinity') {
      this.error('Invalid JSON keyword', `The JavaScript identifier ${goQuote(word)} cannot be used in JSON.`, tok);
      return undefined;
    }
    const suggestion = nameSuggestion(word, ['false', 'true', 'null']);
    this.error(
      'Invalid JSON keyword',
      `${goQuote(word)} is not a valid JSON keyword.${suggestion === undefined ? '' : ` Did you mean ${goQuote(suggestion)}?`}`,
      tok,
    );
    return undefined;
  }
}

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);
}

// ---------------------------------------------------------------------------
// JSON values as HCL expressions

/**
 * A JSON value as the HCL expression the JSON syntax gives it (hcl
 * `json/spec.md` "Expression Evaluation"): objects are object constructors
 * whose keys are templates, arrays are tuples, numbers, bools and null are
 * literals, and strings are templates.
 */
export function jsonToExpression(v: JsonValue): Expression {
  switch (v.kind) {
    case 'object': {
      const items = v.props.map((p) => {
        const key: ObjectKeyExpr = {
          kind: 'ObjectKey',
          wrapped: jsonStringTemplate(p.name, p.nameRange),
          forceNonLiteral: true,
          range: p.nameRange,
        };
        return { key, value: jsonToExpression(p.value) };
      });
      return { kind: 'ObjectCons', items, openRange: v.openRange, range: v.range };
    }
    case 'array':
      return { kind: 'TupleCons', items: v.items.map(jsonToExpression), openRange: v.openRange, range: v.range };
    case 'string':
      return jsonStringTemplate(v.value, v.range);
    case 'number':
      return { kind: 'Literal', valueType: 'number', value: v.value, raw: v.raw, range: v.range };
    case 'bool':
      return {
        kind: 'Literal',
        valueType: 'bool',
        value: v.value,
        keyword: v.value ? 'true' : 'false',
        range: v.range,
      };
    case 'null':
      return { kind: 'Literal', valueType: 'null', value: null, keyword: 'null', range: v.range };
  }
}

/**
 * A JSON string as the expression static analysis sees: hcl's JSON syntax
 * returns a string **literally** when evaluated without an evaluation
 * context, which is how the reference reads every value this loader needs
 * (`required_providers`, `version`, `source`, …). So `"${var.x}"` is the
 * text `${var.x}`, not a variable reference (confirmed with terraform 1.11.4:
 * a module `"source": "${var.x}"` is reported as the address "${var.x}").
 */
export function jsonStringTemplate(value: string, range: Range): Expression {
  return { kind: 'Template', parts: [{ kind: 'Literal', valueType: 'string', value, range }], form: 'quoted', range };
}

/** A deep copy of `node` with every source range replaced by `range`. */
function withRange<T>(node: T, range: Range): T {
  if (Array.isArray(node)) return node.map((n: unknown) => withRange(n, range)) as T;
  if (node === null || typeof node !== 'object') return node;
  const rec = node as Record<string, unknown>;
  if (typeof rec.filename === 'string' && typeof rec.start === 'object' && typeof rec.end === 'object')
    return range as T;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(rec)) out[k] = withRange(v, range);
  return out as T;
}

/**
 * Parses `text` as an absolute traversal (`aws`, `aws.west`, `a.b[0]`), as
 * hclsyntax's `ParseTraversalAbs` does for traversals written inside strings
 * (the JSON syntax, and quoted references in the native syntax). Every range
 * of the result is `range`. `undefined` when `text` is not a traversal.
 */
export function parseTraversalString(text: string, range: Range): Traverser[] | undefined {
  if (text.includes('\n')) return undefined;
  const parsed = parseHCL(`v = ${text}\n`, range.filename);
  const attr = parsed.body.attributes[0];
  if (parsed.diagnostics.length > 0 || !attr || parsed.body.attributes.length !== 1 || parsed.body.blocks.length > 0)
    return undefined;
  if (attr.expr.kind !== 'ScopeTraversal') return undefined;
  return withRange(attr.expr.traversal, range);
}
