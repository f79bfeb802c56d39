// Go's semantics (src/go/index.ts) against Go's documented outputs: the
// examples of the `strconv`, `path` and `encoding/json` package docs and
// their test tables (go/src/strconv/quote_test.go, go/src/path/path_test.go,
// go/src/encoding/json/encode_test.go), and `sort.Strings` byte order.
import { describe, expect, it } from 'vitest';

import {
  compareBytewise,
  goJSONString,
  goEscape,
  goMarshalIndent,
  goOneLine,
  goPathClean,
  goQuote,
  goTrimSpace,
} from '../../src/go/index.js';

describe('goQuote = strconv.Quote', () => {
  it.each([
    // ExampleQuote (go/src/strconv/example_test.go)
    ['"Fran & Freddie\'s Diner\t☺"', '"\\"Fran & Freddie\'s Diner\\t☺\\""'],
    // quote_test.go quotetests
    ['\x07\b\f\r\n\t\v', '"\\a\\b\\f\\r\\n\\t\\v"'],
    ['\\', '"\\\\"'],
    ['abc\u00ffdef', '"abc\u00ffdef"'],
    ['\u263a', '"☺"'],
    ['\u{10ffff}', '"\\U0010ffff"'],
    ['\x04', '"\\x04"'],
    // Non-printable per unicode.IsPrint: DEL, NBSP, zero-width space, private use.
    ['\x7f', '"\\x7f"'],
    ['\u00a0', '"\\u00a0"'],
    ['\u200b', '"\\u200b"'],
    ['\ue000', '"\\ue000"'],
    ['\u{1f600}', '"\u{1f600}"'],
    ['', '""'],
  ])('goQuote(%j) = %s', (s, q) => {
    expect(goQuote(s)).toBe(q);
  });

  it('writes a lone surrogate (which Go cannot hold) as U+FFFD', () => {
    expect(goQuote('a\ud800b')).toBe('"a\ufffdb"');
  });

  it('writes printable ASCII (0x20-0x7e, IsPrint) raw and escapes the rest of ASCII', () => {
    for (let cp = 0; cp < 0x80; cp++) {
      const ch = String.fromCharCode(cp);
      if (cp === 0x22 || cp === 0x5c) expect(goQuote(ch)).toBe(`"\\${ch}"`);
      else if (cp >= 0x20 && cp < 0x7f) expect(goQuote(ch)).toBe(`"${ch}"`);
      else expect(goQuote(ch)).toMatch(/^"\\[abfnrtv]"$|^"\\x[0-9a-f]{2}"$/);
    }
  });
});

describe("goEscape: %q's escapes for what is not printable, nothing else", () => {
  it.each<[string, string]>([
    ['plain "text" \\ C:\\path', 'plain "text" \\ C:\\path'], // quotes and backslashes kept, no quotes added
    ['\u001b[2J\u001b]0;title\u0007', '\\x1b[2J\\x1b]0;title\\a'],
    ['a\r\nb\tc', 'a\\r\\nb\\tc'],
    ['\u009b31m \u007f', '\\u009b31m \\x7f'], // C1 CSI and DEL
    ['bidi \u202eevil', 'bidi \\u202eevil'],
    ['line\u2028sep', 'line\\u2028sep'],
    ['naïve ✓ 日本', 'naïve ✓ 日本'],
  ])('goEscape(%j) = %s', (s, want) => {
    expect(goEscape(s)).toBe(want);
  });

  it('keeps the characters it is told to keep (line feeds and tabs of provkit text)', () => {
    expect(goEscape('a\nb\tc\r\u001b', '\n\t')).toBe('a\nb\tc\\r\\x1b');
  });

  it('escapes each rune as goQuote does', () => {
    for (let cp = 0; cp < 0x300; cp++) {
      const ch = String.fromCodePoint(cp);
      if (ch === '"' || ch === '\\') continue;
      expect(goEscape(ch)).toBe(goQuote(ch).slice(1, -1));
    }
  });

  it('goOneLine escapes line breaks only', () => {
    expect(goOneLine('a\r\nb\u0085c\u2028d\u2029e\u000bf\u000cg \u001b')).toBe(
      'a\\r\\nb\\u0085c\\u2028d\\u2029e\\vf\\fg \u001b',
    );
    expect(goOneLine('one line')).toBe('one line');
  });
});

describe('goTrimSpace = strings.TrimSpace', () => {
  it('trims Unicode White_Space only', () => {
    expect(goTrimSpace(' \t\n Hello, Gophers \n\t\r\n')).toBe('Hello, Gophers'); // ExampleTrimSpace
    expect(goTrimSpace('\u0085x\u3000')).toBe('x');
    expect(goTrimSpace('\ufeffx')).toBe('\ufeffx');
  });

  it('keeps a string whose ends are printable ASCII as it is, inner spaces included', () => {
    expect(goTrimSpace('a b')).toBe('a b');
    expect(goTrimSpace(' a')).toBe('a');
    expect(goTrimSpace('a\u0085')).toBe('a');
    expect(goTrimSpace('')).toBe('');
    expect(goTrimSpace(' ')).toBe('');
  });
});

describe('goPathClean = path.Clean', () => {
  it.each([
    // ExampleClean (go/src/path/example_test.go)
    ['a/c', 'a/c'],
    ['a//c', 'a/c'],
    ['a/c/.', 'a/c'],
    ['a/c/b/..', 'a/c'],
    ['/../a/c', '/a/c'],
    ['/../a/b/../././/c', '/a/c'],
    ['', '.'],
    // path_test.go cleantests
    ['abc/', 'abc'],
    ['/', '/'],
    ['//', '/'],
    ['./', '.'],
    ['../', '..'],
    ['../../abc', '../../abc'],
    ['abc/../../..', '../..'],
    ['/abc/../../..', '/'],
    ['abc/./../def', 'def'],
    ['abc//def//ghi', 'abc/def/ghi'],
  ])('goPathClean(%j) = %j', (p, want) => {
    expect(goPathClean(p)).toBe(want);
  });
});

describe('goMarshalIndent = json.MarshalIndent(v, "", "  ")', () => {
  it('sorts map keys by bytes and indents by two spaces, no trailing newline', () => {
    expect(goMarshalIndent({ b: 2, a: 1 })).toBe('{\n  "a": 1,\n  "b": 2\n}');
    expect(goMarshalIndent({ z: [], é: {}, B: [true, null, 'x'] })).toBe(
      '{\n  "B": [\n    true,\n    null,\n    "x"\n  ],\n  "z": [],\n  "é": {}\n}',
    );
  });

  it('escapes strings like encoding/json: HTML characters, line separators, control characters', () => {
    // encode_test.go TestHTMLEscape / TestMarshalerEscaping: <, >, & as \u003c \u003e \u0026.
    expect(goJSONString('<&>')).toBe('"\\u003c\\u0026\\u003e"');
    expect(goJSONString('\u2028\u2029')).toBe('"\\u2028\\u2029"');
    expect(goJSONString('\x01\b\f\n\r\t"\\\x7f')).toBe('"\\u0001\\b\\f\\n\\r\\t\\"\\\\\x7f"');
    expect(goMarshalIndent({ u: 'a<b>&c\u2028"\\\n' })).toBe(
      '{\n  "u": "a\\u003cb\\u003e\\u0026c\\u2028\\"\\\\\\n"\n}',
    );
    expect(goMarshalIndent([])).toBe('[]');
    expect(goMarshalIndent({})).toBe('{}');
  });
});

describe('compareBytewise = Go string order', () => {
  it('sorts as sort.Strings (UTF-8 bytes), not as JS sort() (UTF-16 units)', () => {
    const words = ['b', '\u{1f600}', 'a', '\uff5e', 'Z', 'é', '~', 'ab', ''];
    expect([...words].sort(compareBytewise)).toEqual(['', 'Z', 'a', 'ab', 'b', '~', 'é', '\uff5e', '\u{1f600}']);
    expect([...words].sort(compareBytewise)).toEqual(
      [...words].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y))),
    );
    expect([...words].sort()).not.toEqual([...words].sort(compareBytewise));
    expect(compareBytewise('same', 'same')).toBe(0);
  });
});
