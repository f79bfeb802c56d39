// Lines of provkit's own fitted to a terminal (src/ui/wrap.ts `wrapHanging`)
// and `verify`'s problem lines (src/ui/human.ts `verifyProblemText`):
// wrapped at spaces to the terminal's width on a terminal, one line each
// anywhere else.
import { describe, expect, it } from 'vitest';

import { parsePlatform, parseProviderSource, parseVersion } from '../../src/addresses/index.js';
import { verifyProblemText } from '../../src/ui/human.js';
import { wrapHanging } from '../../src/ui/wrap.js';

const cols = (l: string): number => [...l].length;

describe('verify-wrap: wrapHanging breaks at spaces, with a hanging indent', () => {
  it.each([
    // [limit, indent, text, expected]
    ['fits: unchanged', 20, 2, 'one two three', 'one two three'],
    ['exact fit: a line of exactly the limit stays whole', 13, 2, 'one two three', 'one two three'],
    ['one over: the last word moves down, indented', 12, 2, 'one two three', 'one two\n  three'],
    ['continuation lines count their indent', 9, 2, 'aaaa bbbb cccc dddd', 'aaaa bbbb\n  cccc\n  dddd'],
    ['continuation exact fit (indent + words = limit)', 11, 2, 'aaaa bbbb cccc dddd', 'aaaa bbbb\n  cccc dddd'],
    ['indent 0', 9, 0, 'aaaa bbbb cccc dddd', 'aaaa bbbb\ncccc dddd'],
    ['indent 6 (verify -recursive)', 20, 6, '    p 1.0: aaaa bbbb cccc', '    p 1.0: aaaa bbbb\n      cccc'],
    ['the spaces at a break are dropped, others kept', 10, 2, 'aa   bb    cc  dd', 'aa   bb\n  cc  dd'],
    [
      'a word longer than the limit stays whole, on its own line',
      10,
      2,
      'see https://example.test/a/very/long/url now',
      'see\n  https://example.test/a/very/long/url\n  now',
    ],
    [
      'an over-long first word stays whole on the first line',
      10,
      2,
      'registry.example.test/acme/tools 0.3.0: x',
      'registry.example.test/acme/tools\n  0.3.0: x',
    ],
    [
      'a path is not split at its slashes or dashes',
      16,
      2,
      'in /tmp/a-b/c-d/e-f.zip here',
      'in\n  /tmp/a-b/c-d/e-f.zip\n  here',
    ],
    ['a word that fits only on a fresh line moves down whole', 12, 2, 'ab -platform=x_y', 'ab\n  -platform=x_y'],
    ['a newline starts an indented line', 40, 2, 'first\nsecond', 'first\n  second'],
    ['code points, not UTF-16 units, are counted', 5, 2, '€€€ €€€', '€€€\n  €€€'],
    ['a non-breaking space joins', 5, 2, 'ab\u00a0cd ef', 'ab\u00a0cd\n  ef'],
    ['limit 0: unchanged', 0, 2, 'aaaa bbbb cccc', 'aaaa bbbb cccc'],
    ['empty text', 10, 2, '', ''],
  ] as const)('%s (limit %i, indent %i)', (_name, limit, indent, text, expected) => {
    expect(wrapHanging(text, limit, indent)).toBe(expected);
  });

  it('loses no word and only breaks where the text has spaces', () => {
    const text =
      'registry.example.test/acme/tools 0.3.0 darwin_amd64: its h1: (h1:I6CsJB9yyYnIjLTNaMOdlhYy8i+fLDdv4M6hLu0Tb1A=) is not in the lock file: the lock does not cover darwin_amd64, or the package differs from the one locked (provkit lock -platform=darwin_amd64 records it)';
    for (let limit = 1; limit <= text.length + 1; limit += 1) {
      const lines = wrapHanging(text, limit, 2).split('\n');
      expect(lines.map((l, i) => (i === 0 ? l : l.slice(2))).join(' ')).toBe(text);
      for (const [i, l] of lines.entries()) {
        if (i > 0) expect(l.startsWith('  ') && l[2] !== ' ').toBe(true);
        // Longer than the limit only when it is one word.
        if (cols(l) > limit) expect(l.trim()).not.toContain(' ');
      }
    }
  });
});

describe('verify-wrap: verify problem lines', () => {
  const problem = {
    provider: parseProviderSource('registry.example.test/acme/tools', 'terraform'),
    version: parseVersion('0.3.0'),
    platform: parsePlatform('darwin_arm64'),
    message:
      'its h1: (h1:AwtkeE2jn41EsBoeR/OFvCVthbU51VGEt8hcTDa2eWQ=) is not in the lock file: the lock does not cover darwin_arm64',
  };
  const ONE_LINE =
    'registry.example.test/acme/tools 0.3.0 darwin_arm64: its h1: (h1:AwtkeE2jn41EsBoeR/OFvCVthbU51VGEt8hcTDa2eWQ=) is not in the lock file: the lock does not cover darwin_arm64\n';

  it('are one line each when the sink is not a terminal, whatever its columns', () => {
    expect(verifyProblemText(problem, { write: () => true })).toBe(ONE_LINE);
    expect(verifyProblemText(problem, { write: () => true, isTTY: false, columns: 40 })).toBe(ONE_LINE);
    expect(verifyProblemText(problem, { write: () => true, isTTY: true })).toBe(ONE_LINE);
    expect(verifyProblemText(problem, { write: () => true }, '    ')).toBe(`    ${ONE_LINE}`);
  });

  it('are wrapped to the width less one on a terminal, continuation lines indented 2 more than the first', () => {
    expect(verifyProblemText(problem, { write: () => true, isTTY: true, columns: 60 })).toBe(
      [
        // 59 columns, then 60 with the next word: it goes down.
        'registry.example.test/acme/tools 0.3.0 darwin_arm64: its',
        '  h1: (h1:AwtkeE2jn41EsBoeR/OFvCVthbU51VGEt8hcTDa2eWQ=) is',
        '  not in the lock file: the lock does not cover',
        '  darwin_arm64',
        '',
      ].join('\n'),
    );
    expect(verifyProblemText(problem, { write: () => true, isTTY: true, columns: 60 }, '    ')).toBe(
      [
        '    registry.example.test/acme/tools 0.3.0 darwin_arm64:',
        '      its h1:',
        '      (h1:AwtkeE2jn41EsBoeR/OFvCVthbU51VGEt8hcTDa2eWQ=) is',
        '      not in the lock file: the lock does not cover',
        '      darwin_arm64',
        '',
      ].join('\n'),
    );
  });
});
