/**
 * Offline checks of a lock file for CI (`provkit verify`): does the lock file
 * let `init` install every provider on every platform the team uses, and is
 * the mirror it is checked against intact? Nothing is fetched and nothing is
 * written.
 *
 * Checks, each reported as one {@link VerifyProblem} with a stable code:
 *
 * - configuration against lock (docs/reference.md §3.4 item 51, the reference's texts):
 *   `CONFIG_NOT_LOCKED`, `CONFIG_CONSTRAINTS_CHANGED`, `CONFIG_LOCK_MISMATCH`;
 * - with a mirror (a filesystem mirror directory, packed or unpacked):
 *   - `VERSION_NOT_IN_MIRROR`: the mirror has no package at all of a locked
 *     provider version;
 *   - `PLATFORM_NOT_IN_MIRROR`: a platform asked for has no package, so the
 *     lock's coverage of it cannot be checked (the rule of every mirror
 *     kind, {@link platformCoverage});
 *   - `LOCK_MISSING_H1`: the package's `h1:` (extracted form, what `init`
 *     records and checks an installed directory with, docs/reference.md §2.3 item 28) is not in the
 *     lock: the lock does not cover that platform, or the package changed;
 *   - `LOCK_MISSING_ZH`: the lock holds `zh:` hashes for the provider (it was
 *     locked from a registry, whose signed SHA256SUMS covers every platform)
 *     but not this archive's;
 *   - `INDEX_MISMATCH`: a hash `VERSION.json` lists does not match the
 *     archive (`zh:` by SHA-256, `h1:` by the zip or the extracted form);
 *     such a package is reported once, without the lock checks;
 *   - `INDEX_MISSING_VERSION`, `INDEX_MISSING_PACKAGE`,
 *     `INDEX_MISSING_ARCHIVE`, `INDEX_INVALID`: `index.json` /
 *     `VERSION.json` (when the provider has an `index.json`) do not describe
 *     the archives present;
 *   - `H1_FORMS_DIFFER`: the archive's zip-form and extracted-form `h1:`
 *     differ (docs/reference.md §2.3 item 27), naming the entries: a lock holding only the extracted
 *     `h1:` does not verify this archive when `init` installs from it;
 *   - `PACKAGE_REFUSED`: the archive or directory cannot be hashed or would
 *     not be extracted (`..`, absolute names, bad CRC, …).
 * - without a mirror, the installed packages (`installedDir`, the
 *   `providers` directory of `.terraform` that `init` and `provkit install`
 *   fill): each package of a locked version there is hashed and reported
 *   with who vouches for it, as a mirror's are; one that cannot be hashed is
 *   `PACKAGE_REFUSED`. Nothing else about them is a problem here (an
 *   installed package the lock does not vouch for is what `init` refuses).
 * - without a mirror, with a platform policy (`provkit.hcl`, config/policy.ts):
 *   `LOCK_MISSING_PLATFORM`, a platform of the policy the lock does not
 *   cover. Offline, so only what is known here counts: the hash store
 *   (hashing/store.ts) tells which platform a `zh:` of the lock is the
 *   package of and what its `h1:` is, so a platform whose package's `h1:` is
 *   missing is named; beyond that, a lock with fewer `h1:` hashes than the
 *   policy has platforms it could not attribute cannot cover them all, and
 *   says so. A platform neither can tell about is not reported.
 *
 * Which platforms are checked for coverage: those given, else every platform
 * the mirror has a package of for some locked provider version. Packages of
 * other platforms get only the mirror-integrity checks.
 */
import { readdir, realpath } from 'node:fs/promises';
import { join, resolve } from 'node:path';

import pLimit from 'p-limit';

import {
  comparePlatforms,
  compareVersions,
  type Flavor,
  newProviderAddress,
  parsePlatform,
  type Platform,
  ProviderAddress,
  sortPlatforms,
  tryParseVersion,
  type Version,
  type Requirement,
} from '../addresses/index.js';
import { systemErrorCode, errorText } from '../errors.js';
import { compareBytewise, isRecord } from '../go/index.js';
import {
  type Hash,
  type HashPool,
  type HashStore,
  parseHash,
  type StoredHashes,
  type ZipPackageHashes,
} from '../hashing/index.js';
import type { Locks, ProviderLock } from '../lockfile/index.js';
import { FilesystemMirrorSource, type TrustedHash } from '../sources/index.js';
import { abortable, throwIfAborted, withSignal } from './abort.js';
import type { EventSink } from './events.js';
import {
  storedEntryOfDirectory,
  type UnvouchedHashes,
  unvouchedLockHashes,
  type VerifiedPackage,
  verifiedPackageHashes,
} from './verify-provenance.js';
import { readRegularFile } from '../fs/read.js';

import type { VerifyProblem, VerifyProblemCode } from './verify-problem.js';

export type { VerifyProblem, VerifyProblemCode };
export type { UnvouchedHashes, VerifiedPackage };

/**
 * The problem list of a verify run (directory mirrors and OCI mirrors alike,
 * oci-verify.ts): `problems` and the one way to add one.
 */
export function problemCollector(): {
  readonly problems: VerifyProblem[];
  readonly problem: (
    provider: ProviderAddress,
    version: Version | undefined,
    platform: Platform | undefined,
    code: VerifyProblemCode,
    message: string,
  ) => void;
} {
  const problems: VerifyProblem[] = [];
  return {
    problems,
    problem: (provider, version, platform, code, message) => {
      problems.push({ provider, version, platform, code, message });
    },
  };
}

/** What {@link runVerify} checks: a lock file against the configuration, a filesystem mirror, or a platform policy. */
export interface VerifyOptions {
  /** The lock file's locks: the hashes every package must match. */
  readonly locks: Locks;
  /** The configuration's requirements (docs/reference.md §3.4 item 51); omit to skip that check. */
  readonly requirements?: readonly Requirement[];
  /** A filesystem mirror holding the packages (packed and/or unpacked). */
  readonly mirrorDir?: string;
  /**
   * Without `mirrorDir`: the directory of installed packages (`TF_DATA_DIR/providers`, `HOST/NS/TYPE/VERSION/OS_ARCH`
   * as `init` writes it), whose packages of locked versions are reported with who vouches for them; absent, none.
   */
  readonly installedDir?: string;
  /** Platforms the lock must cover (needs `mirrorDir`); default: every platform the mirror has for a locked version. */
  readonly platforms?: readonly Platform[];
  /** The hash pool that hashes the mirror's packages; owned by the caller. */
  readonly pool: HashPool;
  /** The flavor: which of the lock's hashes are required (`zh:` rules) and the words of messages. */
  readonly flavor: Flavor;
  /** Without `mirrorDir`: the platforms a policy file (`file`) asks the lock to cover, checked through `hashStore`. */
  readonly policy?: { readonly platforms: readonly Platform[]; readonly file: string };
  /**
   * The hash store (hashing/store.ts): with `policy`, the `h1:` of a locked platform is looked up by its `zh:`
   * instead of a package.
   */
  readonly hashStore?: HashStore;
  /** Stops the run: no package is hashed after it, and `ABORTED` is thrown (installer/abort.ts). */
  readonly signal?: AbortSignal;
  /**
   * Receives a `verify_package` event per checked package and a `verify_unvouched` event per checked provider
   * version whose lock hashes nobody vouches for (the outcome's `checked` and `unvouched`), at the end of the run.
   */
  readonly events?: EventSink;
}

/** What {@link runVerify} found: the problems (none: the lock vouches for everything checked) and what it checked. */
export interface VerifyOutcome {
  /** Sorted by provider, version, platform, code. */
  readonly problems: readonly VerifyProblem[];
  /** Packages hashed. */
  readonly packages: number;
  /** Locked providers checked. */
  readonly providers: number;
  /** The platforms whose coverage was checked. */
  readonly platforms: readonly Platform[];
  /**
   * Every package of a locked version checked (all its platforms), with who vouches for each of its hashes
   * (installer/verify-provenance.ts), sorted by
   * provider, version, platform; without a mirror, those installed in `installedDir`.
   */
  readonly checked: readonly VerifiedPackage[];
  /** Per locked version with packages checked: its lock hashes nobody vouches for now (none listed: every one is vouched for). */
  readonly unvouched: readonly UnvouchedHashes[];
}

/** Sorts `checked` and emits the outcome's `verify_package` and `verify_unvouched` events (see {@link VerifyOptions.events}). */
export function emitProvenance(
  checked: VerifiedPackage[],
  unvouched: readonly UnvouchedHashes[],
  events: EventSink | undefined,
): void {
  checked.sort(
    (a, b) =>
      ProviderAddress.compare(a.provider, b.provider) ||
      compareVersions(a.version, b.version) ||
      comparePlatforms(a.platform, b.platform),
  );
  if (events === undefined) return;
  for (const p of checked) events({ type: 'verify_package', ...p });
  for (const u of unvouched) events({ type: 'verify_unvouched', ...u });
}

/** A package found in the mirror. */
interface MirrorPackage {
  readonly provider: ProviderAddress;
  readonly version: Version;
  readonly platform: Platform;
  readonly kind: 'archive' | 'dir';
  readonly path: string;
}

/** A provider directory of the mirror (`HOST/NS/TYPE`). */
interface MirrorProvider {
  readonly provider: ProviderAddress;
  readonly dir: string;
  readonly packages: MirrorPackage[];
}

/** The `VERSION.json` entry of one platform. */
interface IndexedArchive {
  readonly url: string;
  readonly hashes: readonly string[];
}

async function listDir(path: string): Promise<Array<{ name: string; dir: boolean; file: boolean }>> {
  try {
    const entries = await readdir(path, { withFileTypes: true });
    return entries.map((e) => ({
      name: e.name,
      dir: e.isDirectory() || e.isSymbolicLink(),
      file: e.isFile() || e.isSymbolicLink(),
    }));
  } catch (err) {
    if (systemErrorCode(err) === 'ENOENT' || systemErrorCode(err) === 'ENOTDIR') return [];
    throw err;
  }
}

/**
 * Finds every provider directory and package in a filesystem mirror. The
 * candidates come from the directory names; each is then looked up through
 * {@link FilesystemMirrorSource}, so exactly the packages `init` would use
 * are checked (an unpacked directory wins over a zip of the same package,
 * invalid names are skipped, as in the reference's scan).
 */
async function scanMirror(mirrorDir: string, flavor: Flavor): Promise<MirrorProvider[]> {
  const source = new FilesystemMirrorSource({ baseDir: mirrorDir, flavor });
  const out: MirrorProvider[] = [];
  for (const host of await listDir(mirrorDir)) {
    if (!host.dir) continue;
    // eslint-disable-next-line no-await-in-loop -- a small directory walk, in order
    for (const ns of await listDir(join(mirrorDir, host.name))) {
      if (!ns.dir) continue;
      // eslint-disable-next-line no-await-in-loop
      for (const type of await listDir(join(mirrorDir, host.name, ns.name))) {
        if (!type.dir) continue;
        let provider: ProviderAddress;
        try {
          provider = newProviderAddress(host.name, ns.name, type.name);
        } catch {
          continue;
        }
        const dir = join(mirrorDir, host.name, ns.name, type.name);
        const candidates = new Map<string, { version: Version; platform: Platform }>();
        const add = (v: string, p: string): void => {
          const version = tryParseVersion(v);
          if (!version.ok) return;
          let platform: Platform;
          try {
            platform = parsePlatform(p);
          } catch {
            return;
          }
          candidates.set(`${version.version.toString()} ${platform.toString()}`, {
            version: version.version,
            platform,
          });
        };
        const prefix = `terraform-provider-${provider.type}_`;
        // eslint-disable-next-line no-await-in-loop
        for (const e of await listDir(dir)) {
          const lower = e.name.toLowerCase();
          if (e.file && lower.startsWith(prefix) && lower.endsWith('.zip')) {
            const parts = lower.slice(prefix.length, -4).split('_');
            if (parts.length >= 3) add(parts[0]!, `${parts[1]!}_${parts[2]!}`);
          } else if (e.dir) {
            // eslint-disable-next-line no-await-in-loop
            for (const p of await listDir(join(dir, e.name))) if (p.dir) add(e.name, p.name);
          }
        }
        const packages: MirrorPackage[] = [];
        for (const c of candidates.values()) {
          try {
            // eslint-disable-next-line no-await-in-loop -- the source scans once, then answers from memory
            const meta = await source.packageMeta(provider, c.version, c.platform);
            if (meta.location.kind === 'local-archive' || meta.location.kind === 'local-dir') {
              packages.push({
                provider,
                version: c.version,
                platform: c.platform,
                kind: meta.location.kind === 'local-dir' ? 'dir' : 'archive',
                path: meta.location.path,
              });
            }
          } catch {
            // Not a package the reference would use (invalid name, case mismatch): not checked.
          }
        }
        if (packages.length > 0) out.push({ provider, dir, packages });
      }
    }
  }
  return out;
}

type Hashed =
  | { readonly ok: true; readonly kind: 'archive'; readonly zip: ZipPackageHashes; readonly h1: Hash }
  | { readonly ok: true; readonly kind: 'dir'; readonly h1: Hash }
  | { readonly ok: false; readonly message: string };

async function hashPackage(pool: HashPool, pkg: MirrorPackage): Promise<Hashed> {
  try {
    if (pkg.kind === 'dir') return { ok: true, kind: 'dir', h1: await pool.hashDir(pkg.path) };
    const zip = await pool.hashZip(pkg.path);
    if (!zip.h1.ok) return { ok: false, message: `the package is refused: ${zip.h1.error.message}` };
    return { ok: true, kind: 'archive', zip, h1: zip.h1.hash };
  } catch (err) {
    return { ok: false, message: `the package cannot be read: ${errorText(err)}` };
  }
}

async function readJSON(
  path: string,
): Promise<{ ok: true; value: unknown } | { ok: false; missing: boolean; error: string }> {
  let text: string;
  try {
    // A mirror's documents: regular files only, bounded (fs/read.ts).
    text = (await readRegularFile(path)).toString('utf8');
  } catch (err) {
    return {
      ok: false,
      missing: systemErrorCode(err) === 'ENOENT',
      error: errorText(err),
    };
  }
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (err) {
    return { ok: false, missing: false, error: errorText(err) };
  }
}

/** `archives` of a VERSION.json, or an error text. */
function parseVersionJSON(value: unknown): Map<string, IndexedArchive> | string {
  if (!isRecord(value) || !isRecord(value['archives'])) return 'no "archives" object';
  const out = new Map<string, IndexedArchive>();
  for (const [plat, a] of Object.entries(value['archives'])) {
    if (!isRecord(a) || typeof a['url'] !== 'string') return `archive ${JSON.stringify(plat)} has no "url"`;
    const hashes = Array.isArray(a['hashes']) ? a['hashes'].filter((h): h is string => typeof h === 'string') : [];
    out.set(plat, { url: a['url'], hashes });
  }
  return out;
}

/** Where a VERSION.json `url` points on disk, or undefined for a remote URL. */
function localArchivePath(providerDir: string, url: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(url)) return undefined;
  try {
    return resolve(providerDir, decodeURIComponent(url.split(/[?#]/)[0] ?? url));
  } catch {
    return undefined;
  }
}

/**
 * Runs the checks; see the module comment. Throws only when the mirror
 * directory itself cannot be read.
 */
export async function runVerify(options: VerifyOptions): Promise<VerifyOutcome> {
  return abortable('verifying', options.signal, (signal) => verifyWith(withSignal(options, signal)));
}

async function verifyWith(options: VerifyOptions): Promise<VerifyOutcome> {
  const { problems, problem } = problemCollector();

  // Item 51: the configuration against the lock (the reference's texts, without the "provider X:" prefix).
  for (const req of options.requirements ?? []) {
    const lock = options.locks.provider(req.provider);
    if (!lock) {
      problem(
        req.provider,
        undefined,
        undefined,
        'CONFIG_NOT_LOCKED',
        'required by this configuration but no version is selected',
      );
      continue;
    }
    if (!req.constraints.matches(lock.version)) {
      const current = req.constraints.toString();
      if (current !== lock.constraints.toString()) {
        problem(
          req.provider,
          lock.version,
          undefined,
          'CONFIG_CONSTRAINTS_CHANGED',
          `locked version selection ${lock.version.toString()} doesn't match the updated version constraints ${JSON.stringify(current)}`,
        );
      } else {
        problem(
          req.provider,
          lock.version,
          undefined,
          'CONFIG_LOCK_MISMATCH',
          `version constraints ${JSON.stringify(current)} don't match the locked version selection ${lock.version.toString()}`,
        );
      }
    }
  }

  let packagesHashed = 0;
  const checked: VerifiedPackage[] = [];
  const unvouched: UnvouchedHashes[] = [];
  let scope: Platform[] = sortPlatforms(options.platforms ?? []);
  if (options.mirrorDir !== undefined) {
    // The source resolves the base directory's symlinks; so do the paths compared here.
    const mirrorDir = await realpath(resolve(options.mirrorDir)).catch(() => resolve(options.mirrorDir ?? '.'));
    const mirror = await scanMirror(mirrorDir, options.flavor);
    const byProvider = new Map(mirror.map((m) => [m.provider.toComparisonString(), m]));
    const lockedPackages = (l: { provider: ProviderAddress; version: Version }): MirrorPackage[] =>
      byProvider.get(l.provider.toComparisonString())?.packages.filter((p) => p.version.equals(l.version)) ?? [];
    if (options.platforms === undefined) {
      scope = sortPlatforms(options.locks.all().flatMap((l) => lockedPackages(l).map((p) => p.platform)));
    }
    const inScope = (p: Platform): boolean => scope.some((s) => s.equals(p));

    // Every package is hashed once, concurrently (the pool bounds the work).
    const all = mirror.flatMap((m) => m.packages);
    // As many at once as the pool hashes, so that none starts after an abort.
    const limit = pLimit(Math.max(1, options.pool.shareUpTo));
    const hashed = await Promise.all(
      all.map((p) =>
        limit(() => {
          throwIfAborted('verifying', options.signal);
          return hashPackage(options.pool, p);
        }),
      ),
    );
    packagesHashed = all.length;
    const hashOf = new Map(all.map((p, i) => [p, hashed[i]!]));

    for (const m of mirror) {
      // eslint-disable-next-line no-await-in-loop -- one provider's index files at a time
      const { corrupt, listed } = await checkIndexes(m, hashOf, problem);
      const lock = options.locks.provider(m.provider);
      for (const pkg of m.packages) {
        const h = hashOf.get(pkg)!;
        if (!h.ok) {
          problem(pkg.provider, pkg.version, pkg.platform, 'PACKAGE_REFUSED', h.message);
          continue;
        }
        // The locked version's packages (every platform) are reported with who vouches for their hashes.
        if (lock?.version.equals(pkg.version) === true) {
          const reported = (listed.get(pkg) ?? []).map((hash): TrustedHash => ({
            hash,
            trust: { kind: 'reported-by-mirror', mirror: options.mirrorDir ?? mirrorDir },
          }));
          // eslint-disable-next-line no-await-in-loop -- a few small store entries per package
          checked.push(await checkedPackage(pkg, h, lock.hashes, options.hashStore, reported));
        }
        if (h.kind === 'archive') {
          const differ = h.zip.warnings.find((w) => w.code === 'H1_FORMS_DIFFER');
          if (differ) {
            problem(
              pkg.provider,
              pkg.version,
              pkg.platform,
              'H1_FORMS_DIFFER',
              `${differ.message} Entries: ${differ.entries.map((e) => JSON.stringify(e)).join(', ')}.`,
            );
          }
        }
        if (!lock || !lock.version.equals(pkg.version) || !inScope(pkg.platform) || corrupt.has(pkg)) continue;
        const locked = new Set(lock.hashes.map((x) => x.text));
        if (!locked.has(h.h1.text)) {
          problem(
            pkg.provider,
            pkg.version,
            pkg.platform,
            'LOCK_MISSING_H1',
            `its h1: (${h.h1.text}) is not in the lock file: the lock does not cover ${pkg.platform.toString()}, or the package differs from the one locked (provkit lock -platform=${pkg.platform.toString()} records it)`,
          );
        }
        if (h.kind === 'archive' && lock.hashes.some((x) => x.scheme === 'zh:') && !locked.has(h.zip.zh.text)) {
          problem(
            pkg.provider,
            pkg.version,
            pkg.platform,
            'LOCK_MISSING_ZH',
            `the lock file records zh: hashes for this provider, but not this archive's (${h.zip.zh.text}): it is not the archive the registry signed`,
          );
        }
      }
    }

    const withPackages = options.locks.all().filter((l) => lockedPackages(l).length > 0);
    unvouched.push(...(await unvouchedOf(withPackages, checked, options.hashStore)));
    // Coverage: every locked version in the mirror, on every platform in scope.
    for (const lock of options.locks.all()) {
      const pkgs = lockedPackages(lock);
      if (pkgs.length === 0) {
        problem(
          lock.provider,
          lock.version,
          undefined,
          'VERSION_NOT_IN_MIRROR',
          `the mirror ${options.mirrorDir} has no package of this version, so the lock file cannot be checked against it`,
        );
        continue;
      }
      for (const c of platformCoverage(
        pkgs.map((p) => p.platform),
        scope,
      ))
        problem(lock.provider, lock.version, c.platform, c.code, c.message);
    }
  }

  if (options.mirrorDir === undefined && options.installedDir !== undefined) {
    const installed = await scanMirror(options.installedDir, options.flavor);
    const locked = installed.flatMap((m) => {
      const lock = options.locks.provider(m.provider);
      return lock === undefined
        ? []
        : m.packages.filter((p) => p.version.equals(lock.version)).map((pkg) => ({ lock, pkg }));
    });
    const limit = pLimit(Math.max(1, options.pool.shareUpTo));
    const hashed = await Promise.all(
      locked.map(({ pkg }) =>
        limit(() => {
          throwIfAborted('verifying', options.signal);
          return hashPackage(options.pool, pkg);
        }),
      ),
    );
    packagesHashed = locked.length;
    for (const [i, { lock, pkg }] of locked.entries()) {
      const h = hashed[i]!;
      if (!h.ok) problem(pkg.provider, pkg.version, pkg.platform, 'PACKAGE_REFUSED', h.message);
      // eslint-disable-next-line no-await-in-loop -- a few small store entries per package
      else checked.push(await checkedPackage(pkg, h, lock.hashes, options.hashStore, []));
    }
    const withPackages = options.locks.all().filter((l) => locked.some((x) => x.lock.provider.equals(l.provider)));
    unvouched.push(...(await unvouchedOf(withPackages, checked, options.hashStore)));
  }

  if (options.mirrorDir === undefined && options.policy !== undefined) {
    scope = [...options.policy.platforms];
    await checkPolicyCoverage(options.locks, options.policy, options.hashStore, problem);
  }

  problems.sort(compareProblems);
  emitProvenance(checked, unvouched, options.events);
  return { problems, packages: packagesHashed, providers: options.locks.size, platforms: scope, checked, unvouched };
}

/**
 * A package of a locked version, hashed, with who vouches for its hashes
 * (verify-provenance.ts). What the hash store knows of its bytes: an
 * archive's entry by its `zh:`; a directory's (installed, or an unpacked
 * mirror's), by {@link storedEntryOfDirectory} among the entries of the
 * lock's (`locked`) `zh:` hashes.
 */
async function checkedPackage(
  pkg: MirrorPackage,
  h: Extract<Hashed, { ok: true }>,
  locked: readonly Hash[],
  store: HashStore | undefined,
  reported: readonly TrustedHash[],
): Promise<VerifiedPackage> {
  let zh: Hash | undefined;
  let stored: StoredHashes | undefined;
  if (h.kind === 'archive') {
    zh = h.zip.zh;
    stored = await store?.lookup(zh);
  } else {
    stored = storedEntryOfDirectory(h.h1, await lookupAll(store, locked));
    zh = stored?.hashes.zh;
  }
  return {
    provider: pkg.provider,
    version: pkg.version,
    platform: pkg.platform,
    location: pkg.path,
    hashes: verifiedPackageHashes({
      platform: pkg.platform,
      from: pkg.path,
      computed: h.kind === 'archive' ? zipHashTexts(h.zip) : [h.h1],
      ...(zh === undefined ? {} : { zh }),
      ...(stored === undefined ? {} : { stored: stored.dispositions }),
      reported,
    }),
  };
}

/** Per locked version with packages (`locks`): its lock hashes nobody vouches for (verify-provenance.ts). */
async function unvouchedOf(
  locks: readonly ProviderLock[],
  checked: readonly VerifiedPackage[],
  store: HashStore | undefined,
): Promise<UnvouchedHashes[]> {
  const out: UnvouchedHashes[] = [];
  for (const lock of locks) {
    const mine = checked.filter((p) => p.provider.equals(lock.provider) && p.version.equals(lock.version));
    // eslint-disable-next-line no-await-in-loop -- a few small store entries per provider
    const hashes = unvouchedLockHashes(lock.hashes, mine, await lookupAll(store, lock.hashes));
    if (hashes.length > 0) out.push({ provider: lock.provider, version: lock.version, hashes });
  }
  return out;
}

/** The texts-as-hashes a zip's bytes gave here: its `zh:` and the `h1:` forms that could be computed. */
export function zipHashTexts(zip: ZipPackageHashes): Hash[] {
  return [zip.zh, ...[zip.h1, zip.h1Zip].flatMap((f) => (f.ok ? [f.hash] : []))];
}

/** The hash store's entries for the `zh:` hashes among `hashes` (none without a store). */
export function lookupAll(
  store: HashStore | undefined,
  hashes: readonly Hash[],
): Promise<ReadonlyArray<Awaited<ReturnType<HashStore['lookup']>>>> {
  if (store === undefined) return Promise.resolve([]);
  return Promise.all(hashes.filter((h) => h.scheme === 'zh:').map((zh) => store.lookup(zh)));
}

/**
 * The coverage rule of every kind of mirror (a directory here, an OCI
 * registry in oci-verify.ts), for a locked version the mirror has: each
 * platform in `scope` without a package is `PLATFORM_NOT_IN_MIRROR`; and a
 * version with no package the mirror can install at all (an OCI index
 * listing no usable platform) is `PLATFORM_NOT_IN_MIRROR` too, without a
 * platform when none was asked for: the lock file cannot be checked against
 * nothing, so that is never "no problems".
 */
export function platformCoverage(
  packaged: readonly Platform[],
  scope: readonly Platform[],
): Array<{ platform: Platform | undefined; code: 'PLATFORM_NOT_IN_MIRROR'; message: string }> {
  const problems: Array<{ platform: Platform | undefined; code: 'PLATFORM_NOT_IN_MIRROR'; message: string }> = scope
    .filter((s) => !packaged.some((p) => p.equals(s)))
    .map((platform) => ({
      platform,
      code: 'PLATFORM_NOT_IN_MIRROR',
      message: "no package in the mirror for this platform, so the lock file's coverage of it cannot be checked",
    }));
  if (packaged.length === 0 && scope.length === 0) {
    problems.push({
      platform: undefined,
      code: 'PLATFORM_NOT_IN_MIRROR',
      message:
        'the mirror has this version but no package of it for any platform, so the lock file cannot be checked against it',
    });
  }
  return problems;
}

/** `LOCK_MISSING_PLATFORM` without a mirror; see the module comment. */
async function checkPolicyCoverage(
  locks: Locks,
  policy: { readonly platforms: readonly Platform[]; readonly file: string },
  hashStore: HashStore | undefined,
  problem: (
    provider: ProviderAddress,
    version: Version | undefined,
    platform: Platform | undefined,
    code: VerifyProblemCode,
    message: string,
  ) => void,
): Promise<void> {
  for (const lock of locks.all()) {
    const h1s = new Set(lock.hashes.filter((h) => h.scheme === 'h1:').map((h) => h.text));
    // Platform → the h1: forms of its package, from the store entries of the lock's zh: values.
    const known = new Map<string, string[]>();
    const found = hashStore
      ? // eslint-disable-next-line no-await-in-loop -- a few small files per provider
        await Promise.all(lock.hashes.filter((h) => h.scheme === 'zh:').map((zh) => hashStore.lookup(zh)))
      : [];
    for (const f of found) {
      if (f?.platform === undefined) continue;
      known.set(f.platform, [
        ...(known.get(f.platform) ?? []),
        ...[f.hashes.h1, f.hashes.h1Zip].flatMap((r) => (r.ok ? [r.hash.text] : [])),
      ]);
    }
    const attributedH1 = new Set([...known.values()].flat().filter((h) => h1s.has(h)));
    const unknown: Platform[] = [];
    for (const platform of policy.platforms) {
      const forms = known.get(platform.toString());
      if (forms === undefined) {
        unknown.push(platform);
        continue;
      }
      if (!forms.some((h) => h1s.has(h))) {
        problem(
          lock.provider,
          lock.version,
          platform,
          'LOCK_MISSING_PLATFORM',
          `the lock file does not cover ${platform.toString()}, a platform of ${policy.file}: it records the zh: of that package but not its h1: (${forms[0] ?? '?'}); provkit lock adds it`,
        );
      }
    }
    const unattributed = [...h1s].filter((h) => !attributedH1.has(h)).length;
    if (unknown.length > unattributed) {
      problem(
        lock.provider,
        lock.version,
        undefined,
        'LOCK_MISSING_PLATFORM',
        `the lock file cannot cover every platform of ${policy.file}: ${unknown.length} platform${unknown.length === 1 ? '' : 's'} (${unknown.map(String).join(', ')}) ${unknown.length === 1 ? 'is' : 'are'} left for ${unattributed === 0 ? 'no' : unattributed} h1: hash${unattributed === 1 ? '' : 'es'}; provkit lock adds the missing ones`,
      );
    }
  }
}

/**
 * The index files of one provider directory (only when it has an
 * `index.json`: a plain filesystem mirror needs none). Returns the packages
 * whose archive contradicts `VERSION.json`.
 */
async function checkIndexes(
  m: MirrorProvider,
  hashOf: ReadonlyMap<MirrorPackage, Hashed>,
  problem: (
    provider: ProviderAddress,
    version: Version | undefined,
    platform: Platform | undefined,
    code: VerifyProblemCode,
    message: string,
  ) => void,
): Promise<{ corrupt: Set<MirrorPackage>; listed: Map<MirrorPackage, Hash[]> }> {
  const corrupt = new Set<MirrorPackage>();
  /** Per package, the hashes its VERSION.json entry lists that its bytes do not contradict. */
  const listed = new Map<MirrorPackage, Hash[]>();
  const index = await readJSON(join(m.dir, 'index.json'));
  if (!index.ok && index.missing) return { corrupt, listed };
  const archives = m.packages.filter((p) => p.kind === 'archive');
  if (!index.ok || !isRecord(index.value) || !isRecord(index.value['versions'])) {
    problem(
      m.provider,
      undefined,
      undefined,
      'INDEX_INVALID',
      `index.json is not a provider mirror index: ${index.ok ? 'no "versions" object' : index.error}`,
    );
    return { corrupt, listed };
  }
  const versionsListed = new Set(Object.keys(index.value['versions']));
  const versions = new Map<string, Version>();
  for (const p of archives) versions.set(p.version.toString(), p.version);
  for (const [v, version] of versions) {
    if (!versionsListed.has(v))
      problem(
        m.provider,
        version,
        undefined,
        'INDEX_MISSING_VERSION',
        `index.json does not list version ${v}, whose archives are in ${m.dir}`,
      );
    // eslint-disable-next-line no-await-in-loop -- one small file per version
    const doc = await readJSON(join(m.dir, `${v}.json`));
    const parsed = doc.ok ? parseVersionJSON(doc.value) : doc.missing ? `${v}.json is missing` : doc.error;
    if (typeof parsed === 'string') {
      problem(m.provider, version, undefined, 'INDEX_INVALID', `${v}.json: ${parsed}`);
      continue;
    }
    const mine = archives.filter((p) => p.version.equals(version));
    for (const pkg of mine) {
      const entry = parsed.get(pkg.platform.toString());
      if (!entry) {
        problem(
          pkg.provider,
          pkg.version,
          pkg.platform,
          'INDEX_MISSING_PACKAGE',
          `${v}.json does not list this platform, whose archive ${pkg.path} is in the mirror`,
        );
        continue;
      }
      if (localArchivePath(m.dir, entry.url) !== resolve(pkg.path)) continue; // describes another file
      const h = hashOf.get(pkg);
      if (!h?.ok || h.kind !== 'archive') continue;
      const forms = new Set([h.zip.zh.text, h.h1.text, ...(h.zip.h1Zip.ok ? [h.zip.h1Zip.hash.text] : [])]);
      const wrong = entry.hashes.filter((x) => (x.startsWith('h1:') || x.startsWith('zh:')) && !forms.has(x));
      listed.set(
        pkg,
        // A text without a scheme is no hash anyone could check (parseHash refuses it).
        entry.hashes.filter((x) => !wrong.includes(x) && x.indexOf(':') > 0).map((x) => parseHash(x)),
      );
      if (wrong.length > 0) {
        corrupt.add(pkg);
        problem(
          pkg.provider,
          pkg.version,
          pkg.platform,
          'INDEX_MISMATCH',
          `the archive does not match ${v}.json (listed ${wrong.join(', ')}; the archive has ${h.zip.zh.text}, ${h.zip.h1Zip.ok ? `${h.zip.h1Zip.hash.text} (zip form), ` : ''}${h.h1.text} (extracted form))`,
        );
      }
    }
    for (const [plat, entry] of parsed) {
      const path = localArchivePath(m.dir, entry.url);
      if (path === undefined || mine.some((p) => resolve(p.path) === path)) continue;
      let platform: Platform | undefined;
      try {
        platform = parsePlatform(plat);
      } catch {
        platform = undefined;
      }
      problem(
        m.provider,
        version,
        platform,
        'INDEX_MISSING_ARCHIVE',
        `${v}.json lists ${entry.url}, which is not in the mirror`,
      );
    }
  }
  return { corrupt, listed };
}

/**
 * The order problems are reported in (deterministic output, whatever the
 * locale): provider, then version by version precedence (1.9.0 before
 * 1.10.0), then platform (Go `Platform.LessThan`), then code by bytes; a
 * problem without a version or platform comes before those with one.
 */
export function compareProblems(a: VerifyProblem, b: VerifyProblem): number {
  return (
    ProviderAddress.compare(a.provider, b.provider) ||
    absentFirst(a.version, b.version, compareVersions) ||
    absentFirst(a.platform, b.platform, comparePlatforms) ||
    compareBytewise(a.code, b.code)
  );
}

/** `compare`, with an absent value first. */
function absentFirst<T>(a: T | undefined, b: T | undefined, compare: (x: T, y: T) => number): number {
  if (a === undefined || b === undefined) return a === undefined ? (b === undefined ? 0 : -1) : 1;
  return compare(a, b);
}
