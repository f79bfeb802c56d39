/**
 * Provider versions as the reference tools parse, print and order them
 * (docs/reference.md §1.2 items 11–14; `apparentlymart/go-versions` v1.0.3, which both
 * OpenTofu and Terraform use through `internal/getproviders/types.go`).
 *
 * The lenient grammar comes from a Ragel state machine shared with the
 * constraint parser; {@link scanConstraint} is a literal port of its generated
 * tables so that every odd input is tokenised exactly as in Go.
 *
 * Pure: no I/O.
 */
import { ErrorCode, ProvkitError } from '../errors.js';
import { goQuote, goTrimSpace } from '../go/index.js';
import { DEFAULT_FLAVOR } from './flavor.js';
import type { Flavor } from './flavor.js';

const MAX_UINT64 = 18446744073709551615n;

/**
 * A version `major.minor.patch[-prerelease][+metadata]`. Immutable.
 *
 * Two notions of sameness exist, as in Go:
 * - {@link equals}: every field, metadata included (Go `==`; lock files and
 *   exact constraints use it, docs/reference.md §1.2 item 13);
 * - {@link same} / {@link compareVersions} returning 0: precedence only,
 *   metadata ignored.
 */
export class Version {
  /** The major version number (any size: a `bigint`, as Go's version parser accepts any digits). */
  readonly major: bigint;
  /** The minor version number. */
  readonly minor: bigint;
  /** The patch version number. */
  readonly patch: bigint;
  /** Without the leading `-`; empty for a release. Not validated beyond the grammar (docs/reference.md §1.2 item 11). */
  readonly prerelease: string;
  /** Without the leading `+`; empty when absent. */
  readonly metadata: string;

  /**
   * Builds a version from parts. Numbers must be integers in the uint64 range;
   * `prerelease` and `metadata` are taken as given.
   *
   * @throws {ProvkitError} `INVALID_VERSION` for a negative, fractional or too large number.
   */
  constructor(major: bigint | number, minor: bigint | number, patch: bigint | number, prerelease = '', metadata = '') {
    this.major = toUint64(major);
    this.minor = toUint64(minor);
    this.patch = toUint64(patch);
    this.prerelease = prerelease;
    this.metadata = metadata;
    Object.freeze(this);
  }

  /** Canonical form `M.m.p[-pre][+meta]` (docs/reference.md §1.2 item 12): what lock files demand. */
  toString(): string {
    let s = `${this.major}.${this.minor}.${this.patch}`;
    if (this.prerelease !== '') s += `-${this.prerelease}`;
    if (this.metadata !== '') s += `+${this.metadata}`;
    return s;
  }

  /** True when this has a prerelease part. */
  get isPrerelease(): boolean {
    return this.prerelease !== '';
  }

  /** Go `==`: all fields equal, **metadata included** (docs/reference.md §1.2 item 13). */
  equals(other: Version): boolean {
    return this.same(other) && this.metadata === other.metadata;
  }

  /** Go `Same`: equal precedence (metadata ignored). */
  same(other: Version): boolean {
    return (
      this.major === other.major &&
      this.minor === other.minor &&
      this.patch === other.patch &&
      this.prerelease === other.prerelease
    );
  }

  /** Go `LessThan`: lower precedence, with the prerelease quirk of {@link compareVersions}. */
  lessThan(other: Version): boolean {
    return compareVersions(this, other) < 0;
  }

  /** Go `GreaterThan`. */
  greaterThan(other: Version): boolean {
    return compareVersions(this, other) > 0;
  }
}

function toUint64(n: bigint | number): bigint {
  if (typeof n === 'number' && !Number.isSafeInteger(n)) {
    throw new ProvkitError(ErrorCode.INVALID_VERSION, `version number component ${n} is not an integer`);
  }
  const b = BigInt(n);
  if (b < 0n || b > MAX_UINT64) {
    throw new ProvkitError(ErrorCode.INVALID_VERSION, `version number component ${b} is out of range`);
  }
  return b;
}

/** Go `versions.Unspecified` (0.0.0): never selected by any constraint set (docs/reference.md items 14, 16). */
export const UNSPECIFIED_VERSION: Version = new Version(0, 0, 0);

/** True for exactly 0.0.0 with no prerelease and no metadata. */
export function isUnspecifiedVersion(v: Version): boolean {
  return v.equals(UNSPECIFIED_VERSION);
}

function isNumericIdentifier(s: string): boolean {
  return /^[0-9]*$/.test(s);
}

/** Go `lessThanStr`: numeric < alphanumeric; numbers by length then text; others by bytes (ASCII here). */
function lessThanStr(s1: string, s2: string): boolean {
  const n1 = isNumericIdentifier(s1);
  const n2 = isNumericIdentifier(s2);
  if (n1 && !n2) return true;
  if (n2 && !n1) return false;
  if (n1) {
    if (s1.length !== s2.length) return s1.length < s2.length;
    return s1 < s2;
  }
  return s1 < s2;
}

/**
 * Go `VersionExtra.LessThan` (prerelease precedence, docs/reference.md §1.2 item 13). Parts are
 * compared dot by dot, except that as soon as one side is on its last part
 * and the other is not, the shorter side is less **without comparing the
 * current part**: `b` < `a.1` (semver says the opposite).
 */
export function prereleaseLessThan(e: string, other: string): boolean {
  if (e === other) return false;
  let s1 = e;
  let s2 = other;
  for (;;) {
    const d1 = s1.indexOf('.');
    const d2 = s2.indexOf('.');
    if (d1 === -1 && d2 !== -1) return true;
    if (d2 === -1 && d1 !== -1) return false;
    if (d1 === -1) return lessThanStr(s1, s2);
    const p1 = s1.slice(0, d1);
    const p2 = s2.slice(0, d2);
    if (p1 !== p2) return lessThanStr(p1, p2);
    s1 = s1.slice(d1 + 1);
    s2 = s2.slice(d2 + 1);
  }
}

/**
 * Precedence (Go `Version.LessThan`, docs/reference.md §1.2 item 13): major, minor, patch
 * numerically; a release is greater than a prerelease of the same numbers;
 * prereleases by {@link prereleaseLessThan} (with its quirk). Metadata is
 * ignored: the result is 0 exactly when {@link Version.same} holds.
 */
export function compareVersions(a: Version, b: Version): -1 | 0 | 1 {
  if (a.major !== b.major) return a.major < b.major ? -1 : 1;
  if (a.minor !== b.minor) return a.minor < b.minor ? -1 : 1;
  if (a.patch !== b.patch) return a.patch < b.patch ? -1 : 1;
  if (a.prerelease === b.prerelease) return 0;
  if (a.prerelease === '') return 1;
  if (b.prerelease === '') return -1;
  return prereleaseLessThan(a.prerelease, b.prerelease) ? -1 : 1;
}

/**
 * A sorted copy, lowest precedence first; versions of equal precedence keep
 * their input order (Go `List.Sort` is stable).
 */
export function sortVersions(versions: Iterable<Version>): Version[] {
  return [...versions].sort(compareVersions);
}

// ---------------------------------------------------------------------------
// The shared scanner: a literal port of go-versions
// `versions/constraints/raw_scan.go` (generated by Ragel from raw_scan.rl):
//
//   num      = (digit+ | '*' | 'x' | 'X')
//   op       = (any - (digit | space | alpha | '.' | '*'))**
//   sep      = (space | 'v')**        (v1.0.3; v1.0.2 has space** only)
//   nums     = num ('.' num)*
//   extraStr = (alnum | '.' | '-')+
//   pre      = '-' extraStr;   meta = '+' extraStr
//   main    := op sep nums pre? meta?     (the rest is returned unconsumed)

/** Tokens of one constraint or version, as Go's `rawConstraint`. */
export interface RawConstraint {
  op: string;
  sep: string;
  /** Up to three numbered portions as written (`""` when absent, or a wildcard). */
  nums: [string, string, string];
  /** How many numbered portions were written (may exceed 3). */
  numCt: number;
  pre: string;
  meta: string;
}

const ACTIONS = [
  0, 1, 1, 1, 4, 1, 7, 2, 0, 1, 2, 2, 1, 2, 3, 1, 2, 3, 7, 2, 4, 1, 2, 4, 7, 2, 5, 1, 2, 5, 7, 2, 6, 7, 3, 0, 1, 2, 3,
  2, 1, 3, 3, 2, 3, 7, 4, 0, 1, 2, 3,
];
const KEY_OFFSETS = [0, 0, 14, 28, 37, 45, 53, 58, 61, 69, 78];
const TRANS_KEYS = [
  32, 42, 46, 88, 118, 120, 9, 13, 48, 57, 65, 90, 97, 122, 32, 42, 46, 88, 118, 120, 9, 13, 48, 57, 65, 90, 97, 122,
  32, 42, 88, 118, 120, 9, 13, 48, 57, 45, 46, 48, 57, 65, 90, 97, 122, 45, 46, 48, 57, 65, 90, 97, 122, 42, 88, 120,
  48, 57, 43, 45, 46, 45, 46, 48, 57, 65, 90, 97, 122, 43, 45, 46, 48, 57, 65, 90, 97, 122, 43, 45, 46, 48, 57,
];
const SINGLE_LENGTHS = [0, 6, 6, 5, 0, 0, 3, 3, 0, 1, 3];
const RANGE_LENGTHS = [0, 4, 4, 2, 4, 4, 1, 0, 4, 4, 1];
const INDEX_OFFSETS = [0, 0, 11, 22, 30, 35, 40, 45, 49, 54, 60];
const INDICIES = [
  1, 2, 3, 2, 1, 2, 1, 4, 3, 3, 0, 6, 7, 3, 7, 6, 7, 6, 8, 3, 3, 5, 10, 11, 11, 10, 11, 10, 12, 9, 14, 14, 14, 14, 13,
  15, 15, 15, 15, 13, 16, 16, 16, 17, 13, 19, 20, 21, 18, 14, 14, 14, 14, 22, 24, 15, 15, 15, 15, 23, 19, 20, 21, 25,
  18,
];
const TRANS_TARGS = [2, 3, 7, 0, 10, 2, 3, 7, 10, 0, 3, 7, 10, 0, 8, 9, 7, 10, 0, 4, 5, 6, 0, 0, 4, 10];
const TRANS_ACTIONS = [7, 34, 46, 42, 46, 0, 10, 38, 38, 16, 0, 13, 13, 5, 0, 0, 1, 1, 22, 19, 19, 3, 31, 28, 25, 0];
const EOF_ACTIONS = [0, 42, 42, 16, 5, 5, 5, 22, 31, 28, 22];
const SCAN_START = 1;

function at(table: readonly number[], i: number): number {
  return table[i] ?? 0;
}

/**
 * Which go-versions release to imitate. They differ only in how a `v` after
 * the operator is tokenised and in one message text (see {@link scanConstraint}).
 * OpenTofu v1.12 uses v1.0.3; Terraform v1.11.4 uses v1.0.2 (observed:
 * `>=v1.0` fails with "only one space is expected after the operator").
 */
export type GoVersionsRelease = 'v1.0.2' | 'v1.0.3';

/** The go-versions release the reference of `flavor` links. */
export function goVersionsRelease(flavor: Flavor): GoVersionsRelease {
  return flavor === 'terraform' ? 'v1.0.2' : 'v1.0.3';
}

/** The byte `v`. In v1.0.2 it is a plain letter: the transitions of a letter in states 1, 2 and 3. */
const V = 0x76;
const V102_TRANSITIONS: Readonly<Record<number, number>> = { 1: 3, 2: 3, 3: 9 };

/**
 * Go `scanConstraint`: tokenises the longest valid prefix of `data` and
 * returns the tokens and the unconsumed rest (a suffix of `data`). Works on
 * UTF-8 bytes as Go does; token boundaries always fall between characters.
 *
 * `release` v1.0.3 also takes `v` as part of the separator after the
 * operator (so that it can say `a "v" prefix should not be used`);
 * v1.0.2 stops at the `v`.
 */
export function scanConstraint(data: string, release: GoVersionsRelease = 'v1.0.3'): [RawConstraint, string] {
  const bytes = Buffer.from(data, 'utf8');
  const text = (from: number, to: number): string => bytes.toString('utf8', from, to);
  let c: RawConstraint = { op: '', sep: '', nums: ['', '', ''], numCt: 0, pre: '', meta: '' };
  let numIdx = 0;
  let extra = '';
  const pe = bytes.length;
  let p = 0;
  let ts = 0;

  const run = (action: number): void => {
    switch (action) {
      case 0:
        numIdx = 0;
        c = { op: '', sep: '', nums: ['', '', ''], numCt: 0, pre: '', meta: '' };
        break;
      case 1:
        ts = p;
        break;
      case 2:
        c.op = text(ts, p);
        break;
      case 3:
        c.sep = text(ts, p);
        break;
      case 4:
        c.numCt++;
        if (numIdx < 3) {
          c.nums[numIdx] = text(ts, p);
          numIdx++;
        }
        break;
      case 5:
        c.pre = text(ts + 1, p);
        break;
      case 6:
        c.meta = text(ts + 1, p);
        break;
      case 7:
        extra = text(p, pe);
        break;
    }
  };
  const runList = (index: number): void => {
    const n = at(ACTIONS, index);
    for (let k = 1; k <= n; k++) run(at(ACTIONS, index + k));
  };

  let cs = SCAN_START;
  while (p !== pe) {
    const byte = bytes[p] ?? 0;
    let keys = at(KEY_OFFSETS, cs);
    let trans = at(INDEX_OFFSETS, cs);
    let matched = false;

    let klen = at(SINGLE_LENGTHS, cs);
    if (klen > 0) {
      let lower = keys;
      let upper = keys + klen - 1;
      while (upper >= lower) {
        const mid = lower + ((upper - lower) >> 1);
        const key = at(TRANS_KEYS, mid);
        if (byte < key) upper = mid - 1;
        else if (byte > key) lower = mid + 1;
        else {
          trans += mid - keys;
          matched = true;
          break;
        }
      }
      if (!matched) {
        keys += klen;
        trans += klen;
      }
    }
    if (!matched) {
      klen = at(RANGE_LENGTHS, cs);
      if (klen > 0) {
        let lower = keys;
        let upper = keys + (klen << 1) - 2;
        while (upper >= lower) {
          const mid = lower + (((upper - lower) >> 1) & ~1);
          if (byte < at(TRANS_KEYS, mid)) upper = mid - 2;
          else if (byte > at(TRANS_KEYS, mid + 1)) lower = mid + 2;
          else {
            trans += (mid - keys) >> 1;
            matched = true;
            break;
          }
        }
        if (!matched) trans += klen;
      }
    }

    trans = at(INDICIES, trans);
    if (release === 'v1.0.2' && byte === V) trans = V102_TRANSITIONS[cs] ?? trans;
    cs = at(TRANS_TARGS, trans);
    const acts = at(TRANS_ACTIONS, trans);
    if (acts !== 0) runList(acts);
    if (cs === 0) return [c, extra];
    p++;
  }
  runList(at(EOF_ACTIONS, cs));
  return [c, extra];
}

const NUM_NAMES = ['major', 'minor', 'patch'] as const;

/** `*`, `x` or `X`. */
export function isWildcardNum(s: string): boolean {
  return s === '*' || s === 'x' || s === 'X';
}

/** Parses a decimal portion as Go `strconv.ParseUint(s, 10, 64)`; undefined when too large. */
export function parseUint64(s: string): bigint | undefined {
  const n = BigInt(s);
  return n > MAX_UINT64 ? undefined : n;
}

function versionError(message: string, input: string): ProvkitError {
  return new ProvkitError(ErrorCode.INVALID_VERSION, message, { version: input });
}

/**
 * Parses an exact version (Go `versions.ParseVersion` =
 * `constraints.ParseExactVersion`, docs/reference.md §1.2 item 11). Lenient: missing minor and patch
 * are 0 (`1` → 1.0.0), leading zeros are accepted (`01.02.3` → 1.2.3), a
 * trailing `.` or `-` is ignored (`1.` → 1.0.0, as the Ragel scanner stops
 * there), and prerelease and metadata are any `[0-9A-Za-z.-]+` with no
 * further semver check. Only {@link Version.toString} is canonical.
 *
 * The error message is the reference's text, for example
 * `a "v" prefix should not be used` or
 * `can't use constraint operator ">="; an exact version is required`.
 * One deviation: a number above 2^64-1 makes Go panic; here it is an error.
 *
 * `flavor` picks the go-versions release ({@link goVersionsRelease}); they
 * differ only for a `v` after leading whitespace (` v1.0.0`).
 *
 * @throws {ProvkitError} `INVALID_VERSION`, with `version` set to the input.
 */
export function parseVersion(s: string, flavor: Flavor = DEFAULT_FLAVOR): Version {
  if (goTrimSpace(s) === '') throw versionError('empty specification', s);
  const [raw, remainRaw] = scanConstraint(s, goVersionsRelease(flavor));
  switch (goTrimSpace(raw.op)) {
    case '>':
    case '>=':
    case '<':
    case '<=':
    case '!':
    case '!=':
    case '~>':
    case '^':
    case '~':
      throw versionError(`can't use constraint operator ${goQuote(raw.op)}; an exact version is required`, s);
    case '':
      if (raw.sep !== '') {
        if (raw.sep.includes('v')) throw versionError('a "v" prefix should not be used', s);
        throw versionError('extraneous spaces at start of specification', s);
      }
      break;
    default:
      throw versionError(`invalid sequence ${goQuote(raw.op)} at start of specification`, s);
  }
  if (remainRaw !== '') {
    const remain = goTrimSpace(remainRaw);
    if (remain === '') throw versionError('extraneous spaces at end of specification', s);
    if (s.startsWith('v')) throw versionError('a "v" prefix should not be used', s);
    if (remain.startsWith(',') || remain.startsWith('|')) {
      throw versionError("can't specify multiple versions; a single exact version is required", s);
    }
    if (remain.startsWith('-'))
      throw versionError("can't specify version range; a single exact version is required", s);
    if (goTrimSpace(s).startsWith(remain)) {
      throw versionError('invalid specification; required format is three positive integers separated by periods', s);
    }
    throw versionError(`invalid characters ${goQuote(remain)}`, s);
  }
  if (raw.numCt > 3) throw versionError('too many numbered portions; only three are allowed (major, minor, patch)', s);
  for (let i = raw.numCt; i < 3; i++) raw.nums[i] = '0';
  for (let i = 0; i < 3; i++) {
    if (isWildcardNum(raw.nums[i] ?? '')) {
      throw versionError(`can't use wildcard for ${NUM_NAMES[i] ?? 'patch'} number; an exact version is required`, s);
    }
  }
  const nums: bigint[] = [];
  for (let i = 0; i < 3; i++) {
    const n = raw.nums[i] ?? '0';
    const v = parseUint64(n);
    if (v === undefined) throw versionError(`the ${NUM_NAMES[i] ?? 'patch'} number ${n} is too large`, s);
    nums.push(v);
  }
  return new Version(nums[0] ?? 0n, nums[1] ?? 0n, nums[2] ?? 0n, raw.pre, raw.meta);
}

/** {@link parseVersion} without throwing. */
export function tryParseVersion(
  s: string,
  flavor: Flavor = DEFAULT_FLAVOR,
): { ok: true; version: Version } | { ok: false; error: ProvkitError } {
  try {
    return { ok: true, version: parseVersion(s, flavor) };
  } catch (err) {
    if (err instanceof ProvkitError) return { ok: false, error: err };
    throw err;
  }
}
