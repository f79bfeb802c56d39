// The commands benchmark (issues #5 and 13): provkit against terraform and
// against the native hashing floor, in one run, on the same files.
//
// Jobs (a heavy provider: 5 platforms × ~100 MB zips, the packages of
// bench/generate.ts, served by the in-repo fake registry over HTTPS on
// loopback with signed SHA256SUMS, and the same zips as a filesystem mirror):
//   lock from the registry        provkit cold / warm    vs terraform providers lock
//   lock -fs-mirror               provkit cold / warm    vs terraform providers lock -fs-mirror
//   mirror into an empty target   provkit cold / warm    vs terraform providers mirror
//   mirror again, same target     (incremental)
//   incompressible pair           lock -fs-mirror on 2 × 200 MB packages of random bytes
//   tiny lock                     the README demo (-fs-mirror) vs `node -e 0` and
//                                 bench/tiny-floor.cjs (the least Node does for it),
//                                 without NODE_EXTRA_CA_CERTS (and with, when set)
//   native floor                  zhh1 -j 2 over the 5 zips, and over the pair
//   Node floor                    bench/node-floor.mjs: the registry lock's
//                                 per-byte work alone (HTTPS receive, zh:, inflate
//                                 + SHA-256 + CRC-32 per entry), alternating with
//                                 the registry lock: how fast Node itself goes here
// Cold runs have no hash store (PROVKIT_HASH_STORE=off); warm runs one that a
// cold run filled. provkit and terraform runs alternate (pairs in one loop),
// medians are reported, and the machine's load is written beside them: the
// figures are only comparable within one run.
//
// Every lock file provkit writes is compared with terraform's for the same job
// (and cold with warm); a difference fails the run.
//
// Usage: npx tsx bench/commands.ts [--runs N] [--binary-mb M] [--only a,b]
//   --runs       pairs per job (default 3; the tiny lock runs 3× as many)
//   --binary-mb  size of each package's binary (default 430: ~100 MB zips, the
//                issue's sizes; smaller for a quick run; results then say so)
//   --only       a subset of: tiny,lock,fslock,mirror,incompressible,floor,nodefloor
//                (nodefloor runs inside the lock job)
//   --baseline   DIR: another checkout's build (DIR/bin/provkit.js) runs each cold
//                lock and mirror in turn with this one's, so that both see the same
//                machine load; its rows are named "baseline …" and its lock files
//                must be the same bytes
import { execFileSync } from 'node:child_process';
import { createCipheriv } from 'node:crypto';
import { existsSync } from 'node:fs';
import { cp, link, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

import { writeZip } from '../test/support/zip-writer.js';
import { buildNativeFloor, findRusageTool, measure, type Measurement } from './run.js';
import { PLATFORMS, startHeavyRegistry } from './serve-heavy.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const WORK = join(ROOT, 'bench/.work');
const DEFAULT_BINARY_MB = 430;
const NODE_FLOOR = 'Node floor (bench/node-floor.mjs), registry lock work';
// The tiny lock's rows: measured without NODE_EXTRA_CA_CERTS, and as the environment gives when it sets it.
const NODE_E_0 = 'node -e 0';
const TINY = 'provkit tiny lock (README demo, -fs-mirror)';
const TINY_FLOOR = 'tiny Node floor (bench/tiny-floor.cjs)';
// provkit's start-up alone: bin/ and the bundle loaded and evaluated, no command run.
const TINY_LOAD = 'provkit --version (start-up only)';
const WITH_CA = ', with NODE_EXTRA_CA_CERTS';
const INCOMPRESSIBLE_BYTES = 200_000_000;

function median(xs: number[]): number {
  const s = [...xs].filter(Number.isFinite).sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
}

interface Row {
  label: string;
  runs: Measurement[];
}

/** Two zips of one 200 MB entry of random bytes each (deflated, goreleaser style: zlib keeps them as stored blocks). */
async function ensureIncompressible(dir: string): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const paths: string[] = [];
  for (const platform of ['linux_amd64', 'darwin_arm64']) {
    const path = join(dir, `terraform-provider-noise_1.0.0_${platform}.zip`);
    paths.push(path);
    if (existsSync(path)) continue;
    // AES-CTR over zeros: deterministic, incompressible, fast.
    const cipher = createCipheriv(
      'aes-128-ctr',
      Buffer.alloc(16, platform.length),
      Buffer.alloc(16, platform.charCodeAt(0)),
    );
    const chunk = 1 << 20;
    const data = function* (): Generator<Buffer> {
      for (let left = INCOMPRESSIBLE_BYTES; left > 0; left -= chunk)
        yield cipher.update(Buffer.alloc(Math.min(chunk, left)));
    };
    process.stderr.write(`generating ${basename(path)}\n`);
    await writeZip(`${path}.tmp`, [
      { name: 'terraform-provider-noise_v1.0.0', data: data, level: 1, unixMode: 0o100755, dataDescriptor: true },
    ]);
    await cp(`${path}.tmp`, path);
    await rm(`${path}.tmp`);
  }
  return paths;
}

/** A packed filesystem mirror (`HOST/NS/TYPE/terraform-provider-TYPE_VERSION_OS_ARCH.zip`) of `zips`, hard-linked where possible. */
async function packedMirror(root: string, host: string, type: string, zips: readonly string[]): Promise<void> {
  const dir = join(root, host, 'acme', type);
  await mkdir(dir, { recursive: true });
  for (const z of zips) await link(z, join(dir, basename(z))).catch(() => cp(z, join(dir, basename(z))));
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string' },
      'binary-mb': { type: 'string' },
      only: { type: 'string' },
      baseline: { type: 'string' },
    },
  });
  const baselineBin = values.baseline === undefined ? undefined : join(values.baseline, 'bin/provkit.js');
  if (baselineBin !== undefined && !existsSync(baselineBin))
    throw new Error(`--baseline: ${baselineBin} does not exist (run \`npm run build\` there)`);
  const runs = Number(values.runs ?? 3);
  const binaryMb = Number(values['binary-mb'] ?? DEFAULT_BINARY_MB);
  const only = new Set((values.only ?? 'tiny,lock,fslock,mirror,incompressible,floor,nodefloor').split(','));
  const generate =
    binaryMb === DEFAULT_BINARY_MB
      ? {}
      : { binaryBytes: binaryMb * 1_000_000, out: join(WORK, `packages-${binaryMb}mb`) };
  const { reg, paths } = await startHeavyRegistry(6 * 3600_000, generate);
  const zipBytes = (await Promise.all(paths.map((p) => stat(p)))).reduce((s, st) => s + st.size, 0);
  const tool = findRusageTool();
  const scratch = await mkdtemp(join(tmpdir(), 'provkit-bench-cmd-'));
  const load: number[] = [];
  const sampleLoad = (): void => void load.push(loadavg()[0]!);
  sampleLoad();
  const provider = (type: string): string =>
    `terraform {\n  required_providers {\n    ${type} = {\n      source = "${reg.host}/acme/${type}"\n    }\n  }\n}\n`;
  const project = join(scratch, 'project');
  const noiseProject = join(scratch, 'noise');
  await mkdir(project);
  await mkdir(noiseProject);
  await writeFile(join(project, 'main.tf'), provider('heavy'));
  await writeFile(join(noiseProject, 'main.tf'), provider('noise'));
  const fsMirror = join(scratch, 'fs-mirror');
  await packedMirror(fsMirror, reg.host, 'heavy', paths);
  const noise = only.has('incompressible') ? await ensureIncompressible(join(WORK, 'incompressible')) : [];
  if (noise.length > 0) await packedMirror(fsMirror, reg.host, 'noise', noise);
  const tiny = join(scratch, 'tiny');
  await cp(join(ROOT, 'mirror-fixtures'), tiny, { recursive: true });
  const rc = join(scratch, 'empty.tfrc');
  await writeFile(rc, '');
  process.env['SSL_CERT_FILE'] = reg.caPath;
  process.env['TF_CLI_CONFIG_FILE'] = rc;
  process.env['CHECKPOINT_DISABLE'] = '1';
  // The fake registry runs in this process: on a loaded shared machine it can
  // answer later than provkit's default 10 s connect timeout.
  process.env['PROVKIT_HTTP_TUNING'] ??= 'connect=120000';
  process.env['PROVKIT_CACHE_DIR'] = join(scratch, 'cache');
  const platformFlags = PLATFORMS.map((p) => `-platform=${p}`);
  const noiseFlags = ['-platform=linux_amd64', '-platform=darwin_arm64'];
  const provkit = (dir: string, bin = join(ROOT, 'bin/provkit.js')): string[] => [
    process.execPath,
    bin,
    `-chdir=${dir}`,
    '-flavor=terraform',
  ];
  const terraform = (dir: string): string[] => ['terraform', `-chdir=${dir}`];
  const haveTerraform = (() => {
    try {
      execFileSync('terraform', ['version'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  })();
  const floor = only.has('floor') ? await buildNativeFloor() : { error: 'not requested' };

  const rows = new Map<string, Row>();
  const once = async (label: string, argv: string[], before?: () => Promise<void>): Promise<void> => {
    if (before) await before();
    const r = await measure(argv, tool, scratch);
    sampleLoad();
    if (r.code !== 0) throw new Error(`${label} failed (exit ${r.code}):\n${r.stderr}`);
    let row = rows.get(label);
    if (!row) rows.set(label, (row = { label, runs: [] }));
    row.runs.push(r.measurement);
  };
  const show = (label: string): void => {
    const m = rows.get(label)?.runs ?? [];
    console.log(
      `${label.padEnd(48)} wall ${median(m.map((x) => x.wallS)).toFixed(2)} s  cpu ${median(m.map((x) => x.cpuS ?? NaN)).toFixed(2)} s  rss ${(median(m.map((x) => x.peakRssBytes ?? NaN)) / 1e6).toFixed(0)} MB`,
    );
  };
  // Cold: no hash store. Warm: a store a cold run filled.
  let stores = 0;
  const coldEnv = (): void => void (process.env['PROVKIT_HASH_STORE'] = 'off');
  const freshStore = (): string => (process.env['PROVKIT_HASH_STORE'] = join(scratch, `store-${stores++}`));
  const compared: string[] = [];
  const sameLock = async (file: string, expected: string, what: string): Promise<void> => {
    const got = await readFile(file, 'utf8');
    if (got !== expected)
      throw new Error(`${what}: the lock files differ:\n--- expected\n${expected}\n--- got\n${got}`);
  };

  /**
   * A lock job: provkit cold and terraform alternating (and `alongside`, when
   * given, after each pair), then provkit warm; all lock files compared.
   */
  const lockJob = async (
    name: string,
    dir: string,
    flags: string[],
    alongside?: () => Promise<void>,
  ): Promise<void> => {
    const lockFile = join(dir, '.terraform.lock.hcl');
    let pkLock = '';
    for (let i = 0; i < runs; i++) {
      await once(`provkit ${name} (cold)`, [...provkit(dir), 'lock', ...flags], async () => {
        await rm(lockFile, { force: true });
        coldEnv();
      });
      const got = await readFile(lockFile, 'utf8');
      if (i === 0) pkLock = got;
      else if (got !== pkLock) throw new Error(`provkit ${name}: cold runs wrote different lock files`);
      if (baselineBin !== undefined) {
        await once(`baseline provkit ${name} (cold)`, [...provkit(dir, baselineBin), 'lock', ...flags], async () => {
          await rm(lockFile, { force: true });
          coldEnv();
        });
        await sameLock(lockFile, pkLock, `${name}: baseline vs this build`);
      }
      if (haveTerraform) {
        await once(`terraform providers ${name}`, [...terraform(dir), 'providers', 'lock', ...flags], () =>
          rm(lockFile, { force: true }),
        );
        await sameLock(lockFile, pkLock, `${name}: terraform vs provkit`);
      }
      if (alongside) await alongside();
    }
    const filled = freshStore();
    await rm(lockFile, { force: true });
    await once(`(fill store) ${name}`, [...provkit(dir), 'lock', ...flags]);
    rows.delete(`(fill store) ${name}`);
    for (let i = 0; i < runs; i++) {
      await once(`provkit ${name} (warm hash store)`, [...provkit(dir), 'lock', ...flags], async () => {
        await rm(lockFile, { force: true });
        process.env['PROVKIT_HASH_STORE'] = filled;
      });
      await sameLock(lockFile, pkLock, `${name}: warm vs cold`);
    }
    compared.push(`${name}: provkit cold = provkit warm${haveTerraform ? ' = terraform' : ''}`);
    for (const l of [
      `provkit ${name} (cold)`,
      `baseline provkit ${name} (cold)`,
      `provkit ${name} (warm hash store)`,
      `terraform providers ${name}`,
    ])
      if (rows.has(l)) show(l);
    await rm(lockFile, { force: true });
  };

  try {
    if (only.has('tiny')) {
      const tinyConfig = join(tiny, 'config');
      const tinyPlatforms = ['linux_amd64', 'darwin_arm64'];
      const tinyArgs = [...provkit(tinyConfig), 'lock', '-fs-mirror=..', ...tinyPlatforms.map((p) => `-platform=${p}`)];
      // The tiny Node floor (bench/tiny-floor.cjs) hashes the packages the demo lock selects
      // (mirror-fixtures/config/main.tf: demo "~> 1.0" is 1.1.0, tools ">= 0.3" is 0.3.0).
      const tinyZips = [
        ['demo', '1.1.0'],
        ['tools', '0.3.0'],
      ].flatMap(([type, version]) =>
        tinyPlatforms.map((p) =>
          join(tiny, 'registry.example.test/acme', type!, `terraform-provider-${type}_${version}_${p}.zip`),
        ),
      );
      const floorArgs = [
        process.execPath,
        join(ROOT, 'bench/tiny-floor.cjs'),
        join(tinyConfig, 'main.tf'),
        join(scratch, 'tiny-floor.lock'),
        ...tinyZips,
      ];
      // NODE_EXTRA_CA_CERTS makes every Node process read and parse that file
      // as it starts (~45 ms for Debian's bundle of CAs here), which hides
      // start-up cost in both sides of the ratio; the target is measured
      // without it, as on a machine that does not set it.
      const withCa = process.env['NODE_EXTRA_CA_CERTS'] !== undefined;
      const clean = ['env', '-u', 'NODE_EXTRA_CA_CERTS'];
      for (let i = 0; i < runs * 3; i++) {
        const removeLock = async (): Promise<void> => {
          await rm(join(tinyConfig, '.terraform.lock.hcl'), { force: true });
          coldEnv();
        };
        if (withCa) {
          await once(`${NODE_E_0}${WITH_CA}`, [process.execPath, '-e', '0']);
          await once(`${TINY}${WITH_CA}`, tinyArgs, removeLock);
        }
        await once(NODE_E_0, [...clean, process.execPath, '-e', '0']);
        await once(TINY, [...clean, ...tinyArgs], removeLock);
        await once(TINY_FLOOR, [...clean, ...floorArgs]);
        await once(TINY_LOAD, [...clean, process.execPath, join(ROOT, 'bin/provkit.js'), '--version']);
      }
      for (const l of [`${NODE_E_0}${WITH_CA}`, `${TINY}${WITH_CA}`, NODE_E_0, TINY, TINY_FLOOR, TINY_LOAD])
        if (rows.has(l)) show(l);
    }
    if (only.has('lock')) {
      // The Node floor (bench/node-floor.mjs) beside the registry lock, on the same server and files.
      const nodeFloor = only.has('nodefloor')
        ? () =>
            once(NODE_FLOOR, [
              process.execPath,
              join(ROOT, 'bench/node-floor.mjs'),
              reg.host,
              reg.caPath,
              'acme/heavy',
              '1.0.0',
              ...PLATFORMS,
            ])
        : undefined;
      await lockJob('lock', project, platformFlags, nodeFloor);
      if (rows.has(NODE_FLOOR)) show(NODE_FLOOR);
    }
    if (only.has('fslock')) await lockJob('lock -fs-mirror', project, [`-fs-mirror=${fsMirror}`, ...platformFlags]);
    if (only.has('incompressible') && noise.length > 0)
      await lockJob('lock -fs-mirror, incompressible pair', noiseProject, [`-fs-mirror=${fsMirror}`, ...noiseFlags]);
    if (only.has('mirror')) {
      const target = join(scratch, 'mirror');
      for (let i = 0; i < runs; i++) {
        await once(
          'provkit mirror (empty target, cold)',
          [...provkit(project), 'mirror', ...platformFlags, target],
          async () => {
            await rm(target, { recursive: true, force: true });
            coldEnv();
          },
        );
        if (baselineBin !== undefined) {
          await once(
            'baseline provkit mirror (empty target, cold)',
            [...provkit(project, baselineBin), 'mirror', ...platformFlags, target],
            async () => {
              await rm(target, { recursive: true, force: true });
              coldEnv();
            },
          );
        }
        if (haveTerraform) {
          await once(
            'terraform providers mirror (empty target)',
            [...terraform(project), 'providers', 'mirror', ...platformFlags, target],
            () => rm(target, { recursive: true, force: true }),
          );
        }
      }
      await rm(target, { recursive: true, force: true });
      const filled = freshStore();
      await once('(fill store) mirror', [...provkit(project), 'mirror', ...platformFlags, target]);
      rows.delete('(fill store) mirror');
      for (let i = 0; i < runs; i++)
        await once('provkit mirror (again, same target)', [...provkit(project), 'mirror', ...platformFlags, target]);
      for (let i = 0; i < runs; i++) {
        await once(
          'provkit mirror (empty target, warm hash store)',
          [...provkit(project), 'mirror', ...platformFlags, target],
          async () => {
            await rm(target, { recursive: true, force: true });
            process.env['PROVKIT_HASH_STORE'] = filled;
          },
        );
      }
      for (const l of [
        'provkit mirror (empty target, cold)',
        'baseline provkit mirror (empty target, cold)',
        'terraform providers mirror (empty target)',
        'provkit mirror (again, same target)',
        'provkit mirror (empty target, warm hash store)',
      ])
        if (rows.has(l)) show(l);
    }
    if ('bin' in floor) {
      for (let i = 0; i < runs; i++) {
        await once('native floor (zhh1 -j 2), 5 zips', [floor.bin, '-q', '-j', '2', ...paths]);
        if (noise.length > 0)
          await once('native floor (zhh1 -j 2), incompressible pair', [floor.bin, '-q', '-j', '2', ...noise]);
      }
      show('native floor (zhh1 -j 2), 5 zips');
    }
  } finally {
    await reg.close();
    await rm(scratch, { recursive: true, force: true });
  }

  const med = (label: string, f: (m: Measurement) => number | undefined): number | undefined => {
    const r = rows.get(label);
    return r ? median(r.runs.map((x) => f(x) ?? NaN)) : undefined;
  };
  const wall = (label: string): number | undefined => med(label, (m) => m.wallS);
  const cpu = (label: string): number | undefined => med(label, (m) => m.cpuS);
  const check = (ok: boolean | undefined, text: string): string =>
    `- ${ok === undefined ? 'n/a ' : ok ? 'PASS' : 'FAIL'}  ${text}`;
  const ratio = (a: number | undefined, b: number | undefined): string =>
    a === undefined || b === undefined ? 'n/a' : (a / b).toFixed(2);
  const cores = availableParallelism();
  // Other processes, the fake registry (which runs in this process) left out.
  const others = median(
    [...rows.values()].flatMap((r) =>
      r.runs.map((x) => (x.othersShare ?? NaN) - (x.benchCpuS ?? 0) / (x.wallS * cores)),
    ),
  );
  const registryCpu = (label: string): number | undefined => med(label, (m) => m.benchCpuS);
  const floorCpu = cpu('native floor (zhh1 -j 2), 5 zips');
  /**
   * A ratio target, with what the machine allows for it in this run: the
   * target's wall time (terraform's / min) against the least time the native
   * floor's hashing of the same zips can take on these cores, with the
   * registry's CPU when it serves the job (zhh1 reads files; downloading and
   * writing only add to it). When the floor's bound is the larger, a program
   * hashing as zhh1 does (zlib's inflate, OpenSSL's SHA-256) cannot meet the
   * target on this machine in this run.
   */
  const target = (tf: string, pk: string, min: number, what: string): string => {
    const t = wall(tf);
    const p = wall(pk);
    const needed = t === undefined ? undefined : t / min;
    const registry = registryCpu(pk) ?? 0;
    const least = floorCpu === undefined ? undefined : (floorCpu + registry) / cores;
    const machine =
      needed === undefined || least === undefined
        ? ''
        : `; the target's wall ${needed.toFixed(2)} s against the native floor's bound ${least.toFixed(2)} s (its CPU${registry >= 0.1 ? " and the registry's" : ''} / ${cores} cores): ${least > needed ? 'not reachable by the native floor on this machine in this run' : "within the native floor's reach"}`;
    return check(
      t === undefined || p === undefined ? undefined : t / p >= min,
      `${what}: terraform / provkit wall = ${ratio(t, p)} (target ≥ ${min}); CPU ${ratio(cpu(tf), cpu(pk))}${machine}`,
    );
  };
  const peak = Math.max(
    ...[...rows.values()]
      .filter((r) => r.label.startsWith('provkit'))
      .map((r) => median(r.runs.map((x) => x.peakRssBytes ?? NaN)))
      .filter(Number.isFinite),
  );
  /**
   * On `cores` cores a run cannot end before its CPU and the registry's, which
   * share those cores, are spent: (client CPU + registry CPU) / cores.
   */
  const boundLine = (label: string): string => {
    const c = cpu(label);
    const r = registryCpu(label);
    const w = wall(label);
    return c === undefined || r === undefined || w === undefined
      ? `${label}: not measured`
      : `${label} ${((c + r) / cores).toFixed(2)} s (wall ${w.toFixed(2)})`;
  };
  const tinyRatio = ratio(wall(TINY), wall(NODE_E_0));
  const tinyCpuRatio = ratio(cpu(TINY), cpu(NODE_E_0));
  const nodeFloorLine = (): string => {
    const tf = wall('terraform providers lock');
    const nf = wall(NODE_FLOOR);
    const against =
      tf === undefined || nf === undefined
        ? 'terraform / Node floor: terraform not measured'
        : `terraform / Node floor wall = ${ratio(tf, nf)} (a Node program doing only this work: ${tf / nf >= 4 ? 'at or above' : 'below'} the 4× target)`;
    return `- Node floor of the registry lock (bench/node-floor.mjs: the same archives over HTTPS, hashed as they arrive, nothing else): ${against}; provkit lock (cold) / Node floor wall = ${ratio(wall('provkit lock (cold)'), nf)}, CPU ${ratio(cpu('provkit lock (cold)'), cpu(NODE_FLOOR))}`;
  };
  const noiseTf = rows.has('terraform providers lock -fs-mirror, incompressible pair');
  const lines = [
    '# Commands benchmark',
    '',
    `Written by \`npm run bench\` (bench/commands.ts) on ${new Date().toISOString()}; ${availableParallelism()} cores (${cpus()[0]?.model ?? '?'}), node ${process.version}; terraform ${haveTerraform ? 'on PATH' : 'not found'}.`,
    '',
    `Command: \`npx tsx bench/commands.ts --runs ${runs}${binaryMb === DEFAULT_BINARY_MB ? '' : ` --binary-mb ${binaryMb}`}${values.only === undefined ? '' : ` --only ${values.only}`}${values.baseline === undefined ? '' : ` --baseline ${values.baseline}`}\`. ` +
      `A provider with ${PLATFORMS.length} platforms × ${(zipBytes / PLATFORMS.length / 1e6).toFixed(0)} MB zips (${binaryMb} MB unpacked each; bench/generate.ts), served by the in-repo fake registry over HTTPS on 127.0.0.1 with signed SHA256SUMS, and the same zips as a packed filesystem mirror; ` +
      `the incompressible pair is 2 zips of one ${INCOMPRESSIBLE_BYTES / 1e6} MB entry of random bytes each. provkit runs with -flavor=terraform. ` +
      `provkit and terraform runs alternate; medians of ${runs} (the tiny lock: ${runs * 3}). Cold = \`PROVKIT_HASH_STORE=off\`; warm = a hash store a cold run filled.`,
    '',
    `Machine load: 1-minute load average ${Math.min(...load).toFixed(1)}–${Math.max(...load).toFixed(1)} during the run (2 cores shared with other engineers); other processes took a median ${(others * 100).toFixed(0)} % of the machine's CPU during the timed runs. Wall times are inflated accordingly; CPU seconds are the steadier figure. ` +
      `"Registry CPU s" is what the fake registry (in the benchmark's process) spent serving during the run, on the same ${cores} cores as the command.`,
    '',
    '| command | wall s | CPU s | registry CPU s | peak RSS MB |',
    '| --- | ---: | ---: | ---: | ---: |',
    ...[...rows.values()].map(
      (r) =>
        `| ${r.label} | ${median(r.runs.map((x) => x.wallS)).toFixed(2)} | ${median(r.runs.map((x) => x.cpuS ?? NaN)).toFixed(2)} | ${median(r.runs.map((x) => x.benchCpuS ?? NaN)).toFixed(2)} | ${(median(r.runs.map((x) => x.peakRssBytes ?? NaN)) / 1e6).toFixed(0)} |`,
    ),
    '',
    '## Ratios and targets (issue 13)',
    '',
    target('terraform providers lock', 'provkit lock (cold)', 4, 'lock from the registry, cold'),
    target('terraform providers lock -fs-mirror', 'provkit lock -fs-mirror (cold)', 4, 'lock -fs-mirror, cold'),
    target('terraform providers mirror (empty target)', 'provkit mirror (empty target, cold)', 3.5, 'mirror, cold'),
    check(
      noiseTf
        ? (cpu('provkit lock -fs-mirror, incompressible pair (cold)') ?? Infinity) <=
            (cpu('terraform providers lock -fs-mirror, incompressible pair') ?? 0) &&
            (wall('provkit lock -fs-mirror, incompressible pair (cold)') ?? Infinity) <=
              (wall('terraform providers lock -fs-mirror, incompressible pair') ?? 0)
        : undefined,
      `incompressible pair: provkit / terraform CPU = ${ratio(cpu('provkit lock -fs-mirror, incompressible pair (cold)'), cpu('terraform providers lock -fs-mirror, incompressible pair'))}, wall = ${ratio(wall('provkit lock -fs-mirror, incompressible pair (cold)'), wall('terraform providers lock -fs-mirror, incompressible pair'))} (target ≤ 1 both)`,
    ),
    check(
      rows.has(NODE_E_0) ? Number(tinyRatio) <= 1.6 : undefined,
      `tiny lock / \`node -e 0\` wall = ${tinyRatio} (target ≤ 1.6), without NODE_EXTRA_CA_CERTS; CPU ${tinyCpuRatio}. ` +
        `The tiny Node floor (bench/tiny-floor.cjs: the same packages' zh: and h1:, a lock file written atomically, nothing else) / \`node -e 0\` = ${ratio(wall(TINY_FLOOR), wall(NODE_E_0))}; ` +
        `provkit's start-up alone (\`provkit --version\`) / \`node -e 0\` = ${ratio(wall(TINY_LOAD), wall(NODE_E_0))}` +
        (rows.has(`${TINY}${WITH_CA}`)
          ? `; with NODE_EXTRA_CA_CERTS as this environment sets it, tiny lock / \`node -e 0\` = ${ratio(wall(`${TINY}${WITH_CA}`), wall(`${NODE_E_0}${WITH_CA}`))}`
          : ''),
    ),
    check(
      floorCpu === undefined ? undefined : (cpu('provkit lock (cold)') ?? Infinity) <= 1.15 * floorCpu,
      `provkit lock (cold) CPU / native floor CPU = ${ratio(cpu('provkit lock (cold)'), floorCpu)} (target ≤ 1.15); lock -fs-mirror ${ratio(cpu('provkit lock -fs-mirror (cold)'), floorCpu)}, mirror ${ratio(cpu('provkit mirror (empty target, cold)'), floorCpu)}`,
    ),
    check(
      Number.isFinite(peak) ? peak <= 250e6 : undefined,
      `peak RSS of provkit ${(peak / 1e6).toFixed(0)} MB (target ≤ 250)`,
    ),
    ...(baselineBin === undefined
      ? []
      : [
          `- this build / the baseline (${values.baseline}), wall and CPU, run in turn: ` +
            ['lock', 'lock -fs-mirror', 'lock -fs-mirror, incompressible pair', 'mirror (empty target,']
              .map((n) =>
                n.endsWith(',')
                  ? [`provkit ${n} cold)`, `baseline provkit ${n} cold)`]
                  : [`provkit ${n} (cold)`, `baseline provkit ${n} (cold)`],
              )
              .filter(([a, b]) => rows.has(a!) && rows.has(b!))
              .map(
                ([a, b]) =>
                  `${a!.replace(/^provkit /, '')} ${ratio(wall(a!), wall(b!))}, CPU ${ratio(cpu(a!), cpu(b!))}`,
              )
              .join('; '),
        ]),
    rows.has('provkit mirror (again, same target)')
      ? `- second mirror run: first (cold) / second = ${ratio(wall('provkit mirror (empty target, cold)'), wall('provkit mirror (again, same target)'))} (issue #5 target ≥ 20)`
      : '- second mirror run: not measured',
    `- warm hash store: lock terraform / provkit = ${ratio(wall('terraform providers lock'), wall('provkit lock (warm hash store)'))}, lock -fs-mirror ${ratio(wall('terraform providers lock -fs-mirror'), wall('provkit lock -fs-mirror (warm hash store)'))}, mirror ${ratio(wall('terraform providers mirror (empty target)'), wall('provkit mirror (empty target, warm hash store)'))}`,
    rows.has(NODE_FLOOR) ? nodeFloorLine() : '- Node floor: not measured',
    rows.has('provkit lock (cold)')
      ? `- the ${cores}-core bound of the registry lock, (command CPU + registry CPU) / ${cores}: ${[
          'provkit lock (cold)',
          NODE_FLOOR,
          'terraform providers lock',
        ]
          .filter((l) => rows.has(l))
          .map(boundLine)
          .join('; ')}`
      : "- the registry lock's core bound: not measured",
    'error' in floor ? `- native floor unavailable: ${floor.error}` : `- native floor: ${floor.note}`,
    `- lock files compared (identical): ${compared.join('; ') || 'none'}`,
    '',
  ];
  const suffix = binaryMb === DEFAULT_BINARY_MB ? '' : `-${binaryMb}mb`;
  await writeFile(join(ROOT, `bench/results-commands${suffix}.md`), lines.join('\n'));
  console.log(lines.join('\n'));
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) process.exitCode = await main();
