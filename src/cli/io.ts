/** What a command may touch of the outside world (injected, so tests run commands in-process). */
export interface CliIO {
  readonly stdout: { write(text: string): unknown; isTTY?: boolean };
  readonly stderr: { write(text: string): unknown; isTTY?: boolean };
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
}

/** Settings every command receives from the global flags. */
export interface GlobalOptions {
  readonly flavor: 'tofu' | 'terraform';
  /** The working directory after `-chdir`. */
  readonly cwd: string;
}
