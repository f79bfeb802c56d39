/**
 * A persistent, content-addressed store of package hashes (docs/hash-store.md:
 * lock hashes for N platforms without N full downloads): the
 * `zh:` of an archive (the SHA-256 of its bytes) → both `h1:` forms hashing
 * those bytes gave here earlier.
 *
 * Why this is sound: both `h1:` forms are functions of the archive's bytes,
 * and `zh:` identifies the bytes (SHA-256). So when a registry's signed
 * SHA256SUMS says a package's `zh:` is X and the store holds the hashes of X,
 * those are exactly the hashes downloading and hashing the package would give
 * (a download that did not match X would be refused anyway). Only results
 * computed locally are stored (trust `verified-locally`), and only complete
 * ones (both forms hashed); a refused archive is hashed again each time.
 *
 * Each entry may also name the platform whose package the archive was
 * fetched as (`platform`, OS_ARCH): not part of the hashes (the bytes could
 * be published for two platforms; the last one recorded wins), only a hint
 * that lets `lock` tell which platforms an existing lock file's `h1:` values
 * stand for without downloading anything (installer/platforms.ts).
 *
 * Each entry also keeps its dispositions (hashing/disposition.ts): who
 * vouched for the archive's bytes when they were hashed here, when, and from
 * where (`signed` by a key, over a SHA256SUMS URL; `verified-locally` or
 * `computed-locally` from a URL or path). A later write of the same archive
 * adds its dispositions to the ones already there (re-read and merged, so two
 * writers lose nothing). Entries written before dispositions existed have
 * none; they are read as before (docs/hash-store.md, docs/provenance.md).
 *
 * Layout: `DIR/<first 2 hex digits>/<64 hex digits>.json`, one small JSON
 * document per archive, written atomically (temp file + rename), so several
 * processes may share a store, and a store may be copied between machines
 * (a CI cache). An unreadable or malformed entry is a miss (and is
 * overwritten by the next put), and so is anything but a regular file.
 * Whoever can write the store can make provkit record hashes of their
 * choosing, as with the plugin cache: keep it where the CLI configuration and
 * the plugin cache are (the user's cache directory). Its directories are made
 * 0755 and its files 0644 whatever the umask (fs/cache-dir.ts).
 */
import { join } from 'node:path';

import { writeFileAtomic } from '../fs/atomic.js';
import { makeCacheDirectory } from '../fs/cache-dir.js';
import { readRegularFile } from '../fs/read.js';
import { type Disposition, sortDispositions, type StoredDisposition, storedDispositionFrom } from './disposition.js';
import { type Hash, parseHash } from './hash.js';
import type { HashWarning, ZipPackageHashes } from './zip-package.js';

/** See the module comment. */
export interface HashStore {
  /** The hashes of the archive whose `zh:` is `zh`, when this store has them. */
  get(zh: Hash): Promise<ZipPackageHashes | undefined>;
  /**
   * The hashes of the archive whose `zh:` is `zh` and the platform it was
   * last recorded for (when recorded), when this store has them.
   */
  lookup(zh: Hash): Promise<StoredHashes | undefined>;
  /**
   * Records a locally computed result (ignored unless both forms succeeded),
   * with the platform (OS_ARCH) of the package when known and what vouched
   * for its bytes (`dispositions`, stamped with the store's clock and merged
   * with the entry's earlier ones). Never throws.
   */
  put(result: ZipPackageHashes, platform?: string, dispositions?: readonly Disposition[]): Promise<void>;
}

/** What {@link HashStore.lookup} finds. */
export interface StoredHashes {
  /** The package's hashes as they were computed: `zh:` and both `h1:` forms, with what reading it found. */
  readonly hashes: ZipPackageHashes;
  /** The platform the package was stored for (`os_arch`), when known. */
  readonly platform?: string;
  /** Who vouched for the bytes, when and from where; empty for entries written before provkit kept them. */
  readonly dispositions: readonly StoredDisposition[];
}

/** Options of {@link openHashStore}. */
export interface HashStoreOptions {
  /** The clock that stamps dispositions (default the system's). */
  readonly now?: () => Date;
}

/** At most this many dispositions per entry: the newest are kept. */
const MAX_DISPOSITIONS = 32;

/** An entry is a few hundred bytes; a larger file is not one (a miss). */
const MAX_ENTRY_BYTES = 1024 * 1024;

/** Bump when the document's meaning changes: older entries become misses. */
const FORMAT = 1;

interface StoredEntry {
  format: number;
  zh: string;
  h1: string;
  h1Zip: string;
  warnings: HashWarning[];
  entryCount: number;
  uncompressedBytes: number;
  /** Optional (format 1 entries written before it existed lack it). */
  platform?: string;
  /** Optional, likewise: who vouched for the bytes, when, from where. */
  dispositions?: StoredDisposition[];
}

const ZH_HEX = /^[0-9a-f]{64}$/;
const H1_TEXT = /^h1:[A-Za-z0-9+/]{43}=$/;
const PLATFORM_TEXT = /^[a-z0-9]+_[a-z0-9]+$/;

/** The store in `dir` (created on the first put). */
export function openHashStore(dir: string, options: HashStoreOptions = {}): HashStore {
  const now = options.now ?? (() => new Date());
  /** Shard directories made (and checked) by this store. */
  const made = new Map<string, Promise<void>>();
  const pathOf = (hex: string): string => join(dir, hex.slice(0, 2), `${hex}.json`);
  const lookup = async (zh: Hash): Promise<StoredHashes | undefined> => {
    if (zh.scheme !== 'zh:' || !ZH_HEX.test(zh.value)) return undefined;
    const path = pathOf(zh.value);
    let doc: unknown;
    try {
      doc = JSON.parse((await readRegularFile(path, { maxBytes: MAX_ENTRY_BYTES })).toString('utf8'));
    } catch {
      return undefined;
    }
    const e = doc as Partial<StoredEntry> | null;
    if (
      !e ||
      e.format !== FORMAT ||
      e.zh !== zh.text ||
      typeof e.h1 !== 'string' ||
      !H1_TEXT.test(e.h1) ||
      typeof e.h1Zip !== 'string' ||
      !H1_TEXT.test(e.h1Zip) ||
      !Array.isArray(e.warnings) ||
      typeof e.entryCount !== 'number' ||
      typeof e.uncompressedBytes !== 'number'
    ) {
      return undefined;
    }
    const warnings = e.warnings.filter(
      (w): w is HashWarning =>
        typeof w === 'object' &&
        w !== null &&
        (w.code === 'H1_FORMS_DIFFER' || w.code === 'ZIP_SYMLINK_ENTRY') &&
        typeof w.message === 'string' &&
        Array.isArray(w.entries),
    );
    const hashes: ZipPackageHashes = {
      path,
      zh,
      h1: { ok: true, hash: parseHash(e.h1) },
      h1Zip: { ok: true, hash: parseHash(e.h1Zip) },
      warnings,
      entryCount: e.entryCount,
      uncompressedBytes: e.uncompressedBytes,
    };
    const dispositions = Array.isArray(e.dispositions)
      ? e.dispositions.flatMap((d) => storedDispositionFrom(d) ?? [])
      : [];
    return typeof e.platform === 'string' && PLATFORM_TEXT.test(e.platform)
      ? { hashes, platform: e.platform, dispositions }
      : { hashes, dispositions };
  };
  return {
    lookup,
    async get(zh) {
      return (await lookup(zh))?.hashes;
    },
    async put(result, platform, dispositions = []) {
      if (!result.h1.ok || !result.h1Zip.ok || !ZH_HEX.test(result.zh.value)) return;
      // Re-read and merge: the dispositions another run recorded stay (the newest first when there are too many).
      const earlier = (await lookup(result.zh))?.dispositions ?? [];
      const at = now().toISOString();
      const merged = mergeStored([...dispositions.map((d) => ({ ...d, at })), ...earlier]);
      const entry: StoredEntry = {
        format: FORMAT,
        zh: result.zh.text,
        h1: result.h1.hash.text,
        h1Zip: result.h1Zip.hash.text,
        warnings: result.warnings.map((w) => ({ code: w.code, message: w.message, entries: [...w.entries] })),
        entryCount: result.entryCount,
        uncompressedBytes: result.uncompressedBytes,
        ...(platform !== undefined && PLATFORM_TEXT.test(platform) ? { platform } : {}),
        ...(merged.length > 0 ? { dispositions: merged } : {}),
      };
      const path = pathOf(result.zh.value);
      try {
        const shard = join(dir, result.zh.value.slice(0, 2));
        let ready = made.get(shard);
        if (!ready) made.set(shard, (ready = makeCacheDirectory(shard, dir)));
        await ready;
        await writeFileAtomic(path, Buffer.from(`${JSON.stringify(entry, null, 2)}\n`));
      } catch {
        // A store that cannot be written (read-only cache, full disk) only costs speed.
      }
    },
  };
}

/**
 * Stored dispositions without repeats (the same kind, key and place: the
 * first, i.e. newest, stamp wins), strongest kind first, at most
 * {@link MAX_DISPOSITIONS}.
 */
function mergeStored(ds: readonly StoredDisposition[]): StoredDisposition[] {
  const newest = [...ds].sort((a, b) => Date.parse(b.at) - Date.parse(a.at));
  const kept = sortDispositions(newest) as StoredDisposition[];
  return kept.slice(0, MAX_DISPOSITIONS);
}
