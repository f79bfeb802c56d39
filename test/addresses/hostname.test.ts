import { describe, expect, it } from 'vitest';

import { ErrorCode } from '../../src/errors.js';
import type { ProvkitError } from '../../src/errors.js';
import {
  compareBytewise,
  displayHostnameLenient,
  goQuote,
  goTrimSpace,
  hostnameForComparison,
  hostnameForDisplay,
  idnaLookup,
  isValidHostname,
  tryHostnameForComparison,
} from '../../src/addresses/index.js';

// svchost ForComparison / ForDisplay (docs/reference.md §1.1 item 4). The expectations were
// checked against terraform v1.11.4 through provider source strings
// (see provider.test.ts, which holds the raw observations).
describe('hostnameForComparison', () => {
  it.each<[string, string, string]>([
    // given, comparison form, display form
    ['example.com', 'example.com', 'example.com'],
    ['Example.COM:443', 'example.com', 'example.com'],
    ['example.com:08443', 'example.com:8443', 'example.com:8443'],
    ['example.com:+80', 'example.com:80', 'example.com:80'],
    ['example.com:-1', 'example.com:-1', 'example.com:-1'], // Go only refuses ports above 65535
    ['example.com:+443', 'example.com', 'example.com'],
    ['localhost:0', 'localhost:0', 'localhost:0'],
    ['ÉXAMPLE.com', 'xn--xample-9ua.com', 'éxample.com'],
    ['café.example:8443', 'xn--caf-dma.example:8443', 'café.example:8443'],
    ['XN--CAF-DMA.example', 'xn--caf-dma.example', 'café.example'], // the punycode check is case-sensitive
    ['straße.de', 'xn--strae-oqa.de', 'straße.de'], // non-transitional: ß is kept
    ['ＡＢＣ.com', 'abc.com', 'abc.com'], // width mapping
    ['a\u3002b', 'a.b', 'a.b'], // ideographic full stop is a separator
    ['😀.com', 'xn--e28h.com', '😀.com'],
    ['a.', 'a.', 'a.'],
    ['a..', 'a..', 'a..'], // Go's label iterator stops before a trailing ".."
    ['127.0.0.1', '127.0.0.1', '127.0.0.1'],
  ])('%j → %j (display %j)', (given, comparison, display) => {
    const h = hostnameForComparison(given);
    expect(h).toBe(comparison);
    expect(hostnameForDisplay(h)).toBe(display);
    expect(isValidHostname(given)).toBe(true);
    // the comparison form is stable under another round (unless it is punycode, which is refused as input)
    if (!comparison.includes('xn--')) expect(hostnameForComparison(comparison)).toBe(comparison);
  });

  it.each<[string, string]>([
    ['', 'empty string is not a valid hostname'],
    [':443', 'empty string is not a valid hostname'],
    ['example.com:65536', 'port number is greater than 65535'],
    ['example.com:', 'port portion contains non-digit characters'],
    ['example.com:x', 'port portion contains non-digit characters'],
    ['x:1:2', 'port portion contains non-digit characters'],
    ['example.com:99999999999999999999', 'port portion contains non-digit characters'], // beyond int64
    ['http:x', 'need just a hostname and optional port number, not a full URL'],
    ['HTTPS:99999', 'need just a hostname and optional port number, not a full URL'],
    ['a..b', 'hostname contains empty label (two consecutive periods)'],
    ['.a', 'hostname contains empty label (two consecutive periods)'],
    ['a...', 'hostname contains empty label (two consecutive periods)'],
    [
      'xn--caf-dma.com',
      'hostname label "xn--caf-dma" specified in punycode format; service hostnames must be given in unicode',
    ],
    ['ex_ample.com', 'idna: disallowed rune U+005F'],
    ['ex ample.com', 'idna: disallowed rune U+0020'],
    ['-ex.com', 'idna: invalid label "-ex"'],
    ['ex-.com', 'idna: invalid label "ex-"'],
    ['ab--cd.example.com', 'idna: invalid label "ab--cd"'], // CheckHyphens, by bytes
    ['é--x.example.com', 'idna: invalid label "é--x"'], // bytes 3–4 of "é--x" are "--"
    ['\u0301a.com', 'idna: invalid label "\u0301a"'], // leading combining mark
    ['ab\u200cc.com', 'idna: invalid label "ab\\u200cc"'], // ContextJ
    ['a\u05d0.com', 'idna: invalid label "a\u05d0.com"'], // Bidi rule: the whole name is reported
  ])('%j fails: %s', (given, error) => {
    const r = tryHostnameForComparison(given);
    expect(r).toEqual({ ok: false, error });
    expect(isValidHostname(given)).toBe(false);
    expect(() => hostnameForComparison(given)).toThrow(error);
    try {
      hostnameForComparison(given);
    } catch (err) {
      expect((err as ProvkitError).code).toBe(ErrorCode.INVALID_PROVIDER_SOURCE);
    }
  });
});

describe('idnaLookup (Go idna.Lookup)', () => {
  it.each<[string, string, string]>([
    ['Bücher.example', 'xn--bcher-kva.example', 'bücher.example'],
    ['xn--bcher-kva.example', 'xn--bcher-kva.example', 'bücher.example'],
    ['a\u00adb', 'ab', 'ab'], // ignored code point
    ['', '', ''],
  ])('%j → %j / %j', (given, ascii, unicode) => {
    expect(idnaLookup(given, true)).toEqual({ ok: true, value: ascii });
    expect(idnaLookup(given, false)).toEqual({ ok: true, value: unicode });
  });

  it('reports the first disallowed rune, as Go does', () => {
    expect(idnaLookup('a_b c', true)).toEqual({ ok: false, error: 'idna: disallowed rune U+005F' });
    expect(idnaLookup('a\u2474', false)).toEqual({ ok: false, error: 'idna: disallowed rune U+2474' });
  });

  it.each<[string, string]>([
    ['xn---', 'idna: invalid label "-"'], // undecodable: reported by its encoded part
    ['a.xn--zzzzzzzzzzzzzzzzzzzz', 'idna: invalid label "zzzzzzzzzzzzzzzzzzzz"'], // overflow
    ['xn--a', 'idna: invalid label "\\u0080"'], // decodes to U+0080, which is disallowed
    ['xn--caf-dma--x', 'idna: invalid label "caf-dma--x"'],
  ])('A-label %j fails: %s (as terraform reports for the upper-case spelling)', (given, error) => {
    expect(idnaLookup(given, true)).toEqual({ ok: false, error });
  });

  it('decodes an A-label Go-style: a trailing "-" means no encoded part', () => {
    expect(idnaLookup('a.xn--ab-', true)).toEqual({ ok: true, value: 'a.ab' });
  });
});

describe('displayHostnameLenient', () => {
  it.each<[string, string]>([
    ['XN--CAF-DMA.example:0443', 'café.example'],
    ['XN--CAF-DMA.example:08443', 'café.example:8443'],
    ['Café.Example:443', 'café.example'],
    ['not valid_host:x', 'not valid_host:x'],
  ])('%j → %j', (given, want) => {
    expect(displayHostnameLenient(given)).toBe(want);
  });
});

describe('Go string helpers', () => {
  it.each<[string, string]>([
    ['plain', '"plain"'],
    ['q"b\\s', '"q\\"b\\\\s"'],
    ['tab\tnl\ncr\r', '"tab\\tnl\\ncr\\r"'],
    ['\u0007\u0008\u000b\u000c', '"\\a\\b\\v\\f"'],
    ['nul\u0000del\u007f', '"nul\\x00del\\x7f"'],
    ['é😀', '"é😀"'],
    ['\u00a0\u200d\u0085', '"\\u00a0\\u200d\\u0085"'],
    ['\u{e0001}', '"\\U000e0001"'],
  ])('goQuote(%j) = %s', (s, q) => {
    expect(goQuote(s)).toBe(q);
  });

  it('goTrimSpace trims Unicode White_Space like Go (U+0085 yes, U+FEFF no)', () => {
    expect(goTrimSpace('\u0085\u00a0 x \t\u3000')).toBe('x');
    expect(goTrimSpace('\ufeffx')).toBe('\ufeffx');
  });

  it('compareBytewise orders by code point (UTF-8 bytes)', () => {
    expect(compareBytewise('a', 'b')).toBeLessThan(0);
    expect(compareBytewise('ab', 'a')).toBeGreaterThan(0);
    expect(compareBytewise('\uff5e', '\u{1f600}')).toBeLessThan(0); // JS "<" says the opposite
    expect('\uff5e' < '\u{1f600}').toBe(false);
    expect(compareBytewise('same', 'same')).toBe(0);
  });
});
