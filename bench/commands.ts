// The commands benchmark (issue #5): a heavy provider (5 platforms × ~100 MB
// zips, the packages of bench/generate.ts) served by the in-repo fake
// registry over HTTPS on loopback. Measured in one run:
//   provkit lock (5 platforms)          vs terraform providers lock
//   provkit mirror into an empty target vs terraform providers mirror
//   provkit mirror again, same target   (incremental)
// and the native hashing floor (zhh1 -j 2) over the same zips, as ratios.
// Targets on 2 cores: lock ≥ 4× faster than terraform; mirror ≥ 3× faster;
// the second mirror ≥ 20× faster than the first; peak RSS ≤ 300 MB.
//
// Usage: npx tsx bench/commands.ts [--runs N]   (npm run bench runs it after the hashing benchmark)
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { measure, findRusageTool, type Measurement } from './run.js';
import { PLATFORMS, startHeavyRegistry } from './serve-heavy.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const WORK = join(ROOT, 'bench/.work');

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
}

interface Row {
  label: string;
  runs: Measurement[];
}

async function main(): Promise<number> {
  const runsArg = process.argv.indexOf('--runs');
  const runs = runsArg > 0 ? Number(process.argv[runsArg + 1]) : 3;
  const { reg, paths } = await startHeavyRegistry();
  const tool = findRusageTool();
  const scratch = await mkdtemp(join(tmpdir(), 'provkit-bench-cmd-'));
  const project = join(scratch, 'project');
  await mkdir(project);
  await writeFile(join(project, 'main.tf'), `terraform {\n  required_providers {\n    heavy = {\n      source = "${reg.host}/acme/heavy"\n    }\n  }\n}\n`);
  const rc = join(scratch, 'empty.tfrc');
  await writeFile(rc, '');
  process.env['SSL_CERT_FILE'] = reg.caPath;
  process.env['TF_CLI_CONFIG_FILE'] = rc;
  process.env['CHECKPOINT_DISABLE'] = '1';
  process.env['PROVKIT_CACHE_DIR'] = join(scratch, 'cache');
  const platformFlags = PLATFORMS.map((p) => `-platform=${p}`);
  const provkit = [process.execPath, join(ROOT, 'bin/provkit.js'), `-chdir=${project}`, '-flavor=terraform'];
  const haveTerraform = (() => {
    try {
      execFileSync('terraform', ['version'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  })();
  const floor = join(WORK, 'native-floor/zhh1');

  const rows: Row[] = [];
  const run = async (label: string, argv: string[], before?: () => Promise<void>): Promise<void> => {
    const row: Row = { label, runs: [] };
    for (let i = 0; i < runs; i++) {
      if (before) await before();
      const r = await measure(argv, tool, scratch);
      if (r.code !== 0) throw new Error(`${label} failed (exit ${r.code}):\n${r.stderr}`);
      row.runs.push(r.measurement);
    }
    rows.push(row);
    const m = row.runs;
    console.log(`${label.padEnd(36)} wall ${median(m.map((x) => x.wallS)).toFixed(2)} s  cpu ${median(m.map((x) => x.cpuS ?? NaN)).toFixed(2)} s  rss ${(median(m.map((x) => x.peakRssBytes ?? NaN)) / 1e6).toFixed(0)} MB`);
  };
  const lockFile = join(project, '.terraform.lock.hcl');
  const target = join(scratch, 'mirror');
  // Cold runs get an empty hash store each (no help from earlier runs); warm
  // runs one that a cold run filled (hashing/store.ts).
  let stores = 0;
  const freshStore = (): string => (process.env['PROVKIT_HASH_STORE'] = join(scratch, `store-${stores++}`));
  let filled = '';
  try {
    await run('provkit lock (cold)', [...provkit, 'lock', ...platformFlags], async () => {
      await rm(lockFile, { force: true });
      filled = freshStore();
    });
    const pkLock = await readFile(lockFile, 'utf8');
    await run('provkit lock (warm hash store)', [...provkit, 'lock', ...platformFlags], async () => {
      await rm(lockFile, { force: true });
      process.env['PROVKIT_HASH_STORE'] = filled;
    });
    if ((await readFile(lockFile, 'utf8')) !== pkLock) throw new Error('the warm lock differs from the cold one');
    if (haveTerraform) {
      await run('terraform providers lock', ['terraform', `-chdir=${project}`, 'providers', 'lock', ...platformFlags], () => rm(lockFile, { force: true }));
      if ((await readFile(lockFile, 'utf8')) !== pkLock) throw new Error('provkit and terraform wrote different lock files');
    }
    await rm(lockFile, { force: true });
    await run('provkit mirror (empty target, cold)', [...provkit, 'mirror', ...platformFlags, target], async () => {
      await rm(target, { recursive: true, force: true });
      filled = freshStore();
    });
    await run('provkit mirror (again, same target)', [...provkit, 'mirror', ...platformFlags, target]);
    await run('provkit mirror (empty target, warm hash store)', [...provkit, 'mirror', ...platformFlags, target], async () => {
      await rm(target, { recursive: true, force: true });
      process.env['PROVKIT_HASH_STORE'] = filled;
    });
    if (haveTerraform) {
      await run('terraform providers mirror (empty)', ['terraform', `-chdir=${project}`, 'providers', 'mirror', ...platformFlags, target], () =>
        rm(target, { recursive: true, force: true }),
      );
    }
    if (existsSync(floor)) await run('native floor (zhh1 -j 2)', [floor, '-q', '-j', '2', ...paths]);
  } finally {
    await reg.close();
    await rm(scratch, { recursive: true, force: true });
  }

  const wall = (label: string): number | undefined => {
    const r = rows.find((x) => x.label === label);
    return r ? median(r.runs.map((x) => x.wallS)) : undefined;
  };
  const rss = (label: string): number => median(rows.find((x) => x.label === label)?.runs.map((x) => x.peakRssBytes ?? NaN) ?? [NaN]);
  const pkLockS = wall('provkit lock (cold)')!;
  const pkLockWarmS = wall('provkit lock (warm hash store)')!;
  const pkMirrorS = wall('provkit mirror (empty target, cold)')!;
  const pkMirror2S = wall('provkit mirror (again, same target)')!;
  const pkMirrorWarmS = wall('provkit mirror (empty target, warm hash store)')!;
  const tfLockS = wall('terraform providers lock');
  const tfMirrorS = wall('terraform providers mirror (empty)');
  const floorS = wall('native floor (zhh1 -j 2)');
  const peak = Math.max(...rows.filter((r) => r.label.startsWith('provkit')).map((r) => rss(r.label)));
  const check = (ok: boolean | undefined, text: string): string => `- ${ok === undefined ? 'n/a ' : ok ? 'PASS' : 'FAIL'}  ${text}`;
  const ratio = (a: number | undefined, b: number): string => (a === undefined ? 'n/a (no terraform)' : (a / b).toFixed(2));
  const lines = [
    '# Commands benchmark',
    '',
    `Written by \`npm run bench\` (bench/commands.ts) on ${new Date().toISOString()}; ${availableParallelism()} cores (${cpus()[0]?.model ?? '?'}), node ${process.version}.`,
    '',
    `A provider with 5 platforms × ~100 MB zips (~430 MB unpacked each; the packages of bench/generate.ts), served by the in-repo fake registry over HTTPS on 127.0.0.1 with signed SHA256SUMS. Median of ${runs} runs. provkit runs with -flavor=terraform; the lock files of both tools (and of provkit's cold and warm runs) are compared and must be identical. Cold runs start with an empty hash store; warm runs use one a cold run filled.`,
    '',
    '| command | wall s | CPU s | peak RSS MB |',
    '| --- | ---: | ---: | ---: |',
    ...rows.map((r) => `| ${r.label} | ${median(r.runs.map((x) => x.wallS)).toFixed(2)} | ${median(r.runs.map((x) => x.cpuS ?? NaN)).toFixed(2)} | ${(median(r.runs.map((x) => x.peakRssBytes ?? NaN)) / 1e6).toFixed(0)} |`),
    '',
    '## Ratios and targets',
    '',
    check(tfLockS === undefined ? undefined : tfLockS / pkLockS >= 4, `lock, cold (empty hash store): terraform / provkit = ${ratio(tfLockS, pkLockS)} (target ≥ 4)`),
    check(tfMirrorS === undefined ? undefined : tfMirrorS / pkMirrorS >= 3, `mirror, cold: terraform / provkit = ${ratio(tfMirrorS, pkMirrorS)} (target ≥ 3)`),
    check(pkMirrorS / pkMirror2S >= 20, `second mirror run: first (cold) / second = ${(pkMirrorS / pkMirror2S).toFixed(1)} (target ≥ 20)`),
    check(peak <= 300e6, `peak RSS ${(peak / 1e6).toFixed(0)} MB (target ≤ 300)`),
    `- with a warm hash store (the packages' hashes known from an earlier run, by their signed zh:): lock terraform / provkit = ${ratio(tfLockS, pkLockWarmS)}, mirror terraform / provkit = ${ratio(tfMirrorS, pkMirrorWarmS)}; the targets above are judged on the cold runs`,
    floorS === undefined ? '- native floor unavailable' : `- provkit lock (cold) / native hashing floor = ${(pkLockS / floorS).toFixed(2)}; provkit mirror (cold) / floor = ${(pkMirrorS / floorS).toFixed(2)}`,
    '',
  ];
  await writeFile(join(ROOT, 'bench/results-commands.md'), lines.join('\n'));
  console.log(lines.slice(-8).join('\n'));
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) process.exitCode = await main();
