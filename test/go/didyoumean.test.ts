// The one "Did you mean" rule (src/go/didyoumean.ts): the reference's for
// what it reports (HCL and configuration diagnostics), provkit's for words
// typed on its command line (flags, commands, platforms, template variables).
import { describe, expect, it } from 'vitest';

import { nameSuggestion } from '../../src/go/index.js';

const LOCK = ['platform', 'recursive', 'check', 'fs-mirror', 'net-mirror', 'oci-mirror', 'all-platforms', 'json'];
const VERIFY = ['recursive', 'mirror', 'platform', 'json'];

describe('nameSuggestion, the typed rule (command-line words)', () => {
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
    // a swap is one edit: it beats a candidate two edits away that comes first
    ['abcd', ['abxy', 'bacd'], 'bacd'],
  ] as const)('%s among %j → %s', (name, names, expected) => {
    expect(nameSuggestion(name, names, 'typed')).toBe(expected);
  });
});

describe('nameSuggestion, the reference rule (didyoumean.NameSuggestion)', () => {
  it.each([
    // the first candidate within a Levenshtein distance below 3, not the closest
    ['fo', ['if', 'for', 'else'], 'if'],
    ['ture', ['false', 'true', 'null'], 'true'],
    ['versoin', ['version', 'constraints', 'hashes'], 'version'],
    // a swap is two edits
    ['hsahes', ['hashes'], 'hashes'],
    ['hsahse', ['hashes'], undefined],
    // counted in runes: one substitution
    ['tr😀e', ['true'], 'true'],
    ['providers', ['provider'], 'provider'],
    ['x'.repeat(100), ['true'], undefined],
  ] as const)('%s among %j → %s', (name, names, expected) => {
    expect(nameSuggestion(name, names)).toBe(expected);
  });
});
