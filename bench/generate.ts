/**
 * Generates the hashing benchmark's packages: five heavy provider zips of
 * ~99 MB each (~430 MB unpacked), reproducibly from a seed, into the
 * git-ignored bench/.work/packages/.
 *
 *   tsx bench/generate.ts [--seed N] [--out DIR] [--force]
 *
 * Each zip holds CHANGELOG.md, LICENSE, README.md and one 430 MB "binary",
 * goreleaser style (deflate level 6 with data descriptors, no directory entries).
 *
 * The binary is made to deflate like a Go binary, only somewhat more (4.3:1 at
 * level 6; /usr/local/bin/terraform, a Go binary, gives 3.3:1 and inflates at
 * about the same speed, ~300-400 MB/s in one core): a stream of tokens drawn from
 * an evolving vocabulary (256 random tokens of 8-63 bytes; after each use a token
 * is replaced by a fresh one with probability 3%), interleaved with runs of
 * 4-32 random bytes (17% of steps). Repeats fall inside deflate's 32 KiB window,
 * so the compressor finds matches of realistic lengths, and the random runs keep
 * literals frequent. The content is a pure function of the seed; the zip bytes
 * also depend on the zlib Node was built with (recorded in the manifest).
 *
 * Speed: per MB, deflate at level 6 costs ~11 ms of CPU and making the data
 * ~5 ms (2-core Xeon, Node 20). Packages are written by child processes, one
 * per core, so generating runs in parallel as well as deflating: in a single
 * process all generation is confined to the main thread, and every zlib
 * callback waits behind it. All five packages took 22.6 s wall, 35 s CPU.
 *
 * A manifest (manifest.json) is written last; when it matches the requested
 * seed and sizes and the zips it lists are present with their sizes,
 * generation is skipped.
 */
import { spawn } from 'node:child_process';
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

import type { ZipEntrySpec } from '../test/support/zip-writer.js';
import { writeZip } from '../test/support/zip-writer.js';

/** Bump when the data model or the package shape changes: forces regeneration. */
const FORMAT = 1;
export const DEFAULT_SEED = 20240102;
export const DEFAULT_OUT = fileURLToPath(new URL('./.work/packages/', import.meta.url));
const BINARY_BYTES = 430_000_000;
const PLATFORMS = ['linux_amd64', 'linux_arm64', 'darwin_amd64', 'darwin_arm64', 'windows_amd64'];
const VERSION = '1.0.0';
const CHUNK = 1 << 20;
const SCRIPT = fileURLToPath(import.meta.url);

export interface BenchPackage {
  /** File name inside the output directory. */
  file: string;
  zipBytes: number;
  /** Sum of all entries' uncompressed sizes. */
  uncompressedBytes: number;
}

export interface BenchManifest {
  format: number;
  seed: number;
  binaryBytes: number;
  zlib: string;
  packages: BenchPackage[];
}

export interface GenerateOptions {
  seed?: number;
  out?: string | undefined;
  /** Regenerate even if the manifest matches. */
  force?: boolean | undefined;
  /** Size of each binary entry (tests use small ones). */
  binaryBytes?: number;
  log?: (line: string) => void;
}

/** Makes sure the packages exist (generating them if needed); returns the manifest and absolute paths. */
export async function ensureBenchPackages(
  opts: GenerateOptions = {},
): Promise<{ manifest: BenchManifest; paths: string[] }> {
  const seed = opts.seed ?? DEFAULT_SEED;
  const out = opts.out ?? DEFAULT_OUT;
  const binaryBytes = opts.binaryBytes ?? BINARY_BYTES;
  const log = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const manifestPath = join(out, 'manifest.json');

  if (!opts.force) {
    const existing = await readManifest(manifestPath);
    if (
      existing &&
      existing.format === FORMAT &&
      existing.seed === seed &&
      existing.binaryBytes === binaryBytes &&
      (await allPresent(out, existing))
    ) {
      log(`bench packages: up to date in ${out} (seed ${seed})`);
      return { manifest: existing, paths: existing.packages.map((p) => join(out, p.file)) };
    }
  }

  await mkdir(out, { recursive: true });
  const started = performance.now();
  const jobs = PLATFORMS.map((_, index) => ({ index }));
  const packages: BenchPackage[] = new Array<BenchPackage>(jobs.length);
  const workers = Math.min(jobs.length, availableParallelism());
  log(
    `bench packages: generating ${jobs.length} × ${(binaryBytes / 1e6).toFixed(0)} MB into ${out} (seed ${seed}, ${workers} at a time)`,
  );
  let cursor = 0;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      for (let job = jobs[cursor++]; job; job = jobs[cursor++]) {
        const t0 = performance.now();
        const pkg = await writePackageInChild(out, job.index, seed, binaryBytes);
        packages[job.index] = pkg;
        const s = (performance.now() - t0) / 1000;
        log(
          `  ${pkg.file}: ${(pkg.zipBytes / 1e6).toFixed(1)} MB zip, ${(pkg.uncompressedBytes / 1e6).toFixed(1)} MB unpacked, ` +
            `ratio ${(pkg.uncompressedBytes / pkg.zipBytes).toFixed(2)}, ${s.toFixed(1)} s`,
        );
      }
    }),
  );
  const manifest: BenchManifest = {
    format: FORMAT,
    seed,
    binaryBytes,
    zlib: process.versions.zlib ?? 'unknown',
    packages,
  };
  await writeFile(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
  log(`bench packages: done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return { manifest, paths: packages.map((p) => join(out, p.file)) };
}

async function readManifest(path: string): Promise<BenchManifest | undefined> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as BenchManifest;
  } catch {
    return undefined;
  }
}

async function allPresent(out: string, manifest: BenchManifest): Promise<boolean> {
  for (const p of manifest.packages) {
    const st = await stat(join(out, p.file)).catch(() => undefined);
    if (st?.size !== p.zipBytes) return false;
  }
  return manifest.packages.length === PLATFORMS.length;
}

/**
 * Runs this script in a child process to write package `index` (see the file
 * comment for why). The child inherits process.execArgv, i.e. the TypeScript
 * loader this process runs under (tsx), and prints the BenchPackage as JSON.
 */
function writePackageInChild(out: string, index: number, seed: number, binaryBytes: number): Promise<BenchPackage> {
  const args = [
    ...process.execArgv,
    SCRIPT,
    '--package',
    `${index}`,
    '--seed',
    `${seed}`,
    '--binary-bytes',
    `${binaryBytes}`,
    '--out',
    out,
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(JSON.parse(stdout) as BenchPackage);
      else reject(new Error(`bench/generate.ts --package ${index} exited with ${code}`));
    });
  });
}

/** Writes package `index` to a temporary name, then renames it into place (an interrupted run leaves no half zip). */
async function writePackage(out: string, index: number, baseSeed: number, binaryBytes: number): Promise<BenchPackage> {
  const platform = PLATFORMS[index];
  if (platform === undefined) throw new Error(`no bench package ${index}`);
  const seed = packageSeed(baseSeed, index);
  const file = `terraform-provider-heavy_${VERSION}_${platform}.zip`;
  const exe = `terraform-provider-heavy_v${VERSION}${platform.startsWith('windows_') ? '.exe' : ''}`;
  const next = xorshift128(seed);
  const texts = {
    changelog: prose(next, 24_000, '## '),
    license: prose(next, 16_000, ''),
    readme: prose(next, 3_000, '# '),
  };
  const entries: ZipEntrySpec[] = [
    { name: 'CHANGELOG.md', data: texts.changelog, dataDescriptor: true },
    { name: 'LICENSE', data: texts.license, dataDescriptor: true },
    { name: 'README.md', data: texts.readme, dataDescriptor: true },
    { name: exe, data: () => binaryChunks(next, binaryBytes), unixMode: 0o100755, dataDescriptor: true },
  ];
  const tmp = join(out, `${file}.tmp`);
  const layout = await writeZip(tmp, entries);
  await rename(tmp, join(out, file));
  return {
    file,
    zipBytes: layout.size,
    uncompressedBytes: layout.entries.reduce((sum, e) => sum + e.uncompressedSize, 0),
  };
}

/**
 * The binary's bytes, in fresh 1 MiB chunks (the zip writer may still be
 * deflating a chunk when the next one is made). See the file comment for the
 * data model; the constants below set the 4.3:1 ratio.
 */
function* binaryChunks(next: () => number, total: number): Generator<Buffer> {
  const VOCABULARY = 256;
  const RANDOM_RUN = Math.floor(0.17 * 0x10000); // P(random run) per step, of 2^16
  const REPLACE = Math.floor(0.03 * 0x10000); // P(token replaced after use), of 2^16
  const token = (): Buffer => {
    const t = Buffer.allocUnsafe(8 + (next() % 56));
    for (let i = 0; i < t.length; i++) t[i] = next() & 0xff;
    return t;
  };
  const vocabulary = Array.from({ length: VOCABULARY }, token);

  // Steps write at most 64 bytes, so a chunk is full once `pos` passes CHUNK;
  // the overflow moves to the next chunk's buffer.
  let buf = Buffer.allocUnsafe(CHUNK + 64);
  let pos = 0;
  for (let emitted = 0; emitted < total;) {
    while (pos < CHUNK) {
      const x = next();
      if ((x & 0xffff) < RANDOM_RUN) {
        for (let n = 1 + ((x >>> 16) & 7); n > 0; n--) {
          const y = next();
          buf[pos++] = y & 0xff;
          buf[pos++] = (y >>> 8) & 0xff;
          buf[pos++] = (y >>> 16) & 0xff;
          buf[pos++] = y >>> 24;
        }
      } else {
        const k = (x >>> 16) % VOCABULARY;
        const t = vocabulary[k] ?? token();
        buf.set(t, pos);
        pos += t.length;
        if ((next() & 0xffff) < REPLACE) vocabulary[k] = token();
      }
    }
    const n = Math.min(CHUNK, total - emitted);
    const fresh = Buffer.allocUnsafe(CHUNK + 64);
    buf.copy(fresh, 0, CHUNK, pos);
    pos -= CHUNK;
    yield buf.subarray(0, n);
    emitted += n;
    buf = fresh;
  }
}

/** Markdown-ish filler text of about `bytes` bytes. */
function prose(next: () => number, bytes: number, heading: string): string {
  const words = [
    'provider',
    'resource',
    'data',
    'source',
    'attribute',
    'the',
    'a',
    'of',
    'to',
    'and',
    'is',
    'in',
    'for',
    'with',
    'version',
    'fixed',
    'added',
    'block',
    'schema',
    'state',
  ];
  const lines: string[] = [];
  let size = 0;
  while (size < bytes) {
    const line =
      next() % 8 === 0
        ? `${heading}${words[next() % words.length] ?? ''} ${next() % 100}`
        : Array.from({ length: 6 + (next() % 10) }, () => words[next() % words.length] ?? '').join(' ') + '.';
    lines.push(line);
    size += line.length + 1;
  }
  return `${lines.join('\n')}\n`;
}

/** Per-package seed: the base seed mixed with the package index (splitmix32 finaliser). */
function packageSeed(seed: number, index: number): number {
  let z = (seed + Math.imul(index + 1, 0x9e3779b9)) >>> 0;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
  return (z ^ (z >>> 16)) >>> 0;
}

/** xorshift128 (Marsaglia): fast 32-bit PRNG, state seeded from a 32-bit seed. */
function xorshift128(seed: number): () => number {
  let a = seed >>> 0 || 1;
  let b = 0x9e3779b9;
  let c = 0x85ebca6b;
  let d = 0xc2b2ae35;
  return () => {
    const t = a ^ (a << 11);
    a = b;
    b = c;
    c = d;
    d = (d ^ (d >>> 19) ^ (t ^ (t >>> 8))) >>> 0;
    return d;
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({
    options: {
      seed: { type: 'string' },
      out: { type: 'string' },
      force: { type: 'boolean', default: false },
      // internal, for writePackageInChild
      package: { type: 'string' },
      'binary-bytes': { type: 'string' },
    },
  });
  const seed = values.seed === undefined ? DEFAULT_SEED : Number(values.seed);
  if (values.package !== undefined) {
    const pkg = await writePackage(
      values.out ?? DEFAULT_OUT,
      Number(values.package),
      seed,
      Number(values['binary-bytes']),
    );
    process.stdout.write(`${JSON.stringify(pkg)}\n`);
  } else {
    const { paths } = await ensureBenchPackages({ seed, out: values.out, force: values.force });
    process.stdout.write(`${paths.join('\n')}\n`);
  }
}
