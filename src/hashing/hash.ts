/**
 * Hash values as the lock file and mirror JSON carry them: `scheme:value`.
 *
 * Contract (docs/reference.md §2.1 items 20–21): parsing needs a `:` at index ≥ 1 and
 * validates nothing else; unknown schemes are kept (a lock file written by a
 * newer tool still loads) and match nothing. `h1:` and `zh:` are the schemes
 * this version computes; {@link preferredHashes} keeps exactly those, in input
 * order.
 */
import { ErrorCode, ProvkitError } from '../errors.js';
import { compareBytewise } from '../go/index.js';

/** The schemes provkit computes. Others are carried as opaque strings. */
export type KnownScheme = 'h1:' | 'zh:';

/**
 * A lock-file hash: a scheme and a value (CONTRIBUTING.md house style 6). Made by {@link parseHash}; it prints and
 * serialises as its `text`. A scheme provkit does not compute is kept and matches nothing but itself.
 */
export interface Hash {
  /** Everything up to and including the first `:` (e.g. `h1:`, `zh:`, `test:`). */
  readonly scheme: string;
  /** Everything after the first `:`. */
  readonly value: string;
  /** The full string, `scheme + value`. */
  readonly text: string;
}

/** The `h1:` scheme: Go dirhash `Hash1` of a package's files (docs/reference.md §2). */
export const H1: KnownScheme = 'h1:';
/** The `zh:` scheme: the SHA-256 of a package's zip archive, lower-case hex. */
export const ZH: KnownScheme = 'zh:';

/** Parses a hash string; throws INVALID_HASH with the reference's wording. */
export function parseHash(text: string): Hash {
  const colon = text.indexOf(':');
  if (colon < 1) {
    throw new ProvkitError(ErrorCode.INVALID_HASH, 'hash string must start with a scheme keyword followed by a colon', {
      found: text,
    });
  }
  return asHash({ scheme: text.slice(0, colon + 1), value: text.slice(colon + 1), text });
}

/**
 * What every {@link Hash} provkit makes shares: it prints as its text
 * (`String(h)`, template strings) and serialises as it (`JSON.stringify`),
 * as the reference's `getproviders.Hash` is a string. Non-enumerable, so a
 * hash still compares and spreads as `{ scheme, value, text }`.
 */
const HASH_PROTO: object = Object.freeze(
  Object.create(Object.prototype, {
    toString: {
      value(this: Hash): string {
        return this.text;
      },
    },
    toJSON: {
      value(this: Hash): string {
        return this.text;
      },
    },
  }) as object,
);

/**
 * `h` with {@link HASH_PROTO} (a hash that crossed a worker boundary, or
 * a plain object of the same shape, gets its `toString`/`toJSON` back).
 */
export function asHash(h: Hash): Hash {
  if (Object.getPrototypeOf(h) === HASH_PROTO) return h;
  return Object.assign(Object.create(HASH_PROTO) as Hash, { scheme: h.scheme, value: h.value, text: h.text });
}

/** Builds a hash from a scheme and value without re-parsing. */
export function makeHash(scheme: KnownScheme, value: string): Hash {
  return asHash({ scheme, value, text: scheme + value });
}

/** `zh:` + lowercase hex of a SHA-256 digest (docs/reference.md §2.2, `HashLegacyZipSHAFromSHA`). */
export function zhFromDigest(digest: Uint8Array): Hash {
  return makeHash(ZH, Buffer.from(digest.buffer, digest.byteOffset, digest.byteLength).toString('hex'));
}

export function isKnownScheme(h: Hash): h is Hash & { scheme: KnownScheme } {
  return h.scheme === H1 || h.scheme === ZH;
}

/** `PreferredHashes`: the `h1:` and `zh:` hashes, in input order (a filter, not a ranking). */
export function preferredHashes(hashes: readonly Hash[]): Hash[] {
  return hashes.filter(isKnownScheme);
}

/**
 * Sorted (plain byte order of the full strings) and de-duplicated, as every
 * write path of the reference does (`NewProviderLock`, docs/reference.md §3.2 item 39).
 */
export function normalizeHashes(hashes: Iterable<Hash>): Hash[] {
  const byText = new Map<string, Hash>();
  for (const h of hashes) byText.set(h.text, h);
  return [...byText.values()].sort((a, b) => compareBytewise(a.text, b.text));
}
