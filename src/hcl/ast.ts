/**
 * Syntax tree of the HCL native syntax (hashicorp/hcl `hclsyntax/spec.md`).
 *
 * Contract: every node is plain data (no methods, no cycles), carries the
 * source {@link Range} it was parsed from, and is discriminated by `kind`.
 * The shapes follow hclsyntax's node types closely, so a reader who knows
 * `hclsyntax` can map one to the other; the deliberate differences are noted
 * on the node in question (template directives get their own nodes instead of
 * being desugared into conditionals and `for` expressions).
 *
 * A tree built from input with errors is still structurally sound: whatever
 * could not be parsed is represented by an {@link InvalidExpr} placeholder.
 */
import type { DiagnosticRange, SourcePos } from '../errors.js';

/** A position in a source file: a complete {@link SourcePos} (src/errors.ts), every field known. */
export interface Pos extends SourcePos {
  /** 1-based line number; lines are separated by LF (a CR before it belongs to the line). */
  line: number;
  /**
   * 1-based column, counted in user-perceived characters (Unicode grapheme
   * clusters) as HCL does, not in bytes or UTF-16 units. A tab counts as one.
   */
  column: number;
  /** 0-based byte offset into the UTF-8 source (a leading byte order mark included). */
  byte: number;
}

/** A half-open span `[start, end)` of a source file: a complete {@link DiagnosticRange} (src/errors.ts). */
export interface Range extends DiagnosticRange {
  /** The file, as the parser was given its name (diagnostics show it as is). */
  filename: string;
  /** The first character of the span. */
  start: Pos;
  /** Just past the span's last character (exclusive); equal to `start` for an empty span. */
  end: Pos;
}

/**
 * A problem found while parsing or evaluating, worded like HCL's own
 * diagnostics: the one `Diagnostic` of provkit (src/errors.ts), re-exported
 * here so that `provkit/hcl` names the same type as the root export. The
 * parser always sets its `range` (HCL's `Subject`) and, where one helps, its
 * `context`, complete {@link Range}s; its code is `INVALID_CONFIGURATION`
 * from HCL itself, and the lock-file reader gives its own
 * (`INVALID_LOCK_FILE`).
 */
export type { Diagnostic } from '../errors.js';

// ---------------------------------------------------------------------------
// Structure

/** A body: the content of a file or of a block (spec "Bodies"). */
export interface Body {
  kind: 'Body';
  /**
   * Attributes in source order. A name appears at most once: a redefinition
   * is reported ("Attribute redefined") and left out, the first one kept.
   */
  attributes: Attribute[];
  /** Blocks in source order. */
  blocks: Block[];
  range: Range;
  /** Zero-width range at the end of the body (just before the closing brace or at end of file). */
  endRange: Range;
}

/** `name = expression` (spec "Attribute Definitions"). */
export interface Attribute {
  kind: 'Attribute';
  name: string;
  expr: Expression;
  /** From the name to the end of the expression (the newline excluded). */
  range: Range;
  nameRange: Range;
  equalsRange: Range;
}

/** `type label* { body }` (spec "Blocks"). */
export interface Block {
  kind: 'Block';
  type: string;
  /** Label values: quoted labels are unescaped, identifier labels are taken as written. */
  labels: string[];
  body: Body;
  typeRange: Range;
  labelRanges: Range[];
  openBraceRange: Range;
  closeBraceRange: Range;
  /** From the type name to the closing brace. */
  range: Range;
}

// ---------------------------------------------------------------------------
// Expressions

/** Any expression of the expression and template sub-languages. */
export type Expression =
  | LiteralExpr
  | TemplateExpr
  | TemplateWrapExpr
  | TemplateIfExpr
  | TemplateForExpr
  | ScopeTraversalExpr
  | RelativeTraversalExpr
  | FunctionCallExpr
  | IndexExpr
  | SplatExpr
  | AnonSymbolExpr
  | ConditionalExpr
  | BinaryOpExpr
  | UnaryOpExpr
  | ParenthesesExpr
  | TupleConsExpr
  | ObjectConsExpr
  | ObjectKeyExpr
  | ForExpr
  | InvalidExpr;

/**
 * A literal: a number, `true`, `false`, `null`, or a literal string part of
 * a template. (Strings are not literals of the expression language: a quoted
 * string is a {@link TemplateExpr} whose only part is a string literal.)
 */
export type LiteralExpr =
  | { kind: 'Literal'; valueType: 'number'; value: number; /** The literal as written. */ raw: string; range: Range }
  | {
      kind: 'Literal';
      valueType: 'bool';
      value: boolean;
      /** Set when written as a keyword (always, for bools): lets `true` serve as a static traversal. */
      keyword: 'true' | 'false';
      range: Range;
    }
  | { kind: 'Literal'; valueType: 'null'; value: null; keyword: 'null'; range: Range }
  | { kind: 'Literal'; valueType: 'string'; value: string; range: Range };

/**
 * A template: quoted (`"..."`) or heredoc (`<<EOT`). `parts` are string
 * literals, interpolated expressions, and {@link TemplateIfExpr} /
 * {@link TemplateForExpr} directives. Consecutive literals are merged and
 * strip markers (`~`) and `<<-` indentation are already applied to them.
 */
export interface TemplateExpr {
  kind: 'Template';
  parts: Expression[];
  /** How the template was written; `heredoc` is set for heredocs only. */
  form: 'quoted' | 'heredoc';
  heredoc?: { marker: string; /** `<<-`: leading indentation removed. */ flush: boolean };
  range: Range;
}

/**
 * A template that is a single interpolation and nothing else, like `"${x}"`.
 * Per the spec ("Template Interpolation Unwrapping") its value is the wrapped
 * expression's value, not converted to a string.
 */
export interface TemplateWrapExpr {
  kind: 'TemplateWrap';
  wrapped: Expression;
  form: 'quoted' | 'heredoc';
  heredoc?: { marker: string; flush: boolean };
  range: Range;
}

/** `%{ if cond }then%{ else }else%{ endif }` inside a template. */
export interface TemplateIfExpr {
  kind: 'TemplateIf';
  condition: Expression;
  then: TemplateExpr;
  /** The `else` branch; an empty template when there is no `else`. */
  else: TemplateExpr;
  range: Range;
}

/** `%{ for k, v in coll }body%{ endfor }` inside a template. */
export interface TemplateForExpr {
  kind: 'TemplateFor';
  /** Key variable name; empty when only a value variable is declared. */
  keyVar: string;
  valueVar: string;
  collection: Expression;
  body: TemplateExpr;
  range: Range;
}

/** One step of a traversal. */
export type Traverser =
  | { type: 'root'; name: string; range: Range }
  | { type: 'attr'; name: string; range: Range }
  /** `[key]` with a literal key, or the legacy `.0` form (spec "Index Operator"). */
  | { type: 'index'; key: string | number | boolean | null; legacy: boolean; range: Range };

/** A variable and any constant attribute/index steps after it: `aws_vpc.main.id`, `x[0]`. */
export interface ScopeTraversalExpr {
  kind: 'ScopeTraversal';
  /** Starts with a `root` step. */
  traversal: Traverser[];
  range: Range;
}

/** Constant attribute/index steps applied to another expression: `f(x).id`, `(a)[0]`. */
export interface RelativeTraversalExpr {
  kind: 'RelativeTraversal';
  source: Expression;
  /** Only `attr` and `index` steps. */
  traversal: Traverser[];
  range: Range;
}

/** `name(args)`, with `name` possibly namespaced (`provider::aws::arn_parse`). */
export interface FunctionCallExpr {
  kind: 'FunctionCall';
  name: string;
  args: Expression[];
  /** The final argument was followed by `...` (spec "Functions and Function Calls"). */
  expandFinal: boolean;
  nameRange: Range;
  openParenRange: Range;
  closeParenRange: Range;
  range: Range;
}

/** `collection[key]` with a non-literal key. */
export interface IndexExpr {
  kind: 'Index';
  collection: Expression;
  key: Expression;
  bracketRange: Range;
  range: Range;
}

/**
 * A splat: `source.*.attr` (attribute-only) or `source[*].any[0].steps`.
 * `each` is evaluated once per element with {@link AnonSymbolExpr} `item`
 * standing for the element (spec "Splat Operators").
 */
export interface SplatExpr {
  kind: 'Splat';
  source: Expression;
  each: Expression;
  item: AnonSymbolExpr;
  attrOnly: boolean;
  markerRange: Range;
  range: Range;
}

/** The element placeholder of a splat. */
export interface AnonSymbolExpr {
  kind: 'AnonSymbol';
  range: Range;
}

/** `condition ? trueResult : falseResult`. */
export interface ConditionalExpr {
  kind: 'Conditional';
  condition: Expression;
  trueResult: Expression;
  falseResult: Expression;
  range: Range;
}

/** The operators of a binary expression (HCL's hclsyntax binary operations). */
export type BinaryOperator = '||' | '&&' | '==' | '!=' | '<' | '>' | '<=' | '>=' | '+' | '-' | '*' | '/' | '%';

/** `lhs op rhs`. */
export interface BinaryOpExpr {
  kind: 'BinaryOp';
  op: BinaryOperator;
  lhs: Expression;
  rhs: Expression;
  range: Range;
}

/** `-operand` or `!operand`; `symbolRange` is the operator's. */
export interface UnaryOpExpr {
  kind: 'UnaryOp';
  op: '-' | '!';
  operand: Expression;
  symbolRange: Range;
  range: Range;
}

/** `( expression )`, kept in the tree for its range and for object keys `(k) = v`. */
export interface ParenthesesExpr {
  kind: 'Parentheses';
  expression: Expression;
  range: Range;
}

/** `[a, b, c]`. */
export interface TupleConsExpr {
  kind: 'TupleCons';
  items: Expression[];
  openRange: Range;
  range: Range;
}

/** `{ k = v, ... }`. Items in source order; duplicate keys are allowed syntactically. */
export interface ObjectConsExpr {
  kind: 'ObjectCons';
  items: { key: ObjectKeyExpr; value: Expression }[];
  openRange: Range;
  range: Range;
}

/**
 * An object constructor key. A bare identifier (or `true`/`false`/`null`) is
 * the literal name, not a variable, unless the key was parenthesized
 * (`forceNonLiteral`), per the spec "Collection Values".
 */
export interface ObjectKeyExpr {
  kind: 'ObjectKey';
  wrapped: Expression;
  forceNonLiteral: boolean;
  range: Range;
}

/** `[for k, v in coll : value if cond]` or `{for k, v in coll : key => value... if cond}`. */
export interface ForExpr {
  kind: 'For';
  /** Empty when only a value variable is declared. */
  keyVar: string;
  valueVar: string;
  collection: Expression;
  /** The key expression of the object form; absent for the tuple form. */
  keyExpr?: Expression;
  valueExpr: Expression;
  condition?: Expression;
  /** Grouping mode `...` (object form only). */
  group: boolean;
  /** Which collection is built. */
  result: 'tuple' | 'object';
  openRange: Range;
  closeRange: Range;
  range: Range;
}

/** Placeholder for something that failed to parse; a diagnostic was reported for it. */
export interface InvalidExpr {
  kind: 'Invalid';
  range: Range;
}
