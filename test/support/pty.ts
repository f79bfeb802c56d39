/**
 * Running provkit in a real terminal: a detached `tmux` session of its own
 * (its own server socket, `-L`), a fixed size, and the screen captured
 * (`capture-pane -p`) while the command runs and after it ended, as a
 * person would see it (issue 14). The command runs with exactly the given
 * environment (`env -i`); the pane stays after it so the last screen can be
 * read, with `[exit N]` printed below the output.
 *
 * tmux must be installed (it is on the development machines and in CI).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { BIN } from './e2e.js';

const run = promisify(execFile);

export interface TerminalRun {
  /** The exit code, from the `[exit N]` line. */
  readonly code: number;
  /** Distinct screens seen while the command ran (trailing blank lines removed), in order, as shown. */
  readonly during: readonly string[];
  /** The same screens with wrapped lines joined (`capture-pane -J`). */
  readonly duringJoined: readonly string[];
  /** The screen after the command ended, without the `[exit N]` line, wrapped lines joined. */
  readonly after: string;
  readonly timedOut: boolean;
}

export interface TerminalOptions {
  readonly cwd: string;
  readonly env: Record<string, string>;
  readonly columns?: number;
  readonly rows?: number;
  /** Give up (and kill the session) after this long; default 60 s. */
  readonly timeoutMs?: number;
  /** Screen sampling period (default 100 ms). */
  readonly sampleMs?: number;
}

const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

let sessions = 0;

/** Runs `node bin/provkit.js ...args` in a terminal and returns what its screen showed. */
export async function runInTerminal(args: readonly string[], opts: TerminalOptions): Promise<TerminalRun> {
  const dir = mkdtempSync(join(opts.env['TMPDIR'] === undefined ? '/tmp' : join(opts.env['TMPDIR'], '..'), 'pty-'));
  const socket = `provkit-test-${process.pid}-${++sessions}`;
  const script = join(dir, 'run.sh');
  const env = Object.entries({ PATH: process.env['PATH'] ?? '', TERM: 'xterm-256color', ...opts.env })
    .map(([k, v]) => `${k}=${quote(v)}`)
    .join(' ');
  writeFileSync(
    script,
    `cd ${quote(opts.cwd)}\nenv -i ${env} ${quote(process.execPath)} ${quote(BIN)} ${args.map(quote).join(' ')}\necho "[exit $?]"\nsleep 600\n`,
  );
  const tmux = (...a: string[]): Promise<{ stdout: string }> => run('tmux', ['-L', socket, '-f', '/dev/null', ...a]);
  const screen = async (joined = false): Promise<string> =>
    (await tmux('capture-pane', '-p', ...(joined ? ['-J'] : []), '-t', 'main')).stdout
      .split('\n')
      .map((l) => l.trimEnd())
      .join('\n')
      .replace(/\n+$/, '');
  await tmux(
    'new-session',
    '-d',
    '-s',
    'main',
    '-x',
    String(opts.columns ?? 80),
    '-y',
    String(opts.rows ?? 30),
    `sh ${quote(script)}`,
  );
  const during: string[] = [];
  const duringJoined: string[] = [];
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  let last = '';
  let timedOut = false;
  try {
    for (;;) {
      const s = await screen();
      const m = /^\[exit (\d+)\]$/m.exec(s);
      if (m) {
        const j = await screen(true);
        const after = j.slice(0, j.search(/^\[exit \d+\]$/m)).replace(/\n+$/, '');
        return { code: Number(m[1]), during, duringJoined, after, timedOut };
      }
      if (s !== last && s !== '') {
        const j = await screen(true);
        // (Unless the command ended in between.)
        if (!/^\[exit \d+\]$/m.test(j)) {
          during.push(s);
          duringJoined.push(j);
        }
      }
      last = s;
      if (Date.now() > deadline) {
        timedOut = true;
        return { code: -1, during, duringJoined, after: s, timedOut };
      }

      await new Promise((r) => setTimeout(r, opts.sampleMs ?? 100));
    }
  } finally {
    await tmux('kill-server').catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}
