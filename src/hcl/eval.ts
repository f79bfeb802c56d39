/**
 * Static evaluation of HCL expressions: evaluation with no variables and no
 * functions, as hclsyntax does with a nil `EvalContext` (Terraform evaluates
 * `.terraform.lock.hcl` and `required_providers` that way), plus the static
 * analyses of the spec ("Static Analysis": static list, static map, static
 * traversal, keyword).
 *
 * Contract: nothing here throws. Every function returns its result together
 * with diagnostics; a result of `undefined` comes with at least one error
 * diagnostic, or is `unknown`: the expression holds a number literal the
 * parser could not read and has already reported (hclsyntax gives it
 * `cty.UnknownVal(cty.Number)`, parser.go `numberLitValue`, and evaluation
 * reports nothing more; the caller decides what an unknown value means, as
 * terraform's decoders do). Diagnostics are worded like HCL's ("Variables
 * not allowed", "Function calls not allowed", "Invalid expression", ...).
 *
 * What evaluates: literals; templates, including interpolations and
 * `%{if}`/`%{for}` directives whose operands are themselves static (so
 * `"${"a"}b"` folds to `"ab"`); tuples; objects; parentheses; unary and
 * binary operators; conditionals; index, attribute and splat operators on
 * static values; `for` expressions (their own iteration variables are the
 * only variables allowed). Variables and function calls are reported.
 *
 * Values follow the HCL information model loosely: tuples are arrays,
 * objects are null-prototype records, numbers are IEEE doubles (HCL's are
 * arbitrary precision: integers beyond 2^53 and long fractions lose digits).
 */

import { hasErrors, syntaxError } from './diagnostics.js';
import type { Attribute, Diagnostic, Expression, ObjectKeyExpr, Range, TemplateExpr, Traverser } from './ast.js';
import type { SourceText } from './lexer.js';

/** A value computed statically. */
export type StaticValue = null | boolean | number | string | StaticValue[] | StaticObject;

/** An object value (null prototype: any key, `__proto__` included, is an own data property). */
export interface StaticObject {
  [key: string]: StaticValue;
}

/** A result with the diagnostics that explain a missing value. */
export interface StaticResult<T> {
  /** Undefined exactly when `diagnostics` has an error or `unknown` is set. */
  value: T | undefined;
  diagnostics: Diagnostic[];
  /** The value is unknown: a syntax error the parser reported (see the module comment). */
  unknown?: true;
}

/** Evaluates `expr` with no variables and no functions. */
export function evaluateStatic(expr: Expression): StaticResult<StaticValue> {
  const ev = new Evaluator();
  let value: StaticValue | undefined;
  try {
    value = ev.eval(expr, ROOT_SCOPE);
  } catch (e) {
    // Backstop for a stack overflow on a caller's already deep stack.
    if (!(e instanceof RangeError)) throw e;
    ev.diags.push(diag('Nesting too deep', 'This expression is nested too deeply to be evaluated.', expr.range));
  }
  return finish(value, ev.diags, expr.range, ev.unknown);
}

/**
 * A static string: evaluates `expr` and requires a string. Numbers and bools
 * are converted as HCL converts them to string (`1` → `"1"`, `true` →
 * `"true"`); null, tuples and objects are errors.
 */
export function staticString(expr: Expression): StaticResult<string> {
  const r = evaluateStatic(expr);
  if (r.value === undefined)
    return { value: undefined, diagnostics: r.diagnostics, ...(r.unknown ? { unknown: r.unknown } : {}) };
  const s = convertToString(r.value);
  if (s !== undefined) return { value: s, diagnostics: r.diagnostics };
  return {
    value: undefined,
    diagnostics: [
      ...r.diagnostics,
      r.value === null
        ? diag('Invalid value', 'A string is required here, but this value is null.', expr.range)
        : diag(
            'Incorrect value type',
            `A string is required here, but this value is ${typeName(r.value)}.`,
            expr.range,
          ),
    ],
  };
}

/**
 * The element expressions of a static list: `expr` must be a tuple
 * constructor `[...]` (possibly parenthesized), as hcl.ExprList requires. The
 * elements are returned unevaluated.
 */
export function staticList(expr: Expression): { items: Expression[] | undefined; diagnostics: Diagnostic[] } {
  const inner = unwrapParens(expr);
  if (inner.kind === 'TupleCons') return { items: inner.items, diagnostics: [] };
  // hcl.ExprList reports at the expression's StartRange (inside the quotes of a string; confirmed with terraform 1.11.4).
  return {
    items: undefined,
    diagnostics: [diag('Invalid expression', 'A static list expression is required.', startRange(expr))],
  };
}

/**
 * hclsyntax's `Expression.StartRange`: the part of an expression a
 * diagnostic about it as a whole points at (`expression*.go` of
 * hashicorp/hcl v2): a template's first part (so inside the quotes; an
 * empty `""` gives the empty span after it), a call's name
 * and `(`, an operator's left operand, the opening bracket of a collection.
 */
export function startRange(expr: Expression): Range {
  switch (expr.kind) {
    case 'Template': {
      const first = expr.parts[0];
      const empty =
        first === undefined ||
        (expr.parts.length === 1 && first.kind === 'Literal' && first.range.start.byte === first.range.end.byte);
      // hclsyntax gives an empty template an empty part at the end of the token after the opening
      // quote, the closing one (confirmed with terraform 1.11.4 for `""`).
      if (empty) return { filename: expr.range.filename, start: expr.range.end, end: expr.range.end };
      return startRange(first);
    }
    case 'FunctionCall':
      return { filename: expr.range.filename, start: expr.nameRange.start, end: expr.openParenRange.end };
    case 'Conditional':
      return startRange(expr.condition);
    case 'BinaryOp':
      return startRange(expr.lhs);
    case 'UnaryOp':
      return expr.symbolRange;
    case 'Parentheses':
      return startRange(expr.expression);
    case 'ObjectKey':
      return startRange(expr.wrapped);
    case 'TupleCons':
    case 'ObjectCons':
    case 'For':
      return expr.openRange;
    case 'Splat':
      return expr.markerRange;
    case 'Index': {
      const s = expr.bracketRange.start;
      const end = { line: s.line, column: s.column + 1, byte: s.byte + 1 };
      return { filename: expr.range.filename, start: s, end };
    }
    default:
      return expr.range;
  }
}

/** Whether `expr` is a static list expression (see {@link staticList}). */
export function isStaticList(expr: Expression): boolean {
  return unwrapParens(expr).kind === 'TupleCons';
}

/** A static list whose elements are each a static string (see {@link staticString}). */
export function staticStringList(expr: Expression): StaticResult<string[]> {
  const list = staticList(expr);
  if (!list.items) return { value: undefined, diagnostics: list.diagnostics };
  const out: string[] = [];
  const diagnostics: Diagnostic[] = [];
  let unknown = false;
  for (const item of list.items) {
    const r = staticString(item);
    diagnostics.push(...r.diagnostics);
    if (r.value !== undefined) out.push(r.value);
    else if (r.unknown) unknown = true;
  }
  if (hasErrors(diagnostics)) return { value: undefined, diagnostics };
  return unknown ? { value: undefined, diagnostics, unknown: true } : { value: out, diagnostics };
}

/** One pair of a static map. */
export interface StaticMapPair {
  /** The key as a string: an identifier key is its name; otherwise the key must evaluate statically. */
  key: string | undefined;
  keyExpr: ObjectKeyExpr;
  /** The value expression, unevaluated. */
  value: Expression;
}

/**
 * The pairs of a static map: `expr` must be an object constructor `{...}`
 * (possibly parenthesized), as hcl.ExprMap requires. Keys are resolved (a
 * key that is not static gets `key: undefined` and a diagnostic); values are
 * returned unevaluated.
 */
export function staticMap(expr: Expression): { pairs: StaticMapPair[] | undefined; diagnostics: Diagnostic[] } {
  const inner = unwrapParens(expr);
  if (inner.kind !== 'ObjectCons') {
    return {
      pairs: undefined,
      diagnostics: [diag('Invalid expression', 'A static map expression is required.', expr.range)],
    };
  }
  const ev = new Evaluator();
  const pairs = inner.items.map(({ key, value }) => ({ key: ev.objectKey(key, ROOT_SCOPE), keyExpr: key, value }));
  return { pairs, diagnostics: ev.diags };
}

/**
 * `hcl.ExprMap`: the key and value expressions of an object constructor
 * `{...}` (possibly parenthesized), neither evaluated; anything else is
 * "A static map expression is required".
 */
export function exprMap(expr: Expression): {
  pairs: { keyExpr: ObjectKeyExpr; value: Expression }[] | undefined;
  diagnostics: Diagnostic[];
} {
  const inner = unwrapParens(expr);
  if (inner.kind !== 'ObjectCons') {
    return {
      pairs: undefined,
      diagnostics: [diag('Invalid expression', 'A static map expression is required.', expr.range)],
    };
  }
  return { pairs: inner.items.map(({ key, value }) => ({ keyExpr: key, value })), diagnostics: [] };
}

/**
 * The static traversal of `expr` (hcl.AbsTraversalForExpr): a variable with
 * constant attribute and index steps, like `aws.west` or `module.vpc`. The
 * keywords `true`, `false` and `null` count as single-step traversals (spec
 * "Static Traversal").
 */
export function staticTraversal(expr: Expression): { traversal: Traverser[] | undefined; diagnostics: Diagnostic[] } {
  const inner = unwrapParens(expr);
  if (inner.kind === 'ScopeTraversal') return { traversal: inner.traversal, diagnostics: [] };
  if (inner.kind === 'Literal' && 'keyword' in inner) {
    return { traversal: [{ type: 'root', name: inner.keyword, range: inner.range }], diagnostics: [] };
  }
  return {
    traversal: undefined,
    diagnostics: [
      diag(
        'Invalid expression',
        'A single static variable reference is required: only attribute access and indexing with constant keys. No calculations, function calls, template expressions, etc are allowed here.',
        expr.range,
      ),
    ],
  };
}

/**
 * The keyword `expr` stands for (hcl.ExprAsKeyword): a bare identifier such
 * as `string` in `type = string`, or `true`/`false`/`null`; otherwise undefined.
 */
export function exprAsKeyword(expr: Expression): string | undefined {
  if (expr.kind === 'ScopeTraversal' && expr.traversal.length === 1) {
    const root = expr.traversal[0];
    return root?.type === 'root' ? root.name : undefined;
  }
  if (expr.kind === 'Literal' && 'keyword' in expr) return expr.keyword;
  return undefined;
}

/** The source text of a range, exactly as written (bytes decoded as UTF-8). */
export function sourceText(source: SourceText, range: Range): string {
  return source.text(range.start.byte, range.end.byte);
}

/** The raw source text of an attribute: the whole definition, and its value expression alone. */
export function attributeSourceText(source: SourceText, attr: Attribute): { whole: string; expression: string } {
  return { whole: sourceText(source, attr.range), expression: sourceText(source, attr.expr.range) };
}

/**
 * A number as HCL writes it in a string: decimal, no exponent (`1e21` →
 * `"1000000000000000000000"`, `1e-7` → `"0.0000001"`).
 */
export function formatNumber(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  // The shortest decimal that round-trips (what the user most likely wrote),
  // with any exponent expanded; not the exact binary value of the double.
  const s = String(n);
  const m = /^(-?)(\d+)(?:\.(\d+))?e([+-]\d+)$/.exec(s);
  if (!m) return s;
  const sign = m[1] ?? '';
  const digits = (m[2] ?? '') + (m[3] ?? '');
  const point = (m[2] ?? '').length + Number(m[4]);
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`.replace(/0+$/, '');
  if (point >= digits.length) return sign + digits + '0'.repeat(point - digits.length);
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

// ---------------------------------------------------------------------------

interface Scope {
  vars: ReadonlyMap<string, StaticValue>;
  /** The current splat element, if inside a splat's `each`. */
  anon?: { value: StaticValue };
  parent?: Scope;
}

const ROOT_SCOPE: Scope = { vars: new Map() };

const diag = syntaxError;

function finish<T>(value: T | undefined, diags: Diagnostic[], range: Range, unknown: boolean): StaticResult<T> {
  if (value === undefined || hasErrors(diags)) {
    if (!hasErrors(diags)) {
      if (unknown) return { value: undefined, diagnostics: diags, unknown: true };
      diags.push(diag('Invalid expression', 'This expression could not be evaluated.', range));
    }
    return { value: undefined, diagnostics: diags };
  }
  return { value, diagnostics: diags };
}

function unwrapParens(expr: Expression): Expression {
  let e = expr;
  while (e.kind === 'Parentheses') e = e.expression;
  return e;
}

function isObject(v: StaticValue): v is StaticObject {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function newObject(): StaticObject {
  return Object.create(null) as StaticObject;
}

function typeName(v: StaticValue): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a tuple';
  if (typeof v === 'object') return 'an object';
  return `a ${typeof v === 'boolean' ? 'bool' : typeof v}`;
}

/** HCL's conversion of a primitive to string; undefined for null and collections. */
function convertToString(v: StaticValue): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return formatNumber(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  return undefined;
}

/** HCL's conversion to number: numbers, and strings that are decimal numbers. */
function convertToNumber(v: StaticValue): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && /^-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?$/.test(v)) return Number(v);
  return undefined;
}

/** HCL's conversion to bool: bools, and the strings "true" and "false". */
function convertToBool(v: StaticValue): boolean | undefined {
  if (typeof v === 'boolean') return v;
  if (v === 'true') return true;
  if (v === 'false') return false;
  return undefined;
}

function staticEqual(a: StaticValue, b: StaticValue): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((x, i) => staticEqual(x, b[i] as StaticValue));
  }
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    return ka.length === kb.length && ka.every((k) => k in b && staticEqual(a[k] as StaticValue, b[k] as StaticValue));
  }
  return false;
}

/** Lexical order of keys by code point, as HCL orders object iteration. */
function compareKeys(a: string, b: string): number {
  const ia = a[Symbol.iterator]();
  const ib = b[Symbol.iterator]();
  for (;;) {
    const x = ia.next();
    const y = ib.next();
    if (x.done === true) return y.done === true ? 0 : -1;
    if (y.done === true) return 1;
    const cx = x.value.codePointAt(0) ?? 0;
    const cy = y.value.codePointAt(0) ?? 0;
    if (cx !== cy) return cx - cy;
  }
}

/**
 * Recursion bound of the evaluator. The parser bounds tree depth (see
 * MAX_NESTING in parser.ts), so this is only a backstop for hand-built trees.
 */
const MAX_EVAL_DEPTH = 1000;

class Evaluator {
  readonly diags: Diagnostic[] = [];
  /** A number literal the parser could not read was met (see the module comment). */
  unknown = false;
  private depth = 0;

  private fail(summary: string, detail: string, range: Range): undefined {
    this.diags.push(diag(summary, detail, range));
    return undefined;
  }

  eval(expr: Expression, scope: Scope): StaticValue | undefined {
    if (this.depth >= MAX_EVAL_DEPTH) {
      return this.fail('Nesting too deep', 'This expression is nested too deeply to be evaluated.', expr.range);
    }
    this.depth++;
    try {
      return this.evalInner(expr, scope);
    } finally {
      this.depth--;
    }
  }

  /**
   * One step of evaluation. Kept small on purpose (each case delegates), so
   * that its stack frame is small and deep trees recurse far before the
   * engine's stack limit.
   */
  private evalInner(expr: Expression, scope: Scope): StaticValue | undefined {
    switch (expr.kind) {
      case 'Literal':
        // A number literal the parser could not read (parser.ts `numberValue` reported it): unknown.
        if (expr.valueType === 'number' && Number.isNaN(expr.value)) {
          this.unknown = true;
          return undefined;
        }
        return expr.value;
      case 'Template':
        return this.template(expr, scope);
      case 'TemplateWrap':
        return this.eval(expr.wrapped, scope);
      case 'TemplateIf':
        return this.templateIf(expr, scope);
      case 'TemplateFor':
        return this.templateFor(expr, scope);
      case 'ScopeTraversal':
        return this.scopeTraversal(expr, scope);
      case 'RelativeTraversal':
        return this.relativeTraversal(expr, scope);
      case 'FunctionCall':
        // hclsyntax reports the whole call (confirmed with terraform 1.11.4).
        return this.fail('Function calls not allowed', 'Functions may not be called here.', expr.range);
      case 'Index':
        return this.indexExpr(expr, scope);
      case 'Splat':
        return this.splat(expr, scope);
      case 'AnonSymbol':
        return this.anonSymbol(expr, scope);
      case 'Conditional':
        return this.conditional(expr, scope);
      case 'BinaryOp':
        return this.binary(expr.op, expr.lhs, expr.rhs, scope, expr.range);
      case 'UnaryOp':
        return this.unary(expr, scope);
      case 'Parentheses':
        return this.eval(expr.expression, scope);
      case 'TupleCons':
        return this.tuple(expr, scope);
      case 'ObjectCons':
        return this.object(expr, scope);
      case 'ObjectKey':
        return this.objectKey(expr, scope);
      case 'For':
        return this.forExpr(expr, scope);
      case 'Invalid':
        return this.fail(
          'Invalid expression',
          'This expression could not be parsed; see the syntax error reported for it.',
          expr.range,
        );
    }
  }

  private templateIf(expr: Extract<Expression, { kind: 'TemplateIf' }>, scope: Scope): StaticValue | undefined {
    const cond = this.condition(expr.condition, scope);
    if (cond === undefined) return undefined;
    return this.template(cond ? expr.then : expr.else, scope);
  }

  private templateFor(expr: Extract<Expression, { kind: 'TemplateFor' }>, scope: Scope): StaticValue | undefined {
    let out = '';
    let ok = true;
    const iterated = this.iterate(expr.collection, scope, expr.keyVar, expr.valueVar, (child) => {
      const s = this.template(expr.body, child);
      if (s === undefined) ok = false;
      else out += s;
    });
    return iterated && ok ? out : undefined;
  }

  private scopeTraversal(expr: Extract<Expression, { kind: 'ScopeTraversal' }>, scope: Scope): StaticValue | undefined {
    const [root, ...rest] = expr.traversal;
    if (root?.type !== 'root')
      return this.fail('Invalid expression', 'This expression could not be evaluated.', expr.range);
    const v = this.lookup(root.name, scope);
    if (v === undefined) return this.fail('Variables not allowed', 'Variables may not be used here.', root.range);
    return this.traverse(v.value, rest);
  }

  private relativeTraversal(
    expr: Extract<Expression, { kind: 'RelativeTraversal' }>,
    scope: Scope,
  ): StaticValue | undefined {
    const v = this.eval(expr.source, scope);
    return v === undefined ? undefined : this.traverse(v, expr.traversal);
  }

  private indexExpr(expr: Extract<Expression, { kind: 'Index' }>, scope: Scope): StaticValue | undefined {
    const coll = this.eval(expr.collection, scope);
    const key = this.eval(expr.key, scope);
    if (coll === undefined || key === undefined) return undefined;
    return this.index(coll, key, expr.bracketRange);
  }

  private splat(expr: Extract<Expression, { kind: 'Splat' }>, scope: Scope): StaticValue | undefined {
    const src = this.eval(expr.source, scope);
    if (src === undefined) return undefined;
    // Spec "Splat Operators": null becomes an empty tuple, a non-list a one-element tuple.
    const elems = src === null ? [] : Array.isArray(src) ? src : [src];
    const out: StaticValue[] = [];
    for (const el of elems) {
      const v = this.eval(expr.each, { vars: new Map(), anon: { value: el }, parent: scope });
      if (v === undefined) return undefined;
      out.push(v);
    }
    return out;
  }

  private anonSymbol(expr: Extract<Expression, { kind: 'AnonSymbol' }>, scope: Scope): StaticValue | undefined {
    for (let s: Scope | undefined = scope; s; s = s.parent) if (s.anon) return s.anon.value;
    return this.fail('Invalid expression', 'A splat placeholder was used outside of a splat expression.', expr.range);
  }

  private conditional(expr: Extract<Expression, { kind: 'Conditional' }>, scope: Scope): StaticValue | undefined {
    const cond = this.condition(expr.condition, scope);
    if (cond === undefined) return undefined;
    return this.eval(cond ? expr.trueResult : expr.falseResult, scope);
  }

  private unary(expr: Extract<Expression, { kind: 'UnaryOp' }>, scope: Scope): StaticValue | undefined {
    const v = this.eval(expr.operand, scope);
    if (v === undefined) return undefined;
    if (expr.op === '-') {
      const n = convertToNumber(v);
      if (n === undefined)
        return this.fail(
          'Invalid operand',
          'Unsuitable value for unary operand: a number is required.',
          expr.operand.range,
        );
      return -n;
    }
    const b = convertToBool(v);
    if (b === undefined)
      return this.fail(
        'Invalid operand',
        'Unsuitable value for unary operand: a bool is required.',
        expr.operand.range,
      );
    return !b;
  }

  private tuple(expr: Extract<Expression, { kind: 'TupleCons' }>, scope: Scope): StaticValue | undefined {
    const out: StaticValue[] = [];
    let ok = true;
    for (const item of expr.items) {
      const v = this.eval(item, scope);
      if (v === undefined) ok = false;
      else out.push(v);
    }
    return ok ? out : undefined;
  }

  private object(expr: Extract<Expression, { kind: 'ObjectCons' }>, scope: Scope): StaticValue | undefined {
    const out = newObject();
    let ok = true;
    for (const { key, value } of expr.items) {
      const k = this.objectKey(key, scope);
      const v = this.eval(value, scope);
      if (k === undefined || v === undefined) ok = false;
      else out[k] = v; // a later duplicate wins, as in hclsyntax
    }
    return ok ? out : undefined;
  }

  private lookup(name: string, scope: Scope): { value: StaticValue } | undefined {
    for (let s: Scope | undefined = scope; s; s = s.parent) {
      if (s.vars.has(name)) return { value: s.vars.get(name) as StaticValue };
    }
    return undefined;
  }

  private template(expr: TemplateExpr, scope: Scope): string | undefined {
    let out = '';
    let ok = true;
    for (const part of expr.parts) {
      const v = this.eval(part, scope);
      if (v === undefined) {
        ok = false;
        continue;
      }
      if (v === null) {
        this.fail(
          'Invalid template interpolation value',
          'The expression result is null. Cannot include a null value in a string template.',
          part.range,
        );
        ok = false;
        continue;
      }
      const s = convertToString(v);
      if (s === undefined) {
        this.fail(
          'Invalid template interpolation value',
          `Cannot include the given value in a string template: string required, but this value is ${typeName(v)}.`,
          part.range,
        );
        ok = false;
        continue;
      }
      out += s;
    }
    return ok ? out : undefined;
  }

  private condition(expr: Expression, scope: Scope): boolean | undefined {
    const v = this.eval(expr, scope);
    if (v === undefined) return undefined;
    if (v === null)
      return this.fail(
        'Null condition',
        'The condition value is null. Conditions must either be true or false.',
        expr.range,
      );
    const b = convertToBool(v);
    if (b === undefined)
      return this.fail('Incorrect condition type', 'The condition expression must be of type bool.', expr.range);
    return b;
  }

  objectKey(key: ObjectKeyExpr, scope: Scope): string | undefined {
    if (!key.forceNonLiteral) {
      const w = key.wrapped;
      // Spec "Collection Values": a bare identifier key is a literal name.
      if (w.kind === 'ScopeTraversal' && w.traversal.length === 1 && w.traversal[0]?.type === 'root')
        return w.traversal[0].name;
      if (w.kind === 'Literal' && 'keyword' in w) return w.keyword;
    }
    const v = this.eval(key.wrapped, scope);
    if (v === undefined) return undefined;
    if (v === null) return this.fail('Null value as key', "Can't use a null value as a key.", key.range);
    const s = convertToString(v);
    if (s === undefined)
      return this.fail('Incorrect key type', "Can't use this value as a key: string required.", key.range);
    return s;
  }

  private traverse(value: StaticValue, steps: readonly Traverser[]): StaticValue | undefined {
    let v = value;
    for (const step of steps) {
      let next: StaticValue | undefined;
      if (step.type === 'attr') {
        if (isObject(v)) {
          next = Object.prototype.hasOwnProperty.call(v, step.name) ? v[step.name] : undefined;
          if (next === undefined) {
            return this.fail(
              'Unsupported attribute',
              `This object does not have an attribute named ${JSON.stringify(step.name)}.`,
              step.range,
            );
          }
        } else if (v === null) {
          return this.fail(
            'Attempt to get attribute from null value',
            'This value is null, so it does not have any attributes.',
            step.range,
          );
        } else {
          return this.fail(
            'Unsupported attribute',
            `This value does not have any attributes: it is ${typeName(v)}.`,
            step.range,
          );
        }
      } else if (step.type === 'index') {
        if (step.key === null && step.legacy)
          return this.fail('Invalid index', 'This index could not be parsed.', step.range);
        next = this.index(v, step.key, step.range);
      } else {
        return this.fail('Invalid expression', 'This expression could not be evaluated.', step.range);
      }
      if (next === undefined) return undefined;
      v = next;
    }
    return v;
  }

  private index(coll: StaticValue, key: StaticValue, range: Range): StaticValue | undefined {
    if (coll === null)
      return this.fail('Attempt to index null value', 'This value is null, so it does not have any indices.', range);
    if (key === null) return this.fail('Invalid index', "Can't use a null value as an indexing key.", range);
    if (Array.isArray(coll)) {
      const n = convertToNumber(key);
      if (n === undefined || !Number.isInteger(n) || n < 0 || n >= coll.length) {
        return this.fail(
          'Invalid index',
          'The given key does not identify an element in this collection value.',
          range,
        );
      }
      return coll[n];
    }
    if (isObject(coll)) {
      const k = convertToString(key);
      if (k === undefined || !Object.prototype.hasOwnProperty.call(coll, k)) {
        return this.fail(
          'Invalid index',
          'The given key does not identify an element in this collection value.',
          range,
        );
      }
      return coll[k];
    }
    return this.fail('Invalid index', `This value does not have any indices: it is ${typeName(coll)}.`, range);
  }

  private binary(
    op: string,
    lhsExpr: Expression,
    rhsExpr: Expression,
    scope: Scope,
    range: Range,
  ): StaticValue | undefined {
    const lhs = this.eval(lhsExpr, scope);
    const rhs = this.eval(rhsExpr, scope);
    if (lhs === undefined || rhs === undefined) return undefined;
    switch (op) {
      case '==':
        return staticEqual(lhs, rhs);
      case '!=':
        return !staticEqual(lhs, rhs);
      case '&&':
      case '||': {
        const a = convertToBool(lhs);
        const b = convertToBool(rhs);
        if (a === undefined)
          return this.fail('Invalid operand', 'Unsuitable value for left operand: a bool is required.', lhsExpr.range);
        if (b === undefined)
          return this.fail('Invalid operand', 'Unsuitable value for right operand: a bool is required.', rhsExpr.range);
        return op === '&&' ? a && b : a || b;
      }
      default: {
        const a = convertToNumber(lhs);
        const b = convertToNumber(rhs);
        if (a === undefined)
          return this.fail(
            'Invalid operand',
            'Unsuitable value for left operand: a number is required.',
            lhsExpr.range,
          );
        if (b === undefined)
          return this.fail(
            'Invalid operand',
            'Unsuitable value for right operand: a number is required.',
            rhsExpr.range,
          );
        switch (op) {
          case '<':
            return a < b;
          case '>':
            return a > b;
          case '<=':
            return a <= b;
          case '>=':
            return a >= b;
          case '+':
            return a + b;
          case '-':
            return a - b;
          case '*':
            return a * b;
          case '/':
          case '%':
            if (b === 0) return this.fail('Error during operation', 'Cannot divide by zero.', range);
            return op === '/' ? a / b : a % b;
          default:
            return this.fail('Invalid expression', `Unknown operator ${op}.`, range);
        }
      }
    }
  }

  /** Calls `body` once per element of a static collection, in HCL's order (spec "For Expressions"). */
  private iterate(
    collExpr: Expression,
    scope: Scope,
    keyVar: string,
    valueVar: string,
    body: (child: Scope) => void,
  ): boolean {
    const coll = this.eval(collExpr, scope);
    if (coll === undefined) return false;
    if (coll === null) {
      this.fail(
        'Iteration over null value',
        "A null value cannot be used as the collection in a 'for' expression.",
        collExpr.range,
      );
      return false;
    }
    let entries: [StaticValue, StaticValue][];
    if (Array.isArray(coll)) entries = coll.map((v, i) => [i, v]);
    else if (isObject(coll))
      entries = Object.keys(coll)
        .sort(compareKeys)
        .map((k) => [k, coll[k] as StaticValue]);
    else {
      this.fail(
        'Iteration over non-iterable value',
        `A value of type ${typeof coll === 'boolean' ? 'bool' : typeof coll} cannot be used as the collection in a 'for' expression.`,
        collExpr.range,
      );
      return false;
    }
    for (const [k, v] of entries) {
      const vars = new Map<string, StaticValue>();
      if (keyVar !== '') vars.set(keyVar, k);
      vars.set(valueVar, v);
      body({ vars, parent: scope });
    }
    return true;
  }

  private forExpr(expr: Extract<Expression, { kind: 'For' }>, scope: Scope): StaticValue | undefined {
    let ok = true;
    const tuple: StaticValue[] = [];
    const obj = newObject();
    const groups = new Map<string, StaticValue[]>();
    const iterated = this.iterate(expr.collection, scope, expr.keyVar, expr.valueVar, (child) => {
      if (!ok) return;
      if (expr.condition) {
        const c = this.condition(expr.condition, child);
        if (c === undefined) {
          ok = false;
          return;
        }
        if (!c) return;
      }
      if (expr.result === 'tuple' || !expr.keyExpr) {
        const v = this.eval(expr.valueExpr, child);
        if (v === undefined) ok = false;
        else tuple.push(v);
        return;
      }
      const kv = this.eval(expr.keyExpr, child);
      const v = this.eval(expr.valueExpr, child);
      if (kv === undefined || v === undefined) {
        ok = false;
        return;
      }
      const k = kv === null ? undefined : convertToString(kv);
      if (k === undefined) {
        this.fail(
          'Invalid object key',
          kv === null
            ? "Key expression in 'for' expression must not produce a null value."
            : "Key expression in 'for' expression must produce a string.",
          expr.keyExpr.range,
        );
        ok = false;
        return;
      }
      if (expr.group) {
        const g = groups.get(k);
        if (g) g.push(v);
        else groups.set(k, [v]);
      } else if (Object.prototype.hasOwnProperty.call(obj, k)) {
        this.fail(
          'Duplicate object key',
          `Two different items produced the key ${JSON.stringify(k)} in this 'for' expression. If duplicates are expected, use the ellipsis (...) after the value expression to enable grouping by key.`,
          expr.keyExpr.range,
        );
        ok = false;
      } else {
        obj[k] = v;
      }
    });
    if (!iterated || !ok) return undefined;
    if (expr.result === 'tuple') return tuple;
    if (expr.group) for (const [k, vs] of groups) obj[k] = vs;
    return obj;
  }
}
