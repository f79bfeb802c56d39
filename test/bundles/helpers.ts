// Helpers for bundle tests: a bundle made from the bundled filesystem mirror,
// hand-made (hostile) tars, and a byte-exact snapshot of a directory tree.
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pipeline } from 'node:stream/promises';

import tar from 'tar-stream';

import { parsePlatform, parseProviderSource, parseConstraints } from '../../src/addresses/index.js';
import type { HashPool } from '../../src/hashing/index.js';
import { type BundleCreateOptions, createBundle } from '../../src/bundles/create.js';
import { Locks } from '../../src/lockfile/index.js';
import { FilesystemMirrorSource } from '../../src/sources/index.js';

export const MIRROR = fileURLToPath(new URL('../../mirror-fixtures/', import.meta.url));

/** The options of a bundle of demo ~> 1.0 and tools >= 0.3 (plus `extra` providers) from mirror-fixtures/. */
export function demoBundleOptions(
  pool: HashPool,
  options: {
    platforms?: string[];
    epoch?: number;
    since?: Parameters<typeof createBundle>[0]['since'];
    locks?: Locks;
    extra?: string[];
  } = {},
): Omit<BundleCreateOptions, 'out' | 'outPath'> {
  const requirements = [
    {
      provider: parseProviderSource('registry.example.test/acme/demo', 'tofu'),
      constraints: parseConstraints('~> 1.0'),
    },
    {
      provider: parseProviderSource('registry.example.test/acme/tools', 'tofu'),
      constraints: parseConstraints('>= 0.3'),
    },
    ...(options.extra ?? []).map((source) => ({
      provider: parseProviderSource(source, 'tofu'),
      constraints: parseConstraints('>= 0'),
    })),
  ];
  return {
    requirements,
    locks: options.locks ?? new Locks(),
    platforms: (options.platforms ?? ['linux_amd64', 'darwin_arm64']).map(parsePlatform),
    source: new FilesystemMirrorSource({ baseDir: MIRROR, flavor: 'tofu' }),
    pool,
    flavor: 'tofu',
    provkitVersion: '0.0.0-test',
    createdEpoch: options.epoch ?? 0,
    ...(options.since ? { since: options.since } : {}),
  };
}

/** Creates a bundle of demo ~> 1.0 and tools >= 0.3 from mirror-fixtures/ at `out`. */
export async function makeBundle(
  out: string,
  pool: HashPool,
  options: Parameters<typeof demoBundleOptions>[1] = {},
): Promise<Awaited<ReturnType<typeof createBundle>>> {
  const stream = createWriteStream(out);
  const outcome = await createBundle({ ...demoBundleOptions(pool, options), out: stream });
  if (outcome.failures.length > 0) {
    stream.destroy();
    throw outcome.failures[0]!.error;
  }
  return outcome;
}

export interface RawEntry {
  name: string;
  data?: Buffer | string;
  type?: 'file' | 'symlink' | 'link' | 'directory' | undefined;
  linkname?: string;
  /** Header size to claim (defaults to the data length). */
  size?: number;
}

/** Reads every member of a tar (name, type, data). */
export async function readTar(path: string): Promise<RawEntry[]> {
  const { createReadStream } = await import('node:fs');
  const extract = tar.extract();
  createReadStream(path).pipe(extract);
  const out: RawEntry[] = [];
  for await (const e of extract) {
    const chunks: Buffer[] = [];
    for await (const c of e) chunks.push(c as Buffer);
    out.push({ name: e.header.name, data: Buffer.concat(chunks), type: e.header.type as RawEntry['type'] });
  }
  return out;
}

/** Writes the entries as a tar, as given (nothing checked). */
export async function writeTar(path: string, entries: readonly RawEntry[]): Promise<void> {
  const pack = tar.pack();
  const done = pipeline(pack, createWriteStream(path));
  for (const e of entries) {
    const type = e.type ?? 'file';
    if (type === 'file') {
      const data = Buffer.from(e.data ?? '');
      await new Promise<void>((res, rej) =>
        pack.entry({ name: e.name, size: data.length, mtime: new Date(0) }, data, (err) => (err ? rej(err) : res())),
      );
    } else {
      await new Promise<void>((res, rej) =>
        pack.entry({ name: e.name, type, linkname: e.linkname ?? '', mtime: new Date(0) }, (err) =>
          err ? rej(err) : res(),
        ),
      );
    }
  }
  pack.finalize();
  await done;
}

export const sha256 = (b: Buffer | string): string => createHash('sha256').update(b).digest('hex');

/** Every entry under `dir` with its kind, mode and content hash (or link target). */
export async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (d: string, rel: string): Promise<void> => {
    let names: string[];
    try {
      names = (await readdir(d)).sort();
    } catch {
      return;
    }
    for (const n of names) {
      const abs = join(d, n);
      const r = rel ? `${rel}/${n}` : n;
      const st = await lstat(abs);
      if (st.isSymbolicLink()) out[r] = `link ${await readlink(abs)}`;
      else if (st.isDirectory()) {
        out[r] = `dir ${(st.mode & 0o777).toString(8)}`;
        await walk(abs, r);
      } else out[r] = `file ${(st.mode & 0o777).toString(8)} ${sha256(await readFile(abs))}`;
    }
  };
  await walk(dir, '');
  return out;
}
