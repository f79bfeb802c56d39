/**
 * The package layer of `lock`: each (provider, version, platform) package is
 * fetched and hashed at most once per cache, however many root modules need
 * it (`lock -recursive` shares one cache between all the roots of a tree;
 * a single `lock` has its own).
 *
 * What a cache keeps of a package is small ({@link LockedPackage}: its `h1:`
 * and the hashes its source reported or authentication verified), never the
 * bytes: the archive is removed as soon as it is hashed, so disk and memory
 * do not grow with the packages fetched. The source's answers are memoised
 * by the source itself (`MemoizeSource`), so the metadata of a package is
 * asked for once too.
 *
 * Per package, in order: the source's metadata (asked as soon as the
 * package is, under a limit of its own, not in a download slot, its archive
 * host warmed meanwhile: archive-warmup.ts); when the
 * registry vouches for the archive's `zh:` and the hash store
 * (hashing/store.ts) knows it, no download at all; otherwise a download
 * (network-bounded: `networkConcurrency` slots, the largest announced archive
 * first: download-queue.ts) hashed while it streams (CPU-bounded: the hash
 * pool), refused when no client could extract it (archive-check.ts), added
 * to the hash store with its platform.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

import pLimit from 'p-limit';

import type { Platform, ProviderAddress, Version } from '../addresses/index.js';
import { WarningCode } from '../errors.js';
import { removeOnExit } from '../fs/cleanup.js';
import {
  type Hash,
  type HashPool,
  type HashStore,
  type ReadProgress,
  zhOfPackage,
  type ZipPackageHashes,
  type ZipStream,
} from '../hashing/index.js';
import { eitherSignal, type HttpClient } from '../net/index.js';
import {
  checkFetchedFor,
  dispositionsOf,
  expectedZh,
  fetchPackage,
  fetchPackageAhead,
  localDisposition,
  type PackageAhead,
  type PackageIdentity,
  type PackageMeta,
  storedArchive,
  type FetchedForms,
  type FormsWhenUnauthenticatedStrategy,
  type ZipHasher,
  type ZipHashesStrategy,
  type FetchedPackage,
  type Source,
  type TrustedHash,
} from '../sources/index.js';
import { abortableSource, runSignal, throwIfAborted, withSignal } from './abort.js';
import { requireExtractable } from './archive-check.js';
import {
  type AuthLabel,
  type EventSink,
  fetchCompleteEvent,
  ignoreEvents,
  packageHashes,
  packageNetEvents,
  type ProgressPhase,
} from './events.js';
import {
  DEFAULT_DOWNLOADS,
  type DownloadQueue,
  networkQueue,
  queueDownload,
  type SlotEvents,
} from './download-queue.js';
import { ArchiveWarmup, type HeardArchive } from './archive-warmup.js';
import { downloadName } from '../layout/index.js';

/** The file name of an archive fetched before its source named it (in a directory of its own). */
const AHEAD_NAME = 'package.zip';

/** A package's events, held until its source has authenticated it. */
interface HeldEvents {
  /** Where the package's events go meanwhile. */
  readonly sink: EventSink;
  /** Passes on what was held, and from now on every event at once. */
  open(): void;
  /** Forgets what was held, and every event from now on. */
  drop(): void;
}

/** A download begun ahead of its package's authentication ({@link FetchCache.fetchAhead}). */
interface Ahead {
  /** The URL fetched. */
  readonly url: string;
  /** The fetch: resolves only once the package's source authenticated it. */
  readonly fetched: Promise<Fetched>;
  readonly events: HeldEvents;
  /** Waits for a download under way to end (its temporary file gone). */
  settled(): Promise<void>;
  /** Stops the download (or keeps it from starting), drops its events, and waits for it to end. */
  cancel(): Promise<void>;
}

/** {@link HeldEvents} in front of `events`. */
function heldEvents(events: EventSink): HeldEvents {
  let state: 'held' | 'open' | 'dropped' = 'held';
  let held: Parameters<EventSink>[0][] = [];
  return {
    sink: (e) => {
      if (state === 'open') events(e);
      else if (state === 'held') held.push(e);
    },
    open: () => {
      if (state !== 'held') return;
      state = 'open';
      const out = held;
      held = [];
      for (const e of out) events(e);
    },
    drop: () => {
      state = 'dropped';
      held = [];
    },
  };
}

/** What a package's fetch gives the cache (a local archive read for its `h1:` forms alone: {@link FetchCache.hashing}). */
type Fetched = FetchedPackage | FetchedForms;

/** The progress callback of one phase of a local archive's hashing (`fetch_progress` events). */
type LocalProgress = (phase: ProgressPhase) => ReadProgress;

/** What the cache needs (the fetching part of `FetchRunOptions`). */
export interface FetchCacheOptions {
  /** Where packages (and, for the runs over the cache, versions and metadata) come from. */
  readonly source: Source;
  /** Hashing, bounded by its own (CPU) limit. */
  readonly pool: HashPool;
  /** Needed when a source returns http locations. */
  readonly http?: HttpClient;
  /** Package events (`fetch_start`, `fetch_progress`, `fetch_complete`, package warnings). */
  readonly events?: EventSink;
  /** Aborts the cache's downloads and hashing. */
  readonly signal?: AbortSignal;
  /** Archives downloaded at once, exactly; unset: the cores' share, {@link DEFAULT_DOWNLOADS} once the link holds the streams (download-queue.ts `networkQueue`). */
  readonly networkConcurrency?: number;
  /** Hashes of archives seen before, by `zh:` (hashing/store.ts); every archive hashed is added. */
  readonly hashStore?: HashStore;
}

/** What a cache learnt of one package. */
export interface LockedPackage {
  /** A zip archive, or an unpacked directory (a filesystem mirror's unpacked layout). */
  readonly kind: 'archive' | 'dir';
  /** The `h1:` of the package as extracted (what a lock records). */
  readonly h1: Hash;
  /** The metadata's reported hashes plus what authentication verified, each with its reason. */
  readonly hashes: readonly TrustedHash[];
  /** How the package was authenticated (the reference's label). */
  readonly label: AuthLabel;
  /** The signing key's ID, when a signature authenticated it. */
  readonly keyId: string | undefined;
  /** True when the hashes came from the hash store by the registry's signed `zh:` (nothing downloaded). */
  readonly stored: boolean;
}

/** Counts of one cache's work. */
export interface FetchCacheStats {
  /** Distinct (provider, version, platform) packages asked for. */
  readonly packages: number;
  /** Packages downloaded (http). */
  readonly downloaded: number;
  /** Packages read from a local mirror (copied or hashed in place). */
  readonly local: number;
  /** Packages whose hashes came from the hash store. */
  readonly fromStore: number;
}

/** The counts of several caches (`lock -recursive` over roots of two flavors), added up. */
export function sumFetchCacheStats(all: readonly FetchCacheStats[]): FetchCacheStats {
  const sum = (k: keyof FetchCacheStats): number => all.reduce((n, s) => n + s[k], 0);
  return { packages: sum('packages'), downloaded: sum('downloaded'), local: sum('local'), fromStore: sum('fromStore') };
}

/** See the module comment. */
export class FetchCache {
  private readonly network: DownloadQueue;
  /** The network's slots ({@link network}'s limit). */
  private readonly slots: number;
  /** Metadata ahead of bytes, the archive hosts warmed, redirects learnt ahead (archive-warmup.ts). */
  private readonly warmup: ArchiveWarmup;
  private readonly packages = new Map<string, Promise<LockedPackage>>();
  private work: Promise<string> | undefined;
  private forgetWork: (() => void) | undefined;
  private seq = 0;
  private downloaded = 0;
  private local = 0;
  private fromStore = 0;
  /** One `zh:` pass at a time (see {@link hashLocal}). */
  private readonly zhPass = pLimit(1);
  private readonly events: EventSink;

  private readonly options: FetchCacheOptions;
  /** Lets go of the caller's signal (the cache's own derives from it: installer/abort.ts `runSignal`). */
  private readonly releaseSignal: () => void;

  /**
   * A cache over `options.source`; nothing is fetched until {@link FetchCache.lock} is called. One listener is
   * added to `options.signal` until {@link FetchCache.close}.
   */
  constructor(options: FetchCacheOptions) {
    // One listener on the caller's signal for the cache's whole life, however many packages it fetches at once.
    const { signal, release } = runSignal(options.signal);
    this.releaseSignal = release;
    // After the abort the cache asks its source nothing more, and a call in
    // flight settles as ABORTED (installer/abort.ts, the one cancellation contract).
    this.options = { ...withSignal(options, signal), source: abortableSource(options.source, signal, 'locking') };
    this.slots = options.networkConcurrency ?? DEFAULT_DOWNLOADS;
    this.network = networkQueue(options.networkConcurrency);
    this.warmup = new ArchiveWarmup({
      http: options.http,
      signal,
      slots: this.slots,
      // A package whose signed zh: the store has is not downloaded (lockPackage below).
      storeSparesDownload: options.hashStore,
    });
    this.events = options.events ?? ignoreEvents;
  }

  /** The source the cache fetches from. */
  get source(): Source {
    return this.options.source;
  }

  /** What the cache has done so far. */
  stats(): FetchCacheStats {
    return { packages: this.packages.size, downloaded: this.downloaded, local: this.local, fromStore: this.fromStore };
  }

  /** The package's hashes: fetched and hashed on the first call, shared afterwards (failures too). */
  lock(provider: ProviderAddress, version: Version, platform: Platform): Promise<LockedPackage> {
    const key = `${provider.toComparisonString()} ${version.toString()} ${platform.toString()}`;
    let p = this.packages.get(key);
    if (!p) {
      p = this.lockNew(provider, version, platform, (this.seq += 1));
      this.packages.set(key, p);
    }
    return p;
  }

  /** Removes the cache's temporary directory (call once, when every root is done). */
  async close(): Promise<void> {
    this.releaseSignal();
    const work = this.work;
    this.work = undefined;
    if (work) await rm(await work.catch(() => ''), { recursive: true, force: true }).catch(() => undefined);
    this.forgetWork?.();
    this.forgetWork = undefined;
  }

  /**
   * The cache's temporary directory, created at the first download: a run that
   * reads only local archives (a filesystem mirror) creates none. From its
   * creation every way out (close(), a signal, process exit) removes it
   * (test/e2e/diagnostics.test.ts, "temporary files go on every way out").
   */
  private workDir(): Promise<string> {
    this.work ??= mkdtemp(join(tmpdir(), 'provkit-lock-')).then((dir) => {
      // Removed by close(); and at exit if the process ends without getting there (src/fs/cleanup.ts).
      this.forgetWork = removeOnExit(dir);
      return dir;
    });
    return this.work;
  }

  /**
   * A local archive's hashes (a filesystem mirror's package, read where it
   * is). With a hash store, its `zh:` is computed first (one SHA-256 pass
   * over the file) and looked up: a hit gives both `h1:` forms without
   * inflating anything, as a registry package's signed checksum does
   * (hashing/store.ts: `zh:` identifies the bytes, here because it was
   * computed from them just now). A miss is hashed by the pool with that
   * `zh:`, so it is not computed twice. The passes run one at a time so the
   * first miss reaches the pool as early as possible. Without a store,
   * straight to the pool (`zh:` in the same job).
   */
  private async hashLocal(path: string, progress: LocalProgress): Promise<ZipPackageHashes> {
    const { hashStore, pool } = this.options;
    if (!hashStore) return pool.hashZip(path, undefined, progress('hash'));
    const zh = await this.zhPass(() => zhOfPackage(path, progress('checksum')));
    const stored = await hashStore.get(zh);
    if (stored) return { ...stored, path };
    return pool.hashZip(path, zh, progress('hash'));
  }

  /**
   * How a package's fetch hashes it (sources/fetch/strategy.ts): a local
   * archive with {@link hashLocal}, anything else with the pool, a download
   * as it arrives. The store is not the fetch's: a hit means no fetch at all,
   * so the cache consults it (and fills it) itself. Without a store nothing
   * needs a local archive's `zh:` (a lock records none of a filesystem
   * mirror's): its `h1:` forms alone.
   */
  private hashing(local: boolean, progress: LocalProgress): ZipHashesStrategy | FormsWhenUnauthenticatedStrategy {
    const { hashStore, pool } = this.options;
    const hashZip: ZipHasher = (path, knownZh) =>
      local ? this.hashLocal(path, progress) : pool.hashZip(path, knownZh);
    const streamZip = (): ZipStream => pool.streamZip();
    if (hashStore) return { kind: 'zip-hashes', hashZip, streamZip };
    return {
      kind: 'h1-forms-when-unauthenticated',
      hashZip,
      streamZip,
      hashZipForms: (path) => pool.hashZipForms(path, progress('hash')),
    };
  }

  /**
   * A package's download begun as soon as its source named the archive
   * (PackageMetaHints.archiveURL: a registry's download metadata), while the
   * source still authenticates it (its SHA256SUMS and their signature), so that
   * the first archives' bytes (their redirect, the CDN's connection) do not wait
   * for the signature (bench/results-wan.md). Nothing is believed before the
   * source's answer: `fetchPackageAhead` (sources/fetch/fetch.ts) checks the
   * archive against the authenticated metadata only, and the cache records,
   * stores and reports nothing before that fetch returned; the package's
   * events (`fetch_start`, its progress) are held until the metadata is in and
   * dropped with it when it fails, so a refused package shows exactly what it
   * showed when nothing was downloaded before its signature. A refused
   * package's download is aborted; one still waiting for a slot never starts.
   * Not begun (the caller's rule) when the hash store has the `zh:` the source
   * expects (a stored package is not downloaded at all, and that needs the
   * signature first), nor when nothing was heard before the answer.
   * `settled` waits for a download already under way to end (and its
   * temporary file to go).
   */
  private fetchAhead(
    archive: HeardArchive | undefined,
    authenticated: Promise<PackageMeta>,
    identity: PackageIdentity,
    events: EventSink,
    fetch: (slotEvents: SlotEvents, sink: EventSink, what: PackageAhead, cancel: AbortSignal) => Promise<Fetched>,
  ): Ahead | undefined {
    const { http, signal } = this.options;
    if (archive === undefined || http === undefined || signal?.aborted === true) return undefined;
    const held = heldEvents(events);
    let refusal: { readonly err: unknown } | undefined;
    authenticated.catch((err: unknown) => {
      refusal = { err };
      held.drop();
    });
    const ahead: PackageAhead = { identity, url: archive.url, authenticated };
    const cancelled = new AbortController();
    let running: Promise<unknown> | undefined;
    const fetched = this.warmup.download(ahead, (started) =>
      queueDownload(this.network, archive.size ?? 0, (slotEvents) => {
        started();
        // Refused while it waited for its slot: nothing to fetch (the answer's error is the package's).
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the source's own error, as it is
        if (refusal !== undefined) return Promise.reject(refusal.err);
        if (cancelled.signal.aborted) return Promise.reject(new Error('cancelled'));
        const run = fetch(slotEvents, held.sink, ahead, cancelled.signal);
        running = run.catch(() => undefined);
        return run;
      }),
    );
    // The package's failure is its answer's (lockPackage awaits that first).
    fetched.catch(() => undefined);
    const settled = async (): Promise<void> => void (await running);
    return {
      url: archive.url,
      fetched,
      events: held,
      settled,
      cancel: async () => {
        held.drop();
        cancelled.abort();
        await settled();
      },
    };
  }

  /**
   * {@link lockPackage}, said first as `fetch_queued` (a display counts
   * every package from the start) and, when it fails before its
   * `fetch_complete`, closed with `fetch_failed` (docs/terminal.md).
   */
  private async lockNew(
    provider: ProviderAddress,
    version: Version,
    platform: Platform,
    n: number,
  ): Promise<LockedPackage> {
    this.events({ type: 'fetch_queued', provider, version, platform });
    let closed = false;
    const events: EventSink = (e) => {
      if (e.type === 'fetch_complete' || e.type === 'fetch_failed') closed = true;
      this.events(e);
    };
    try {
      return await this.lockPackage(provider, version, platform, n, events);
    } catch (err) {
      if (!closed) events({ type: 'fetch_failed', provider, version, platform });
      throw err;
    }
  }

  private async lockPackage(
    provider: ProviderAddress,
    version: Version,
    platform: Platform,
    n: number,
    events: EventSink,
  ): Promise<LockedPackage> {
    const { options } = this;
    // A local archive's hashing, as fetch_progress events (at most every 100 ms, and at the end).
    const progress: LocalProgress = (phase) => {
      let last = 0;
      return (bytes, total) => {
        const now = Date.now();
        if (bytes < total && now - last < 100) return;
        last = now;
        events({ type: 'fetch_progress', provider, version, platform, bytes, total, phase });
      };
    };
    // Metadata ahead of bytes, for every package as soon as its version is
    // selected, and its archive host warmed meanwhile (archive-warmup.ts):
    // a download slot never waits on a metadata round trip, and a stored
    // package never takes one. A registry package's download begins as soon
    // as its download metadata names the archive, before its SHA256SUMS and
    // signature are in (fetchAhead); nothing of it is believed before they are.
    let heard: (archive: HeardArchive | undefined) => void = () => undefined;
    const hint = new Promise<HeardArchive | undefined>((resolve) => (heard = resolve));
    const metaP = this.warmup.packageMeta(options.source, { provider, version, platform }, true, heard);
    metaP.then(
      () => heard(undefined),
      () => heard(undefined),
    );
    const fetch = async (
      slotEvents: SlotEvents | undefined,
      sink: EventSink,
      what: PackageMeta | PackageAhead,
      cancel?: AbortSignal,
    ): Promise<Fetched> => {
      throwIfAborted('locking', options.signal);
      sink({ type: 'fetch_start', provider, version, platform, location: options.source.forDisplay(provider) });
      // A directory of its own per package: archives of different packages
      // share file names (`hashicorp/github` and `integrations/github`; one
      // source under two hosts), docs/reliability.md.
      // A local archive (a filesystem mirror) is hashed in place, where it
      // is: the cache keeps no copy of it (and never removes it, below).
      // Anything else is fetched into a directory of its own (an archive
      // fetched ahead of its metadata under a name of the cache's: the
      // source has not named it yet).
      const ahead = 'authenticated' in what;
      const local = !ahead && what.location.kind === 'local-archive';
      const dir = local ? undefined : await mkdtemp(join(await this.workDir(), `pkg-${n}-`));
      const signal = eitherSignal(options.signal, cancel);
      const fetchOptions = {
        ...(dir === undefined ? {} : { destPath: join(dir, ahead ? AHEAD_NAME : downloadName(what.filename)) }),
        ...(options.http ? { http: options.http } : {}),
        ...(signal === undefined ? {} : { signal }),
        hashing: this.hashing(local, progress),
        // In its slot, with the slot rule, a redirect warming its target (download-queue.ts, archive-warmup.ts).
        events: slotEvents
          ? slotEvents(this.warmup.events(packageNetEvents(sink, provider, version, platform)))
          : packageNetEvents(sink, provider, version, platform),
      };
      let got: Fetched;
      try {
        got = ahead ? await fetchPackageAhead(what, fetchOptions) : await fetchPackage(what, fetchOptions);
      } catch (err) {
        // The progress display closes the package's line (docs/terminal.md).
        sink({ type: 'fetch_failed', provider, version, platform });
        throw err;
      }
      if (ahead || what.location.kind === 'http') this.downloaded += 1;
      else this.local += 1;
      return got;
    };
    // The store first: a package whose expected zh: it has is not fetched ahead (nor, once that zh: is
    // authenticated, at all); its answer is kept for the check below.
    const archive = await hint;
    const storedAhead = archive && (await archive.stored);
    let early = storedAhead
      ? undefined
      : this.fetchAhead(archive, metaP, { provider, version, platform }, events, fetch);
    const meta = await metaP.catch(async (err: unknown) => {
      await early?.settled();
      throw err;
    });
    if (early !== undefined && !(meta.location.kind === 'http' && meta.location.url === early.url)) {
      // The answer is not the archive fetched ahead (a source whose hint named another URL): that download is
      // forgotten, and the package fetched as answered.
      await early.cancel();
      early = undefined;
    }
    for (const w of meta.warnings)
      events({ type: 'warning', code: WarningCode.SOURCE_WARNING, summary: w, detail: '', provider });
    early?.events.open();
    const zh = expectedZh(meta);
    // A hit means no download at all, so the cache consults the store itself
    // (and keeps what it hashes, below) instead of handing it to fetchPackage.
    const storedHashes =
      early === undefined &&
      zh &&
      (storedAhead && archive?.zh.text === zh.text ? storedAhead : await options.hashStore?.get(zh));
    // A local archive's hashing is CPU work, not network work: every local
    // package of a run reaches the hash pool at once and the pool balances
    // the batch over the cores (pool.ts `shareUpTo`; bench/PROFILE.md).
    // Downloads take a slot, the largest first when sizes are announced.
    const fetched: Fetched = early
      ? await early.fetched
      : storedHashes
        ? storedArchive(meta, storedHashes)
        : meta.location.kind === 'local-archive' || meta.location.kind === 'local-dir'
          ? await fetch(undefined, events, meta)
          : await this.warmup.download(meta, (started) =>
              queueDownload(this.network, meta, (slotEvents) => {
                started();
                return fetch(slotEvents, events, meta);
              }),
            );
    checkFetchedFor(fetched, provider, version, platform);
    const stored = fetched.kind === 'archive' && fetched.stored === true;
    if (stored) this.fromStore += 1;
    const ownH1 =
      fetched.kind === 'archive'
        ? fetched.zipHashes.h1
        : fetched.kind === 'archive-forms'
          ? fetched.forms.h1
          : undefined;
    events(
      fetchCompleteEvent(
        { provider, version, platform },
        { label: fetched.label, keyId: fetched.kind === 'archive' ? fetched.keyId : undefined },
        {
          stored,
          hashes: packageHashes(
            fetched.hashes,
            ownH1?.ok ? { hash: ownH1.hash, disposition: localDisposition(meta), platform } : undefined,
          ),
        },
      ),
    );
    const kind: LockedPackage['kind'] = fetched.kind === 'dir' ? 'dir' : 'archive';
    const done = {
      kind,
      hashes: fetched.hashes,
      label: fetched.label,
      keyId: fetched.kind === 'archive' ? fetched.keyId : undefined,
      stored,
    };
    if (fetched.kind === 'dir') return { ...done, h1: await options.pool.hashDir(fetched.path) };
    // The archive is not needed once hashed (a stored one is the store's own file).
    const temporary = !stored && this.work !== undefined && fetched.path.startsWith(await this.work);
    try {
      const zip = fetched.kind === 'archive' ? fetched.zipHashes : fetched.forms;
      if (!stored && fetched.kind === 'archive')
        await options.hashStore?.put(
          fetched.zipHashes,
          platform.toString(),
          dispositionsOf(fetched.hashes, fetched.zipHashes.zh),
        );
      const h1 = requireExtractable(zip, fetched.from);
      for (const w of zip.warnings)
        events({
          type: 'warning',
          code: w.code,
          summary: `${provider.toString()} ${version.toString()} ${platform.toString()}: ${w.message}`,
          detail: w.entries.join(', '),
          provider,
        });
      return { ...done, h1 };
    } finally {
      if (temporary) await rm(dirname(fetched.path), { recursive: true, force: true });
    }
  }
}
