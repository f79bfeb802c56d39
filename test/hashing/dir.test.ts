// h1: of unpacked package directories (HashDir), with the reference's symlink
// rules (docs/reference.md §2.3 item 25, §2.4 vector V6).
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { hashPackageDir, isProvkitError } from '../../src/index.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'provkit-dir-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const sha = (b: Buffer | string): string => createHash('sha256').update(b).digest('hex');
const htop = (files: Array<[Buffer, string]>): string =>
  `h1:${createHash('sha256')
    .update(
      Buffer.concat(
        files
          .sort((a, b) => Buffer.compare(a[0], b[0]))
          .map(([n, c]) => Buffer.concat([Buffer.from(`${sha(c)}  `), n, Buffer.from('\n')])),
      ),
    )
    .digest('base64')}`;

describe('hashPackageDir', () => {
  it('follows file symlinks and ignores empty directories (V6)', async () => {
    await writeFile(join(dir, 'terraform-provider-baz'), '#!/bin/sh\n');
    await mkdir(join(dir, 'sub'));
    await writeFile(join(dir, 'sub/file'), 'data\n');
    await symlink('sub/file', join(dir, 'link-to-file'));
    await mkdir(join(dir, 'empty'));
    expect((await hashPackageDir(dir)).text).toBe('h1:5XUebrnQ3tASVnuCrlIh/bp/WTbfzD2B2jdyD8c/BR0=');
  });

  it('uses raw name bytes and sorts by bytes', async () => {
    const latin = Buffer.from([0x63, 0x61, 0x66, 0xe9]);
    await writeFile(Buffer.concat([Buffer.from(`${dir}/`), latin]), 'latin\n');
    await writeFile(join(dir, 'B'), 'b');
    await writeFile(join(dir, 'a'), 'a');
    expect((await hashPackageDir(dir)).text).toBe(
      htop([
        [latin, 'latin\n'],
        [Buffer.from('B'), 'b'],
        [Buffer.from('a'), 'a'],
      ]),
    );
  });

  it('hashes the directory a symlinked root points to', async () => {
    await mkdir(join(dir, 'real'));
    await writeFile(join(dir, 'real/f'), 'x');
    await symlink('real', join(dir, 'alias'));
    expect((await hashPackageDir(join(dir, 'alias'))).text).toBe(htop([[Buffer.from('f'), 'x']]));
  });

  it.each([
    [
      'a symlink to a directory',
      'DIR_SYMLINK_TO_DIRECTORY',
      async () => {
        await mkdir(join(dir, 'd'));
        await symlink('d', join(dir, 'link'));
      },
    ],
    [
      'a dangling symlink',
      'DIR_DANGLING_SYMLINK',
      async () => {
        await symlink('nowhere', join(dir, 'link'));
      },
    ],
  ] as const)('refuses %s', async (_what, code, setup) => {
    await writeFile(join(dir, 'terraform-provider-x'), 'x');
    await setup();
    const err = await hashPackageDir(dir).catch((e: unknown) => e);
    expect(isProvkitError(err, code)).toBe(true);
    expect((err as Error).message).toContain('link');
  });

  it('refuses a path that is not a directory, naming it', async () => {
    await writeFile(join(dir, 'f'), 'x');
    const err = await hashPackageDir(join(dir, 'f')).catch((e: unknown) => e);
    expect(isProvkitError(err, 'NOT_A_DIRECTORY')).toBe(true);
    expect((err as Error).message).toBe(`${join(dir, 'f')} is not a directory`);
  });

  it('refuses a missing path', async () => {
    const err = await hashPackageDir(join(dir, 'missing')).catch((e: unknown) => e);
    expect(isProvkitError(err, 'NOT_FOUND')).toBe(true);
  });

  it('refuses a file name with a newline', async () => {
    await writeFile(join(dir, 'bad\nname'), 'x');
    const err = await hashPackageDir(dir).catch((e: unknown) => e);
    expect(isProvkitError(err, 'HASH_NEWLINE_IN_NAME')).toBe(true);
  });
});
