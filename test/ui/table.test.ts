import { describe, expect, it } from 'vitest';

import { fittedLines, tableLines } from '../../src/ui/table.js';

const COLUMNS = [
  { title: 'PLATFORM', head: true },
  { title: 'HASH' },
  { title: 'VERDICT', head: true },
  { title: 'WHO', label: 'by' },
];
const ROWS = [
  { cells: ['linux_amd64', `zh:${'a'.repeat(64)}`, 'ok', 'signed by key AAAAAAAAAAAAAAAA, expires never'] },
  {
    cells: ['darwin_arm64', 'h1:short=', 'FAIL', 'nobody'],
    notes: ['HASH_UNVOUCHED: no source vouches for this hash'],
  },
];

describe('a table fitted to the output', () => {
  it('no terminal: aligned columns, one line per row, however wide', () => {
    expect(tableLines(COLUMNS, ROWS, 2, undefined)).toEqual([
      `  PLATFORM      HASH${' '.repeat(65)}VERDICT  WHO`,
      `  linux_amd64   zh:${'a'.repeat(64)}  ok       signed by key AAAAAAAAAAAAAAAA, expires never`,
      `  darwin_arm64  h1:short=${' '.repeat(60)}FAIL     nobody`,
      '    HASH_UNVOUCHED: no source vouches for this hash',
    ]);
  });

  it('a terminal too narrow: a block per row, head cells first, long cells wrapped at spaces, a hash never split', () => {
    const lines = tableLines(COLUMNS, ROWS, 2, 40);
    expect(lines).toEqual([
      '  linux_amd64  ok',
      `    zh:${'a'.repeat(64)}`,
      '    by signed by key AAAAAAAAAAAAAAAA,',
      '      expires never',
      '  darwin_arm64  FAIL',
      '    h1:short=',
      '    by nobody',
      '    HASH_UNVOUCHED: no source vouches',
      '      for this hash',
    ]);
    // Only the unbreakable hash is wider than the line.
    expect(lines.filter((l) => l.length > 39)).toEqual([`    zh:${'a'.repeat(64)}`]);
  });

  it('escapes what came from outside before it is laid out', () => {
    expect(tableLines([{ title: 'A' }], [{ cells: ['x\u001b[2Jy'] }], 0, undefined)).toEqual(['A', 'x\\x1b[2Jy']);
    expect(fittedLines('  a\u001bb c d e f', 8)).toEqual(['  a\\x1bb', '    c d', '    e f']);
  });
});
