// The fleet benchmark: 20 `terraform init` at once, straight to an origin
// registry that is far away, and through a pull-through mirror
// (`provkit serve -upstream`, docs/fleet-mirror.md) that is near, cold (an
// empty store) and warm (the store filled by the cold run).
//
// The origin: the in-repo fake registry (signed SHA256SUMS, in the test
// server host process) serving 2 providers for linux_amd64, one zip each of
// `--mb` MB (default 4) of incompressible bytes, reached only through
// bench/wan-proxy.ts (a TCP proxy in a child process: RTT 60 ms, 12 MB/s per
// connection; with `--link N`, N MB/s for all connections together, as a
// site's WAN link), with relative download URLs so that archives cross it
// too. terraform reaches the origin through a `host` block; the mirror reads
// the same block. The mirror is on the fleet's side: the clients reach it
// over loopback (the LAN), only its own fetches cross the proxy.
//
// Rows, each `--runs` times (default 3; a fresh mirror and store per round):
// direct (20 clients), direct with one client (the WAN's critical path
// alone), mirror-cold, mirror-warm, mirror-warm with one client (what each
// member of a fleet of machines sees), and mirror-warm without terraform (the
// same archive GETs over HTTPS from this process: the mirror's own serving).
// Columns: median wall time and each run's, bytes the proxy carried from the
// origin, archive requests the origin answered, the CPU seconds each part
// used during the run (the clients — terraform processes reaped by this one,
// or this process for the GETs — the mirror, the proxy, the origin; from
// /proc), exits. Every lock file's h1: must equal the direct run's (a
// difference fails the run). Report the load (`uptime`) with the figures:
// the table's header carries it.
//
// Usage: npm run build && npx tsx bench/fleet.ts [--mb N] [--clients N] [--runs N] [--link MB/s]
// Writes its table to bench/.work/fleet-*.md (bench/results-fleet.md quotes
// the runs, with a reading of them). Skipped without terraform; needs 1.11.4.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { startServe, type ServeChild } from '../test/serve/child.js';
import { startHost } from '../test/support/remote/index.js';
import type { FakeProvider } from '../test/support/servers/packages.js';
import { testTls } from '../test/support/servers/tls.js';
import { buildZip } from '../test/support/zip-writer.js';
import { forkWanProxy } from './wan-proxy.js';

const { values } = parseArgs({
  options: {
    mb: { type: 'string', default: '4' },
    clients: { type: 'string', default: '20' },
    runs: { type: 'string', default: '3' },
    link: { type: 'string' },
  },
});
const MB = Number(values.mb);
const CLIENTS = Number(values.clients);
const RUNS = Number(values.runs);
/** MB/s all connections through the WAN share (absent: each connection capped, the sum not). */
const LINK = values.link === undefined ? undefined : Number(values.link);
/** This run's table (bench/results-fleet.md quotes the runs, with a reading). */
const OUT_RUN = join(
  fileURLToPath(new URL('./.work/', import.meta.url)),
  `fleet-${String(MB)}mb-${String(CLIENTS)}c${LINK === undefined ? '' : `-link${String(LINK)}`}.md`,
);
const TYPES = ['alpha', 'beta'];
const CONFIG = `terraform {\n  required_providers {\n${TYPES.map((t) => `    ${t} = { source = "registry.example.test/acme/${t}" }`).join('\n')}\n  }\n}\n`;

/** `n` deterministic incompressible bytes (SHA-256 in counter mode). */
function noise(seed: string, n: number): Buffer {
  const out = Buffer.alloc(n);
  for (let i = 0, off = 0; off < n; i++, off += 32)
    createHash('sha256')
      .update(`${seed}:${String(i)}`)
      .digest()
      .copy(out, off);
  return out;
}

async function providers(): Promise<FakeProvider[]> {
  return Promise.all(
    TYPES.map(async (type) => ({
      namespace: 'acme',
      type,
      versions: [
        {
          version: '1.0.0',
          packages: [
            {
              platform: 'linux_amd64',
              zip: await buildZip([
                { name: `terraform-provider-${type}_v1.0.0`, data: noise(type, MB * 1e6), unixMode: 0o100755 },
              ]),
            },
          ],
        },
      ],
    })),
  );
}

function terraformInit(dir: string, env: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn('terraform', ['init', '-backend=false', '-input=false', '-no-color'], {
      cwd: dir,
      env,
      stdio: 'ignore',
    });
    child.on('error', reject);
    child.on('close', (code) => resolve(code ?? -1));
  });
}

/**
 * CPU seconds (user + system) of process `pid` from /proc/PID/stat; with
 * `children`, those of its children waited for instead (the terraform
 * processes this one spawned and reaped).
 */
function cpuSeconds(pid: number, children = false): number {
  try {
    const stat = readFileSync(`/proc/${String(pid)}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // proc(5): utime, stime, cutime, cstime are fields 14–17 (f[11]–f[14]), in clock ticks (100 a second on Linux).
    const ticks = children ? Number(f[13]) + Number(f[14]) : Number(f[11]) + Number(f[12]);
    return ticks / 100;
  } catch {
    return Number.NaN;
  }
}

/** The load averages now (`uptime`'s three figures). */
const loadNow = (): string =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(', ');

interface Row {
  name: string;
  clients: number;
  wallS: number;
  originBytes: number;
  originArchiveRequests: number;
  ok: number;
  /** CPU seconds during the run: the clients (terraform, or the plain GETs of the floor row), the mirror, the WAN proxy, the origin. */
  cpu: { clients: number; mirror: number; proxy: number; origin: number };
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0
    ? Number.NaN
    : s.length % 2 === 1
      ? s[(s.length - 1) / 2]!
      : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** One GET over HTTPS, body discarded; its byte count. */
function getBytes(url: string, ca: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ca, agent: false }, (res) => {
      let n = 0;
      res.on('data', (c: Buffer) => (n += c.length));
      res.on('end', () =>
        res.statusCode === 200 ? resolve(n) : reject(new Error(`${url}: ${String(res.statusCode)}`)),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

async function main(): Promise<void> {
  const version = spawnSync('terraform', ['version'], { encoding: 'utf8' }).stdout?.split('\n')[0] ?? '';
  if (version === '') {
    console.log('bench/fleet.ts: skipped, terraform is not on PATH');
    return;
  }
  if (version !== 'Terraform v1.11.4')
    throw new Error(`terraform 1.11.4 expected on PATH, found ${JSON.stringify(version)}`);
  const tls = await testTls();
  const host = await startHost();
  const base = mkdtempSync(join(tmpdir(), 'provkit-bench-fleet-'));
  const mirrors: ServeChild[] = [];
  const loadBefore = loadNow();
  try {
    const origin = await host.registry({ providers: await providers(), urlStyle: 'root-relative' });
    const wan = await forkWanProxy([{ name: 'origin', upstreamPort: origin.port }], {
      rttMs: 60,
      perConnectionBytesPerSecond: 12e6,
      ...(LINK === undefined ? {} : { totalBytesPerSecond: LINK * 1e6 }),
    });
    const far = `https://127.0.0.1:${String(wan.ports['origin'])}`;
    writeFileSync(join(base, 'cert.pem'), tls.certPem);
    writeFileSync(join(base, 'key.pem'), tls.keyPem);
    writeFileSync(join(base, 'cas.pem'), `${origin.caPem}${tls.caPem}`);
    writeFileSync(
      join(base, 'origin.tfrc'),
      `host "registry.example.test" {\n  services = {\n    "providers.v1" = "${far}/v1/providers/"\n  }\n}\n`,
    );
    // The mirror is on the fleet's side of the WAN (loopback here, the LAN in a fleet); only its fetches cross the proxy.
    const startMirror = async (store: string): Promise<ServeChild> => {
      const m = await startServe(
        [
          '-upstream',
          '-allow=registry.example.test',
          '-allow-address=127.0.0.1',
          '-listen=127.0.0.1:0',
          `-tls-cert=${join(base, 'cert.pem')}`,
          `-tls-key=${join(base, 'key.pem')}`,
          store,
        ],
        base,
        {
          SSL_CERT_FILE: join(base, 'cas.pem'),
          TF_CLI_CONFIG_FILE: join(base, 'origin.tfrc'),
          PROVKIT_CACHE_DIR: join(base, 'cache'),
          HOME: base,
        },
      );
      mirrors.push(m);
      writeFileSync(
        join(base, 'mirror.tfrc'),
        `provider_installation {\n  network_mirror {\n    url = "${m.url}"\n  }\n}\n`,
      );
      return m;
    };

    const rows: Row[] = [];
    let reference: string | undefined;
    const h1Of = (lock: string): string =>
      [...lock.matchAll(/"(h1:[^"]+)"/g)]
        .map((m) => m[1])
        .sort()
        .join(' ');
    let seq = 0;
    const measure = async (
      name: string,
      clients: number,
      mirror: ServeChild | undefined,
      work: (dirs: string[]) => Promise<number[]>,
      locks: boolean,
    ): Promise<void> => {
      await wan.reset();
      await origin.mark();
      const dirs = Array.from({ length: clients }, (_, i) => {
        const d = join(base, `${name}-${String(seq)}`, String(i));
        mkdirSync(d, { recursive: true });
        writeFileSync(join(d, 'main.tf'), CONFIG);
        return d;
      });
      seq += 1;
      const cpu0 = {
        clients: cpuSeconds(process.pid, true),
        self: cpuSeconds(process.pid),
        mirror: mirror ? cpuSeconds(mirror.pid) : 0,
        proxy: cpuSeconds(wan.pid ?? -1),
        origin: cpuSeconds(host.pid),
      };
      const t0 = performance.now();
      const exits = await work(dirs);
      const wallS = (performance.now() - t0) / 1000;
      const cpu = {
        // The floor row's clients are this process's own GETs; terraform's are its reaped children.
        clients: locks ? cpuSeconds(process.pid, true) - cpu0.clients : cpuSeconds(process.pid) - cpu0.self,
        mirror: mirror ? cpuSeconds(mirror.pid) - cpu0.mirror : 0,
        proxy: cpuSeconds(wan.pid ?? -1) - cpu0.proxy,
        origin: cpuSeconds(host.pid) - cpu0.origin,
      };
      const stats = await wan.stats();
      const log = await origin.log();
      if (locks)
        for (const d of dirs) {
          const h1 = h1Of(readFileSync(join(d, '.terraform.lock.hcl'), 'utf8'));
          reference ??= h1;
          if (h1 !== reference) throw new Error(`${name}: a lock file's h1: differ from the direct run's`);
        }
      rmSync(join(base, `${name}-${String(seq - 1)}`), { recursive: true, force: true });
      rows.push({
        name,
        clients,
        wallS,
        originBytes: stats.connections.reduce((s, c) => s + c.bytesDown, 0),
        originArchiveRequests: log.filter((r) => r.pathname.endsWith('.zip')).length,
        ok: exits.filter((e) => e === 0).length,
        cpu,
      });
      console.log(rows.at(-1));
    };
    const inits =
      (rc: string, ca: string) =>
      (dirs: string[]): Promise<number[]> => {
        const env = {
          PATH: process.env['PATH'] ?? '',
          HOME: base,
          SSL_CERT_FILE: ca,
          TF_CLI_CONFIG_FILE: rc,
          CHECKPOINT_DISABLE: '1',
        };
        return Promise.all(dirs.map((d) => terraformInit(d, env)));
      };
    const originRc = join(base, 'origin.tfrc');
    const mirrorRc = join(base, 'mirror.tfrc');
    for (let round = 0; round < RUNS; round++) {
      await measure('direct', CLIENTS, undefined, inits(originRc, origin.caPath), true);
      await measure('direct, one client', 1, undefined, inits(originRc, origin.caPath), true);
      const mirror = await startMirror(join(base, `store-${String(round)}`));
      await measure('mirror-cold', CLIENTS, mirror, inits(mirrorRc, tls.caPath), true);
      await measure('mirror-warm', CLIENTS, mirror, inits(mirrorRc, tls.caPath), true);
      await measure('mirror-warm, one client', 1, mirror, inits(mirrorRc, tls.caPath), true);
      // The mirror alone: the archives the warm fleet downloads, fetched by plain HTTPS GETs (no terraform).
      await measure(
        'mirror-warm, GETs only',
        CLIENTS,
        mirror,
        async (dirs) => {
          const urls = TYPES.map(
            (t) => `${mirror.url}registry.example.test/acme/${t}/terraform-provider-${t}_1.0.0_linux_amd64.zip`,
          );
          await Promise.all(dirs.flatMap(() => urls.map((u) => getBytes(u, tls.caPem))));
          return dirs.map(() => 0);
        },
        false,
      );
      await mirror.stop();
      mirrors.splice(mirrors.indexOf(mirror), 1);
    }
    await wan.close();

    const names = [...new Set(rows.map((r) => r.name))];
    const med = (name: string, f: (r: Row) => number): number => median(rows.filter((r) => r.name === name).map(f));
    // Each terraform row against going direct with as many clients; the GETs-only row has no terraform to compare.
    const directFor = (clients: number): number => med(clients === 1 ? 'direct, one client' : 'direct', (r) => r.wallS);
    const cpuText = (name: string): string =>
      (['clients', 'mirror', 'proxy', 'origin'] as const).map((k) => med(name, (r) => r.cpu[k]).toFixed(1)).join(' / ');
    const lines = [
      '| run | clients | wall (s), median | each run (s) | vs direct (as many clients) | bytes from the origin | archive requests at the origin | CPU s: clients / mirror / proxy / origin | exits |',
      '| --- | ---: | ---: | --- | ---: | ---: | ---: | --- | --- |',
      ...names.map((name) => {
        const rs = rows.filter((r) => r.name === name);
        const wall = med(name, (r) => r.wallS);
        const r0 = rs[0]!;
        return `| ${name} | ${String(r0.clients)} | ${wall.toFixed(2)} | ${rs.map((r) => r.wallS.toFixed(2)).join(', ')} | ${name.endsWith('GETs only') ? '' : `${(directFor(r0.clients) / wall).toFixed(1)}×`} | ${(med(name, (r) => r.originBytes) / 1e6).toFixed(1)} MB | ${String(med(name, (r) => r.originArchiveRequests))} | ${cpuText(name)} | ${rs.map((r) => `${String(r.ok)}/${String(r.clients)}`).join(', ')} |`;
      }),
    ];
    const report = [
      `### ${String(CLIENTS)} clients, 2 providers × ${String(MB)} MB, RTT 60 ms, 12 MB/s per connection${LINK === undefined ? '' : `, ${String(LINK)} MB/s for all connections together`}`,
      '',
      `${version}; ${String(availableParallelism())} cores (${cpus()[0]?.model ?? '?'}); load (uptime) before ${loadBefore}, after ${loadNow()}; ${String(RUNS)} rounds.`,
      `Command: \`npx tsx bench/fleet.ts --mb ${String(MB)} --clients ${String(CLIENTS)} --runs ${String(RUNS)}${LINK === undefined ? '' : ` --link ${String(LINK)}`}\``,
      '',
      ...lines,
      '',
    ].join('\n');
    console.log(report);
    mkdirSync(dirname(OUT_RUN), { recursive: true });
    writeFileSync(OUT_RUN, report);
  } finally {
    await Promise.all(mirrors.map((m) => m.stop()));
    await host.close();
    rmSync(base, { recursive: true, force: true });
  }
}

await main();
