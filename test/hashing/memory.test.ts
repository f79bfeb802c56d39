// Streaming: hashing a package of 1 GiB uncompressed stays under 200 MB RSS
// (issue #2). Measured in a child process (a fresh heap, its own maxRSS).
// This is a memory bound, not a timing: speed is measured by `npm run bench`.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { runNodeOk } from '../support/e2e.js';
import { writeZip } from '../support/zip-writer.js';

const GiB = 1024 * 1024 * 1024;
let dir: string;
let zip: string;
let stored: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'provkit-mem-'));
  zip = join(dir, 'big.zip');
  // Compressible data (a repeating 64 KiB pattern), written at level 1 so the
  // fixture is quick to make; the hashing still inflates and digests 1 GiB.
  const block = Buffer.alloc(64 * 1024);
  for (let i = 0; i < block.length; i++) block[i] = (i * 31 + (i >> 9)) & 0xff;
  await writeZip(zip, [
    {
      name: 'terraform-provider-big_v1.0.0',
      level: 1,
      data: function* () {
        for (let i = 0; i < GiB / block.length; i++) yield Buffer.from(block);
      },
    },
    { name: 'LICENSE', data: 'MIT\n' },
  ]);
  // A large archive on disk (a stored entry: the file is as large as its content), for the one-read file pass.
  stored = join(dir, 'stored.zip');
  await writeZip(stored, [
    {
      name: 'terraform-provider-stored_v1.0.0',
      method: 0,
      data: function* () {
        for (let i = 0; i < (256 * 1024 * 1024) / block.length; i++) yield Buffer.from(block);
      },
    },
  ]);
}, 120_000);
afterAll(() => rm(dir, { recursive: true, force: true }));

/**
 * Hashes `path` with `fn` (a function of the built module `module` in dist/hashing/) in a child
 * process; returns whether h1: succeeded, the bytes it inflated and the child's peak RSS.
 */
async function hashInChild(
  module: string,
  fn: string,
  path: string,
  env: Record<string, string> = {},
): Promise<{ ok: boolean; bytes: number; rss: number }> {
  const script = `
    const { ${fn} } = await import(${JSON.stringify(new URL(`../../dist/hashing/${module}`, import.meta.url).href)});
    const r = await ${fn}(${JSON.stringify(path)});
    process.stdout.write(JSON.stringify({ ok: r.h1.ok, bytes: r.uncompressedBytes, rss: process.resourceUsage().maxRSS * 1024 }));
  `;
  const { stdout } = await runNodeOk(['--input-type=module', '-e', script], { env: { ...process.env, ...env } });
  return JSON.parse(stdout) as { ok: boolean; bytes: number; rss: number };
}

describe('memory', () => {
  it('hashes 1 GiB uncompressed in under 200 MB RSS', async () => {
    const r = await hashInChild('index.js', 'hashZipPackage', zip);
    expect(r.ok).toBe(true);
    expect(r.bytes).toBeGreaterThan(GiB);
    expect(r.rss).toBeLessThan(200 * 1024 * 1024);
  }, 120_000);

  // The one read of a local archive (hashing/zip-stream.ts hashZipFileOnce) reuses its blocks; with the
  // stream fallback of the inflater (PROVKIT_INFLATE=stream) the digester hands none back, and the
  // blocks must still not be kept beyond their use.
  it.each([
    ['in-thread inflate', {}],
    ['the stream fallback (PROVKIT_INFLATE=stream)', { PROVKIT_INFLATE: 'stream' }],
  ])(
    'reads a 256 MB archive once in under 200 MB RSS: %s',
    async (_label, env) => {
      const r = await hashInChild('zip-stream.js', 'hashZipFileOnce', stored, env);
      expect(r.ok).toBe(true);
      expect(r.bytes).toBe(256 * 1024 * 1024);
      expect(r.rss).toBeLessThan(200 * 1024 * 1024);
    },
    120_000,
  );
});
