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
 * Layout: `DIR/<first 2 hex digits>/<64 hex digits>.json`, one small JSON
 * document per archive, written atomically (temp file + rename), so several
 * processes may share a store, and a store may be copied between machines
 * (a CI cache). An unreadable or malformed entry is a miss (and is
 * overwritten by the next put). Whoever can write the store can make provkit
 * record hashes of their choosing, as with the plugin cache: keep it where
 * the CLI configuration and the plugin cache are (the user's cache directory).
 */
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { writeFileAtomic } from '../fs/atomic.js';
import { type Hash, parseHash } from './hash.js';
import type { HashWarning, ZipPackageHashes } from './zip-package.js';

/** See the module comment. */
export interface HashStore {
  /** The hashes of the archive whose `zh:` is `zh`, when this store has them. */
  get(zh: Hash): Promise<ZipPackageHashes | undefined>;
  /** Records a locally computed result (ignored unless both forms succeeded). Never throws. */
  put(result: ZipPackageHashes): Promise<void>;
}

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
}

const ZH_HEX = /^[0-9a-f]{64}$/;
const H1_TEXT = /^h1:[A-Za-z0-9+/]{43}=$/;

/** The store in `dir` (created on the first put). */
export function openHashStore(dir: string): HashStore {
  const pathOf = (hex: string): string => join(dir, hex.slice(0, 2), `${hex}.json`);
  return {
    async get(zh) {
      if (zh.scheme !== 'zh:' || !ZH_HEX.test(zh.value)) return undefined;
      const path = pathOf(zh.value);
      let doc: unknown;
      try {
        doc = JSON.parse(await readFile(path, 'utf8'));
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
          typeof w === 'object' && w !== null && (w.code === 'H1_FORMS_DIFFER' || w.code === 'ZIP_SYMLINK_ENTRY') && typeof w.message === 'string' && Array.isArray(w.entries),
      );
      return {
        path,
        zh,
        h1: { ok: true, hash: parseHash(e.h1) },
        h1Zip: { ok: true, hash: parseHash(e.h1Zip) },
        warnings,
        entryCount: e.entryCount,
        uncompressedBytes: e.uncompressedBytes,
      };
    },
    async put(result) {
      if (!result.h1.ok || !result.h1Zip.ok || !ZH_HEX.test(result.zh.value)) return;
      const entry: StoredEntry = {
        format: FORMAT,
        zh: result.zh.text,
        h1: result.h1.hash.text,
        h1Zip: result.h1Zip.hash.text,
        warnings: result.warnings.map((w) => ({ code: w.code, message: w.message, entries: [...w.entries] })),
        entryCount: result.entryCount,
        uncompressedBytes: result.uncompressedBytes,
      };
      const path = pathOf(result.zh.value);
      try {
        await mkdir(join(dir, result.zh.value.slice(0, 2)), { recursive: true });
        await writeFileAtomic(path, Buffer.from(`${JSON.stringify(entry, null, 2)}\n`));
      } catch {
        // A store that cannot be written (read-only cache, full disk) only costs speed.
      }
    },
  };
}
