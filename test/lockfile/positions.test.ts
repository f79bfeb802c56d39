import { describe, expect, it } from 'vitest';

import { lockHashPositions } from '../../src/lockfile/index.js';

describe('where each hash of a lock file is written', () => {
  it('gives the line and column of every hash of every provider block, first occurrence', () => {
    const text = [
      '# This file is maintained automatically by "tofu init".',
      '',
      'provider "registry.opentofu.org/hashicorp/aws" {',
      '  version = "5.0.0"',
      '  hashes = [',
      '    "h1:aaa=",',
      '    "zh:bbb",',
      '    "h1:aaa=",',
      '  ]',
      '}',
      '',
      'provider "registry.opentofu.org/hashicorp/null" {',
      '  version = "3.0.0"',
      '  hashes  = ["h1:ccc="]',
      '}',
      '',
    ].join('\n');
    const p = lockHashPositions(text, '.terraform.lock.hcl');
    expect(Object.fromEntries(p.get('registry.opentofu.org/hashicorp/aws') ?? [])).toEqual({
      'h1:aaa=': { line: 6, column: 5 },
      'zh:bbb': { line: 7, column: 5 },
    });
    expect(Object.fromEntries(p.get('registry.opentofu.org/hashicorp/null') ?? [])).toEqual({
      'h1:ccc=': { line: 14, column: 14 },
    });
  });
});
