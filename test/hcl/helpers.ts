// Shared helpers for the HCL tests: loading fixtures and walking parsed bodies.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { expect } from 'vitest';

import type { Attribute, Block, Body, Expression, ParseResult } from '../../src/hcl/index.js';
import { evaluateStatic, parseHCL, staticString } from '../../src/hcl/index.js';

export const HERE = dirname(fileURLToPath(import.meta.url));
export const CORPUS = join(HERE, 'corpus');
export const INVALID = join(HERE, 'invalid');

export function corpusFiles(): string[] {
  return readdirSync(CORPUS).sort();
}

/** Parses a corpus file (CLI configuration files in HCL 1 mode) and asserts it has no diagnostics. */
export function parseCorpus(name: string): ParseResult {
  const r = parseHCL(readFileSync(join(CORPUS, name)), name, { quotedAttributeNames: name.endsWith('.tfrc') });
  expect(r.diagnostics).toEqual([]);
  return r;
}

export function attr(body: Body, name: string): Attribute {
  const a = body.attributes.find((x) => x.name === name);
  if (!a) throw new Error(`no attribute ${name}; have ${body.attributes.map((x) => x.name).join(', ')}`);
  return a;
}

export function blocks(body: Body, type: string): Block[] {
  return body.blocks.filter((b) => b.type === type);
}

export function block(body: Body, type: string, ...labels: string[]): Block {
  const b = body.blocks.find((x) => x.type === type && labels.every((l, i) => x.labels[i] === l));
  if (!b) throw new Error(`no block ${type} ${labels.join(' ')}`);
  return b;
}

/** The static string value of an expression, asserting it has one. */
export function str(expr: Expression): string {
  const r = staticString(expr);
  expect(r.diagnostics).toEqual([]);
  return r.value as string;
}

/** The static value of an expression, asserting it has one. */
export function value(expr: Expression): unknown {
  const r = evaluateStatic(expr);
  expect(r.diagnostics).toEqual([]);
  return r.value;
}

/** A compact rendering of an expression's shape, for asserting on structure. */
export function shape(e: Expression): unknown {
  switch (e.kind) {
    case 'Literal':
      return e.value;
    case 'Template':
      return { template: e.parts.map(shape) };
    case 'TemplateWrap':
      return { wrap: shape(e.wrapped) };
    case 'TemplateIf':
      return { if: shape(e.condition), then: shape(e.then), else: shape(e.else) };
    case 'TemplateFor':
      return { for: [e.keyVar, e.valueVar], in: shape(e.collection), do: shape(e.body) };
    case 'ScopeTraversal':
      return e.traversal
        .map((t) => (t.type === 'index' ? [t.key] : t.name))
        .flat()
        .join('.');
    case 'RelativeTraversal':
      return { rel: shape(e.source), steps: e.traversal.map((t) => (t.type === 'index' ? [t.key] : t.name)) };
    case 'BinaryOp':
      return [shape(e.lhs), e.op, shape(e.rhs)];
    case 'UnaryOp':
      return [e.op, shape(e.operand)];
    case 'Parentheses':
      return { parens: shape(e.expression) };
    case 'Conditional':
      return { cond: shape(e.condition), t: shape(e.trueResult), f: shape(e.falseResult) };
    case 'FunctionCall':
      return { call: e.name, args: e.args.map(shape), ...(e.expandFinal ? { expand: true } : {}) };
    case 'Splat':
      return { splat: shape(e.source), each: shape(e.each), attrOnly: e.attrOnly };
    case 'AnonSymbol':
      return '*';
    case 'Index':
      return { index: shape(e.collection), key: shape(e.key) };
    case 'TupleCons':
      return e.items.map(shape);
    case 'ObjectCons':
      return { object: e.items.map((i) => [shape(i.key), shape(i.value)]) };
    case 'ObjectKey':
      return e.forceNonLiteral ? { key: shape(e.wrapped) } : shape(e.wrapped);
    case 'For':
      return {
        forExpr: e.result,
        vars: [e.keyVar, e.valueVar],
        ...(e.keyExpr ? { key: shape(e.keyExpr) } : {}),
        value: shape(e.valueExpr),
        ...(e.condition ? { if: shape(e.condition) } : {}),
        ...(e.group ? { group: true } : {}),
      };
    case 'Invalid':
      return 'INVALID';
  }
}
