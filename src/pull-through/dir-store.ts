/**
 * A pull-through mirror's store in a mirror directory, in the packed layout
 * `provkit mirror` writes (docs/reference.md §6.2 items 92–96):
 * `HOST/NS/TYPE/terraform-provider-TYPE_VERSION_OS_ARCH.zip` with
 * `HOST/NS/TYPE/index.json` and `HOST/NS/TYPE/VERSION.json`, so that
 * `provkit serve DIR`, `install -fs-mirror=DIR`, a static web server and
 * `provkit mirror` itself keep working on it.
 *
 * - **Put** (see store.ts for the contract): the fetch wrote the verified
 *   archive into a directory of its own inside the store
 *   (`.provkit-fetch-HOST-PID-RANDOM`, same file system), so committing it
 *   is one `rename` onto its final name: readers see the whole archive or
 *   none. Then, holding the mirror's directory mutex
 *   (`.provkit-mirror.lock`, the one `provkit mirror` and `bundle import`
 *   take, so they and every replica on this directory serialize), the
 *   version's `VERSION.json` and the provider's `index.json` are rewritten
 *   atomically from the archives present (`zh:` and both `h1:` forms of
 *   each, as `mirror -hashes=all` lists them): a writer never drops another
 *   writer's package, and documents left behind by a killed writer are
 *   corrected by the next put.
 * - **Reads** list the archives themselves, never the documents: a package
 *   is stored when its zip is there, a regular file, and hashes (the hashes
 *   of a file are kept per fingerprint: size, inode, times; a file seen
 *   for the first time is hashed once, its `zh:` looked up in the hash
 *   store first).
 * - A fetch directory left by a killed process of this host is removed when
 *   the next store on the directory opens (its PID is dead); one of another
 *   host stays (the directory may be shared): see docs/fleet-mirror.md.
 */
import { constants } from 'node:fs';
import { mkdtemp, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';

import { compareVersions, type Platform, type ProviderAddress, type Version } from '../addresses/index.js';
import { ErrorCode, fileError, ProvkitError, systemErrorCode, errorText } from '../errors.js';
import { writeFileAtomic } from '../fs/atomic.js';
import { acquireDirMutex, pidAlive } from '../fs/dir-mutex.js';
import { makeDirectory } from '../fs/target.js';
import { type HashPool, type HashStore, normalizeHashes, type ZipPackageHashes, zhOfFile } from '../hashing/index.js';
import {
  mirrorIndexJSON,
  mirrorVersionJSON,
  packedFileName,
  parsePackedFileName,
  providerDirPath,
} from '../layout/index.js';
import { MIRROR_MUTEX_FILE } from '../installer/mirror.js';
import {
  archiveEtag,
  type OpenedArchive,
  type PackageStore,
  type PackageToStore,
  type StoredPackage,
} from './store.js';

/** The prefix of a fetch's own directory inside the store. */
export const FETCH_DIR_PREFIX = '.provkit-fetch-';

export interface DirectoryStoreOptions {
  readonly dir: string;
  readonly pool: HashPool;
  readonly hashStore?: HashStore;
  /** Called for an archive in the store that is not served (not a regular file, does not hash). */
  readonly onWarning?: (message: string, path: string) => void;
}

interface Known {
  readonly key: string;
  readonly hashes: Promise<ZipPackageHashes | undefined>;
}

/** A host name as a plain file-name part. */
const hostPart = (): string =>
  hostname()
    .toLowerCase()
    .replace(/[^a-z0-9.-]/g, '-')
    .slice(0, 64) || 'host';

/** See the module comment. */
export class DirectoryStore implements PackageStore {
  readonly display: string;
  private readonly known = new Map<string, Known>();
  /** Puts of this process, one after another (the directory mutex serializes processes). */
  private putChain: Promise<unknown> = Promise.resolve();
  private swept: Promise<void> | undefined;

  constructor(private readonly options: DirectoryStoreOptions) {
    this.display = options.dir;
  }

  private providerDir(provider: ProviderAddress): string {
    return join(this.options.dir, providerDirPath(provider));
  }

  async workDir(): Promise<string> {
    await makeDirectory(this.options.dir, 'cannot create the mirror directory');
    this.swept ??= this.sweep();
    await this.swept;
    try {
      return await mkdtemp(join(this.options.dir, `${FETCH_DIR_PREFIX}${hostPart()}-${process.pid}-`));
    } catch (err) {
      throw fileError(err, 'cannot write into the mirror directory', this.options.dir);
    }
  }

  /** Removes fetch directories of dead processes of this host (see the module comment). */
  private async sweep(): Promise<void> {
    const names = await readdir(this.options.dir).catch(() => [] as string[]);
    const mine = `${FETCH_DIR_PREFIX}${hostPart()}-`;
    await Promise.all(
      names
        .filter((n) => n.startsWith(mine))
        .map(async (n) => {
          const pid = Number(/^(\d+)-/.exec(n.slice(mine.length))?.[1]);
          if (!Number.isSafeInteger(pid) || pid === process.pid || pidAlive(pid)) return;
          await rm(join(this.options.dir, n), { recursive: true, force: true }).catch(() => undefined);
        }),
    );
  }

  async versions(provider: ProviderAddress): Promise<Version[]> {
    const byText = new Map<string, Version>();
    for (const name of await this.names(provider)) {
      const parsed = parsePackedFileName(provider.type, name);
      if (parsed) byText.set(parsed.version.toString(), parsed.version);
    }
    return [...byText.values()].sort(compareVersions);
  }

  async packages(provider: ProviderAddress, version: Version): Promise<Map<string, StoredPackage>> {
    const platforms: Platform[] = [];
    for (const name of await this.names(provider)) {
      const parsed = parsePackedFileName(provider.type, name);
      if (parsed?.version.equals(version) && !platforms.some((p) => p.equals(parsed.platform)))
        platforms.push(parsed.platform);
    }
    const found = await Promise.all(platforms.map((p) => this.lookup(provider, version, p)));
    const out = new Map<string, StoredPackage>();
    for (const f of found) if (f) out.set(f.platform.toString(), f);
    return out;
  }

  async lookup(provider: ProviderAddress, version: Version, platform: Platform): Promise<StoredPackage | undefined> {
    const path = join(this.providerDir(provider), packedFileName(provider, version, platform));
    const hashes = await this.hashesOf(path);
    return hashes === undefined ? undefined : { platform, hashes };
  }

  async open(provider: ProviderAddress, version: Version, platform: Platform): Promise<OpenedArchive | undefined> {
    const path = join(this.providerDir(provider), packedFileName(provider, version, platform));
    const hashes = await this.hashesOf(path);
    if (hashes === undefined) return undefined;
    let handle;
    try {
      handle = await open(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
    } catch (err) {
      if (systemErrorCode(err) === 'ENOENT') return undefined;
      throw fileError(err, 'cannot read', path);
    }
    try {
      const st = await handle.stat({ bigint: true });
      // The descriptor must be the file that was hashed (a replacement since is hashed on the next request).
      if (!st.isFile() || fingerprintOf(st) !== this.known.get(path)?.key) {
        await handle.close();
        return undefined;
      }
      return {
        handle,
        path,
        size: Number(st.size),
        etag: archiveEtag(hashes.zh.value),
        mtime: new Date(Number(st.mtimeMs)),
      };
    } catch (err) {
      await handle.close().catch(() => undefined);
      throw err;
    }
  }

  async put(pkg: PackageToStore, signal?: AbortSignal): Promise<void> {
    const run = this.putChain.then(() => this.putNow(pkg, signal));
    this.putChain = run.catch(() => undefined);
    return run;
  }

  private async putNow(pkg: PackageToStore, signal: AbortSignal | undefined): Promise<void> {
    const dir = this.providerDir(pkg.provider);
    const target = join(dir, packedFileName(pkg.provider, pkg.version, pkg.platform));
    const mutex = await acquireDirMutex(join(this.options.dir, MIRROR_MUTEX_FILE), signal ? { signal } : {});
    try {
      await makeDirectory(dir, 'cannot create the provider directory');
      try {
        await rename(pkg.path, target);
      } catch (err) {
        throw fileError(err, 'cannot store the package as', target);
      }
      // Known from the fetch: nothing to hash again.
      this.known.set(target, {
        key: fingerprintOf(await stat(target, { bigint: true })),
        hashes: Promise.resolve(pkg.hashes),
      });
      await this.writeDocuments(pkg.provider, pkg.version);
    } finally {
      await mutex.release();
    }
  }

  /** `VERSION.json` of `version` and `index.json` of the provider, from the archives present. */
  private async writeDocuments(provider: ProviderAddress, version: Version): Promise<void> {
    const dir = this.providerDir(provider);
    const stored = await this.packages(provider, version);
    const archives = [...stored.values()]
      .sort((a, b) => (a.platform.toString() < b.platform.toString() ? -1 : 1))
      .map((p) => ({
        platform: p.platform,
        hashes: normalizeHashes([
          p.hashes.zh,
          ...(p.hashes.h1.ok ? [p.hashes.h1.hash] : []),
          ...(p.hashes.h1Zip.ok ? [p.hashes.h1Zip.hash] : []),
        ]).map((h) => h.text),
        url: packedFileName(provider, version, p.platform),
      }));
    try {
      await writeFileAtomic(join(dir, `${version.toString()}.json`), Buffer.from(mirrorVersionJSON(archives)));
      await writeFileAtomic(join(dir, 'index.json'), Buffer.from(mirrorIndexJSON(await this.versions(provider))));
    } catch (err) {
      throw fileError(err, 'cannot write the index documents in', dir);
    }
  }

  /** The file names in the provider's directory (none when it does not exist). */
  private async names(provider: ProviderAddress): Promise<string[]> {
    try {
      return await readdir(this.providerDir(provider));
    } catch (err) {
      const code = systemErrorCode(err);
      if (code === 'ENOENT' || code === 'ENOTDIR') return [];
      throw fileError(err, 'cannot read', this.providerDir(provider));
    }
  }

  /**
   * The hashes of the regular file at `path` (see the module comment), or
   * undefined when it is absent or not a package (warned).
   */
  private async hashesOf(path: string): Promise<ZipPackageHashes | undefined> {
    let st;
    try {
      st = await stat(path, { bigint: true });
    } catch (err) {
      const code = systemErrorCode(err);
      if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
      throw fileError(err, 'cannot read', path);
    }
    if (!st.isFile()) {
      this.options.onWarning?.(`not serving ${path}: it is not a regular file`, path);
      return undefined;
    }
    const key = fingerprintOf(st);
    const known = this.known.get(path);
    if (known?.key === key) return known.hashes;
    const hashes = this.hash(path);
    this.known.set(path, { key, hashes });
    return hashes;
  }

  private async hash(path: string): Promise<ZipPackageHashes | undefined> {
    try {
      const zh = await zhOfFile(path);
      const stored = await this.options.hashStore?.get(zh);
      if (stored) return stored;
      const hashes = await this.options.pool.hashZip(path, zh);
      if (!hashes.h1.ok || !hashes.h1Zip.ok) {
        this.options.onWarning?.(`not serving ${path}: it is not a provider package no client could install`, path);
        return undefined;
      }
      await this.options.hashStore?.put(hashes);
      return hashes;
    } catch (err) {
      this.known.delete(path);
      if (err instanceof ProvkitError && err.code === ErrorCode.ABORTED) throw err;
      this.options.onWarning?.(`not serving ${path}: ${errorText(err)}`, path);
      return undefined;
    }
  }

  async close(): Promise<void> {
    await this.putChain;
  }
}

function fingerprintOf(st: { size: bigint; ino: bigint; dev: bigint; mtimeNs: bigint; ctimeNs: bigint }): string {
  return `${st.size}:${st.ino}:${st.dev}:${st.mtimeNs}:${st.ctimeNs}`;
}
