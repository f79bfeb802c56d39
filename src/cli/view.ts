/**
 * How a run shows itself: the view flags every command shares and the one
 * output session of a run.
 *
 * View flags, as OpenTofu reads them (opentofu/opentofu v1.12
 * internal/command/arguments/view.go `ParseView`, types.go `ViewOptions`):
 *
 * - `-no-color` is taken out of the arguments wherever it appears (before
 *   `--`), so every command accepts it, before or after its own flags;
 *   `NO_COLOR` set to anything but the empty string does the same
 *   (https://no-color.org). Colour is then never written; otherwise it is
 *   written only to a terminal (the renderers check their stream).
 * - `-json-into=FILE` (OpenTofu 1.12; `-json-into FILE` too): the command
 *   renders as it would without it (human lines on the terminal) and writes
 *   the `-json` stream into FILE as well, created or truncated with mode
 *   0600 (`OpenJSONIntoFile`); relative to the working directory after
 *   `-chdir`. With `-json` it is an error ("Invalid output format").
 *
 * The session holds the `-json` streams of the run, so that whatever
 * reports first (a command's renderer, a flag error, an interrupt, an
 * unexpected error in main) writes the `version` message, and it is written
 * once per stream.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { resolve } from 'node:path';

import { ErrorCode, ProvkitError, errorText } from '../errors.js';
import { JsonUI } from '../ui/json.js';
import type { Diagnostic, TextSink } from '../ui/human.js';
import { VERSION } from './version.js';

/** The view flags of one command line (see the module comment). */
export interface ViewFlags {
  /** `-no-color` was given. */
  readonly noColor: boolean;
  /** `-json-into=FILE`, as given. */
  readonly jsonInto: string | undefined;
  /** `-json` (or `-json=true`) is among the command's arguments. */
  readonly json: boolean;
}

/**
 * Takes `-no-color` (and, when `withJsonInto`, `-json-into`) out of `args`
 * and notes whether `-json` is there (the command parses it itself; it is
 * needed earlier, to report a flag error in JSON). Arguments after `--` are
 * left alone.
 *
 * @throws ProvkitError INVALID_FLAGS when `-json-into` has no value.
 */
export function extractViewFlags(args: readonly string[], withJsonInto: boolean): { view: ViewFlags; rest: string[] } {
  const rest: string[] = [];
  let noColor = false;
  let jsonInto: string | undefined;
  let json = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') {
      rest.push(...args.slice(i));
      break;
    }
    const flag = /^--?([a-z-]+)(?:=(.*))?$/s.exec(arg);
    const name = flag?.[1];
    const value = flag?.[2];
    if (name === 'no-color' && (value === undefined || value === 'true')) {
      noColor = true;
      continue;
    }
    if (name === 'json-into' && withJsonInto) {
      if (value === undefined) {
        const next = args[i + 1];
        if (next === undefined)
          throw new ProvkitError(ErrorCode.INVALID_FLAGS, 'flag needs an argument: -json-into', {
            found: '-json-into',
          });
        jsonInto = next;
        i += 1;
      } else jsonInto = value;
      continue;
    }
    if (name === 'json') json = value === undefined || value === 'true' || value === '1';
    rest.push(arg);
  }
  return { view: { noColor, jsonInto, json }, rest };
}

/** Colour is allowed unless `-no-color` was given or `NO_COLOR` is set (non-empty). */
export function colorAllowed(noColor: boolean, env: Readonly<Record<string, string | undefined>>): boolean {
  const v = env['NO_COLOR'];
  return !noColor && (v === undefined || v === '');
}

/** A `-json` stream: where it goes and its UI, whose version message was written. */
interface JsonStream {
  readonly ui: JsonUI;
  close(): void;
}

/**
 * The output of one run: `-json` on stdout or not, `-json-into`, colour.
 * See the module comment.
 */
export class OutputSession {
  private stdoutJson: JsonStream | undefined;
  private into: JsonStream | undefined;

  constructor(
    private readonly stdout: TextSink,
    /** `-json`: the run's stdout is the JSON stream. */
    readonly json: boolean,
    /** Colour allowed (see {@link colorAllowed}); renderers still write it to terminals only. */
    readonly color: boolean,
  ) {}

  /** The JSON stream on stdout (its version message written on first use); undefined without `-json`. */
  jsonUI(): JsonUI | undefined {
    if (!this.json) return undefined;
    if (!this.stdoutJson) {
      const ui = new JsonUI(this.stdout);
      ui.version(VERSION);
      this.stdoutJson = { ui, close: () => undefined };
    }
    return this.stdoutJson.ui;
  }

  /** The `-json-into` stream, when one was opened. */
  jsonIntoUI(): JsonUI | undefined {
    return this.into?.ui;
  }

  /** Every JSON stream of the run (stdout's, `-json-into`'s). */
  jsonUIs(): JsonUI[] {
    return [this.jsonUI(), this.jsonIntoUI()].filter((u): u is JsonUI => u !== undefined);
  }

  /**
   * Opens FILE for `-json-into` (created or truncated, mode 0600) and
   * writes the version message into it. Returns the reference's diagnostic
   * when it cannot be opened, or when `-json` was given too.
   */
  openJsonInto(file: string, cwd: string): Diagnostic | undefined {
    if (this.json) {
      return {
        severity: 'error',
        summary: 'Invalid output format',
        detail: 'The -json and -json-into arguments are mutually exclusive',
        code: ErrorCode.INVALID_FLAGS,
      };
    }
    const path = resolve(cwd, file);
    let fd: number;
    try {
      fd = openSync(path, 'w', 0o600);
    } catch (err) {
      return {
        severity: 'error',
        summary: 'Invalid argument',
        detail: `Unable to open the file ${JSON.stringify(file)} specified by -json-into for writing: ${errorText(err)}`,
        code: ErrorCode.IO,
      };
    }
    // Synchronous writes: the file holds the messages in the order they were made, complete at exit.
    const ui = new JsonUI({ write: (text: string) => writeSync(fd, text) });
    ui.version(VERSION);
    this.into = {
      ui,
      close: () => {
        try {
          closeSync(fd);
        } catch {
          // Already closed.
        }
      },
    };
    return undefined;
  }

  /** Closes the `-json-into` file. */
  close(): void {
    this.into?.close();
    this.into = undefined;
  }
}
