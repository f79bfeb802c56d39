/**
 * Command-line flags in the reference's style: `-name=value`, `-name value`,
 * `--name=value` and `--name value` are all accepted; boolean flags take no
 * value (or `=true`/`=false`); repeatable flags collect every occurrence;
 * `--` ends the flags. Unlike Go's flag package, flags may follow positional
 * arguments (`provkit hash a.zip -json`).
 */
import { type Diagnostic, ErrorCode, ProvkitError } from '../errors.js';
import { nameSuggestion } from '../go/index.js';

export type FlagKind = 'bool' | 'string' | 'strings' | 'int';
export type FlagSpec = Readonly<Record<string, FlagKind>>;

/** The value of a flag of kind `K`: a repeatable (`strings`) flag's every value, in order. */
export type FlagValue<K extends FlagKind> = K extends 'bool'
  ? boolean
  : K extends 'string'
    ? string
    : K extends 'strings'
      ? readonly string[]
      : number;

/** What {@link parseFlags} found, typed by the spec it was given. */
export interface ParsedFlags<S extends FlagSpec> {
  /** Each flag given, by name (absent when it was not given: `-lock-file=false` and no `-lock-file` differ). */
  readonly values: { readonly [N in keyof S]?: FlagValue<S[N]> };
  readonly positionals: readonly string[];
}

/**
 * A flag error, worded as Go's `flag` package words it (the reference's
 * flags are Go flags: `flag provided but not defined: -x`, `flag needs an
 * argument: -x`, `invalid boolean value "v" for -x: parse error`); the
 * command line layer reports it as the reference does ("Failed to parse
 * command-line flags", src/cli/main.ts). `expected` holds the flag the
 * user probably meant, when one is close.
 */
function usage(message: string, found: string, suggestion?: string): ProvkitError {
  return new ProvkitError(ErrorCode.INVALID_FLAGS, message, {
    found,
    ...(suggestion === undefined ? {} : { expected: `-${suggestion}` }),
  });
}

/**
 * Parses `args` against `spec` (give it `as const`-like literal kinds: the
 * result is typed by them). Unknown flags are an INVALID_FLAGS error, with
 * the defined flag they were probably meant to be (`nameSuggestion`'s
 * `typed` rule), unless `passUnknown` is set, in which case they are
 * returned as positionals (the global-flag pass uses that to leave
 * subcommand flags alone).
 */
export function parseFlags<const S extends FlagSpec>(
  args: readonly string[],
  spec: S,
  passUnknown = false,
): ParsedFlags<S> {
  const values: Record<string, boolean | string | string[] | number> = {};
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
    const kind = Object.hasOwn(spec, name) ? spec[name] : undefined;
    if (!kind) {
      if (passUnknown) {
        positionals.push(arg);
        continue;
      }
      throw usage(
        `flag provided but not defined: -${name}`,
        `-${name}`,
        nameSuggestion(name, Object.keys(spec), 'typed'),
      );
    }
    if (kind === 'bool') {
      if (value === undefined || value === 'true' || value === '1') values[name] = true;
      else if (value === 'false' || value === '0') values[name] = false;
      else throw usage(`invalid boolean value ${JSON.stringify(value)} for -${name}: parse error`, `-${name}`);
      continue;
    }
    if (value === undefined) {
      const next = args[i + 1];
      if (next === undefined) throw usage(`flag needs an argument: -${name}`, `-${name}`);
      value = next;
      i += 1;
    }
    if (kind === 'string') values[name] = value;
    else if (kind === 'strings') values[name] = [...((values[name] as string[] | undefined) ?? []), value];
    else {
      if (!/^\d+$/.test(value))
        throw usage(
          `invalid value ${JSON.stringify(value)} for flag -${name}: a non-negative integer is required`,
          `-${name}`,
        );
      values[name] = Number(value);
    }
  }
  return { values: values as ParsedFlags<S>['values'], positionals };
}

/**
 * The usage error of a command that takes no arguments (`audit`, `keys`,
 * `verify`): one diagnostic naming what was given, or undefined when
 * nothing was.
 */
export function unexpectedArguments(command: string, positionals: readonly string[]): Diagnostic | undefined {
  if (positionals.length === 0) return undefined;
  return {
    severity: 'error',
    summary: 'Unexpected arguments',
    detail: `${command} takes no arguments, not ${positionals.join(' ')}.`,
    code: ErrorCode.USAGE,
  };
}
