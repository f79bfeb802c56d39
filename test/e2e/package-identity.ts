/**
 * Helpers for the issue 11 #1 tests (a package's hashes recorded for another
 * package whose archive has the same file name): providers whose archives
 * share a file name but not their bytes, the hashes each one must get
 * (computed here, one archive at a time, from the zips the servers serve),
 * and a reader of the hashes a lock file or a mirror's VERSION.json holds.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { hashZipPackage } from '../../src/hashing/index.js';
import type { FakePackage, FakeProvider } from '../support/servers/packages.js';
import { buildZip } from '../support/zip-writer.js';

/** A seeded PRNG (mulberry32): the same seed gives the same sequence, so a failure reproduces. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `n` incompressible bytes from `rand`. */
export function noise(rand: () => number, n: number): Buffer {
  const out = Buffer.alloc(n);
  for (let i = 0; i + 4 <= n; i += 4) out.writeUInt32LE(Math.floor(rand() * 4294967296), i);
  for (let i = n - (n % 4); i < n; i++) out[i] = Math.floor(rand() * 256);
  return out;
}

/**
 * A provider zip named like every other package of this type, version and
 * platform, but whose bytes belong to `owner` (e.g. `127.0.0.1:1234/hashicorp`):
 * the executable names it, and `size` bytes of noise make the download and
 * the hashing take long enough to overlap with others'.
 */
export function ownedZip(
  owner: string,
  type: string,
  version: string,
  platform: string,
  size: number,
  rand: () => number,
): Promise<Buffer> {
  return buildZip([
    {
      name: `terraform-provider-${type}_v${version}`,
      data: `#!/bin/sh\n# ${owner}/${type} ${version} ${platform}\nexit 1\n`,
      unixMode: 0o100755,
    },
    { name: 'payload.bin', data: noise(rand, size), method: 0 },
    { name: 'README.md', data: `${owner}/${type} ${version} for ${platform}\n` },
  ]);
}

export interface OwnedProvider {
  /** What the fake registry serves. */
  readonly fake: FakeProvider;
  /** platform → zip. */
  readonly zips: ReadonlyMap<string, Buffer>;
}

/** A provider whose every package is an {@link ownedZip} of `owner`. */
export async function ownedProvider(
  owner: string,
  namespace: string,
  type: string,
  version: string,
  platforms: readonly string[],
  size: (platform: string) => number,
  rand: () => number,
): Promise<OwnedProvider> {
  const zips = new Map<string, Buffer>();
  const packages: FakePackage[] = [];
  for (const platform of platforms) {
    // Sequential on purpose: the PRNG's order decides the bytes.
    const zip = await ownedZip(owner, type, version, platform, size(platform), rand);
    zips.set(platform, zip);
    packages.push({ platform, zip });
  }
  return { fake: { namespace, type, versions: [{ version, packages }] }, zips };
}

export interface PackageHashes {
  readonly zh: string;
  /** The extracted form (what a lock records). */
  readonly h1: string;
  /** The zip form (what terraform writes into a mirror's VERSION.json). */
  readonly h1Zip: string;
}

/** The hashes of one zip, hashed on its own (no other package in flight). */
export async function hashesOf(zip: Buffer): Promise<PackageHashes> {
  const dir = await mkdtemp(join(tmpdir(), 'provkit-identity-'));
  try {
    const path = join(dir, 'p.zip');
    await writeFile(path, zip);
    const r = await hashZipPackage(path);
    if (!r.h1.ok || !r.h1Zip.ok) throw new Error('test zip does not hash');
    const zh = `zh:${createHash('sha256').update(zip).digest('hex')}`;
    if (r.zh.text !== zh) throw new Error('zh: disagrees with SHA-256');
    return { zh, h1: r.h1.hash.text, h1Zip: r.h1Zip.hash.text };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * What a lock records for a signed registry provider (docs/reference.md §10 item 139): the `h1:` of each locked platform and the
 * `zh:` of every package its signed SHA256SUMS lists; sorted.
 */
export function expectedLockHashes(
  byPlatform: ReadonlyMap<string, PackageHashes>,
  locked: readonly string[],
): string[] {
  const out = new Set<string>();
  for (const p of locked) {
    const h = byPlatform.get(p);
    if (!h) throw new Error(`no package for ${p}`);
    out.add(h.h1);
  }
  for (const h of byPlatform.values()) out.add(h.zh);
  return [...out].sort();
}

/** Provider address → its version and hashes (sorted), read from a lock file's text. */
export function lockHashes(text: string): Map<string, { version: string; hashes: string[] }> {
  const out = new Map<string, { version: string; hashes: string[] }>();
  for (const m of text.matchAll(/^provider "([^"]+)" \{\n([\s\S]*?)^\}/gm)) {
    const body = m[2] ?? '';
    const version = /^\s*version\s*=\s*"([^"]+)"/m.exec(body)?.[1] ?? '';
    const hashes = [...body.matchAll(/"((?:h1|zh):[^"]+)"/g)].map((h) => h[1] ?? '').sort();
    out.set(m[1] ?? '', { version, hashes });
  }
  return out;
}
