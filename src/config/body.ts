/**
 * Schema-directed access to a body, the same for both syntaxes: the native
 * syntax (an `src/hcl` {@link Body}) and the JSON syntax (a JSON object, or
 * an array of objects, from `json.ts`). This is the part of hcl's `hcl.Body`
 * interface the configuration decoder needs: `Content`, `PartialContent`,
 * `JustAttributes` and `MissingItemRange`, with hclsyntax's and hcl json's
 * diagnostics ("Unsupported argument", "Unsupported block type",
 * "Extraneous JSON object property", "Missing name for resource", …).
 *
 * Differences from hcl, all deliberate: results keep source order where hcl
 * returns Go maps (so diagnostics come out in a stable order), and "//"
 * comment properties of JSON bodies are skipped in every mode.
 *
 * Pure: no I/O.
 */
import type { Diagnostic } from '../errors.js';
import type { Block, Body, Expression, Range } from '../hcl/index.js';
import { between, errorDiag, formatRange } from './diagnostics.js';
import { nameSuggestion } from '../go/index.js';
import type { JsonProperty, JsonValue } from '../hcl/index.js';
import { jsonToExpression } from '../hcl/index.js';

/** One attribute of a body schema. */
export interface AttributeSchema {
  readonly name: string;
  readonly required?: boolean;
}

/** One block type of a body schema, with the names of its labels. */
export interface BlockSchema {
  readonly type: string;
  readonly labels: readonly string[];
}

/** What a body may contain (hcl.BodySchema). */
export interface BodySchema {
  readonly attributes: readonly AttributeSchema[];
  readonly blocks: readonly BlockSchema[];
}

/** An attribute found in a body. */
export interface AttributeView {
  readonly name: string;
  readonly expr: Expression;
  /** From the name to the end of the value (hcl.Attribute.Range). */
  readonly range: Range;
  readonly nameRange: Range;
}

/** A block found in a body. */
export interface BlockView {
  readonly type: string;
  readonly labels: readonly string[];
  readonly labelRanges: readonly Range[];
  readonly typeRange: Range;
  /** hcl.Block.DefRange: the type and labels (native), the opening brace (JSON). */
  readonly defRange: Range;
  readonly body: BodyView;
}

/** The attributes and blocks a schema selected. */
export interface BodyContent {
  /** Attributes by name, in source order. */
  readonly attributes: Map<string, AttributeView>;
  /** Blocks in source order. */
  readonly blocks: BlockView[];
  readonly diagnostics: Diagnostic[];
}

/** A body of either syntax. */
export interface BodyView {
  /** True for the JSON syntax, where strings stand for traversals in some places. */
  readonly json: boolean;
  /** hcl `Content`: like {@link partialContent}, plus errors for anything not in the schema. */
  content(schema: BodySchema): BodyContent;
  /** hcl `PartialContent`: what the schema names; anything else is ignored. */
  partialContent(schema: BodySchema): BodyContent;
  /** hcl `JustAttributes`: every item as an attribute (blocks are an error in the native syntax). */
  justAttributes(): { attributes: AttributeView[]; diagnostics: Diagnostic[] };
  /** Where to report a missing item: a zero-width range at the start of the body. */
  missingItemRange(): Range;
}

/** A native-syntax body as a {@link BodyView}. */
export function nativeBody(body: Body): BodyView {
  return new NativeBody(body);
}

/** A JSON value that stands for a body (an object, or an array of objects) as a {@link BodyView}. */
export function jsonBody(value: JsonValue): BodyView {
  return new JsonBodyView(value);
}

function missingRequired(schema: BodySchema, have: Map<string, AttributeView>, at: Range): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const a of schema.attributes) {
    if (a.required === true && !have.has(a.name)) {
      out.push(
        errorDiag(
          'Missing required argument',
          `The argument ${JSON.stringify(a.name)} is required, but no definition was found.`,
          at,
        ),
      );
    }
  }
  return out;
}

class NativeBody implements BodyView {
  readonly json = false;

  constructor(private readonly body: Body) {}

  missingItemRange(): Range {
    const s = this.body.range.start;
    return { filename: this.body.range.filename, start: s, end: s };
  }

  partialContent(schema: BodySchema): BodyContent {
    const diagnostics: Diagnostic[] = [];
    const attributes = new Map<string, AttributeView>();
    const wantedAttrs = new Set(schema.attributes.map((a) => a.name));
    for (const a of this.body.attributes) {
      if (wantedAttrs.has(a.name))
        attributes.set(a.name, { name: a.name, expr: a.expr, range: a.range, nameRange: a.nameRange });
    }
    diagnostics.push(...missingRequired(schema, attributes, this.missingItemRange()));
    const blocks: BlockView[] = [];
    for (const b of this.body.blocks) {
      const bs = schema.blocks.find((s) => s.type === b.type);
      if (!bs) continue;
      const view = checkLabels(b, bs, diagnostics);
      if (view) blocks.push(view);
    }
    return { attributes, blocks, diagnostics };
  }

  content(schema: BodySchema): BodyContent {
    const c = this.partialContent(schema);
    for (const a of this.body.attributes) {
      if (c.attributes.has(a.name)) continue;
      const unused = schema.attributes.filter((s) => !c.attributes.has(s.name)).map((s) => s.name);
      let suggestion = nameSuggestion(a.name, unused) ?? '';
      if (suggestion !== '') suggestion = ` Did you mean ${JSON.stringify(suggestion)}?`;
      else if (schema.blocks.some((s) => s.type === a.name))
        suggestion = ` Did you mean to define a block of type ${JSON.stringify(a.name)}?`;
      c.diagnostics.push(
        errorDiag(
          'Unsupported argument',
          `An argument named ${JSON.stringify(a.name)} is not expected here.${suggestion}`,
          a.nameRange,
        ),
      );
    }
    for (const b of this.body.blocks) {
      if (schema.blocks.some((s) => s.type === b.type)) continue;
      let suggestion =
        nameSuggestion(
          b.type,
          schema.blocks.map((s) => s.type),
        ) ?? '';
      if (suggestion !== '') suggestion = ` Did you mean ${JSON.stringify(suggestion)}?`;
      else if (schema.attributes.some((s) => s.name === b.type)) {
        suggestion = ` Did you mean to define argument ${JSON.stringify(b.type)}? If so, use the equals sign to assign it a value.`;
      }
      c.diagnostics.push(
        errorDiag(
          'Unsupported block type',
          `Blocks of type ${JSON.stringify(b.type)} are not expected here.${suggestion}`,
          b.typeRange,
        ),
      );
    }
    return c;
  }

  justAttributes(): { attributes: AttributeView[]; diagnostics: Diagnostic[] } {
    const diagnostics: Diagnostic[] = [];
    const first = this.body.blocks[0];
    if (first)
      diagnostics.push(
        errorDiag(`Unexpected ${JSON.stringify(first.type)} block`, 'Blocks are not allowed here.', first.typeRange),
      );
    const attributes = this.body.attributes.map((a) => ({
      name: a.name,
      expr: a.expr,
      range: a.range,
      nameRange: a.nameRange,
    }));
    return { attributes, diagnostics };
  }
}

/** hclsyntax's label-count checks of PartialContent. */
function checkLabels(b: Block, bs: BlockSchema, diagnostics: Diagnostic[]): BlockView | undefined {
  if (b.labels.length > bs.labels.length) {
    const subject = b.labelRanges[bs.labels.length] ?? b.typeRange;
    diagnostics.push(
      errorDiag(
        `Extraneous label for ${b.type}`,
        bs.labels.length === 0
          ? `No labels are expected for ${b.type} blocks.`
          : `Only ${bs.labels.length} labels (${bs.labels.join(', ')}) are expected for ${b.type} blocks.`,
        subject,
      ),
    );
    return undefined;
  }
  if (b.labels.length < bs.labels.length) {
    diagnostics.push(
      errorDiag(
        `Missing ${bs.labels[b.labels.length] ?? 'label'} for ${b.type}`,
        `All ${b.type} blocks must have ${bs.labels.length} labels (${bs.labels.join(', ')}).`,
        b.openBraceRange,
      ),
    );
    return undefined;
  }
  const last = b.labelRanges[b.labelRanges.length - 1] ?? b.typeRange;
  return {
    type: b.type,
    labels: b.labels,
    labelRanges: b.labelRanges,
    typeRange: b.typeRange,
    defRange: between(b.typeRange, last),
    body: new NativeBody(b.body),
  };
}

// ---------------------------------------------------------------------------
// JSON

function startRange(v: JsonValue): Range {
  const s = v.range.start;
  return { filename: v.range.filename, start: s, end: s };
}

/** hcl json `collectDeepAttrs`: the properties of an object, or of every object in an array. */
function collectDeepAttrs(v: JsonValue, labelName: string | undefined, diagnostics: Diagnostic[]): JsonProperty[] {
  if (v.kind === 'null') return [];
  if (v.kind === 'object') return v.props;
  if (v.kind === 'array') {
    const out: JsonProperty[] = [];
    for (const item of v.items) {
      if (item.kind === 'object') out.push(...item.props);
      else {
        diagnostics.push(
          errorDiag(
            'Incorrect JSON value type',
            labelName !== undefined
              ? `A JSON object is required here, to specify ${labelName} labels for this block.`
              : 'A JSON object is required here, to define arguments and child blocks.',
            startRange(item),
          ),
        );
      }
    }
    return out;
  }
  diagnostics.push(
    errorDiag(
      'Incorrect JSON value type',
      labelName !== undefined
        ? `Either a JSON object or JSON array of objects is required here, to specify ${labelName} labels for this block.`
        : 'Either a JSON object or JSON array of objects is required here, to define arguments and child blocks.',
      startRange(v),
    ),
  );
  return [];
}

function jsonAttribute(p: JsonProperty): AttributeView {
  return {
    name: p.name,
    expr: jsonToExpression(p.value),
    range: between(p.nameRange, p.value.range),
    nameRange: p.nameRange,
  };
}

class JsonBodyView implements BodyView {
  readonly json = true;

  constructor(private readonly value: JsonValue) {}

  missingItemRange(): Range {
    const v = this.value;
    if (v.kind === 'object') return v.closeRange;
    if (v.kind === 'array') return v.openRange;
    return startRange(v);
  }

  partialContent(schema: BodySchema): BodyContent {
    const diagnostics: Diagnostic[] = [];
    const attributes = new Map<string, AttributeView>();
    const blocks: BlockView[] = [];
    for (const p of collectDeepAttrs(this.value, undefined, diagnostics)) {
      if (schema.attributes.some((a) => a.name === p.name)) {
        const existing = attributes.get(p.name);
        if (existing) {
          diagnostics.push(
            errorDiag(
              'Duplicate argument',
              `The argument ${JSON.stringify(p.name)} was already set at ${formatRange(existing.range)}.`,
              p.nameRange,
            ),
          );
          continue;
        }
        attributes.set(p.name, jsonAttribute(p));
        continue;
      }
      const bs = schema.blocks.find((b) => b.type === p.name);
      if (bs) unpackBlock(p.value, bs.type, p.nameRange, bs.labels, [], [], blocks, diagnostics);
    }
    diagnostics.push(...missingRequired(schema, attributes, this.missingItemRange()));
    return { attributes, blocks, diagnostics };
  }

  content(schema: BodySchema): BodyContent {
    const c = this.partialContent(schema);
    const suggestions = [
      ...schema.attributes.filter((a) => !c.attributes.has(a.name)).map((a) => a.name),
      ...schema.blocks.map((b) => b.type),
    ];
    const ignored: Diagnostic[] = [];
    for (const p of collectDeepAttrs(this.value, undefined, ignored)) {
      if (p.name === '//') continue;
      if (schema.attributes.some((a) => a.name === p.name) || schema.blocks.some((b) => b.type === p.name)) continue;
      let suggestion = nameSuggestion(p.name, suggestions) ?? '';
      if (suggestion !== '') suggestion = ` Did you mean ${JSON.stringify(suggestion)}?`;
      c.diagnostics.push(
        errorDiag(
          'Extraneous JSON object property',
          `No argument or block type is named ${JSON.stringify(p.name)}.${suggestion}`,
          p.nameRange,
        ),
      );
    }
    return c;
  }

  justAttributes(): { attributes: AttributeView[]; diagnostics: Diagnostic[] } {
    const diagnostics: Diagnostic[] = [];
    const v = this.value;
    if (v.kind !== 'object') {
      diagnostics.push(
        errorDiag(
          'Incorrect JSON value type',
          'A JSON object is required here, setting the arguments for this block.',
          startRange(v),
        ),
      );
      return { attributes: [], diagnostics };
    }
    const attributes: AttributeView[] = [];
    for (const p of v.props) {
      if (p.name === '//') continue;
      const existing = attributes.find((a) => a.name === p.name);
      if (existing) {
        diagnostics.push(
          errorDiag(
            'Duplicate attribute definition',
            `The argument ${JSON.stringify(p.name)} was already set at ${formatRange(existing.range)}.`,
            p.nameRange,
          ),
        );
        continue;
      }
      attributes.push(jsonAttribute(p));
    }
    return { attributes, diagnostics };
  }
}

/** hcl json `unpackBlock`: peels one object level per label, then one block per object (or per array element). */
function unpackBlock(
  v: JsonValue,
  type: string,
  typeRange: Range,
  labelsLeft: readonly string[],
  labels: string[],
  labelRanges: Range[],
  out: BlockView[],
  diagnostics: Diagnostic[],
): void {
  const [labelName, ...rest] = labelsLeft;
  if (labelName !== undefined) {
    const props = collectDeepAttrs(v, labelName, diagnostics);
    if (props.length === 0) {
      diagnostics.push(
        errorDiag(
          'Missing block label',
          `At least one object property is required, whose name represents the ${type} block's ${labelName}.`,
          startRange(v),
        ),
      );
      return;
    }
    for (const p of props) {
      unpackBlock(p.value, type, typeRange, rest, [...labels, p.name], [...labelRanges, p.nameRange], out, diagnostics);
    }
    return;
  }
  const make = (body: JsonValue, defRange: Range): BlockView => ({
    type,
    labels,
    labelRanges,
    typeRange,
    defRange,
    body: new JsonBodyView(body),
  });
  if (v.kind === 'null') return;
  if (v.kind === 'object') {
    out.push(make(v, v.openRange));
    return;
  }
  if (v.kind === 'array') {
    for (const item of v.items) out.push(make(item, v.openRange));
    return;
  }
  diagnostics.push(
    errorDiag(
      'Incorrect JSON value type',
      `Either a JSON object or a JSON array is required, representing the contents of one or more ${JSON.stringify(type)} blocks.`,
      startRange(v),
    ),
  );
}
