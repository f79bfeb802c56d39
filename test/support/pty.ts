/**
 * Running provkit in a real terminal: a detached `tmux` session of its own
 * (its own server socket, `-L`), a fixed size, and the screen captured
 * (`capture-pane -p`) while the command runs and after it ended, as a
 * person would see it (docs/terminal.md). The command runs with exactly the
 * given environment (`env -i`); the pane stays after it so the last screen
 * can be read, with `[exit N]` printed below the output. A run can begin
 * below earlier output (a terminal in use: `prefill`), and be resized or
 * sent keys (Ctrl-C) when its screen first shows something (`steps`); the
 * whole scrollback is read after it (`history`).
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
  /** The same screen as shown (wrapped lines not joined). */
  readonly afterShown: string;
  /** The whole scrollback and the screen after the command ended (wrapped lines joined), without the `[exit N]` line. */
  readonly history: string;
  /** The index in `during` of the first screen seen after each step was done. */
  readonly stepAt: readonly number[];
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
  /** Lines of earlier output printed first (`earlier output N`), so that the run begins at the bottom of a full screen. */
  readonly prefill?: number;
  /** Done once each, in order, when a screen seen while the command runs first matches `when`. */
  readonly steps?: readonly TerminalStep[];
}

/** Something done to the terminal during a run: a resize (`columns`) or keys (`keys`, tmux send-keys names: `C-c`). */
export interface TerminalStep {
  readonly when: RegExp;
  readonly columns?: number;
  readonly keys?: string;
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
  // A trap with a command (not an ignore) is reset in the child: provkit gets Ctrl-C's SIGINT, the shell
  // goes on to print the exit status.
  writeFileSync(
    script,
    `trap 'true' INT\n${opts.prefill ? `i=1; while [ $i -le ${opts.prefill} ]; do echo "earlier output $i"; i=$((i+1)); done\n` : ''}` +
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
  const steps = [...(opts.steps ?? [])];
  const stepAt: number[] = [];
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
        const all = (await tmux('capture-pane', '-p', '-J', '-S', '-', '-t', 'main')).stdout
          .split('\n')
          .map((l) => l.trimEnd())
          .join('\n');
        const history = all.slice(0, all.search(/^\[exit \d+\]$/m)).replace(/\n+$/, '');
        const afterShown = s.slice(0, s.search(/^\[exit \d+\]$/m)).replace(/\n+$/, '');
        return { code: Number(m[1]), during, duringJoined, after, afterShown, history, stepAt, timedOut };
      }
      if (s !== last && s !== '') {
        const j = await screen(true);
        // (Unless the command ended in between.)
        if (!/^\[exit \d+\]$/m.test(j)) {
          during.push(s);
          duringJoined.push(j);
          const step = steps[0];
          if (step && step.when.test(s)) {
            steps.shift();
            if (step.columns !== undefined)
              await tmux('resize-window', '-t', 'main', '-x', String(step.columns), '-y', String(opts.rows ?? 30));
            if (step.keys !== undefined) await tmux('send-keys', '-t', 'main', step.keys);
            stepAt.push(during.length);
          }
        }
      }
      last = s;
      if (Date.now() > deadline) {
        timedOut = true;
        return { code: -1, during, duringJoined, after: s, afterShown: s, history: s, stepAt, timedOut };
      }

      await new Promise((r) => setTimeout(r, opts.sampleMs ?? 100));
    }
  } finally {
    await tmux('kill-server').catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}
