/**
 * The provider step of `init` (`provkit install`): every provider the
 * configuration requires, for one platform, into
 * `TARGET/HOST/NS/TYPE/VERSION/OS_ARCH` (docs/reference.md §5, items 74–87), verified
 * against the lock file (docs/reference.md §3.4 items 46–49), and the lock updated as `init`
 * updates it (docs/reference.md §3.3 items 41–42).
 *
 * Per provider (providers run concurrently; downloads are bounded by
 * `networkConcurrency`, the largest announced archive first, each slot given
 * back at its body's last byte: download-queue.ts; hashing by the pool):
 *
 * 1. Selection (docs/reference.md §3.4 item 46): the locked version unless `upgrade`; it must still
 *    meet the constraints. Otherwise the newest acceptable version.
 * 2. Reuse without fetching:
 *    - the target already holds the version and matches one of the lock's
 *      `h1:` (HashDir): "Using previously-installed" (docs/reference.md §5.2 item 78.1); the lock
 *      entry is kept as it is;
 *    - the plugin cache holds it and matches (or, with
 *      `cacheMayBreakLockFile`, the lock has no hashes): linked into the
 *      target, "from the shared cache directory" (docs/reference.md §5.2 item 78.3).
 *    For a locked version both checks run before the source is asked
 *    anything, so a warm cache or an installed target installs offline
 *    (OpenTofu 1.12 does this for the cache, docs/reference.md §5.2 item 77; terraform 1.11.4 asks
 *    the source first and fails when it is unreachable, confirmed with
 *    terraform). The cost: a locked version withdrawn from its source is
 *    not noticed while it is installed.
 * 3. Otherwise fetch (`PackageMeta`, then `fetchPackage`, which runs the
 *    source's authentication), check it against the lock (docs/reference.md §3.4 items 47–49: an
 *    archive by `zh:` or zip-form `h1:`; a directory only when a non-`zh:`
 *    hash exists), and install into the cache if one is configured, else the
 *    target: an archive is extracted (extract.ts: streamed into a temporary
 *    directory, renamed into place when complete), a directory is linked
 *    (docs/reference.md §5.3 item 83). The executable must be there (docs/reference.md §5.1 item 75), before anything is
 *    committed. With a cache, the result is then linked into the target.
 * 4. The new lock entry (docs/reference.md §5.2 item 79, `mergeInit`): prior hashes when the version
 *    is unchanged, the installed directory's `h1:`, and the hashes the
 *    flavor trusts, by the rule `lock` also uses (lockfile/record.ts: signed
 *    SHA256SUMS lines; OpenTofu also locally verified hashes and, on its
 *    default registry without enforcement, registry- and mirror-reported ones).
 *
 * Every install into a package directory (cache or target) holds that
 * package's directory mutex (fs/dir-mutex.ts), so concurrent installs sharing a cache are
 * safe: the second waits, then finds the package in place.
 *
 * Beyond the reference: an existing package directory that does not match is
 * replaced atomically by the verified package (terraform 1.11 extracts over
 * it, keeping stale files; OpenTofu 1.12 refuses), unless its content already
 * equals the archive's extracted form, when it is kept as is.
 *
 * Where it writes (docs/file-modes.md): the `HOST/NS/TYPE/VERSION` levels of the
 * target and the cache are made by {@link TreeDirs}, which refuses a level
 * that is a symbolic link (terraform 1.11.4 writes through it) and, when the
 * run ends, removes the levels it made that stayed empty, so a failed install
 * leaves no empty directories. Files extracted into the cache lose group and
 * world write bits (docs/file-modes.md); `.terraform/providers` keeps the
 * reference's modes.
 *
 * Errors are collected per provider ({@link InstallOutcome.failures}); a
 * failed provider keeps its old lock entry. The library never prints: it
 * reports {@link InstallerEvent}s.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

import {
  defaultRegistryHost,
  type Flavor,
  type Platform,
  type ProviderAddress,
  type Version,
  type Requirement,
} from '../addresses/index.js';
import { asProvkitError, type Diagnostic, ErrorCode, ProvkitError, WarningCode } from '../errors.js';
import { removeOnExit } from '../fs/cleanup.js';
import { type DirMutexOptions, withDirMutex } from '../fs/dir-mutex.js';
import type { Hash, HashPool, HashStore, ZipLimits } from '../hashing/index.js';
import {
  allowedHashes,
  hashesToRecord,
  type InstalledProvider,
  type Locks,
  mergeInit,
  reportedHashesTrusted,
  verifyPackage,
} from '../lockfile/index.js';
import { redactURL, type HttpClient } from '../net/index.js';
import {
  checkFetchedFor,
  fetchPackage,
  localDisposition,
  type FetchedPackage,
  type PackageMeta,
  poolHashing,
  type Source,
} from '../sources/index.js';
import {
  findExecutable,
  inspectPackageDir,
  linkPackageDir,
  packageDir,
  packageMutexPath,
  TreeDirs,
  versionDirPath,
} from './package-dirs.js';
import { requireExtractable } from './archive-check.js';
import { abortable, abortableSource, withSignal } from './abort.js';
import {
  type AuthLabel,
  type EventSink,
  ignoreEvents,
  type PackageHash,
  packageHashes,
  packageNetEvents,
  queryWarningsEvent,
} from './events.js';
import { causeDiagnostic, groupByCause } from './causes.js';
import { type ExtractLimits, extractPackage, removeStaleTemps } from './extract.js';
import { installSelection, reuseCached, reuseInstalled } from './install-plan.js';
import { DEFAULT_DOWNLOADS, networkQueue, queueDownload, type SlotEvents } from './download-queue.js';
import { ArchiveWarmup } from './archive-warmup.js';
import type { ProviderFailure } from './lock.js';
import { querySelectVersion, selectVersion } from './select-version.js';
import { downloadName } from '../layout/index.js';

/** How {@link runInstall} installs a configuration's providers (`provkit install`, the provider step of `init`). */
export interface InstallOptions {
  /** The providers to install, with their merged version constraints (`loadModuleRequirements` of `provkit/config`). */
  readonly requirements: readonly Requirement[];
  /**
   * The lock file's locks: a locked version is installed when it meets the constraints, and every package is
   * checked against its hashes.
   */
  readonly oldLocks: Locks;
  /** The platform to install for (the current one, or `-platform` in tests). */
  readonly platform: Platform;
  /**
   * Where versions, metadata and packages come from (registry, mirror, {@link MultiSource} of
   * `provider_installation`).
   */
  readonly source: Source;
  /** The hash pool that checks packages (`h1:` of archives and of installed directories); owned by the caller. */
  readonly pool: HashPool;
  /**
   * Hashes of archives seen before, by `zh:` (hashing/store.ts): a registry
   * package whose signed `zh:` is there is downloaded (and checked against
   * it) but not hashed; archives hashed here are added.
   */
  readonly hashStore?: HashStore;
  /** Needed when the source returns http locations. */
  readonly http?: HttpClient;
  /** The flavor: the lock file's rules, messages and signature policy. */
  readonly flavor: Flavor;
  /** The `.terraform/providers` directory. */
  readonly targetDir: string;
  /** The global plugin cache (docs/reference.md §5.4 item 85); must exist. */
  readonly cacheDir?: string;
  /** `plugin_cache_may_break_dependency_lock_file` (docs/reference.md §5.2 item 78.4). */
  readonly cacheMayBreakLockFile?: boolean;
  /** `-upgrade`: ignore the locked versions (docs/reference.md §3.4 item 46). */
  readonly upgrade?: boolean;
  /**
   * Install events: `install_resolving`, `provider_selected`, `install_start`, `fetch_*`, `install_complete`,
   * `package_lock_wait`, `warning`.
   */
  readonly events?: EventSink;
  /**
   * Aborts the run: it throws `ProvkitError` `ABORTED` (installer/abort.ts); a package is installed completely or
   * not at all.
   */
  readonly signal?: AbortSignal;
  /** Archives downloaded at once, exactly; unset: adaptive, up to `DEFAULT_DOWNLOADS` (download-queue.ts `networkQueue`). */
  readonly networkConcurrency?: number;
  /** `OPENTOFU_ENFORCE_GPG_VALIDATION` in effect. */
  readonly enforceSignatures?: boolean;
  /** Tuning of the package directory mutexes (stale timeout, heartbeat). */
  readonly packageMutexes?: Omit<DirMutexOptions, 'signal' | 'onWait' | 'onBreak'>;
  /** Limits of what one archive may extract to (entries, bytes, ratio; extract.ts), tightened or widened per field. */
  readonly extractLimits?: Partial<ExtractLimits>;
  /** Archive limits for extraction (the compression ratio; see `ZipLimits`). */
  readonly zipLimits?: ZipLimits;
}

/** One provider in place. */
export interface InstalledPackage {
  /** Which provider, normalised: its directory is `HOST/NS/TYPE` of this address under the providers directory. */
  readonly provider: ProviderAddress;
  /** The version installed, selected as the module comment says (docs/reference.md §3.4 item 46). */
  readonly version: Version;
  /** The platform installed for (the run's `platform`). */
  readonly platform: Platform;
  /** The package directory in the target (a symlink when it came from a cache or an unpacked mirror). */
  readonly dir: string;
  /** The provider's executable in `dir` (the file named `terraform-provider-TYPE…`), as a path. */
  readonly executable: string;
  /**
   * `installed`: fetched now; `previously-installed`: the target already held it, matching the lock; `cache`:
   * linked from the plugin cache.
   */
  readonly mode: 'installed' | 'previously-installed' | 'cache';
  /** `h1:` of the installed directory. */
  readonly h1: Hash;
}

/**
 * What {@link runInstall} did: the new locks, what is installed, and what failed (those providers' lock entries
 * unchanged).
 */
export interface InstallOutcome {
  /** The locks after the install; providers that failed keep their old entry, providers no longer required are gone. */
  readonly locks: Locks;
  /** Every provider in place, in whichever way ({@link InstalledPackage.mode}). */
  readonly installed: readonly InstalledPackage[];
  /** Providers that could not be installed, with the phase each failed in; empty when the install succeeded. */
  readonly failures: readonly InstallFailure[];
}

/**
 * Where an install failed, as the reference's installer reports it
 * (hashicorp/terraform internal/providercache/installer.go events):
 * `query` while choosing the version (`QueryPackagesFailure`), `fetch`
 * from the package's metadata on (`FetchPackageFailure`), `cache` while
 * linking a package from the plugin cache (`LinkFromCacheFailure`).
 */
export type InstallPhase = 'query' | 'fetch' | 'cache';

/** A provider that could not be installed: the error, and where in the install it failed. */
export interface InstallFailure extends ProviderFailure {
  /** Where it failed: choosing the version, fetching, or linking from the plugin cache. */
  readonly phase: InstallPhase;
  /** The version chosen, once it is known (always in the `fetch` and `cache` phases). */
  readonly version: Version | undefined;
}

/**
 * What `init` does with the lock file after a successful install (docs/reference.md §3.3 item 42):
 * nothing when the locks are equal (`Locks.Equal` ignores constraints); write
 * them otherwise, or, read-only, a warning (`readonly-changed`) or an error
 * when the set of providers changed (`readonly-providers-changed`).
 */
export type LockFileAction = 'unchanged' | 'write' | 'readonly-changed' | 'readonly-providers-changed';

/** See {@link LockFileAction}. `equal` is `locksEqual(old, next)`. */
export function lockFileAction(old: Locks, next: Locks, equal: boolean, readonly: boolean): LockFileAction {
  if (equal) return 'unchanged';
  if (!readonly) return 'write';
  const keys = (l: Locks): string =>
    l
      .all()
      .map((x) => x.provider.toComparisonString())
      .join('\n');
  return keys(old) === keys(next) ? 'readonly-changed' : 'readonly-providers-changed';
}

/**
 * The providers whose new lock entry holds only the checksum computed here,
 * for this platform (init's "Incomplete lock file information for
 * providers": hashicorp/terraform v1.11.4 and opentofu/opentofu
 * internal/command/init.go, the `ProvidersLockUpdated` callback): no signed
 * hashes were recorded, and the old entry had none besides that one either.
 * Sorted by their display names (`name`), as init sorts them.
 */
export function incompleteLockProviders(
  installed: readonly InstalledPackage[],
  next: Locks,
  name: (p: ProviderAddress) => string,
): string[] {
  const out: string[] = [];
  for (const pkg of installed) {
    if (pkg.mode === 'previously-installed') continue;
    const hashes = next.provider(pkg.provider)?.hashes ?? [];
    if (hashes.length > 0 && hashes.every((h) => h.text === pkg.h1.text)) out.push(name(pkg.provider));
  }
  return [...new Set(out)].sort();
}

/** Why an archive whose extracted form the lock records is still refused (docs/reference.md §2.3 item 27). */
function formsHint(entries: readonly string[]): string {
  return (
    `the lock file holds this package's h1: as extracted, but an archive is checked with the h1: of its entries as stored, ` +
    `which differs for this archive (${entries.map((e) => JSON.stringify(e)).join(', ') || 'directory entries, duplicates or rewritten names'}); ` +
    "the reference refuses it the same way. Recording the archive's zh: (a lock from the origin registry) lets it install."
  );
}

/** What one provider's install produced. */
interface ProviderResult {
  readonly installed: InstalledPackage;
  /** The lock entry to set; undefined keeps the old entry untouched (previously installed). */
  readonly lock: InstalledProvider | undefined;
}

/**
 * Installs every requirement for `options.platform`; see the module comment.
 * Never throws for a provider's failure: those are in `failures`.
 */
export async function runInstall(options: InstallOptions): Promise<InstallOutcome> {
  return abortable('installing', options.signal, (signal) =>
    installWith({ ...withSignal(options, signal), source: abortableSource(options.source, signal, 'installing') }),
  );
}

async function installWith(options: InstallOptions): Promise<InstallOutcome> {
  const events = options.events ?? ignoreEvents;
  const slots = options.networkConcurrency ?? DEFAULT_DOWNLOADS;
  // Downloads in slots of their own, the largest announced archive first, each slot given back at its last byte (download-queue.ts).
  const network = networkQueue(options.networkConcurrency);
  // Metadata ahead of bytes, archive hosts warmed, redirects learnt ahead: as for lock (archive-warmup.ts).
  const warmup = new ArchiveWarmup({ http: options.http, signal: options.signal, slots });
  const { platform, flavor, pool } = options;
  const work = await mkdtemp(join(tmpdir(), 'provkit-install-'));
  // Removed in the finally below; and at exit if the process ends without getting there (src/fs/cleanup.ts).
  const forgetWork = removeOnExit(work);
  const tree = new TreeDirs();

  const mutexOptions = (provider: ProviderAddress): DirMutexOptions => ({
    ...options.packageMutexes,
    ...(options.signal ? { signal: options.signal } : {}),
    onWait: (w) =>
      events({
        type: 'package_lock_wait',
        provider,
        path: w.path,
        holder: w.holder ? `process ${w.holder.pid} on ${w.holder.hostname}` : undefined,
        waitedMs: w.waitedMs,
      }),
    onBreak: (b) =>
      events({
        type: 'warning',
        code: WarningCode.STALE_MUTEX_REMOVED,
        summary: `Broke a stale package mutex`,
        detail: `${b.path} was ${b.reason === 'dead-process' ? `held by process ${b.holder?.pid ?? '?'}, which no longer runs` : 'not refreshed for too long'}; it was removed.`,
        provider,
      }),
  });

  /** HashDir of `dir`, or undefined when it cannot be hashed (the reference ignores that error, docs/reference.md §5.2 item 78.1). */
  const hashDirOrUndefined = async (dir: string): Promise<Hash | undefined> => {
    try {
      return await pool.hashDir(dir);
    } catch {
      return undefined;
    }
  };

  /** `at` follows the work: its phase and version say where a failure happened. */
  const installOne = async (
    req: Requirement,
    at: { phase: InstallPhase; version: Version | undefined; started: boolean },
  ): Promise<ProviderResult> => {
    const { provider, constraints } = req;
    const lock = options.oldLocks.provider(provider);
    const locked = options.upgrade ? undefined : lock?.version;
    events({ type: 'install_resolving', provider, constraints: constraints.toString(), locked });

    // Step 1: selection (docs/reference.md items 46, 87; install-plan.ts).
    const selection = installSelection(req, lock, { upgrade: options.upgrade === true, flavor });
    let version: Version;
    let queried = false;
    if (selection.kind === 'locked') {
      version = selection.version;
    } else {
      version = await querySelectVersion(options.source, req, undefined, {
        flavor,
        events,
        signal: options.signal,
        onWarnings: (warnings) => {
          const warned = queryWarningsEvent(provider, warnings);
          if (warned) events(warned);
        },
      });
      queried = true;
    }
    at.version = version;
    const allowed = allowedHashes(lock, version);
    const targetPath = packageDir(options.targetDir, provider, version, platform);
    const cachePath =
      options.cacheDir === undefined ? undefined : packageDir(options.cacheDir, provider, version, platform);
    const installBase = options.cacheDir ?? options.targetDir;
    const installPath = cachePath ?? targetPath;
    // Both trees are checked before anything is read or written through them.
    await tree.make(options.targetDir, versionDirPath(provider, version));
    if (options.cacheDir !== undefined) await tree.make(options.cacheDir, versionDirPath(provider, version));

    const linkIntoTarget = async (from: string): Promise<void> => {
      await withDirMutex(packageMutexPath(options.targetDir, provider, version, platform), mutexOptions(provider), () =>
        linkPackageDir(from, targetPath),
      );
    };

    const done = (
      mode: InstalledPackage['mode'],
      executable: string,
      h1: Hash,
      auth: AuthLabel | undefined,
      keyId: string | undefined,
      lockEntry: InstalledProvider | undefined,
      hashes?: readonly PackageHash[],
    ): ProviderResult => {
      events({
        type: 'install_complete',
        provider,
        version,
        platform,
        mode,
        auth,
        keyId,
        dir: targetPath,
        ...(hashes === undefined ? {} : { hashes }),
      });
      return { installed: { provider, version, platform, dir: targetPath, executable, mode, h1 }, lock: lockEntry };
    };

    return withDirMutex(
      packageMutexPath(installBase, provider, version, platform),
      mutexOptions(provider),
      async () => {
        at.phase = 'fetch';
        // Step 2a: the target already holds a matching package (docs/reference.md §5.2 item 78.1).
        if (allowed.length > 0) {
          const t = await inspectPackageDir(targetPath);
          const h1 = t.kind === 'dir' ? await hashDirOrUndefined(targetPath) : undefined;
          if (h1 !== undefined && reuseInstalled(allowed, h1)) {
            const executable = await findExecutable(targetPath, provider, version, platform);
            return done('previously-installed', executable, h1, undefined, undefined, undefined);
          }
        }
        // Step 2b: the cache holds an acceptable package (docs/reference.md §5.2 item 78.3).
        if (cachePath !== undefined) {
          const c = await inspectPackageDir(cachePath);
          if (c.kind === 'dir') {
            const h1 = await hashDirOrUndefined(cachePath);
            if (h1 !== undefined && reuseCached(allowed, h1, options.cacheMayBreakLockFile === true)) {
              at.phase = 'cache';
              await findExecutable(cachePath, provider, version, platform);
              await linkIntoTarget(cachePath);
              const executable = await findExecutable(targetPath, provider, version, platform);
              return done('cache', executable, h1, undefined, undefined, {
                provider,
                version,
                constraints,
                localHash: h1,
                signedHashes: [],
              });
            }
          }
        }

        // Step 3: fetch, verify, install (a locked version is looked up now: still the version query).
        at.phase = 'query';
        if (!queried) {
          const available = await options.source.availableVersions(provider, options.signal);
          const warned = queryWarningsEvent(provider, available.warnings);
          if (warned) events(warned);
          selectVersion(provider, available.versions, constraints, version, flavor);
        }
        at.phase = 'fetch';
        const meta = await warmup.packageMeta(options.source, { provider, version, platform });
        for (const w of meta.warnings)
          events({ type: 'warning', code: WarningCode.SOURCE_WARNING, summary: w, detail: '', provider });
        events({ type: 'install_start', provider, version, platform, location: options.source.forDisplay(provider) });
        at.started = true;
        await removeStaleTemps(installPath);
        const fetched = await warmup.download(meta, (started) =>
          queueDownload(network, meta, (slotEvents) => {
            started();
            return fetchOne(meta, slotEvents);
          }),
        );
        try {
          checkFetchedFor(fetched, provider, version, platform);
          const h1 = await installFetched(meta, fetched, allowed, installPath);
          // Item 78.5: the executable must be there (also checked before committing).
          await findExecutable(installPath, provider, version, platform);
          if (cachePath !== undefined) await linkIntoTarget(cachePath);
          const executable = await findExecutable(targetPath, provider, version, platform);
          // The lock file layer's one rule (lockfile/record.ts), as `providers lock` records.
          const signedHashes = hashesToRecord({
            flavor,
            operation: 'init',
            reportedTrusted: reportedHashesTrusted(provider, options.enforceSignatures ?? false),
            hashes: fetched.hashes,
          });
          const keyId = fetched.kind === 'archive' ? fetched.keyId : undefined;
          return done(
            'installed',
            executable,
            h1,
            fetched.label,
            keyId,
            { provider, version, constraints, localHash: h1, signedHashes },
            packageHashes(fetched.hashes, { hash: h1, disposition: localDisposition(meta), platform }),
          );
        } finally {
          // A downloaded archive is not kept (a local one is never copied).
          if (fetched.kind === 'archive' && fetched.path.startsWith(work))
            await rm(dirname(fetched.path), { recursive: true, force: true });
        }
      },
    );
  };

  const fetchOne = async (meta: PackageMeta, slotEvents: SlotEvents): Promise<FetchedPackage> => {
    const { provider, version } = meta;
    // A directory of its own per package (archives of different packages share file names, docs/reliability.md).
    return fetchPackage(meta, {
      ...(meta.location.kind === 'http'
        ? { destPath: join(await mkdtemp(join(work, 'pkg-')), downloadName(meta.filename)) }
        : {}),
      ...(options.http ? { http: options.http } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      hashing: poolHashing(pool, options.hashStore),
      events: slotEvents(warmup.events(packageNetEvents(events, provider, version, platform))),
    });
  };

  /**
   * Checks a fetched package against the lock (docs/reference.md §3.4 items 48–49) and puts it at
   * `installPath`; returns the installed directory's `h1:`.
   */
  const installFetched = async (
    meta: PackageMeta,
    fetched: FetchedPackage,
    allowed: readonly Hash[],
    installPath: string,
  ): Promise<Hash> => {
    const { provider, version } = meta;
    const where = `${provider.toString()} ${version.toString()} ${platform.toString()}`;
    if (fetched.kind === 'dir') {
      const h1 = await pool.hashDir(fetched.path);
      const verdict = verifyPackage(allowed, { kind: 'dir', h1 }, provider, version, flavor);
      if (verdict.kind === 'mismatch') throw mismatch(verdict.message, meta, h1, allowed);
      if (verdict.kind === 'unverified' && verdict.reason === 'only-zh-for-directory') {
        events({
          type: 'warning',
          code: WarningCode.PACKAGE_UNVERIFIED,
          summary: `${where}: installed without verification`,
          detail: `The lock file holds only zh: hashes for this version, which cannot verify an unpacked package directory (${fetched.path}); it was installed unverified, as the reference does. Run "provkit lock" to record h1: hashes.`,
          provider,
        });
      }
      await findExecutable(fetched.path, provider, version, platform);
      await linkPackageDir(fetched.path, installPath);
      return h1;
    }
    // Hashed by fetchPackage from the bytes it fetched (it also used and filled the store).
    const zip = fetched.zipHashes;
    const verdict = verifyPackage(
      allowed,
      { kind: 'archive', zh: fetched.zh, h1Zip: zip.h1Zip.ok ? zip.h1Zip.hash : null },
      provider,
      version,
      flavor,
    );
    if (verdict.kind === 'mismatch') {
      // Item 27: the lock may hold this very package's extracted-form h1:, which the
      // reference cannot match against an archive whose zip form differs.
      const extracted = zip.h1.ok ? zip.h1.hash.text : undefined;
      const forms = extracted !== undefined && allowed.some((h) => h.text === extracted);
      throw mismatch(
        verdict.message,
        meta,
        fetched.zh,
        allowed,
        forms ? formsHint(zip.warnings.find((w) => w.code === 'H1_FORMS_DIFFER')?.entries ?? []) : undefined,
      );
    }
    for (const w of zip.warnings)
      events({
        type: 'warning',
        code: w.code,
        summary: `${where}: ${w.message}`,
        detail: w.entries.join(', '),
        provider,
      });
    const expected = requireExtractable(zip, fetched.from);
    // An existing directory whose content already equals the archive is kept (tofu 1.12, docs/reference.md §5.3 item 82.3).
    const existing = await inspectPackageDir(installPath);
    if (existing.kind === 'dir' && (await hashDirOrUndefined(installPath))?.text === expected.text) return expected;
    const result = await extractPackage(fetched.path, installPath, {
      existing: 'replace',
      // The cache is shared: no group- or world-writable files there (docs/file-modes.md).
      ...(options.cacheDir !== undefined ? { fileModeMask: 0o755 } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.extractLimits ? { limits: options.extractLimits } : {}),
      ...(options.zipLimits ? { zipLimits: options.zipLimits } : {}),
      beforeCommit: async (temp) => {
        await findExecutable(temp, provider, version, platform);
      },
    });
    return result.h1;
  };

  const mismatch = (
    message: string,
    meta: PackageMeta,
    found: Hash,
    allowed: readonly Hash[],
    hint?: string,
  ): ProvkitError =>
    new ProvkitError(ErrorCode.LOCKFILE_CHECKSUM_MISMATCH, message, {
      ...(hint === undefined ? {} : { hint }),
      provider: meta.provider.toString(),
      version: meta.version.toString(),
      platform: meta.platform.toString(),
      ...(meta.location.kind === 'http' ? { url: redactURL(meta.location.url) } : { file: meta.location.path }),
      expected: allowed.map((h) => h.text).join(', '),
      found: found.text,
    });

  const installed: InstalledPackage[] = [];
  const entries: InstalledProvider[] = [];
  const failures: InstallFailure[] = [];
  try {
    await Promise.all(
      options.requirements.map(async (req) => {
        const at: { phase: InstallPhase; version: Version | undefined; started: boolean } = {
          phase: 'query',
          version: undefined,
          started: false,
        };
        try {
          const r = await installOne(req, at);
          installed.push(r.installed);
          if (r.lock) entries.push(r.lock);
        } catch (err) {
          if (at.started && at.version)
            events({ type: 'fetch_failed', provider: req.provider, version: at.version, platform });
          failures.push({
            provider: req.provider,
            platform,
            error: asProvkitError(err),
            phase: at.phase,
            version: at.version,
          });
        }
      }),
    );
  } finally {
    await rm(work, { recursive: true, force: true });
    forgetWork();
    await tree.removeEmpty();
  }
  const order = (p: ProviderAddress): number => options.requirements.findIndex((r) => r.provider.equals(p));
  installed.sort((a, b) => order(a.provider) - order(b.provider));
  entries.sort((a, b) => order(a.provider) - order(b.provider));
  // Version queries come before fetches, as the reference's installer runs them; then in configuration order.
  const phases: readonly InstallPhase[] = ['query', 'fetch', 'cache'];
  failures.sort((a, b) => phases.indexOf(a.phase) - phases.indexOf(b.phase) || order(a.provider) - order(b.provider));
  const locks = mergeInit(
    options.oldLocks,
    entries,
    options.requirements.map((r) => r.provider),
  );
  return { locks, installed, failures };
}

/**
 * The reference's diagnostics for failed providers: one per provider, worded
 * by where it failed, as `init` reports them (the installer event callbacks
 * of `internal/command/init.go` in hashicorp/terraform v1.11.4 and
 * opentofu/opentofu): `Failed to query available provider packages` (tofu:
 * `Failed to resolve provider packages` unless the provider was not found),
 * `Failed to install provider` (`Error while installing NS/TYPE vX: …`),
 * `Incompatible provider version` for a package missing for the platform,
 * `Failed to install provider from shared cache`. A provkit hint, when the
 * error has one, is the diagnostic's `hint` (the reference has none).
 */
export function installFailureDiagnostics(failures: readonly InstallFailure[], flavor: Flavor): Diagnostic[] {
  const tofu = flavor === 'tofu';
  const command = tofu ? 'tofu' : 'terraform';
  const product = tofu ? 'OpenTofu' : 'Terraform';
  // A cause shared by providers (a server, a registry) is said once, with its hint and the providers it stopped.
  const { causes, rest } = groupByCause(failures);
  const causeDiags = causes.map((g) =>
    causeDiagnostic(
      g.error,
      'Providers not installed',
      g.failures.map((f) => `${f.provider.forDisplay(flavor)}${f.version ? ` v${f.version.toString()}` : ''}`),
    ),
  );
  return [...causeDiags, ...installFailureDiagnosticsEach(rest, flavor, { tofu, command, product })];
}

/** One diagnostic per failure, in the reference's words (see {@link installFailureDiagnostics}). */
function installFailureDiagnosticsEach(
  failures: readonly InstallFailure[],
  flavor: Flavor,
  { tofu, command, product }: { tofu: boolean; command: string; product: string },
): Diagnostic[] {
  return failures.map((f) => {
    const name = f.provider.forDisplay(flavor);
    const err = f.error.message.trim();
    const v = f.version?.toString() ?? '';
    const { code } = f.error;
    const diag = (summary: string, detail: string, hint = f.error.hint): Diagnostic => ({
      severity: 'error',
      summary,
      detail,
      code,
      ...(hint === undefined ? {} : { hint }),
    });
    if (f.phase === 'query') {
      if (code === ErrorCode.PROVIDER_NOT_FOUND) {
        // The sources searched (the multi-source's hint, `searched:` and a `- SOURCE` line each) are the detail's list.
        const searched = /^searched:\n/.test(f.error.hint ?? '') ? (f.error.hint ?? '').split('\n').slice(1) : [];
        const sources = searched.map((x) => `  ${x}`).join('\n');
        return diag(
          'Failed to query available provider packages',
          `Could not retrieve the list of available versions for provider ${name}: ${err}\n\n${sources}`,
          searched.length > 0 ? undefined : f.error.hint,
        );
      }
      if (code === ErrorCode.REGISTRY_PROVIDER_UNKNOWN) {
        const issue =
          tofu && f.provider.hostname === defaultRegistryHost('tofu')
            ? '\n\nIf you believe this provider is missing from the registry, please submit a issue on the OpenTofu Registry https://github.com/opentofu/registry/issues/new/choose'
            : '';
        return diag(
          'Failed to query available provider packages',
          `Could not retrieve the list of available versions for provider ${name}: ${err}\n\nAll modules should specify their required_providers so that external consumers will get the correct providers when using a module. To see which modules are currently depending on ${name}, run the following command:\n    ${command} providers${issue}`,
        );
      }
      if (tofu) return diag('Failed to resolve provider packages', `Could not resolve provider ${name}: ${err}`);
      return diag(
        'Failed to query available provider packages',
        `Could not retrieve the list of available versions for provider ${name}: ${err}\n\nTo see which modules are currently depending on ${name} and what versions are specified, run the following command:\n    ${command} providers`,
      );
    }
    if (f.phase === 'cache')
      return diag(
        'Failed to install provider from shared cache',
        `Error while importing ${name} v${v} from the shared cache directory: ${err}.`,
      );
    if (f.error.code === ErrorCode.PLATFORM_NOT_SUPPORTED && f.platform) {
      return diag(
        'Incompatible provider version',
        `Provider ${f.provider.toString()} v${v} does not have a package available for your current platform, ${f.platform.toString()}.\n\nProvider releases are separate from ${product} CLI releases, so not all providers are available for all platforms. Other versions of this provider may have different platforms supported.${availableText(f.error.availablePlatforms)}`,
      );
    }
    return diag('Failed to install provider', `Error while installing ${name} v${v}: ${err}`);
  });
}

/** provkit's sentence after init's "Incompatible provider version": the platforms the source has (its error carries them). */
function availableText(platforms: readonly string[] = []): string {
  return platforms.length === 0 ? '' : `\n\nThis version is available for: ${platforms.join(', ')}.`;
}
