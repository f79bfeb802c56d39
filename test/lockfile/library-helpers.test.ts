// What a library caller gets from the root export for a lock file's bytes:
// the flavor that wrote the file.
import { describe, expect, it } from 'vitest';

import {
  Locks,
  lockFileFlavor,
  parseConstraints,
  parseHash,
  parseProviderSource,
  parseVersion,
  newProviderLock,
  serializeLocks,
} from '../../src/index.js';

describe('lockFileFlavor', () => {
  const locks = new Locks([
    newProviderLock(
      parseProviderSource('hashicorp/aws', 'terraform'),
      parseVersion('5.0.0'),
      parseConstraints('~> 5.0'),
      [parseHash('h1:abc=')],
    ),
  ]);

  it('tells the flavor from the header each tool writes, as bytes or text', () => {
    expect(lockFileFlavor(serializeLocks(locks, 'terraform'))).toBe('terraform');
    expect(lockFileFlavor(serializeLocks(locks, 'tofu'))).toBe('tofu');
    expect(lockFileFlavor(serializeLocks(locks, 'tofu').toString('utf8'))).toBe('tofu');
  });

  it('without a header: terraform when every provider is from registry.terraform.io, else nothing', () => {
    const body = 'provider "registry.terraform.io/hashicorp/aws" {\n  version = "5.0.0"\n}\n';
    expect(lockFileFlavor(body)).toBe('terraform');
    expect(lockFileFlavor(body.replace('registry.terraform.io', 'registry.opentofu.org'))).toBeUndefined();
    expect(lockFileFlavor('')).toBeUndefined();
  });
});
