// HCL quoted-literal writing, byte-for-byte like Go's hclwrite (src/hcl/write.ts).
import { describe, expect, it } from 'vitest';

import {
  escapeQuotedStringLit,
  isGoPrint,
  isValidIdentifier,
  parseHCL,
  quoteStringLit,
  staticString,
} from '../../src/hcl/index.js';
import { attr } from './helpers.js';

describe('quoteStringLit', () => {
  it('matches the verified hclwrite vector', () => {
    expect(quoteStringLit('a:${x}%{y}\té\u0007')).toBe('"a:$${x}%%{y}\\té\\u0007"');
  });

  it('escapes exactly the characters hclwrite escapes', () => {
    expect(escapeQuotedStringLit('\n\r\t"\\')).toBe('\\n\\r\\t\\"\\\\');
    expect(escapeQuotedStringLit('$ % $$ %% ${ %{ $${')).toBe('$ % $$ %% $${ %%{ $$${');
    expect(escapeQuotedStringLit("h1:abc+/= 'single' `tick` ~")).toBe("h1:abc+/= 'single' `tick` ~");
    expect(escapeQuotedStringLit('\u0000\u001f\u007f\u0085')).toBe('\\u0000\\u001f\\u007f\\u0085');
    // Only the ASCII space is a printable space for Go's unicode.IsPrint.
    expect(escapeQuotedStringLit('a b\u00a0c\u2028d\u3000e')).toBe('a b\\u00a0c\\u2028d\\u3000e');
    // Format characters are not printable; above the BMP the 8-digit form is used.
    expect(escapeQuotedStringLit('\ufeff\u200b\u{e0001}')).toBe('\\ufeff\\u200b\\U000e0001');
    // Printable non-ASCII is written raw.
    expect(escapeQuotedStringLit('é日本😀€∑')).toBe('é日本😀€∑');
    // A lone surrogate cannot be in a Go string; it comes out as U+FFFD.
    expect(escapeQuotedStringLit('a\ud800b')).toBe('a\ufffdb');
    expect(escapeQuotedStringLit('')).toBe('');
  });

  it('agrees with Go unicode.IsPrint on sample code points', () => {
    expect([0x20, 0x41, 0x7e, 0xa1, 0xe9, 0x2603, 0x1f600].every(isGoPrint)).toBe(true);
    expect([0x00, 0x09, 0x7f, 0x9f, 0xa0, 0xad, 0x2000, 0xd800, 0xe000, 0xfffe].some(isGoPrint)).toBe(false);
  });

  it('round-trips through the parser for arbitrary strings', () => {
    const alphabet = [
      'a',
      ' ',
      '$',
      '%',
      '{',
      '}',
      '"',
      '\\',
      '\n',
      '\r',
      '\t',
      '~',
      'é',
      '\u0007',
      '\u00a0',
      '😀',
      '\u200b',
      '#',
      '/',
      '*',
      'u',
    ];
    let seed = 12345;
    const rand = (n: number): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    for (let i = 0; i < 500; i++) {
      let s = '';
      const len = rand(20);
      for (let k = 0; k < len; k++) s += alphabet[rand(alphabet.length)];
      const r = parseHCL(`v = ${quoteStringLit(s)}\n`, 'rt.tf');
      expect(r.diagnostics).toEqual([]);
      expect(staticString(attr(r.body, 'v').expr).value).toBe(s);
    }
  });
});

describe('isValidIdentifier', () => {
  it('follows the spec identifier syntax', () => {
    expect(['aws', 'google-beta', '_x', 'naïve', 'a1-b_2'].every(isValidIdentifier)).toBe(true);
    expect(['', '1a', '-a', 'a.b', 'a b', 'hashicorp/aws'].some(isValidIdentifier)).toBe(false);
  });
  it('decides ASCII names as the Unicode classes do (its ASCII fast path)', () => {
    const unicode = /^[\p{ID_Start}_][\p{ID_Continue}-]*$/u;
    const ascii = Array.from({ length: 0x80 }, (_, c) => String.fromCharCode(c));
    const names = ['', ...ascii, ...ascii.flatMap((a) => ['a', '_', '-', '1', 'é'].flatMap((b) => [a + b, b + a]))];
    const disagree = names.filter((n) => isValidIdentifier(n) !== unicode.test(n));
    expect(disagree).toEqual([]);
  });
});
