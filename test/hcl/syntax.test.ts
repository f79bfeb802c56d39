// Unit tests of the HCL lexer and parser: positions, tokens, newline rules,
// heredocs, templates, and the nesting limit.
import { describe, expect, it } from 'vitest';

import type { Expression } from '../../src/hcl/index.js';
import { MAX_NESTING, parseHCL, tokenize } from '../../src/hcl/index.js';
import { attr, shape, str, value } from './helpers.js';

function parseOk(src: string | Uint8Array): ReturnType<typeof parseHCL> {
  const r = parseHCL(src, 'test.tf');
  expect(r.diagnostics).toEqual([]);
  return r;
}

function expr(src: string): Expression {
  return attr(parseOk(`x = ${src}\n`).body, 'x').expr;
}

function errors(src: string | Uint8Array): string[] {
  return parseHCL(src, 'test.tf').diagnostics.map(
    (d) => `${d.range?.start?.line}:${d.range?.start?.column} ${d.summary}`,
  );
}

describe('lexer', () => {
  it('produces typed tokens with ranges, ending with EOF', () => {
    const { tokens } = tokenize('a = "x${b}y"\n', 'f.tf');
    expect(tokens.map((t) => t.type)).toEqual([
      'Ident',
      'Equal',
      'OQuote',
      'QuotedLit',
      'TemplateInterp',
      'Ident',
      'TemplateSeqEnd',
      'QuotedLit',
      'CQuote',
      'Newline',
      'EOF',
    ]);
    expect(tokens[5]).toMatchObject({
      text: 'b',
      range: { filename: 'f.tf', start: { line: 1, column: 9, byte: 8 }, end: { line: 1, column: 10, byte: 9 } },
    });
    expect(tokens[10]!.range.start).toEqual({ line: 2, column: 1, byte: 13 });
  });

  it('counts columns in characters (grapheme clusters), a tab as one', () => {
    // "é" precomposed (2 bytes), "e" + combining acute (3 bytes, one character), an emoji ZWJ sequence, a tab.
    const src = 'x = ["é", "e\u0301", "👩‍💻",\t"z"]\n';
    const tokens = tokenize(src, 'f.tf').tokens.filter((t) => t.type === 'QuotedLit');
    expect(tokens.map((t) => [t.value, t.range.start.column, t.range.end.column])).toEqual([
      ['é', 7, 8],
      ['e\u0301', 12, 13],
      ['👩‍💻', 17, 18],
      ['z', 22, 23],
    ]);
    expect(tokens[2]!.range.end.byte - tokens[2]!.range.start.byte).toBe(11);
  });

  it('skips a UTF-8 byte order mark, keeping byte offsets absolute', () => {
    const r = parseOk(new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode('a = 1\n')]));
    expect(attr(r.body, 'a').nameRange.start).toEqual({ line: 1, column: 1, byte: 3 });
  });

  it('accepts CRLF line endings', () => {
    const r = parseOk('a = 1\r\nb {\r\n  c = "d"\r\n}\r\nh = <<EOT\r\nline\r\nEOT\r\n');
    expect(attr(r.body, 'a').nameRange.start.line).toBe(1);
    expect(r.body.blocks[0]!.typeRange.start).toMatchObject({ line: 2, column: 1 });
    // Heredoc content keeps the line ending as written, as hclsyntax does.
    expect(str(attr(r.body, 'h').expr)).toBe('line\r\n');
  });

  it('lexes numbers like hclsyntax, including the legacy-index pitfall', () => {
    const nums = (s: string): string[] =>
      tokenize(s, 'f')
        .tokens.filter((t) => t.type === 'NumberLit')
        .map((t) => t.text);
    expect(nums('1 1.5 1e3 1E+3 2.5e-3 10')).toEqual(['1', '1.5', '1e3', '1E+3', '2.5e-3', '10']);
    expect(nums('1.')).toEqual(['1']); // a trailing dot is not part of the number
    expect(nums('1e')).toEqual(['1']); // nor an exponent mark without digits
    expect(nums('foo.0.1')).toEqual(['0.1']);
  });

  it('accepts Unicode identifiers with dashes', () => {
    const r = parseOk('naïve-name_1 = 1\n名前 = 2\n_private = 3\n');
    expect(r.body.attributes.map((a) => a.name)).toEqual(['naïve-name_1', '名前', '_private']);
  });

  it('keeps comments out of the token stream but records them', () => {
    const r = tokenize('# a\nb = 1 // c\n/* d */ e = 2\n', 'f');
    expect(r.comments.map((c) => [c.style, c.text, c.range.start.line])).toEqual([
      ['#', '# a', 1],
      ['//', '// c', 2],
      ['/*', '/* d */', 3],
    ]);
    expect(r.tokens.some((t) => t.text.includes('#'))).toBe(false);
  });

  it('reports invalid UTF-8 once, with its position, and never throws', () => {
    const bytes = new Uint8Array([
      ...new TextEncoder().encode('a = "x'),
      0xc3,
      0x28,
      0xff,
      ...new TextEncoder().encode('"\nb = \xff\n'),
    ]);
    const r = parseHCL(bytes, 'bad.tf');
    expect(r.diagnostics.filter((d) => d.summary === 'Invalid character encoding')).toHaveLength(1);
    expect(r.diagnostics[0]).toMatchObject({
      summary: 'Invalid character encoding',
      range: { start: { line: 1, column: 7, byte: 6 } },
    });
    // Overlong encodings and encoded surrogates are invalid too.
    expect(errors(new Uint8Array([0x61, 0x20, 0x3d, 0x20, 0x22, 0xc0, 0xaf, 0x22, 0x0a]))).toEqual([
      '1:6 Invalid character encoding',
    ]);
    expect(errors(new Uint8Array([0x61, 0x20, 0x3d, 0x20, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x0a]))).toEqual([
      '1:6 Invalid character encoding',
    ]);
  });
});

describe('structure', () => {
  it('parses an empty file, comments only, or a BOM only', () => {
    for (const src of ['', '\n\n', '# only a comment', '/* c */\n// d\n', '\uFEFF']) {
      const r = parseOk(src);
      expect(r.body.attributes).toEqual([]);
      expect(r.body.blocks).toEqual([]);
    }
  });

  it('parses block labels (quoted or identifiers), one-line and empty blocks', () => {
    const r = parseOk('a "b" c "d\\"e" {\n}\nf { g = 1 }\nh {}\nprovider_installation {\n  direct {}\n}\n');
    expect(r.body.blocks.map((b) => [b.type, b.labels])).toEqual([
      ['a', ['b', 'c', 'd"e']],
      ['f', []],
      ['h', []],
      ['provider_installation', []],
    ]);
    expect(value(attr(r.body.blocks[1]!.body, 'g').expr)).toBe(1);
    expect(r.body.blocks[3]!.body.blocks[0]!.type).toBe('direct');
  });

  it('keeps the first of a redefined attribute and says where it was', () => {
    const r = parseHCL('a = 1\na = 2\n', 'dup.tf');
    expect(r.diagnostics).toEqual([
      expect.objectContaining({
        summary: 'Attribute redefined',
        detail: 'The argument "a" was already set at dup.tf:1,1-2. Each argument may be set only once.',
        range: expect.objectContaining({ start: { line: 2, column: 1, byte: 6 } }) as unknown,
      }),
    ]);
    expect(value(attr(r.body, 'a').expr)).toBe(1);
  });

  it('applies the newline rules of the spec', () => {
    // Newlines are ignored inside (), [] and function calls, and separate object items.
    expect(value(expr('[\n  1,\n  2\n]'))).toEqual([1, 2]);
    expect(value(expr('(\n  1\n  +\n  2\n)'))).toBe(3);
    expect(shape(expr('f(\n  1,\n  2,\n)'))).toEqual({ call: 'f', args: [1, 2] });
    expect(value(expr('{\n  a = 1\n  b = 2\n\n  c = 3, d = 4\n}'))).toEqual({ a: 1, b: 2, c: 3, d: 4 });
    expect(value(expr('[for v in [1, 2] :\n  v\n  if v > 1\n]'))).toEqual([2]);
    // ...but end an attribute elsewhere.
    expect(errors('a = 1 +\n2\n')).toEqual(['1:8 Invalid expression']);
  });

  it('recognizes a heredoc only when the marker is followed by a newline', () => {
    expect(errors('a = <<EOT x\nEOT\n')[0]).toBe('1:5 Invalid expression');
    // The closing marker may be indented, for << as well as <<- (as in hclsyntax).
    expect(str(attr(parseOk('a = <<EOT\n  x\n  EOT\n').body, 'a').expr)).toBe('  x\n');
    // A line that merely starts with the marker does not close the heredoc.
    expect(str(attr(parseOk('a = <<EOT\nEOTX\nEOT x\nEOT\n').body, 'a').expr)).toBe('EOTX\nEOT x\n');
    // The flush rule ignores blank lines and counts interpolations at a line start as no indentation.
    expect(str(attr(parseOk('a = <<-EOT\n    a\n\n      b\n  EOT\n').body, 'a').expr)).toBe('a\n\n  b\n');
    expect(shape(attr(parseOk('a = <<-EOT\n    a\n${x}\n  EOT\n').body, 'a').expr)).toEqual({
      template: ['    a\n', 'x', '\n'],
    });
    // Two heredocs in one expression (each opener must end its line).
    const both = attr(parseOk('a = [<<A\nfirst\nA\n, <<B\nsecond\nB\n]\n').body, 'a').expr;
    expect(value(both)).toEqual(['first\n', 'second\n']);
  });

  it('resolves escapes in quoted strings but not in heredocs', () => {
    expect(str(expr('"a\\nb\\t\\"\\\\ \\u00e9 \\U0001F600 $${x} %%{y} $ % $$"'))).toBe(
      'a\nb\t"\\ é 😀 ${x} %{y} $ % $$',
    );
    const r = parseOk('a = <<EOT\nno \\n escape, but $${x} and %%{y}\nEOT\n');
    expect(str(attr(r.body, 'a').expr)).toBe('no \\n escape, but ${x} and %{y}\n');
  });

  it('applies strip markers to adjacent literals only', () => {
    expect(str(expr('"a  ${~ "b" }  c"'))).toBe('ab  c');
    expect(str(expr('"a  ${ "b" ~}  c"'))).toBe('a  bc');
    expect(str(expr('"${"hello" ~}${" world"}"'))).toBe('hello world');
    expect(str(expr('"%{ if true ~} hello %{~ endif }"'))).toBe('hello');
  });

  it('unwraps a template that is a single interpolation (spec: interpolation unwrapping)', () => {
    expect(value(expr('"${true}"'))).toBe(true);
    expect(value(expr('"${"${true}"}"'))).toBe(true);
    expect(value(expr('"hello ${true}"'))).toBe('hello true');
    expect(value(expr('"${""}${true}"'))).toBe('true');
    expect(value(expr('"%{ for v in [true] }${v}%{ endfor }"'))).toBe('true');
  });

  it('builds traversals, indexes and splats like hclsyntax', () => {
    expect(expr('a.b[0]["c"].d')).toMatchObject({ kind: 'ScopeTraversal' });
    expect(shape(expr('a.b[0]["c"].d'))).toBe('a.b.0.c.d');
    expect(shape(expr('f(x)[0].y'))).toEqual({ rel: { call: 'f', args: ['x'] }, steps: [[0], 'y'] });
    expect(shape(expr('a[b]'))).toEqual({ index: 'a', key: 'b' });
    expect(shape(expr('a.*.b.c'))).toEqual({ splat: 'a', each: { rel: '*', steps: ['b', 'c'] }, attrOnly: true });
    // The attribute-only splat stops at an index; the full splat does not (spec "Splat Operators").
    expect(shape(expr('a.*.b[0]'))).toEqual({
      rel: { splat: 'a', each: { rel: '*', steps: ['b'] }, attrOnly: true },
      steps: [[0]],
    });
    expect(shape(expr('a[*].b[0]'))).toEqual({ splat: 'a', each: { rel: '*', steps: ['b', [0]] }, attrOnly: false });
  });

  it('gives the for keyword priority at the start of a collection (spec)', () => {
    expect(errors('a = [for, foo]\n')[0]).toMatch(/Invalid 'for' expression/);
    expect(errors('a = {for = 1, baz = 2}\n')[0]).toMatch(/Invalid 'for' expression/);
    expect(value(expr('{"for" = 1, baz = 2}'))).toEqual({ for: 1, baz: 2 });
    expect(value(expr('{baz = 2, for = 1}'))).toEqual({ baz: 2, for: 1 });
  });

  it('parses unary operators tighter than binary ones', () => {
    expect(shape(expr('-46+5'))).toEqual([['-', 46], '+', 5]);
    expect(value(expr('-46+5'))).toBe(-41);
    expect(shape(expr('!a && b'))).toEqual([['!', 'a'], '&&', 'b']);
  });

  it('stops cleanly past the nesting limit, keeping earlier items', () => {
    const deep = MAX_NESTING + 10;
    const cases = [
      '['.repeat(deep) + ']'.repeat(deep),
      '('.repeat(deep) + '1' + ')'.repeat(deep),
      '{a='.repeat(deep) + '1' + '}'.repeat(deep),
      '"${'.repeat(deep) + '1' + '}"'.repeat(deep),
      '-'.repeat(deep * 10) + '1',
      '1' + '+1'.repeat(deep * 10),
      'a' + '[b]'.repeat(deep * 10),
      'a' + '[*]'.repeat(deep * 10),
      '"' + '%{if true}'.repeat(deep) + '%{endif}'.repeat(deep) + '"',
    ];
    for (const c of cases) {
      const r = parseHCL(`ok = 1\nx = ${c}\n`, 'deep.tf');
      expect(r.diagnostics.map((d) => d.summary)).toContain('Nesting too deep');
      expect(r.body.attributes.map((a) => a.name)).toEqual(['ok']);
    }
    const blocksSrc = 'a {\n'.repeat(deep) + '}\n'.repeat(deep);
    expect(parseHCL(blocksSrc, 'deep.tf').diagnostics.map((d) => d.summary)).toEqual(['Nesting too deep']);
    // Just under the limit is fine.
    const ok = 'x = ' + '['.repeat(MAX_NESTING - 2) + ']'.repeat(MAX_NESTING - 2) + '\n';
    expect(parseHCL(ok, 'ok.tf').diagnostics).toEqual([]);
  });
});
