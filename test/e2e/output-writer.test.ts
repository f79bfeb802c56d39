/**
 * bin/output.js: stdout and stderr written with write(2) when they are a
 * pipe, a socket or a file, Node's streams otherwise. Each case runs
 * bin/provkit.js as a child process with its stdout as users give it:
 *
 * - a pipe another process left non-blocking and full: the writer meets
 *   EAGAIN, hands over to Node's stream, and everything still arrives whole
 *   and in order once the reader reads;
 * - a file on a full disk (a tmpfs, as root): "cannot write to standard
 *   output", exit 1;
 * - a regular file: the same bytes as on a socket pair (Node's `spawn`
 *   pipes, which every other e2e test reads).
 *
 * The shell's `|` (a pipe whose reader goes away: exit 141) is in
 * test/e2e/diagnostics.test.ts.
 */
import { execFileSync, spawn } from 'node:child_process';
import {
  closeSync,
  constants,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { BIN, runCli } from '../support/e2e.js';

let dir: string;
const env = { HOME: '/nonexistent', TF_CLI_CONFIG_FILE: '/dev/null' };

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'provkit-output-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** The help text as a run with its stdout on a socket pair (Node's spawn) prints it. */
async function helpText(): Promise<string> {
  const r = await runCli(['--help'], { cwd: dir, env });
  expect(r.code).toBe(0);
  expect(r.stdout).toContain('Usage: provkit');
  return r.stdout;
}

/** Reads `fd` (non-blocking) until end of file, waiting while the pipe is empty. */
async function readAll(fd: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  const buf = Buffer.alloc(64 * 1024);
  for (;;) {
    let n: number;
    try {
      n = readSync(fd, buf, 0, buf.length, null);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err;
      await new Promise((r) => setTimeout(r, 10));
      continue;
    }
    if (n === 0) return Buffer.concat(chunks);
    chunks.push(Buffer.from(buf.subarray(0, n)));
  }
}

describe('stdout written directly (bin/output.js)', () => {
  it('a full pipe left non-blocking by another process: the output waits for the reader, whole and in order', async () => {
    const expected = await helpText();
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    // Both ends non-blocking, on one open file description the child inherits.
    const rfd = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const wfd = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
    // Fill the pipe: the child's first write meets EAGAIN.
    const filler = Buffer.alloc(4096, 'x');
    let filled = 0;
    for (;;) {
      try {
        filled += writeSync(wfd, filler);
      } catch (err) {
        expect((err as NodeJS.ErrnoException).code).toBe('EAGAIN');
        break;
      }
    }
    const child = spawn(process.execPath, [BIN, '--help'], {
      cwd: dir,
      env: { PATH: process.env['PATH'] ?? '', ...env },
      stdio: ['ignore', wfd, 'pipe'],
    });
    closeSync(wfd);
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    // Let it run into the full pipe before anything is read.
    await new Promise((r) => setTimeout(r, 300));
    const got = await readAll(rfd);
    closeSync(rfd);
    expect(await exited).toBe(0);
    expect(stderr).toBe('');
    expect(got.length).toBe(filled + Buffer.byteLength(expected));
    expect(got.subarray(0, filled).every((b) => b === 0x78)).toBe(true);
    expect(got.subarray(filled).toString()).toBe(expected);
  }, 30_000);

  it('stdout redirected to a regular file: the same bytes as on a socket pair', async () => {
    const expected = await helpText();
    const file = join(dir, 'help.txt');
    const fd = openSync(file, 'w');
    const child = spawn(process.execPath, [BIN, '--help'], {
      cwd: dir,
      env: { PATH: process.env['PATH'] ?? '', ...env },
      stdio: ['ignore', fd, 'ignore'],
    });
    closeSync(fd);
    expect(await new Promise((resolve) => child.on('close', resolve))).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe(expected);
  });

  it('stdout on a full disk: "cannot write to standard output", exit 1', async (ctx) => {
    const mnt = join(dir, 'full');
    mkdirSync(mnt);
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4k', 'tmpfs', mnt], { stdio: 'pipe' });
    } catch (err) {
      ctx.skip(`a full disk needs a tmpfs as root: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
      return;
    }
    try {
      // Fill the tmpfs, then give the child a file on it as stdout.
      try {
        execFileSync('dd', ['if=/dev/zero', `of=${join(mnt, 'fill')}`, 'bs=4k', 'count=16'], { stdio: 'ignore' });
      } catch {
        // dd stops at ENOSPC: the disk is full, which is the point.
      }
      const fd = openSync(join(mnt, 'out.txt'), 'w');
      let stderr = '';
      const child = spawn(process.execPath, [BIN, '--help'], {
        cwd: dir,
        env: { PATH: process.env['PATH'] ?? '', ...env },
        stdio: ['ignore', fd, 'pipe'],
      });
      closeSync(fd);
      child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
      const code = await new Promise((resolve) => child.on('close', resolve));
      expect(code).toBe(1);
      expect(stderr).toBe('Error: cannot write to standard output: no space left on device\n');
    } finally {
      execFileSync('umount', [mnt], { stdio: 'ignore' });
    }
  });
});
