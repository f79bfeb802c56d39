/**
 * A pull-through mirror's store in an OCI registry, in the layout OCI
 * publishing writes and OpenTofu's `oci_mirror` reads (oci-publish.ts,
 * sources/oci-mirror.ts, docs/oci.md): several replicas behind a load
 * balancer share it, and what one stores, every one serves.
 *
 * - **Put** publishes the one verified package with {@link publishToOci}:
 *   blob, config, image manifest, then the version's tag, re-read and
 *   merged with what other writers put there and read back after writing
 *   (docs/oci.md, "Concurrent publishes"), so replicas storing different
 *   platforms of one version at the same moment lose nothing. A failure
 *   moves no tag: the package is not stored (what was uploaded is
 *   unreferenced).
 * - **Reads** go to the registry each time (another replica may have
 *   stored something since): the tag's index, then each platform's image
 *   manifest (kept by digest: a digest names its content forever). A
 *   package's `zh:` is its layer digest; its `h1:` forms come from the hash
 *   store, or from hashing the blob, downloaded and checked against its
 *   digest, once per machine.
 * - **Archives** are served from a cache of verified blobs on this machine
 *   (`cacheDir`, by digest), filled by the puts of this replica and by
 *   downloads from the registry; it is kept under `cacheBytes`, least
 *   recently used first out (a file being sent stays readable).
 */
import { constants } from 'node:fs';
import { mkdtemp, open, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';

import { type Platform, type ProviderAddress, type Version } from '../addresses/index.js';
import { ErrorCode, isProvkitError, ProvkitError, systemErrorCode } from '../errors.js';
import { makeCacheDirectory } from '../fs/cache-dir.js';
import { type HashPool, type HashStore, makeHash, type ZipPackageHashes } from '../hashing/index.js';
import { downloadName, packedFileName } from '../layout/index.js';
import { type HttpClient, type OciClient, parseDigest, versionTag } from '../net/index.js';
import {
  fetchPackage,
  OciMirrorSource,
  type PackageMeta,
  selectImageManifest,
  selectLayer,
  type Source,
} from '../sources/index.js';
import { type OciTarget, publishToOci } from '../installer/oci-publish.js';
import {
  archiveEtag,
  type OpenedArchive,
  type PackageStore,
  type PackageToStore,
  type StoredPackage,
} from './store.js';

export interface OciStoreOptions {
  readonly client: OciClient;
  readonly target: OciTarget;
  readonly http: HttpClient;
  readonly pool: HashPool;
  readonly hashStore?: HashStore;
  /** The local cache of verified blobs (created; removed by {@link OciStore.close} when `removeCacheOnClose`). */
  readonly cacheDir: string;
  readonly removeCacheOnClose?: boolean;
  /** Most bytes the blob cache keeps (default 2 GiB). */
  readonly cacheBytes?: number;
  /** See `PublishOptions.tagSettleMs`. */
  readonly tagSettleMs?: number;
}

/** A layer of a stored package: the archive's digest (= its `zh:`) and size. */
interface Layer {
  readonly digest: string;
  readonly hex: string;
  readonly size: number;
}

/** See the module comment. */
export class OciStore implements PackageStore {
  readonly display: string;
  /** Image manifest digest → its zip layer (a digest names its content forever). */
  private readonly layers = new Map<string, Layer>();
  /** Blob cache: hex digest → bytes; in order of last use (oldest first). */
  private readonly cached = new Map<string, number>();
  private cachedBytes = 0;
  /** Blobs being downloaded into the cache, by hex digest. */
  private readonly downloading = new Map<string, Promise<string>>();
  /** Blobs being hashed, by hex digest. */
  private readonly hashing = new Map<string, Promise<ZipPackageHashes>>();
  private ready: Promise<void> | undefined;

  constructor(private readonly options: OciStoreOptions) {
    this.display = options.target.display;
  }

  /** A reader of the registry as OpenTofu's `oci_mirror` reads it: fresh each time, so nothing read is kept too long. */
  private reader(): OciMirrorSource {
    return new OciMirrorSource({ client: this.options.client, repositoryFor: this.options.target.repositoryFor });
  }

  private async cacheDir(): Promise<string> {
    this.ready ??= makeCacheDirectory(join(this.options.cacheDir, 'blobs'), this.options.cacheDir);
    await this.ready;
    return join(this.options.cacheDir, 'blobs');
  }

  async workDir(): Promise<string> {
    const blobs = await this.cacheDir();
    return mkdtemp(join(blobs, '.fetch-'));
  }

  async versions(provider: ProviderAddress, signal?: AbortSignal): Promise<Version[]> {
    try {
      return [...(await this.reader().availableVersions(provider, signal)).versions];
    } catch (err) {
      if (isProvkitError(err, ErrorCode.PROVIDER_NOT_FOUND)) return [];
      throw err;
    }
  }

  /** The layers of `version`'s tag by platform (none when there is no tag). */
  private async versionLayers(
    provider: ProviderAddress,
    version: Version,
    only: Platform | undefined,
    signal: AbortSignal | undefined,
  ): Promise<Map<string, { platform: Platform; layer: Layer }>> {
    const reader = this.reader();
    let platforms: Platform[];
    try {
      platforms = (await reader.publishedPlatforms(provider, version, signal)) ?? [];
    } catch (err) {
      if (isProvkitError(err, ErrorCode.NOT_FOUND) || isProvkitError(err, ErrorCode.PROVIDER_NOT_FOUND))
        return new Map();
      throw err;
    }
    if (only !== undefined) platforms = platforms.filter((p) => p.equals(only));
    const index = await reader.providerIndex(provider, version, signal);
    const out = new Map<string, { platform: Platform; layer: Layer }>();
    await Promise.all(
      platforms.map(async (platform) => {
        const ctx = {
          provider,
          version,
          platform,
          url: index.repository.url(`manifests/${versionTag(version.toString())}`),
        };
        const desc = selectImageManifest(index.manifests, provider, version, platform, ctx);
        let layer = this.layers.get(desc.digest);
        if (layer === undefined) {
          const manifest = await reader.imageManifest(index.repository, desc, ctx, signal);
          const l = selectLayer(manifest, ctx);
          const d = parseDigest(l.digest);
          if (d?.algorithm !== 'sha256')
            throw new ProvkitError(ErrorCode.INVALID_RESPONSE, `the layer of ${desc.digest} is not a sha256 digest`, {
              url: ctx.url,
            });
          layer = { digest: l.digest, hex: d.hex, size: l.size };
          this.layers.set(desc.digest, layer);
        }
        out.set(platform.toString(), { platform, layer });
      }),
    );
    return out;
  }

  async packages(
    provider: ProviderAddress,
    version: Version,
    signal?: AbortSignal,
  ): Promise<Map<string, StoredPackage>> {
    const layers = await this.versionLayers(provider, version, undefined, signal);
    const out = new Map<string, StoredPackage>();
    await Promise.all(
      [...layers.values()].map(async ({ platform, layer }) => {
        out.set(platform.toString(), {
          platform,
          hashes: await this.hashesOf(provider, version, platform, layer, signal),
        });
      }),
    );
    return out;
  }

  async lookup(
    provider: ProviderAddress,
    version: Version,
    platform: Platform,
    signal?: AbortSignal,
  ): Promise<StoredPackage | undefined> {
    const found = (await this.versionLayers(provider, version, platform, signal)).get(platform.toString());
    if (found === undefined) return undefined;
    return { platform, hashes: await this.hashesOf(provider, version, platform, found.layer, signal) };
  }

  async open(
    provider: ProviderAddress,
    version: Version,
    platform: Platform,
    signal?: AbortSignal,
  ): Promise<OpenedArchive | undefined> {
    const found = (await this.versionLayers(provider, version, platform, signal)).get(platform.toString());
    if (found === undefined) return undefined;
    const openBlob = async (): Promise<OpenedArchive> => {
      const path = await this.blob(provider, version, platform, found.layer, signal);
      const handle = await open(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
      const st = await handle.stat();
      this.touch(found.layer.hex, st.size);
      return { handle, path, size: st.size, etag: archiveEtag(found.layer.hex), mtime: st.mtime };
    };
    try {
      return await openBlob();
    } catch (err) {
      // Evicted between the two steps: fetched once more.
      if (systemErrorCode(err) !== 'ENOENT') throw err;
      this.forget(found.layer.hex);
      return openBlob();
    }
  }

  async put(pkg: PackageToStore, signal?: AbortSignal): Promise<void> {
    const source = localArchiveSource(pkg);
    const outcome = await publishToOci({
      items: [{ provider: pkg.provider, version: pkg.version, platforms: [pkg.platform] }],
      source,
      client: this.options.client,
      target: this.options.target,
      http: this.options.http,
      ...(signal ? { signal } : {}),
      ...(this.options.tagSettleMs === undefined ? {} : { tagSettleMs: this.options.tagSettleMs }),
    });
    const failure = outcome.failures[0];
    if (failure !== undefined) throw failure.error;
    // The verified archive becomes this replica's cached copy of the blob.
    const path = join(await this.cacheDir(), `${pkg.hashes.zh.value}.zip`);
    await rename(pkg.path, path).catch(() => undefined);
    const st = await stat(path).catch(() => undefined);
    if (st) this.touch(pkg.hashes.zh.value, st.size);
    await this.options.hashStore?.put(pkg.hashes, pkg.platform.toString());
    this.hashing.set(pkg.hashes.zh.value, Promise.resolve(pkg.hashes));
  }

  /** `zh:` and both `h1:` forms of a stored layer (hash store, else the blob hashed here). */
  private hashesOf(
    provider: ProviderAddress,
    version: Version,
    platform: Platform,
    layer: Layer,
    signal: AbortSignal | undefined,
  ): Promise<ZipPackageHashes> {
    let p = this.hashing.get(layer.hex);
    if (p === undefined) {
      p = (async () => {
        const known = await this.options.hashStore?.get(makeHash('zh:', layer.hex));
        if (known) return known;
        const path = await this.blob(provider, version, platform, layer, signal);
        const hashes = await this.options.pool.hashZip(path, makeHash('zh:', layer.hex));
        if (!hashes.h1.ok || !hashes.h1Zip.ok) {
          throw new ProvkitError(
            ErrorCode.INVALID_RESPONSE,
            `the archive ${layer.digest} stored for ${provider.toString()} ${version.toString()} ${platform.toString()} is not a provider package`,
            { provider: provider.toString(), version: version.toString(), platform: platform.toString() },
          );
        }
        await this.options.hashStore?.put(hashes, platform.toString());
        return hashes;
      })();
      this.hashing.set(layer.hex, p);
      p.catch(() => this.hashing.delete(layer.hex));
    }
    return p;
  }

  /** The cached blob of `layer`, downloaded from the registry and checked against its digest when missing. */
  private blob(
    provider: ProviderAddress,
    version: Version,
    platform: Platform,
    layer: Layer,
    signal: AbortSignal | undefined,
  ): Promise<string> {
    let p = this.downloading.get(layer.hex);
    if (p !== undefined) return p;
    p = (async () => {
      const dir = await this.cacheDir();
      const path = join(dir, `${layer.hex}.zip`);
      if ((await stat(path).catch(() => undefined))?.size === layer.size) return path;
      const meta = await this.reader().packageMeta(provider, version, platform, signal);
      const work = await this.workDir();
      try {
        const f = await fetchPackage(meta, {
          destPath: join(work, downloadName(packedFileName(provider, version, platform))),
          http: this.options.http,
          hashing: { kind: 'zh-only' },
          ...(signal ? { signal } : {}),
        });
        if (f.kind !== 'archive-bytes' || f.zh.value !== layer.hex)
          throw new ProvkitError(ErrorCode.CHECKSUM_MISMATCH, `the blob ${layer.digest} does not match its digest`);
        await rename(f.path, path);
        this.touch(layer.hex, f.size);
        return path;
      } finally {
        await rm(work, { recursive: true, force: true });
      }
    })();
    this.downloading.set(layer.hex, p);
    void p.then(
      () => this.downloading.delete(layer.hex),
      () => this.downloading.delete(layer.hex),
    );
    return p;
  }

  /** Marks a cached blob as just used, and evicts the least recently used beyond the budget. */
  private touch(hex: string, size: number): void {
    this.forget(hex);
    this.cached.set(hex, size);
    this.cachedBytes += size;
    const budget = this.options.cacheBytes ?? 2 * 1024 ** 3;
    for (const old of [...this.cached.keys()]) {
      if (this.cachedBytes <= budget) break;
      if (old === hex) continue;
      this.forget(old);
      // A response reading it keeps its descriptor; the next request downloads it again.
      void rm(join(this.options.cacheDir, 'blobs', `${old}.zip`), { force: true }).catch(() => undefined);
    }
  }

  private forget(hex: string): void {
    const size = this.cached.get(hex);
    if (size === undefined) return;
    this.cached.delete(hex);
    this.cachedBytes -= size;
  }

  async close(): Promise<void> {
    await Promise.all([...this.downloading.values()].map((p) => p.catch(() => undefined)));
    if (this.options.removeCacheOnClose) await rm(this.options.cacheDir, { recursive: true, force: true });
  }
}

/** A source that has exactly one package: a verified archive on disk (for {@link publishToOci}). */
function localArchiveSource(pkg: PackageToStore): Source {
  const display = `the verified archive of ${pkg.provider.toString()} ${pkg.version.toString()} ${pkg.platform.toString()}`;
  return {
    forDisplay: () => display,
    availableVersions: () => Promise.resolve({ versions: [pkg.version], warnings: [] }),
    packageMeta: (provider, version, platform): Promise<PackageMeta> => {
      if (!provider.equals(pkg.provider) || !version.equals(pkg.version) || !platform.equals(pkg.platform))
        return Promise.reject(new ProvkitError(ErrorCode.IO, `internal: ${display} asked for another package`));
      return Promise.resolve({
        provider,
        version,
        platform,
        filename: packedFileName(provider, version, platform),
        location: { kind: 'local-archive', path: pkg.path },
        reportedHashes: [],
        warnings: [],
        source: display,
      });
    },
  };
}
