/**
 * The network-mirror JSON documents (`index.json`, `VERSION.json`), byte
 * for byte as the reference writes them (Go `json.MarshalIndent`). Pure.
 */
import type { Platform, Version } from '../addresses/index.js';
import { type GoJSON, goMarshalIndent } from '../go/index.js';

/** `HOST/NS/TYPE/index.json`: `{"versions":{"<v>":{}}}`. */
export function mirrorIndexJSON(versions: Iterable<Version>): string {
  const map: Record<string, GoJSON> = {};
  for (const v of versions) map[v.toString()] = {};
  return goMarshalIndent({ versions: map });
}

/** One archive of a version's `VERSION.json` (the network mirror protocol): its platform, file and hashes. */
export interface MirrorArchive {
  readonly platform: Platform;
  /** Sorted by the caller's rules; written as given. */
  readonly hashes: readonly string[];
  /** Relative to the VERSION.json URL (the bare file name when written by `providers mirror`). */
  readonly url: string;
  /**
   * Further fields of the entry (a server's extensions, which clients
   * ignore: Go's `encoding/json` skips fields it does not know); written
   * with the others, keys sorted.
   */
  readonly extra?: Readonly<Record<string, GoJSON>>;
}

/** `HOST/NS/TYPE/VERSION.json`: `{"archives":{"<os_arch>":{"hashes":[…],"url":"…"}}}`. */
export function mirrorVersionJSON(archives: Iterable<MirrorArchive>): string {
  const map: Record<string, GoJSON> = {};
  for (const a of archives) map[a.platform.toString()] = { ...a.extra, hashes: [...a.hashes], url: a.url };
  return goMarshalIndent({ archives: map });
}
