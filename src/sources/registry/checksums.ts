/**
 * Reading a registry's SHA256SUMS document (docs/reference.md §4.1 item 56, steps 2 and 4;
 * §10 item 139). Pure.
 *
 * Two readers, as in the reference, with slightly different line rules:
 * - {@link findChecksum} (`matchingChecksumAuthentication`): split on `\n`,
 *   fields split on any whitespace, the **first** line whose second field is
 *   exactly the file name (a `*name` binary-mode marker does not match);
 * - {@link acceptableHashes} (`signatureAuthentication.AcceptableHashes`):
 *   every line becomes a `zh:` (upper-case hex lowered), not only zips; one
 *   malformed line (a single field, or a first field that is not 64 hex
 *   digits) means "not a checksum list" and yields no hashes at all.
 *   Deviation: a line with no fields (a blank line, e.g. a trailing `\n\n`)
 *   makes the reference crash (`index out of range`, terraform 1.11.4 exit
 *   11); its code guards such lines out of the malformed-line rule, so the
 *   evident intent is to skip them, which is what happens here, with a note.
 */
import { makeHash, type Hash } from '../../hashing/index.js';

/** Go `unicode.IsSpace` for `bytes.Fields`: ASCII space, \t\n\v\f\r, U+0085, U+00A0 and the Unicode spaces. */
const GO_SPACE = /[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/u;

/** Go `bytes.Fields`: split on runs of white space, no empty fields. */
export function goFields(line: string): string[] {
  return line.split(GO_SPACE).filter((f) => f !== '');
}

/** `bufio.ScanLines`: split on `\n`, drop one `\r` before it, no empty final token. */
function scanLines(doc: string): string[] {
  const lines = doc.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
}

const HEX64 = /^[0-9a-fA-F]{64}$/;

/** The outcome of {@link findChecksum}. */
export type ChecksumLine =
  { readonly ok: true; readonly sha256: string } | { readonly ok: false; readonly error: string };

/**
 * The SHA-256 the document lists for `filename`, lower-cased, checked against
 * `expected` (lower-case hex). The error texts are the reference's.
 */
export function findChecksum(doc: string, filename: string, expected: string): ChecksumLine {
  let checksum: string | undefined;
  for (const line of doc.split('\n')) {
    const parts = goFields(line);
    if (parts.length > 1 && parts[1] === filename) {
      checksum = parts[0];
      break;
    }
  }
  if (checksum === undefined)
    return { ok: false, error: `checksum list has no SHA-256 hash for ${JSON.stringify(filename)}` };
  if (!HEX64.test(checksum)) {
    const why =
      checksum.length % 2 === 1 ? 'encoding/hex: odd length hex string' : 'encoding/hex: invalid byte or length';
    return { ok: false, error: `checksum list has invalid SHA256 hash ${JSON.stringify(checksum)}: ${why}` };
  }
  const got = checksum.toLowerCase();
  if (got !== expected)
    return { ok: false, error: `checksum list has unexpected SHA-256 hash ${got} (expected ${expected})` };
  return { ok: true, sha256: got };
}

/** The outcome of {@link acceptableHashes}. */
export interface AcceptableHashes {
  /** One `zh:` per line, in document order; empty when the document is not a checksum list. */
  readonly hashes: readonly Hash[];
  /** The file each line of {@link hashes} names (its second field), in the same order. */
  readonly files: readonly string[];
  /** Set when a line made the document "not a checksum list" (the reference then records no line hashes). */
  readonly malformed?: string;
  /** 1-based numbers of blank lines that were skipped (the reference crashes on them). */
  readonly blankLines: readonly number[];
}

/** Every line of the document as a `zh:` hash; see the module comment. */
export function acceptableHashes(doc: string): AcceptableHashes {
  const hashes: Hash[] = [];
  const files: string[] = [];
  const blankLines: number[] = [];
  const lines = scanLines(doc);
  for (const [i, line] of lines.entries()) {
    const parts = goFields(line);
    if (parts.length === 0) {
      blankLines.push(i + 1);
      continue;
    }
    const first = parts[0] ?? '';
    if (parts.length < 2) return { hashes: [], files: [], malformed: `line ${i + 1} has only one field`, blankLines };
    if (!HEX64.test(first))
      return { hashes: [], files: [], malformed: `line ${i + 1} does not start with a SHA-256 hash`, blankLines };
    hashes.push(makeHash('zh:', first.toLowerCase()));
    files.push(parts[1] ?? '');
  }
  return { hashes, files, blankLines };
}
