// Help text fits 80 columns, as terraform's and tofu's does (src/ui/help.ts):
// every command's -help, run as a user runs it, and the reflow rules.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

import { fitHelp } from '../../src/ui/help.js';

const BIN = join(fileURLToPath(new URL('../..', import.meta.url)), 'bin/provkit.js');

describe('help fits a terminal of 80 columns', () => {
  it.each(['', 'lock', 'mirror', 'install', 'hash', 'verify', 'bundle', 'serve'])(
    'provkit %s -help: no line longer than 80 columns',
    (command) => {
      const r = spawnSync(process.execPath, [BIN, ...(command === '' ? [] : [command]), '-help'], { encoding: 'utf8' });
      expect(r.status).toBe(0);
      expect(r.stdout).toContain('Usage: provkit');
      const long = r.stdout.split('\n').filter((l) => [...l].length > 80);
      expect(long).toEqual([]);
    },
  );

  it('reflows an entry with a long line under its description column; leaves entries that fit as written', () => {
    const text = [
      '  -short       Fits.',
      '  -long=VALUE  A description that is far too long for one line of eighty columns,',
      '               continued here.',
      '  -next        Also fits,',
      '               as written.',
    ].join('\n');
    expect(fitHelp(text)).toBe(
      [
        '  -short       Fits.',
        '  -long=VALUE  A description that is far too long for one line of eighty',
        '               columns, continued here.',
        '  -next        Also fits,',
        '               as written.',
      ].join('\n'),
    );
  });

  it('wraps a long plain line at its own indentation; keeps a word longer than the room whole', () => {
    expect(fitHelp(`  ${'word '.repeat(20).trim()}`, 40)).toBe(
      '  word word word word word word word\n  word word word word word word word\n  word word word word word word',
    );
    expect(fitHelp(`  NAME  ${'x'.repeat(50)}`, 40)).toBe(`  NAME  ${'x'.repeat(50)}`);
  });
});
