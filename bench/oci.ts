// The OCI benchmark (issue 16): the heavy provider of the commands benchmark
// (5 platforms × ~100 MB zips, bench/generate.ts) published into a real OCI
// registry (Debian's docker-registry, TLS on 127.0.0.1, as the tests run it:
// test/support/docker-registry.ts) and locked from it. Measured:
//   provkit mirror oci://… into an empty registry (download from the fake origin registry + upload)
//   provkit mirror oci://… again (everything present: HEADs only, no download)
//   provkit lock -oci-mirror (5 platforms: download from the registry + hash)
//   provkit lock from the origin registry, for comparison
// Skipped when docker-registry is not installed. Writes bench/results-oci.md.
//
// Usage: npx tsx bench/oci.ts [--runs N]   (npm run bench runs it last)
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { dockerRegistryBinary, startDockerRegistry } from '../test/support/docker-registry.js';
import { findRusageTool, measure, type Measurement } from './run.js';
import { PLATFORMS, startHeavyRegistry } from './serve-heavy.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
}

async function main(): Promise<number> {
  if (dockerRegistryBinary() === undefined) {
    console.log('bench/oci.ts: docker-registry is not installed (apt-get install docker-registry); skipped');
    return 0;
  }
  const runsArg = process.argv.indexOf('--runs');
  const runs = runsArg > 0 ? Number(process.argv[runsArg + 1]) : 3;
  const { reg: origin } = await startHeavyRegistry();
  const scratch = await mkdtemp(join(tmpdir(), 'provkit-bench-oci-'));
  const tool = findRusageTool();
  const rows: Array<{ label: string; runs: Measurement[] }> = [];
  let registry = await startDockerRegistry();
  try {
    const project = join(scratch, 'project');
    await mkdir(project);
    await writeFile(
      join(project, 'main.tf'),
      `terraform {\n  required_providers {\n    heavy = {\n      source = "${origin.host}/acme/heavy"\n    }\n  }\n}\n`,
    );
    const cas = join(scratch, 'cas.pem');
    await writeFile(cas, `${origin.caPem}${registry.caPem}`);
    const rc = join(scratch, 'empty.tfrc');
    await writeFile(rc, '');
    process.env['SSL_CERT_FILE'] = cas;
    process.env['TF_CLI_CONFIG_FILE'] = rc;
    process.env['PROVKIT_CACHE_DIR'] = join(scratch, 'cache');
    process.env['PROVKIT_HASH_STORE'] = 'off';
    const platformFlags = PLATFORMS.map((p) => `-platform=${p}`);
    const provkit = [process.execPath, join(ROOT, 'bin/provkit.js'), `-chdir=${project}`];
    const target = (): string => `oci://${registry.host}/providers/{namespace}/{type}`;
    const lockFile = join(project, '.terraform.lock.hcl');
    const run = async (label: string, argv: () => string[], before?: () => Promise<void>): Promise<void> => {
      const row = { label, runs: [] as Measurement[] };
      for (let i = 0; i < runs; i++) {
        if (before) await before();
        const r = await measure(argv(), tool, scratch);
        if (r.code !== 0) throw new Error(`${label} failed (exit ${r.code}):\n${r.stderr}`);
        row.runs.push(r.measurement);
      }
      rows.push(row);
      const m = row.runs;
      console.log(
        `${label.padEnd(44)} wall ${median(m.map((x) => x.wallS)).toFixed(2)} s  cpu ${median(m.map((x) => x.cpuS ?? NaN)).toFixed(2)} s  rss ${(median(m.map((x) => x.peakRssBytes ?? NaN)) / 1e6).toFixed(0)} MB`,
      );
    };
    // A fresh registry for each cold publish.
    await run(
      'provkit mirror oci:// (empty registry)',
      () => [...provkit, 'mirror', ...platformFlags, target()],
      async () => {
        await registry.stop();
        registry = await startDockerRegistry();
        await writeFile(cas, `${origin.caPem}${registry.caPem}`);
      },
    );
    await run('provkit mirror oci:// (again: all present)', () => [...provkit, 'mirror', ...platformFlags, target()]);
    await run(
      'provkit lock -oci-mirror (5 platforms)',
      () => [...provkit, 'lock', ...platformFlags, `-oci-mirror=${target()}`],
      () => rm(lockFile, { force: true }),
    );
    const ociLock = await readFile(lockFile, 'utf8');
    await run(
      'provkit lock from the origin registry',
      () => [...provkit, 'lock', ...platformFlags],
      () => rm(lockFile, { force: true }),
    );
    const originLock = await readFile(lockFile, 'utf8');
    const h1 = (t: string): string[] => [...t.matchAll(/"(h1:[^"]+)"/g)].map((m) => m[1]!).sort();
    if (JSON.stringify(h1(ociLock)) !== JSON.stringify(h1(originLock)))
      throw new Error('the h1: hashes of the OCI lock differ from the origin lock');
  } finally {
    await registry.stop();
    await origin.close();
    await rm(scratch, { recursive: true, force: true });
  }
  const lines = [
    '# OCI benchmark',
    '',
    `Written by \`npx tsx bench/oci.ts\` (run by \`npm run bench\`) on ${new Date().toISOString()}; ${availableParallelism()} cores (${cpus()[0]?.model ?? '?'}), node ${process.version}.`,
    '',
    `The heavy provider (5 platforms × ~100 MB zips, bench/generate.ts) from the in-repo fake registry (HTTPS, 127.0.0.1) published into Debian's docker-registry 2.8 (HTTPS, 127.0.0.1, filesystem storage) and locked from it; hash store off. Median of ${runs} runs. The OCI lock's h1: hashes are checked equal to the origin lock's.`,
    '',
    `Load average when written: ${loadavg()
      .map((x) => x.toFixed(1))
      .join(
        ', ',
      )}. "Others" is the share of the machine's CPU other processes (the registries included) used during the run: on a busy machine wall times are mostly waiting.`,
    '',
    '| command | wall s | CPU s | peak RSS MB | others |',
    '| --- | ---: | ---: | ---: | ---: |',
    ...rows.map(
      (r) =>
        `| ${r.label} | ${median(r.runs.map((x) => x.wallS)).toFixed(2)} | ${median(r.runs.map((x) => x.cpuS ?? NaN)).toFixed(2)} | ${(median(r.runs.map((x) => x.peakRssBytes ?? NaN)) / 1e6).toFixed(0)} | ${(median(r.runs.map((x) => x.othersShare ?? NaN)) * 100).toFixed(0)}% |`,
    ),
    '',
  ];
  await writeFile(join(ROOT, 'bench/results-oci.md'), lines.join('\n'));
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) process.exitCode = await main();
