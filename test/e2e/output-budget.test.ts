/**
 * bin/output.js's choice of writer, in this process with real file
 * descriptors: a pipe takes PIPE_BUDGET bytes directly and then hands over
 * to Node's stream for good (a blocking write to a full pipe would stop the
 * whole process); a regular file is written directly whatever its size; a
 * device (/dev/null) gets Node's stream from the start.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readFileSync, readSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

interface Writer {
  write(text: string): boolean;
}
interface OutputModule {
  outputFor: (fd: number, stream: () => FakeStream) => Writer;
  flushed: (writer: Writer) => Promise<void>;
  PIPE_BUDGET: number;
}

/** Stands in for process.stdout: records what it is given. */
class FakeStream {
  readonly got: string[] = [];
  created = 0;
  readonly write = (chunk: string | Buffer, done?: () => void): boolean => {
    if (chunk.length > 0) this.got.push(chunk.toString());
    done?.();
    return true;
  };
  readonly on = (): this => this;
  readonly off = (): this => this;
}

const { outputFor, flushed, PIPE_BUDGET } = createRequire(import.meta.url)(
  fileURLToPath(new URL('../../bin/output.js', import.meta.url)),
) as OutputModule;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'provkit-output-budget-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** What is in the pipe now (its read end is non-blocking). */
function drain(fd: number): string {
  const buf = Buffer.alloc(256 * 1024);
  let out = '';
  for (;;) {
    try {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) return out;
      out += buf.toString('utf8', 0, n);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EAGAIN') return out;
      throw err;
    }
  }
}

describe('bin/output.js', () => {
  it('a pipe: the first PIPE_BUDGET bytes directly, then everything through Node’s stream, in order', async () => {
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const rfd = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const wfd = openSync(fifo, constants.O_WRONLY);
    try {
      const stream = new FakeStream();
      const w = outputFor(wfd, () => {
        stream.created += 1;
        return stream;
      });
      const a = 'a'.repeat(PIPE_BUDGET - 100);
      const b = 'b'.repeat(200);
      const c = 'c'.repeat(10);
      expect(w.write(a)).toBe(true);
      expect(stream.created).toBe(0);
      expect(drain(rfd)).toBe(a);
      // Over the budget: this write and every later one go to the stream.
      w.write(b);
      w.write(c);
      expect(stream.created).toBe(1);
      expect(stream.got.join('')).toBe(b + c);
      expect(drain(rfd)).toBe('');
      await flushed(w);
    } finally {
      closeSync(wfd);
      closeSync(rfd);
    }
  });

  it('a regular file: written directly whatever the size; flushed() settles at once', async () => {
    const file = join(dir, 'out.txt');
    const fd = openSync(file, 'w');
    try {
      const stream = new FakeStream();
      const w = outputFor(fd, () => {
        stream.created += 1;
        return stream;
      });
      const big = 'x'.repeat(4 * PIPE_BUDGET);
      expect(w.write(big)).toBe(true);
      expect(w.write('\nend\n')).toBe(true);
      await flushed(w);
      expect(stream.created).toBe(0);
      expect(readFileSync(file, 'utf8')).toBe(`${big}\nend\n`);
    } finally {
      closeSync(fd);
    }
  });

  it('a device (/dev/null): Node’s stream from the start', () => {
    const fd = openSync('/dev/null', 'w');
    try {
      const stream = new FakeStream();
      const w = outputFor(fd, () => {
        stream.created += 1;
        return stream;
      });
      expect(stream.created).toBe(1);
      w.write('to the stream');
      expect(stream.got).toEqual(['to the stream']);
    } finally {
      closeSync(fd);
    }
  });
});
