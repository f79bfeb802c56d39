/**
 * `provkit audit`: who vouches for every hash of a lock file
 * (docs/provenance.md). For each provider version whose hashes are audited,
 * the dispositions (hashing/disposition.ts) are derived again from the
 * sources, never taken from the lock file or remembered:
 *
 * - the registry's signed SHA256SUMS (one `packageMeta`: its lines are
 *   `signed` by the key whose signature verified, or `reported-by-registry`
 *   when the check was skipped) and OpenTofu's `packages` hashes
 *   (`reported-by-registry`, with their platform);
 * - the packages' bytes: every platform whose SHA256SUMS `zh:` the lock
 *   holds, or whose reported `h1:` is audited, is hashed — from the hash
 *   store when it has the signed `zh:` (content-keyed, so no download),
 *   else downloaded and authenticated (`fetchPackage`) — and its `zh:` and
 *   both `h1:` forms are `verified-locally` (a verified signature covered
 *   the `zh:`) or `computed-locally`; when an audited `h1:` is still
 *   unexplained, the version's other platforms are hashed too;
 * - a reported `h1:` of a platform whose package hashed here to another
 *   `h1:` is contradicted.
 *
 * With a base (`-base=REV`, the lock file as the revision had it) only
 * what changed is audited: a new provider's or a changed version's hashes,
 * and hashes added to an unchanged version; removed hashes, removed
 * providers and version changes are listed ({@link lockChanges}). A
 * provider version with nothing to audit costs no request.
 *
 * The policy (config/audit-policy.ts `judgeHash`) decides each hash. A
 * fault of a source (registry down, a signature that does not verify) is
 * an error of the run (thrown), never a pass.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import pLimit from 'p-limit';

import type { Flavor, Platform, ProviderAddress, Version } from '../addresses/index.js';
import { type AuditPolicy, auditRuleFor, type HashJudgement, judgeHash } from '../config/audit-policy.js';
import { removeOnExit } from '../fs/cleanup.js';
import {
  type Disposition,
  type Hash,
  type HashPool,
  type HashStore,
  sortDispositions,
  type ZipPackageHashes,
} from '../hashing/index.js';
import type { Locks, ProviderLock } from '../lockfile/index.js';
import type { HttpClient } from '../net/index.js';
import {
  dispositionsOf,
  expectedZh,
  fetchPackage,
  localDisposition,
  type PackageMeta,
  poolHashing,
  type Source,
  type TrustedHash,
} from '../sources/index.js';

/** What changed in a lock file against its base. */
export type AuditChange =
  | { readonly kind: 'provider-added'; readonly provider: ProviderAddress; readonly version: Version }
  | { readonly kind: 'provider-removed'; readonly provider: ProviderAddress; readonly version: Version }
  | {
      readonly kind: 'version-changed';
      readonly provider: ProviderAddress;
      readonly from: Version;
      readonly version: Version;
    }
  | {
      readonly kind: 'hash-removed';
      readonly provider: ProviderAddress;
      readonly version: Version;
      readonly hash: Hash;
    };

/** What {@link lockChanges} finds: the changes, and per provider the hashes to audit. */
export interface LockDelta {
  readonly changes: readonly AuditChange[];
  /** The provider locks with hashes to audit, and those hashes (all of them without a base). */
  readonly audit: ReadonlyArray<{ readonly lock: ProviderLock; readonly hashes: readonly Hash[] }>;
}

/**
 * What changed from `base` to `current` and which hashes must be derived
 * again (see the module comment); without a base, every hash of every
 * provider. Pure.
 */
export function lockChanges(current: Locks, base?: Locks): LockDelta {
  if (base === undefined)
    return { changes: [], audit: current.all().map((lock) => ({ lock, hashes: [...lock.hashes] })) };
  const changes: AuditChange[] = [];
  const audit: Array<{ lock: ProviderLock; hashes: Hash[] }> = [];
  for (const lock of current.all()) {
    const old = base.provider(lock.provider);
    if (old === undefined) {
      changes.push({ kind: 'provider-added', provider: lock.provider, version: lock.version });
      audit.push({ lock, hashes: [...lock.hashes] });
      continue;
    }
    if (!old.version.equals(lock.version)) {
      changes.push({ kind: 'version-changed', provider: lock.provider, from: old.version, version: lock.version });
      audit.push({ lock, hashes: [...lock.hashes] });
      continue;
    }
    const had = new Set(old.hashes.map((h) => h.text));
    const has = new Set(lock.hashes.map((h) => h.text));
    for (const h of old.hashes)
      if (!has.has(h.text))
        changes.push({ kind: 'hash-removed', provider: lock.provider, version: lock.version, hash: h });
    const added = lock.hashes.filter((h) => !had.has(h.text));
    if (added.length > 0) audit.push({ lock, hashes: added });
  }
  for (const old of base.all())
    if (current.provider(old.provider) === undefined)
      changes.push({ kind: 'provider-removed', provider: old.provider, version: old.version });
  return { changes, audit };
}

/** One package hashed here: its platform, its hashes, and what they are (verified or computed locally). */
export interface HashedPackage {
  readonly platform: Platform;
  readonly hashes: ZipPackageHashes;
  readonly disposition: Disposition;
}

/** What one hash of a provider version is, as derived from the sources. */
export interface DerivedHash {
  readonly hash: Hash;
  /** The platform whose package it is a hash of, when known. */
  readonly platform?: Platform;
  /** Strongest first; empty: nobody vouches for it. */
  readonly dispositions: readonly Disposition[];
  /** A reported hash of a platform whose package hashed here to this other hash. */
  readonly contradictedBy?: string;
}

/**
 * The dispositions of `hashes` given what the source reported (SHA256SUMS
 * lines with their file, OpenTofu `packages` hashes with their platform)
 * and the packages hashed here: a hash a package's bytes gave is what that
 * package's `zh:` was (verified or computed locally); a `zh:` a SHA256SUMS
 * line names is that line's; a reported one is reported. Pure.
 */
export function deriveDispositions(
  hashes: readonly Hash[],
  reported: readonly TrustedHash[],
  hashed: readonly HashedPackage[],
  platformOfFile: (file: string) => Platform | undefined,
): DerivedHash[] {
  return hashes.map((hash) => {
    const ds: Disposition[] = [];
    let platform: Platform | undefined;
    for (const r of reported) {
      if (r.hash.text !== hash.text) continue;
      ds.push(r.trust);
      platform ??= r.platform ?? (r.file === undefined ? undefined : platformOfFile(r.file));
    }
    for (const p of hashed) {
      const own = hashTexts(p.hashes).includes(hash.text);
      if (!own) continue;
      ds.push(p.disposition);
      platform ??= p.platform;
    }
    const sorted = sortDispositions(ds);
    const reportedOnly = sorted.length > 0 && sorted.every((d) => d.kind.startsWith('reported-'));
    const hashedHere = platform === undefined ? undefined : hashed.find((p) => p.platform.equals(platform));
    const contradictedBy =
      reportedOnly && hashedHere !== undefined
        ? hash.scheme === 'zh:'
          ? hashedHere.hashes.zh.text
          : hash.scheme === 'h1:' && hashedHere.hashes.h1.ok
            ? hashedHere.hashes.h1.hash.text
            : undefined
        : undefined;
    return {
      hash,
      ...(platform === undefined ? {} : { platform }),
      dispositions: sorted,
      ...(contradictedBy === undefined ? {} : { contradictedBy }),
    };
  });
}

/** The texts of a package's `zh:` and of the `h1:` forms that could be computed. */
function hashTexts(p: ZipPackageHashes): string[] {
  return [p.zh.text, ...[p.h1, p.h1Zip].flatMap((f) => (f.ok ? [f.hash.text] : []))];
}

/** What a hash derived from the hash store's entry says it came from. */
export const STORE_FROM = 'the hash store';

/** One audited hash with its verdict. */
export interface AuditedHash extends DerivedHash {
  readonly provider: ProviderAddress;
  readonly version: Version;
  readonly judgement: HashJudgement;
  /** Where the settings that judged it come from (`the default policy`, `provkit.hcl provider "…"`). */
  readonly policy: string;
}

/** What {@link runAudit} needs. */
export interface AuditOptions {
  readonly locks: Locks;
  /** The lock file at the base revision (`-base`): only what changed is audited. */
  readonly base?: Locks;
  readonly source: Source;
  /** Whether the source is a mirror (every provider is then mirror-only: `computed-locally` counts by default). */
  readonly mirrorOnly?: boolean;
  readonly pool: HashPool;
  readonly http?: HttpClient;
  readonly hashStore?: HashStore;
  readonly policy?: AuditPolicy;
  readonly flavor: Flavor;
  readonly signal?: AbortSignal;
  /** Parallel downloads (default 4). */
  readonly networkConcurrency?: number;
  /** Shared by the roots of a tree: each provider version is derived once per run. */
  readonly cache?: AuditCache;
}

/** Derivations of provider versions, shared between the audits of one run (see {@link AuditOptions.cache}). */
export type AuditCache = Map<string, Promise<VersionEvidence>>;

/** What the sources say about one provider version, and which packages were hashed. */
export interface VersionEvidence {
  readonly reported: readonly TrustedHash[];
  readonly hashed: readonly HashedPackage[];
  readonly platformOfFile: (file: string) => Platform | undefined;
  /** The platforms the version is published for. */
  readonly platforms: readonly Platform[];
}

/** The result of {@link runAudit}. */
export interface AuditOutcome {
  readonly hashes: readonly AuditedHash[];
  readonly changes: readonly AuditChange[];
  /** Packages downloaded by this audit (store hits are not). */
  readonly downloads: number;
}

/** See the module comment. @throws {ProvkitError} when a source fails. */
export async function runAudit(options: AuditOptions): Promise<AuditOutcome> {
  const delta = lockChanges(options.locks, options.base);
  const cache: AuditCache = options.cache ?? new Map<string, Promise<VersionEvidence>>();
  let downloads = 0;
  const counted = { ...options, onDownload: () => (downloads += 1) };
  const audited = await Promise.all(
    delta.audit.map(async ({ lock, hashes }) => {
      const key = `${lock.provider.toComparisonString()} ${lock.version.toString()}`;
      let evidence = cache.get(key);
      if (evidence === undefined) cache.set(key, (evidence = versionEvidence(counted, lock, hashes)));
      let ev = await evidence;
      // Another root derived it for other hashes: hash the rest of the version if these need it.
      if (unexplainedH1(hashes, ev).length > 0 && ev.hashed.length < ev.platforms.length) {
        cache.set(key, (evidence = versionEvidence(counted, lock, hashes, ev)));
        ev = await evidence;
      }
      const rule = auditRuleFor(options.policy, lock.provider, options.flavor, options.mirrorOnly === true);
      const expired = new Map<string, boolean>();
      for (const r of ev.reported)
        if (r.trust.kind === 'signed' && r.trust.expired !== undefined) expired.set(r.trust.keyId, r.trust.expired);
      return deriveDispositions(hashes, ev.reported, ev.hashed, ev.platformOfFile).map((d): AuditedHash => ({
        ...d,
        provider: lock.provider,
        version: lock.version,
        policy: rule.from,
        judgement: judgeHash(rule, d.dispositions, {
          keyExpired: (k) => expired.get(k),
          ...(d.contradictedBy === undefined ? {} : { contradictedBy: d.contradictedBy }),
        }),
      }));
    }),
  );
  return { hashes: audited.flat(), changes: delta.changes, downloads };
}

/** Audited `h1:` hashes no package hashed here gave. */
function unexplainedH1(hashes: readonly Hash[], ev: Pick<VersionEvidence, 'hashed'>): Hash[] {
  const known = new Set(ev.hashed.flatMap((p) => hashTexts(p.hashes)));
  return hashes.filter((h) => h.scheme === 'h1:' && !known.has(h.text));
}

async function versionEvidence(
  o: AuditOptions & { readonly onDownload: () => void },
  lock: ProviderLock,
  audited: readonly Hash[],
  before?: VersionEvidence,
): Promise<VersionEvidence> {
  const { provider, version } = lock;
  const published =
    (await o.source.publishedPlatforms?.(provider, version, o.signal)) ??
    (await o.source.localPlatforms?.(provider, version)) ??
    [];
  if (published.length === 0) return { reported: [], hashed: [], platformOfFile: () => undefined, platforms: [] };
  const metas = new Map<string, Promise<PackageMeta>>();
  const metaOf = (p: Platform): Promise<PackageMeta> => {
    let m = metas.get(p.toString());
    if (m === undefined) metas.set(p.toString(), (m = o.source.packageMeta(provider, version, p, o.signal)));
    return m;
  };
  // One platform's metadata carries the version's SHA256SUMS (every platform's zh:) and OpenTofu's packages.
  const first = await metaOf(published[0]!);
  const reported = first.reportedHashes;
  const platformOfFile = (file: string): Platform | undefined =>
    published.find((p) => file.endsWith(`_${p.toString()}.zip`));
  const zhOf = new Map<string, Hash>();
  for (const r of reported) {
    const p = r.platform ?? (r.file === undefined ? undefined : platformOfFile(r.file));
    if (p !== undefined && r.hash.scheme === 'zh:' && !zhOf.has(p.toString())) zhOf.set(p.toString(), r.hash);
  }
  // The packages the audited hashes name: their zh: (a SHA256SUMS line) or their platform (a report).
  const auditedText = new Set(audited.map((h) => h.text));
  const wanted = new Set<string>();
  for (const p of published) {
    const zh = zhOf.get(p.toString());
    if (zh !== undefined && auditedText.has(zh.text)) wanted.add(p.toString());
  }
  for (const r of reported)
    if (r.platform !== undefined && auditedText.has(r.hash.text)) wanted.add(r.platform.toString());

  const dir = await mkdtemp(join(tmpdir(), 'provkit-audit-'));
  const forget = removeOnExit(dir);
  const limit = pLimit(o.networkConcurrency ?? 4);
  const hashed: HashedPackage[] = [...(before?.hashed ?? [])];
  const done = new Set(hashed.map((p) => p.platform.toString()));
  const hashAll = (names: Iterable<string>): Promise<void[]> =>
    Promise.all(
      [...names]
        .filter((n) => !done.has(n))
        .map((n) => {
          done.add(n);
          return limit(async () => {
            const platform = published.find((p) => p.toString() === n)!;
            const meta = await metaOf(platform);
            const zh = expectedZh(meta);
            const stored = zh && (await o.hashStore?.get(zh));
            if (stored) {
              // Content-keyed: these are the hashes of the bytes whose zh: the source vouches for now.
              const local = localDisposition(meta);
              const disposition: Disposition =
                local.kind === 'verified-locally'
                  ? { ...local, from: STORE_FROM }
                  : { kind: 'computed-locally', from: STORE_FROM };
              hashed.push({ platform, hashes: stored, disposition });
              return;
            }
            o.onDownload();
            const got = await fetchPackage(meta, {
              destPath: join(dir, n),
              ...(o.http === undefined ? {} : { http: o.http }),
              ...(o.signal === undefined ? {} : { signal: o.signal }),
              hashing: poolHashing(o.pool, o.hashStore),
            });
            if (got.kind !== 'archive') return;
            // Kept for the next audit, lock or mirror (content-keyed by the zh:, with who vouched for it).
            if (got.stored !== true)
              await o.hashStore?.put(got.zipHashes, n, dispositionsOf(got.hashes, got.zipHashes.zh));
            hashed.push({ platform, hashes: got.zipHashes, disposition: localDisposition(meta) });
          });
        }),
    );
  try {
    await hashAll(wanted);
    // An h1: reported for a platform whose package was hashed is that package's or contradicted;
    // any other unexplained one may be any platform's package.
    const attributed = (h: Hash): boolean =>
      reported.some(
        (r) => r.hash.text === h.text && r.platform !== undefined && hashed.some((p) => p.platform.equals(r.platform!)),
      );
    if (unexplainedH1(audited, { hashed }).some((h) => !attributed(h))) await hashAll(published.map(String));
  } finally {
    forget();
    await rm(dir, { recursive: true, force: true });
  }
  hashed.sort((a, b) => (a.platform.toString() < b.platform.toString() ? -1 : 1));
  return { reported, hashed, platformOfFile, platforms: published };
}
