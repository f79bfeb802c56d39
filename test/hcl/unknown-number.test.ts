// A number literal the parser cannot read (`1.1.0`) is reported once, by the
// parser; evaluating it gives hclsyntax's unknown value and nothing more
// (parser.go `numberLitValue`: `cty.UnknownVal(cty.Number)`), and each
// decoder then says what an unknown value means there, as terraform's do.
// The expected diagnostics are terraform 1.11.4's, observed 2026-11-26
// (`terraform providers lock -no-color` on the same files):
// - a lock file with `version = 1.1.0`: "Invalid number literal" (line 2),
//   then "Unsuitable value type" ("Unsuitable value: value must be known");
// - `version = 1.1.0` in a provider block and in a module block: one
//   "Invalid number literal" each, nothing else for them.
import { describe, expect, it } from 'vitest';

import { buildModule, parseConfigFile } from '../../src/config/index.js';
import { evaluateStatic, parseHCL, staticString, staticStringList } from '../../src/hcl/index.js';
import { parseLockFile } from '../../src/lockfile/index.js';
import { details, diagLines } from '../config/helpers.js';

function expressionOf(text: string) {
  const parsed = parseHCL(`a = ${text}\n`, 'x.hcl');
  const attr = parsed.body.attributes[0];
  if (!attr) throw new Error('no attribute');
  return { parsed, expr: attr.expr };
}

describe('an unreadable number literal', () => {
  it('is reported by the parser once; evaluation gives unknown, with no diagnostic of its own', () => {
    const { parsed, expr } = expressionOf('1.1.0');
    expect(parsed.diagnostics.map((d) => d.summary)).toEqual(['Invalid number literal']);
    expect(evaluateStatic(expr)).toEqual({ value: undefined, diagnostics: [], unknown: true });
    expect(staticString(expr)).toEqual({ value: undefined, diagnostics: [], unknown: true });
  });

  it('makes what contains it unknown, and a real error still wins', () => {
    expect(evaluateStatic(expressionOf('[1, 1.1.0]').expr)).toMatchObject({ value: undefined, unknown: true });
    expect(staticStringList(expressionOf('["a", 1.1.0]').expr)).toEqual({
      value: undefined,
      diagnostics: [],
      unknown: true,
    });
    const both = evaluateStatic(expressionOf('[1.1.0, var.x]').expr);
    expect(both.value).toBeUndefined();
    expect(both.diagnostics.map((d) => d.summary)).toEqual(['Variables not allowed']);
    // An operand never read: the value is known.
    expect(evaluateStatic(expressionOf('true ? 1 : 1.1.0').expr)).toEqual({ value: 1, diagnostics: [] });
  });

  it('in a lock file: the syntax error, then "Unsuitable value type", as terraform', () => {
    const r = parseLockFile('provider "registry.example.test/acme/demo" {\n  version = 1.1.0\n}\n');
    expect(diagLines(r.diagnostics)).toEqual([
      'error .terraform.lock.hcl:2:13: Invalid number literal',
      'error .terraform.lock.hcl:2:13: Unsuitable value type',
    ]);
    expect(details(r.diagnostics)).toEqual([
      'Failed to recognize the value of this number literal.',
      'Unsuitable value: value must be known',
    ]);
  });

  it('as a provider or module version: the syntax error once each, as terraform', () => {
    const r = parseConfigFile(
      'provider "demo" {\n  version = 1.1.0\n}\nmodule "m" {\n  source  = "./m"\n  version = 2.2.0\n}\n',
      'main.tf',
      { flavor: 'terraform', override: false },
    );
    const built = buildModule([r.file], [], 'terraform');
    const summaries = [...r.diagnostics, ...built.diagnostics].map((d) => d.summary);
    expect(summaries.filter((s) => s === 'Invalid number literal')).toHaveLength(2);
    expect(summaries).not.toContain('Invalid expression');
  });
});
