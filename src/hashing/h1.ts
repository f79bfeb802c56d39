/**
 * Go's dirhash `Hash1` (golang.org/x/mod/sumdb/dirhash), the algorithm behind
 * `h1:`. Written once, over names as bytes; the zip and directory adapters
 * only supply names and contents.
 *
 * The summary is, for each name in sorted order,
 *
 *     hex(sha256(content)) + "  " + name + "\n"
 *
 * and the hash is `"h1:" + base64std(sha256(summary))`. Equivalent shell:
 * `sha256sum $(find . -type f | sort) | sha256sum`.
 *
 * Why bytes: Go sorts strings by their bytes and zip names are raw bytes (no
 * CP437 decoding, the UTF-8 flag ignored; docs/reference.md §2.3 item 24). A JavaScript
 * string sort orders U+FF5E and U+1F600 differently (docs/reference.md §2.4 vector V4), so names are
 * Buffers and are sorted with `Buffer.compare`.
 */
import { createHash } from 'node:crypto';

import { ErrorCode, ProvkitError } from '../errors.js';
import { type Hash, makeHash, H1 } from './hash.js';

/** h1 of an empty file list (`emptyPackageHashV1` in the reference). */
export const EMPTY_H1 = 'h1:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=';

/** One file of a package: its name (raw bytes, `/`-separated) and the SHA-256 of its content. */
export interface NamedDigest {
  readonly name: Uint8Array;
  readonly sha256: Uint8Array;
}

const NL = 0x0a;

/** Renders a raw name for messages: UTF-8 where valid, `\xNN` escapes otherwise. */
export function displayName(name: Uint8Array): string {
  const buf = Buffer.from(name.buffer, name.byteOffset, name.byteLength);
  const text = buf.toString('utf8');
  if (Buffer.from(text, 'utf8').equals(buf)) return text.replace(/\n/g, '\\n');
  let out = '';
  for (const byte of buf) {
    out += byte >= 0x20 && byte < 0x7f ? String.fromCharCode(byte) : `\\x${byte.toString(16).padStart(2, '0')}`;
  }
  return out;
}

/**
 * Hash1 over names whose content digests are already known.
 *
 * The list is copied before sorting (Go's defensive copy) and may contain the
 * same name more than once: Go's `HashZip` lists duplicate zip entries twice
 * and so does this. A name containing a newline is refused, as Go refuses it.
 *
 * @throws ProvkitError HASH_NEWLINE_IN_NAME
 */
export function hash1FromDigests(files: readonly NamedDigest[]): Hash {
  const sorted = [...files].sort((a, b) => Buffer.compare(a.name, b.name));
  const summary = createHash('sha256');
  for (const f of sorted) {
    if (f.name.includes(NL)) {
      throw new ProvkitError(ErrorCode.HASH_NEWLINE_IN_NAME, 'dirhash: filenames with newlines are not supported', {
        entry: displayName(f.name),
      });
    }
    summary.update(Buffer.from(f.sha256.buffer, f.sha256.byteOffset, f.sha256.byteLength).toString('hex'));
    summary.update('  ');
    summary.update(f.name);
    summary.update('\n');
  }
  return makeHash(H1, summary.digest('base64'));
}

/** What {@link hash1} reads a file's content from. */
export type Content = Uint8Array | AsyncIterable<Uint8Array>;

/**
 * Go's `Hash1(files, open)`: names in any order; `open(name)` supplies the
 * content. Names are checked for newlines before any content is opened, in
 * sorted order as Go does, so the first error is the one Go would report.
 */
export async function hash1(
  names: readonly Uint8Array[],
  open: (name: Uint8Array) => Promise<Content> | Content,
): Promise<Hash> {
  const sorted = [...names].sort((a, b) => Buffer.compare(a, b));
  const digests: NamedDigest[] = [];
  for (const name of sorted) {
    if (name.includes(NL)) {
      throw new ProvkitError(ErrorCode.HASH_NEWLINE_IN_NAME, 'dirhash: filenames with newlines are not supported', {
        entry: displayName(name),
      });
    }
    // Serial on purpose: Go's Hash1 reads one file at a time, so the first
    // failing file (in sorted order) is the error reported.
    // eslint-disable-next-line no-await-in-loop
    const content = await open(name);
    const h = createHash('sha256');
    if (content instanceof Uint8Array) h.update(content);
    // eslint-disable-next-line no-await-in-loop
    else for await (const chunk of content) h.update(chunk);
    digests.push({ name, sha256: h.digest() });
  }
  return hash1FromDigests(digests);
}
