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

/**
 * A flag error, worded as Go's `flag` package words it (the reference's
 * flags are Go flags: `flag provided but not defined: -x`, `flag needs an
 * argument: -x`, `invalid boolean value "v" for -x: parse error`); the
 * command line layer reports it as the reference does ("Failed to parse
 * command-line flags", src/cli/usage.ts). `expected` holds the flag the
 * user probably meant, when one is close.
 */
function usage(message: string, found: string, suggestion?: string): ProvkitError {
  return new ProvkitError(ErrorCode.INVALID_FLAGS, message, {
    found,
    ...(suggestion === undefined ? {} : { expected: `-${suggestion}` }),
  });
}

/**
 * The defined flag closest to `name` (edit distance at most 2, `name` being
 * a prefix of it, or one being the other with a qualifier before a `-`), for
 * "Did you mean -platform?". Ties go to the first in `names`. The qualifier
 * rule is for one command's flag given to another: `verify -fs-mirror=DIR`
 * (verify's is `-mirror`), `lock -mirror=DIR` (lock's are `-fs-mirror`,
 * `-net-mirror` and `-oci-mirror`).
 */
export function closestFlag(name: string, names: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = 3;
  for (const candidate of names) {
    // A qualifier counts as 2: a typo of another flag (`-platforms`) is the likelier meaning.
    const qualified = name.endsWith(`-${candidate}`) || candidate.endsWith(`-${name}`);
    const d =
      candidate.startsWith(name) && name.length >= 3 ? 1 : Math.min(editDistance(name, candidate), qualified ? 2 : 3);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2 || a.length > 64 || b.length > 64) return 3;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      // A swap of two neighbours (`platfrom`) counts as one edit, as users type it.
      const swap = i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1] ? (prev[j - 2] ?? 0) + 1 : Infinity;
      cur.push(Math.min((prev[j] ?? 0) + 1, (cur[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost, swap));
    }
    prev = cur;
  }
  return prev[b.length] ?? 0;
}

/**
 * Parses `args` against `spec`. Unknown flags are an INVALID_FLAGS error unless
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
      throw usage(`flag provided but not defined: -${name}`, `-${name}`, closestFlag(name, Object.keys(spec)));
    }
    if (kind === 'bool') {
      if (value === undefined || value === 'true' || value === '1') bools.set(name, true);
      else if (value === 'false' || value === '0') bools.set(name, false);
      else throw usage(`invalid boolean value ${JSON.stringify(value)} for -${name}: parse error`, `-${name}`);
      continue;
    }
    if (value === undefined) {
      const next = args[i + 1];
      if (next === undefined) throw usage(`flag needs an argument: -${name}`, `-${name}`);
      value = next;
      i += 1;
    }
    if (kind === 'string') strings.set(name, value);
    else if (kind === 'strings') lists.set(name, [...(lists.get(name) ?? []), value]);
    else {
      if (!/^\d+$/.test(value))
        throw usage(
          `invalid value ${JSON.stringify(value)} for flag -${name}: a non-negative integer is required`,
          `-${name}`,
        );
      ints.set(name, Number(value));
    }
  }
  return { bools, strings, lists, ints, positionals };
}
