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
 * (confirmed with terraform 1.11.4). Everything else stays strict.
 *
 * Pure: no I/O, never throws for bad input.
 */
import type { Diagnostic, Expression, ObjectKeyExpr, Range, Traverser } from './ast.js';
import { SourceText } from './lexer.js';
import { parseHCL } from './index.js';

/** A JSON value with its source range. */
export type JsonValue = JsonObject | JsonArray | JsonString | JsonNumber | JsonBool | JsonNull;

export interface JsonObject {
  kind: 'object';
  /** Properties in source order; duplicate names are kept. */
  props: JsonProperty[];
  range: Range;
  openRange: Range;
  closeRange: Range;
}
export interface JsonArray {
  kind: 'array';
  items: JsonValue[];
  range: Range;
  openRange: Range;
}
export interface JsonString {
  kind: 'string';
  value: string;
  range: Range;
}
export interface JsonNumber {
  kind: 'number';
  raw: string;
  value: number;
  range: Range;
}
export interface JsonBool {
  kind: 'bool';
  value: boolean;
  range: Range;
}
export interface JsonNull {
  kind: 'null';
  range: Range;
}
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

const MAX_DEPTH = 256;

class JsonSyntaxError extends Error {
  constructor(
    readonly summary: string,
    readonly detail: string,
    readonly at: number,
    readonly end: number,
  ) {
    super(summary);
  }
}

/**
 * Parses `source` as one JSON value. On a syntax error the result has no
 * value and one error diagnostic at the offending position. A byte order
 * mark is skipped. Bytes that are not UTF-8 are an "Invalid character
 * encoding" error.
 */
export function parseJSON(
  source: Uint8Array | string,
  filename: string,
  options: { hcl1?: boolean } = {},
): JsonParseResult {
  const bytes = typeof source === 'string' ? new TextEncoder().encode(source) : source;
  const src = new SourceText(bytes, filename);
  const bad = firstInvalidUtf8(bytes);
  if (bad >= 0) {
    return {
      value: undefined,
      diagnostics: [
        {
          severity: 'error',
          summary: 'Invalid character encoding',
          detail: 'All input files must be UTF-8 encoded. Ensure that UTF-8 encoding is selected in your editor.',
          range: src.range(bad, bad + 1),
        },
      ],
    };
  }
  const p = new JsonParser(bytes, src, options.hcl1 === true);
  try {
    p.skipSpace();
    const value = p.value(0);
    p.skipSpace();
    if (p.i < bytes.length) {
      throw new JsonSyntaxError(
        'Extraneous data after value',
        'Extra characters appear after the JSON value.',
        p.i,
        p.i + 1,
      );
    }
    return { value, diagnostics: [] };
  } catch (e) {
    if (!(e instanceof JsonSyntaxError)) throw e;
    return {
      value: undefined,
      diagnostics: [{ severity: 'error', summary: e.summary, detail: e.detail, range: src.range(e.at, e.end) }],
    };
  }
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

class JsonParser {
  i: number;

  constructor(
    private readonly b: Uint8Array,
    private readonly src: SourceText,
    /** HCL 1's lenient separators (see the module comment). */
    private readonly hcl1 = false,
  ) {
    this.i = src.contentStart;
  }

  skipSpace(): void {
    const b = this.b;
    while (this.i < b.length) {
      const c = b[this.i];
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) this.i++;
      else break;
    }
  }

  private range(start: number, end: number): Range {
    return this.src.range(start, end);
  }

  value(depth: number): JsonValue {
    if (depth > MAX_DEPTH)
      throw new JsonSyntaxError('Nesting too deep', 'This JSON value is nested too deeply.', this.i, this.i + 1);
    const c = this.b[this.i];
    if (c === undefined) {
      throw new JsonSyntaxError(
        'Missing JSON value',
        'A JSON value must start with a brace, a bracket, a number, a string, or a keyword.',
        this.i,
        this.i,
      );
    }
    if (c === 0x7b) return this.object(depth);
    if (c === 0x5b) return this.array(depth);
    if (c === 0x22) return this.string();
    if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return this.number();
    if ((c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a)) return this.keyword();
    throw new JsonSyntaxError(
      'Invalid start of value',
      'A JSON value must start with a brace, a bracket, a number, a string, or a keyword.',
      this.i,
      this.i + 1,
    );
  }

  private object(depth: number): JsonObject {
    const start = this.i;
    this.i++;
    const props: JsonProperty[] = [];
    this.skipSpace();
    if (this.b[this.i] === 0x7d) {
      this.i++;
      return {
        kind: 'object',
        props,
        range: this.range(start, this.i),
        openRange: this.range(start, start + 1),
        closeRange: this.range(this.i - 1, this.i),
      };
    }
    for (;;) {
      this.skipSpace();
      const c = this.b[this.i];
      if (c === undefined)
        throw new JsonSyntaxError(
          'Unclosed object',
          'No closing brace was found for this JSON object.',
          start,
          start + 1,
        );
      if (c !== 0x22) {
        if (c === 0x7d && this.hcl1) {
          this.i++;
          return {
            kind: 'object',
            props,
            range: this.range(start, this.i),
            openRange: this.range(start, start + 1),
            closeRange: this.range(this.i - 1, this.i),
          };
        }
        if (c === 0x7d) {
          throw new JsonSyntaxError(
            'Trailing comma in object',
            'JSON does not permit a trailing comma after the final property in an object.',
            this.i,
            this.i + 1,
          );
        }
        throw new JsonSyntaxError(
          'Invalid object property name',
          'A JSON object property name must be a string.',
          this.i,
          this.i + 1,
        );
      }
      const key = this.string();
      this.skipSpace();
      if (this.b[this.i] !== 0x3a) {
        throw new JsonSyntaxError(
          'Missing property value colon',
          "A colon must appear between an object property's name and its value.",
          this.i,
          this.i + 1,
        );
      }
      this.i++;
      this.skipSpace();
      const value = this.value(depth + 1);
      props.push({ name: key.value, nameRange: key.range, value });
      this.skipSpace();
      const sep = this.b[this.i];
      if (sep === 0x2c) {
        this.i++;
        continue;
      }
      if (sep === 0x7d) {
        this.i++;
        return {
          kind: 'object',
          props,
          range: this.range(start, this.i),
          openRange: this.range(start, start + 1),
          closeRange: this.range(this.i - 1, this.i),
        };
      }
      if (sep === undefined)
        throw new JsonSyntaxError(
          'Unclosed object',
          'No closing brace was found for this JSON object.',
          start,
          start + 1,
        );
      if (sep === 0x22 && this.hcl1) continue;
      throw new JsonSyntaxError(
        'Missing property separator comma',
        'A comma must appear between each property definition in an object.',
        this.i,
        this.i + 1,
      );
    }
  }

  private array(depth: number): JsonArray {
    const start = this.i;
    this.i++;
    const items: JsonValue[] = [];
    this.skipSpace();
    if (this.b[this.i] === 0x5d) {
      this.i++;
      return { kind: 'array', items, range: this.range(start, this.i), openRange: this.range(start, start + 1) };
    }
    for (;;) {
      this.skipSpace();
      if (this.b[this.i] === 0x5d && this.hcl1) {
        this.i++;
        return { kind: 'array', items, range: this.range(start, this.i), openRange: this.range(start, start + 1) };
      }
      if (this.b[this.i] === 0x5d) {
        throw new JsonSyntaxError(
          'Trailing comma in array',
          'JSON does not permit a trailing comma after the final value in an array.',
          this.i,
          this.i + 1,
        );
      }
      if (this.b[this.i] === undefined)
        throw new JsonSyntaxError(
          'Unclosed array',
          'No closing bracket was found for this JSON array.',
          start,
          start + 1,
        );
      items.push(this.value(depth + 1));
      this.skipSpace();
      const sep = this.b[this.i];
      if (sep === 0x2c) {
        this.i++;
        continue;
      }
      if (sep === 0x5d) {
        this.i++;
        return { kind: 'array', items, range: this.range(start, this.i), openRange: this.range(start, start + 1) };
      }
      if (sep === undefined)
        throw new JsonSyntaxError(
          'Unclosed array',
          'No closing bracket was found for this JSON array.',
          start,
          start + 1,
        );
      if ((sep === 0x7b || sep === 0x5b || sep === 0x22) && this.hcl1) continue;
      throw new JsonSyntaxError(
        'Missing array element separator comma',
        'A comma must appear between each value in an array.',
        this.i,
        this.i + 1,
      );
    }
  }

  private string(): JsonString {
    const start = this.i;
    const b = this.b;
    let i = start + 1;
    let hasEscape = false;
    for (;;) {
      const c = b[i];
      if (c === undefined || c === 0x0a) {
        throw new JsonSyntaxError('Unterminated string', 'This JSON string has no closing quote.', start, start + 1);
      }
      if (c === 0x22) break;
      if (c < 0x20)
        throw new JsonSyntaxError(
          'Invalid JSON string',
          'Control characters must be escaped in JSON strings.',
          i,
          i + 1,
        );
      if (c === 0x5c) {
        hasEscape = true;
        const e = b[i + 1];
        if (e === 0x75) {
          for (let k = 2; k < 6; k++) {
            const h = b[i + k];
            if (h === undefined || !isHex(h))
              throw new JsonSyntaxError(
                'Invalid JSON string',
                'A \\u escape must be followed by four hexadecimal digits.',
                i,
                i + 2,
              );
          }
          i += 6;
          continue;
        }
        if (e === undefined || !'"\\/bfnrt'.includes(String.fromCharCode(e))) {
          throw new JsonSyntaxError('Invalid JSON string', 'This escape sequence is not valid in JSON.', i, i + 2);
        }
        i += 2;
        continue;
      }
      i++;
    }
    const raw = decoder.decode(b.subarray(start + 1, i));
    this.i = i + 1;
    const value = hasEscape ? (JSON.parse(`"${raw}"`) as string) : raw;
    return { kind: 'string', value, range: this.range(start, this.i) };
  }

  private number(): JsonNumber {
    const start = this.i;
    const rest = decoder.decode(this.b.subarray(start, Math.min(this.b.length, start + 1024)));
    const m = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/.exec(rest);
    if (!m || /^[0-9A-Za-z.]/.test(rest.slice(m[0].length))) {
      throw new JsonSyntaxError('Invalid JSON number', 'This is not a valid JSON number.', start, start + 1);
    }
    this.i = start + m[0].length;
    return { kind: 'number', raw: m[0], value: Number(m[0]), range: this.range(start, this.i) };
  }

  private keyword(): JsonValue {
    const start = this.i;
    let i = start;
    while (i < this.b.length) {
      const c = this.b[i] as number;
      if ((c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39) || c === 0x5f) i++;
      else break;
    }
    const word = decoder.decode(this.b.subarray(start, i));
    this.i = i;
    const range = this.range(start, i);
    if (word === 'true' || word === 'false') return { kind: 'bool', value: word === 'true', range };
    if (word === 'null') return { kind: 'null', range };
    throw new JsonSyntaxError(
      'Invalid JSON keyword',
      `${JSON.stringify(word)} is not a valid JSON keyword. Valid keywords are "true", "false", and "null".`,
      start,
      i,
    );
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
