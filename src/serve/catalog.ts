/**
 * What `serve` knows of a mirror directory: the documents and archives of
 * the network mirror protocol (docs/reference.md §4.3), answered from a filesystem mirror
 * (packed and unpacked layouts, docs/reference.md §4.2) through {@link FilesystemMirrorSource},
 * so the directory is read by the same rules `install -fs-mirror` uses.
 *
 * - Only the protocol's documents exist (pinned by test/e2e/serve-hardening.test.ts): `index.json` and
 *   `VERSION.json` where VERSION is a version in its canonical form (as
 *   clients request it), and `terraform-provider-TYPE_VERSION_OS_ARCH.zip`.
 *   Any other name, `*.json` included (dotfiles, notes, `hashes.json`), is
 *   not found.
 * - Only regular files that resolve inside the served directory are read
 *   (files.ts; pinned by test/e2e/serve-hardening.test.ts): a document, an archive, an unpacked
 *   package or a file of one that is a link out (or a FIFO, a device) is
 *   treated as absent, with a warning. Versions without a servable package
 *   are left out of generated documents.
 * - `index.json` and `VERSION.json` found in the provider's directory are
 *   served as they are; where absent they are generated (Go-formatted, with
 *   `zh:` and both `h1:` forms of each archive) and cached.
 * - Unpacked packages (`VERSION/OS_ARCH/` directories) are served as zips
 *   built once onto disk (dir-zip.ts; in a directory under TMPDIR removed by
 *   {@link MirrorCatalog.close}), rebuilt when a file of the package changes;
 *   their extracted `h1:` equals the directory's.
 * - Freshness: the scan is redone when older than `refreshMs` (a new source
 *   object); archive hashes are cached by file fingerprint (size, mtime,
 *   inode), so only changed files are hashed again.
 *
 * A `file` resource carries an open handle: the bytes sent are those of the
 * file that was checked, and whoever receives the resource closes it.
 */
/* eslint-disable no-await-in-loop -- small ordered directory reads: the first on-disk document wins */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, open, readdir, rm, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve as resolvePath } from 'node:path';

import type { ProviderAddress } from '../addresses/index.js';
import {
  type Flavor,
  parsePlatform,
  type Platform,
  tryHostnameForComparison,
  tryParseProviderPart,
  type Version,
} from '../addresses/index.js';
import { systemErrorCode, errorText } from '../errors.js';
import {
  displayName,
  type Hash,
  type HashPool,
  listPackageFiles,
  normalizeHashes,
  zhFromDigest,
} from '../hashing/index.js';
import { goMarshalIndent } from '../go/index.js';
import { mirrorIndexJSON, packedFileName, parseMirrorRequest } from '../layout/index.js';
import { FilesystemMirrorSource, type PackageMeta, type ScanWarning } from '../sources/index.js';
import { writeDirZip } from './dir-zip.js';
import { isInside, openInside, realPathOf, type Refusal } from './files.js';

/** What every resource may add: response headers, and how the request ended for the access log. */
interface ResourceExtras {
  /** More response headers (a pull-through mirror's `X-Provkit-Origin`). */
  readonly headers?: Readonly<Record<string, string>>;
  /** How the request ended, for the access log (`hit`, `miss`, …; pull-through/metrics.ts). */
  readonly result?: string;
}

/** Something the server can send. */
export type Resource =
  | ({
      readonly kind: 'bytes';
      readonly contentType: string;
      readonly body: Buffer;
      readonly etag: string;
      readonly mtime?: Date;
    } & ResourceExtras)
  | ({
      readonly kind: 'file';
      readonly contentType: string;
      /** Open for reading; the receiver closes it. */
      readonly handle: FileHandle;
      /** For messages. */
      readonly path: string;
      readonly size: number;
      readonly etag: string;
      readonly mtime: Date;
    } & ResourceExtras);

export interface CatalogOptions {
  readonly dir: string;
  readonly flavor: Flavor;
  readonly pool: HashPool;
  /** Rescan the directory when the last scan is older than this (default 2000 ms). */
  readonly refreshMs?: number;
  readonly onWarning?: (w: ScanWarning) => void;
  readonly now?: () => number;
}

interface Generation {
  readonly at: number;
  readonly source: FilesystemMirrorSource;
  readonly docs: Map<string, Promise<Resource | undefined>>;
}

interface ArchiveHashes {
  readonly key: string;
  readonly hashes: readonly string[];
}

/** A zip of an unpacked package, built onto disk. */
interface BuiltZip {
  readonly path: string;
  readonly size: number;
  readonly zh: Hash;
  readonly h1: Hash;
  readonly etag: string;
  readonly mtime: Date;
}

/** The files of an unpacked package as checked: names and fingerprints, or why it is not served. */
type PackageFiles =
  { readonly ok: true; readonly files: readonly Buffer[]; readonly key: string } | { readonly ok: false };

const JSON_TYPE = 'application/json';
const ZIP_TYPE = 'application/zip';
/** Distinct warnings remembered (each is given once). */
const MAX_WARNINGS = 1000;

const etagOf = (body: Buffer): string => `"${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"`;

export class MirrorCatalog {
  private gen: Generation | undefined;
  private rootReal: Promise<Buffer> | undefined;
  private cacheDir: Promise<string> | undefined;
  private seq = 0;
  /** Aborted by {@link close}: builds stop, none start. */
  private readonly closing = new AbortController();
  private readonly building = new Set<Promise<unknown>>();
  private readonly hashCache = new Map<string, ArchiveHashes>();
  private readonly zipCache = new Map<string, { key: string; zip: Promise<BuiltZip> }>();
  private readonly warned = new Set<string>();

  constructor(private readonly options: CatalogOptions) {}

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  private generation(): Generation {
    const refresh = this.options.refreshMs ?? 2000;
    if (!this.gen || this.now() - this.gen.at >= refresh) {
      this.gen = {
        at: this.now(),
        source: new FilesystemMirrorSource({
          baseDir: this.options.dir,
          flavor: this.options.flavor,
          ...(this.options.onWarning ? { onWarning: this.options.onWarning } : {}),
        }),
        docs: new Map(),
      };
    }
    return this.gen;
  }

  /** The served directory's real path, taken once (it may itself be a symlink, as for `install -fs-mirror`). */
  private root(): Promise<Buffer> {
    this.rootReal ??= realPathOf(this.options.dir).then((r) => r ?? Buffer.from(resolvePath(this.options.dir)));
    return this.rootReal;
  }

  /** Stops the builds in progress and removes the built zips. */
  async close(): Promise<void> {
    this.closing.abort();
    await Promise.allSettled([...this.building]);
    const dir = await this.cacheDir?.catch(() => undefined);
    if (dir !== undefined) await rm(dir, { recursive: true, force: true, maxRetries: 3 });
  }

  private warn(path: string, message: string): void {
    if (this.warned.has(message)) return;
    if (this.warned.size >= MAX_WARNINGS) this.warned.clear();
    this.warned.add(message);
    this.options.onWarning?.({ path, message });
  }

  private async refused(path: string, why: Refusal, real: Buffer | undefined, what = path): Promise<void> {
    if (why === 'missing') return;
    const root = (await this.root()).toString();
    this.warn(
      path,
      why === 'outside'
        ? `not serving ${what}: it resolves to ${real ? displayName(real) : '?'}, outside the served directory ${root}`
        : `not serving ${what}: ${real ? displayName(real) : path} is not a regular file`,
    );
  }

  /** Opens `path` if it is a regular file inside the served directory (files.ts), or warns and gives undefined. */
  private async openFile(path: string, contentType: string, etag?: string): Promise<Resource | undefined> {
    const opened = await openInside(await this.root(), path);
    if (!opened.ok) {
      await this.refused(path, opened.why, opened.real);
      return undefined;
    }
    const st = opened.st;
    return {
      kind: 'file',
      contentType,
      handle: opened.handle,
      path,
      size: Number(st.size),
      etag: etag ?? `"${st.size.toString(16)}-${st.mtimeNs.toString(16)}-${st.ino.toString(16)}"`,
      mtime: new Date(Number(st.mtimeMs)),
    };
  }

  /**
   * The resource at `HOST/NS/TYPE/FILE` (decoded path segments; HOST in
   * either form), or undefined for anything the protocol does not define.
   * A `file` resource must be closed by the caller.
   */
  async resolve(hostGiven: string, nsGiven: string, typeGiven: string, file: string): Promise<Resource | undefined> {
    const request = parseMirrorRequest(hostGiven, nsGiven, typeGiven, file);
    if (request === undefined) return undefined;
    const { provider } = request;
    const gen = this.generation();
    if (request.kind !== 'archive') {
      const dirs = await this.providerDirs(provider);
      if (dirs.length === 0) return undefined;
      // An index document the operator put there wins.
      for (const d of dirs) {
        const onDisk = await this.openFile(join(d, file), JSON_TYPE);
        if (onDisk) return onDisk;
      }
      const key = `${provider.toComparisonString()}/${file}`;
      let doc = gen.docs.get(key);
      if (!doc) {
        doc =
          request.kind === 'version'
            ? this.versionDoc(gen, provider, dirs, request.version)
            : this.indexDoc(gen, provider, dirs);
        gen.docs.set(key, doc);
        doc.catch(() => gen.docs.delete(key));
      }
      return doc;
    }
    const meta = await this.meta(gen, provider, request.version, request.platform);
    if (!meta) return undefined;
    if (meta.location.kind === 'local-archive') return this.openFile(meta.location.path, ZIP_TYPE);
    if (meta.location.kind === 'local-dir') return this.builtZipResource(meta.location.path);
    return undefined;
  }

  private async meta(
    gen: Generation,
    provider: ProviderAddress,
    version: Version,
    platform: Platform,
  ): Promise<PackageMeta | undefined> {
    try {
      return await gen.source.packageMeta(provider, version, platform);
    } catch {
      return undefined;
    }
  }

  /** The directories that hold `provider` (host, namespace and type matched as the scan matches them). */
  private async providerDirs(provider: ProviderAddress): Promise<string[]> {
    const list = async (dir: string, match: (name: string) => boolean): Promise<string[]> => {
      try {
        return (await readdir(dir)).filter(match).map((n) => join(dir, n));
      } catch (err) {
        if (systemErrorCode(err) === 'ENOENT' || systemErrorCode(err) === 'ENOTDIR') return [];
        throw err;
      }
    };
    const hosts = await list(this.options.dir, (n) => {
      const h = tryHostnameForComparison(n);
      return h.ok && h.hostname === provider.hostname;
    });
    const part =
      (want: string) =>
      (n: string): boolean => {
        const p = tryParseProviderPart(n);
        return p.ok && p.value === want;
      };
    const nss = (await Promise.all(hosts.map((h) => list(h, part(provider.namespace))))).flat();
    return (await Promise.all(nss.map((n) => list(n, part(provider.type))))).flat().sort();
  }

  /** Platforms that may have packages, from the names on disk (the source decides which are packages). */
  private async candidatePlatforms(provider: ProviderAddress, dirs: readonly string[]): Promise<Platform[]> {
    const candidates = new Set<string>();
    const prefix = `terraform-provider-${provider.type}_`;
    for (const d of dirs) {
      const names = await readdir(d).catch(() => [] as string[]);
      for (const n of names) {
        const lower = n.toLowerCase();
        if (lower.startsWith(prefix) && lower.endsWith('.zip')) {
          const parts = lower.slice(prefix.length, -4).split('_');
          if (parts.length >= 3) candidates.add(`${parts[1]!}_${parts[2]!}`);
        } else {
          for (const p of await readdir(join(d, n)).catch(() => [] as string[])) candidates.add(p);
        }
      }
    }
    const out: Platform[] = [];
    for (const c of candidates) {
      try {
        out.push(parsePlatform(c));
      } catch {
        // not a platform
      }
    }
    return out;
  }

  /** The packages of `version` the scan finds, one per platform. */
  private async packages(
    gen: Generation,
    provider: ProviderAddress,
    version: Version,
    platforms: readonly Platform[],
  ): Promise<PackageMeta[]> {
    const metas = await Promise.all(platforms.map((p) => this.meta(gen, provider, version, p)));
    return metas.filter((m): m is PackageMeta => m !== undefined);
  }

  /** Whether the package's files are all regular files inside the served directory (nothing is hashed or built). */
  private async servable(meta: PackageMeta): Promise<boolean> {
    if (meta.location.kind === 'local-dir') return (await this.packageFiles(meta.location.path)).ok;
    if (meta.location.kind !== 'local-archive') return false;
    const opened = await openInside(await this.root(), meta.location.path);
    if (!opened.ok) {
      await this.refused(meta.location.path, opened.why, opened.real);
      return false;
    }
    await opened.handle.close();
    return true;
  }

  private async indexDoc(
    gen: Generation,
    provider: ProviderAddress,
    dirs: readonly string[],
  ): Promise<Resource | undefined> {
    const available = await gen.source.availableVersions(provider);
    const platforms = await this.candidatePlatforms(provider, dirs);
    const versions: Version[] = [];
    for (const v of available.versions) {
      const metas = await this.packages(gen, provider, v, platforms);
      const ok = await Promise.all(metas.map((m) => this.servable(m)));
      if (ok.some(Boolean)) versions.push(v);
    }
    if (versions.length === 0) return undefined;
    const body = Buffer.from(mirrorIndexJSON(versions));
    return { kind: 'bytes', contentType: JSON_TYPE, body, etag: etagOf(body) };
  }

  /** `VERSION.json`: every servable platform the scan finds for the version, with zh: and both h1: forms. */
  private async versionDoc(
    gen: Generation,
    provider: ProviderAddress,
    dirs: readonly string[],
    version: Version,
  ): Promise<Resource | undefined> {
    const metas = await this.packages(gen, provider, version, await this.candidatePlatforms(provider, dirs));
    const archives: Record<string, { hashes: string[]; url: string }> = {};
    await Promise.all(
      metas.map(async (meta) => {
        const hashes = await this.archiveHashes(meta);
        if (hashes)
          archives[meta.platform.toString()] = {
            hashes: [...hashes],
            url: packedFileName(provider, version, meta.platform),
          };
      }),
    );
    if (Object.keys(archives).length === 0) return undefined;
    const body = Buffer.from(goMarshalIndent({ archives }));
    return { kind: 'bytes', contentType: JSON_TYPE, body, etag: etagOf(body) };
  }

  private async archiveHashes(meta: PackageMeta): Promise<readonly string[] | undefined> {
    if (meta.location.kind === 'http') return undefined;
    const path = meta.location.path;
    if (meta.location.kind === 'local-dir') {
      const zip = await this.dirZip(path);
      return zip ? normalizeHashes([zip.zh, zip.h1]).map((h) => h.text) : undefined;
    }
    const opened = await openInside(await this.root(), path);
    if (!opened.ok) {
      await this.refused(path, opened.why, opened.real);
      return undefined;
    }
    try {
      const st = opened.st;
      const key = `${st.size}:${st.mtimeNs}:${st.ino}:${st.dev}`;
      const cached = this.hashCache.get(path);
      if (cached?.key === key) return cached.hashes;
      // Hashed by its checked real path; what is sent is always read from a checked descriptor.
      const z = await this.options.pool.hashZip(opened.real.toString());
      const hashes = normalizeHashes([
        z.zh,
        ...(z.h1.ok ? [z.h1.hash] : []),
        ...(z.h1Zip.ok ? [z.h1Zip.hash] : []),
      ]).map((h) => h.text);
      this.hashCache.set(path, { key, hashes });
      return hashes;
    } finally {
      await opened.handle.close();
    }
  }

  /**
   * The files of the unpacked package at `dir`, each checked by opening it
   * (files.ts), with a fingerprint of them all; or a refusal (warned) when
   * the package or any of its files is not a regular file inside the served
   * directory.
   */
  private async packageFiles(dir: string): Promise<PackageFiles> {
    const root = await this.root();
    const real = await realPathOf(dir);
    if (!real) return { ok: false };
    if (!isInside(root, real)) {
      await this.refused(dir, 'outside', real, `the package ${dir}`);
      return { ok: false };
    }
    let names: Buffer[];
    try {
      names = await listPackageFiles(dir);
    } catch (err) {
      this.warn(dir, `not serving the package ${dir}: ${errorText(err)}`);
      return { ok: false };
    }
    const parts: string[] = [];
    for (const name of names) {
      const path = Buffer.concat([Buffer.from(dir), Buffer.from('/'), name]);
      const opened = await openInside(root, path);
      if (!opened.ok) {
        await this.refused(
          displayName(path),
          opened.why === 'missing' ? 'not-a-file' : opened.why,
          opened.real ?? path,
          `the package ${dir}`,
        );
        return { ok: false };
      }
      const st = opened.st;
      await opened.handle.close();
      parts.push(`${name.toString('base64')}:${st.size}:${st.mtimeNs}:${st.ino}:${st.dev}:${st.mode}`);
    }
    return { ok: true, files: names, key: parts.join('|') };
  }

  private cacheDirectory(): Promise<string> {
    if (this.closing.signal.aborted) return Promise.reject(new Error('the mirror server is closing'));
    this.cacheDir ??= mkdtemp(join(tmpdir(), 'provkit-serve-'));
    return this.cacheDir;
  }

  /**
   * The zip of the unpacked package at `dir`, built onto disk once and
   * again when a file of the package changes; undefined when the package is
   * not served (warned).
   */
  private async dirZip(dir: string): Promise<BuiltZip | undefined> {
    const files = await this.packageFiles(dir);
    if (!files.ok) return undefined;
    const cached = this.zipCache.get(dir);
    if (cached?.key === files.key) return cached.zip;
    const zip = this.buildZip(dir, files.files);
    this.building.add(zip);
    void zip.catch(() => undefined).finally(() => this.building.delete(zip));
    this.zipCache.set(dir, { key: files.key, zip });
    zip.then(
      () => {
        // The one it replaces is no longer handed out (responses in flight keep their open descriptor).
        if (cached) void cached.zip.then((old) => rm(old.path, { force: true })).catch(() => undefined);
      },
      () => {
        if (this.zipCache.get(dir)?.zip === zip) this.zipCache.delete(dir);
      },
    );
    return zip;
  }

  private async buildZip(dir: string, names: readonly Buffer[]): Promise<BuiltZip> {
    const root = await this.root();
    const path = join(await this.cacheDirectory(), `${++this.seq}.zip`);
    const out = await open(path, 'wx', 0o600);
    try {
      const built = await writeDirZip(
        out,
        names.map((name) => ({
          name,
          display: displayName(name),
          open: async () => {
            const opened = await openInside(root, Buffer.concat([Buffer.from(dir), Buffer.from('/'), name]));
            if (!opened.ok) throw new Error(`${dir}: ${displayName(name)} changed while it was zipped`);
            return { handle: opened.handle, size: Number(opened.st.size), mode: Number(opened.st.mode) };
          },
        })),
        dir,
        this.closing.signal,
      );
      await out.close();
      const sha = createHash('sha256');
      for await (const chunk of createReadStream(path, { signal: this.closing.signal })) sha.update(chunk as Buffer);
      const digest = sha.digest();
      return {
        path,
        size: built.size,
        zh: zhFromDigest(digest),
        h1: built.h1,
        etag: `"${digest.toString('base64url').slice(0, 32)}"`,
        mtime: new Date(),
      };
    } catch (err) {
      await out.close().catch(() => undefined);
      await rm(path, { force: true });
      throw err;
    }
  }

  /** The built zip of an unpacked package, open for sending. */
  private async builtZipResource(dir: string): Promise<Resource | undefined> {
    for (let attempt = 0; ; attempt++) {
      const zip = await this.dirZip(dir);
      if (!zip) return undefined;
      try {
        const handle = await open(zip.path, 'r');
        return {
          kind: 'file',
          contentType: ZIP_TYPE,
          handle,
          path: dir,
          size: zip.size,
          etag: zip.etag,
          mtime: zip.mtime,
        };
      } catch (err) {
        // Replaced by a newer build between the two steps: once more.
        if (systemErrorCode(err) !== 'ENOENT' || attempt > 0) throw err;
      }
    }
  }
}
