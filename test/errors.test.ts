// The one error-to-text rule (src/errors.ts `errorText`, `describeError`):
// real Node errors, made here, read as Go prints them, never as Node's
// `ENOENT: no such file or directory, lstat '/x'`.
import { lstat, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { request } from 'node:https';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { describeError, errorText, ProvkitError, ErrorCode, writeError } from '../src/errors.js';

const caught = async (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (err: unknown) => err,
  );

let dir: string;
let plain: Server;
let port: number;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'provkit-errors-'));
  plain = createServer((_q, s) => s.end('plain\n'));
  await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
  port = (plain.address() as { port: number }).port;
});
afterAll(async () => {
  plain.close();
  await rm(dir, { recursive: true, force: true });
});

describe('errorText: what an error says to a person', () => {
  it('a file-system error: OP PATH: meaning', async () => {
    const err = await caught(lstat(join(dir, 'missing')));
    expect(errorText(err)).toBe(`lstat ${join(dir, 'missing')}: no such file or directory`);
    expect(describeError(err)).toBe(`cannot read ${join(dir, 'missing')}: no such file or directory`);
  });

  it('a refused connection: connect ADDRESS: connection refused', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const p = (closed.address() as { port: number }).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const err = await new Promise<unknown>((resolve) => connect(p, '127.0.0.1').on('error', resolve));
    expect(errorText(err)).toBe(`connect 127.0.0.1:${p}: connection refused`);
  });

  it('a TLS handshake answered in plain text: said so, without OpenSSL text', async () => {
    const err = await new Promise<unknown>((resolve) =>
      request({ host: '127.0.0.1', port, method: 'GET', path: '/' }).on('error', resolve).end(),
    );
    const text = errorText(err);
    expect(text).toBe('the server answered in plain text, not TLS (it does not speak https on this port)');
    expect(describeError(err)).toBe(text);
  });

  it('a ProvkitError is its message; anything else is an internal error at the top', () => {
    expect(errorText(new ProvkitError(ErrorCode.IO, 'cannot write x: disk full'))).toBe('cannot write x: disk full');
    expect(errorText(new TypeError('oops'))).toBe('oops');
    expect(describeError(new TypeError('oops'))).toMatch(/^internal error: oops; please report/);
  });

  it('writeError names the directory, never the file inside it, with a hint for a read-only or unwritable one', () => {
    const sys = Object.assign(new Error("EROFS: read-only file system, open '/t/..provkit-mirror.lock.ab12.new'"), {
      code: 'EROFS',
      syscall: 'open',
      path: '/t/..provkit-mirror.lock.ab12.new',
    });
    const e = writeError(
      new ProvkitError(ErrorCode.IO, 'cannot create the mutex file', { cause: sys }),
      'cannot mirror into',
      '/t',
      'Cannot write into the mirror directory',
    );
    expect(e.message).toBe('cannot mirror into /t: read-only file system');
    expect(e.detail).toBe('Cannot mirror into /t: read-only file system.');
    expect(e.summary).toBe('Cannot write into the mirror directory');
    expect(e.hint).toMatch(/read-only file system/);
  });
});
