/**
 * `provkit audit`'s three outputs of one result (docs/provenance.md): a
 * table per provider version for people, `audit_hash` / `audit_change` /
 * `audit_summary` messages for `-json` (docs/json-ui.md), and a SARIF 2.1.0
 * log (OASIS SARIF v2.1.0: its `run`, `result` and `location` objects)
 * whose results sit at the line of the hash in the lock file, so a
 * code-scanning view shows them on the pull request.
 */
import { dispositionJSON, vouchersText } from '../hashing/index.js';
import type { AuditChange, AuditedHash } from '../installer/audit.js';
import type { LockPosition } from '../lockfile/index.js';
import { fittedLines, type TableColumn, tableLines } from './table.js';
import type { JsonUI } from './json.js';
import { count } from './words.js';

/** One lock file's audit, with where each hash is written. */
export interface AuditedLockFile {
  /** The lock file as shown and as SARIF locates it: relative to the working directory, forward slashes. */
  readonly file: string;
  readonly hashes: readonly AuditedHash[];
  readonly changes: readonly AuditChange[];
  /** Where a hash of a provider is written (undefined: not known). */
  readonly positionOf: (hash: AuditedHash) => LockPosition | undefined;
}

/** The counts of a whole audit. */
export interface AuditTotals {
  readonly lockFiles: number;
  readonly hashes: number;
  readonly failing: number;
  readonly downloads: number;
  readonly changes: number;
}

/** The totals of `files`. */
export function auditTotals(files: readonly AuditedLockFile[], downloads: number): AuditTotals {
  return {
    lockFiles: files.length,
    hashes: files.reduce((n, f) => n + f.hashes.length, 0),
    failing: files.reduce((n, f) => n + f.hashes.filter((h) => !h.judgement.pass).length, 0),
    downloads,
    changes: files.reduce((n, f) => n + f.changes.length, 0),
  };
}

function changeText(c: AuditChange): string {
  const who = `${c.provider.toString()}`;
  switch (c.kind) {
    case 'provider-added':
      return `${who}: added at ${c.version.toString()}`;
    case 'provider-removed':
      return `${who}: removed (was ${c.version.toString()})`;
    case 'version-changed':
      return `${who}: version changed from ${c.from.toString()} to ${c.version.toString()}`;
    case 'hash-removed':
      return `${who} ${c.version.toString()}: hash removed ${c.hash.text}`;
  }
}

/**
 * The human table: per lock file, per provider version, one row per hash
 * (platform, hash, verdict, who vouches), each failing one followed by why.
 * `terminalColumns`: the terminal's width (undefined: no terminal); a table
 * wider than it becomes a block per hash (src/ui/table.ts).
 */
export function auditTableText(files: readonly AuditedLockFile[], terminalColumns?: number): string {
  // Provider addresses, URLs and paths came from files and servers: one line each, escaped.
  const out: string[] = [];
  const fit = (l: string): string[] => fittedLines(l, terminalColumns);
  for (const f of files) {
    if (f.hashes.length === 0 && f.changes.length === 0) continue;
    out.push(...fit(`${f.file}:`));
    for (const c of f.changes) out.push(...fit(`  ${changeText(c)}`));
    const groups = new Map<string, AuditedHash[]>();
    for (const h of f.hashes) {
      const key = `${h.provider.toString()} ${h.version.toString()}`;
      groups.set(key, [...(groups.get(key) ?? []), h]);
    }
    for (const [title, hashes] of groups) {
      out.push('', ...fit(`  ${title}`));
      const rows = [...hashes]
        .sort(
          (a, b) =>
            (a.platform?.toString() ?? '~').localeCompare(b.platform?.toString() ?? '~') ||
            (a.hash.text < b.hash.text ? -1 : 1),
        )
        .map((h) => ({
          cells: [
            h.platform?.toString() ?? '?',
            h.hash.text,
            h.judgement.pass ? 'ok' : 'FAIL',
            vouchersText(h.dispositions),
          ],
          notes: h.judgement.violations.map((v) => `${v.code}: ${v.message}`),
        }));
      out.push(...tableLines(AUDIT_COLUMNS, rows, 4, terminalColumns));
    }
    out.push('');
  }
  return out.map((l) => `${l}\n`).join('');
}

/** The audit table's columns: a platform and its verdict head a hash's block on a narrow terminal. */
const AUDIT_COLUMNS: readonly TableColumn[] = [
  { title: 'PLATFORM', head: true },
  { title: 'HASH' },
  { title: 'VERDICT', head: true },
  { title: 'WHO VOUCHES' },
];

/** The one-line summary, for people and as `audit_summary`'s `@message`. */
export function auditSummaryText(t: AuditTotals): string {
  const checked = `${count(t.hashes, 'hash', 'hashes')} in ${count(t.lockFiles, 'lock file')} audited`;
  const fetched = t.downloads === 0 ? 'nothing downloaded' : `${count(t.downloads, 'package')} downloaded`;
  return t.failing === 0
    ? `Audit passed: ${checked}, every one vouched for as the policy asks (${fetched}).`
    : `Audit failed: ${checked}, ${t.failing} not vouched for as the policy asks (${fetched}).`;
}

/** The `-json` messages: `audit_change` per change, `audit_hash` per hash, then `audit_summary`. */
export function renderAuditJSON(files: readonly AuditedLockFile[], totals: AuditTotals, ui: JsonUI): void {
  for (const f of files) {
    for (const c of f.changes)
      ui.message('info', changeText(c), 'audit_change', {
        lock_file: f.file,
        provider: c.provider.toString(),
        change: c.kind,
        version: c.version.toString(),
        ...(c.kind === 'version-changed' ? { from: c.from.toString() } : {}),
        ...(c.kind === 'hash-removed' ? { hash: c.hash.text } : {}),
      });
    for (const h of f.hashes) {
      const at = f.positionOf(h);
      ui.message(
        h.judgement.pass ? 'info' : 'error',
        `${h.provider.toString()} ${h.version.toString()} ${h.hash.text}: ${h.judgement.pass ? 'ok' : 'FAIL'} (${vouchersText(h.dispositions)})`,
        'audit_hash',
        {
          lock_file: f.file,
          ...(at === undefined ? {} : { line: at.line }),
          provider: h.provider.toString(),
          version: h.version.toString(),
          platform: h.platform?.toString() ?? null,
          hash: h.hash.text,
          dispositions: h.dispositions.map(dispositionJSON),
          pass: h.judgement.pass,
          violations: h.judgement.violations.map((v) => ({ code: v.code, message: v.message })),
          policy: h.policy,
        },
      );
    }
  }
  ui.message(totals.failing === 0 ? 'info' : 'error', auditSummaryText(totals), 'audit_summary', {
    lock_files: totals.lockFiles,
    hashes: totals.hashes,
    failing: totals.failing,
    changes: totals.changes,
    downloads: totals.downloads,
    pass: totals.failing === 0,
  });
}

/** What each violation code means (SARIF `rules`). */
const RULES: Readonly<Record<string, string>> = {
  HASH_UNVOUCHED: 'No source vouches for this lock-file hash.',
  HASH_NOT_ACCEPTED: 'The hash is vouched for only in ways the audit policy does not accept.',
  HASH_CONTRADICTED: 'A registry reported this hash, but the package of its platform hashed to another.',
  KEY_NOT_TRUSTED: "The hash's SHA256SUMS is signed by a key outside the policy's trusted_keys.",
  KEY_EXPIRED: "The hash's SHA256SUMS is signed by an expired key.",
};

/** The SARIF 2.1.0 log of an audit: one result per violation, at the line of its hash. */
export function auditSarif(files: readonly AuditedLockFile[], toolVersion: string): Record<string, unknown> {
  const ruleIds = Object.keys(RULES);
  const results = files.flatMap((f) =>
    f.hashes.flatMap((h) =>
      h.judgement.violations.map((v) => {
        const at = f.positionOf(h);
        return {
          ruleId: v.code,
          ruleIndex: ruleIds.indexOf(v.code),
          level: 'error',
          message: {
            text: `${h.provider.toString()} ${h.version.toString()}${h.platform === undefined ? '' : ` (${h.platform.toString()})`}: ${h.hash.text}: ${v.message}. Vouched for by: ${vouchersText(h.dispositions)}.`,
          },
          locations: [
            {
              physicalLocation: {
                artifactLocation: { uri: f.file, uriBaseId: '%SRCROOT%' },
                ...(at === undefined ? {} : { region: { startLine: at.line, startColumn: at.column } }),
              },
            },
          ],
          partialFingerprints: { lockHash: `${h.provider.toString()}/${h.hash.text}` },
          properties: { dispositions: h.dispositions.map(dispositionJSON), policy: h.policy },
        };
      }),
    ),
  );
  return {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [
      {
        tool: {
          driver: {
            name: 'provkit',
            version: toolVersion,
            rules: ruleIds.map((id) => ({
              id,
              shortDescription: { text: RULES[id] },
              defaultConfiguration: { level: 'error' },
            })),
          },
        },
        originalUriBaseIds: { '%SRCROOT%': { description: { text: 'The directory provkit audit ran in.' } } },
        results,
      },
    ],
  };
}
