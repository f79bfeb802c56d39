import { describe, expect, it } from 'vitest';

import { ErrorCode, ProvkitError } from '../../src/errors.js';
import {
  DEFAULT_FLAVOR,
  defaultRegistryHost,
  flavorInfo,
  FLAVORS,
  isFlavor,
  parseFlavor,
  resolveFlavor,
} from '../../src/addresses/index.js';
import type { Flavor } from '../../src/addresses/index.js';

describe('flavor', () => {
  it.each<[Flavor, string, string, string, string]>([
    [
      'tofu',
      'OpenTofu',
      'tofu',
      'registry.opentofu.org',
      'https://opentofu.org/docs/language/files/dependency-lock/#checksum-verification',
    ],
    [
      'terraform',
      'Terraform',
      'terraform',
      'registry.terraform.io',
      'https://developer.hashicorp.com/terraform/language/files/dependency-lock#checksum-verification',
    ],
  ])('%s', (flavor, productName, command, defaultHost, docsChecksumURL) => {
    expect(parseFlavor(flavor)).toBe(flavor);
    expect(isFlavor(flavor)).toBe(true);
    expect(defaultRegistryHost(flavor)).toBe(defaultHost);
    expect(flavorInfo(flavor)).toEqual({ flavor, productName, command, defaultHost, docsChecksumURL });
    expect(Object.isFrozen(flavorInfo(flavor))).toBe(true);
  });

  it.each(['', 'Tofu', 'opentofu', 'tf', ' terraform'])('parseFlavor(%j) fails with INVALID_FLAVOR', (bad) => {
    expect(isFlavor(bad)).toBe(false);
    try {
      parseFlavor(bad);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ProvkitError);
      const e = err as ProvkitError;
      expect(e.code).toBe(ErrorCode.INVALID_FLAVOR);
      expect(e.message).toBe(`invalid flavor ${JSON.stringify(bad)}: must be one of "tofu", "terraform"`);
      expect(e.found).toBe(bad);
    }
  });

  it.each<[string | undefined, Record<string, string | undefined>, Flavor]>([
    [undefined, {}, 'tofu'],
    [undefined, { PROVKIT_FLAVOR: 'terraform' }, 'terraform'],
    [undefined, { PROVKIT_FLAVOR: '' }, 'tofu'],
    ['tofu', { PROVKIT_FLAVOR: 'terraform' }, 'tofu'],
    ['terraform', {}, 'terraform'],
  ])('resolveFlavor(%j, %j) = %s', (flag, env, want) => {
    expect(resolveFlavor(flag, env)).toBe(want);
  });

  it('names the variable when PROVKIT_FLAVOR is invalid, and refuses an empty flag', () => {
    expect(() => resolveFlavor(undefined, { PROVKIT_FLAVOR: 'opentofu' })).toThrow(
      'PROVKIT_FLAVOR: invalid flavor "opentofu": must be one of "tofu", "terraform"',
    );
    expect(() => resolveFlavor('', {})).toThrow('invalid flavor ""');
  });

  it('lists the flavors and the default', () => {
    expect(FLAVORS).toEqual(['tofu', 'terraform']);
    expect(DEFAULT_FLAVOR).toBe('tofu');
  });
});
