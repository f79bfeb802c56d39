// Static evaluation and static analysis of HCL expressions (src/hcl/eval.ts).
import { describe, expect, it } from 'vitest';

import type { Expression } from '../../src/hcl/index.js';
import {
  attributeSourceText,
  evaluateStatic,
  exprAsKeyword,
  formatNumber,
  isStaticList,
  parseHCL,
  staticList,
  staticMap,
  staticString,
  staticStringList,
  staticTraversal,
} from '../../src/hcl/index.js';
import { attr } from './helpers.js';

function expr(src: string): Expression {
  const r = parseHCL(`x = ${src}\n`, 'eval.tf');
  expect(r.diagnostics).toEqual([]);
  return attr(r.body, 'x').expr;
}

function evalOk(src: string): unknown {
  const r = evaluateStatic(expr(src));
  expect(r.diagnostics).toEqual([]);
  return r.value;
}

function evalErr(src: string): string[] {
  const r = evaluateStatic(expr(src));
  expect(r.value).toBeUndefined();
  return r.diagnostics.map((d) => `${d.range?.start?.column} ${d.summary}`);
}

describe('evaluateStatic', () => {
  it('evaluates literals, collections and templates', () => {
    expect(evalOk('"a"')).toBe('a');
    expect(evalOk('12.5')).toBe(12.5);
    expect(evalOk('[true, null, {a = "b", "c" : 1}]')).toEqual([true, null, { a: 'b', c: 1 }]);
    expect(evalOk('"${"a"}-${1 + 1}-${true}"')).toBe('a-2-true');
    expect(evalOk('"%{ for k, v in {b = 2, a = 1} }${k}=${v};%{ endfor }"')).toBe('a=1;b=2;');
    expect(evalOk('"%{ if 1 > 2 }yes%{ else }no%{ endif }"')).toBe('no');
  });

  it('reports variables and function calls like HCL with no evaluation context', () => {
    expect(evalErr('var.region')).toEqual(['5 Variables not allowed']);
    expect(evalErr('"v${local.x}"')).toEqual(['9 Variables not allowed']);
    expect(evalErr('upper("a")')).toEqual(['5 Function calls not allowed']);
    expect(evalErr('[for x in var.list : x]')).toEqual(['15 Variables not allowed']);
  });

  it('allows the iteration variables of for expressions and splat elements', () => {
    expect(evalOk('[for i, v in ["a", "b", "c"] : "${i}${v}" if i != 1]')).toEqual(['0a', '2c']);
    expect(evalOk('{for k, v in {b = 1, a = 2} : v => k}')).toEqual({ 1: 'b', 2: 'a' });
    expect(evalOk('[for v in {b = 1, a = 2} : v]')).toEqual([2, 1]); // objects iterate in key order
    expect(evalOk('{for v in ["a", "a", "b"] : v => v...}')).toEqual({ a: ['a', 'a'], b: ['b'] });
    expect(evalErr('{for v in ["a", "a"] : v => v}')).toEqual(['28 Duplicate object key']);
    expect(evalOk('[{a = 1}, {a = 2}][*].a')).toEqual([1, 2]);
    expect(evalOk('[{a = {b = 1}}].*.a.b')).toEqual([1]);
    expect(evalOk('{a = 1}[*].a')).toEqual([1]); // a non-list becomes a one-element tuple
    expect(evalOk('null[*]')).toEqual([]);
  });

  it('evaluates operators, conditionals, indexes and attributes', () => {
    expect(evalOk('1 + 2 * 3 - 4 / 2 % 3')).toBe(5);
    expect(evalOk('"2" * 3')).toBe(6); // strings convert to numbers as in HCL
    expect(evalOk('[1, "a"] == [1, "a"]')).toBe(true);
    expect(evalOk('1 == "1"')).toBe(false);
    expect(evalOk('!(true && false) || false')).toBe(true);
    expect(evalOk('1 < 2 ? "y" : "n"')).toBe('y');
    expect(evalOk('["a", "b"][1]')).toBe('b');
    expect(evalOk('{a = {b = [10, 20]}}.a.b.1')).toBe(20);
    expect(evalOk('{a = 1}["a"]')).toBe(1);
    expect(evalErr('["a"][3]')).toEqual(['10 Invalid index']);
    expect(evalErr('{a = 1}.b')).toEqual(['12 Unsupported attribute']);
    expect(evalErr('1 / 0')).toEqual(['5 Error during operation']);
    expect(evalErr('"a" + 1')).toEqual(['5 Invalid operand']);
    expect(evalErr('null ? 1 : 2')).toEqual(['5 Null condition']);
    expect(evalOk('"${null}"')).toBeNull(); // unwrapped: the value itself
    expect(evalErr('"a${null}"')).toEqual(['9 Invalid template interpolation value']);
    expect(evalErr('"a${[1]}"')).toEqual(['9 Invalid template interpolation value']);
  });

  it('resolves object keys: identifiers are names, parentheses force evaluation', () => {
    expect(evalOk('{a = 1, null = 2, "b" = 3, ("c") = 4, 5 = 5}')).toEqual({ a: 1, null: 2, b: 3, c: 4, 5: 5 });
    expect(evalErr('{(a) = 1}')).toEqual(['7 Variables not allowed']);
    expect(evalErr('{(null) = 1}')).toEqual(['6 Null value as key']);
    const proto = evalOk('{__proto__ = 1}') as Record<string, unknown>;
    expect(Object.keys(proto)).toEqual(['__proto__']);
    expect(proto['__proto__']).toBe(1);
  });

  it('formats numbers in strings without exponents', () => {
    expect(evalOk('"n=${1e21}"')).toBe('n=1000000000000000000000');
    expect(evalOk('"n=${1.5e-7}"')).toBe('n=0.00000015');
    expect(evalOk('"${1e21}"')).toBe(1e21); // unwrapped: a number, not a string
    expect(staticString(expr('"${1e21}"')).value).toBe('1000000000000000000000');
    expect(formatNumber(-2.5e-10)).toBe('-0.00000000025');
    expect(formatNumber(1.25e22)).toBe('12500000000000000000000');
    expect(formatNumber(42)).toBe('42');
  });
});

describe('static helpers', () => {
  it('staticString converts primitives and rejects the rest', () => {
    expect(staticString(expr('"x"')).value).toBe('x');
    expect(staticString(expr('1')).value).toBe('1');
    expect(staticString(expr('true')).value).toBe('true');
    expect(staticString(expr('"${5}"')).value).toBe('5');
    expect(staticString(expr('null')).diagnostics.map((d) => d.summary)).toEqual(['Invalid value']);
    expect(staticString(expr('["x"]')).diagnostics.map((d) => d.summary)).toEqual(['Incorrect value type']);
    expect(staticString(expr('"${var.v}"')).diagnostics.map((d) => d.summary)).toEqual(['Variables not allowed']);
  });

  it('staticList requires a tuple constructor, as hcl.ExprList does', () => {
    expect(isStaticList(expr('["a", var.b]'))).toBe(true);
    expect(isStaticList(expr('(["a"])'))).toBe(true);
    expect(isStaticList(expr('concat(["a"])'))).toBe(false);
    expect(isStaticList(expr('"${["a"]}"'))).toBe(false);
    expect(isStaticList(expr('[for h in ["a"] : h]'))).toBe(false);
    expect(staticList(expr('["a", var.b]')).items?.map((e) => e.kind)).toEqual(['Template', 'ScopeTraversal']);
    expect(staticList(expr('var.list')).diagnostics).toEqual([
      expect.objectContaining({ summary: 'Invalid expression', detail: 'A static list expression is required.' }),
    ]);
    expect(staticStringList(expr('["a", "b",]')).value).toEqual(['a', 'b']);
    expect(staticStringList(expr('["a", var.b]')).diagnostics.map((d) => d.summary)).toEqual(['Variables not allowed']);
  });

  it('staticMap returns keys and unevaluated values', () => {
    const m = staticMap(expr('{ aws = { source = "hashicorp/aws" }, "google-beta" = var.x, (var.k) = 1 }'));
    expect(m.pairs?.map((p) => [p.key, p.value.kind])).toEqual([
      ['aws', 'ObjectCons'],
      ['google-beta', 'ScopeTraversal'],
      [undefined, 'Literal'],
    ]);
    expect(m.diagnostics.map((d) => d.summary)).toEqual(['Variables not allowed']);
    expect(staticMap(expr('[1]')).diagnostics.map((d) => d.detail)).toEqual(['A static map expression is required.']);
  });

  it('staticTraversal and exprAsKeyword', () => {
    expect(staticTraversal(expr('aws.west')).traversal?.map((t) => t.type)).toEqual(['root', 'attr']);
    expect(
      staticTraversal(expr('module.m["k"].out')).traversal?.map((t) => (t.type === 'index' ? t.key : t.name)),
    ).toEqual(['module', 'm', 'k', 'out']);
    expect(staticTraversal(expr('null')).traversal?.map((t) => t.type === 'root' && t.name)).toEqual(['null']);
    expect(staticTraversal(expr('"aws.west"')).diagnostics.map((d) => d.summary)).toEqual(['Invalid expression']);
    expect(staticTraversal(expr('a[b]')).traversal).toBeUndefined();
    expect(exprAsKeyword(expr('string'))).toBe('string');
    expect(exprAsKeyword(expr('false'))).toBe('false');
    expect(exprAsKeyword(expr('a.b'))).toBeUndefined();
    expect(exprAsKeyword(expr('"string"'))).toBeUndefined();
  });

  it('gives the raw source text of an attribute', () => {
    const r = parseHCL('  hashes = [ # the hashes\n    "h1:abc", /* x */\n  ]\n', 'lock.hcl');
    const a = attr(r.body, 'hashes');
    expect(attributeSourceText(r.source, a)).toEqual({
      whole: 'hashes = [ # the hashes\n    "h1:abc", /* x */\n  ]',
      expression: '[ # the hashes\n    "h1:abc", /* x */\n  ]',
    });
  });

  it('never throws on deep hand-built trees', () => {
    let e: Expression = { kind: 'Literal', valueType: 'number', value: 1, raw: '1', range: expr('1').range };
    for (let i = 0; i < 50_000; i++) e = { kind: 'UnaryOp', op: '-', operand: e, symbolRange: e.range, range: e.range };
    const r = evaluateStatic(e);
    expect(r.value).toBeUndefined();
    expect(r.diagnostics.map((d) => d.summary)).toEqual(['Nesting too deep']);
  });
});
