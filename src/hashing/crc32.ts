/**
 * CRC-32 (IEEE) as zip uses it. Node ≥ 20.15 has a native `zlib.crc32`
 * (SIMD-accelerated); older Node 20 releases get a table-driven fallback with
 * the same results.
 */
import * as zlib from 'node:zlib';

type Crc32 = (data: Uint8Array, value: number) => number;

const native = (zlib as unknown as { crc32?: Crc32 }).crc32;

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

/** Continues a CRC-32 over `data` from `value` (0 to start). */
export const crc32: Crc32 = native ?? fallback;
