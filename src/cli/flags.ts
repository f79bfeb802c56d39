/**
 * Command-line flags in the reference's style: `-name=value`, `-name value`,
 * `--name=value` and `--name value` are all accepted; boolean flags take no
 * value (or `=true`/`=false`); repeatable flags collect every occurrence;
 * `--` ends the flags. Unlike Go's flag package, flags may follow positional
 * arguments (`provkit hash a.zip -json`).
 */
import { ErrorCode, ProvkitError } from '../errors.js';

export type FlagKind = 'bool' | 'string' | 'strings' | 'int';
export type FlagSpec = Readonly<Record<string, FlagKind>>;

export interface ParsedFlags {
  readonly bools: ReadonlyMap<string, boolean>;
  readonly strings: ReadonlyMap<string, string>;
  readonly lists: ReadonlyMap<string, readonly string[]>;
  readonly ints: ReadonlyMap<string, number>;
  readonly positionals: readonly string[];
}

function usage(message: string): ProvkitError {
  return new ProvkitError(ErrorCode.USAGE, message);
}

/**
 * Parses `args` against `spec`. Unknown flags are a USAGE error unless
 * `passUnknown` is set, in which case they are returned as positionals (the
 * global-flag pass uses that to leave subcommand flags alone).
 */
export function parseFlags(args: readonly string[], spec: FlagSpec, passUnknown = false): ParsedFlags {
  const bools = new Map<string, boolean>();
  const strings = new Map<string, string>();
  const lists = new Map<string, string[]>();
  const ints = new Map<string, number>();
  const positionals: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') {
      positionals.push(...args.slice(i + 1));
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      positionals.push(arg);
      continue;
    }
    const body = arg.replace(/^--?/, '');
    const eq = body.indexOf('=');
    const name = eq >= 0 ? body.slice(0, eq) : body;
    let value = eq >= 0 ? body.slice(eq + 1) : undefined;
    const kind = spec[name];
    if (!kind) {
      if (passUnknown) {
        positionals.push(arg);
        continue;
      }
      throw usage(`flag provided but not defined: -${name}`);
    }
    if (kind === 'bool') {
      if (value === undefined || value === 'true' || value === '1') bools.set(name, true);
      else if (value === 'false' || value === '0') bools.set(name, false);
      else throw usage(`invalid boolean value ${JSON.stringify(value)} for -${name}`);
      continue;
    }
    if (value === undefined) {
      const next = args[i + 1];
      if (next === undefined) throw usage(`flag needs an argument: -${name}`);
      value = next;
      i += 1;
    }
    if (kind === 'string') strings.set(name, value);
    else if (kind === 'strings') lists.set(name, [...(lists.get(name) ?? []), value]);
    else {
      if (!/^\d+$/.test(value)) throw usage(`invalid value ${JSON.stringify(value)} for -${name}: a non-negative integer is required`);
      ints.set(name, Number(value));
    }
  }
  return { bools, strings, lists, ints, positionals };
}
