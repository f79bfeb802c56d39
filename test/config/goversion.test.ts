// The go-version constraint grammar the configuration decoder applies first,
// and go-version's Check used for module versions in the manifest.
import { describe, expect, it } from 'vitest';

import { isGoVersionConstraint } from '../../src/config/index.js';
import { goVersionConstraintCheck, goVersionString, parseGoVersion } from '../../src/config/goversion.js';

describe('isGoVersionConstraint (hashicorp/go-version NewConstraint)', () => {
  // Accepted by go-version; several are then refused by go-versions
  // ("Incorrect version constraint syntax", confirmed with terraform 1.11.4).
  it.each([
    '1.0',
    '~> 1.0',
    '>= 1.0.0, < 2',
    '>=  1.0',
    'v1.0',
    '1.0.0.1',
    '~> 1.0beta',
    ' = 1.2.3 ',
    '!=1.0.0-rc.1+meta',
    '>= 1.0 , <2',
  ])('accepts %j', (s) => {
    expect(isGoVersionConstraint(s)).toBe(true);
  });

  // "This string does not use correct version constraint syntax." (confirmed with terraform 1.11.4)
  it.each(['', '1.0,', '=> 1.0', 'latest', '>= 1.0 < 2', '~>', '1.0.x', '99999999999999999999.0'])(
    'refuses %j',
    (s) => {
      expect(isGoVersionConstraint(s)).toBe(false);
    },
  );

  // A hang guard (no backtracking blow-up), not a speed assertion.
  it('finishes on long adversarial input', { timeout: 60_000 }, () => {
    const s = `1.0-${'a'.repeat(20_000)}!`;
    expect(isGoVersionConstraint(s)).toBe(false);
  });
});

describe('go-version versions and Check', () => {
  it('parses like NewVersion, with its error text', () => {
    const v = parseGoVersion('v1.2');
    expect(v.ok && goVersionString(v.version)).toBe('1.2.0');
    expect(parseGoVersion('x.y')).toEqual({ ok: false, error: 'Malformed version: x.y' });
  });

  const check = (c: string, v: string): boolean => {
    const p = parseGoVersion(v);
    if (!p.ok) throw new Error(p.error);
    return goVersionConstraintCheck(c, p.version);
  };

  it.each([
    ['0.1.0', '0.2.0', false],
    ['~> 1.2', '1.2.3', true],
    ['~> 1.2', '1.9.0', true],
    ['~> 1.2', '2.0.0', false],
    ['~> 1.2.0', '1.2.9', true],
    ['~> 1.2.0', '1.3.0', false],
    ['>= 1.0, < 2.0', '1.5.0', true],
    ['>= 1.0', '1.5.0-beta', false],
    ['>= 1.5.0-alpha', '1.5.0-beta', true],
    ['1.0', '1.0.0', true],
    ['!= 1.0.0', '1.0.0', false],
  ] as const)('%s with %s is %s', (c, v, want) => {
    expect(check(c, v)).toBe(want);
  });
});
