/**
 * `providers mirror` (spec §6.2 items 92–96): copy every required provider's
 * packages for the requested platforms into a packed mirror directory and
 * (re)write its `index.json` and `VERSION.json` files.
 *
 * Byte-identical output: archive names, index documents (Go
 * `json.MarshalIndent`, keys sorted, no trailing newline) and the hashes in
 * them per flavor (item 95): terraform writes one `h1:` (zip form) per
 * archive; OpenTofu writes the platform's verified hashes of packages fetched
 * in this run (the `zh:`, plus the registry's `h1:` where it reports one) and
 * falls back to the zip-form `h1:` for archives from earlier runs. The index
 * covers every packed archive in the target, earlier ones included (item 94).
 *
 * Beyond the reference:
 * - incremental: a package already in the target whose bytes verify against
 *   the source's metadata is not fetched again (`fetch_complete` with
 *   `reused`), and counts as verified in this run;
 * - a fingerprint cache (size, mtime, ctime, inode per archive, kept outside
 *   the mirror in `cacheFile`, so the mirror holds only what the reference
 *   writes) lets a re-run skip re-hashing unchanged archives; a file whose
 *   fingerprint changed is hashed again;
 * - `hashes: 'all'` writes `zh:` and both `h1:` forms for every archive;
 * - every file is written atomically (temp file + rename): an interrupted run
 *   leaves no half-written package or index;
 * - all or nothing: packages fetched in this run land in a staging directory
 *   inside the target (`.provkit-staging-*`) and are renamed into place, and
 *   the indexes rewritten, only when every package succeeded and the run was
 *   not aborted; otherwise the staging directory is removed and the target is
 *   as it was (a target this run created is removed again when empty);
 * - one run per target: the run holds `TARGET/.provkit-mirror.lock` (PID,
 *   host, heartbeat; a lock left by a dead process or not touched for
 *   `staleMs` is broken, see `cache.ts`), so two runs into one target
 *   serialize, and the second finds the first's packages and keeps them;
 *   staging directories left by a killed run are removed under the lock;
 * - everything runs in parallel (network and CPU budgets apart).
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, rmdir, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';

import pLimit from 'p-limit';

import {
  newProviderAddress,
  parsePlatform,
  parseVersion,
  type Platform,
  ProviderAddress,
  type Version,
} from '../addresses/index.js';
import { ErrorCode, ProvkitError, systemErrorCode } from '../errors.js';
import { writeFileAtomic } from '../fs/atomic.js';
import { type Hash, normalizeHashes, zhOfFile } from '../hashing/index.js';
import type { Locks } from '../lockfile/index.js';
import { mirrorIndexJSON, mirrorVersionJSON, packedFileName, providerDirPath } from '../layout/index.js';
import { authenticateArchive, fetchPackage, type PackageMeta, type TrustedHash } from '../sources/index.js';
import { acquirePackageLock, type PackageLock, type PackageLockOptions } from './cache.js';
import { ignoreEvents } from './events.js';
import { defaultNetworkConcurrency, type FetchRunOptions, selectVersion } from './lock.js';

export type MirrorHashes = 'reference' | 'all';

export interface MirrorOptions extends FetchRunOptions {
  /** The lock file's selections; when non-empty, versions follow it (item 93.2). */
  readonly locks: Locks;
  readonly targetDir: string;
  readonly hashes?: MirrorHashes;
  /** Where the fingerprint cache of this target lives (none when absent). */
  readonly cacheFile?: string;
  /**
   * The target lock (see the module comment): its tuning, or `false` to take
   * none (only when the caller serializes runs itself). `onWait` is called
   * when another run holds the target for more than `noticeAfterMs`.
   */
  readonly targetLock?: false | Omit<PackageLockOptions, 'signal'>;
}

/** The lock file a mirror run holds in its target. */
export const MIRROR_LOCK_NAME = '.provkit-mirror.lock';
/** The prefix of the staging directories inside a target. */
export const MIRROR_STAGING_PREFIX = '.provkit-staging-';

export interface MirrorFailure {
  /** Absent for failures that concern the whole mirror (the indexes). */
  readonly provider?: ProviderAddress;
  readonly platform?: Platform;
  readonly summary: string;
  readonly error: ProvkitError;
}

export interface MirrorOutcome {
  readonly failures: readonly MirrorFailure[];
  readonly written: number;
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

const sameFingerprint = (a: Fingerprint, b: Fingerprint): boolean => a.size === b.size && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs && a.ino === b.ino;

/**
 * Mirrors (see the module comment).
 *
 * @returns the failures (when there are any, nothing in the target changed)
 *   and the counts.
 * @throws ProvkitError ABORTED when `signal` fired (the target is as it was,
 *   no temporary file remains), PACKAGE_LOCK_TIMEOUT, IO (the target lock)
 */
export async function runMirror(options: MirrorOptions): Promise<MirrorOutcome> {
  const targetExisted = (await stat(options.targetDir).catch(() => undefined)) !== undefined;
  let lock: PackageLock | undefined;
  const staging = join(options.targetDir, `${MIRROR_STAGING_PREFIX}${randomBytes(6).toString('hex')}`);
  let committed = false;
  try {
    // Inside the try: taking the lock creates the target, and an interrupt
    // while waiting for it must remove it again like any other.
    if (options.targetLock !== false) {
      lock = await acquirePackageLock(join(options.targetDir, MIRROR_LOCK_NAME), { ...options.targetLock, ...(options.signal ? { signal: options.signal } : {}) });
    }
    // Under the lock, any staging directory is a killed run's leftover.
    const leftovers = (await readdir(options.targetDir).catch(() => [])).filter((n) => n.startsWith(MIRROR_STAGING_PREFIX));
    await Promise.all(leftovers.map((n) => rm(join(options.targetDir, n), { recursive: true, force: true })));
    const outcome = await mirrorLocked(options, staging);
    committed = outcome.failures.length === 0;
    return outcome;
  } finally {
    await rm(staging, { recursive: true, force: true });
    await lock?.release();
    if (!committed && !targetExisted) await rmdir(options.targetDir).catch(() => undefined);
  }
}

async function mirrorLocked(options: MirrorOptions, staging: string): Promise<MirrorOutcome> {
  const events = options.events ?? ignoreEvents;
  /** Archives fetched in this run: relative path → staged absolute path, until committed. */
  const staged = new Map<string, string>();
  const network = pLimit(options.networkConcurrency ?? defaultNetworkConcurrency());
  const failures: MirrorFailure[] = [];
  const cachePath = options.cacheFile;
  const cache: CacheFile =
    cachePath === undefined
      ? {}
      : await readFile(cachePath, 'utf8')
          .then((t) => JSON.parse(t) as CacheFile)
          .catch(() => ({}));
  /** Hashes of archives verified or fetched in this run, by relative path, with their trust. */
  const thisRun = new Map<string, readonly TrustedHash[]>();
  const states = new Map<string, ArchiveState>();
  let written = 0;
  let reused = 0;

  /** zh and both h1 forms of an archive, from the cache when its fingerprint is unchanged. */
  const archiveState = async (rel: string, knownZh?: Hash): Promise<ArchiveState> => {
    const have = states.get(rel);
    if (have) return have;
    const abs = staged.get(rel) ?? join(options.targetDir, rel);
    const fp = await fingerprint(abs);
    const cached = cache[rel];
    let state: ArchiveState;
    if (cached && sameFingerprint(cached, fp)) {
      state = { zh: cached.zh, h1: cached.h1, h1Zip: cached.h1Zip };
    } else {
      const z = await options.pool.hashZip(abs, knownZh);
      await options.hashStore?.put(z);
      state = { zh: z.zh.text, h1: z.h1.ok ? z.h1.hash.text : null, h1Zip: z.h1Zip.ok ? z.h1Zip.hash.text : null };
    }
    cache[rel] = { ...fp, ...state };
    states.set(rel, state);
    return state;
  };

  const mirrorPackage = async (provider: ProviderAddress, version: Version, platform: Platform): Promise<void> => {
    const rel = `${providerDirPath(provider)}/${packedFileName(provider, version, platform)}`;
    const dest = join(options.targetDir, rel);
    const stagedDest = join(staging, rel);
    let meta: PackageMeta;
    try {
      meta = await options.source.packageMeta(provider, version, platform, options.signal);
    } catch (err) {
      failures.push({ provider, platform, summary: 'Provider release not available', error: asError(err) });
      return;
    }
    // Incremental: an archive already there that authenticates is kept.
    const existing = await stat(dest).catch(() => undefined);
    if (existing?.isFile()) {
      const kept = await verifyExisting(meta, dest, rel).catch(() => undefined);
      if (kept) {
        thisRun.set(rel, kept);
        reused += 1;
        events({ type: 'fetch_complete', provider, version, platform, auth: 'verified checksum', keyId: undefined, reused: true });
        events({ type: 'mirror_package', provider, version, platform, path: rel, action: 'kept' });
        return;
      }
    }
    events({ type: 'fetch_start', provider, version, platform, location: options.source.forDisplay(provider) });
    try {
      const fetched = await network(() =>
        fetchPackage(meta, {
          destPath: stagedDest,
          ...(options.http ? { http: options.http } : {}),
          ...(options.signal ? { signal: options.signal } : {}),
          hashZip: (p) => options.pool.hashZip(p),
          streamZip: () => options.pool.streamZip(),
          ...(options.hashStore ? { hashStore: options.hashStore } : {}),
          events: { onProgress: (e) => events({ type: 'fetch_progress', provider, version, platform, bytes: e.received, total: e.total }) },
        }),
      );
      if (fetched.kind !== 'archive') {
        // An unpacked source directory: the packed layout needs a zip.
        throw new ProvkitError(ErrorCode.USAGE, `${provider.toString()} ${version.toString()} for ${platform.toString()} is an unpacked directory in the source; a packed mirror needs its zip`, {
          provider: provider.toString(),
        });
      }
      thisRun.set(rel, fetched.hashes);
      staged.set(rel, stagedDest);
      // The file will be replaced: forget what was computed for the old bytes.
      states.delete(rel);
      const z = fetched.zipHashes;
      if (z) {
        states.set(rel, { zh: z.zh.text, h1: z.h1.ok ? z.h1.hash.text : null, h1Zip: z.h1Zip.ok ? z.h1Zip.hash.text : null });
      } else {
        // Hash now, while other packages are still downloading.
        await archiveState(rel, fetched.zh);
      }
      written += 1;
      events({ type: 'fetch_complete', provider, version, platform, auth: fetched.label, keyId: fetched.keyId, reused: false });
      events({ type: 'mirror_package', provider, version, platform, path: rel, action: 'written' });
    } catch (err) {
      failures.push({ provider, platform, summary: 'Cannot download provider release', error: asError(err) });
    }
  };

  /** Authenticates an archive already in the target against the source's metadata. */
  const verifyExisting = async (meta: PackageMeta, dest: string, rel: string): Promise<readonly TrustedHash[] | undefined> => {
    if (meta.authentication) {
      const state = await archiveState(rel);
      const size = (await stat(dest)).size;
      const verified = await authenticateArchive(meta, dest, { zh: { scheme: 'zh:', value: state.zh.slice(3), text: state.zh }, size }, (p) => options.pool.hashZip(p));
      return [...meta.reportedHashes, ...verified.hashes];
    }
    // No authentication data (a filesystem-mirror source): compare with the source's bytes.
    if (meta.location.kind === 'local-archive') {
      const [mine, theirs] = await Promise.all([archiveState(rel), zhOfFile(meta.location.path)]);
      if (mine.zh === theirs.text) return [...meta.reportedHashes, { hash: theirs, trust: { kind: 'verified-locally' }, platform: meta.platform }];
    }
    return undefined;
  };

  await Promise.all(
    options.requirements.map(async (req) => {
      const { provider } = req;
      let version: Version;
      try {
        const locked = options.locks.size > 0 ? options.locks.provider(provider) : undefined;
        if (options.locks.size > 0 && !locked) {
          failures.push({
            provider,
            summary: 'Provider not found in lockfile',
            error: new ProvkitError(ErrorCode.NOT_FOUND, `Failed to find ${provider.toString()} in the lock file`, { provider: provider.toString() }),
          });
          return;
        }
        const available = await options.source.availableVersions(provider, options.signal);
        version = selectVersion(provider, available.versions, req.constraints, locked?.version, options.flavor).version;
        events({ type: 'provider_selected', provider, version, reason: locked ? 'lock' : req.constraints.isEmpty ? 'unconstrained' : 'constraints', constraints: req.constraints.toString() });
      } catch (err) {
        failures.push({ provider, summary: 'Provider not available', error: asError(err) });
        return;
      }
      await Promise.all(options.platforms.map((platform) => mirrorPackage(provider, version, platform)));
    }),
  );

  // All or nothing: a failure or an abort leaves the target as it was.
  if (options.signal?.aborted) {
    throw new ProvkitError(ErrorCode.ABORTED, `mirroring into ${options.targetDir} was interrupted; the target is unchanged`, { file: options.targetDir, cause: options.signal.reason });
  }
  if (failures.length > 0) return { failures, written: 0, reused };

  // Index generation over every packed archive in the target (item 94).
  try {
    // Commit: the staged archives move into place (renames within one file system).
    for (const [rel, from] of staged) {
      // eslint-disable-next-line no-await-in-loop -- a handful of renames, in order
      await mkdir(dirname(join(options.targetDir, rel)), { recursive: true });
      // eslint-disable-next-line no-await-in-loop
      await rename(from, join(options.targetDir, rel));
      staged.delete(rel);
      // A rename changes the ctime: record the fingerprint of the file in place.
      const state = states.get(rel);
      // eslint-disable-next-line no-await-in-loop
      if (state) cache[rel] = { ...(await fingerprint(join(options.targetDir, rel))), ...state };
    }
    const found = await scanPacked(options.targetDir);
    const cpu = pLimit(4);
    const byProvider = new Map<string, { provider: ProviderAddress; byVersion: Map<string, { version: Version; archives: Array<{ platform: Platform; rel: string }> }> }>();
    for (const f of found) {
      const key = f.provider.toComparisonString();
      let entry = byProvider.get(key);
      if (!entry) byProvider.set(key, (entry = { provider: f.provider, byVersion: new Map() }));
      let v = entry.byVersion.get(f.version.toString());
      if (!v) entry.byVersion.set(f.version.toString(), (v = { version: f.version, archives: [] }));
      v.archives.push({ platform: f.platform, rel: f.rel });
    }
    await Promise.all(
      [...byProvider.values()].map(async ({ provider, byVersion }) => {
        const dir = providerDirPath(provider);
        for (const { version, archives } of byVersion.values()) {
          // Versions one after another; their archives are hashed in parallel.
          // eslint-disable-next-line no-await-in-loop
          const docs = await Promise.all(
            archives.map((a) =>
              cpu(async () => ({ platform: a.platform, hashes: await indexHashes(a.rel, a.platform), url: a.rel.slice(dir.length + 1) })),
            ),
          );
          // eslint-disable-next-line no-await-in-loop
          await writeFileAtomic(join(options.targetDir, dir, `${version.toString()}.json`), Buffer.from(mirrorVersionJSON(docs)));
        }
        await writeFileAtomic(join(options.targetDir, dir, 'index.json'), Buffer.from(mirrorIndexJSON([...byVersion.values()].map((v) => v.version))));
        events({ type: 'mirror_index', provider, path: `${dir}/index.json` });
      }),
    );
    if (cachePath !== undefined) {
      await mkdir(dirname(cachePath), { recursive: true });
      await writeFileAtomic(cachePath, Buffer.from(JSON.stringify(cache)));
    }
  } catch (err) {
    failures.push({ summary: 'Failed to update indexes', error: asError(err) });
  }
  return { failures, written, reused };

  /** The hashes VERSION.json lists for one archive (item 95, plus `hashes: 'all'`). */
  async function indexHashes(rel: string, platform: Platform): Promise<string[]> {
    const state = await archiveState(rel);
    if (options.hashes === 'all') {
      return normalizeHashes([state.zh, state.h1, state.h1Zip].flatMap((t) => (t ? [{ scheme: t.slice(0, 3), value: t.slice(3), text: t }] : []))).map((h) => h.text);
    }
    if (options.flavor === 'tofu') {
      const run = thisRun.get(rel);
      if (run) {
        const picked = run.filter(
          (h) =>
            (h.trust.kind === 'verified-locally' || h.trust.kind === 'reported-by-registry' || h.trust.kind === 'reported-by-mirror') &&
            h.platform !== undefined &&
            h.platform.equals(platform),
        );
        if (picked.length > 0) return normalizeHashes(picked.map((h) => h.hash)).map((h) => h.text);
      }
    }
    if (!state.h1Zip) throw new ProvkitError(ErrorCode.ZIP_FORMAT, `cannot hash ${rel} for the index`, { file: rel });
    return [state.h1Zip];
  }
}

function asError(err: unknown): ProvkitError {
  if (err instanceof ProvkitError) return err;
  return new ProvkitError(ErrorCode.IO, err instanceof Error ? err.message : String(err), { cause: err });
}

/** Packed archives in a mirror directory (`SearchLocalDirectory`, packed only). */
async function scanPacked(base: string): Promise<Array<{ provider: ProviderAddress; version: Version; platform: Platform; rel: string }>> {
  const out: Array<{ provider: ProviderAddress; version: Version; platform: Platform; rel: string }> = [];
  const list = async (dir: string): Promise<string[]> => {
    try {
      return (await readdir(dir, { withFileTypes: true })).filter((d) => d.isDirectory() || d.isSymbolicLink()).map((d) => d.name);
    } catch (err) {
      if (systemErrorCode(err) === 'ENOENT' || systemErrorCode(err) === 'ENOTDIR') return [];
      throw err;
    }
  };
  // A walk in order over three directory levels: the result order stays stable.
  /* eslint-disable no-await-in-loop */
  for (const host of await list(base)) {
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
  out.sort((a, b) => ProviderAddress.compare(a.provider, b.provider) || a.rel.localeCompare(b.rel));
  return out;
}
