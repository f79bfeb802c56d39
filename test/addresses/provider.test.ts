import { describe, expect, it } from 'vitest';

import { ErrorCode, ProvkitError } from '../../src/errors.js';
import {
  hostnameForComparison,
  impliedProviderForUnqualifiedType,
  newProviderAddress,
  parseProviderPart,
  parseProviderSource,
  ProviderAddress,
  sortProviders,
  tryParseProviderSource,
} from '../../src/addresses/index.js';
import type { Flavor } from '../../src/addresses/index.js';

type Expected = { addr: string } | { summary: string; detail: string };

function outcome(source: string, flavor: Flavor): Expected {
  try {
    return { addr: parseProviderSource(source, flavor).toString() };
  } catch (err) {
    expect(err).toBeInstanceOf(ProvkitError);
    const e = err as ProvkitError;
    expect(e.code).toBe(ErrorCode.INVALID_PROVIDER_SOURCE);
    expect(e.message).toBe(`${e.summary ?? ''}: ${e.detail ?? ''}`);
    return { summary: e.summary ?? '', detail: e.detail ?? '' };
  }
}

// Each row was produced by terraform v1.11.4 (`terraform validate -json` for the
// diagnostics, `terraform providers` for the normalised address) from
// `required_providers { p = { source = "<input>" } }`. Spec §1.1 items 1–9.
const TERRAFORM_OBSERVED: [string, Expected][] = [
  ['terraform', { addr: 'registry.terraform.io/hashicorp/terraform' }],
  ['hashicorp/terraform', { addr: 'registry.terraform.io/hashicorp/terraform' }],
  ['HashiCorp/AWS', { addr: 'registry.terraform.io/hashicorp/aws' }],
  [
    'a/b/c/d',
    {
      summary: 'Invalid provider source string',
      detail: 'The "source" attribute must be in the format "[hostname/][namespace/]name"',
    },
  ],
  [
    'https://example.com/a/b',
    {
      summary: 'Invalid provider source string',
      detail: 'The "source" attribute must be in the format "[hostname/][namespace/]name"',
    },
  ],
  [
    'example.com/ac_me/foo',
    {
      summary: 'Invalid provider namespace',
      detail:
        'Invalid provider namespace "" in source "example.com/ac_me/foo": must contain only letters, digits, and dashes, and may not use leading or trailing dashes"',
    },
  ],
  [
    'foo.bar',
    {
      summary: 'Invalid provider type',
      detail: 'Invalid provider type "foo.bar" in source "foo.bar": dots are not allowed"',
    },
  ],
  [
    'a--b',
    {
      summary: 'Invalid provider type',
      detail: 'Invalid provider type "a--b" in source "a--b": cannot use multiple consecutive dashes"',
    },
  ],
  [
    'example.com/-/foo',
    {
      summary: 'Invalid provider namespace',
      detail: 'The legacy provider namespace "-" can be used only with hostname registry.terraform.io.',
    },
  ],
  ['-/foo', { addr: 'registry.terraform.io/-/foo' }],
  ['registry.terraform.io/-/foo', { addr: 'registry.terraform.io/-/foo' }],
  ['terraform-provider-aws/x', { addr: 'registry.terraform.io/terraform-provider-aws/x' }],
  [
    'x/terraform-provider-aws',
    {
      summary: 'Invalid provider type',
      detail:
        'Provider source "x/terraform-provider-aws" has a type with the prefix "terraform-provider-", which isn\'t valid. Although that prefix is often used in the names of version control repositories for Terraform providers, provider source strings should not include it.\n\nDid you mean "x/aws"?',
    },
  ],
  [
    'x/terraform-foo',
    {
      summary: 'Invalid provider type',
      detail:
        'Provider source "registry.terraform.io/x/terraform-foo" has a type with the prefix "terraform-", which isn\'t allowed because it would be redundant to name a Terraform provider with that prefix. If you are the author of this provider, rename it to not include the prefix.',
    },
  ],
  [
    'x/terraform-provider-',
    {
      summary: 'Invalid provider type',
      detail:
        'Invalid provider type "terraform-provider-" in source "x/terraform-provider-": must contain only letters, digits, and dashes, and may not use leading or trailing dashes"',
    },
  ],
  [
    'x/terraform-provider--a',
    {
      summary: 'Invalid provider type',
      detail:
        'Invalid provider type "terraform-provider--a" in source "x/terraform-provider--a": cannot use multiple consecutive dashes"',
    },
  ],
  [
    'example.com/x/terraform-provider-aws',
    {
      summary: 'Invalid provider type',
      detail:
        'Provider source "example.com/x/terraform-provider-aws" has a type with the prefix "terraform-provider-", which isn\'t valid. Although that prefix is often used in the names of version control repositories for Terraform providers, provider source strings should not include it.\n\nDid you mean "example.com/x/aws"?',
    },
  ],
  ['x/opentofu-foo', { addr: 'registry.terraform.io/x/opentofu-foo' }],
  ['example.com:08443/a/b', { addr: 'example.com:8443/a/b' }],
  ['Example.COM:443/a/b', { addr: 'example.com/a/b' }],
  ['example.com:+80/a/b', { addr: 'example.com:80/a/b' }],
  ['example.com:-1/a/b', { addr: 'example.com:-1/a/b' }],
  [
    'example.com:65536/a/b',
    {
      summary: 'Invalid provider source hostname',
      detail:
        'Invalid provider source hostname namespace "" in source "example.com:65536/a/b": port number is greater than 65535"',
    },
  ],
  [
    'example.com:/a/b',
    {
      summary: 'Invalid provider source hostname',
      detail:
        'Invalid provider source hostname namespace "" in source "example.com:/a/b": port portion contains non-digit characters"',
    },
  ],
  [
    'example.com:x/a/b',
    {
      summary: 'Invalid provider source hostname',
      detail:
        'Invalid provider source hostname namespace "" in source "example.com:x/a/b": port portion contains non-digit characters"',
    },
  ],
  [
    'http:x/a/b',
    {
      summary: 'Invalid provider source hostname',
      detail:
        'Invalid provider source hostname namespace "" in source "http:x/a/b": need just a hostname and optional port number, not a full URL"',
    },
  ],
  [
    'HTTPS:99999/a/b',
    {
      summary: 'Invalid provider source hostname',
      detail:
        'Invalid provider source hostname namespace "" in source "HTTPS:99999/a/b": need just a hostname and optional port number, not a full URL"',
    },
  ],
  [
    'xn--caf-dma.com/a/b',
    {
      summary: 'Invalid provider source hostname',
      detail:
        'Invalid provider source hostname namespace "" in source "xn--caf-dma.com/a/b": hostname label "xn--caf-dma" specified in punycode format; service hostnames must be given in unicode"',
    },
  ],
  [
    'a..b/c/d',
    {
      summary: 'Invalid provider source hostname',
      detail:
        'Invalid provider source hostname namespace "" in source "a..b/c/d": hostname contains empty label (two consecutive periods)"',
    },
  ],
  [
    '.a/c/d',
    {
      summary: 'Invalid provider source hostname',
      detail:
        'Invalid provider source hostname namespace "" in source ".a/c/d": hostname contains empty label (two consecutive periods)"',
    },
  ],
  ['a./c/d', { addr: 'a./c/d' }],
  ['a../c/d', { addr: 'a../c/d' }],
  [
    'a.../c/d',
    {
      summary: 'Invalid provider source hostname',
      detail:
        'Invalid provider source hostname namespace "" in source "a.../c/d": hostname contains empty label (two consecutive periods)"',
    },
  ],
  [
    '.../c/d',
    {
      summary: 'Invalid provider source hostname',
      detail:
        'Invalid provider source hostname namespace "" in source ".../c/d": hostname contains empty label (two consecutive periods)"',
    },
  ],
  [
    'ex_ample.com/a/b',
    {
      summary: 'Invalid provider source hostname',
      detail:
        'Invalid provider source hostname namespace "" in source "ex_ample.com/a/b": idna: disallowed rune U+005F"',
    },
  ],
  [
    '-ex.com/a/b',
    {
      summary: 'Invalid provider source hostname',
      detail: 'Invalid provider source hostname namespace "" in source "-ex.com/a/b": idna: invalid label "-ex""',
    },
  ],
  [
    'ex-.com/a/b',
    {
      summary: 'Invalid provider source hostname',
      detail: 'Invalid provider source hostname namespace "" in source "ex-.com/a/b": idna: invalid label "ex-""',
    },
  ],
  [
    'x/-a',
    {
      summary: 'Invalid provider type',
      detail:
        'Invalid provider type "-a" in source "x/-a": must contain only letters, digits, and dashes, and may not use leading or trailing dashes"',
    },
  ],
  [
    'x/a-',
    {
      summary: 'Invalid provider type',
      detail:
        'Invalid provider type "a-" in source "x/a-": must contain only letters, digits, and dashes, and may not use leading or trailing dashes"',
    },
  ],
  [
    'x/Fo.o',
    {
      summary: 'Invalid provider type',
      detail: 'Invalid provider type "Fo.o" in source "x/Fo.o": dots are not allowed"',
    },
  ],
  [
    '',
    {
      summary: 'Invalid provider source string',
      detail: 'The "source" attribute must be in the format "[hostname/][namespace/]name"',
    },
  ],
  [
    '/',
    {
      summary: 'Invalid provider source string',
      detail: 'The "source" attribute must be in the format "[hostname/][namespace/]name"',
    },
  ],
  [
    'a/',
    {
      summary: 'Invalid provider source string',
      detail: 'The "source" attribute must be in the format "[hostname/][namespace/]name"',
    },
  ],
  ['ÉXAMPLE.com/Ñame/Fóo', { addr: 'éxample.com/ñame/fóo' }],
  ['XN--CAF-DMA.example.com/a/bar', { addr: 'café.example.com/a/bar' }],
  [
    'ab--cd.example.com/a/b',
    {
      summary: 'Invalid provider source hostname',
      detail:
        'Invalid provider source hostname namespace "" in source "ab--cd.example.com/a/b": idna: invalid label "ab--cd""',
    },
  ],
  ['abc--d.example.com/a/b', { addr: 'abc--d.example.com/a/b' }],
  [
    'é--x.example.com/a/b',
    {
      summary: 'Invalid provider source hostname',
      detail:
        'Invalid provider source hostname namespace "" in source "é--x.example.com/a/b": idna: invalid label "é--x""',
    },
  ],
  [
    'x/é--x',
    {
      summary: 'Invalid provider type',
      detail: 'Invalid provider type "é--x" in source "x/é--x": cannot use multiple consecutive dashes"',
    },
  ],
  ['x/a。b', { addr: 'registry.terraform.io/x/a.b' }],
  ['a。b/c/d', { addr: 'a.b/c/d' }],
  ['ＡＢＣ.com/ns/ty', { addr: 'abc.com/ns/ty' }],
  ['straße.de/ß/ς', { addr: 'straße.de/ß/ς' }],
  [
    'x/ab\u200dc',
    {
      summary: 'Invalid provider type',
      detail:
        'Invalid provider type "ab\\u200dc" in source "x/ab\\u200dc": must contain only letters, digits, and dashes, and may not use leading or trailing dashes"',
    },
  ],
  [
    'x/\u0301a',
    {
      summary: 'Invalid provider type',
      detail:
        'Invalid provider type "\u0301a" in source "x/\u0301a": must contain only letters, digits, and dashes, and may not use leading or trailing dashes"',
    },
  ],
  [
    '\u0301a.com/x/y',
    {
      summary: 'Invalid provider source hostname',
      detail:
        'Invalid provider source hostname namespace "" in source "\u0301a.com/x/y": idna: invalid label "\u0301a""',
    },
  ],
  [
    'ex ample.com/a/b',
    {
      summary: 'Invalid provider source hostname',
      detail:
        'Invalid provider source hostname namespace "" in source "ex ample.com/a/b": idna: disallowed rune U+0020"',
    },
  ],
  [
    'x/a b',
    {
      summary: 'Invalid provider type',
      detail:
        'Invalid provider type "a b" in source "x/a b": must contain only letters, digits, and dashes, and may not use leading or trailing dashes"',
    },
  ],
  [
    'x/a_b',
    {
      summary: 'Invalid provider type',
      detail:
        'Invalid provider type "a_b" in source "x/a_b": must contain only letters, digits, and dashes, and may not use leading or trailing dashes"',
    },
  ],
  ['x/😀', { addr: 'registry.terraform.io/x/😀' }],
  ['😀.com/a/b', { addr: '😀.com/a/b' }],
  ['x/العربية', { addr: 'registry.terraform.io/x/العربية' }],
  ['العربية.com/a/b', { addr: 'العربية.com/a/b' }],
  [
    'aא.com/a/b',
    {
      summary: 'Invalid provider source hostname',
      detail: 'Invalid provider source hostname namespace "" in source "aא.com/a/b": idna: invalid label "aא.com""',
    },
  ],
  [
    '1א.com/a/b',
    {
      summary: 'Invalid provider source hostname',
      detail: 'Invalid provider source hostname namespace "" in source "1א.com/a/b": idna: invalid label "1א.com""',
    },
  ],
  [
    'x/aא',
    {
      summary: 'Invalid provider type',
      detail:
        'Invalid provider type "aא" in source "x/aא": must contain only letters, digits, and dashes, and may not use leading or trailing dashes"',
    },
  ],
  ['x/ＡＢ', { addr: 'registry.terraform.io/x/ab' }],
  ['x/a\u00adb', { addr: 'registry.terraform.io/x/ab' }],
  [
    'x/⑴',
    {
      summary: 'Invalid provider type',
      detail:
        'Invalid provider type "⑴" in source "x/⑴": must contain only letters, digits, and dashes, and may not use leading or trailing dashes"',
    },
  ],
  ['x/A\u030a', { addr: 'registry.terraform.io/x/å' }],
  [
    'x/terraform-provider-é',
    {
      summary: 'Invalid provider type',
      detail:
        'Provider source "x/terraform-provider-é" has a type with the prefix "terraform-provider-", which isn\'t valid. Although that prefix is often used in the names of version control repositories for Terraform providers, provider source strings should not include it.\n\nDid you mean "x/é"?',
    },
  ],
  [
    'x/terraform-provider-TERRAFORM-x',
    {
      summary: 'Invalid provider type',
      detail:
        'Provider source "x/terraform-provider-terraform-x" has a type with the prefix "terraform-provider-", which isn\'t valid. Although that prefix is often used in the names of version control repositories for Terraform providers, provider source strings should not include it.\n\nDid you mean "x/terraform-x"?',
    },
  ],
  [
    'example.com:443/hashicorp/terraform-provider-aws',
    {
      summary: 'Invalid provider type',
      detail:
        'Provider source "example.com/hashicorp/terraform-provider-aws" has a type with the prefix "terraform-provider-", which isn\'t valid. Although that prefix is often used in the names of version control repositories for Terraform providers, provider source strings should not include it.\n\nDid you mean "example.com/hashicorp/aws"?',
    },
  ],
  ['registry.terraform.io:443/a/b', { addr: 'registry.terraform.io/a/b' }],
  [
    'x:1:2/a/b',
    {
      summary: 'Invalid provider source hostname',
      detail:
        'Invalid provider source hostname namespace "" in source "x:1:2/a/b": port portion contains non-digit characters"',
    },
  ],
  [
    '[::1]/a/b',
    {
      summary: 'Invalid provider source hostname',
      detail:
        'Invalid provider source hostname namespace "" in source "[::1]/a/b": port portion contains non-digit characters"',
    },
  ],
  ['127.0.0.1/a/b', { addr: '127.0.0.1/a/b' }],
  ['localhost:0/a/b', { addr: 'localhost:0/a/b' }],
  [
    'ex%41.com/a/b',
    {
      summary: 'Invalid provider source hostname',
      detail: 'Invalid provider source hostname namespace "" in source "ex%41.com/a/b": idna: disallowed rune U+0025"',
    },
  ],
  [
    'x/y/',
    {
      summary: 'Invalid provider source string',
      detail: 'The "source" attribute must be in the format "[hostname/][namespace/]name"',
    },
  ],
  [
    'x//y',
    {
      summary: 'Invalid provider source string',
      detail: 'The "source" attribute must be in the format "[hostname/][namespace/]name"',
    },
  ],
  [
    'a\tb/c',
    {
      summary: 'Invalid provider namespace',
      detail:
        'Invalid provider namespace "" in source "a\\tb/c": must contain only letters, digits, and dashes, and may not use leading or trailing dashes"',
    },
  ],
  [
    'x/"q"',
    {
      summary: 'Invalid provider type',
      detail:
        'Invalid provider type "\\"q\\"" in source "x/\\"q\\"": must contain only letters, digits, and dashes, and may not use leading or trailing dashes"',
    },
  ],
  [
    'x/tab\there',
    {
      summary: 'Invalid provider type',
      detail:
        'Invalid provider type "tab\\there" in source "x/tab\\there": must contain only letters, digits, and dashes, and may not use leading or trailing dashes"',
    },
  ],
  [
    'x/nul\u0000',
    {
      summary: 'Invalid provider type',
      detail:
        'Invalid provider type "nul\\x00" in source "x/nul\\x00": must contain only letters, digits, and dashes, and may not use leading or trailing dashes"',
    },
  ],
  [
    'x/\u00a0',
    {
      summary: 'Invalid provider type',
      detail:
        'Invalid provider type "\\u00a0" in source "x/\\u00a0": must contain only letters, digits, and dashes, and may not use leading or trailing dashes"',
    },
  ],
  [
    'x/aa\u200c',
    {
      summary: 'Invalid provider type',
      detail:
        'Invalid provider type "aa\\u200c" in source "x/aa\\u200c": must contain only letters, digits, and dashes, and may not use leading or trailing dashes"',
    },
  ],
  [
    'ab\u200cc.com/x/y',
    {
      summary: 'Invalid provider source hostname',
      detail:
        'Invalid provider source hostname namespace "" in source "ab\\u200cc.com/x/y": idna: invalid label "ab\\u200cc""',
    },
  ],
  ['x/﨎', { addr: 'registry.terraform.io/x/﨎' }],
  ['x/𐌰', { addr: 'registry.terraform.io/x/𐌰' }],
  [
    'XN---.com/a/b',
    {
      summary: 'Invalid provider source hostname',
      detail: 'Invalid provider source hostname namespace "" in source "XN---.com/a/b": idna: invalid label "-""',
    },
  ],
  [
    'XN--A.com/a/b',
    {
      summary: 'Invalid provider source hostname',
      detail: 'Invalid provider source hostname namespace "" in source "XN--A.com/a/b": idna: invalid label "\\u0080""',
    },
  ],
  ['XN--AB-.com/a/b', { addr: 'ab.com/a/b' }],
  [
    'a.XN--ZZZZZZZZZZZZZZZZZZZZ/a/b',
    {
      summary: 'Invalid provider source hostname',
      detail:
        'Invalid provider source hostname namespace "" in source "a.XN--ZZZZZZZZZZZZZZZZZZZZ/a/b": idna: invalid label "zzzzzzzzzzzzzzzzzzzz""',
    },
  ],
  ['XN--BCHER-KVA.example/a/b', { addr: 'bücher.example/a/b' }],
  ['Xn--caf-dma.com/a/b', { addr: 'café.com/a/b' }],
  [
    'XN--CAF-DMA--X.com/a/b',
    {
      summary: 'Invalid provider source hostname',
      detail:
        'Invalid provider source hostname namespace "" in source "XN--CAF-DMA--X.com/a/b": idna: invalid label "caf-dma--x""',
    },
  ],
];

describe('parseProviderSource (terraform flavor), as observed from terraform v1.11.4', () => {
  it.each(TERRAFORM_OBSERVED)('%j', (source, expected) => {
    expect(outcome(source, 'terraform')).toEqual(expected);
  });
});

describe('parseProviderSource (tofu flavor)', () => {
  it.each<[string, Expected]>([
    // item 5: default host and implied namespace
    ['aws', { addr: 'registry.opentofu.org/hashicorp/aws' }],
    ['HashiCorp/AWS', { addr: 'registry.opentofu.org/hashicorp/aws' }],
    ['registry.opentofu.org:443/hashicorp/aws', { addr: 'registry.opentofu.org/hashicorp/aws' }],
    ['registry.terraform.io/hashicorp/aws', { addr: 'registry.terraform.io/hashicorp/aws' }],
    // item 2/4: IDN
    ['ÉXAMPLE.com/Ñame/Fóo', { addr: 'éxample.com/ñame/fóo' }],
    // item 7: legacy namespace only on the flavor's default host
    ['-/foo', { addr: 'registry.opentofu.org/-/foo' }],
    [
      'registry.terraform.io/-/foo',
      {
        summary: 'Invalid provider namespace',
        detail: 'The legacy provider namespace "-" can be used only with hostname registry.opentofu.org.',
      },
    ],
    // item 6: OpenTofu checks both prefixes
    [
      'x/opentofu-provider-aws',
      {
        summary: 'Invalid provider type',
        detail:
          'Provider source "x/opentofu-provider-aws" has a type with the prefix "opentofu-provider-", which isn\'t valid. ' +
          'Although that prefix is sometimes used in the names of version control repositories for OpenTofu providers, ' +
          'provider source strings should not include it.\n\nDid you mean "x/aws"?',
      },
    ],
    [
      'example.com/x/opentofu-foo',
      {
        summary: 'Invalid provider type',
        detail:
          'Provider source "example.com/x/opentofu-foo" has a type with the prefix "opentofu-", which isn\'t allowed because ' +
          'it would be redundant to name an OpenTofu provider with that prefix. If you are the author of this provider, ' +
          'rename it to not include the prefix.',
      },
    ],
    [
      'x/terraform-foo',
      {
        summary: 'Invalid provider type',
        detail:
          'Provider source "registry.opentofu.org/x/terraform-foo" has a type with the prefix "terraform-", which isn\'t allowed ' +
          'because it would be redundant to name a Terraform provider with that prefix. If you are the author of this provider, ' +
          'rename it to not include the prefix.',
      },
    ],
    [
      'x/terraform-provider-aws',
      {
        summary: 'Invalid provider type',
        detail:
          'Provider source "x/terraform-provider-aws" has a type with the prefix "terraform-provider-", which isn\'t valid. ' +
          'Although that prefix is often used in the names of version control repositories for Terraform providers, ' +
          'provider source strings should not include it.\n\nDid you mean "x/aws"?',
      },
    ],
    // a one-part source skips the prefix checks (as terraform does)
    ['opentofu-provider-aws', { addr: 'registry.opentofu.org/hashicorp/opentofu-provider-aws' }],
    // item 8 quirks are flavor-independent
    [
      'example.com/ac_me/foo',
      {
        summary: 'Invalid provider namespace',
        detail:
          'Invalid provider namespace "" in source "example.com/ac_me/foo": must contain only letters, digits, and dashes, ' +
          'and may not use leading or trailing dashes"',
      },
    ],
    [
      'xn--caf-dma.example/a/b',
      {
        summary: 'Invalid provider source hostname',
        detail:
          'Invalid provider source hostname namespace "" in source "xn--caf-dma.example/a/b": hostname label "xn--caf-dma" ' +
          'specified in punycode format; service hostnames must be given in unicode"',
      },
    ],
  ])('%j', (source, expected) => {
    expect(outcome(source, 'tofu')).toEqual(expected);
  });
});

describe('ProviderAddress', () => {
  it('keeps the comparison (punycode) host and shows the display (Unicode) host', () => {
    const a = parseProviderSource('Café.Example:08443/Ñame/Fóo', 'tofu');
    expect(a.hostname).toBe('xn--caf-dma.example:8443');
    expect(a.displayHostname).toBe('café.example:8443');
    expect(a.namespace).toBe('ñame');
    expect(a.type).toBe('fóo');
    expect(a.toString()).toBe('café.example:8443/ñame/fóo');
    expect(a.forDisplay('tofu')).toBe('café.example:8443/ñame/fóo');
    expect(a.toComparisonString()).toBe('xn--caf-dma.example:8443/ñame/fóo');
  });

  it.each<[string, Flavor, string]>([
    ['hashicorp/aws', 'tofu', 'hashicorp/aws'],
    ['hashicorp/aws', 'terraform', 'hashicorp/aws'],
    ['registry.terraform.io/hashicorp/aws', 'tofu', 'registry.terraform.io/hashicorp/aws'],
    ['example.com/a/b', 'terraform', 'example.com/a/b'],
  ])('forDisplay(%j, %s) omits only the default host, as Go Provider.ForDisplay', (source, flavor, short) => {
    const a = parseProviderSource(source, flavor);
    expect(a.forDisplay(flavor)).toBe(short);
    expect(a.toShortString(flavor)).toBe(short); // the deprecated old name
    expect(a.toString()).toBe(`${a.displayHostname}/${a.namespace}/${a.type}`);
  });

  it.each<[string, boolean, boolean, boolean]>([
    // source, builtin (any flavor), builtin (terraform), builtin (tofu)
    ['terraform.io/builtin/terraform', true, true, true],
    ['opentofu.org/builtin/terraform', true, false, true],
    ['terraform.io/hashicorp/terraform', false, false, false],
    ['example.com/builtin/x', false, false, false],
  ])('isBuiltIn %s', (source, any, tf, tofu) => {
    const a = parseProviderSource(source, 'terraform');
    expect(a.isBuiltIn()).toBe(any);
    expect(a.isBuiltIn('terraform')).toBe(tf);
    expect(a.isBuiltIn('tofu')).toBe(tofu);
  });

  it('isLegacy follows the flavor of the default host', () => {
    const tofu = parseProviderSource('-/foo', 'tofu');
    const tf = parseProviderSource('-/foo', 'terraform');
    expect(tofu.isLegacy()).toBe(true);
    expect(tofu.isLegacy('tofu')).toBe(true);
    expect(tofu.isLegacy('terraform')).toBe(false);
    expect(tf.isLegacy('terraform')).toBe(true);
    expect(parseProviderSource('hashicorp/foo', 'tofu').isLegacy()).toBe(false);
  });

  it('equals compares the normalised parts', () => {
    const a = parseProviderSource('Example.COM:443/HashiCorp/AWS', 'tofu');
    const b = parseProviderSource('example.com/hashicorp/aws', 'terraform');
    expect(a.equals(b)).toBe(true);
    expect(a.equals(parseProviderSource('example.com/hashicorp/awss', 'tofu'))).toBe(false);
  });

  it('sorts component by component, by bytes (docs/reference.md items 10, 133)', () => {
    const addrs = [
      'registry.example.test/acme-labs/beta',
      'registry.example.test/acme/gamma',
      'bücher.example/a/a',
      'registry.example.test/acme/alpha',
      'a.example/z/z',
      'registry.example.test/Zeta/a',
    ].map((s) => parseProviderSource(s, 'tofu'));
    expect(sortProviders(addrs).map(String)).toEqual([
      'a.example/z/z',
      'registry.example.test/acme/alpha',
      'registry.example.test/acme/gamma',
      'registry.example.test/acme-labs/beta',
      'registry.example.test/zeta/a',
      // compared by the punycode host "xn--bcher-kva.example", which sorts after "r"
      'bücher.example/a/a',
    ]);
  });

  it('sorts Unicode namespaces by UTF-8 bytes, not UTF-16 code units', () => {
    const bmp = parseProviderSource('example.com/\u{fa0e}/x', 'tofu'); // U+FA0E, one UTF-16 unit 0xFA0E
    const astral = parseProviderSource('example.com/\u{10330}/x', 'tofu'); // U+10330, UTF-16 0xD800 0xDF30
    expect('\u{fa0e}' > '\u{10330}').toBe(true); // JS string order says the opposite of Go
    expect(ProviderAddress.compare(bmp, astral)).toBeLessThan(0);
    expect(ProviderAddress.compare(astral, bmp)).toBeGreaterThan(0);
    expect(ProviderAddress.compare(bmp, bmp)).toBe(0);
    expect(sortProviders([astral, bmp])).toEqual([bmp, astral]);
  });
});

describe('parseProviderPart', () => {
  it.each<[string, string]>([
    ['AWS', 'aws'],
    ['Ñame', 'ñame'],
    ['google-beta', 'google-beta'],
    ['ß', 'ß'], // non-transitional: ß is kept
    ['ＡＢ', 'ab'], // width mapping
    ['a\u00adb', 'ab'], // soft hyphen is ignored
    ['a\u3002b', 'a.b'], // quirk kept from Go: only ASCII "." is refused before mapping
  ])('%j → %j', (given, want) => {
    expect(parseProviderPart(given)).toBe(want);
    expect(parseProviderPart(want.includes('.') ? 'x' : want)).toBe(want.includes('.') ? 'x' : want); // idempotent
  });

  it.each<[string, string]>([
    ['', 'must have at least one character'],
    ['a.b', 'dots are not allowed'],
    ['a--b', 'cannot use multiple consecutive dashes'],
    ['xn--abc', 'cannot use multiple consecutive dashes'],
    ['-a', 'must contain only letters, digits, and dashes, and may not use leading or trailing dashes'],
    ['a-', 'must contain only letters, digits, and dashes, and may not use leading or trailing dashes'],
    ['a_b', 'must contain only letters, digits, and dashes, and may not use leading or trailing dashes'],
    ['a b', 'must contain only letters, digits, and dashes, and may not use leading or trailing dashes'],
  ])('%j fails: %s', (given, message) => {
    expect(() => parseProviderPart(given)).toThrow(message);
    try {
      parseProviderPart(given);
    } catch (err) {
      expect((err as ProvkitError).code).toBe(ErrorCode.INVALID_PROVIDER_SOURCE);
    }
  });
});

describe('other constructors', () => {
  it('impliedProviderForUnqualifiedType maps "terraform" to the built-in provider (item 9)', () => {
    expect(impliedProviderForUnqualifiedType('terraform', 'tofu').toString()).toBe('terraform.io/builtin/terraform');
    expect(impliedProviderForUnqualifiedType('terraform', 'terraform').isBuiltIn()).toBe(true);
    expect(impliedProviderForUnqualifiedType('AWS', 'tofu').toString()).toBe('registry.opentofu.org/hashicorp/aws');
    expect(impliedProviderForUnqualifiedType('aws', 'terraform').toString()).toBe(
      'registry.terraform.io/hashicorp/aws',
    );
  });

  it('newProviderAddress normalises each part as a filesystem mirror scan does', () => {
    const a = newProviderAddress('Café.example', 'Acme', 'Foo');
    expect(a.hostname).toBe(hostnameForComparison('café.example'));
    expect(a.toString()).toBe('café.example/acme/foo');
    expect(() => newProviderAddress('xn--caf-dma.example', 'a', 'b')).toThrow('specified in punycode format');
    expect(() => newProviderAddress('example.com', '-', 'b')).toThrow(ProvkitError);
    expect(() => newProviderAddress('example.com', 'a', 'b.c')).toThrow('dots are not allowed');
  });

  it('tryParseProviderSource returns the error instead of throwing', () => {
    const bad = tryParseProviderSource('a/b/c/d', 'tofu');
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.error.summary).toBe('Invalid provider source string');
    const good = tryParseProviderSource('a/b', 'tofu');
    expect(good.ok && good.address.toString()).toBe('registry.opentofu.org/a/b');
  });
});
