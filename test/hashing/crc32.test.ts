// CRC-32 (src/hashing/crc32.ts): the fast implementation for large chunks
// (@node-rs/crc32), Node's zlib.crc32 and the table fallback give the same
// values, whatever the chunking; a run that sees only small chunks never
// loads the fast one.
import { randomBytes } from 'node:crypto';
import * as zlib from 'node:zlib';

import { describe, expect, it } from 'vitest';

import { crc32, crc32Implementation, FAST_FROM } from '../../src/hashing/crc32.js';
import { runNodeOk } from '../support/e2e.js';

// The built module (npm test builds first), as test/hashing/memory.test.ts loads it.
const MODULE = new URL('../../dist/hashing/crc32.js', import.meta.url).href;

/** The CRC of `data` fed in pieces of `size` bytes. */
function inPieces(data: Buffer, size: number): number {
  let crc = 0;
  for (let at = 0; at < data.length; at += size) crc = crc32(data.subarray(at, at + size), crc);
  return crc;
}

/** Runs `body` (ES module code with `m` = the crc32 module) in a fresh Node with `env`; returns its stdout. */
async function inChild(body: string, env: Record<string, string> = {}): Promise<string> {
  const script = `const m = await import(${JSON.stringify(MODULE)});\n${body}`;
  const { stdout } = await runNodeOk(['--input-type=module', '-e', script], { env: { ...process.env, ...env } });
  return stdout.trim();
}

describe('CRC-32 (hashing/crc32.ts)', () => {
  it('uses @node-rs/crc32 for large chunks where it is installed, as it is here', () => {
    expect(crc32Implementation()).toBe('node-rs');
  });

  it('gives zlib’s values for every chunking, across the small/large boundary', () => {
    const data = randomBytes(3 * FAST_FROM + 12_345);
    const expected = zlib.crc32(data);
    for (const size of [1, 7, 4096, FAST_FROM - 1, FAST_FROM, FAST_FROM + 1, 200_000, data.length]) {
      expect(inPieces(data, size), `pieces of ${size}`).toBe(expected);
    }
    // Continuing from a value, large chunk and small chunk.
    const big = data.subarray(0, FAST_FROM * 2);
    expect(crc32(big, 0xdeadbeef)).toBe(zlib.crc32(big, 0xdeadbeef));
    expect(crc32(data.subarray(0, 10), 0xdeadbeef)).toBe(zlib.crc32(data.subarray(0, 10), 0xdeadbeef));
    expect(crc32(new Uint8Array(0), 42)).toBe(42);
  });

  it('a run with only small chunks never loads the fast implementation', async () => {
    const out = await inChild(`
      const { createRequire } = await import('node:module');
      let v = 0; for (let i = 0; i < 100; i++) v = m.crc32(new Uint8Array(1000).fill(i), v);
      const loaded = Object.keys(createRequire(import.meta.url).cache).some((k) => k.includes('@node-rs'));
      console.log(JSON.stringify({ v, loaded }));`);
    const { v, loaded } = JSON.parse(out) as { v: number; loaded: boolean };
    let expected = 0;
    for (let i = 0; i < 100; i++) expected = zlib.crc32(new Uint8Array(1000).fill(i), expected);
    expect(v).toBe(expected);
    expect(loaded).toBe(false);
  });

  it('PROVKIT_CRC32=zlib keeps zlib for large chunks too, with the same values', async () => {
    const out = await inChild(
      `const d = new Uint8Array(${FAST_FROM * 3}).map((_, i) => i * 7); console.log(m.crc32Implementation() + ' ' + m.crc32(d, 0));`,
      { PROVKIT_CRC32: 'zlib' },
    );
    const d = new Uint8Array(FAST_FROM * 3).map((_, i) => i * 7);
    expect(out).toBe(`zlib ${zlib.crc32(d, 0)}`);
  });
});
