// Counted nouns in provkit's own summaries (src/ui/words.ts).
import { describe, expect, it } from 'vitest';

import { count } from '../../src/ui/words.js';

describe('count', () => {
  it.each([
    [0, 'package', undefined, '0 packages'],
    [1, 'package', undefined, '1 package'],
    [2, 'root module', undefined, '2 root modules'],
    [1, 'hash', 'hashes', '1 hash'],
    [3, 'hash', 'hashes', '3 hashes'],
  ] as const)('%i %s → %s', (n, noun, plural, expected) => {
    expect(count(n, noun, plural)).toBe(expected);
  });
});
