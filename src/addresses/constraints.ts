/**
 * Version constraints as the reference tools parse, match, merge and print
 * them (docs/reference.md §1.3 items 15–18): go-versions `ParseRubyStyleMulti` and
 * `MeetingConstraints`, and `getproviders.VersionConstraintsString` for the
 * canonical form written to lock files.
 *
 * Pure: no I/O.
 */
import { ErrorCode, ProvkitError } from '../errors.js';
import { goQuote, goTrimSpace } from '../go/index.js';
import { DEFAULT_FLAVOR } from './flavor.js';
import type { Flavor } from './flavor.js';
import {
  compareVersions,
  goVersionsRelease,
  isUnspecifiedVersion,
  isWildcardNum,
  parseUint64,
  prereleaseLessThan,
  scanConstraint,
  sortVersions,
  Version,
} from './version.js';
import type { GoVersionsRelease } from './version.js';

/**
 * A constraint operator. `~>` is two operators, as in go-versions: with three
 * numbers it allows patch releases only (`~> 1.2.3` ⇒ ≥1.2.3 <1.3.0), with
 * fewer it allows minor releases (`~> 1.2` and `~> 1` ⇒ <2.0.0), docs/reference.md §1.3 item 15.
 */
export type ConstraintOperator = '=' | '!=' | '>' | '>=' | '<' | '<=' | '~>patch' | '~>minor';

/** One term: an operator and its boundary version (omitted numbers are 0). */
export interface VersionConstraint {
  /** How versions compare with the boundary; `~>` is resolved into its two forms by the number of parts written. */
  readonly operator: ConstraintOperator;
  /** The version written after the operator, with omitted numbers as 0 (`~> 1.2` has boundary 1.2.0). */
  readonly boundary: Version;
}

const MASK_UINT64 = 0xffffffffffffffffn;

function termUpperBound(t: VersionConstraint): Version {
  const b = t.boundary;
  // Go increments a uint64, which wraps around; so does this.
  if (t.operator === '~>minor') return new Version((b.major + 1n) & MASK_UINT64, 0, 0);
  return new Version(b.major, (b.minor + 1n) & MASK_UINT64, 0);
}

/** Whether `v` is in the set a single term describes, before the prerelease rule. */
function termHas(t: VersionConstraint, v: Version): boolean {
  const b = t.boundary;
  switch (t.operator) {
    case '=':
      return v.equals(b);
    case '!=':
      return !v.equals(b);
    case '>':
      return compareVersions(v, b) > 0;
    case '>=':
      return compareVersions(v, b) >= 0;
    case '<':
      return compareVersions(v, b) < 0;
    case '<=':
      return compareVersions(v, b) <= 0;
    case '~>patch':
    case '~>minor':
      return compareVersions(v, b) >= 0 && compareVersions(v, termUpperBound(t)) < 0;
  }
}

const OPERATOR_PRIORITY: Readonly<Record<ConstraintOperator, number>> = {
  '>': 1,
  '>=': 2,
  '=': 3,
  '~>patch': 4,
  '~>minor': 5,
  '<=': 6,
  '<': 7,
  '!=': 8,
};

const OPERATOR_TEXT: Readonly<Record<ConstraintOperator, string>> = {
  '>': '> ',
  '<': '< ',
  '>=': '>= ',
  '~>patch': '~> ',
  '~>minor': '~> ',
  '<=': '<= ',
  '=': '',
  '!=': '!= ',
};

/** Go `versionSelectionBoundaryCompare`: precedence, then metadata by prerelease rules. */
function boundaryCompare(a: Version, b: Version): number {
  if (a.same(b)) {
    if (a.metadata === b.metadata) return 0;
    return prereleaseLessThan(a.metadata, b.metadata) ? -1 : 1;
  }
  return compareVersions(a, b) < 0 ? -1 : 1;
}

function termToString(t: VersionConstraint): string {
  const b = t.boundary;
  let s = OPERATOR_TEXT[t.operator];
  s += t.operator === '~>minor' ? `${b.major}.${b.minor}` : `${b.major}.${b.minor}.${b.patch}`;
  if (b.prerelease !== '') s += `-${b.prerelease}`;
  if (b.metadata !== '') s += `+${b.metadata}`;
  return s;
}

/**
 * An intersection of constraint terms (Go `getproviders.VersionConstraints`).
 * Terms keep their written order and duplicates; only {@link toString}
 * normalises. Immutable.
 */
export class VersionConstraints {
  /** The terms as written (order and duplicates kept); empty: no constraint, any version matches. */
  readonly terms: readonly VersionConstraint[];

  /** The intersection of `terms` (none: unconstrained); use {@link parseConstraints} to read a constraint string. */
  constructor(terms: Iterable<VersionConstraint> = []) {
    this.terms = Object.freeze([...terms]);
    Object.freeze(this);
  }

  /** True when there are no terms: every release matches. */
  get isEmpty(): boolean {
    return this.terms.length === 0;
  }

  /**
   * Whether `v` is acceptable (go-versions `MeetingConstraints(...).Has`,
   * docs/reference.md §1.3 item 16), which is both the installer's selection test and the check of
   * a locked version:
   *
   * - every term must hold (an intersection; no terms ⇒ all releases);
   * - a prerelease is acceptable only when an **exact** term (`=` or bare)
   *   names it, so `>= 1.0.0-beta` admits no prerelease at all;
   * - exact terms (`=`, `!=`) compare metadata too: `=1.2.0+build.5` does
   *   not match 1.2.0, and `1.2.0` does not match 1.2.0+build.5; the other
   *   operators ignore metadata;
   * - 0.0.0 exactly (Go `Unspecified`) never matches, even with no terms.
   */
  matches(v: Version): boolean {
    if (isUnspecifiedVersion(v)) return false;
    if (!this.terms.every((t) => termHas(t, v))) return false;
    if (v.prerelease === '') return true;
    return this.terms.some((t) => t.operator === '=' && v.equals(t.boundary));
  }

  /**
   * The canonical form (`getproviders.VersionConstraintsString`, docs/reference.md §1.3 item 17), as
   * lock files demand it: terms de-duplicated by (operator, boundary), sorted
   * by boundary (precedence, then metadata) and then by operator in the order
   * `>`, `>=`, `=`, `~>` (patch), `~>` (minor), `<=`, `<`, `!=`; each printed
   * as `op M.m.p[-pre][+meta]` (no operator for `=`; minor-only `~>` prints
   * `M.m`), joined with `", "`. Empty for no terms.
   */
  toString(): string {
    const unique = new Map<string, VersionConstraint>();
    for (const t of this.terms) unique.set(`${t.operator} ${t.boundary.toString()}`, t);
    const sorted = [...unique.values()].sort(
      (a, b) =>
        boundaryCompare(a.boundary, b.boundary) || OPERATOR_PRIORITY[a.operator] - OPERATOR_PRIORITY[b.operator],
    );
    return sorted.map(termToString).join(', ');
  }

  /** The intersection with `others`: their terms appended (Go `Requirements.Merge`, docs/reference.md §1.3 item 18). */
  merge(...others: VersionConstraints[]): VersionConstraints {
    return mergeConstraints(this, ...others);
  }
}

/** The empty constraint set. */
export const NO_CONSTRAINTS: VersionConstraints = new VersionConstraints();

const NUM_NAMES = ['major', 'minor', 'patch'] as const;

class SpecError extends Error {}

/** Go `parseRubyStyle`: one term from the front of `str`, and the rest. */
function parseRubyStyle(
  str: string,
  release: GoVersionsRelease,
): [VersionConstraint | undefined, string, string | undefined] {
  const [raw, remain] = scanConstraint(str, release);
  let operator: ConstraintOperator;
  switch (raw.op) {
    case '=':
    case '':
      operator = '=';
      break;
    case '!=':
      operator = '!=';
      break;
    case '>':
      operator = '>';
      break;
    case '>=':
      operator = '>=';
      break;
    case '<':
      operator = '<';
      break;
    case '<=':
      operator = '<=';
      break;
    case '~>':
      operator = raw.numCt === 3 ? '~>patch' : '~>minor';
      break;
    case '=<':
      return [undefined, remain, `invalid constraint operator ${goQuote(raw.op)}; did you mean "<="?`];
    case '=>':
      return [undefined, remain, `invalid constraint operator ${goQuote(raw.op)}; did you mean ">="?`];
    default:
      return [undefined, remain, `invalid constraint operator ${goQuote(raw.op)}`];
  }
  if (raw.sep === ' ') {
    if (raw.op === '') return [undefined, remain, 'extraneous spaces at start of specification'];
  } else if (raw.sep !== '') {
    if (raw.sep.includes('v')) return [undefined, remain, 'a "v" prefix should not be used when specifying versions'];
    if (raw.op === '') return [undefined, remain, 'extraneous spaces at start of specification'];
    return [undefined, remain, `only one space is expected after the operator ${goQuote(raw.op)}`];
  }
  if (raw.numCt > 3)
    return [undefined, remain, 'too many numbered portions; only three are allowed (major, minor, patch)'];
  for (let i = 0; i < 3; i++) {
    if (isWildcardNum(raw.nums[i] ?? '')) {
      return [
        undefined,
        remain,
        `can't use wildcard for ${NUM_NAMES[i] ?? 'patch'} number; omit segments that should be unconstrained`,
      ];
    }
  }
  const nums: bigint[] = [];
  for (let i = 0; i < 3; i++) {
    const n = raw.nums[i] ?? '';
    // Unconstrained (omitted) portions are zero wherever ruby-style constraints are used.
    const v = n === '' ? 0n : parseUint64(n);
    if (v === undefined) throw new SpecError(`the ${NUM_NAMES[i] ?? 'patch'} number ${n} is too large`);
    nums.push(v);
  }
  const boundary = new Version(nums[0] ?? 0n, nums[1] ?? 0n, nums[2] ?? 0n, raw.pre, raw.meta);
  return [{ operator, boundary }, remain, undefined];
}

function constraintError(message: string, input: string): ProvkitError {
  return new ProvkitError(ErrorCode.INVALID_CONSTRAINT, message, { found: input });
}

/**
 * Parses a constraint string (Go `ParseRubyStyleMulti`, docs/reference.md §1.3 item 15):
 * comma-separated terms, whitespace-trimmed; operators `=` (or none), `!=`,
 * `>`, `>=`, `<`, `<=`, `~>`; zero or one space between operator and number;
 * no wildcards; missing minor/patch are 0. An empty or blank string is the
 * empty set. As in Go, a trailing comma is accepted and an operator with no
 * number (`>=`) means `>= 0.0.0`.
 *
 * The error message is the reference's text, for example
 * `invalid specification ">=  1.0": only one space is expected after the operator ">="`
 * or `missing comma after "1.0"`. One deviation: a number above 2^64-1
 * makes Go panic; here it is an error.
 *
 * `flavor` picks the go-versions release ({@link goVersionsRelease}). They
 * differ only where a `v` follows an operator or a comma: OpenTofu (v1.0.3)
 * says `invalid specification ">= v1": a "v" prefix should not be used when
 * specifying versions`, Terraform v1.11.4 (v1.0.2) says
 * `a "v" prefix should not be used`, and for `>=v1` it says
 * `invalid specification ">=": only one space is expected after the operator ">="`.
 *
 * @throws {ProvkitError} `INVALID_CONSTRAINT`, with `found` set to the input.
 */
export function parseConstraints(s: string, flavor: Flavor = DEFAULT_FLAVOR): VersionConstraints {
  const release = goVersionsRelease(flavor);
  const terms: VersionConstraint[] = [];
  let remain = goTrimSpace(s);
  while (remain !== '') {
    let term: VersionConstraint | undefined;
    let newRemain: string;
    let err: string | undefined;
    try {
      [term, newRemain, err] = parseRubyStyle(remain, release);
    } catch (e) {
      if (e instanceof SpecError) throw constraintError(e.message, s);
      throw e;
    }
    const consumed = remain.slice(0, remain.length - newRemain.length);
    if (err !== undefined || term === undefined) {
      throw constraintError(`invalid specification ${goQuote(consumed)}: ${err ?? ''}`, s);
    }
    remain = goTrimSpace(newRemain);
    if (remain !== '') {
      if (remain.startsWith('v')) {
        const text =
          release === 'v1.0.2'
            ? 'a "v" prefix should not be used'
            : 'a "v" prefix should not be used when specifying versions';
        throw constraintError(text, s);
      }
      if (!remain.startsWith(',')) throw constraintError(`missing comma after ${goQuote(consumed)}`, s);
      remain = goTrimSpace(remain.slice(1));
    }
    terms.push(term);
  }
  return new VersionConstraints(terms);
}

/** {@link parseConstraints} without throwing. */
export function tryParseConstraints(
  s: string,
  flavor: Flavor = DEFAULT_FLAVOR,
): { ok: true; constraints: VersionConstraints } | { ok: false; error: ProvkitError } {
  try {
    return { ok: true, constraints: parseConstraints(s, flavor) };
  } catch (err) {
    if (err instanceof ProvkitError) return { ok: false, error: err };
    throw err;
  }
}

/** The canonical string of `c` (docs/reference.md §1.3 item 17); see {@link VersionConstraints.toString}. */
export function constraintsToString(c: VersionConstraints): string {
  return c.toString();
}

/**
 * Concatenates the terms of several constraint sets, as requirements from
 * many modules are merged (Go `Requirements.Merge`, docs/reference.md §1.3 item 18). Duplicates are
 * kept; the canonical string removes them.
 */
export function mergeConstraints(...sets: VersionConstraints[]): VersionConstraints {
  return new VersionConstraints(sets.flatMap((c) => c.terms));
}

/**
 * Parses several requirement strings (one per module or declaration) and
 * merges them. Empty strings contribute nothing.
 *
 * @throws {ProvkitError} `INVALID_CONSTRAINT` for the first string that does not parse.
 */
export function parseAndMergeConstraints(
  strings: Iterable<string>,
  flavor: Flavor = DEFAULT_FLAVOR,
): VersionConstraints {
  return mergeConstraints(...Array.from(strings, (s) => parseConstraints(s, flavor)));
}

/** Whether `v` meets `c`; see {@link VersionConstraints.matches}. */
export function versionMatches(v: Version, c: VersionConstraints): boolean {
  return c.matches(v);
}

/**
 * The newest of `versions` that `c` accepts, or `undefined` (the installer's
 * selection, docs/reference.md items 16 and 46). Versions are sorted stably by precedence
 * and walked from the newest, as Go does, so among versions that differ only
 * in metadata the one listed last wins.
 */
export function newestMatching(versions: Iterable<Version>, c: VersionConstraints): Version | undefined {
  const sorted = sortVersions(versions);
  for (let i = sorted.length - 1; i >= 0; i--) {
    const v = sorted[i];
    if (v !== undefined && c.matches(v)) return v;
  }
  return undefined;
}
