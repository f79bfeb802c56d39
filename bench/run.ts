/**
 * `npm run bench`: how fast `provkit hash` computes zh:/h1: for five heavy
 * provider packages, next to the native floor (zhh1, C: zlib + OpenSSL) and the
 * straightforward yauzl implementation, all measured in the same run on the
 * same files.
 *
 *   tsx bench/run.ts [--runs N] [--only provkit,floor,yauzl]
 *
 * 1. Makes sure the packages exist (bench/generate.ts, into bench/.work/packages).
 * 2. Builds the native floor in bench/.work/native-floor from the directory
 *    $PROVKIT_NATIVE_FLOOR (its `zhh1.c` and `build.sh`; needs cc, zlib and
 *    OpenSSL headers). The floor is an optional external, not part of this
 *    repository (its source carries no licence, so it is not copied here):
 *    without $PROVKIT_NATIVE_FLOOR the bench looks in ../shared/bench/native-floor
 *    (the project workplace's shared folder beside the clone), and when neither
 *    builds the floor is reported unavailable and the other contenders still
 *    run. Tests never need it. See CONTRIBUTING.md, "Benchmarks".
 * 3. Runs every contender as a child process over the five zips, N times each
 *    (default 3), interleaved, after reading the zips once so all runs hit the
 *    page cache. Reports medians: wall seconds, CPU seconds, MB/s of
 *    uncompressed bytes, peak RSS, wall time as a ratio to the floor.
 * 4. Cross-checks: every contender must print the same zh:/h1: for every zip;
 *    if not, or if provkit's output cannot be read, it fails loudly (exit 1).
 * 5. Prints the table, checks the targets (wall ≤ 1.25 × floor, peak RSS ≤
 *    250 MB; PASS/FAIL, exit 0 either way) and writes bench/results.md.
 *
 * Units: MB = 10^6 bytes throughout (throughput and RSS alike, so "250 MB" is
 * 250 × 10^6 bytes).
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, cpus, loadavg, release, tmpdir, totalmem } from 'node:os';
import { basename, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

import ts from 'typescript';

import type { PackageHashes } from './baseline-yauzl.js';
import type { BenchManifest } from './generate.js';
import { ensureBenchPackages } from './generate.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const WORK = join(ROOT, 'bench', '.work');
const RESULTS = join(ROOT, 'bench', 'results.md');
const NATIVE_FLOOR_SRC = resolve(
  process.env['PROVKIT_NATIVE_FLOOR'] ?? join(ROOT, '..', 'shared', 'bench', 'native-floor'),
);
const FLOOR_JOBS = 2;
const TARGET_WALL_RATIO = 1.25;
const TARGET_RSS_BYTES = 250e6;

type ContenderId = 'provkit' | 'floor' | 'yauzl';

interface Contender {
  id: ContenderId;
  label: string;
  argv: string[];
  parse: (stdout: string, paths: readonly string[]) => Map<string, PackageHashes>;
}

/** One timed run. CPU and RSS are absent when no rusage tool was found. */
export interface Measurement {
  wallS: number;
  cpuS?: number;
  peakRssBytes?: number;
  /** Share of the machine's CPU that other processes used during the run (0..1), from /proc/stat. */
  othersShare?: number;
  /**
   * CPU seconds the benchmark's own process spent during the run: the work of
   * the servers it runs in-process (bench/commands.ts's fake registry), which
   * compete with the contender for the same cores. Included in othersShare.
   */
  benchCpuS?: number;
}

interface Outcome {
  contender: Contender;
  runs: Measurement[];
  /** Why the contender has no figures (failed to start or exited non-zero). */
  unavailable?: string | undefined;
}

// ---------------------------------------------------------------------------
// Output adapters.

const ZH = /\bzh:[0-9a-f]{64}\b/g;
const H1 = /\bh1:[A-Za-z0-9+/]{43}=/g;

/**
 * Reads `provkit hash` output: THE place to adapt when its format changes.
 * Current contract (lead's command): for each zip a block that names the zip on
 * one line, followed by lines holding `h1:…` and `zh:…` in any order. The
 * one-line form `<zip> zh:… h1:…` is read too. A zip is recognised by its file
 * name anywhere in a line (the five names are distinct), so the command may
 * print it absolute, relative or bare. Throws when a zip lacks either hash or
 * a hash is given twice with different values.
 */
export function parseProvkitHashOutput(stdout: string, paths: readonly string[]): Map<string, PackageHashes> {
  return parseHashBlocks(stdout, paths);
}

/** Reads `<zip> zh:<hex> h1:<base64>` lines (zhh1 and the yauzl baseline). */
export function parseZipHashLines(stdout: string, paths: readonly string[]): Map<string, PackageHashes> {
  return parseHashBlocks(stdout, paths);
}

function parseHashBlocks(stdout: string, paths: readonly string[]): Map<string, PackageHashes> {
  // Longest name first, so that no name is mistaken for a suffix of another.
  const byName = [...paths].sort((a, b) => basename(b).length - basename(a).length);
  const found = new Map<string, { zh?: string; h1?: string }>();
  let current: string | undefined;
  for (const line of stdout.split('\n')) {
    const named = byName.find((p) => line.includes(basename(p)));
    if (named) current = named;
    const hashes = [...(line.match(ZH) ?? []), ...(line.match(H1) ?? [])];
    if (hashes.length === 0) continue;
    if (!current) throw new Error(`hash before any zip name: ${line}`);
    const slot = found.get(current) ?? {};
    for (const h of hashes) {
      const key = h.startsWith('zh:') ? 'zh' : 'h1';
      if (slot[key] !== undefined && slot[key] !== h) throw new Error(`two ${key} hashes for ${basename(current)}`);
      slot[key] = h;
    }
    found.set(current, slot);
  }
  const out = new Map<string, PackageHashes>();
  for (const p of paths) {
    const slot = found.get(p);
    if (!slot?.zh || !slot.h1) {
      const head = stdout.split('\n').slice(0, 8).join('\n');
      throw new Error(`no zh:/h1: pair for ${basename(p)} in output:\n${head}`);
    }
    out.set(p, { zh: slot.zh, h1: slot.h1 });
  }
  return out;
}

// ---------------------------------------------------------------------------
// Measuring a child process.
//
// CPU time and peak RSS of a child are only available from the kernel's rusage
// of waited-for children: Node's process.resourceUsage() covers the calling
// process only, and there is no getrusage(RUSAGE_CHILDREN) in Node. So each run
// goes through a wrapper that waits for the command and reports its rusage:
// GNU time (`/usr/bin/time -f`), or else a few lines of Python doing
// getrusage(RUSAGE_CHILDREN). Both report user+system time of the command and
// of every descendant it waited for, and ru_maxrss: the peak RSS of the largest
// single process (threads included, so right for zhh1's pthreads and Node's
// worker threads; a contender that forks worker *processes* would need their
// RSS summed, which rusage cannot do). Wall time is taken here, around the
// spawn, with performance.now().

export type RusageTool = { kind: 'gnu-time'; path: string } | { kind: 'python' } | { kind: 'none' };

const PY_RUSAGE = `
import resource, subprocess, sys
rc = subprocess.call(sys.argv[2:])
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(sys.argv[1], 'w') as f:
    f.write('%f %f %d\\n' % (ru.ru_utime, ru.ru_stime, ru.ru_maxrss))
sys.exit(rc if rc >= 0 else 128 - rc)
`;

export function findRusageTool(): RusageTool {
  if (existsSync('/usr/bin/time')) return { kind: 'gnu-time', path: '/usr/bin/time' };
  try {
    execFileSync('python3', ['-c', 'import resource'], { stdio: 'ignore' });
    return { kind: 'python' };
  } catch {
    return { kind: 'none' };
  }
}

export interface RawRun {
  code: number | null;
  stdout: string;
  stderr: string;
  measurement: Measurement;
}

export async function measure(argv: readonly string[], tool: RusageTool, scratch: string): Promise<RawRun> {
  const report = join(scratch, 'rusage.txt');
  await rm(report, { force: true });
  const [cmd, ...args] =
    tool.kind === 'gnu-time'
      ? [tool.path, '-f', '%U %S %M', '-o', report, '--', ...argv]
      : tool.kind === 'python'
        ? ['python3', '-c', PY_RUSAGE, report, ...argv]
        : [...argv];
  if (cmd === undefined) throw new Error('empty command');
  const busyBefore = machineBusyS();
  const selfBefore = process.cpuUsage();
  const started = performance.now();
  const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>(
    (resolve, reject) => {
      const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
      child.stderr.setEncoding('utf8').on('data', (s: string) => (err += s));
      child.on('error', reject);
      child.on('close', (c) => resolve({ code: c, stdout: out, stderr: err }));
    },
  );
  const wallS = (performance.now() - started) / 1000;
  const busyAfter = machineBusyS();
  const self = process.cpuUsage(selfBefore);
  const measurement: Measurement = { wallS, benchCpuS: (self.user + self.system) / 1e6 };
  if (tool.kind !== 'none') {
    // GNU time puts "Command exited with non-zero status N" first; the figures are the last line.
    const last = (await readFile(report, 'utf8').catch(() => '')).trim().split('\n').at(-1) ?? '';
    const [user, sys, maxrssKiB] = last.split(' ').map(Number);
    if (
      user !== undefined &&
      sys !== undefined &&
      maxrssKiB !== undefined &&
      [user, sys, maxrssKiB].every(Number.isFinite)
    ) {
      measurement.cpuS = user + sys;
      measurement.peakRssBytes = maxrssKiB * 1024; // ru_maxrss is in KiB on Linux
    }
  }
  if (busyBefore !== undefined && busyAfter !== undefined && measurement.cpuS !== undefined) {
    const others = busyAfter - busyBefore - measurement.cpuS;
    measurement.othersShare = Math.max(0, others) / (wallS * availableParallelism());
  }
  return { code, stdout, stderr, measurement };
}

/**
 * CPU seconds the whole machine has spent busy (user, nice, system, irq,
 * softirq, steal in /proc/stat, in USER_HZ = 100 ticks per second), or
 * undefined off Linux. Busy time during a run minus the contender's own CPU
 * time is what other processes took: on a shared machine that explains
 * inflated wall times.
 */
function machineBusyS(): number | undefined {
  try {
    const f = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
    const busy = [0, 1, 2, 5, 6, 7].reduce((sum, i) => sum + (f[i] ?? 0), 0);
    return Number.isFinite(busy) ? busy / 100 : undefined;
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------
// Contenders.

/** Builds zhh1 in bench/.work/native-floor from a copy of the shared sources; returns the binary or why not. */
export async function buildNativeFloor(): Promise<{ bin: string; note: string } | { error: string }> {
  const dir = join(WORK, 'native-floor');
  try {
    await mkdir(dir, { recursive: true });
    for (const f of ['zhh1.c', 'build.sh']) await copyFile(join(NATIVE_FLOOR_SRC, f), join(dir, f));
    const out = execFileSync('sh', ['build.sh'], { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    return { bin: join(dir, 'zhh1'), note: out.trim() };
  } catch (e) {
    const err = e as { stderr?: string; message?: string };
    return { error: (err.stderr || err.message || String(e)).trim().split('\n').slice(0, 3).join(' ') };
  }
}

/**
 * Transpiles the self-contained bench/baseline-yauzl.ts to bench/.work/baseline-yauzl.mjs
 * (type-stripping only), so the baseline runs on plain node like provkit's
 * compiled CLI and pays no TypeScript loader.
 */
async function prepareBaseline(): Promise<string> {
  const src = await readFile(join(ROOT, 'bench', 'baseline-yauzl.ts'), 'utf8');
  const { outputText } = ts.transpileModule(src, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  });
  const out = join(WORK, 'baseline-yauzl.mjs');
  await mkdir(WORK, { recursive: true });
  await writeFile(out, outputText);
  return out;
}

// ---------------------------------------------------------------------------
// Report.

function median(xs: readonly number[]): number | undefined {
  if (xs.length === 0) return undefined;
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
}

interface Row {
  id: ContenderId;
  label: string;
  wallS?: number | undefined;
  cpuS?: number | undefined;
  mbPerS?: number | undefined;
  rssMB?: number | undefined;
  ratio?: number | undefined;
  cpuRatio?: number | undefined;
  othersPct?: number | undefined;
  note?: string | undefined;
}

function summarise(outcomes: readonly Outcome[], uncompressedBytes: number): Row[] {
  const medianOf = (runs: readonly Measurement[], pick: (m: Measurement) => number | undefined): number | undefined =>
    median(runs.flatMap((m) => pick(m) ?? []));
  const floorRuns = outcomes.find((o) => o.contender.id === 'floor' && !o.unavailable)?.runs ?? [];
  const floorWall = medianOf(floorRuns, (m) => m.wallS);
  const floorCpu = medianOf(floorRuns, (m) => m.cpuS);
  return outcomes.map((o) => {
    if (o.unavailable) return { id: o.contender.id, label: o.contender.label, note: `unavailable: ${o.unavailable}` };
    const wallS = medianOf(o.runs, (m) => m.wallS);
    const cpuS = medianOf(o.runs, (m) => m.cpuS);
    const rss = medianOf(o.runs, (m) => m.peakRssBytes);
    const others = medianOf(o.runs, (m) => m.othersShare);
    return {
      id: o.contender.id,
      label: o.contender.label,
      wallS,
      cpuS,
      mbPerS: wallS ? uncompressedBytes / 1e6 / wallS : undefined,
      rssMB: rss === undefined ? undefined : rss / 1e6,
      ratio: wallS && floorWall ? wallS / floorWall : undefined,
      cpuRatio: cpuS && floorCpu ? cpuS / floorCpu : undefined,
      othersPct: others === undefined ? undefined : others * 100,
    };
  });
}

const fmt = (v: number | undefined, digits: number): string => (v === undefined ? 'n/a' : v.toFixed(digits));

function table(rows: readonly Row[]): string {
  const lines = [
    '| contender | wall s | CPU s | MB/s (uncompressed) | peak RSS MB | wall / floor | CPU / floor | CPU used by others |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const r of rows) {
    if (r.note) lines.push(`| ${r.label} | ${r.note} | | | | | | |`);
    else
      lines.push(
        `| ${r.label} | ${fmt(r.wallS, 2)} | ${fmt(r.cpuS, 2)} | ${fmt(r.mbPerS, 0)} | ${fmt(r.rssMB, 0)} | ` +
          `${fmt(r.ratio, 2)} | ${fmt(r.cpuRatio, 2)} | ${r.othersPct === undefined ? 'n/a' : `${r.othersPct.toFixed(0)} %`} |`,
      );
  }
  return lines.join('\n');
}

function targets(rows: readonly Row[]): string[] {
  const provkit = rows.find((r) => r.id === 'provkit');
  const verdict = (ok: boolean | undefined): string => (ok === undefined ? 'N/A' : ok ? 'PASS' : 'FAIL');
  return [
    `${verdict(provkit?.ratio === undefined ? undefined : provkit.ratio <= TARGET_WALL_RATIO)}  provkit wall ≤ ${TARGET_WALL_RATIO} × native floor (${fmt(provkit?.ratio, 2)} ×)`,
    `${verdict(provkit?.rssMB === undefined ? undefined : provkit.rssMB * 1e6 <= TARGET_RSS_BYTES)}  provkit peak RSS ≤ ${TARGET_RSS_BYTES / 1e6} MB (${fmt(provkit?.rssMB, 0)} MB)`,
  ];
}

function machineInfo(): string[] {
  let nproc = `${availableParallelism()}`;
  try {
    nproc = execFileSync('nproc', { encoding: 'utf8' }).trim();
  } catch {
    // keep availableParallelism()
  }
  return [
    `nproc: ${nproc}`,
    `CPU: ${cpus()[0]?.model ?? 'unknown'}`,
    `memory: ${(totalmem() / 2 ** 30).toFixed(1)} GiB`,
    `node: ${process.version} (zlib ${process.versions.zlib ?? '?'}, OpenSSL ${process.versions.openssl ?? '?'})`,
    `kernel: ${release()}`,
  ];
}

// ---------------------------------------------------------------------------

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { runs: { type: 'string', default: '3' }, only: { type: 'string' } } });
  const runs = Math.max(1, Number(values.runs));
  const only = values.only ? new Set(values.only.split(',')) : undefined;

  const { manifest, paths } = await ensureBenchPackages();
  const uncompressedBytes = manifest.packages.reduce((s, p) => s + p.uncompressedBytes, 0);
  const zipBytes = manifest.packages.reduce((s, p) => s + p.zipBytes, 0);

  const floor = await buildNativeFloor();
  const baseline = await prepareBaseline();
  const all: Contender[] = [
    {
      id: 'provkit',
      label: 'provkit hash',
      argv: [process.execPath, join(ROOT, 'bin', 'provkit.js'), 'hash', ...paths],
      parse: parseProvkitHashOutput,
    },
    {
      id: 'floor',
      label: `native floor (zhh1 -j ${FLOOR_JOBS})`,
      argv: 'bin' in floor ? [floor.bin, '-j', `${FLOOR_JOBS}`, ...paths] : [],
      parse: parseZipHashLines,
    },
    {
      id: 'yauzl',
      label: 'yauzl baseline (sequential)',
      argv: [process.execPath, baseline, ...paths],
      parse: parseZipHashLines,
    },
  ];
  const outcomes: Outcome[] = all
    .filter((c) => !only || only.has(c.id))
    .map((contender) => ({
      contender,
      runs: [],
      unavailable: contender.id === 'floor' && 'error' in floor ? `build failed: ${floor.error}` : undefined,
    }));

  const tool = findRusageTool();
  const scratch = await mkdtemp(join(tmpdir(), 'provkit-bench-'));
  const load = [loadavg()];
  const hashes = new Map<ContenderId, Map<string, PackageHashes>>();
  const mismatches: string[] = [];
  let reported: Map<string, PackageHashes> | undefined; // one contender's hashes, for the report
  try {
    for (const p of paths) await readFile(p); // into the page cache: every run reads from memory
    for (let run = 1; run <= runs; run++) {
      for (const o of outcomes) {
        if (o.unavailable) continue;
        const { code, stdout, stderr, measurement } = await measure(o.contender.argv, tool, scratch);
        if (code !== 0) {
          o.unavailable = `exit ${code}: ${stderr.trim().split('\n').slice(0, 2).join(' ').slice(0, 200)}`;
          continue;
        }
        try {
          hashes.set(o.contender.id, o.contender.parse(stdout, paths));
        } catch (e) {
          mismatches.push(`${o.contender.label}: output not understood: ${(e as Error).message}`);
          o.unavailable = 'output not understood';
          continue;
        }
        o.runs.push(measurement);
        process.stderr.write(
          `run ${run}/${runs} ${o.contender.label}: ${measurement.wallS.toFixed(2)} s wall, ${fmt(measurement.cpuS, 2)} s CPU\n`,
        );
      }
      mismatches.push(...crossCheck(hashes, paths, all));
      reported = [...hashes.values()][0] ?? reported;
      hashes.clear();
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  load.push(loadavg());

  const rows = summarise(outcomes, uncompressedBytes);
  const verdicts = targets(rows);
  const busiest = Math.max(0, ...rows.map((r) => r.othersPct ?? 0));
  const contention =
    busiest > 10
      ? `WARNING: other processes used up to ${busiest.toFixed(0)} % of the machine's CPU during the timed runs, ` +
        'so wall times (and the wall ratios and targets) are inflated and noisy; CPU seconds are less affected. ' +
        'Rerun on an idle machine for figures to quote.'
      : '';
  const report = [
    '# Hashing benchmark',
    '',
    `Written by \`npm run bench\` (bench/run.ts) on ${new Date().toISOString()}.`,
    '',
    '## Machine',
    '',
    ...machineInfo().map((l) => `- ${l}`),
    `- load average (1/5/15 min) before: ${load[0]?.map((x) => x.toFixed(2)).join(' ')}, after: ${load[1]?.map((x) => x.toFixed(2)).join(' ')}`,
    '',
    '## Packages',
    '',
    `${manifest.packages.length} zips from bench/generate.ts (seed ${manifest.seed}, zlib ${manifest.zlib}): ` +
      `${(zipBytes / 1e6).toFixed(1)} MB packed, ${(uncompressedBytes / 1e6).toFixed(1)} MB unpacked ` +
      `(ratio ${(uncompressedBytes / zipBytes).toFixed(2)}).`,
    '',
    '## Results',
    '',
    `Median of ${runs} run(s) per contender, interleaved, zips in the page cache. MB = 10^6 bytes; ` +
      `MB/s counts uncompressed bytes. CPU = user + system of the process and its children; ` +
      `peak RSS = largest single process (${tool.kind === 'none' ? 'not measured: no /usr/bin/time or python3' : `via ${tool.kind}`}).`,
    '',
    table(rows),
    '',
    ...(contention ? [contention, ''] : []),
    'bin' in floor
      ? `Native floor: \`zhh1 -j ${FLOOR_JOBS}\` built from ${relative(ROOT, NATIVE_FLOOR_SRC)}${floor.note.includes('libdeflate') ? ' (with libdeflate, unused without -d)' : ''}. ` +
        'It maps each zip whole, so its peak RSS includes the mapped file pages.'
      : `Native floor: unavailable (${floor.error}).`,
    '',
    '## Targets (2-core machine)',
    '',
    ...verdicts.map((v) => `- ${v}`),
    '',
    '## Cross-check',
    '',
    mismatches.length === 0
      ? 'All contenders that ran printed the same zh: and h1: for every package.'
      : mismatches.map((m) => `- MISMATCH: ${m}`).join('\n'),
    '',
    packageHashTable(manifest, reported),
    '',
  ].join('\n');
  await writeFile(RESULTS, report);

  process.stdout.write(
    `\n${table(rows)}\n\n${contention ? `${contention}\n\n` : ''}${verdicts.join('\n')}\n\nwrote ${RESULTS}\n`,
  );
  if (mismatches.length > 0) {
    process.stderr.write(`\nBENCH FAILED: hashes disagree or could not be read:\n${mismatches.join('\n')}\n`);
    return 1;
  }
  return 0;
}

/** Compares every contender's hashes with the first one's; returns one line per disagreement. */
function crossCheck(
  byContender: ReadonlyMap<ContenderId, Map<string, PackageHashes>>,
  paths: readonly string[],
  contenders: readonly Contender[],
): string[] {
  const entries = [...byContender];
  const first = entries[0];
  if (!first) return [];
  const label = (id: ContenderId): string => contenders.find((c) => c.id === id)?.label ?? id;
  const out: string[] = [];
  for (const [id, got] of entries.slice(1)) {
    for (const p of paths) {
      const a = first[1].get(p);
      const b = got.get(p);
      if (a?.zh !== b?.zh || a?.h1 !== b?.h1) {
        out.push(`${basename(p)}: ${label(first[0])} ${a?.zh} ${a?.h1} ≠ ${label(id)} ${b?.zh} ${b?.h1}`);
      }
    }
  }
  return out;
}

function packageHashTable(manifest: BenchManifest, hashes: ReadonlyMap<string, PackageHashes> | undefined): string {
  if (!hashes) return '';
  const rows = [...hashes].map(([p, h]) => {
    const pkg = manifest.packages.find((x) => x.file === basename(p));
    return `| ${basename(p)} | ${pkg ? (pkg.zipBytes / 1e6).toFixed(1) : '?'} | ${h.zh} | ${h.h1} |`;
  });
  return ['| package | MB | zh | h1 |', '| --- | ---: | --- | --- |', ...rows].join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) process.exitCode = await main();
