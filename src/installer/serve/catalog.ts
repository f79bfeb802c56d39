/**
 * What `serve` knows of a mirror directory: the documents and archives of
 * the network mirror protocol (spec §4.3), answered from a filesystem mirror
 * (packed and unpacked layouts, §4.2) through {@link FilesystemMirrorSource},
 * so the directory is read by the same rules `install -fs-mirror` uses.
 *
 * - `index.json` and `VERSION.json` found in the provider's directory are
 *   served as they are; where absent they are generated (Go-formatted, with
 *   `zh:` and both `h1:` forms of each archive) and cached.
 * - Unpacked packages (`VERSION/OS_ARCH/` directories) are served as zips
 *   built on the fly (deterministic: sorted entries, fixed times), whose
 *   extracted `h1:` equals the directory's.
 * - Freshness: the scan is redone when older than `refreshMs` (a new source
 *   object); archive hashes are cached by file fingerprint (size, mtime,
 *   inode), so only changed files are hashed again.
 */
/* eslint-disable no-await-in-loop -- small ordered directory reads: the first on-disk document wins */
import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { deflateRawSync } from 'node:zlib';

import {
  type Flavor,
  parsePlatform,
  type Platform,
  ProviderAddress,
  tryHostnameForComparison,
  tryParseProviderPart,
  tryParseVersion,
  type Version,
} from '../../addresses/index.js';
import { systemErrorCode } from '../../errors.js';
import { crc32 } from '../../hashing/crc32.js';
import { type HashPool, listPackageFiles, normalizeHashes, parseHash } from '../../hashing/index.js';
import { goMarshalIndent, mirrorIndexJSON, packedFileName } from '../../layout/index.js';
import { FilesystemMirrorSource, type PackageMeta, type ScanWarning } from '../../sources/index.js';

/** Something the server can send. */
export type Resource =
  | { readonly kind: 'bytes'; readonly contentType: string; readonly body: Buffer; readonly etag: string; readonly mtime?: Date }
  | { readonly kind: 'file'; readonly contentType: string; readonly path: string; readonly size: number; readonly etag: string; readonly mtime: Date };

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

const JSON_TYPE = 'application/json';
const ZIP_TYPE = 'application/zip';

const etagOf = (body: Buffer): string => `"${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"`;

export class MirrorCatalog {
  private gen: Generation | undefined;
  private readonly hashCache = new Map<string, ArchiveHashes>();
  private readonly zipCache = new Map<string, { key: string; zip: Promise<Buffer> }>();

  constructor(private readonly options: CatalogOptions) {}

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  private generation(): Generation {
    const refresh = this.options.refreshMs ?? 2000;
    if (!this.gen || this.now() - this.gen.at >= refresh) {
      this.gen = {
        at: this.now(),
        source: new FilesystemMirrorSource({ baseDir: this.options.dir, flavor: this.options.flavor, ...(this.options.onWarning ? { onWarning: this.options.onWarning } : {}) }),
        docs: new Map(),
      };
    }
    return this.gen;
  }

  /**
   * The resource at `HOST/NS/TYPE/FILE` (decoded path segments; HOST in
   * either form), or undefined for anything the protocol does not define.
   */
  async resolve(hostGiven: string, nsGiven: string, typeGiven: string, file: string): Promise<Resource | undefined> {
    const host = tryHostnameForComparison(hostGiven);
    const ns = tryParseProviderPart(nsGiven);
    const type = tryParseProviderPart(typeGiven);
    if (!host.ok || !ns.ok || !type.ok) return undefined;
    const provider = new ProviderAddress(host.hostname, ns.value, type.value);
    const gen = this.generation();
    const dirs = await this.providerDirs(provider);
    if (dirs.length === 0) return undefined;
    const lower = file.toLowerCase();
    if (lower.endsWith('.json')) {
      // An index document the operator put there wins.
      for (const d of dirs) {
        const onDisk = await fileResource(join(d, file), JSON_TYPE);
        if (onDisk) return onDisk;
      }
      const key = `${provider.toComparisonString()}/${file}`;
      let doc = gen.docs.get(key);
      if (!doc) {
        doc = file === 'index.json' ? this.indexDoc(gen, provider) : this.versionDoc(gen, provider, dirs, file.slice(0, -'.json'.length));
        gen.docs.set(key, doc);
        doc.catch(() => gen.docs.delete(key));
      }
      return doc;
    }
    if (!lower.endsWith('.zip')) return undefined;
    const prefix = `terraform-provider-${provider.type}_`;
    if (!lower.startsWith(prefix)) return undefined;
    const parts = lower.slice(prefix.length, -'.zip'.length).split('_');
    if (parts.length !== 3) return undefined;
    const version = tryParseVersion(parts[0]!);
    if (!version.ok) return undefined;
    let platform: Platform;
    try {
      platform = parsePlatform(`${parts[1]!}_${parts[2]!}`);
    } catch {
      return undefined;
    }
    const meta = await this.meta(gen, provider, version.version, platform);
    if (!meta) return undefined;
    if (meta.location.kind === 'local-archive') return fileResource(meta.location.path, ZIP_TYPE);
    if (meta.location.kind === 'local-dir') {
      const zip = await this.dirZip(meta.location.path);
      return { kind: 'bytes', contentType: ZIP_TYPE, body: zip, etag: etagOf(zip) };
    }
    return undefined;
  }

  private async meta(gen: Generation, provider: ProviderAddress, version: Version, platform: Platform): Promise<PackageMeta | undefined> {
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
    const part = (want: string) => (n: string): boolean => {
      const p = tryParseProviderPart(n);
      return p.ok && p.value === want;
    };
    const nss = (await Promise.all(hosts.map((h) => list(h, part(provider.namespace))))).flat();
    return (await Promise.all(nss.map((n) => list(n, part(provider.type))))).flat().sort();
  }

  private async indexDoc(gen: Generation, provider: ProviderAddress): Promise<Resource | undefined> {
    const available = await gen.source.availableVersions(provider);
    if (available.versions.length === 0) return undefined;
    const body = Buffer.from(mirrorIndexJSON(available.versions));
    return { kind: 'bytes', contentType: JSON_TYPE, body, etag: etagOf(body) };
  }

  /** `VERSION.json`: every platform the scan finds for the version, with zh: and both h1: forms. */
  private async versionDoc(gen: Generation, provider: ProviderAddress, dirs: readonly string[], versionText: string): Promise<Resource | undefined> {
    const parsed = tryParseVersion(versionText);
    if (!parsed.ok || parsed.version.toString() !== versionText) return undefined;
    const version = parsed.version;
    // Candidate platforms from the names on disk; the source decides which are packages.
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
    const archives: Record<string, { hashes: string[]; url: string }> = {};
    await Promise.all(
      [...candidates].map(async (c) => {
        let platform: Platform;
        try {
          platform = parsePlatform(c);
        } catch {
          return;
        }
        const meta = await this.meta(gen, provider, version, platform);
        if (!meta) return;
        const hashes = await this.archiveHashes(meta);
        if (hashes) archives[platform.toString()] = { hashes: [...hashes], url: packedFileName(provider, version, platform) };
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
      const h1 = await this.options.pool.hashDir(path);
      return normalizeHashes([parseHash(`zh:${createHash('sha256').update(zip).digest('hex')}`), h1]).map((h) => h.text);
    }
    const st = await stat(path, { bigint: true });
    const key = `${st.size}:${st.mtimeNs}:${st.ino}`;
    const cached = this.hashCache.get(path);
    if (cached?.key === key) return cached.hashes;
    const z = await this.options.pool.hashZip(path);
    const hashes = normalizeHashes([z.zh, ...(z.h1.ok ? [z.h1.hash] : []), ...(z.h1Zip.ok ? [z.h1Zip.hash] : [])]).map((h) => h.text);
    this.hashCache.set(path, { key, hashes });
    return hashes;
  }

  /** A deterministic zip of an unpacked package directory, cached while the directory's files are unchanged. */
  private async dirZip(dir: string): Promise<Buffer> {
    const files = (await listPackageFiles(dir)).map((b) => b.toString('utf8'));
    const stats = await Promise.all(files.map((f) => stat(join(dir, f))));
    const key = files.map((f, i) => `${f}:${stats[i]!.size}:${stats[i]!.mtimeMs}:${stats[i]!.ino}`).join('|');
    const cached = this.zipCache.get(dir);
    if (cached?.key === key) return cached.zip;
    const zip = (async () => buildZip(await Promise.all(files.map(async (f, i) => ({ name: f, data: await readFile(join(dir, f)), mode: stats[i]!.mode & 0o777 })))))();
    this.zipCache.set(dir, { key, zip });
    return zip;
  }
}

async function fileResource(path: string, contentType: string): Promise<Resource | undefined> {
  try {
    const st = await stat(path, { bigint: true });
    if (!st.isFile()) return undefined;
    return {
      kind: 'file',
      contentType,
      path,
      size: Number(st.size),
      etag: `"${st.size.toString(16)}-${st.mtimeNs.toString(16)}-${st.ino.toString(16)}"`,
      mtime: new Date(Number(st.mtimeMs)),
    };
  } catch {
    return undefined;
  }
}

/** A zip (deflate, 1980-01-01 times, unix modes) of the given files, in the order given. */
export function buildZip(files: ReadonlyArray<{ name: string; data: Buffer; mode: number }>): Buffer {
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  const DOS_DATE = (0 << 9) | (1 << 5) | 1; // 1980-01-01
  for (const f of files) {
    const name = Buffer.from(f.name, 'utf8');
    const packed = deflateRawSync(f.data);
    const crc = crc32(f.data, 0);
    const lh = Buffer.alloc(30);
    lh.writeUInt32LE(0x04034b50, 0);
    lh.writeUInt16LE(20, 4);
    lh.writeUInt16LE(0x0800, 6);
    lh.writeUInt16LE(8, 8);
    lh.writeUInt16LE(0, 10);
    lh.writeUInt16LE(DOS_DATE, 12);
    lh.writeUInt32LE(crc, 14);
    lh.writeUInt32LE(packed.length, 18);
    lh.writeUInt32LE(f.data.length, 22);
    lh.writeUInt16LE(name.length, 26);
    lh.writeUInt16LE(0, 28);
    const ch = Buffer.alloc(46);
    ch.writeUInt32LE(0x02014b50, 0);
    ch.writeUInt16LE((3 << 8) | 20, 4);
    ch.writeUInt16LE(20, 6);
    ch.writeUInt16LE(0x0800, 8);
    ch.writeUInt16LE(8, 10);
    ch.writeUInt16LE(0, 12);
    ch.writeUInt16LE(DOS_DATE, 14);
    ch.writeUInt32LE(crc, 16);
    ch.writeUInt32LE(packed.length, 20);
    ch.writeUInt32LE(f.data.length, 24);
    ch.writeUInt16LE(name.length, 28);
    ch.writeUInt32LE(((0o100000 | f.mode) << 16) >>> 0, 38);
    ch.writeUInt32LE(offset, 42);
    locals.push(lh, name, packed);
    central.push(ch, name);
    offset += lh.length + name.length + packed.length;
  }
  const cd = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(files.length, 8);
  end.writeUInt16LE(files.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}
