/**
 * The first of the two constraint parsers the reference runs over a
 * `version` argument: hashicorp/go-version's `NewConstraint`, which the
 * configuration decoder uses (`internal/configs/version_constraint.go`,
 * `provider_requirements.go`) before the requirements are re-parsed with
 * go-versions (`getproviders.ParseVersionConstraints`, see
 * `src/addresses/constraints.ts`).
 *
 * The two grammars disagree, so a string can fail either way:
 * - go-version refuses `""`, a trailing comma (`"1.0,"`) and `=>`, which
 *   give "This string does not use correct version constraint syntax.";
 * - go-version accepts `v1.0`, four numbers (`1.0.0.1`), two spaces after an
 *   operator (`>=  1.0`) and `1.0beta`, which go-versions then refuses with
 *   "Incorrect version constraint syntax: …" (confirmed with terraform 1.11.4).
 *
 * Pure: no I/O.
 */

/** Go RE2 `\s`: ASCII space, `\t`, `\n`, `\f`, `\r` (not `\v`, not Unicode spaces). */
const S = '[\\t\\n\\f\\r ]*';

/**
 * go-version's `VersionRegexpRaw`, rewritten without overlapping quantifiers
 * (`[A-Za-z\-~]+[0-9A-Za-z\-~]*` ≡ `[A-Za-z\-~][0-9A-Za-z\-~]*`) so that it
 * backtracks linearly; it matches exactly the same strings. Group 1 is the
 * numeric segments.
 */
const VERSION =
  'v?([0-9]+(?:\\.[0-9]+)*?)' +
  '(?:-(?:[0-9][0-9A-Za-z\\-~]*(?:\\.[0-9A-Za-z\\-~]+)*)|(?:-?(?:[A-Za-z\\-~][0-9A-Za-z\\-~]*(?:\\.[0-9A-Za-z\\-~]+)*)))?' +
  '(?:\\+(?:[0-9A-Za-z\\-~]+(?:\\.[0-9A-Za-z\\-~]+)*))?';

/** go-version's `constraintRegexp`: `^\s*(op)\s*(version)\s*$`. */
const CONSTRAINT_RE = new RegExp(`^${S}(?:!=|>=|<=|~>|=|>|<)?${S}${VERSION}${S}$`);

const INT64_MAX = 9223372036854775807n;

/**
 * Whether go-version's `NewConstraint(s)` succeeds: every comma-separated
 * part (no trimming of empty parts, so `""` and `"1.0,"` fail) matches the
 * constraint pattern, and every numeric segment fits in an int64
 * (`strconv.ParseInt`).
 */
export function isGoVersionConstraint(s: string): boolean {
  for (const part of s.split(',')) {
    const m = CONSTRAINT_RE.exec(part);
    if (!m) return false;
    for (const seg of (m[1] ?? '').split('.')) {
      if (BigInt(seg) > INT64_MAX) return false;
    }
  }
  return true;
}

// ---------------------------------------------------------------------------
// go-version versions and constraint checks, for module versions recorded in
// the module manifest (`Constraints.Check` in configload's loader).

/** A version as hashicorp/go-version parses it. */
export interface GoVersion {
  /** Numeric segments, padded with zeros to at least three. */
  readonly segments: readonly bigint[];
  /** How many segments were written. */
  readonly written: number;
  readonly pre: string;
  readonly metadata: string;
}

const VERSION_FULL_RE = new RegExp(
  '^v?([0-9]+(?:\\.[0-9]+)*?)' +
    '(?:-([0-9][0-9A-Za-z\\-~]*(?:\\.[0-9A-Za-z\\-~]+)*)|(?:-?([A-Za-z\\-~][0-9A-Za-z\\-~]*(?:\\.[0-9A-Za-z\\-~]+)*)))?' +
    '(?:\\+([0-9A-Za-z\\-~]+(?:\\.[0-9A-Za-z\\-~]+)*))?$',
);

/**
 * go-version `NewVersion`. Returns the reference's error text
 * (`Malformed version: x.y`) for a string that is not a version.
 */
export function parseGoVersion(s: string): { ok: true; version: GoVersion } | { ok: false; error: string } {
  const m = VERSION_FULL_RE.exec(s);
  if (!m) return { ok: false, error: `Malformed version: ${s}` };
  const parts = (m[1] ?? '').split('.');
  const segments: bigint[] = [];
  for (const p of parts) {
    const n = BigInt(p);
    if (n > INT64_MAX)
      return {
        ok: false,
        error: `Error parsing version: strconv.ParseInt: parsing ${JSON.stringify(p)}: value out of range`,
      };
    segments.push(n);
  }
  while (segments.length < 3) segments.push(0n);
  return { ok: true, version: { segments, written: parts.length, pre: m[2] ?? m[3] ?? '', metadata: m[4] ?? '' } };
}

/** go-version `Version.String`. */
export function goVersionString(v: GoVersion): string {
  return v.segments.join('.') + (v.pre === '' ? '' : `-${v.pre}`) + (v.metadata === '' ? '' : `+${v.metadata}`);
}

function equalSegments(a: GoVersion, b: GoVersion): boolean {
  return a.segments.length === b.segments.length && a.segments.every((s, i) => s === b.segments[i]);
}

function comparePart(a: string, b: string): number {
  if (a === b) return 0;
  const an = /^[+-]?[0-9]+$/.test(a);
  const bn = /^[+-]?[0-9]+$/.test(b);
  if (a === '') return bn ? -1 : 1;
  if (b === '') return an ? 1 : -1;
  if (an && !bn) return -1;
  if (!an && bn) return 1;
  if (!an && !bn) return a > b ? 1 : -1;
  return BigInt(a) > BigInt(b) ? 1 : -1;
}

function comparePrereleases(a: string, b: string): number {
  if (a === b) return 0;
  const x = a.split('.');
  const y = b.split('.');
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const c = comparePart(x[i] ?? '', y[i] ?? '');
    if (c !== 0) return c;
  }
  return 0;
}

/** go-version `Version.Compare`. */
export function compareGoVersions(a: GoVersion, b: GoVersion): number {
  if (goVersionString(a) === goVersionString(b)) return 0;
  if (equalSegments(a, b)) {
    if (a.pre === '' && b.pre === '') return 0;
    if (a.pre === '') return 1;
    if (b.pre === '') return -1;
    return comparePrereleases(a.pre, b.pre);
  }
  const n = Math.max(a.segments.length, b.segments.length);
  for (let i = 0; i < n; i++) {
    const x = a.segments[i];
    const y = b.segments[i];
    if (x === undefined) return b.segments.slice(i).every((s) => s === 0n) ? 0 : -1;
    if (y === undefined) return a.segments.slice(i).every((s) => s === 0n) ? 0 : 1;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

function prereleaseCheck(v: GoVersion, c: GoVersion): boolean {
  if (c.pre !== '' && v.pre !== '') return equalSegments(v, c);
  if (c.pre === '' && v.pre !== '') return false;
  return true;
}

const OP_CONSTRAINT_RE = new RegExp(`^${S}(!=|>=|<=|~>|=|>|<)?${S}(${VERSION.replace('v?(', 'v?(?:')})${S}$`);

/**
 * go-version `NewConstraint(c).Check(v)`. `c` must already satisfy
 * {@link isGoVersionConstraint}; an unparsable constraint checks false.
 */
export function goVersionConstraintCheck(c: string, v: GoVersion): boolean {
  for (const part of c.split(',')) {
    const m = OP_CONSTRAINT_RE.exec(part);
    if (!m) return false;
    const parsed = parseGoVersion(m[2] ?? '');
    if (!parsed.ok) return false;
    const cv = parsed.version;
    const cmp = compareGoVersions(v, cv);
    let ok: boolean;
    switch (m[1] ?? '') {
      case '':
      case '=':
        ok = cmp === 0;
        break;
      case '!=':
        ok = cmp !== 0;
        break;
      case '>':
        ok = prereleaseCheck(v, cv) && cmp === 1;
        break;
      case '<':
        ok = prereleaseCheck(v, cv) && cmp === -1;
        break;
      case '>=':
        ok = prereleaseCheck(v, cv) && cmp >= 0;
        break;
      case '<=':
        ok = prereleaseCheck(v, cv) && cmp <= 0;
        break;
      default:
        ok = pessimistic(v, cv);
    }
    if (!ok) return false;
  }
  return true;
}

function pessimistic(v: GoVersion, c: GoVersion): boolean {
  if (!prereleaseCheck(v, c) || (c.pre !== '' && v.pre === '')) return false;
  if (compareGoVersions(v, c) < 0) return false;
  const cs = c.segments.length;
  if (cs > v.segments.length) return false;
  for (let i = 0; i < c.written - 1; i++) if (v.segments[i] !== c.segments[i]) return false;
  return (c.segments[cs - 1] ?? 0n) <= (v.segments[cs - 1] ?? 0n);
}
