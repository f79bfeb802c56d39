/**
 * CRC-32 (IEEE) as zip uses it, three ways that give the same values
 * (test/hashing/crc32.test.ts):
 *
 * - Chunks of {@link FAST_FROM} bytes or more (a hash worker's inflated
 *   output, a stored entry's blocks) go to `@node-rs/crc32` (carry-less
 *   multiplication: ~13 GB/s on the benchmark machine against ~5.5 GB/s for
 *   Node's `zlib.crc32`, whose bundled zlib uses the table code there;
 *   bench/PROFILE.md "Stop 23"). Loading it costs a few milliseconds
 *   (dlopen), so it is loaded at the first large chunk, once per thread: a
 *   run that only hashes small archives (a tiny lock) never loads it.
 * - Smaller chunks, or where that package cannot load (a platform without a
 *   prebuilt binary; PROVKIT_CRC32=zlib), use Node's `zlib.crc32`
 *   (Node ≥ 20.15).
 * - Older Node 20 releases get a table-driven fallback.
 */
import { createRequire } from 'node:module';

type Crc32 = (data: Uint8Array, value: number) => number;

/** Chunks this large or larger take the fast implementation. */
export const FAST_FROM = 64 * 1024;

const requireHere = createRequire(import.meta.url);

// Node's zlib.crc32 exists from Node 20.15 (and 22.2); a named import would not
// link on an older Node 20, and a namespace import copies every export of
// node:zlib at start-up in the bundle (esbuild's __toESM).
const native = (requireHere('node:zlib') as { crc32?: Crc32 }).crc32;

let table: Uint32Array | undefined;
function fallback(data: Uint8Array, value: number): number {
  if (!table) {
    table = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      table[n] = c >>> 0;
    }
  }
  let crc = ~value >>> 0;
  for (let i = 0; i < data.length; i++) crc = (table[(crc ^ data[i]!) & 0xff]! ^ (crc >>> 8)) >>> 0;
  return ~crc >>> 0;
}

const small: Crc32 = native ?? fallback;

/** `@node-rs/crc32`'s function, or undefined where it does not load (then never tried again). */
function loadFast(): Crc32 | undefined {
  if (process.env['PROVKIT_CRC32'] === 'zlib') return undefined;
  try {
    const { crc32: fast } = requireHere('@node-rs/crc32') as { crc32?: unknown };
    if (typeof fast !== 'function') return undefined;
    const f = fast as (data: Uint8Array, value: number) => unknown;
    // Checked once against the implementation it replaces, on a chunk of its size class.
    const probe = new Uint8Array(FAST_FROM).map((_, i) => (i * 2654435761) >>> 24);
    return f(probe, 0x12345678) === small(probe, 0x12345678) ? (f as Crc32) : undefined;
  } catch {
    return undefined;
  }
}

// undefined: not tried yet; null: tried, not available.
let fast: Crc32 | null | undefined;

/** The fast implementation in this thread, loaded on the first call (one try), or null. */
function fastOnce(): Crc32 | null {
  if (fast === undefined) fast = loadFast() ?? null;
  return fast;
}

/** Continues a CRC-32 over `data` from `value` (0 to start). */
export function crc32(data: Uint8Array, value: number): number {
  const f = data.length >= FAST_FROM ? fastOnce() : null;
  return f ? f(data, value) : small(data, value);
}

/** Which implementation a large chunk uses in this thread (loading it if not yet tried): for tests and the benchmark. */
export function crc32Implementation(): 'node-rs' | 'zlib' | 'table' {
  return fastOnce() ? 'node-rs' : native ? 'zlib' : 'table';
}
