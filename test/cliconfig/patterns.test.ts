// Include/exclude patterns of provider_installation methods (docs/reference.md §4.4 item 71).
import { describe, expect, it } from 'vitest';

import { parseProviderSource } from '../../src/addresses/index.js';
import { matches, parseProviderPattern, parseProviderPatterns } from '../../src/cliconfig/index.js';

const p = (s: string, flavor: 'tofu' | 'terraform' = 'terraform') => parseProviderSource(s, flavor);

describe('parseProviderPattern', () => {
  it('normalises the parts and applies the default host', () => {
    expect(parseProviderPattern('HashiCorp/AWS', 'terraform')).toMatchObject({
      hostname: 'registry.terraform.io',
      namespace: 'hashicorp',
      type: 'aws',
    });
    expect(parseProviderPattern('hashicorp/*', 'tofu')).toMatchObject({
      hostname: 'registry.opentofu.org',
      namespace: 'hashicorp',
      type: '*',
    });
    expect(parseProviderPattern('Café.Example:443/*/*', 'tofu')).toMatchObject({
      hostname: 'xn--caf-dma.example',
      namespace: '*',
      type: '*',
    });
    expect(parseProviderPattern('*/*/*', 'tofu')).toMatchObject({ hostname: '*', namespace: '*', type: '*' });
  });

  it.each([
    ['a/b/c/d', 'invalid provider matching pattern "a/b/c/d": must have either two or three slash-separated segments'],
    ['aws', 'invalid provider matching pattern "aws": must have either two or three slash-separated segments'],
    // terraform 1.11.4 prints this one for `exclude = ["*/foo"]`:
    [
      '*/foo',
      'invalid provider matching pattern "*/foo": namespace can be a wildcard only if the provider type is also a wildcard',
    ],
    [
      '*/hashicorp/*',
      'invalid provider matching pattern "*/hashicorp/*": hostname can be a wildcard only if both namespace and provider type are also wildcards',
    ],
    [
      'hashicorp/a.b',
      'invalid provider type "a.b" in provider matching pattern "hashicorp/a.b": must either be the wildcard * or a provider type name',
    ],
    // Sic: the reference quotes the type segment in the namespace error.
    [
      'ha.sh/aws',
      'invalid registry namespace "aws" in provider matching pattern "ha.sh/aws": must either be the wildcard * or a literal namespace',
    ],
    [
      'bad..host/a/b',
      'invalid hostname in provider matching pattern "bad..host/a/b": hostname contains empty label (two consecutive periods)',
    ],
  ])('refuses %s', (text, message) => {
    expect(() => parseProviderPattern(text, 'terraform')).toThrow(message);
  });
});

describe('matches', () => {
  const method = (include: string[], exclude: string[] = []) => ({
    include: parseProviderPatterns(include, 'terraform'),
    exclude: parseProviderPatterns(exclude, 'terraform'),
  });

  it('handles everything with no patterns', () => {
    expect(matches(method([]), p('hashicorp/aws'))).toBe(true);
  });

  it('needs an include match when there are includes, and exclusions win', () => {
    const m = method(
      ['registry.terraform.io/hashicorp/*', 'example.com/*/*'],
      ['registry.terraform.io/hashicorp/google-beta'],
    );
    expect(matches(m, p('hashicorp/aws'))).toBe(true);
    expect(matches(m, p('example.com/acme/x'))).toBe(true);
    expect(matches(m, p('hashicorp/google-beta'))).toBe(false);
    expect(matches(m, p('integrations/github'))).toBe(false);
  });

  it('compares hostnames in comparison form', () => {
    const m = method(['café.example/*/*']);
    expect(matches(m, p('xn--caf-dma.example/acme/x'.replace('xn--caf-dma', 'café')))).toBe(true);
    expect(matches(method(['localhost:8443/*/*']), p('localhost:8443/acme/x'))).toBe(true);
    expect(matches(method(['localhost/*/*']), p('localhost:8443/acme/x'))).toBe(false);
  });

  it('matches any host with */*/*', () => {
    expect(matches(method(['*/*/*']), p('a.example/b/c'))).toBe(true);
  });
});
