// parseFlags carrying the flag suggested for an undefined one (src/go/didyoumean.ts,
// test/go/didyoumean.test.ts) as the error's `expected` ("Did you mean -mirror?").
import { describe, expect, expectTypeOf, it } from 'vitest';

import { parseFlags, unexpectedArguments } from '../../src/cli/flags.js';
import { ErrorCode, ProvkitError } from '../../src/errors.js';

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

describe('parseFlags values', () => {
  it('are typed by the spec: absent flags are undefined, repeatable ones collect every value in order', () => {
    const flags = parseFlags(['-platform=a', 'pos', '--platform', 'b', '-lock-file=false', '-n', '3', '-m=x'], {
      platform: 'strings',
      'lock-file': 'bool',
      json: 'bool',
      n: 'int',
      m: 'string',
    });
    const platforms: readonly string[] | undefined = flags.values.platform;
    const lockFile: boolean | undefined = flags.values['lock-file'];
    const n: number | undefined = flags.values.n;
    expect({ platforms, lockFile, json: flags.values.json, n, m: flags.values.m }).toEqual({
      platforms: ['a', 'b'],
      lockFile: false,
      json: undefined,
      n: 3,
      m: 'x',
    });
    expect(flags.positionals).toEqual(['pos']);
    // Exactly these types (checked by `npm run typecheck`): no `any`, no map of unknowns reaches a command.
    expectTypeOf(flags.values.platform).toEqualTypeOf<readonly string[] | undefined>();
    expectTypeOf(flags.values['lock-file']).toEqualTypeOf<boolean | undefined>();
    expectTypeOf(flags.values.n).toEqualTypeOf<number | undefined>();
    expectTypeOf(flags.values.m).toEqualTypeOf<string | undefined>();
    expectTypeOf(flags.positionals).toEqualTypeOf<readonly string[]>();
    // @ts-expect-error a flag the spec does not define is not a key of the values
    void flags.values.other;
  });

  it('an inherited property name is not a flag', () => {
    expect(() => parseFlags(['-constructor'], { json: 'bool' })).toThrow('flag provided but not defined: -constructor');
  });
});

describe('unexpectedArguments (audit, keys, verify take none)', () => {
  it('is nothing when no argument was given', () => {
    expect(unexpectedArguments('audit', [])).toBeUndefined();
  });

  it('is one USAGE diagnostic naming the command and every argument given', () => {
    expect(unexpectedArguments('keys', ['extra', 'args'])).toEqual({
      severity: 'error',
      summary: 'Unexpected arguments',
      detail: 'keys takes no arguments, not extra args.',
      code: ErrorCode.USAGE,
    });
  });
});
