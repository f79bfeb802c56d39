/**
 * The `audit` block of `provkit.hcl` (docs/provenance.md "Policy"): which
 * dispositions make a lock-file hash pass `provkit audit`, per namespace or
 * provider pattern, and the signing keys that count.
 *
 * ```hcl
 * audit {
 *   trusted_keys   = ["34365D9472D7468F"]   # a signature by any other key does not count
 *   accept         = ["signed", "verified-locally"]
 *   allow_reported = false                  # reported-* hashes, for platforms nobody verified
 *
 *   provider "corp.example.com/*\/*" {        # the first matching block wins, for what it sets
 *     accept = ["computed-locally"]
 *   }
 * }
 * ```
 *
 * Rules:
 * - `accept`: disposition kinds (hashing/disposition.ts) that make a hash
 *   pass. Default: `signed` and `verified-locally`; for a mirror-only
 *   provider (no registry has it) also `computed-locally`.
 * - `allow_reported`: a `reported-by-registry` or `reported-by-mirror` hash
 *   passes too, unless a package of its platform was hashed here and gave
 *   another hash (then it is contradicted). Default false.
 * - `trusted_keys`: key IDs (16 hex digits, or 40-digit fingerprints, whose
 *   last 16 are the ID), case-insensitive. When set, a `signed` disposition
 *   by another key, and a `verified-locally` one whose bytes that key's
 *   signature covered, do not count, however the registry vouches for the
 *   key. Default: any key the registry lists.
 * - `allow_expired_keys`: whether a signature by an expired key counts
 *   (OpenTofu tolerates it with a warning, opentofu/opentofu#1769). Default
 *   false.
 * - `provider "PATTERN"` blocks (`NS/TYPE` or `HOST/NS/TYPE`, wildcards as
 *   in `provider_installation`, src/addresses/patterns.ts): the first block,
 *   in file order, whose pattern matches a provider overrides the settings
 *   it makes for it.
 *
 * Parsing is pure, with diagnostics (file, line, column); {@link judgeHash}
 * is the one rule that decides a hash.
 */
import {
  type Flavor,
  goQuote,
  parseProviderPattern,
  patternMatches,
  type ProviderAddress,
  type ProviderPattern,
} from '../addresses/index.js';
import { type Diagnostic, errorText } from '../errors.js';
import {
  type Disposition,
  DISPOSITION_KINDS,
  type DispositionKind,
  isDispositionKind,
  isReported,
} from '../hashing/index.js';
import type { Expression, Range } from '../hcl/index.js';
import { evaluateStatic, hasErrors, staticList, staticString } from '../hcl/index.js';
import type { BodyView } from './body.js';
import { errorDiag } from './diagnostics.js';

/** Settings of the block or of one `provider` block; unset ones inherit. */
export interface AuditRule {
  /**
   * `accept`: the disposition kinds that make a hash pass. Undefined: inherited (for the block itself, the
   * default `signed` and `verified-locally`, plus `computed-locally` for a provider only a mirror serves).
   */
  readonly accept?: readonly DispositionKind[];
  /**
   * `allow_reported`: whether a `reported-by-registry` or `reported-by-mirror` hash passes when no package of
   * its platform hashed here contradicts it. Undefined: inherited (default false).
   */
  readonly allowReported?: boolean;
  /** Key IDs, 16 upper-case hex digits. */
  readonly trustedKeys?: readonly string[];
  /**
   * `allow_expired_keys`: whether a signature by an expired key counts (OpenTofu accepts it with a warning,
   * opentofu/opentofu#1769). Undefined: inherited (default false).
   */
  readonly allowExpiredKeys?: boolean;
}

/** A `provider "PATTERN"` block. */
export interface AuditProviderRule {
  /** The pattern as written. */
  readonly pattern: string;
  /** Where the pattern (the block's label) is in the policy file, for diagnostics about it. */
  readonly range: Range;
  /** What the block sets; an unset setting is the enclosing `audit` block's. */
  readonly rule: AuditRule;
}

/** A parsed `audit` block. */
export interface AuditPolicy {
  /** The policy file, as its diagnostics name it. */
  readonly file: string;
  /** The settings of the `audit` block itself, for every provider no `provider` block overrides. */
  readonly defaults: AuditRule;
  /** The `provider` blocks in file order: the first whose pattern matches a provider overrides what it sets. */
  readonly providers: readonly AuditProviderRule[];
}

/** The settings that apply to one provider, every one decided. */
export interface EffectiveAuditRule {
  readonly accept: readonly DispositionKind[];
  readonly allowReported: boolean;
  /** Undefined: any key the registry lists. */
  readonly trustedKeys: readonly string[] | undefined;
  readonly allowExpiredKeys: boolean;
  /** Where the settings come from: `the default policy`, `provkit.hcl`, `provkit.hcl provider "hashicorp/*"`. */
  readonly from: string;
}

/** The default `accept` of a registry provider and of a mirror-only one. */
export const DEFAULT_ACCEPT: readonly DispositionKind[] = ['signed', 'verified-locally'];
/** The default `accept` of a provider only a mirror serves (no registry to sign its hashes). */
export const DEFAULT_ACCEPT_MIRROR_ONLY: readonly DispositionKind[] = [
  'signed',
  'verified-locally',
  'computed-locally',
];

const RULE_ATTRIBUTES = ['accept', 'allow_reported', 'trusted_keys', 'allow_expired_keys'] as const;

/** The schema of the `audit` block's body. */
export const AUDIT_SCHEMA = {
  attributes: RULE_ATTRIBUTES.map((name) => ({ name })),
  blocks: [{ type: 'provider', labels: ['pattern'] }],
} as const;

/** Parses the body of an `audit` block (diagnostics name `file`). */
export function parseAuditBlock(body: BodyView, file: string): { policy?: AuditPolicy; diagnostics: Diagnostic[] } {
  const diagnostics: Diagnostic[] = [];
  const content = body.content(AUDIT_SCHEMA);
  diagnostics.push(...content.diagnostics);
  const defaults = parseRule(content.attributes, diagnostics);
  const providers: AuditProviderRule[] = [];
  for (const block of content.blocks) {
    const pattern = block.labels[0] ?? '';
    const range = block.labelRanges[0] ?? block.defRange;
    try {
      // Checked here with either flavor's host: a pattern's validity does not depend on it.
      parseProviderPattern(pattern, 'tofu');
    } catch (err) {
      diagnostics.push(errorDiag('Invalid provider pattern', `${errorText(err)}.`, range));
      continue;
    }
    const inner = block.body.content({ attributes: AUDIT_SCHEMA.attributes, blocks: [] });
    diagnostics.push(...inner.diagnostics);
    providers.push({ pattern, range, rule: parseRule(inner.attributes, diagnostics) });
  }
  if (hasErrors(diagnostics)) return { diagnostics };
  return { policy: { file, defaults, providers }, diagnostics };
}

function parseRule(
  attributes: ReadonlyMap<string, { expr: Expression; range: Range }>,
  diagnostics: Diagnostic[],
): AuditRule {
  let rule: {
    accept?: DispositionKind[];
    allowReported?: boolean;
    trustedKeys?: string[];
    allowExpiredKeys?: boolean;
  } = {};
  const accept = attributes.get('accept');
  if (accept) {
    const kinds = stringList(accept.expr, diagnostics)?.flatMap(({ value, range }) => {
      if (isDispositionKind(value)) return [value];
      diagnostics.push(
        errorDiag(
          'Invalid disposition',
          `${goQuote(value)} is not a disposition; use one of ${DISPOSITION_KINDS.map((k) => goQuote(k)).join(', ')}.`,
          range,
        ),
      );
      return [];
    });
    if (kinds) rule = { ...rule, accept: [...new Set(kinds)] };
  }
  const keys = attributes.get('trusted_keys');
  if (keys) {
    const ids = stringList(keys.expr, diagnostics)?.flatMap(({ value, range }) => {
      const id = keyIdOf(value);
      if (id !== undefined) return [id];
      diagnostics.push(
        errorDiag(
          'Invalid key ID',
          `${goQuote(value)} is not an OpenPGP key ID: give its 16 hexadecimal digits (or the 40 of its fingerprint).`,
          range,
        ),
      );
      return [];
    });
    if (ids) rule = { ...rule, trustedKeys: [...new Set(ids)] };
  }
  for (const [name, key] of [
    ['allow_reported', 'allowReported'],
    ['allow_expired_keys', 'allowExpiredKeys'],
  ] as const) {
    const attr = attributes.get(name);
    if (!attr) continue;
    const r = evaluateStatic(attr.expr);
    diagnostics.push(...r.diagnostics);
    if (typeof r.value === 'boolean') rule = { ...rule, [key]: r.value };
    else if (r.diagnostics.length === 0)
      diagnostics.push(errorDiag('Invalid value', `${name} must be true or false.`, attr.expr.range));
  }
  return rule;
}

function stringList(expr: Expression, diagnostics: Diagnostic[]): Array<{ value: string; range: Range }> | undefined {
  const list = staticList(expr);
  diagnostics.push(...list.diagnostics);
  if (!list.items) return undefined;
  return list.items.flatMap((item) => {
    const s = staticString(item);
    diagnostics.push(...s.diagnostics);
    return s.value === undefined ? [] : [{ value: s.value, range: item.range }];
  });
}

/** A key ID (16 upper-case hex digits) from a key ID or a fingerprint, optionally `0x`-prefixed and spaced. */
export function keyIdOf(text: string): string | undefined {
  const hex = text.replace(/^0x/i, '').replace(/\s+/g, '').toUpperCase();
  if (/^[0-9A-F]{16}$/.test(hex)) return hex;
  if (/^[0-9A-F]{40}$/.test(hex)) return hex.slice(24);
  return undefined;
}

/**
 * The settings for `provider`: the first matching `provider` block's, then
 * the block's, then the defaults (which depend on whether the provider is
 * mirror-only).
 */
export function auditRuleFor(
  policy: AuditPolicy | undefined,
  provider: ProviderAddress,
  flavor: Flavor,
  mirrorOnly: boolean,
): EffectiveAuditRule {
  const match = policy?.providers.find((p) => {
    let pattern: ProviderPattern;
    try {
      pattern = parseProviderPattern(p.pattern, flavor);
    } catch {
      return false;
    }
    return patternMatches(pattern, provider);
  });
  const get = <K extends keyof AuditRule>(k: K): AuditRule[K] | undefined => match?.rule[k] ?? policy?.defaults[k];
  return {
    accept: get('accept') ?? (mirrorOnly ? DEFAULT_ACCEPT_MIRROR_ONLY : DEFAULT_ACCEPT),
    allowReported: get('allowReported') ?? false,
    trustedKeys: get('trustedKeys'),
    allowExpiredKeys: get('allowExpiredKeys') ?? false,
    from:
      policy === undefined
        ? 'the default policy'
        : match === undefined
          ? policy.file
          : `${policy.file} provider ${goQuote(match.pattern)}`,
  };
}

/** Why a hash fails the policy (stable codes: SARIF rule IDs, `-json` `violations`). */
export type AuditViolationCode =
  /** No source vouches for it. */
  | 'HASH_UNVOUCHED'
  /** Vouched for only in ways the policy does not accept (e.g. only reported by the registry). */
  | 'HASH_NOT_ACCEPTED'
  /** A package of its platform was hashed here and gave another hash: the report is wrong. */
  | 'HASH_CONTRADICTED'
  /** The signature that would count is by a key outside `trusted_keys`. */
  | 'KEY_NOT_TRUSTED'
  /** The signature that would count is by an expired key. */
  | 'KEY_EXPIRED';

/** One hash, or one provider, that the audit policy rejects: its code and what it names. */
export interface AuditViolation {
  readonly code: AuditViolationCode;
  readonly message: string;
}

/** What a hash's dispositions are judged with besides the rule. */
export interface JudgeContext {
  /** Whether the key `keyId` had expired when its signature was checked (undefined: not known). */
  readonly keyExpired?: (keyId: string) => boolean | undefined;
  /** A package of the hash's platform was hashed here and gave another hash of the same scheme. */
  readonly contradictedBy?: string;
}

/** The verdict on one hash. */
export interface HashJudgement {
  readonly pass: boolean;
  /** The dispositions that made it pass (empty when it fails). */
  readonly accepted: readonly Disposition[];
  /** Why it fails (empty when it passes). */
  readonly violations: readonly AuditViolation[];
}

/** The one rule: does a hash with these dispositions pass `rule`? See the module comment. */
export function judgeHash(
  rule: EffectiveAuditRule,
  dispositions: readonly Disposition[],
  context: JudgeContext = {},
): HashJudgement {
  const untrusted = new Set<string>();
  const expired = new Set<string>();
  const keyCounts = (keyId: string | undefined, ownExpired: boolean | undefined): boolean => {
    if (rule.trustedKeys !== undefined && (keyId === undefined || !rule.trustedKeys.includes(keyId))) {
      untrusted.add(keyId ?? 'unknown');
      return false;
    }
    if (!rule.allowExpiredKeys && keyId !== undefined && (ownExpired ?? context.keyExpired?.(keyId)) === true) {
      expired.add(keyId);
      return false;
    }
    return true;
  };
  const counts = (d: Disposition): boolean => {
    if (d.kind === 'signed') return keyCounts(d.keyId, d.expired);
    if (d.kind === 'verified-locally') return keyCounts(d.keyId, undefined);
    return true;
  };
  const accepted = dispositions.filter(
    (d) =>
      (rule.accept.includes(d.kind) || (rule.allowReported && isReported(d) && context.contradictedBy === undefined)) &&
      counts(d),
  );
  if (accepted.length > 0) return { pass: true, accepted, violations: [] };
  const violations: AuditViolation[] = [];
  if (dispositions.length === 0)
    violations.push({ code: 'HASH_UNVOUCHED', message: 'no source vouches for this hash' });
  for (const k of [...untrusted].sort())
    violations.push({
      code: 'KEY_NOT_TRUSTED',
      message: `signed by key ${k}, which is not one of the trusted_keys of ${rule.from}`,
    });
  for (const k of [...expired].sort())
    violations.push({ code: 'KEY_EXPIRED', message: `signed by key ${k}, which has expired` });
  if (context.contradictedBy !== undefined && dispositions.some(isReported))
    violations.push({
      code: 'HASH_CONTRADICTED',
      message: `reported for a platform whose package hashed here to ${context.contradictedBy}`,
    });
  if (violations.length === 0)
    violations.push({
      code: 'HASH_NOT_ACCEPTED',
      message: `only ${[...new Set(dispositions.map((d) => d.kind))].join(', ')}; ${rule.from} accepts ${rule.accept.join(', ')}${rule.allowReported ? ' and reported hashes' : ''}`,
    });
  return { pass: false, accepted: [], violations };
}
