/**
 * Who vouches for a hash: the one vocabulary of provenance (docs/provenance.md),
 * OpenTofu's per-hash dispositions as typed data (opentofu/opentofu
 * rfc/20250327-providerinst-auth-hashes.md, `HashDisposition`), with what a
 * reviewer needs beside each: the signing key and its expiry, the document,
 * file or URL the hash came from.
 *
 * - `signed`: a `zh:` listed in a SHA256SUMS document whose detached
 *   signature verified, with the key ID (16 upper-case hex digits), the key's
 *   expiry (ISO 8601, `null` for never) and the document's URL;
 * - `verified-locally`: computed here from bytes whose `zh:` a verified
 *   signature covered (the archive's `zh:`, both `h1:` forms of it), with
 *   where the bytes came from and the signing key;
 * - `computed-locally`: computed here from bytes nobody signed (a filesystem
 *   mirror's archive, a network or OCI mirror's download, a registry package
 *   whose signature check OpenTofu skipped), with the path or URL. The
 *   reference calls both of these `VerifiedLocally`;
 * - `reported-by-registry`: a registry said so and nothing here recomputed it
 *   (OpenTofu 1.12's `packages` hashes, opentofu/opentofu
 *   rfc/20251027-provider-registry-hashes.md; a SHA256SUMS whose signature
 *   check was skipped; the download's `shasum`);
 * - `reported-by-mirror`: a network or OCI mirror's listed hashes
 *   (`trust_all_hashes`), not checked against bytes.
 *
 * A hash has zero or more dispositions: none means no source vouches for it
 * now (what `provkit audit` calls unvouched). Every other module names these
 * kinds through this one: `Trust` of the sources is a {@link Disposition},
 * the lock's recording rule (lockfile/record.ts) switches on
 * {@link DispositionKind}, the hash store keeps {@link StoredDisposition}s.
 */
import type { Hash } from './hash.js';

/** See the module comment. */
export type Disposition =
  | {
      readonly kind: 'signed';
      /** The primary key's ID, 16 upper-case hex digits. */
      readonly keyId: string;
      /** When the key expires (ISO 8601), `null` when it does not, undefined when not known. */
      readonly keyExpires?: string | null;
      /** True when the key (or the signature) had expired when it was checked (OpenTofu tolerates it with a warning). */
      readonly expired?: boolean;
      /** The SHA256SUMS document's URL. */
      readonly url?: string;
    }
  | {
      readonly kind: 'verified-locally';
      /** Where the bytes came from (URL or path), when known. */
      readonly from?: string;
      /** The key whose signature covered the bytes' `zh:`, when known. */
      readonly keyId?: string;
    }
  | { readonly kind: 'computed-locally'; readonly from?: string }
  | { readonly kind: 'reported-by-registry'; readonly url?: string }
  | { readonly kind: 'reported-by-mirror'; readonly mirror: string };

/** The kinds, strongest first (the order dispositions are listed in). */
export const DISPOSITION_KINDS = [
  'signed',
  'verified-locally',
  'computed-locally',
  'reported-by-registry',
  'reported-by-mirror',
] as const;

/** One of {@link DISPOSITION_KINDS}. */
export type DispositionKind = (typeof DISPOSITION_KINDS)[number];

/** Whether `text` is a disposition kind (policy files and store entries name them). */
export function isDispositionKind(text: string): text is DispositionKind {
  return (DISPOSITION_KINDS as readonly string[]).includes(text);
}

/** Whether the disposition says the hash was computed here from bytes (either local kind). */
export function isLocal(d: Pick<Disposition, 'kind'>): boolean {
  return d.kind === 'verified-locally' || d.kind === 'computed-locally';
}

/** Whether the disposition is a report nobody here checked (either reported kind). */
export function isReported(d: Pick<Disposition, 'kind'>): boolean {
  return d.kind === 'reported-by-registry' || d.kind === 'reported-by-mirror';
}

/** A hash with everything that vouches for it. */
export interface HashDispositions {
  /** The hash vouched for (as the lock file or the source wrote it; an unknown scheme kept as text). */
  readonly hash: Hash;
  /** Sorted strongest first, without duplicates; empty: nobody vouches for it. */
  readonly dispositions: readonly Disposition[];
}

/** A stable identity of a disposition, for de-duplication. */
function identity(d: Disposition): string {
  switch (d.kind) {
    case 'signed':
      return `signed ${d.keyId} ${d.url ?? ''}`;
    case 'verified-locally':
      return `verified-locally ${d.from ?? ''} ${d.keyId ?? ''}`;
    case 'computed-locally':
      return `computed-locally ${d.from ?? ''}`;
    case 'reported-by-registry':
      return `reported-by-registry ${d.url ?? ''}`;
    case 'reported-by-mirror':
      return `reported-by-mirror ${d.mirror}`;
  }
}

/** `ds` strongest kind first (stable within a kind), without duplicates. */
export function sortDispositions(ds: Iterable<Disposition>): Disposition[] {
  const seen = new Map<string, Disposition>();
  for (const d of ds) if (!seen.has(identity(d))) seen.set(identity(d), d);
  const rank = (d: Disposition): number => DISPOSITION_KINDS.indexOf(d.kind);
  return [...seen.values()].sort((a, b) => rank(a) - rank(b));
}

/**
 * Groups `(hash, disposition)` pairs by hash: one {@link HashDispositions}
 * per distinct hash text, in first-seen order; a pair whose disposition is
 * undefined only makes its hash known (nobody vouches for it yet).
 */
export function groupDispositions(
  pairs: Iterable<{ readonly hash: Hash; readonly disposition?: Disposition | undefined }>,
): HashDispositions[] {
  const by = new Map<string, { hash: Hash; ds: Disposition[] }>();
  for (const p of pairs) {
    let e = by.get(p.hash.text);
    if (!e) by.set(p.hash.text, (e = { hash: p.hash, ds: [] }));
    if (p.disposition) e.ds.push(p.disposition);
  }
  return [...by.values()].map((e) => ({ hash: e.hash, dispositions: sortDispositions(e.ds) }));
}

/**
 * How a package was authenticated, in the reference's words
 * (`PackageAuthenticationResult.String`, docs/reference.md §8.5 item 120):
 * what {@link dispositionsLabel} says and the `fetch_complete` event carries.
 */
export type AuthLabel = 'signed' | 'signing skipped' | 'verified checksum' | 'unauthenticated';

/**
 * The reference's one-word summary of a package's dispositions
 * (`PackageAuthenticationResult.String`, docs/reference.md §8.5 item 120;
 * rfc/20250327-providerinst-auth-hashes.md), in priority order: `signed`,
 * `signing skipped` (registry-reported), `verified checksum` (computed
 * here), `unauthenticated`.
 */
export function dispositionsLabel(ds: Iterable<Pick<Disposition, 'kind'>>): AuthLabel {
  const kinds = new Set([...ds].map((d) => d.kind));
  if (kinds.has('signed')) return 'signed';
  if (kinds.has('reported-by-registry')) return 'signing skipped';
  if (kinds.has('verified-locally') || kinds.has('computed-locally')) return 'verified checksum';
  return 'unauthenticated';
}

/**
 * One disposition in words, for people (`signed by key 34365D9472D7468F,
 * expires never`); `-json` carries the fields ({@link dispositionJSON}).
 */
export function dispositionText(d: Disposition): string {
  switch (d.kind) {
    case 'signed': {
      const expires =
        d.keyExpires === undefined ? '' : `, ${d.expired ? 'expired' : 'expires'} ${d.keyExpires ?? 'never'}`;
      return `signed by key ${d.keyId}${expires}`;
    }
    case 'verified-locally':
      return 'verified locally';
    case 'computed-locally':
      return 'computed locally';
    case 'reported-by-registry':
      return 'reported by the registry';
    case 'reported-by-mirror':
      return `reported by the mirror ${d.mirror}`;
  }
}

/**
 * Who vouches for a hash, in words (`provkit audit`'s table, `verify`'s
 * package lines): its dispositions, strongest first, `; `-separated, a
 * `verified-locally` one with its key; `nobody` when there are none.
 */
export function vouchersText(ds: readonly Disposition[]): string {
  if (ds.length === 0) return 'nobody';
  return ds
    .map((d) => {
      const text = dispositionText(d);
      if (d.kind === 'verified-locally' && d.keyId !== undefined) return `${text} (key ${d.keyId})`;
      return text;
    })
    .join('; ');
}

/** A disposition as `-json` and SARIF carry it: `kind` and its fields in snake case, absent ones left out. */
export function dispositionJSON(d: Disposition): Record<string, string | boolean | null> {
  switch (d.kind) {
    case 'signed':
      return {
        kind: d.kind,
        key_id: d.keyId,
        ...(d.keyExpires === undefined ? {} : { key_expires: d.keyExpires }),
        ...(d.expired === undefined ? {} : { expired: d.expired }),
        ...(d.url === undefined ? {} : { url: d.url }),
      };
    case 'verified-locally':
      return {
        kind: d.kind,
        ...(d.from === undefined ? {} : { from: d.from }),
        ...(d.keyId === undefined ? {} : { key_id: d.keyId }),
      };
    case 'computed-locally':
      return { kind: d.kind, ...(d.from === undefined ? {} : { from: d.from }) };
    case 'reported-by-registry':
      return { kind: d.kind, ...(d.url === undefined ? {} : { url: d.url }) };
    case 'reported-by-mirror':
      return { kind: d.kind, mirror: d.mirror };
  }
}

/**
 * A disposition as the hash store keeps it beside an entry
 * (hashing/store.ts): what vouched for the archive's bytes, and when
 * (ISO 8601).
 */
export type StoredDisposition = Disposition & { readonly at: string };

/** A stored disposition read back from JSON, or undefined when it is not one (an entry written by another version). */
export function storedDispositionFrom(raw: unknown): StoredDisposition | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const r = raw as Record<string, unknown>;
  const str = (k: string): string | undefined => (typeof r[k] === 'string' ? r[k] : undefined);
  const at = str('at');
  const kind = str('kind');
  if (at === undefined || Number.isNaN(Date.parse(at)) || kind === undefined || !isDispositionKind(kind))
    return undefined;
  const opt = (k: string, as: string = k): Record<string, string> => {
    const v = str(k);
    return v === undefined ? {} : { [as]: v };
  };
  switch (kind) {
    case 'signed': {
      const keyId = str('keyId');
      if (keyId === undefined || !/^[0-9A-F]{16}$/.test(keyId)) return undefined;
      const expires = r['keyExpires'];
      return {
        kind,
        at,
        keyId,
        ...(expires === null || typeof expires === 'string' ? { keyExpires: expires } : {}),
        ...(typeof r['expired'] === 'boolean' ? { expired: r['expired'] } : {}),
        ...opt('url'),
      };
    }
    case 'verified-locally':
      return { kind, at, ...opt('from'), ...opt('keyId') };
    case 'computed-locally':
      return { kind, at, ...opt('from') };
    case 'reported-by-registry':
      return { kind, at, ...opt('url') };
    case 'reported-by-mirror': {
      const mirror = str('mirror');
      return mirror === undefined ? undefined : { kind, at, mirror };
    }
  }
}
