// The one way provkit reads a file it was pointed at (src/fs/read.ts):
// regular files only, bounded, interruptible.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { ErrorCode, ProvkitError, systemErrorCode } from '../../src/errors.js';
import { readRefusal, readRegularFile, readRegularFileSync } from '../../src/fs/read.js';

const dir = mkdtempSync(join(tmpdir(), 'provkit-read-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const code = async (p: Promise<unknown>): Promise<string | undefined> =>
  p.then(
    () => undefined,
    (err: unknown) => (err instanceof ProvkitError ? err.code : systemErrorCode(err)),
  );

describe('readRegularFile', () => {
  it('reads a regular file, also through a symbolic link, in chunks beyond the first', async () => {
    const big = Buffer.alloc(3 * 1024 * 1024 + 17, 7);
    writeFileSync(join(dir, 'big.tf'), big);
    symlinkSync(join(dir, 'big.tf'), join(dir, 'link.tf'));
    expect((await readRegularFile(join(dir, 'link.tf'))).equals(big)).toBe(true);
    expect(readRegularFileSync(join(dir, 'big.tf')).equals(big)).toBe(true);
  });

  it('refuses a FIFO at once (no writer needed), a device and a directory, saying what each is', async () => {
    execFileSync('mkfifo', [join(dir, 'fifo.tf')]);
    symlinkSync('/dev/zero', join(dir, 'zero.tf'));
    for (const [name, kind] of [
      ['fifo.tf', 'a FIFO (named pipe)'],
      ['zero.tf', 'a character device'],
      ['.', 'a directory'],
    ] as const) {
      const err = await readRegularFile(join(dir, name)).catch((e: unknown) => e);
      expect((err as ProvkitError).code).toBe(ErrorCode.NOT_REGULAR_FILE);
      expect(readRefusal(err)).toBe(`it is ${kind}, not a regular file`);
      expect((err as ProvkitError).file).toBe(join(dir, name));
      expect(() => readRegularFileSync(join(dir, name))).toThrow(`${kind}, not a regular file`);
    }
  });

  it('refuses a file over the limit before reading it; keeps ENOENT for a file that is not there', async () => {
    writeFileSync(join(dir, 'eleven'), 'x'.repeat(11));
    expect(await code(readRegularFile(join(dir, 'eleven'), { maxBytes: 10 }))).toBe(ErrorCode.FILE_TOO_LARGE);
    expect((await readRegularFile(join(dir, 'eleven'), { maxBytes: 11 })).length).toBe(11);
    expect(await code(readRegularFile(join(dir, 'absent')))).toBe('ENOENT');
  });

  it('stops when its signal aborts', async () => {
    const ac = new AbortController();
    ac.abort(new Error('SIGTERM'));
    expect(await code(readRegularFile(join(dir, 'eleven'), { signal: ac.signal }))).toBe(ErrorCode.ABORTED);
  });
});
