/**
 * `provkit keys`'s outputs of one result (docs/provenance.md "Signing
 * keys"): a table per provider for people (src/ui/table.ts), and
 * `signing_key` / `keys_provider` / `keys_summary` messages for `-json`
 * (docs/json-ui.md).
 */
import type { KeyFinding, KeysOutcome, KeyVersion, ProviderKey, ProviderKeys } from '../installer/keys.js';
import type { JsonUI } from './json.js';
import { fittedLines, type TableColumn, tableLines } from './table.js';
import { count } from './words.js';

/** The counts of a `keys` run. */
export interface KeysTotals {
  readonly providers: number;
  readonly keys: number;
  readonly versions: number;
  readonly flagged: number;
}

/**
 * The totals of `outcome`: providers, keys (per provider) and versions (per
 * provider) each counted once, however many policies judged them
 * (`-recursive` over roots with different `provkit.hcl` files); every
 * flagged finding counts.
 */
export function keysTotals(outcome: KeysOutcome): KeysTotals {
  const providers = new Set<string>();
  const keys = new Set<string>();
  const versions = new Set<string>();
  for (const p of outcome.providers) {
    const provider = p.provider.toString();
    providers.add(provider);
    for (const k of p.keys) keys.add(`${provider} ${k.keyId}`);
    for (const v of p.versions) versions.add(`${provider} ${v.version.toString()}`);
  }
  return {
    providers: providers.size,
    keys: keys.size,
    versions: versions.size,
    flagged: outcome.providers.reduce((n, p) => n + p.findings.filter((f) => f.flagged).length, 0),
  };
}

/** A key's expiry in words: `never`, `2027-01-31`, `2024-05-01 (expired)`, `unknown`. */
export function keyExpiresText(k: Pick<ProviderKey, 'keyExpires' | 'expired'>): string {
  const when = k.keyExpires === null ? 'never' : k.keyExpires === undefined ? 'unknown' : k.keyExpires.slice(0, 10);
  return k.expired ? `${when} (expired)` : when;
}

/** The versions a key signs, the locked ones marked: `1.0.0 (locked), 1.1.0`. */
function versionsText(k: ProviderKey, versions: readonly KeyVersion[]): string {
  const locked = new Set(versions.filter((v) => v.locked).map((v) => v.version.toString()));
  return k.versions.map((v) => (locked.has(v.toString()) ? `${v.toString()} (locked)` : v.toString())).join(', ');
}

const findingText = (f: KeyFinding): string => `${f.flagged ? '' : 'note: '}${f.code}: ${f.message}`;

const KEY_COLUMNS: readonly TableColumn[] = [
  { title: 'KEY ID', head: true },
  { title: 'EXPIRES', head: true },
  { title: 'VERSIONS', label: 'versions' },
];

/**
 * The human table: per provider, one row per key (key ID, expiry, the
 * versions it signs), under it its fingerprint and what is flagged about it;
 * then what concerns the provider's versions (a key change, no signature).
 * When root modules other than the working directory asked (`-recursive`),
 * a line under the provider says which policy judged it for which roots.
 * `terminalColumns`: the terminal's width (undefined: no terminal).
 */
export function keysTableText(outcome: KeysOutcome, terminalColumns?: number): string {
  const out: string[] = [];
  const fit = (l: string): string[] => fittedLines(l, terminalColumns);
  for (const p of outcome.providers) {
    out.push(...fit(`${p.provider.toString()}: ${versionsSummary(p)}`));
    if (p.roots !== undefined && p.roots.some((r) => r !== '.'))
      out.push(...fit(`  judged by ${p.policy} for ${p.roots.length === 1 ? 'root' : 'roots'} ${p.roots.join(', ')}`));
    if (p.keys.length > 0) {
      const rows = p.keys.map((k) => ({
        cells: [k.keyId, keyExpiresText(k), versionsText(k, p.versions)],
        // The fingerprint under its key: 40 digits would make every row too wide for a terminal.
        notes: [
          `fingerprint ${k.fingerprint ?? 'unknown'}`,
          ...p.findings.filter((f) => f.keyId === k.keyId && f.code !== 'KEY_CHANGED').map(findingText),
        ],
      }));
      out.push(...tableLines(KEY_COLUMNS, rows, 2, terminalColumns));
    }
    for (const f of p.findings)
      if (f.code === 'KEY_CHANGED' || f.code === 'NOT_SIGNED') out.push(...fit(`  ${findingText(f)}`));
    out.push('');
  }
  return out.map((l) => `${l}\n`).join('');
}

function versionsSummary(p: ProviderKeys): string {
  if (p.versions.length === 0) return 'not locked (-available lists the versions its constraints allow)';
  const locked = p.versions.filter((v) => v.locked).length;
  return `${count(p.versions.length, 'version')} (${locked} locked), ${count(p.keys.length, 'key')}`;
}

/** The one-line summary, for people and as `keys_summary`'s `@message`. */
export function keysSummaryText(t: KeysTotals): string {
  const what = `${count(t.keys, 'signing key')} of ${count(t.versions, 'version')} of ${count(t.providers, 'provider')}`;
  return t.flagged === 0 ? `Keys: ${what}; none flagged.` : `Keys: ${what}; ${t.flagged} flagged.`;
}

const findingJSON = (f: KeyFinding): Record<string, unknown> => ({
  code: f.code,
  message: f.message,
  flagged: f.flagged,
  versions: f.versions.map(String),
  ...(f.keyId === undefined ? {} : { key_id: f.keyId }),
  ...(f.reasons === undefined ? {} : { reasons: f.reasons }),
});

/** Which policy judged a provider, for the roots that asked (`-json`). */
const judgedJSON = (p: ProviderKeys): Record<string, unknown> => ({
  policy: p.policy,
  policy_file: p.policyFile ?? null,
  roots: p.roots ?? null,
});

/** The `-json` messages: per provider a `signing_key` per key, then `keys_provider`; then `keys_summary`. */
export function renderKeysJSON(outcome: KeysOutcome, totals: KeysTotals, ui: JsonUI): void {
  for (const p of outcome.providers) {
    const provider = p.provider.toString();
    for (const k of p.keys) {
      const findings = p.findings.filter((f) => f.keyId === k.keyId);
      const locked = new Set(p.versions.filter((v) => v.locked).map((v) => v.version.toString()));
      ui.message(
        findings.some((f) => f.flagged) ? 'error' : 'info',
        `${provider}: key ${k.keyId}, expires ${keyExpiresText(k)}, signs ${k.versions.map(String).join(', ')}`,
        'signing_key',
        {
          provider,
          key_id: k.keyId,
          fingerprint: k.fingerprint ?? null,
          key_expires: k.keyExpires ?? null,
          expired: k.expired,
          trusted: k.trusted ?? null,
          versions: k.versions.map(String),
          locked_versions: k.versions.map(String).filter((v) => locked.has(v)),
          findings: findings.map(findingJSON),
          ...judgedJSON(p),
        },
      );
    }
    ui.message(
      p.findings.some((f) => f.flagged) ? 'error' : 'info',
      `${provider}: ${versionsSummary(p)}`,
      'keys_provider',
      {
        provider,
        versions: p.versions.map((v) => ({
          version: v.version.toString(),
          locked: v.locked,
          key_id: v.signature.kind === 'signed' ? v.signature.keyId : null,
          not_signed_reason: v.signature.kind === 'not-signed' ? v.signature.reason : null,
        })),
        findings: p.findings.map(findingJSON),
        ...judgedJSON(p),
      },
    );
  }
  ui.message(totals.flagged === 0 ? 'info' : 'error', keysSummaryText(totals), 'keys_summary', {
    providers: totals.providers,
    keys: totals.keys,
    versions: totals.versions,
    flagged: totals.flagged,
    pass: totals.flagged === 0,
  });
}
