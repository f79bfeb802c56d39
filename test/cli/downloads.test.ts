// -downloads=N and PROVKIT_DOWNLOADS (src/cli/downloads.ts): the flag wins,
// then the variable, else no count (the library adapts it, up to 8);
// out-of-range values are usage errors that say where they came from.
import { describe, expect, it } from 'vitest';

import { ErrorCode, ProvkitError } from '../../src/errors.js';
import { DOWNLOADS_FLAG, downloadsHelp, downloadsOption } from '../../src/cli/downloads.js';
import { parseFlags } from '../../src/cli/flags.js';

const option = (args: string[], env: Record<string, string> = {}): number | undefined =>
  downloadsOption(parseFlags(args, { json: 'bool', ...DOWNLOADS_FLAG }), env).networkConcurrency;

const failure = (f: () => unknown): ProvkitError => {
  try {
    f();
  } catch (err) {
    if (err instanceof ProvkitError) return err;
    throw err;
  }
  throw new Error('expected a failure');
};

describe('downloads at once: -downloads, PROVKIT_DOWNLOADS, else adaptive', () => {
  it('the flag, else the variable, else none given (the library adapts it)', () => {
    expect(downloadsOption(parseFlags([], DOWNLOADS_FLAG), {})).toEqual({});
    expect(option([], { PROVKIT_DOWNLOADS: '3' })).toBe(3);
    expect(option([], { PROVKIT_DOWNLOADS: ' 16 ' })).toBe(16);
    expect(option([], { PROVKIT_DOWNLOADS: '' })).toBeUndefined();
    expect(option(['-downloads=2'], { PROVKIT_DOWNLOADS: '16' })).toBe(2);
    expect(option(['-downloads', '64'])).toBe(64);
  });

  it('out of range or not a number: a flag error for the flag, a usage error naming the variable', () => {
    for (const v of ['0', '65']) {
      const err = failure(() => option([`-downloads=${v}`]));
      expect(err.code).toBe(ErrorCode.INVALID_FLAGS);
      expect(err.message).toBe(`invalid value "${v}" for flag -downloads: a number from 1 to 64 is required`);
    }
    expect(failure(() => option(['-downloads=x'])).code).toBe(ErrorCode.INVALID_FLAGS);
    for (const v of ['0', '65', 'eight', '-1', '2.5']) {
      const err = failure(() => option([], { PROVKIT_DOWNLOADS: v }));
      expect(err.code).toBe(ErrorCode.USAGE);
      expect(err.message).toBe(
        `invalid PROVKIT_DOWNLOADS ${JSON.stringify(v)}: a number of downloads at once from 1 to 64 is required`,
      );
    }
  });

  it('the help lines align with the command’s other options', () => {
    expect(downloadsHelp(24).split('\n')).toEqual([
      '  -downloads=N          Archives downloaded at once, 1 to 64 (default',
      "                        PROVKIT_DOWNLOADS, else the cores' share, 8",
      '                        once the link is what holds the streams).',
    ]);
  });
});
