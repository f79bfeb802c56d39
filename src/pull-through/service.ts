/**
 * The pull-through mirror (docs/fleet-mirror.md): the provider network
 * mirror protocol (docs/reference.md §4.3) answered for the providers of
 * allowed origin registries, from a store that fills itself.
 *
 * - `index.json`: the origin's versions (origin.ts: kept `versionsTtl`,
 *   served stale when the origin cannot be reached). Offline: the versions
 *   the store holds.
 * - `VERSION.json`: every platform the origin publishes the version for.
 *   A stored platform lists the `zh:` and both `h1:` forms of the stored
 *   archive (computed from its bytes), when that `zh:` is the one the
 *   origin's signed SHA256SUMS gives; a platform not stored yet lists that
 *   signed `zh:` and, when this machine's hash store knows the archive, its
 *   `h1:` forms. The URL of each is the packed file name, which the same
 *   server answers. Offline: the stored platforms.
 * - An archive: served from the store when stored with the signed `zh:`;
 *   otherwise fetched from the origin, **verified before anything is stored
 *   or served** (sources/fetch/authenticate.ts: the archive's SHA-256 against the
 *   signed SHA256SUMS, whose signature the registry source checked, and the
 *   signature policy of policy.ts), hashed (`zh:`, both `h1:` forms, into
 *   the hash store), refused if no client could install it
 *   (archive-check.ts), stored (store.ts), and then served from the store.
 *   Concurrent requests for one package share one fetch (single flight):
 *   they wait for it and are served the stored archive, never a part of
 *   one. A failure is not kept: the next request fetches again.
 * - Refusals and failures are statuses with one line of text
 *   ({@link answerFor}): 403 outside the allow-list or the signature policy,
 *   404 what the origin does not have, 502 an origin that failed (504 one
 *   that stalled), 503 a store that failed. When the origin cannot be
 *   reached, what the store holds is still served (`X-Provkit-Origin:
 *   unavailable`).
 * - `/healthz` (200 `ok`, 503 while closing) and `/metrics` (metrics.ts).
 *
 * Every answer says where it came from in `X-Provkit-Origin`: `fresh` (the
 * origin was asked for it), `cached` (within the time to live), `stale`
 * (kept past it: the origin failed), `unavailable` (the origin failed and
 * only the store answered), `offline`.
 *
 * Provenance (docs/fleet-mirror.md, "Provenance"): each platform's entry
 * of a served `VERSION.json` carries, beside `hashes` and `url`, the field
 * {@link DISPOSITIONS_FIELD}: for each hash, who vouches for it
 * (hashing/disposition.ts, in `-json`'s form): the key that signed the
 * origin's SHA256SUMS for the `zh:` (from the metadata verified now, and
 * from what this machine's hash store recorded when the archive was
 * fetched), and for the hashes computed here from the bytes,
 * `verified-locally` by that key, or `computed-locally` when no signature
 * is known for them (an `-offline` store without a hash store's record).
 * terraform and tofu ignore the field (Go's `encoding/json` skips unknown
 * fields; recorded with terraform 1.11.4 in
 * test/fixtures/terraform-pull-through/).
 */
import { createHash } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';

import type { ProviderAddress } from '../addresses/index.js';
import { type Platform, type Version } from '../addresses/index.js';
import { asProvkitError, ErrorCode, isProvkitError, type ProvkitError } from '../errors.js';
import { goEscape, goOneLine } from '../go/index.js';
import {
  type Disposition,
  dispositionJSON,
  groupDispositions,
  type Hash,
  isLocal,
  type HashPool,
  type HashStore,
  normalizeHashes,
  type StoredDisposition,
  type ZipPackageHashes,
} from '../hashing/index.js';
import {
  downloadName,
  mirrorIndexJSON,
  mirrorVersionJSON,
  packedFileName,
  parseMirrorRequest,
} from '../layout/index.js';
import { type HttpClient, redactURL } from '../net/index.js';
import {
  checkFetchedFor,
  expectedZh,
  fetchPackage,
  type PackageMeta,
  poolHashing,
  type Source,
  type TrustedHash,
} from '../sources/index.js';
import { requireMirrorable } from '../installer/archive-check.js';
import type { AccessLogEntry, Answer, ResourceCatalog, StatusAnswer } from '../serve/server.js';
import type { Resource } from '../serve/catalog.js';
import { METRICS_CONTENT_TYPE, MirrorMetrics, type RequestKind, type RequestResult } from './metrics.js';
import { type Freshness, type Kept, OriginView } from './origin.js';
import { type OriginPolicy, providerAllowed } from './policy.js';
import type { PackageStore, StoredPackage } from './store.js';

export interface PullThroughOptions {
  readonly policy: OriginPolicy;
  /** The origin registries; absent: offline, only what the store holds is served. */
  readonly origin?: {
    /** The registry source (not memoised; sources/from-cli-config.ts `registrySourceFor`). */
    readonly source: Source;
    /** The HTTP client archives are fetched with (its fetch guarded: destinations.ts). */
    readonly http: HttpClient;
    readonly versionsTtlMs: number;
    readonly metadataTtlMs?: number;
  };
  readonly store: PackageStore;
  readonly pool: HashPool;
  readonly hashStore?: HashStore;
  readonly metrics?: MirrorMetrics;
  /** How long {@link PullThroughService.close} waits for fetches in progress (default 60 s). */
  readonly drainMs?: number;
  /** The fetch log: one entry per package fetched from an origin, stored or failed. */
  readonly onFetch?: (e: FetchLogEntry) => void;
  /** Something the operator should hear about that no request failed for (a stored archive that is not the signed one). */
  readonly onWarning?: (message: string, fields: Readonly<Record<string, string>>) => void;
  readonly now?: () => number;
}

/** One line of the fetch log. */
export interface FetchLogEntry {
  /** ISO 8601 UTC, when the fetch ended. */
  readonly time: string;
  readonly provider: string;
  readonly version: string;
  readonly platform: string;
  readonly result: 'stored' | 'failed';
  /** Archive bytes received. */
  readonly bytes?: number;
  readonly durationMs: number;
  /** The archive's `zh:` (stored). */
  readonly zh?: string;
  /** The key that signed its SHA256SUMS. */
  readonly keyId?: string;
  /** Where it was fetched from (the final URL). */
  readonly from?: string;
  /** Requests that waited for this fetch besides the one that started it. */
  readonly waiters: number;
  readonly code?: string;
  readonly error?: string;
}

/** The field of a served `VERSION.json` archive entry that says who vouches for each hash (see the module comment). */
export const DISPOSITIONS_FIELD = 'provkit_dispositions';

/** A platform's entry of `VERSION.json`, with who vouches for each hash. */
export interface ArchiveEntry {
  readonly platform: Platform;
  readonly hashes: readonly Hash[];
  readonly url: string;
  /** Why each hash is believed (sources/source.ts `Trust`). */
  readonly trust: readonly TrustedHash[];
}

const JSON_TYPE = 'application/json';
const ZIP_TYPE = 'application/zip';

const etagOf = (body: Buffer): string => `"${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"`;

/** The worst of several freshnesses (stale over fresh over cached). */
function worst(states: readonly Freshness[]): Freshness {
  if (states.includes('stale')) return 'stale';
  if (states.includes('fresh')) return 'fresh';
  return 'cached';
}

const RESULT_OF: Record<Freshness, RequestResult> = { fresh: 'miss', cached: 'hit', stale: 'stale' };

/** Store failures, told apart from the origin's (both may carry NET_* codes). */
const storeFailures = new WeakSet<ProvkitError>();
function storeFailure(err: unknown): ProvkitError {
  const e = asProvkitError(err);
  storeFailures.add(e);
  return e;
}

/**
 * The status, the result and the first words of the answer to a request
 * that failed with `err` (see the module comment).
 */
export function answerFor(err: unknown): StatusAnswer {
  const e = asProvkitError(err);
  const text = goEscape(goOneLine(e.message));
  const status = (status: number, result: RequestResult, lead: string): StatusAnswer => ({
    kind: 'status',
    status,
    message: `${lead}: ${text}`,
    result,
    headers: { 'X-Provkit-Error': e.code },
  });
  if (storeFailures.has(e)) return status(503, 'store_error', 'the mirror could not store the package');
  switch (e.code) {
    case ErrorCode.UPSTREAM_NOT_ALLOWED:
    case ErrorCode.UPSTREAM_UNTRUSTED:
    case ErrorCode.NET_REFUSED:
      return status(403, 'refused', 'refused by the mirror');
    case ErrorCode.REGISTRY_PROVIDER_UNKNOWN:
    case ErrorCode.PROVIDER_NOT_FOUND:
    case ErrorCode.PLATFORM_NOT_SUPPORTED:
    case ErrorCode.NOT_FOUND:
      return status(404, 'not_found', 'not found at the origin');
    case ErrorCode.NET_TIMEOUT:
      return status(504, 'origin_error', 'the origin registry did not answer in time');
    case ErrorCode.ABORTED:
      return status(503, 'error', 'the mirror is shutting down');
    case ErrorCode.IO:
      // A fetch writes into the store's work directory: a file system that refuses is the store's.
      return status(503, 'store_error', 'the mirror could not store the package');
    case ErrorCode.INTERNAL:
      return status(500, 'error', 'internal error');
    default:
      // The origin's answer was unusable: an HTTP status, a reset, a bad signature, a checksum, an archive no client could install.
      return status(502, 'origin_error', 'the origin registry failed');
  }
}

/** Whether `err` says the origin could not be reached or answered badly (not "no such thing", not a refusal). */
function originFailed(err: unknown): boolean {
  return answerFor(err).result === 'origin_error';
}

/** See the module comment. */
export class PullThroughService implements ResourceCatalog {
  readonly metrics: MirrorMetrics;
  private readonly origin: OriginView | undefined;
  /** Fetches in progress by package, with the requests waiting for each. */
  private readonly flights = new Map<string, { promise: Promise<void>; waiters: number }>();
  /** Documents being computed, shared by concurrent requests for the same one. */
  private readonly docs = new Map<string, Promise<Answer | undefined>>();
  private readonly stopping = new AbortController();
  private closing = false;
  private closed: Promise<void> | undefined;

  constructor(private readonly options: PullThroughOptions) {
    this.metrics = options.metrics ?? new MirrorMetrics();
    const o = options.origin;
    this.origin =
      o === undefined
        ? undefined
        : new OriginView({
            source: o.source,
            policy: options.policy,
            versionsTtlMs: o.versionsTtlMs,
            ...(o.metadataTtlMs === undefined ? {} : { metadataTtlMs: o.metadataTtlMs }),
            signal: this.stopping.signal,
            ...(options.now ? { now: options.now } : {}),
            onRequest: (what, ok) =>
              this.metrics.add('provkit_mirror_upstream_requests_total', { what, result: ok ? 'ok' : 'error' }),
          });
    this.metrics.gauge('provkit_mirror_upstream_fetches_in_flight', () => this.flights.size);
  }

  async resolve(hostGiven: string, nsGiven: string, typeGiven: string, file: string): Promise<Answer | undefined> {
    const request = parseMirrorRequest(hostGiven, nsGiven, typeGiven, file);
    if (request === undefined) return undefined;
    const { provider } = request;
    // Offline, nothing is fetched: every provider the store holds is served.
    if (this.origin !== undefined && !providerAllowed(this.options.policy, provider)) {
      return {
        kind: 'status',
        status: 403,
        message: `refused by the mirror: ${goEscape(provider.toString())} is not in this mirror's allow-list`,
        result: 'refused',
        headers: { 'X-Provkit-Error': ErrorCode.UPSTREAM_NOT_ALLOWED },
      };
    }
    const key = `${provider.toComparisonString()}/${file}`;
    if (request.kind === 'index') return this.shared(key, () => this.indexDocument(provider));
    if (request.kind === 'version') return this.shared(key, () => this.versionDocument(provider, request.version));
    return this.archive(provider, request.version, request.platform);
  }

  resolveOther(segments: readonly string[]): Promise<Answer | undefined> {
    return Promise.resolve(this.operational(segments));
  }

  /** `/healthz` and `/metrics`. */
  private operational(segments: readonly string[]): Answer | undefined {
    if (segments.length !== 1) return undefined;
    if (segments[0] === 'healthz') {
      if (this.closing) return { kind: 'status', status: 503, message: 'closing', result: 'error' };
      const body = Buffer.from('ok\n');
      return { kind: 'bytes', contentType: 'text/plain; charset=utf-8', body, etag: etagOf(body), result: 'hit' };
    }
    if (segments[0] === 'metrics') {
      const body = Buffer.from(this.metrics.render());
      return { kind: 'bytes', contentType: METRICS_CONTENT_TYPE, body, etag: etagOf(body), result: 'hit' };
    }
    return undefined;
  }

  /** Counts an answered request (give it the server's access-log entries). */
  observe(entry: AccessLogEntry): void {
    const kind = requestKind(entry.path);
    const result = entry.result ?? (entry.status === 404 ? 'not_found' : entry.status >= 500 ? 'error' : 'hit');
    this.metrics.add('provkit_mirror_requests_total', { kind, result });
    this.metrics.add('provkit_mirror_sent_bytes_total', {}, entry.bytes);
    if (result === 'origin_error' || result === 'store_error' || result === 'error')
      this.metrics.add('provkit_mirror_errors_total', {
        source: result === 'error' ? 'mirror' : result.slice(0, -'_error'.length),
      });
  }

  /** One computation of a document for all the requests asking for it at once. */
  private shared(key: string, make: () => Promise<Answer | undefined>): Promise<Answer | undefined> {
    let p = this.docs.get(key);
    if (p === undefined) {
      p = make().catch((err: unknown) => answerFor(err));
      this.docs.set(key, p);
      void p.finally(() => this.docs.delete(key));
    }
    return p;
  }

  private json(body: string, origin: string, result: RequestResult, extra: Record<string, string> = {}): Resource {
    const bytes = Buffer.from(body);
    return {
      kind: 'bytes',
      contentType: JSON_TYPE,
      body: bytes,
      etag: etagOf(bytes),
      result,
      headers: { 'X-Provkit-Origin': origin, ...extra },
    };
  }

  /** Headers saying how old a stale answer is and why the origin was not used. */
  private staleHeaders(kept: Kept<unknown>): Record<string, string> {
    return kept.state === 'stale'
      ? {
          Age: String(Math.floor(kept.ageMs / 1000)),
          ...(kept.error ? { 'X-Provkit-Origin-Error': kept.error.code } : {}),
        }
      : {};
  }

  private async indexDocument(provider: ProviderAddress): Promise<Answer | undefined> {
    if (this.origin === undefined) {
      const versions = await this.storeCall(() => this.options.store.versions(provider, this.stopping.signal));
      return versions.length === 0 ? undefined : this.json(mirrorIndexJSON(versions), 'offline', 'hit');
    }
    let kept: Kept<readonly Version[]>;
    try {
      kept = await this.origin.versions(provider);
    } catch (err) {
      if (!originFailed(err)) return answerFor(err);
      const stored = await this.storeCall(() => this.options.store.versions(provider, this.stopping.signal));
      if (stored.length === 0) return answerFor(err);
      return this.json(mirrorIndexJSON(stored), 'unavailable', 'stale', {
        'X-Provkit-Origin-Error': asProvkitError(err).code,
      });
    }
    return this.json(mirrorIndexJSON(kept.value), kept.state, RESULT_OF[kept.state], this.staleHeaders(kept));
  }

  private async versionDocument(provider: ProviderAddress, version: Version): Promise<Answer | undefined> {
    const stored = await this.storeCall(() => this.options.store.packages(provider, version, this.stopping.signal));
    const storedEntries = (): Promise<ArchiveEntry[]> =>
      Promise.all([...stored.values()].map((s) => this.storedEntry(provider, version, s.platform, s.hashes)));
    if (this.origin === undefined)
      return stored.size === 0 ? undefined : this.json(versionJSON(await storedEntries()), 'offline', 'hit');
    let platforms: Kept<readonly Platform[]> | undefined;
    try {
      platforms = await this.origin.platforms(provider, version);
    } catch (err) {
      if (!originFailed(err) || stored.size === 0) return answerFor(err);
      return this.json(versionJSON(await storedEntries()), 'unavailable', 'stale', {
        'X-Provkit-Origin-Error': asProvkitError(err).code,
      });
    }
    if (platforms === undefined) return undefined;
    const origin = this.origin;
    const metas = await Promise.all(
      platforms.value.map((p) =>
        origin.packageMeta(provider, version, p).then(
          (kept) => ({ platform: p, kept }),
          (err: unknown) => ({ platform: p, err }),
        ),
      ),
    );
    const states: Freshness[] = [platforms.state];
    const pending: Array<Promise<ArchiveEntry>> = [];
    for (const m of metas) {
      const s = stored.get(m.platform.toString());
      if ('err' in m) {
        const a = answerFor(m.err);
        if (a.status === 404) continue;
        // One platform the origin cannot give now: its stored package still counts (verified when stored).
        if (a.result === 'origin_error' && s !== undefined) {
          states.push('stale');
          pending.push(this.storedEntry(provider, version, s.platform, s.hashes));
          continue;
        }
        for (const p of pending) p.catch(() => undefined);
        return a;
      }
      states.push(m.kept.state);
      pending.push(this.originEntry(provider, version, m.kept.value, s));
    }
    const entries = await Promise.all(pending);
    const state = worst(states);
    return this.json(versionJSON(entries), state, RESULT_OF[state], this.staleHeaders({ ...platforms, state }));
  }

  /** A platform's entry from the origin's metadata: the stored archive's hashes when it is the signed one. */
  private async originEntry(
    provider: ProviderAddress,
    version: Version,
    meta: PackageMeta,
    stored: StoredPackage | undefined,
  ): Promise<ArchiveEntry> {
    const signed = expectedZh(meta);
    if (signed === undefined) throw new Error('internal: registry metadata without a checksum');
    const auth = meta.authentication;
    const sig = auth?.kind === 'registry' && auth.signature.kind === 'signed' ? auth.signature : undefined;
    // Verified now: signed by a key, or (-allow-unsigned) only the registry's word.
    const now: Disposition[] =
      auth?.kind !== 'registry'
        ? []
        : sig === undefined
          ? [{ kind: 'reported-by-registry', url: redactURL(auth.checksumsUrl) }]
          : [
              {
                kind: 'signed',
                keyId: sig.keyId,
                ...(sig.keyExpires === undefined ? {} : { keyExpires: sig.keyExpires }),
                ...(sig.expired ? { expired: true } : {}),
                url: redactURL(auth.checksumsUrl),
              },
            ];
    if (stored !== undefined && stored.hashes.zh.text !== signed.text) this.mismatch(meta, stored);
    const known = await this.options.hashStore?.lookup(signed);
    const hashes = stored !== undefined && stored.hashes.zh.text === signed.text ? stored.hashes : known?.hashes;
    return this.entryOf(provider, version, meta.platform, signed, hashes, [...now, ...recorded(known)]);
  }

  /** A stored platform's entry, with what this machine's hash store recorded of its archive. */
  private async storedEntry(
    provider: ProviderAddress,
    version: Version,
    platform: Platform,
    hashes: ZipPackageHashes,
  ): Promise<ArchiveEntry> {
    const known = await this.options.hashStore?.lookup(hashes.zh);
    return this.entryOf(provider, version, platform, hashes.zh, hashes, recorded(known));
  }

  /**
   * The entry of a package whose archive's `zh:` is `zh`, vouched for by
   * `vouching` (its dispositions), with the hashes computed here from its
   * bytes when known (`hashes`): `verified-locally` by a key that signed
   * the `zh:`, else `computed-locally`.
   */
  private entryOf(
    provider: ProviderAddress,
    version: Version,
    platform: Platform,
    zh: Hash,
    hashes: ZipPackageHashes | undefined,
    vouching: readonly Disposition[],
  ): ArchiveEntry {
    const local = hashes
      ? [hashes.zh, ...(hashes.h1.ok ? [hashes.h1.hash] : []), ...(hashes.h1Zip.ok ? [hashes.h1Zip.hash] : [])]
      : [];
    const keyId = vouching.find((d) => d.kind === 'signed')?.keyId;
    const computed: Disposition =
      keyId === undefined ? { kind: 'computed-locally' } : { kind: 'verified-locally', keyId };
    // The zh: computed here is said once: the hash store's record of it (with where the bytes came from) suffices.
    const zhLocal = vouching.some(isLocal);
    const trust: TrustedHash[] = [
      ...vouching.map((trust) => ({ hash: zh, trust, platform })),
      ...local.filter((h) => !(zhLocal && h.text === zh.text)).map((hash) => ({ hash, trust: computed, platform })),
    ];
    return {
      platform,
      hashes: normalizeHashes([zh, ...local]),
      url: packedFileName(provider, version, platform),
      trust,
    };
  }

  private mismatch(meta: PackageMeta, stored: StoredPackage): void {
    const what = `${meta.provider.toString()} ${meta.version.toString()} ${meta.platform.toString()}`;
    this.metrics.add('provkit_mirror_errors_total', { source: 'store_mismatch' });
    this.options.onWarning?.(
      `the stored archive of ${what} is not the one the origin signs (${stored.hashes.zh.text}, signed ${expectedZh(meta)?.text ?? '?'}): not served; it is fetched again`,
      { provider: meta.provider.toString(), version: meta.version.toString(), platform: meta.platform.toString() },
    );
  }

  private async archive(provider: ProviderAddress, version: Version, platform: Platform): Promise<Answer | undefined> {
    const store = this.options.store;
    if (this.origin === undefined) return this.openStored(provider, version, platform, 'offline', 'hit');
    let kept: Kept<PackageMeta>;
    try {
      kept = await this.origin.packageMeta(provider, version, platform);
    } catch (err) {
      if (originFailed(err)) {
        const opened = await this.openStored(provider, version, platform, 'unavailable', 'stale');
        if (opened !== undefined) return opened;
      }
      return answerFor(err);
    }
    const signed = expectedZh(kept.value);
    try {
      const stored = await this.storeCall(() => store.lookup(provider, version, platform, this.stopping.signal));
      if (stored !== undefined && stored.hashes.zh.text === signed?.text) {
        const opened = await this.openStored(provider, version, platform, kept.state, 'hit');
        if (opened !== undefined) {
          this.metrics.add('provkit_mirror_store_hits_total');
          return opened;
        }
      } else if (stored !== undefined) {
        this.mismatch(kept.value, stored);
      }
      await this.fetchShared(kept.value);
    } catch (err) {
      return answerFor(err);
    }
    return (await this.openStored(provider, version, platform, 'fresh', 'miss')) ?? undefined;
  }

  /** The stored archive as a resource, or undefined when it is not stored. */
  private async openStored(
    provider: ProviderAddress,
    version: Version,
    platform: Platform,
    origin: string,
    result: RequestResult,
  ): Promise<Resource | undefined> {
    const opened = await this.storeCall(() =>
      this.options.store.open(provider, version, platform, this.stopping.signal),
    );
    if (opened === undefined) return undefined;
    return {
      kind: 'file',
      contentType: ZIP_TYPE,
      handle: opened.handle,
      path: opened.path,
      size: opened.size,
      etag: opened.etag,
      mtime: opened.mtime,
      result,
      headers: { 'X-Provkit-Origin': origin },
    };
  }

  /** A store operation whose failure is the store's (503). */
  private async storeCall<T>(op: () => Promise<T>): Promise<T> {
    try {
      return await op();
    } catch (err) {
      if (isProvkitError(err, ErrorCode.ABORTED)) throw err;
      throw storeFailure(err);
    }
  }

  /** The one fetch of a package for every request that needs it now (see the module comment). */
  private async fetchShared(meta: PackageMeta): Promise<void> {
    const key = `${meta.provider.toComparisonString()} ${meta.version.toString()} ${meta.platform.toString()}`;
    const flight = this.flights.get(key);
    if (flight !== undefined) {
      flight.waiters += 1;
      this.metrics.add('provkit_mirror_single_flight_joins_total');
      return flight.promise;
    }
    const mine = { promise: Promise.resolve(), waiters: 0 };
    mine.promise = this.fetchOne(meta, () => mine.waiters);
    this.flights.set(key, mine);
    try {
      await mine.promise;
    } finally {
      this.flights.delete(key);
    }
  }

  /** Fetches, verifies, hashes and stores one package (see the module comment). */
  private async fetchOne(meta: PackageMeta, waiters: () => number): Promise<void> {
    const started = Date.now();
    const ids = {
      provider: meta.provider.toString(),
      version: meta.version.toString(),
      platform: meta.platform.toString(),
    };
    const store = this.options.store;
    const origin = this.options.origin!;
    let work: string | undefined;
    try {
      work = await this.storeCall(() => store.workDir());
      let fetched;
      try {
        fetched = await fetchPackage(meta, {
          destPath: join(work, downloadName(meta.filename)),
          http: origin.http,
          signal: this.stopping.signal,
          hashing: poolHashing(this.options.pool, this.options.hashStore),
        });
      } catch (err) {
        // Writing the download is the store's file system (a full disk); everything else is the origin's.
        if (isProvkitError(err, ErrorCode.IO)) throw storeFailure(err);
        throw err;
      }
      if (fetched.kind !== 'archive') throw new Error('internal: a registry package that is not an archive');
      checkFetchedFor(fetched, meta.provider, meta.version, meta.platform);
      requireMirrorable(fetched.zipHashes, fetched.from);
      this.metrics.add('provkit_mirror_upstream_bytes_total', {}, fetched.size);
      await this.storeCall(() =>
        store.put(
          {
            provider: meta.provider,
            version: meta.version,
            platform: meta.platform,
            path: fetched.path,
            hashes: fetched.zipHashes,
            size: fetched.size,
          },
          this.stopping.signal,
        ),
      );
      this.metrics.add('provkit_mirror_upstream_fetches_total', { result: 'stored' });
      this.options.onFetch?.({
        time: new Date().toISOString(),
        ...ids,
        result: 'stored',
        bytes: fetched.size,
        durationMs: Date.now() - started,
        zh: fetched.zh.text,
        ...(fetched.keyId === undefined ? {} : { keyId: fetched.keyId }),
        from: fetched.from,
        waiters: waiters(),
      });
    } catch (err) {
      const e = asProvkitError(err);
      this.metrics.add('provkit_mirror_upstream_fetches_total', { result: 'failed' });
      this.options.onFetch?.({
        time: new Date().toISOString(),
        ...ids,
        result: 'failed',
        durationMs: Date.now() - started,
        waiters: waiters(),
        code: e.code,
        error: e.message,
      });
      throw err;
    } finally {
      if (work !== undefined) await rm(work, { recursive: true, force: true }).catch(() => undefined);
    }
  }

  /**
   * Stops: `/healthz` says so, fetches in progress may finish for up to
   * `drainMs`, then what is left is aborted (nothing partial is stored).
   * Once: later calls return the same promise.
   */
  close(): Promise<void> {
    this.closed ??= this.closeNow();
    return this.closed;
  }

  private async closeNow(): Promise<void> {
    this.closing = true;
    const pending = [...this.flights.values()].map((f) => f.promise.catch(() => undefined));
    if (pending.length > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.all(pending),
        new Promise<void>((resolve) => (timer = setTimeout(resolve, this.options.drainMs ?? 60_000))),
      ]);
      clearTimeout(timer);
    }
    this.stopping.abort();
    await Promise.all([...this.flights.values()].map((f) => f.promise.catch(() => undefined)));
    await this.options.store.close();
  }
}

/**
 * `VERSION.json` of `entries` (sorted by platform; Go's `json.MarshalIndent`,
 * as `providers mirror` writes it), each entry with its
 * {@link DISPOSITIONS_FIELD} (see the module comment).
 */
export function versionJSON(entries: readonly ArchiveEntry[]): string {
  return mirrorVersionJSON(
    [...entries]
      .sort((a, b) =>
        a.platform.toString() < b.platform.toString() ? -1 : a.platform.toString() > b.platform.toString() ? 1 : 0,
      )
      .map((e) => {
        const vouched = groupDispositions(e.trust.map((t) => ({ hash: t.hash, disposition: t.trust })));
        return {
          platform: e.platform,
          hashes: e.hashes.map((h) => h.text),
          url: e.url,
          extra: {
            [DISPOSITIONS_FIELD]: Object.fromEntries(
              vouched.map((v) => [v.hash.text, v.dispositions.map((d) => dispositionJSON(d))]),
            ),
          },
        };
      }),
  );
}

/** What the hash store recorded of an archive, without the time stamps. */
function recorded(known: { readonly dispositions: readonly StoredDisposition[] } | undefined): Disposition[] {
  return (known?.dispositions ?? []).map(({ at: _at, ...rest }) => rest);
}

/** What a request path asked for, for the metrics. */
function requestKind(path: string): RequestKind {
  const p = path.split('?', 1)[0]!;
  if (p === '/healthz') return 'health';
  if (p === '/metrics') return 'metrics';
  const segments = p.split('/').filter((s) => s !== '');
  if (segments.length !== 4) return 'other';
  const file = segments[3]!;
  if (file === 'index.json') return 'index';
  if (file.endsWith('.json')) return 'version';
  if (file.toLowerCase().endsWith('.zip')) return 'archive';
  return 'other';
}
