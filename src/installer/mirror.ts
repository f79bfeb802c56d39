/**
 * `providers mirror` (docs/reference.md §6.2 items 92–96): copy every required provider's
 * packages for the requested platforms into a packed mirror directory and
 * (re)write its `index.json` and `VERSION.json` files.
 *
 * Byte-identical output: archive names, index documents (Go
 * `json.MarshalIndent`, keys sorted, no trailing newline) and the hashes in
 * them per flavor (docs/reference.md §6.2 item 95): terraform writes one `h1:` (zip form) per
 * archive; OpenTofu writes the platform's verified hashes of packages fetched
 * in this run (the `zh:`, plus the registry's `h1:` where it reports one) and
 * falls back to the zip-form `h1:` for archives from earlier runs. The index
 * covers every packed archive in the target, earlier ones included (docs/reference.md §6.2 item 94).
 *
 * Beyond the reference:
 * - incremental: a package already in the target whose bytes verify against
 *   the source's metadata is not fetched again (`fetch_complete` with
 *   `reused`), and counts as verified in this run, with the hashes a fetch
 *   of it would have given (so a re-run writes what the first run wrote);
 * - a fingerprint cache (size, mtime, ctime, inode per archive, kept outside
 *   the mirror in `cacheFile`, so the mirror holds only what the reference
 *   writes) lets a re-run skip re-hashing unchanged archives; a file whose
 *   fingerprint changed is hashed again;
 * - `hashes: 'all'` writes `zh:` and both `h1:` forms for every archive;
 * - a package no client could install is refused, as `hash`, `lock` and
 *   `install` refuse it and with their codes (`archive-check.ts`: not a zip,
 *   `..` or absolute entry names, ...), named by its source URL or file; the
 *   reference mirrors such packages, or leaves them behind with an index;
 * - all or nothing: packages fetched in this run land in a staging directory
 *   inside the target (`.provkit-staging-*`) and every one is verified; the
 *   index documents are computed over the target's archives and the staged
 *   ones; only when all of that succeeded (and the run was not aborted) do
 *   the index documents that changed and the staged archives move into
 *   place, by renames, undone if one fails. Otherwise the target is as it
 *   was (a target this run created is removed again). Events about the
 *   target (`mirror_package`, `mirror_index`) are emitted after the commit,
 *   and `mirror_index` only for a document whose bytes changed;
 * - one run per target: the run holds `TARGET/.provkit-mirror.lock` (PID,
 *   host, heartbeat: the directory mutex of fs/dir-mutex.ts; one left by a
 *   dead process or not touched for `staleMs` is broken), so two runs into
 *   one target serialize, and the second finds the first's packages and
 *   keeps them; staging directories left by a killed run are removed under
 *   the mutex;
 * - everything runs in parallel (network and CPU budgets apart).
 */
import { copyFile, link, mkdir, readdir, rename, rm, rmdir, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';

import pLimit from 'p-limit';

import {
  newProviderAddress,
  parsePlatform,
  parseVersion,
  type Platform,
  ProviderAddress,
  type Version,
  type Requirement,
} from '../addresses/index.js';
import {
  asProvkitError,
  type Diagnostic,
  ErrorCode,
  errorText,
  isProvkitError,
  ProvkitError,
  systemErrorCode,
  WarningCode,
  writeError,
} from '../errors.js';
import { writeFileAtomic } from '../fs/atomic.js';
import { makeCacheDirectory } from '../fs/cache-dir.js';
import { acquireDirMutex, type DirMutex, type DirMutexOptions } from '../fs/dir-mutex.js';
import { removeTempsIn, tempPathIn } from '../fs/temp-name.js';
import { compareBytewise } from '../go/index.js';
import {
  type Hash,
  isLocal,
  isReported,
  normalizeHashes,
  parseHash,
  zhOfFile,
  type ZipPackageHashes,
} from '../hashing/index.js';
import type { Locks } from '../lockfile/index.js';
import { mirrorIndexJSON, mirrorVersionJSON, providerDirPath } from '../layout/index.js';
import {
  authenticateArchive,
  checkFetchedFor,
  fetchPackage,
  type FetchedPackage,
  localDisposition,
  type PackageMeta,
  poolHashing,
  type TrustedHash,
} from '../sources/index.js';
import { requireMirrorable } from './archive-check.js';
import {
  chooseMirrorVersion,
  mirrorArchivePath,
  type MirrorFailure,
  mirrorNeedsVersions,
  type MirrorStep,
  lockHashMismatch,
  planMirrorPackages,
} from './mirror-plan.js';
import { abortable, abortableSource, throwIfAborted, withSignal } from './abort.js';
import {
  type EventSink,
  fetchCompleteEvent,
  ignoreEvents,
  packageHashes,
  packageNetEvents,
  providerSelectedEvent,
} from './events.js';
import { causeDiagnostic, groupByCause } from './causes.js';
import { DEFAULT_DOWNLOADS, networkQueue, queueDownload } from './download-queue.js';
import { ArchiveWarmup } from './archive-warmup.js';
import type { FetchRunOptions } from './run-options.js';
import { readRegularFile } from '../fs/read.js';

/**
 * Which hashes a mirror's `VERSION.json` lists per archive: `reference` (what `providers mirror` writes,
 * docs/reference.md §6.2 item 95) or `all` (the `zh:` and both `h1:` forms of every archive).
 */
export type MirrorHashes = 'reference' | 'all';

/**
 * How {@link runMirror} fills a filesystem mirror: the requirements' packages for the platforms, in the packed
 * layout, with the network mirror protocol's index files.
 */
export interface MirrorOptions extends FetchRunOptions {
  /**
   * The lock file's selections; when non-empty, versions follow it (docs/reference.md §6.2 item 93.2),
   * and every package written or kept must match the lock's hashes for its version ({@link checkLockHashes}).
   */
  readonly locks: Locks;
  /** Write a package that matches none of the lock's hashes all the same, with a warning each (`-ignore-lock-hashes`). */
  readonly ignoreLockHashes?: boolean;
  /** The mirror's directory (created when missing): `HOST/NAMESPACE/TYPE/` files below it. */
  readonly targetDir: string;
  /** The hashes listed in `VERSION.json` files (default `reference`). */
  readonly hashes?: MirrorHashes;
  /** Where the fingerprint cache of this target lives (none when absent). */
  readonly cacheFile?: string;
  /**
   * The target's mutex (see the module comment): its tuning, or `false` to
   * take none (only when the caller serializes runs itself). `onWait` is
   * called when another run holds the target for more than `noticeAfterMs`.
   */
  readonly targetMutex?: false | Omit<DirMutexOptions, 'signal'>;
}

/** The file of the directory mutex a mirror run holds in its target. */
export const MIRROR_MUTEX_FILE = '.provkit-mirror.lock';
/**
 * The version `mirror` (and `mirror oci://`) takes for a requirement
 * (mirror-plan.ts, {@link chooseMirrorVersion}), asking the source for the
 * versions when the plan needs them. Emits `provider_selected` for a version taken.
 *
 * Not `querySelectVersion` (select-version.ts), which `lock`, `install` and
 * `bundle create` share, because the reference's two commands differ:
 * `providers lock` and `init` select as the installer does
 * (opentofu/opentofu internal/providercache/installer.go
 * `EnsureProviderVersions`: the locked version while it meets the
 * constraints, a provider the lock file lacks selected anew, the source's
 * warnings reported, a failure thrown), while `providers mirror`
 * (internal/command/providers_mirror.go `Execute`) takes the lock file's
 * version whenever the lock file has entries, fails a provider the lock
 * file lacks ("Provider not found in lockfile") instead of selecting one,
 * drops the source's warnings (`avail, _, err := source.AvailableVersions`),
 * and records a failure per provider and goes on (here a
 * {@link MirrorFailure} value: the run then writes nothing). The choice
 * itself is selectVersion's (select-version.ts) in both, and one builder makes the event
 * ({@link providerSelectedEvent}).
 */
export async function selectMirrorVersion(
  options: Pick<FetchRunOptions, 'source' | 'flavor' | 'signal'> & { readonly locks: Locks },
  req: Requirement,
  events: EventSink,
): Promise<{ readonly version: Version } | { readonly failure: MirrorFailure }> {
  const available = mirrorNeedsVersions(req, options.locks)
    ? await options.source.availableVersions(req.provider, options.signal).catch((err: unknown) => asProvkitError(err))
    : undefined;
  const selection = chooseMirrorVersion(req, options.locks, available, options.flavor);
  if (selection.kind === 'failed') return { failure: selection.failure };
  events(providerSelectedEvent(req, selection, true));
  return { version: selection.version };
}

/**
 * The lock-file check of one package `mirror` (and `mirror oci://`) writes
 * or keeps ({@link lockHashMismatch}): undefined when the package matches the
 * lock's hashes for its version, the lock has none, or `ignoreLockHashes`
 * lets it through (then said loudly: a `LOCK_HASHES_IGNORED` warning per
 * package); otherwise the failure that stops the run (nothing is written).
 */
export function checkLockHashes(
  options: { readonly locks: Locks; readonly ignoreLockHashes?: boolean | undefined },
  events: EventSink,
  pkg: { readonly provider: ProviderAddress; readonly version: Version; readonly platform: Platform },
  hashes: { readonly zh: Hash; readonly h1Zip: Hash | null },
): MirrorFailure | undefined {
  const { provider, version, platform } = pkg;
  const error = lockHashMismatch(options.locks, provider, version, platform, hashes);
  if (error === undefined) return undefined;
  if (options.ignoreLockHashes === true) {
    events({
      type: 'warning',
      code: WarningCode.LOCK_HASHES_IGNORED,
      summary: 'Package does not match the lock file',
      detail: `${provider.toString()} ${version.toString()} for ${platform.toString()}: ${error.message}\nMirrored anyway, as -ignore-lock-hashes asks: a client that installs it with this lock file will refuse it.`,
      provider,
    });
    return undefined;
  }
  return { provider, version, platform, summary: 'Package does not match the lock file', error };
}

/** The prefix of the staging directories inside a target. */
export const MIRROR_STAGING_PREFIX = '.provkit-staging-';

export type { MirrorFailure } from './mirror-plan.js';

/** What {@link runMirror} did: the failures (when any, nothing in the target changed) and the counts. */
export interface MirrorOutcome {
  /** Packages or providers that could not be mirrored; non-empty means the target is as it was. */
  readonly failures: readonly MirrorFailure[];
  /** Packages written into the target (new or replaced). */
  readonly written: number;
  /** Packages already in the target with the right hashes, kept as they are (not copied again). */
  readonly reused: number;
}

/** What we know of one archive in the target. */
interface ArchiveState {
  zh: string;
  h1: string | null;
  h1Zip: string | null;
}

interface Fingerprint {
  size: number;
  mtimeNs: string;
  ctimeNs: string;
  ino: number;
}

type CacheFile = Record<string, Fingerprint & ArchiveState>;

async function fingerprint(path: string): Promise<Fingerprint> {
  const st = await stat(path, { bigint: true });
  return { size: Number(st.size), mtimeNs: st.mtimeNs.toString(), ctimeNs: st.ctimeNs.toString(), ino: Number(st.ino) };
}

const sameFingerprint = (a: Fingerprint, b: Fingerprint): boolean =>
  a.size === b.size && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs && a.ino === b.ino;

/**
 * Mirrors (see the module comment).
 *
 * @returns the failures (when there are any, nothing in the target changed)
 *   and the counts.
 * @throws ProvkitError ABORTED when `signal` fired (the target is as it was,
 *   no temporary file remains), MUTEX_TIMEOUT, IO (the target's mutex)
 */
export async function runMirror(options: MirrorOptions): Promise<MirrorOutcome> {
  return abortable('mirroring', options.signal, (signal, committed) =>
    mirrorWith(
      { ...withSignal(options, signal), source: abortableSource(options.source, signal, 'mirroring') },
      committed,
    ),
  );
}

async function mirrorWith(options: MirrorOptions, markCommitted: () => void): Promise<MirrorOutcome> {
  // The directories taking the target's mutex creates (the target and any missing parents):
  // a run that commits nothing removes them again.
  const created = await firstMissingAncestor(options.targetDir);
  let mutex: DirMutex | undefined;
  const staging = tempPathIn(options.targetDir, MIRROR_STAGING_PREFIX);
  let committed = false;
  try {
    // Inside the try: taking the mutex creates the target, and an interrupt
    // while waiting for it must remove it again like any other.
    if (options.targetMutex !== false) {
      try {
        mutex = await acquireDirMutex(join(options.targetDir, MIRROR_MUTEX_FILE), {
          ...options.targetMutex,
          ...(options.signal ? { signal: options.signal } : {}),
        });
      } catch (err) {
        // The first write into the target: a target that cannot be written is said as such, not as its mutex file.
        if (isProvkitError(err, ErrorCode.ABORTED) || isProvkitError(err, ErrorCode.MUTEX_TIMEOUT)) throw err;
        throw writeError(err, 'cannot mirror into', options.targetDir, 'Cannot write into the mirror directory');
      }
    }
    // Under the mutex, any staging directory is a killed run's leftover.
    await removeTempsIn(options.targetDir, MIRROR_STAGING_PREFIX);
    const outcome = await mirrorLocked(options, staging, markCommitted);
    committed = outcome.failures.length === 0;
    return outcome;
  } finally {
    await rm(staging, { recursive: true, force: true });
    await mutex?.release();
    if (!committed && created !== undefined) await removeEmptyDirs(options.targetDir, created);
  }
}

/** One package of this run, fetched into the staging directory or kept from the target. */
interface RunPackage {
  readonly provider: ProviderAddress;
  readonly version: Version;
  readonly platform: Platform;
  /** `HOST/NS/TYPE/terraform-provider-…zip`. */
  readonly rel: string;
  readonly action: 'written' | 'kept';
}

/** A file of the target: archives and index documents, by relative path. */
interface IndexArchive {
  readonly provider: ProviderAddress;
  readonly version: Version;
  readonly platform: Platform;
  readonly rel: string;
}

async function mirrorLocked(options: MirrorOptions, staging: string, committed: () => void): Promise<MirrorOutcome> {
  const events = options.events ?? ignoreEvents;
  /** Archives fetched in this run: relative path → staged absolute path. */
  const staged = new Map<string, string>();
  // Downloads are hashed as they arrive; the largest announced archive first, each slot given back at its last byte (download-queue.ts).
  const slots = options.networkConcurrency ?? DEFAULT_DOWNLOADS;
  const network = networkQueue(options.networkConcurrency);
  // Metadata ahead of bytes, archive hosts warmed, redirects learnt ahead: as for lock (archive-warmup.ts).
  const warmup = new ArchiveWarmup({ http: options.http, signal: options.signal, slots });
  const failures: MirrorFailure[] = [];
  const cachePath = options.cacheFile;
  const cache: CacheFile =
    cachePath === undefined
      ? {}
      : await readRegularFile(cachePath)
          .then((t) => JSON.parse(t.toString('utf8')) as CacheFile)
          .catch(() => ({}));
  /** Hashes of archives verified or fetched in this run, by relative path, with their trust. */
  const thisRun = new Map<string, readonly TrustedHash[]>();
  const states = new Map<string, ArchiveState>();
  const packages: RunPackage[] = [];

  /** zh and both h1 forms of an archive, from the cache when its fingerprint is unchanged. */
  const archiveState = async (rel: string): Promise<ArchiveState> => {
    const have = states.get(rel);
    if (have) return have;
    const abs = staged.get(rel) ?? join(options.targetDir, rel);
    const fp = await fingerprint(abs);
    const cached = cache[rel];
    let state: ArchiveState;
    if (cached && sameFingerprint(cached, fp)) {
      state = { zh: cached.zh, h1: cached.h1, h1Zip: cached.h1Zip };
    } else {
      const z = await options.pool.hashZip(abs);
      await options.hashStore?.put(z);
      state = stateOf(z);
    }
    cache[rel] = { ...fp, ...state };
    states.set(rel, state);
    return state;
  };

  /** One step of the plan (mirror-plan.ts): fetch the package, or keep the archive already there when it verifies. */
  const mirrorPackage = async ({ provider, version, platform, rel, action }: MirrorStep): Promise<void> => {
    const dest = join(options.targetDir, rel);
    const stagedDest = join(staging, rel);
    // Every package of the run is said first: a display counts them all from the start (docs/terminal.md).
    events({ type: 'fetch_queued', provider, version, platform });
    let meta: PackageMeta;
    try {
      // An archive already in the target is expected to be kept (it verifies): its host is not warmed for it.
      meta = await warmup.packageMeta(options.source, { provider, version, platform }, action === 'fetch');
    } catch (err) {
      events({ type: 'fetch_failed', provider, version, platform });
      failures.push({
        provider,
        version,
        platform,
        summary: 'Provider release not available',
        error: asProvkitError(err),
      });
      return;
    }
    // Incremental: an archive already there that authenticates is kept.
    if (action === 'verify-existing') {
      const kept = await verifyExisting(meta, dest, rel).catch(() => undefined);
      const state = states.get(rel);
      if (kept && state) {
        const refused = checkLockHashes(
          options,
          events,
          { provider, version, platform },
          { zh: parseHash(state.zh), h1Zip: state.h1Zip === null ? null : parseHash(state.h1Zip) },
        );
        if (refused) {
          events({ type: 'fetch_failed', provider, version, platform });
          failures.push(refused);
          return;
        }
        thisRun.set(rel, kept);
        packages.push({ provider, version, platform, rel, action: 'kept' });
        events(fetchCompleteEvent({ provider, version, platform }, 'reused'));
        return;
      }
    }
    throwIfAborted('mirroring', options.signal);
    events({ type: 'fetch_start', provider, version, platform, location: options.source.forDisplay(provider) });
    let fetched: FetchedPackage;
    try {
      fetched = await warmup.download(meta, (started) =>
        queueDownload(network, meta, (slotEvents) => {
          started();
          return fetchPackage(meta, {
            destPath: stagedDest,
            ...(options.http ? { http: options.http } : {}),
            ...(options.signal ? { signal: options.signal } : {}),
            hashing: poolHashing(options.pool, options.hashStore),
            events: slotEvents(warmup.events(packageNetEvents(events, provider, version, platform))),
          });
        }),
      );
      if (fetched.kind !== 'archive') {
        // An unpacked source directory: the packed layout needs a zip.
        throw new ProvkitError(
          ErrorCode.USAGE,
          `${provider.toString()} ${version.toString()} for ${platform.toString()} is an unpacked directory in the source; a packed mirror needs its zip`,
          {
            provider: provider.toString(),
          },
        );
      }
      checkFetchedFor(fetched, provider, version, platform);
    } catch (err) {
      events({ type: 'fetch_failed', provider, version, platform });
      failures.push({
        provider,
        version,
        platform,
        summary: 'Cannot download provider release',
        error: asProvkitError(err),
      });
      return;
    }
    staged.set(rel, stagedDest);
    try {
      // Hashed by fetchPackage from the bytes it fetched (it also filled the store); refuse what no client could install.
      const z = fetched.zipHashes;
      requireMirrorable(z, fetched.from);
      const refused = checkLockHashes(
        options,
        events,
        { provider, version, platform },
        { zh: z.zh, h1Zip: z.h1Zip.ok ? z.h1Zip.hash : null },
      );
      if (refused) {
        events({ type: 'fetch_failed', provider, version, platform });
        failures.push(refused);
        return;
      }
      thisRun.set(rel, fetched.hashes);
      states.set(rel, stateOf(z));
      packages.push({ provider, version, platform, rel, action: 'written' });
      events(
        fetchCompleteEvent({ provider, version, platform }, fetched, {
          hashes: packageHashes(
            fetched.hashes,
            z.h1.ok ? { hash: z.h1.hash, disposition: localDisposition(meta), platform } : undefined,
          ),
        }),
      );
    } catch (err) {
      events({ type: 'fetch_failed', provider, version, platform });
      failures.push({ provider, version, platform, summary: 'Invalid provider package', error: asProvkitError(err) });
    }
  };

  /**
   * Authenticates an archive already in the target against the source's
   * metadata, and returns the hashes a fetch of it would have returned (so
   * that a re-run writes what the first run wrote). An archive that is not
   * a usable package is not kept: it is fetched again, and refused then,
   * named by its source.
   */
  const verifyExisting = async (
    meta: PackageMeta,
    dest: string,
    rel: string,
  ): Promise<readonly TrustedHash[] | undefined> => {
    const state = await archiveState(rel);
    if (state.h1 === null || state.h1Zip === null) return undefined;
    if (meta.authentication) {
      const size = (await stat(dest)).size;
      const verified = await authenticateArchive(
        meta,
        dest,
        { zh: { scheme: 'zh:', value: state.zh.slice(3), text: state.zh }, size },
        (p) => options.pool.hashZip(p),
      );
      return [...meta.reportedHashes, ...verified.hashes];
    }
    // No authentication data (a filesystem-mirror source): compare with the
    // source's bytes. A fetch verifies nothing here, so it reports only what
    // the source reported.
    if (meta.location.kind === 'local-archive') {
      const theirs = await zhOfFile(meta.location.path);
      if (state.zh === theirs.text) return [...meta.reportedHashes];
    }
    return undefined;
  };

  await Promise.all(
    options.requirements.map(async (req) => {
      const selected = await selectMirrorVersion(options, req, events);
      if ('failure' in selected) {
        failures.push(selected.failure);
        return;
      }
      const { version } = selected;
      const rels = options.platforms.map((platform) => mirrorArchivePath(req.provider, version, platform));
      const present = await Promise.all(
        rels.map(async (rel) =>
          (await stat(join(options.targetDir, rel)).catch(() => undefined))?.isFile() === true ? rel : undefined,
        ),
      );
      const steps = planMirrorPackages(
        req.provider,
        version,
        options.platforms,
        new Set(present.filter((rel) => rel !== undefined)),
      );
      await Promise.all(steps.map(mirrorPackage));
    }),
  );

  // All or nothing: a failure or an abort leaves the target as it was.
  const aborted = (): ProvkitError =>
    new ProvkitError(
      ErrorCode.ABORTED,
      `mirroring into ${options.targetDir} was interrupted; the target is unchanged`,
      { file: options.targetDir, cause: options.signal?.reason },
    );
  if (options.signal?.aborted) throw aborted();
  if (failures.length > 0) return { failures, written: 0, reused: 0 };

  // The index documents over every packed archive, earlier ones included
  // (docs/reference.md §6.2 item 94), computed before anything in the target changes: an archive
  // that cannot be indexed fails the run with the target untouched.
  const archives = new Map<string, IndexArchive>();
  let writes: Array<{ rel: string; provider: ProviderAddress; bytes: Buffer }>;
  try {
    for (const a of await scanPacked(options.targetDir)) archives.set(a.rel, a);
    for (const p of packages) archives.set(p.rel, p);
    writes = await indexDocuments([...archives.values()]);
  } catch (err) {
    if (err instanceof IndexFailure) failures.push(err.failure);
    else failures.push({ summary: 'Failed to update indexes', error: asProvkitError(err) });
    return { failures, written: 0, reused: 0 };
  }
  if (options.signal?.aborted) throw aborted();

  // Commit: the index documents are written into the staging directory, then
  // everything moves into place by renames (one file system); a failure
  // part way puts back what was there.
  try {
    await Promise.all(
      writes.map(async (w) => {
        const to = join(staging, w.rel);
        await mkdir(dirname(to), { recursive: true, mode: 0o755 });
        await writeFileAtomic(to, w.bytes);
      }),
    );
    await commitRenames(options.targetDir, staging, [...staged.keys(), ...writes.map((w) => w.rel)].sort());
    committed();
  } catch (err) {
    failures.push({ summary: 'Failed to update the mirror', error: asProvkitError(err) });
    return { failures, written: 0, reused: 0 };
  }

  // Only now is there anything to report about the target.
  packages.sort((a, b) => compareBytewise(a.rel, b.rel));
  for (const p of packages)
    events({
      type: 'mirror_package',
      provider: p.provider,
      version: p.version,
      platform: p.platform,
      path: p.rel,
      action: p.action,
    });
  for (const w of writes) events({ type: 'mirror_index', provider: w.provider, path: w.rel });

  // The fingerprint cache only saves re-hashing: failing to keep it costs nothing else.
  if (cachePath !== undefined) {
    try {
      for (const rel of staged.keys()) {
        // A rename changes the ctime: record the fingerprint of the file in place.
        const state = states.get(rel);
        // eslint-disable-next-line no-await-in-loop -- a handful of stats
        if (state) cache[rel] = { ...(await fingerprint(join(options.targetDir, rel))), ...state };
      }
      await makeCacheDirectory(dirname(cachePath), dirname(cachePath));
      await writeFileAtomic(cachePath, Buffer.from(JSON.stringify(cache)));
    } catch {
      // Next run hashes again.
    }
  }
  return { failures: [], written: staged.size, reused: packages.length - staged.size };

  /**
   * The VERSION.json and index.json documents of every provider in
   * `archives` whose bytes differ from the target's (Go
   * `json.MarshalIndent`, docs/reference.md §6.2 item 94), sorted by path.
   */
  async function indexDocuments(
    list: readonly IndexArchive[],
  ): Promise<Array<{ rel: string; provider: ProviderAddress; bytes: Buffer }>> {
    const cpu = pLimit(4);
    const byProvider = new Map<
      string,
      { provider: ProviderAddress; byVersion: Map<string, { version: Version; archives: IndexArchive[] }> }
    >();
    for (const f of list) {
      const key = f.provider.toComparisonString();
      let entry = byProvider.get(key);
      if (!entry) byProvider.set(key, (entry = { provider: f.provider, byVersion: new Map() }));
      let v = entry.byVersion.get(f.version.toString());
      if (!v) entry.byVersion.set(f.version.toString(), (v = { version: f.version, archives: [] }));
      v.archives.push(f);
    }
    const docs: Array<{ rel: string; provider: ProviderAddress; bytes: Buffer }> = [];
    await Promise.all(
      [...byProvider.values()].map(async ({ provider, byVersion }) => {
        const dir = providerDirPath(provider);
        await Promise.all(
          [...byVersion.values()].map(async ({ version, archives: of }) => {
            const entries = await Promise.all(
              of.map((a) =>
                cpu(async () => ({
                  platform: a.platform,
                  hashes: await indexHashes(a),
                  url: a.rel.slice(dir.length + 1),
                })),
              ),
            );
            docs.push({
              rel: `${dir}/${version.toString()}.json`,
              provider,
              bytes: Buffer.from(mirrorVersionJSON(entries)),
            });
          }),
        );
        docs.push({
          rel: `${dir}/index.json`,
          provider,
          bytes: Buffer.from(mirrorIndexJSON([...byVersion.values()].map((v) => v.version))),
        });
      }),
    );
    const changed = await Promise.all(
      docs.map(async (d) => {
        const have = await readRegularFile(join(options.targetDir, d.rel)).catch(() => undefined);
        return have !== undefined && have.equals(d.bytes) ? undefined : d;
      }),
    );
    return changed.filter((d) => d !== undefined).sort((a, b) => compareBytewise(a.rel, b.rel));
  }

  /** The hashes VERSION.json lists for one archive (docs/reference.md §6.2 item 95, plus `hashes: 'all'`). */
  async function indexHashes(a: IndexArchive): Promise<string[]> {
    const { rel, platform } = a;
    const state = await archiveState(rel).catch((err: unknown) => {
      throw new IndexFailure(a, asProvkitError(err));
    });
    if (options.hashes === 'all') {
      return normalizeHashes(
        [state.zh, state.h1, state.h1Zip].flatMap((t) =>
          t ? [{ scheme: t.slice(0, 3), value: t.slice(3), text: t }] : [],
        ),
      ).map((h) => h.text);
    }
    if (options.flavor === 'tofu') {
      const run = thisRun.get(rel);
      if (run) {
        const picked = run.filter(
          (h) => (isLocal(h.trust) || isReported(h.trust)) && h.platform !== undefined && h.platform.equals(platform),
        );
        if (picked.length > 0) return normalizeHashes(picked.map((h) => h.hash)).map((h) => h.text);
      }
    }
    if (!state.h1Zip) {
      // An archive of an earlier run that cannot be hashed: say why (hash it again for the reason).
      const z = await options.pool.hashZip(join(options.targetDir, rel)).catch((err: unknown) => err);
      const error =
        z instanceof Error
          ? asProvkitError(z)
          : (z as ZipPackageHashes).h1Zip.ok
            ? new ProvkitError(ErrorCode.IO, `${join(options.targetDir, rel)}: changed while it was indexed`, {
                file: join(options.targetDir, rel),
              })
            : ((z as ZipPackageHashes).h1Zip as { error: ProvkitError }).error;
      throw new IndexFailure(a, error);
    }
    return [state.h1Zip];
  }
}

/** An archive of the target that cannot be indexed (the reference's "Failed to determine a hash value"). */
class IndexFailure extends Error {
  readonly failure: MirrorFailure;
  constructor(a: IndexArchive, error: ProvkitError) {
    super(error.message);
    this.failure = {
      provider: a.provider,
      version: a.version,
      platform: a.platform,
      summary: 'Failed to update indexes',
      error,
    };
  }
}

const stateOf = (z: ZipPackageHashes): ArchiveState => ({
  zh: z.zh.text,
  h1: z.h1.ok ? z.h1.hash.text : null,
  h1Zip: z.h1Zip.ok ? z.h1Zip.hash.text : null,
});

/**
 * Moves `rels` from `staging` into `target`, each by one rename (a file
 * already there is replaced atomically, so a reader sees the old bytes or
 * the new ones). A failure part way undoes the moves done: replaced files
 * come back from hard links taken before (copies where links are not
 * possible), new files and the directories made for them go.
 */
async function commitRenames(target: string, staging: string, rels: readonly string[]): Promise<void> {
  const backups = join(staging, '.replaced');
  const done: Array<{ rel: string; backup: string | undefined }> = [];
  const madeDirs: string[] = [];
  let current = '';
  /* eslint-disable no-await-in-loop -- renames in order, so that an undo is exact */
  try {
    for (const rel of rels) {
      current = rel;
      const to = join(target, rel);
      const made = await mkdir(dirname(to), { recursive: true, mode: 0o755 });
      if (made !== undefined) madeDirs.push(made);
      let backup: string | undefined;
      if ((await stat(to).catch(() => undefined)) !== undefined) {
        backup = join(backups, rel);
        await mkdir(dirname(backup), { recursive: true, mode: 0o755 });
        await link(to, backup).catch(() => copyFile(to, backup!));
      }
      done.push({ rel, backup });
      await rename(join(staging, rel), to);
    }
  } catch (err) {
    for (const d of done.reverse()) {
      const to = join(target, d.rel);
      if (d.backup !== undefined) await rename(d.backup, to).catch(() => undefined);
      else await rm(to, { force: true }).catch(() => undefined);
    }
    for (const dir of madeDirs.reverse()) await rm(dir, { recursive: true, force: true }).catch(() => undefined);
    // Named by the file of the target (the staging paths are gone).
    const file = join(target, current);
    throw new ProvkitError(
      ErrorCode.IO,
      `cannot put ${file} in place: ${systemErrorCode(err) ?? errorText(err)}; the mirror is unchanged`,
      { file, cause: err },
    );
  }
  /* eslint-enable no-await-in-loop */
}

/** The highest ancestor of `dir` (itself included) that does not exist, or undefined when it exists. */
async function firstMissingAncestor(dir: string): Promise<string | undefined> {
  let missing: string | undefined;
  for (let d = dir; ; d = dirname(d)) {
    // eslint-disable-next-line no-await-in-loop -- a few levels at most
    if ((await stat(d).catch(() => undefined)) !== undefined) return missing;
    missing = d;
    if (dirname(d) === d) return missing;
  }
}

/** Removes `dir` and its parents up to `top`, as long as they are empty. */
async function removeEmptyDirs(dir: string, top: string): Promise<void> {
  for (let d = dir; ; d = dirname(d)) {
    try {
      // eslint-disable-next-line no-await-in-loop -- a few levels at most
      await rmdir(d);
    } catch {
      return;
    }
    if (d === top || dirname(d) === d) return;
  }
}

/** Packed archives in a mirror directory (`SearchLocalDirectory`, packed only). */
async function scanPacked(
  base: string,
): Promise<Array<{ provider: ProviderAddress; version: Version; platform: Platform; rel: string }>> {
  const out: Array<{ provider: ProviderAddress; version: Version; platform: Platform; rel: string }> = [];
  const list = async (dir: string): Promise<string[]> => {
    try {
      return (await readdir(dir, { withFileTypes: true }))
        .filter((d) => d.isDirectory() || d.isSymbolicLink())
        .map((d) => d.name);
    } catch (err) {
      if (systemErrorCode(err) === 'ENOENT' || systemErrorCode(err) === 'ENOTDIR') return [];
      throw err;
    }
  };
  // A walk in order over three directory levels: the result order stays stable.
  /* eslint-disable no-await-in-loop */
  for (const host of (await list(base)).filter((n) => !n.startsWith('.'))) {
    for (const ns of await list(join(base, host))) {
      for (const type of await list(join(base, host, ns))) {
        let provider: ProviderAddress;
        try {
          provider = newProviderAddress(host, ns, type);
        } catch {
          continue;
        }
        const files = await readdir(join(base, host, ns, type), { withFileTypes: true }).catch(() => []);
        const prefix = `terraform-provider-${type}_`.toLowerCase();
        for (const f of files) {
          const lower = f.name.toLowerCase();
          if (!f.isFile() || !lower.startsWith(prefix) || !lower.endsWith('.zip')) continue;
          const parts = f.name.slice(prefix.length, -4).split('_');
          if (parts.length !== 3) continue;
          try {
            const version = parseVersion(parts[0]!);
            const platform = parsePlatform(`${parts[1]!}_${parts[2]!}`.toLowerCase());
            out.push({ provider, version, platform, rel: `${providerDirPath(provider)}/${f.name}` });
          } catch {
            continue;
          }
        }
      }
    }
  }
  /* eslint-enable no-await-in-loop */
  out.sort((a, b) => ProviderAddress.compare(a.provider, b.provider) || compareBytewise(a.rel, b.rel));
  return out;
}

/**
 * The diagnostics of a failed mirror run (directory, OCI or bundle import
 * into OCI), one per failure: its summary, and `PROVIDER VERSION for
 * PLATFORM: message` with what the failure names; with `hints`, the
 * error's hint.
 */
export function mirrorFailureDiagnostics(
  failures: readonly MirrorFailure[],
  options: { readonly hints: boolean },
): Diagnostic[] {
  // A cause shared by packages (a server, a registry) is said once, with its hint and the packages it stopped.
  const { causes, rest } = groupByCause(failures);
  const causeDiags = causes.map((g) =>
    causeDiagnostic(
      g.error,
      'Not mirrored',
      g.failures.map((f) => itemText(f) ?? 'the mirror'),
    ),
  );
  return [
    ...causeDiags,
    ...rest.map((f) => {
      const what = itemText(f);
      // A package that does not match the lock file always says what to do about it.
      const hint = options.hints || f.error.code === ErrorCode.LOCKFILE_CHECKSUM_MISMATCH ? f.error.hint : undefined;
      return {
        severity: 'error' as const,
        summary: f.summary,
        detail: what === undefined ? f.error.message : `${what}: ${f.error.message}`,
        code: f.error.code,
        ...(hint === undefined ? {} : { hint }),
      };
    }),
  ];
}

/** `PROVIDER VERSION for PLATFORM` of a failure, as far as it is known; undefined for the mirror as a whole. */
function itemText(f: MirrorFailure): string | undefined {
  return f.provider
    ? [f.provider.toString(), f.version?.toString(), f.platform ? `for ${f.platform.toString()}` : undefined]
        .filter((x) => x !== undefined)
        .join(' ')
    : undefined;
}
