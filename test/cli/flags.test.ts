// The flag suggested for an undefined one (src/cli/flags.ts closestFlag), and
// parseFlags carrying it as the error's `expected` ("Did you mean -mirror?").
import { describe, expect, it } from 'vitest';

import { closestFlag, parseFlags } from '../../src/cli/flags.js';
import { ErrorCode, ProvkitError } from '../../src/errors.js';

const LOCK = ['platform', 'recursive', 'check', 'fs-mirror', 'net-mirror', 'oci-mirror', 'all-platforms', 'json'];
const VERIFY = ['recursive', 'mirror', 'platform', 'json'];

describe('closestFlag', () => {
  it.each([
    // typos: an edit or a swap of neighbours
    ['platfrom', LOCK, 'platform'],
    ['platforms', LOCK, 'platform'],
    ['recusive', LOCK, 'recursive'],
    // a prefix of a defined flag
    ['plat', LOCK, 'platform'],
    // one command's flag given to another
    ['fs-mirror', VERIFY, 'mirror'],
    ['oci-mirror', VERIFY, 'mirror'],
    ['mirror', LOCK, 'fs-mirror'],
    // nothing close
    ['upgrade', LOCK, undefined],
    ['x', VERIFY, undefined],
  ] as const)('-%s among %j → %s', (name, names, expected) => {
    expect(closestFlag(name, names)).toBe(expected);
  });
});

describe('parseFlags', () => {
  it('an undefined flag: INVALID_FLAGS naming it, with the suggestion as `expected`', () => {
    let caught: unknown;
    try {
      parseFlags(['-fs-mirror=/srv/mirror'], { mirror: 'string', platform: 'strings' });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ProvkitError);
    expect(caught).toMatchObject({
      code: ErrorCode.INVALID_FLAGS,
      message: 'flag provided but not defined: -fs-mirror',
      found: '-fs-mirror',
      expected: '-mirror',
    });
  });
});
