// The monorepo benchmark (issue 15): a generated tree of root modules sharing
// 20 providers, 5 platforms declared once in a provkit.hcl at the top,
// served by the in-repo fake registry over HTTPS on loopback (signed
// SHA256SUMS). Measured:
//   provkit lock -recursive, 100 roots, cold (empty hash store)
//   the same with 400 roots (peak memory must not grow with the roots)
//   provkit lock -recursive -check, 100 roots, warm (the store filled)
//   terraform providers lock in a sample of the roots, one after another
//     (as CI runs it per root), extrapolated to all 100
// with the packages each fetched (the registry's request log), wall, CPU and
// peak RSS; the lock files terraform wrote in the sample must be identical to
// provkit's. Writes bench/results-monorepo.md.
//
// Each root requires 5 of the 20 providers (spread so that every provider is
// used) and calls a shared local module that requires 2 more; every package
// is ~1.9 MB (a 4 MB executable that deflates about 2:1).
//
// Usage: npx tsx bench/monorepo.ts [--roots N] [--sample K] [--runs R]
//   (npm run bench runs it after the commands benchmark)
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

import { startFakeRegistry, type FakeRegistry } from '../test/support/servers/registry.js';
import type { FakeProvider } from '../test/support/servers/packages.js';
import { buildZip } from '../test/support/zip-writer.js';
import { findRusageTool, measure, type Measurement } from './run.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const PLATFORMS = ['linux_amd64', 'linux_arm64', 'darwin_amd64', 'darwin_arm64', 'windows_amd64'];
const PROVIDERS = 20;
const PER_ROOT = 5;
const BINARY_BYTES = 4 << 20;

/** A deterministic executable that deflates about 2:1: blocks of random bytes and repeats of earlier blocks. */
function binary(seed: number): Buffer {
  const out = Buffer.alloc(BINARY_BYTES);
  let x = seed >>> 0 || 1;
  const next = (): number => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return x >>> 0;
  };
  for (let off = 0; off < out.length; off += 64) {
    if (off >= 4096 && next() % 2 === 0) {
      const from = off - 64 * (1 + (next() % 60));
      out.copy(out, off, from, from + 64);
    } else {
      for (let i = 0; i < 64 && off + i < out.length; i += 4) out.writeUInt32LE(next(), off + i);
    }
  }
  return out;
}

async function providers(): Promise<FakeProvider[]> {
  const out: FakeProvider[] = [];
  for (let p = 0; p < PROVIDERS; p++) {
    const type = `p${String(p).padStart(2, '0')}`;
    const packages = [];
    for (const [i, platform] of PLATFORMS.entries()) {
      const zip = await buildZip([
        { name: `terraform-provider-${type}_v1.2.0`, data: binary(p * 100 + i + 1), unixMode: 0o100755 },
        { name: 'README.md', data: `${type} 1.2.0 ${platform}\n` },
      ]);
      packages.push({ platform, zip });
    }
    // An older version too, so that selection has something to choose from.
    out.push({
      namespace: 'acme',
      type,
      versions: [
        { version: '1.2.0', packages },
        { version: '1.1.0', packages },
      ],
    });
  }
  return out;
}

/** Writes `roots` root modules under `dir`, a shared local module and provkit.hcl. */
async function writeTree(dir: string, host: string, roots: number): Promise<string[]> {
  const req = (names: number[]): string =>
    `terraform {\n  required_providers {\n${names
      .map(
        (p) =>
          `    p${String(p).padStart(2, '0')} = {\n      source  = "${host}/acme/p${String(p).padStart(2, '0')}"\n      version = "~> 1.1"\n    }\n`,
      )
      .join('')}  }\n}\n`;
  await mkdir(join(dir, 'modules/common'), { recursive: true });
  await writeFile(join(dir, 'modules/common/main.tf'), req([0, 1]));
  await writeFile(join(dir, 'provkit.hcl'), `platforms = [${PLATFORMS.map((p) => JSON.stringify(p)).join(', ')}]\n`);
  const names: string[] = [];
  for (let r = 0; r < roots; r++) {
    const name = `stacks/s${String(r).padStart(3, '0')}`;
    const chosen = [...new Set(Array.from({ length: PER_ROOT }, (_, j) => (r * 7 + j * 4 + (r >> 2)) % PROVIDERS))];
    await mkdir(join(dir, name), { recursive: true });
    await writeFile(
      join(dir, name, 'main.tf'),
      `${req(chosen)}\nmodule "common" {\n  source = "../../modules/common"\n}\n`,
    );
    names.push(name);
  }
  return names;
}

interface Row {
  label: string;
  m: Measurement;
  fetched: number;
  note?: string;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      roots: { type: 'string', default: '100' },
      sample: { type: 'string', default: '5' },
      runs: { type: 'string', default: '1' },
    },
  });
  const roots = Number(values.roots);
  const sample = Number(values.sample);
  const runs = Number(values.runs);
  const tool = findRusageTool();
  const scratch = await mkdtemp(join(tmpdir(), 'provkit-bench-monorepo-'));
  const generated = Date.now();
  const reg: FakeRegistry = await startFakeRegistry({ providers: await providers(), lifetimeMs: 6 * 3600_000 });
  const generateS = (Date.now() - generated) / 1000;
  const rc = join(scratch, 'empty.tfrc');
  await writeFile(rc, '');
  Object.assign(process.env, {
    SSL_CERT_FILE: reg.caPath,
    TF_CLI_CONFIG_FILE: rc,
    CHECKPOINT_DISABLE: '1',
    PROVKIT_CACHE_DIR: join(scratch, 'cache'),
  });
  const haveTerraform = (() => {
    try {
      execFileSync('terraform', ['version'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  })();
  // Archive downloads: GET requests only. terraform (go-getter) sends a HEAD
  // before each GET of an archive; counting those would double its figure.
  const zips = (from: number): number =>
    reg.log.slice(from).filter((q) => q.method === 'GET' && q.pathname.endsWith('.zip')).length;
  const rows: Row[] = [];
  let stores = 0;
  const provkit = (dir: string, ...args: string[]): string[] => [
    process.execPath,
    join(ROOT, 'bin/provkit.js'),
    `-chdir=${dir}`,
    '-flavor=terraform',
    ...args,
  ];
  const best = (ms: Measurement[]): Measurement =>
    [...ms].sort((a, b) => a.wallS - b.wallS)[Math.floor(ms.length / 2)]!;
  const summaries: Record<string, Record<string, unknown>> = {};

  /** Runs lock -recursive on a fresh tree of `n` roots, or with `check` on the tree `check` names; `store`: 'cold' (a new, empty hash store) or a store's path. */
  const lockTree = async (label: string, n: number, opts: { store: string; check?: string }): Promise<string> => {
    const ms: Measurement[] = [];
    let fetched = 0;
    let dir = '';
    for (let i = 0; i < runs; i++) {
      dir = opts.check ?? join(scratch, `tree-${n}-${label.replace(/\W+/g, '-')}-${i}`);
      if (opts.check === undefined) {
        await rm(dir, { recursive: true, force: true });
        await writeTree(dir, reg.host, n);
      }
      process.env['PROVKIT_HASH_STORE'] = opts.store === 'cold' ? join(scratch, `store-${stores++}`) : opts.store;
      const from = reg.log.length;
      const r = await measure(
        provkit(dir, 'lock', '-recursive', '-json', ...(opts.check ? ['-check'] : [])),
        tool,
        scratch,
      );
      if (r.code !== 0) throw new Error(`${label} failed (exit ${r.code}):\n${r.stderr}\n${r.stdout.slice(-2000)}`);
      const summary = r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((m) => m['type'] === 'summary');
      if (summary) summaries[label] = summary;
      ms.push(r.measurement);
      fetched = zips(from);
    }
    const m = best(ms);
    rows.push({ label, m, fetched });
    console.log(
      `${label.padEnd(48)} wall ${m.wallS.toFixed(2)} s  cpu ${(m.cpuS ?? NaN).toFixed(2)} s  rss ${((m.peakRssBytes ?? NaN) / 1e6).toFixed(0)} MB  fetched ${fetched}`,
    );
    return dir;
  };

  let sampleRows: Row[] = [];
  let sameLocks: boolean | undefined;
  let tree100 = '';
  try {
    tree100 = await lockTree(`provkit lock -recursive, ${roots} roots, cold`, roots, { store: 'cold' });
    const filled = process.env['PROVKIT_HASH_STORE']!;
    await lockTree(`provkit lock -recursive, ${roots * 4} roots, cold`, roots * 4, { store: 'cold' });
    await lockTree(`provkit lock -recursive -check, ${roots} roots locked, warm store`, roots, {
      store: filled,
      check: tree100,
    });
    if (haveTerraform) {
      // terraform in the first `sample` roots of a fresh tree, one after another (CI's per-root loop).
      const dir = join(scratch, 'tree-terraform');
      const names = await writeTree(dir, reg.host, roots);
      const picked = names.slice(0, sample);
      let wall = 0;
      let cpu = 0;
      let rss = 0;
      const from = reg.log.length;
      for (const name of picked) {
        const d = join(dir, name);
        const get = await measure(['terraform', `-chdir=${d}`, 'get'], tool, scratch);
        if (get.code !== 0) throw new Error(`terraform get failed in ${name}:\n${get.stderr}`);
        const r = await measure(
          ['terraform', `-chdir=${d}`, 'providers', 'lock', ...PLATFORMS.map((p) => `-platform=${p}`)],
          tool,
          scratch,
        );
        if (r.code !== 0) throw new Error(`terraform providers lock failed in ${name}:\n${r.stderr}`);
        wall += get.measurement.wallS + r.measurement.wallS;
        cpu += (get.measurement.cpuS ?? NaN) + (r.measurement.cpuS ?? NaN);
        rss = Math.max(rss, r.measurement.peakRssBytes ?? NaN);
      }
      const fetched = zips(from);
      sampleRows = [
        {
          label: `terraform providers lock, ${sample} roots (measured)`,
          m: { wallS: wall, cpuS: cpu, peakRssBytes: rss },
          fetched,
        },
        {
          label: `terraform providers lock, ${roots} roots (× ${roots / sample}, extrapolated)`,
          m: { wallS: (wall * roots) / sample, cpuS: (cpu * roots) / sample, peakRssBytes: rss },
          fetched: Math.round((fetched * roots) / sample),
          note: 'extrapolated',
        },
      ];
      rows.push(...sampleRows);
      for (const r of sampleRows)
        console.log(
          `${r.label.padEnd(48)} wall ${r.m.wallS.toFixed(2)} s  cpu ${(r.m.cpuS ?? NaN).toFixed(2)} s  rss ${((r.m.peakRssBytes ?? NaN) / 1e6).toFixed(0)} MB  fetched ${r.fetched}`,
        );
      sameLocks = true;
      for (const name of picked) {
        const a = await readFile(join(dir, name, '.terraform.lock.hcl'), 'utf8');
        const b = await readFile(join(tree100, name, '.terraform.lock.hcl'), 'utf8');
        if (a !== b) {
          sameLocks = false;
          console.log(`DIFFERENT lock file in ${name}:\n--- terraform\n${a}\n--- provkit\n${b}`);
        }
      }
    }
  } finally {
    await reg.close();
    await rm(scratch, { recursive: true, force: true });
  }

  const pk = rows[0]!;
  const pk4 = rows[1]!;
  const tf = sampleRows[1];
  const s100 = summaries[pk.label] ?? {};
  const mb = (b: number | undefined): string => (b === undefined || !Number.isFinite(b) ? 'n/a' : (b / 1e6).toFixed(0));
  const lines = [
    '# Monorepo benchmark',
    '',
    `Written by \`npm run bench\` (bench/monorepo.ts) on ${new Date().toISOString()}; ${availableParallelism()} cores (${cpus()[0]?.model ?? '?'}), node ${process.version}, load average at the end ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}.`,
    '',
    `A generated tree: ${roots} root modules (\`stacks/sNNN/\`), each requiring ${PER_ROOT} of ${PROVIDERS} providers (\`~> 1.1\`; 1.2.0 is selected) and calling a shared local module that requires 2 more, with \`provkit.hcl\` at the top declaring ${PLATFORMS.length} platforms (${PLATFORMS.join(', ')}). ${PROVIDERS} providers × ${PLATFORMS.length} platforms = ${PROVIDERS * PLATFORMS.length} distinct packages of ~${mb((await buildZip([{ name: 'x', data: binary(1) }])).length)} MB, served by the in-repo fake registry over HTTPS on 127.0.0.1 with signed SHA256SUMS (packages generated in ${generateS.toFixed(1)} s). provkit runs with -flavor=terraform; ${runs === 1 ? 'one run each' : `median of ${runs} runs`}. "fetched" is the number of archive downloads (GET requests; terraform also sends a HEAD before each, not counted) in the registry's request log.`,
    '',
    '| command | wall s | CPU s | peak RSS MB | packages fetched |',
    '| --- | ---: | ---: | ---: | ---: |',
    ...rows.map(
      (r) =>
        `| ${r.label} | ${r.m.wallS.toFixed(2)} | ${(r.m.cpuS ?? NaN).toFixed(2)} | ${mb(r.m.peakRssBytes)} | ${r.fetched} |`,
    ),
    '',
    '## Findings',
    '',
    `- provkit: ${typeof s100['packages'] === 'number' ? s100['packages'] : '?'} unique packages for ${roots} roots, each fetched once (${pk.fetched} downloads); terraform fetches every package again in every root.`,
    tf
      ? `- ${roots} roots: terraform (extrapolated from ${sample} roots run one after another) / provkit lock -recursive = ${(tf.m.wallS / pk.m.wallS).toFixed(1)}× wall, ${((tf.m.cpuS ?? NaN) / (pk.m.cpuS ?? NaN)).toFixed(1)}× CPU, ${(tf.fetched / Math.max(1, pk.fetched)).toFixed(0)}× downloads.`
      : '- terraform is not on PATH: no comparison.',
    sameLocks === undefined
      ? ''
      : `- The lock files terraform wrote in the ${sample} sampled roots are ${sameLocks ? 'byte-identical to' : 'DIFFERENT from'} provkit's.`,
    `- Peak RSS with ${roots} roots: ${mb(pk.m.peakRssBytes)} MB; with ${roots * 4} roots: ${mb(pk4.m.peakRssBytes)} MB (the plan is the same ${PROVIDERS * PLATFORMS.length} packages; roots are worked 8 at a time and released).`,
    `- The warm \`-check\` run (every package's hashes in the hash store) downloads ${rows[2]?.fetched ?? '?'} packages.`,
    '',
    'The machine is shared: other processes compete for its cores, so the figures are noisy; the ratios and download counts are the point.',
    '',
  ].filter((l, i, a) => !(l === '' && a[i - 1] === ''));
  await writeFile(join(ROOT, 'bench/results-monorepo.md'), lines.join('\n'));
  console.log(lines.slice(-9).join('\n'));
  return sameLocks === false ? 1 : 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) process.exitCode = await main();
