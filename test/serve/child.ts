// Starts `provkit serve` as a child process and reads the URL from its first
// stdout line (with -json: the first after the `version` message, which
// every -json stream starts with); `stop()` sends SIGTERM and waits for the exit
// and the end of its output.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const bin = fileURLToPath(new URL('../../bin/provkit.js', import.meta.url));

export interface ServeChild {
  readonly url: string;
  /** The server process's id (for /proc/PID/status). */
  readonly pid: number;
  readonly firstLine: string;
  stdout(): string;
  stderr(): string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * `prefix`: a command that runs the server (it must exec it, keeping the
 * process id), e.g. `['prlimit', '--fsize=65536:unlimited', '--']`.
 */
export function startServe(
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
  prefix: readonly string[] = [],
): Promise<ServeChild> {
  const [command, ...rest] = [...prefix, process.execPath, bin, 'serve', ...args];
  const child = spawn(command!, rest, {
    cwd,
    env: { ...process.env, PROVKIT_FLAVOR: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  // 'close', not 'exit': Node may emit 'exit' before the child's last stdout and
  // stderr bytes are read, and a test that reads stderr() after stop() would
  // miss the line the server wrote just before its signal (seen once in CI:
  // serve-hardening's "Error serving … changed while it was sent").
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`provkit serve did not start: ${err}`));
    }, 10_000);
    const firstOf = (text: string): string | undefined =>
      text
        .split('\n')
        .slice(0, -1)
        .find((l) => !l.includes('"type":"version"'));
    child.stdout.on('data', (c: Buffer) => {
      const had = firstOf(out) !== undefined;
      out += c.toString();
      const firstLine = firstOf(out);
      if (!had && firstLine !== undefined) {
        clearTimeout(timer);
        const url = /(https?:\/\/[^\s"]+\/)/.exec(firstLine)?.[1] ?? '';
        resolve({
          url,
          pid: child.pid ?? 0,
          firstLine,
          stdout: () => out,
          stderr: () => err,
          stop: async (signal: NodeJS.Signals = 'SIGTERM') => {
            child.kill(signal);
            return exited;
          },
        });
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      if (firstOf(out) === undefined) reject(new Error(`provkit serve exited with ${String(code)}: ${err}`));
    });
  });
}
