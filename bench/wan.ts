// The WAN benchmark: terraform and provkit locking from a registry that is
// far away, as users' registries are, instead of over loopback.
//
// The scenario: 8 providers × 5 platforms (40 zips, ~396 MB, mostly
// incompressible: one binary of random bytes each, plus text files),
// generated deterministically into bench/.work/wan/ (not committed), served
// by the in-repo fake registry over HTTPS with signed SHA256SUMS
// (test/support/servers/registry.ts). As on registry.terraform.io for
// providers released on GitHub, the archive URL the registry gives answers
// 302 to a second host, the "CDN" (a second HTTPS server). Both are reached
// through bench/wan-proxy.ts (a TCP proxy in a child process, so TLS is
// delayed and capped like every byte), by name: the registry as
// `127.0.0.1:PORT` (the provider source's hostname), the CDN as
// `localhost:PORT` (resolved by each client; terraform 1.11.4 and Node both
// read /etc/hosts). terraform trusts the test CA through SSL_CERT_FILE, as
// provkit does.
//
// Rows (each: terraform, then provkit, cold: no hash store, no plugin cache,
// no lock file):
//   loopback     no delay, no cap (still through the proxy, which counts)
//   rtt60        RTT 60 ms, 12 MB/s per connection
//   rtt150       RTT 150 ms, 12 MB/s per connection
//   cap          RTT 60 ms, 12 MB/s per connection, 25 MB/s for all together
//                (the ideal: bytes ÷ 25 MB/s)
//   mirror60     `providers mirror` instead of `providers lock`: the same
//                packages into an empty directory, RTT 60 ms, 12 MB/s per
//                connection (terraform's took 57 s here: one run of the row
//                adds about 70 s to `npm run bench`, so it is in the default set)
//   memory       provkit alone, -downloads=16: 16 providers of one ~100 MB
//                package each (the same zip under 16 names), RTT 60 ms,
//                12 MB/s per connection: its peak RSS (target ≤ 250 MB)
// Columns: wall time, terraform / provkit, requests (both servers' logs),
// connections (the proxy's), round trips in series on the critical path, and
// before the first archive byte (bench/wan-analysis.ts `longestSeries`), peak
// RSS, bytes received; provkit's timeline at 150 ms (when each request of
// each package ran, how many archive streams were in flight). Every
// lock file must be byte for byte the same (terraform = provkit, in every
// row), and so must every mirror directory (each file's path and bytes); a
// difference fails the run. A calibration of the proxy comes first.
//
// Usage: npx tsx bench/wan.ts [--runs N] [--only calibrate,loopback,rtt60,rtt150,cap,mirror60,memory] [--provkit-only]
//   [--baseline DIR]
// (--provkit-only: a quick check of provkit alone, printed, bench/results-wan.md untouched; --baseline DIR
// adds, in turn with each run, the build of another checkout DIR (its bin/provkit.js), so that both see the
// same machine load, and prints the medians of both.)
// Writes bench/results-wan.md (after each row, so a stopped run leaves what
// it measured) and, per run, the exchanges it saw to bench/.work/wan/runs/.
import { execFileSync } from 'node:child_process';
import { createCipheriv, createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { Agent as HttpAgent, get as httpGet, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, get as httpsGet } from 'node:https';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

import { startServer, type TestServer } from '../test/support/servers/http-server.js';
import { startFakeRegistry, type FakeRegistry } from '../test/support/servers/registry.js';
import { writeZip } from '../test/support/zip-writer.js';
import { findRusageTool, measure, type RusageTool } from './run.js';
import { PLATFORMS } from './serve-heavy.js';
import {
  exchangesOf,
  longestSeries,
  HANDSHAKES,
  streamsInFlight,
  type Exchange,
  type ServerRequest,
  type StreamProfile,
} from './wan-analysis.js';
import { forkWanProxy, preciseNow, routeTotals, type WanProfile, type WanProxyControl } from './wan-proxy.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const WORK = join(ROOT, 'bench/.work/wan');
const RESULTS = join(ROOT, 'bench/results-wan.md');
const PROVIDERS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel'];
const VERSION = '1.0.0';
/** The random binary of each package: 40 zips of ~9.9 MB, 396 MB in all. */
const BINARY_BYTES = 9_900_000;
/** Bump when the packages' content or shape changes: forces regeneration. */
const FORMAT = 2;
const MB = 1e6;
/** The memory row's providers: one ~100 MB package each (bench/PROFILE.md "WAN", peak RSS with 16 streams). */
const MEMORY_PROVIDERS = Array.from({ length: 16 }, (_, i) => `mem${String(i + 1).padStart(2, '0')}`);
const MEMORY_PLATFORM = 'linux_amd64';
const MEMORY_BINARY_BYTES = 100_000_000;
const MEMORY_ZIP = 'memory-100mb.zip';
const MEMORY_LABEL =
  'provkit lock -downloads=16 of 16 providers × 1 platform, ~100 MB each, RTT 60 ms, 12 MB/s per connection';
/** A response this large is an archive's stream (the metadata documents are a few KB). */
const STREAM_BYTES = 1 * MB;

interface Row {
  readonly id: string;
  readonly label: string;
  /** What both tools run (default `lock`: `providers lock`; `mirror`: `providers mirror` into an empty directory). */
  readonly command?: 'lock' | 'mirror';
  readonly profile: WanProfile;
  /** The target for terraform / provkit (bench/PROFILE.md, "WAN"). */
  readonly target?: number;
}

const ROWS: readonly Row[] = [
  { id: 'loopback', label: 'loopback, no cap', profile: { rttMs: 0 } },
  {
    id: 'rtt60',
    label: 'RTT 60 ms, 12 MB/s per connection',
    profile: { rttMs: 60, perConnectionBytesPerSecond: 12 * MB },
    target: 8,
  },
  {
    id: 'rtt150',
    label: 'RTT 150 ms, 12 MB/s per connection',
    profile: { rttMs: 150, perConnectionBytesPerSecond: 12 * MB },
    target: 12,
  },
  {
    id: 'cap',
    label: 'RTT 60 ms, 12 MB/s per connection, 25 MB/s total',
    profile: { rttMs: 60, perConnectionBytesPerSecond: 12 * MB, totalBytesPerSecond: 25 * MB },
  },
  {
    id: 'mirror60',
    label: 'mirror, RTT 60 ms, 12 MB/s per connection',
    command: 'mirror',
    profile: { rttMs: 60, perConnectionBytesPerSecond: 12 * MB },
  },
];

// ---------------------------------------------------------------------------
// Packages.

interface WanPackage {
  readonly type: string;
  readonly platform: string;
  /** The zip's name in bench/.work/wan/packages/. */
  readonly file: string;
  readonly bytes: number;
}

/** Deterministic random bytes (AES-CTR over zeros, keyed by the package): incompressible, fast. */
function* randomChunks(key: string, total: number): Generator<Buffer> {
  const seed = createHash('sha256').update(key).digest();
  const cipher = createCipheriv('aes-128-ctr', seed.subarray(0, 16), seed.subarray(16, 32));
  const chunk = 1 << 20;
  for (let left = total; left > 0; left -= chunk) yield cipher.update(Buffer.alloc(Math.min(chunk, left)));
}

/** A changelog-like text (compressible), deterministic. */
function changelog(type: string): string {
  const lines: string[] = [];
  for (let i = 0; i < 400; i++)
    lines.push(`## 1.0.${i}\n\n* resource \`${type}_thing_${i % 17}\`: fixed the handling of attribute ${i % 23}.\n`);
  return lines.join('\n');
}

/** The 40 packages in bench/.work/wan/packages/ (generated when missing; a manifest records what is there). */
async function ensureWanPackages(): Promise<WanPackage[]> {
  const dir = join(WORK, 'packages');
  const manifestPath = join(dir, 'manifest.json');
  const wanted = PROVIDERS.flatMap((type) => PLATFORMS.map((platform) => ({ type, platform })));
  const manifest = await readFile(manifestPath, 'utf8')
    .then((t) => JSON.parse(t) as { format: number; binaryBytes: number; packages: WanPackage[] })
    .catch(() => undefined);
  if (manifest?.format === FORMAT && manifest.binaryBytes === BINARY_BYTES) {
    const present = await Promise.all(
      manifest.packages.map(async (p) => (await stat(join(dir, p.file)).catch(() => undefined))?.size === p.bytes),
    );
    if (manifest.packages.length === wanted.length && present.every(Boolean)) return manifest.packages;
  }
  await mkdir(dir, { recursive: true });
  process.stderr.write(`wan: generating ${wanted.length} packages into ${dir}\n`);
  const started = performance.now();
  const packages: WanPackage[] = [];
  // zlib deflates on its thread pool: two at a time keep both cores busy.
  let next = 0;
  await Promise.all(
    [0, 1].map(async () => {
      for (let w = wanted[next++]; w; w = wanted[next++]) {
        const file = `terraform-provider-${w.type}_${VERSION}_${w.platform}.zip`;
        const path = join(dir, file);
        const exe = `terraform-provider-${w.type}_v${VERSION}${w.platform.startsWith('windows_') ? '.exe' : ''}`;
        const layout = await writeZip(`${path}.tmp`, [
          { name: 'CHANGELOG.md', data: changelog(w.type) },
          { name: 'LICENSE', data: `Copyright acme. Test package ${w.type} ${VERSION} ${w.platform}.\n` },
          { name: 'README.md', data: `# ${w.type}\n\nA benchmark package (bench/wan.ts).\n` },
          {
            name: exe,
            data: () => randomChunks(`${w.type} ${w.platform}`, BINARY_BYTES),
            level: 1,
            unixMode: 0o100755,
            dataDescriptor: true,
          },
        ]);
        await rename(`${path}.tmp`, path);
        packages.push({ ...w, file, bytes: layout.size });
      }
    }),
  );
  packages.sort((a, b) => a.file.localeCompare(b.file));
  await writeFile(
    manifestPath,
    `${JSON.stringify({ format: FORMAT, binaryBytes: BINARY_BYTES, packages }, null, 2)}\n`,
  );
  process.stderr.write(`wan: generated in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  return packages;
}

/** The memory row's zip (one random binary of 100 MB), generated when missing; its path. */
async function ensureMemoryPackage(): Promise<string> {
  const path = join(WORK, 'packages', MEMORY_ZIP);
  const sizeFile = `${path}.size`;
  const want = await readFile(sizeFile, 'utf8').catch(() => '');
  if (want !== '' && (await stat(path).catch(() => undefined))?.size === Number(want)) return path;
  await mkdir(join(WORK, 'packages'), { recursive: true });
  process.stderr.write(`wan: generating ${path}\n`);
  const layout = await writeZip(`${path}.tmp`, [
    { name: 'README.md', data: '# memory\n\nA benchmark package (bench/wan.ts, the memory row).\n' },
    {
      name: `terraform-provider-mem_v${VERSION}`,
      data: () => randomChunks('memory', MEMORY_BINARY_BYTES),
      level: 1,
      unixMode: 0o100755,
      dataDescriptor: true,
    },
  ]);
  await rename(`${path}.tmp`, path);
  await writeFile(sizeFile, String(layout.size));
  return path;
}

// ---------------------------------------------------------------------------
// The servers behind the proxy.

interface Servers {
  readonly reg: FakeRegistry;
  readonly cdn: TestServer;
  /** A plain-HTTP server for the calibration. */
  readonly plain: TestServer;
  readonly proxy: WanProxyControl;
  /** The registry's hostname as clients name it (`127.0.0.1:PORT`, the proxy's). */
  readonly registryHost: string;
  readonly bytes: number;
}

const CALIBRATION_BYTES = 100 * MB;

async function startServers(packages: readonly WanPackage[], memoryZip: string | undefined): Promise<Servers> {
  const lifetimeMs = 12 * 3600_000;
  const zips = new Map<string, Buffer>();
  for (const p of packages) zips.set(`${p.type} ${p.platform}`, await readFile(join(WORK, 'packages', p.file)));
  const memory = memoryZip === undefined ? undefined : await readFile(memoryZip);
  /** Every (type, platform) served, with its zip. */
  const served: Array<{ type: string; platform: string; zip: Buffer }> = [
    ...PROVIDERS.flatMap((type) =>
      PLATFORMS.map((platform) => ({ type, platform, zip: zips.get(`${type} ${platform}`)! })),
    ),
    ...(memory ? MEMORY_PROVIDERS.map((type) => ({ type, platform: MEMORY_PLATFORM, zip: memory })) : []),
  ];
  const reg = await startFakeRegistry({
    lifetimeMs,
    // Root-relative URLs resolve against the host the client asked (the proxy), not the server's own port.
    urlStyle: 'root-relative',
    providers: [...new Set(served.map((x) => x.type))].map((type) => ({
      namespace: 'acme',
      type,
      versions: [
        {
          version: VERSION,
          packages: served.filter((x) => x.type === type).map(({ platform, zip }) => ({ platform, zip })),
        },
      ],
    })),
  });
  const files = new Map<string, Buffer>();
  for (const x of served) files.set(reg.paths.archive('acme', x.type, VERSION, x.platform), x.zip);
  const small = Buffer.from('calibration\n');
  const cdn = await startServer({
    lifetimeMs,
    handler: (_req, url) => {
      const pathname = decodeURIComponent(url.pathname);
      const body = pathname === '/calibration' ? small : files.get(pathname);
      return body ? { headers: { 'content-type': 'application/octet-stream' }, body } : undefined;
    },
  });
  const big = Buffer.alloc(CALIBRATION_BYTES, 0x5a);
  const plain = await startServer({
    tls: false,
    lifetimeMs,
    handler: (_req, url) => ({ body: url.pathname === '/big' ? big : small }),
  });
  const proxy = await forkWanProxy(
    [
      { name: 'registry', upstreamPort: reg.port },
      { name: 'cdn', upstreamPort: cdn.port },
      { name: 'plain', upstreamPort: plain.port },
    ],
    { rttMs: 0 },
  );
  // The registry's archive URLs answer 302 to the CDN, by name, through the proxy.
  for (const { type, platform } of served) {
    const path = reg.paths.archive('acme', type, VERSION, platform);
    reg.setFault(path, {
      kind: 'redirect',
      location: `https://localhost:${proxy.ports['cdn']}${path.split('/').map(encodeURIComponent).join('/')}`,
    });
  }
  return {
    reg,
    cdn,
    plain,
    proxy,
    registryHost: `127.0.0.1:${proxy.ports['registry']}`,
    bytes: [...zips.values()].reduce((s, z) => s + z.length, 0),
  };
}

// ---------------------------------------------------------------------------
// Calibration: does the proxy do what it says?

interface Calibration {
  readonly what: string;
  readonly expected: string;
  readonly measured: string;
}

async function calibrate(s: Servers, caPem: string): Promise<Calibration[]> {
  const out: Calibration[] = [];
  const timed = (get: () => Promise<number>): Promise<{ ms: number; bytes: number }> => {
    const t0 = preciseNow();
    return get().then((bytes) => ({ ms: preciseNow() - t0, bytes }));
  };
  const receive = (res: IncomingMessage, resolve: (n: number) => void): void => {
    let n = 0;
    res.on('data', (b: Buffer) => (n += b.length));
    res.on('end', () => resolve(n));
  };
  const plainGet = (path: string, agent: HttpAgent): Promise<number> =>
    new Promise((resolve, reject) =>
      httpGet({ host: '127.0.0.1', port: s.proxy.ports['plain'], path, agent }, (res) => receive(res, resolve)).on(
        'error',
        reject,
      ),
    );
  const tlsGet = (agent: HttpsAgent): Promise<number> =>
    new Promise((resolve, reject) =>
      httpsGet({ host: 'localhost', port: s.proxy.ports['cdn'], path: '/calibration', agent, ca: caPem }, (res) =>
        receive(res, resolve),
      ).on('error', reject),
    );
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
  const N = 5;
  for (const rtt of [60, 150]) {
    await s.proxy.configure({ rttMs: rtt, perConnectionBytesPerSecond: 12 * MB });
    const fresh: number[] = [];
    const kept: number[] = [];
    const tlsFresh: number[] = [];
    const tlsKept: number[] = [];
    for (let i = 0; i < N; i++) {
      const agent = new HttpAgent({ keepAlive: true });
      fresh.push((await timed(() => plainGet('/', agent))).ms);
      kept.push((await timed(() => plainGet('/', agent))).ms);
      agent.destroy();
      // No TLS session to resume: a new agent each time.
      const tls = new HttpsAgent({ keepAlive: true, maxCachedSessions: 0 });
      tlsFresh.push((await timed(() => tlsGet(tls))).ms);
      tlsKept.push((await timed(() => tlsGet(tls))).ms);
      tls.destroy();
    }
    const row = (what: string, rtts: number, xs: number[]): Calibration => ({
      what: `${what}, RTT ${rtt} ms (median of ${N})`,
      expected: `${rtts} RTT = ${rtts * rtt} ms`,
      measured: `${median(xs).toFixed(1)} ms (${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)})`,
    });
    out.push(
      row('plain HTTP GET, new connection (TCP handshake + request)', 2, fresh),
      row('plain HTTP GET, kept-alive connection', 1, kept),
      row('HTTPS GET, new connection (TCP + TLS 1.3 + request)', 3, tlsFresh),
      row('HTTPS GET, kept-alive connection', 1, tlsKept),
    );
  }
  const transfer = async (profile: WanProfile, streams: number, expectS: number, what: string): Promise<void> => {
    await s.proxy.configure(profile);
    const t0 = preciseNow();
    const each = await Promise.all(
      Array.from({ length: streams }, () => timed(() => plainGet('/big', new HttpAgent({ keepAlive: false })))),
    );
    const total = (preciseNow() - t0) / 1000;
    const bytes = each.reduce((n, e) => n + e.bytes, 0);
    out.push({
      what,
      expected: `${expectS.toFixed(2)} s`,
      measured: `${total.toFixed(2)} s (${(bytes / total / MB).toFixed(2)} MB/s${streams > 1 ? `; streams ended at ${each.map((e) => (e.ms / 1000).toFixed(2)).join(', ')} s` : ''})`,
    });
  };
  const big = CALIBRATION_BYTES / MB;
  await transfer(
    { rttMs: 60, perConnectionBytesPerSecond: 12 * MB },
    1,
    CALIBRATION_BYTES / (12 * MB) + 0.12,
    `${big} MB over one new connection at 12 MB/s, RTT 60 ms (bytes ÷ rate + 2 RTT)`,
  );
  await transfer(
    { rttMs: 60, perConnectionBytesPerSecond: 12 * MB, totalBytesPerSecond: 25 * MB },
    4,
    (4 * CALIBRATION_BYTES) / (25 * MB) + 0.12,
    `4 × ${big} MB at once, 12 MB/s per connection, 25 MB/s total, RTT 60 ms (bytes ÷ total + 2 RTT)`,
  );
  await transfer(
    { rttMs: 0 },
    1,
    NaN,
    `${big} MB through the proxy with no delay and no cap (its own ceiling; the loopback row moves ~400 MB)`,
  );
  out[out.length - 1] = { ...out[out.length - 1]!, expected: 'well above 100 MB/s' };
  await s.proxy.reset();
  return out;
}

// ---------------------------------------------------------------------------
// Runs.

type Tool = 'terraform' | 'provkit';

interface RunResult {
  readonly tool: Tool;
  readonly wallS: number;
  readonly cpuS: number | undefined;
  readonly rssMB: number | undefined;
  readonly requests: number;
  readonly byKind: ReadonlyMap<string, number>;
  readonly connections: { registry: number; cdn: number };
  readonly bytesDown: number;
  readonly series: { roundTrips: number; chain: Exchange[] };
  /** The longest chain that ends with the first archive's exchange from the CDN: the head of the path. */
  readonly toFirstByte: { roundTrips: number; chain: Exchange[]; seconds: number };
  readonly streams: StreamProfile;
  readonly exchanges: Exchange[];
  /** When the process was started (epoch ms). */
  readonly t0: number;
  readonly load: string;
  /** What the run wrote: the lock file's text, or for a mirror row each file of the directory (path, SHA-256). */
  readonly output: string;
}

/** Every file below `dir` (hidden ones included), sorted: its path and its bytes' SHA-256, one per line. */
async function directoryListing(dir: string): Promise<string> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const files = entries
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
  const lines = await Promise.all(
    files.map(
      async (f) =>
        `${f} ${createHash('sha256')
          .update(await readFile(join(dir, f)))
          .digest('hex')}`,
    ),
  );
  return `${lines.join('\n')}\n`;
}

/** What an exchange was, from its server and path. */
function kindOf(e: { server: string; method: string; pathname: string }): string {
  if (e.method === HANDSHAKES) return `new connection to the ${e.server === 'cdn' ? 'CDN' : e.server} (TCP + TLS)`;
  const p = e.pathname;
  const k =
    e.server === 'cdn'
      ? 'archive from the CDN'
      : p === '/.well-known/terraform.json'
        ? 'discovery'
        : p.endsWith('/versions')
          ? 'versions'
          : p.includes('/download/')
            ? 'download metadata'
            : p.endsWith('_SHA256SUMS')
              ? 'SHA256SUMS'
              : p.endsWith('_SHA256SUMS.sig')
                ? 'signature'
                : p.endsWith('.zip')
                  ? 'archive (302 to the CDN)'
                  : 'other';
  return e.method === 'GET' ? k : `${k} (${e.method})`;
}

/** The package an exchange is about: `TYPE OS_ARCH`, or `TYPE` for a version's SHA256SUMS and signature. */
function packageOf(pathname: string): string | undefined {
  const download = /\/v1\/providers\/[^/]+\/([^/]+)\/[^/]+\/download\/([^/]+)\/([^/]+)$/.exec(pathname);
  if (download) return `${download[1]} ${download[2]}_${download[3]}`;
  const zip = /terraform-provider-([^_/]+)_[^_/]+_([^_/]+_[^_/]+)\.zip$/.exec(pathname);
  if (zip) return `${zip[1]} ${zip[2]}`;
  const sums = /terraform-provider-([^_/]+)_[^_/]+_SHA256SUMS(\.sig)?$/.exec(pathname);
  if (sums) return sums[1];
  const versions = /\/v1\/providers\/[^/]+\/([^/]+)\/versions$/.exec(pathname);
  return versions ? versions[1] : undefined;
}

function uptime(): string {
  try {
    return execFileSync('uptime', { encoding: 'utf8' })
      .trim()
      .replace(/^.*load average:\s*/, '');
  } catch {
    return loadavg()
      .map((x) => x.toFixed(2))
      .join(', ');
  }
}

async function runOnce(
  tool: Tool,
  row: Row,
  s: Servers,
  project: string,
  scratch: string,
  rusage: RusageTool,
  options: { platforms?: readonly string[]; extra?: readonly string[]; bin?: string } = {},
): Promise<RunResult> {
  const lockFile = join(project, '.terraform.lock.hcl');
  const mirror = row.command === 'mirror' ? join(scratch, `mirror-${tool}`) : undefined;
  await rm(lockFile, { force: true });
  await rm(join(project, '.terraform'), { recursive: true, force: true });
  if (mirror !== undefined) await rm(mirror, { recursive: true, force: true });
  await s.proxy.reset();
  s.reg.log.length = 0;
  s.cdn.log.length = 0;
  const platforms = (options.platforms ?? PLATFORMS).map((p) => `-platform=${p}`);
  const command = mirror === undefined ? ['lock'] : ['mirror'];
  const target = mirror === undefined ? [] : [mirror];
  const argv =
    tool === 'terraform'
      ? ['terraform', `-chdir=${project}`, 'providers', ...command, ...platforms, ...target]
      : [
          process.execPath,
          options.bin ?? join(ROOT, 'bin/provkit.js'),
          `-chdir=${project}`,
          '-flavor=terraform',
          ...command,
          ...(options.extra ?? []),
          ...platforms,
          ...target,
        ];
  const load = uptime();
  const t0 = preciseNow();
  const r = await measure(argv, rusage, scratch);
  if (r.code !== 0) throw new Error(`${tool} (${row.label}) failed (exit ${r.code}):\n${r.stderr}\n${r.stdout}`);
  // The client has exited; its connections close as the proxy passes the FINs on.
  await new Promise((resolve) => setTimeout(resolve, 100 + 2 * row.profile.rttMs));
  const stats = await s.proxy.stats();
  const requests: ServerRequest[] = [
    ...s.reg.log.map((q) => ({ ...q, server: 'registry' })),
    ...s.cdn.log.map((q) => ({ ...q, server: 'cdn' })),
  ];
  const exchanges = exchangesOf(requests, stats.connections, row.profile.rttMs);
  const byKind = new Map<string, number>();
  for (const e of exchanges) if (e.method !== HANDSHAKES) byKind.set(kindOf(e), (byKind.get(kindOf(e)) ?? 0) + 1);
  const totals = routeTotals(stats);
  const firstArchive = exchanges
    .filter((e) => e.server === 'cdn' && e.method === 'GET' && e.bytesDown >= STREAM_BYTES)
    .sort((a, b) => a.firstByte - b.firstByte)[0];
  const result: RunResult = {
    tool,
    wallS: r.measurement.wallS,
    cpuS: r.measurement.cpuS,
    rssMB: r.measurement.peakRssBytes === undefined ? undefined : r.measurement.peakRssBytes / MB,
    requests: requests.length,
    byKind,
    connections: { registry: totals.get('registry')?.connections ?? 0, cdn: totals.get('cdn')?.connections ?? 0 },
    bytesDown: [...totals.values()].reduce((n, t) => n + t.bytesDown, 0),
    series: longestSeries(exchanges),
    toFirstByte: {
      ...(firstArchive ? longestSeries(exchanges, firstArchive) : { roundTrips: NaN, chain: [] }),
      seconds: firstArchive ? (firstArchive.firstByte - t0) / 1000 : NaN,
    },
    streams: streamsInFlight(exchanges, STREAM_BYTES),
    exchanges,
    t0,
    load,
    output: mirror === undefined ? await readFile(lockFile, 'utf8') : await directoryListing(mirror),
  };
  await mkdir(join(WORK, 'runs'), { recursive: true });
  await writeFile(
    join(WORK, 'runs', `${row.id}-${tool}.json`),
    JSON.stringify({ row, t0, wallS: result.wallS, exchanges, connections: stats.connections.length }, null, 1),
  );
  return result;
}

// ---------------------------------------------------------------------------
// Report.

const fmt = (x: number | undefined, digits = 1): string =>
  x === undefined || !Number.isFinite(x) ? '–' : x.toFixed(digits);

function median<T>(xs: readonly T[], f: (x: T) => number | undefined): number | undefined {
  const v = xs
    .map(f)
    .filter((x): x is number => x !== undefined && Number.isFinite(x))
    .sort((a, b) => a - b);
  return v.length === 0 ? undefined : v[Math.floor(v.length / 2)];
}

/** The run whose wall time is the median (its counts and timeline are shown). */
function medianRun(runs: readonly RunResult[]): RunResult | undefined {
  const sorted = [...runs].sort((a, b) => a.wallS - b.wallS);
  return sorted[Math.floor(sorted.length / 2)];
}

interface RowResult {
  readonly row: Row;
  readonly tf: RunResult[];
  readonly pk: RunResult[];
}

function chainSummary(run: RunResult): string {
  const count = new Map<string, number>();
  for (const e of run.series.chain) {
    const k = kindOf(e);
    count.set(k, (count.get(k) ?? 0) + e.roundTrips);
  }
  return [...count].map(([k, n]) => `${k} ${n}`).join(', ');
}

/** One line per package: when each of its exchanges ran, in seconds from the start of the process. */
function timeline(run: RunResult): string[] {
  const t = (ms: number): string => ((ms - run.t0) / 1000).toFixed(2);
  const span = (e: Exchange | undefined): string => (e ? `${t(e.start)}–${t(e.done)}` : '');
  const byPackage = new Map<string, Exchange[]>();
  const shared = new Map<string, Exchange[]>();
  const other: Exchange[] = [];
  const handshakes = run.exchanges.filter((e) => e.method === HANDSHAKES);
  for (const e of run.exchanges) {
    if (e.method === HANDSHAKES) continue;
    const p = packageOf(e.pathname);
    if (p === undefined) other.push(e);
    else if (p.includes(' ')) byPackage.set(p, [...(byPackage.get(p) ?? []), e]);
    else shared.set(p, [...(shared.get(p) ?? []), e]);
  }
  const firstPackageAt = Math.min(
    ...[...byPackage.values()].flat().map((e) => e.start),
    ...[...shared.values()]
      .flat()
      .filter((e) => kindOf(e) !== 'versions')
      .map((e) => e.start),
  );
  const lines = [
    `Times in seconds from the start of the process (${run.tool}, wall ${run.wallS.toFixed(2)} s). ` +
      'Each cell is request sent → last response byte received; the CDN cell is sent → first byte → last byte. ' +
      '`+` marks the first request on a new connection (whose TCP and TLS handshakes, two round trips, came before it was sent).',
    '',
    `Before any package (new connections' handshakes, counted from when the client opened them, as “connect”): ${other
      .concat([...shared.values()].flat().filter((e) => kindOf(e) === 'versions'))
      .concat(handshakes.filter((h) => h.start < firstPackageAt))
      .sort((a, b) => a.start - b.start)
      .map((e) =>
        e.method === HANDSHAKES
          ? `connect ${e.server} ${span(e)}`
          : `${kindOf(e)}${packageOf(e.pathname) ? ` ${packageOf(e.pathname)}` : ''} ${span(e)}${e.first ? '+' : ''}`,
      )
      .join('; ')}`,
    '',
    '| package | download metadata | SHA256SUMS | signature | archive (302) | CDN: sent → first byte → done | MB |',
    '| --- | --- | --- | --- | --- | --- | ---: |',
  ];
  const rows = [...byPackage].sort(
    ([, a], [, b]) => Math.min(...a.map((e) => e.start)) - Math.min(...b.map((e) => e.start)),
  );
  const seenDocs = new Set<Exchange>();
  for (const [pkg, es] of rows) {
    const of = (k: string): Exchange | undefined => es.find((e) => kindOf(e) === k);
    const meta = of('download metadata');
    // The provider's documents, shown on the first package that waited for them.
    const docs = (shared.get(pkg.split(' ')[0]!) ?? []).filter(
      (e) => kindOf(e) !== 'versions' && !seenDocs.has(e) && meta !== undefined && e.start >= meta.start,
    );
    const sums = docs.find((e) => kindOf(e) === 'SHA256SUMS');
    const sig = docs.find((e) => kindOf(e) === 'signature');
    for (const d of [sums, sig]) if (d) seenDocs.add(d);
    const redirect = of('archive (302 to the CDN)');
    const cdn = of('archive from the CDN');
    const mark = (e: Exchange | undefined): string => (e?.first ? '+' : '');
    lines.push(
      `| ${pkg} | ${span(meta)}${mark(meta)} | ${span(sums)}${mark(sums)} | ${span(sig)}${mark(sig)} | ${span(redirect)}${mark(redirect)} | ${cdn ? `${t(cdn.start)} → ${t(cdn.firstByte)} → ${t(cdn.done)}${mark(cdn)}` : ''} | ${cdn ? (cdn.bytesDown / MB).toFixed(1) : ''} |`,
    );
  }
  // Streams in flight, sampled every half second.
  const samples: string[] = [];
  const archives = run.exchanges.filter((e) => e.bytesDown >= STREAM_BYTES);
  const end = Math.max(...run.exchanges.map((e) => e.done));
  for (let at = run.t0; at <= end; at += 500)
    samples.push(String(archives.filter((e) => e.firstByte <= at && e.done > at).length));
  lines.push(
    '',
    `Archive streams in flight every 0.5 s from the start: ${samples.join(' ')}`,
    `Seconds spent with k streams in flight (k = 0, 1, 2, …) between the first archive byte and the last: ${run.streams.secondsAt.map((x) => x.toFixed(1)).join(', ')}`,
  );
  return lines;
}

function report(
  results: readonly RowResult[],
  calibration: readonly Calibration[],
  meta: {
    runs: number;
    only: string;
    bytes: number;
    started: string;
    tfVersion: string;
    load: string[];
    memory?: RunResult;
  },
): string {
  const tfOf = (r: RowResult): number | undefined => median(r.tf, (x) => x.wallS);
  const pkOf = (r: RowResult): number | undefined => median(r.pk, (x) => x.wallS);
  const pair = (r: RowResult, f: (x: RunResult) => number | undefined, digits = 0): string =>
    `${fmt(median(r.tf, f), digits)} / ${fmt(median(r.pk, f), digits)}`;
  const lines = [
    '# WAN benchmark',
    '',
    `Written by \`npm run bench\` (bench/wan.ts), started ${meta.started}; ${availableParallelism()} cores (${cpus()[0]?.model ?? '?'}), node ${process.version}, ${meta.tfVersion}.`,
    '',
    `Command: \`npx tsx bench/wan.ts --runs ${meta.runs}${meta.only ? ` --only ${meta.only}` : ''}\`. ` +
      `${PROVIDERS.length} providers × ${PLATFORMS.length} platforms: ${PROVIDERS.length * PLATFORMS.length} zips, ${(meta.bytes / MB).toFixed(0)} MB (each one random binary of ${(BINARY_BYTES / MB).toFixed(2)} MB, incompressible, plus text files), ` +
      'served by the in-repo fake registry over HTTPS with signed SHA256SUMS; each archive URL answers 302 to a second HTTPS host (the CDN, `localhost:PORT`). ' +
      'Both hosts are reached through bench/wan-proxy.ts, a TCP proxy in its own process: every byte (TLS included) held RTT/2 each way, one more RTT before a new connection’s first byte (its TCP handshake), ' +
      'a token bucket per connection and direction, and in the capped row one shared by all connections, served in turn. ' +
      'Cold runs: no hash store (`PROVKIT_HASH_STORE=off`), no plugin cache, no lock file; terraform then provkit in each round; provkit with `-flavor=terraform`.',
    '',
    'Requests: both servers’ logs (every request, redirects and `HEAD`s included). Connections: the proxy’s count. ' +
      '**Round trips in series**: the longest chain of exchanges that ran one after another (each sent after the previous one’s last byte reached the client), ' +
      'each request counted as 1 round trip and each new connection’s handshakes (TCP, then TLS 1.3) as an exchange of 2; so RTT × round trips in series is latency the run spent one wait after another, at the least ' +
      '(bench/wan-analysis.ts). A chain may pass through a wait for a free download slot as well as for data: both delay the run; so a slot that fetches archive after archive adds a round trip or two per archive. ' +
      '“Before the first archive byte”: the longest such chain that ends with the first archive’s request to the CDN, and when that archive’s first byte arrived: the head of the critical path (discovery → versions → metadata → bytes). ' +
      'Peak RSS: GNU time’s maximum resident set of the process. MB received: bytes from the proxy to the client.',
    '',
    '## Calibration of the proxy',
    '',
    '| check | expected | measured |',
    '| --- | --- | --- |',
    ...calibration.map((c) => `| ${c.what} | ${c.expected} | ${c.measured} |`),
    ...(calibration.length === 0 ? ['| (not run: `--only` without `calibrate`) | | |'] : []),
    '',
    '## Results',
    '',
    `Medians of ${meta.runs} run${meta.runs === 1 ? '' : 's'} per cell. Machine load (1, 5, 15 minutes, \`uptime\`) at the start of each run: in the last column.`,
    '',
    '| link | terraform s | provkit s | terraform / provkit | requests tf / pk | connections tf / pk | round trips in series tf / pk | … of them before the first archive byte tf / pk (at s) | peak RSS MB tf / pk | MB received tf / pk | load at each run (tf; pk) |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |',
  ];
  for (const r of results) {
    const tf = tfOf(r);
    const pk = pkOf(r);
    const ratio = tf !== undefined && pk !== undefined ? tf / pk : undefined;
    const target =
      r.row.target === undefined
        ? ''
        : ` (target ≥ ${r.row.target}: ${ratio !== undefined && ratio >= r.row.target ? 'met' : 'not met'})`;
    lines.push(
      `| ${r.row.label} | ${fmt(tf, 2)} | ${fmt(pk, 2)} | ${fmt(ratio, 2)}×${target} | ${pair(r, (x) => x.requests)} | ${pair(r, (x) => x.connections.registry + x.connections.cdn)} | ${pair(r, (x) => x.series.roundTrips)} | ${pair(r, (x) => x.toFirstByte.roundTrips)} (${pair(r, (x) => x.toFirstByte.seconds, 2)}) | ${pair(r, (x) => x.rssMB)} | ${pair(r, (x) => x.bytesDown / MB)} | ${r.tf.map((x) => x.load).join(' / ')}; ${r.pk.map((x) => x.load).join(' / ')} |`,
    );
  }
  lines.push('');
  if (results.some((r) => r.row.id === 'loopback'))
    lines.push(
      '- The loopback row goes through the proxy too (so that it counts connections and bytes; its own ceiling is in the calibration). It is CPU-bound: the client, its hash workers, the fake registry’s TLS and the proxy share the machine’s cores, so it moves with the load (last column); the other rows wait on the network.',
    );
  const cap = results.find((r) => r.row.profile.totalBytesPerSecond !== undefined);
  if (cap) {
    const ideal = meta.bytes / cap.row.profile.totalBytesPerSecond!;
    const pk = pkOf(cap);
    lines.push(
      `- Under the total cap the least time is bytes ÷ cap = ${(meta.bytes / MB).toFixed(0)} MB ÷ ${cap.row.profile.totalBytesPerSecond! / MB} MB/s = ${ideal.toFixed(2)} s: ` +
        `provkit ${fmt(pk, 2)} s = ${fmt(pk === undefined ? undefined : pk / ideal, 3)}× (target ≤ 1.10: ${pk !== undefined && pk <= 1.1 * ideal ? 'met' : 'not met'}); terraform ${fmt(tfOf(cap), 2)} s = ${fmt((tfOf(cap) ?? NaN) / ideal, 2)}×.`,
    );
  }
  const r60 = results.find((r) => r.row.id === 'rtt60');
  const r150 = results.find((r) => r.row.id === 'rtt150');
  if (r60 && r150) {
    const slope = (f: (r: RowResult) => number | undefined): string =>
      fmt((((f(r150) ?? NaN) - (f(r60) ?? NaN)) * 1000) / (r150.row.profile.rttMs - r60.row.profile.rttMs), 0);
    lines.push(
      `- Cross-check of the round trips in series from the wall times alone: (wall at 150 ms − wall at 60 ms) ÷ 90 ms = ${slope(tfOf)} for terraform, ${slope(pkOf)} for provkit (the same links but for the RTT; it also counts what a longer RTT costs that is not a whole exchange, e.g. a stream's first bytes).`,
    );
  }
  for (const r of results) {
    const pk = medianRun(r.pk);
    const tf = medianRun(r.tf);
    if (!pk || !tf) continue;
    lines.push(
      `- ${r.row.label}: archive streams in flight, provkit at most ${pk.streams.max}, on average ${pk.streams.mean.toFixed(2)} between its first and last archive byte; terraform at most ${tf.streams.max}, on average ${tf.streams.mean.toFixed(2)}. ` +
        `CPU s tf / pk: ${pair(r, (x) => x.cpuS, 2)}. Round trips in series by kind, provkit: ${chainSummary(pk)}; terraform: ${chainSummary(tf)}.`,
    );
  }
  const same = results.every((r) => [...r.tf, ...r.pk].every((x) => x.output === (r.tf[0] ?? r.pk[0])?.output));
  const what = results.some((r) => r.row.command === 'mirror') ? 'Lock files and mirror directories' : 'Lock files';
  lines.push(
    `- ${what}: ${same ? 'byte-identical, terraform and provkit, in every run of every row' : 'DIFFERENT (the run failed)'}.`,
  );
  const kindsRow = results.find((r) => r.row.id === 'rtt60') ?? results[0];
  if (kindsRow) {
    const tf = medianRun(kindsRow.tf);
    const pk = medianRun(kindsRow.pk);
    const kinds = [...new Set([...(tf?.byKind.keys() ?? []), ...(pk?.byKind.keys() ?? [])])].sort();
    lines.push(
      '',
      `### Requests by kind (${kindsRow.row.label})`,
      '',
      '| request | terraform | provkit |',
      '| --- | ---: | ---: |',
      ...kinds.map((k) => `| ${k} | ${tf?.byKind.get(k) ?? 0} | ${pk?.byKind.get(k) ?? 0} |`),
      `| connections: registry, CDN | ${tf?.connections.registry ?? 0}, ${tf?.connections.cdn ?? 0} | ${pk?.connections.registry ?? 0}, ${pk?.connections.cdn ?? 0} |`,
    );
  }
  const slowest = results.find((r) => r.row.id === 'rtt150') ?? results.at(-1);
  const pkRun = slowest ? medianRun(slowest.pk) : undefined;
  if (slowest && pkRun) {
    lines.push(
      '',
      `## provkit's timeline (${slowest.row.label})`,
      '',
      `Its run is also in bench/.work/wan/runs/${slowest.row.id}-provkit.json (every exchange, epoch ms).`,
      '',
      ...timeline(pkRun),
      '',
      `The chain of ${pkRun.series.roundTrips} round trips in series: ${pkRun.series.chain
        .map((e) => `${kindOf(e)}${packageOf(e.pathname) ? ` ${packageOf(e.pathname)}` : ''} (${e.roundTrips})`)
        .join(' → ')}.`,
      '',
      `Before the first archive byte (${pkRun.toFirstByte.roundTrips} round trips, ${pkRun.toFirstByte.seconds.toFixed(2)} s): ${pkRun.toFirstByte.chain
        .map((e) => `${kindOf(e)}${packageOf(e.pathname) ? ` ${packageOf(e.pathname)}` : ''} (${e.roundTrips})`)
        .join(' → ')}.`,
    );
  }
  if (meta.memory) {
    const m = meta.memory;
    lines.push(
      '',
      '## Memory: 16 streams of 100 MB',
      '',
      `${MEMORY_LABEL}: ${m.wallS.toFixed(2)} s, **peak RSS ${fmt(m.rssMB, 0)} MB** (target ≤ 250 MB: ${m.rssMB !== undefined && m.rssMB <= 250 ? 'met' : 'not met'}), ` +
        `at most ${m.streams.max} archive streams at once (on average ${m.streams.mean.toFixed(2)}), CPU ${fmt(m.cpuS, 2)} s, ${fmt(m.bytesDown / MB, 0)} MB received; load at the start ${m.load}. ` +
        'Each stream is hashed as it arrives; a stream whose hasher falls behind is not read (2 MiB in flight per stream), so memory does not grow with the streams (hashing/pool.ts).',
    );
  }
  lines.push('', `Machine load (\`uptime\`) at the start and the end of the benchmark: ${meta.load.join('; ')}.`, '');
  return lines.join('\n');
}

// ---------------------------------------------------------------------------

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string' },
      only: { type: 'string' },
      'provkit-only': { type: 'boolean' },
      baseline: { type: 'string' },
    },
  });
  // --baseline DIR (with --provkit-only): another build's bin/provkit.js, run in turn with this one's, so
  // that both see the same load.
  const baseline = values.baseline === undefined ? undefined : join(values.baseline, 'bin/provkit.js');
  const provkitOnly = values['provkit-only'] === true || baseline !== undefined;
  const walls = new Map<string, number[]>();
  const runs = Number(values.runs ?? 1);
  const only = new Set((values.only ?? 'calibrate,loopback,rtt60,rtt150,cap,mirror60,memory').split(','));
  const started = new Date().toISOString();
  const load = [uptime()];
  const packages = await ensureWanPackages();
  const rusage = findRusageTool();
  const tfVersion = (() => {
    try {
      return execFileSync('terraform', ['version'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
        env: { ...process.env, CHECKPOINT_DISABLE: '1' },
      })
        .split('\n')[0]!
        .trim();
    } catch {
      return '';
    }
  })();
  if (!tfVersion) {
    console.log('wan: terraform is not on PATH; the WAN benchmark compares against it, so it is skipped.');
    return 0;
  }
  const s = await startServers(packages, only.has('memory') ? await ensureMemoryPackage() : undefined);
  const scratch = await mkdtemp(join(tmpdir(), 'provkit-bench-wan-'));
  try {
    const project = join(scratch, 'project');
    await mkdir(project);
    await writeFile(
      join(project, 'main.tf'),
      `terraform {\n  required_providers {\n${PROVIDERS.map((p) => `    ${p} = {\n      source = "${s.registryHost}/acme/${p}"\n    }\n`).join('')}  }\n}\n`,
    );
    const rc = join(scratch, 'empty.tfrc');
    await writeFile(rc, '');
    const env = process.env;
    env['SSL_CERT_FILE'] = s.reg.caPath;
    env['TF_CLI_CONFIG_FILE'] = rc;
    env['CHECKPOINT_DISABLE'] = '1';
    env['PROVKIT_HASH_STORE'] = 'off';
    env['PROVKIT_CACHE_DIR'] = join(scratch, 'cache');
    for (const v of [
      'TF_PLUGIN_CACHE_DIR',
      'HTTPS_PROXY',
      'https_proxy',
      'HTTP_PROXY',
      'http_proxy',
      'ALL_PROXY',
      'all_proxy',
    ])
      delete env[v];

    const calibration = only.has('calibrate') ? await calibrate(s, s.reg.caPem) : [];
    const results: RowResult[] = [];
    let memory: RunResult | undefined;
    const write = async (): Promise<void> => {
      await writeFile(
        RESULTS,
        report(results, calibration, {
          runs,
          only: values.only ?? '',
          bytes: s.bytes,
          started,
          tfVersion,
          load: [...load, uptime()],
          ...(memory ? { memory } : {}),
        }),
      );
    };
    if (!provkitOnly) await write();
    for (const row of ROWS) {
      if (!only.has(row.id)) continue;
      await s.proxy.configure(row.profile);
      const rr: RowResult = { row, tf: [], pk: [] };
      results.push(rr);
      for (let i = 0; i < runs; i++) {
        if (provkitOnly) {
          for (const [name, bin] of baseline
            ? [['baseline', baseline] as const, ['this', undefined] as const]
            : [['this', undefined] as const]) {
            const pk = await runOnce('provkit', row, s, project, scratch, rusage, bin === undefined ? {} : { bin });
            const key = `${row.label}: ${name}`;
            walls.set(key, [...(walls.get(key) ?? []), pk.wallS]);
            console.log(
              `${key}: provkit ${pk.wallS.toFixed(2)} s (${pk.requests} requests, ${pk.connections.registry + pk.connections.cdn} connections, ${pk.series.roundTrips} round trips in series, ${pk.toFirstByte.roundTrips} before the first archive byte, at most ${pk.streams.max} streams, on average ${pk.streams.mean.toFixed(2)}, peak RSS ${pk.rssMB} MB, CPU ${pk.cpuS?.toFixed(2)} s; load ${uptime()})`,
              `\n  before the first archive byte: ${pk.toFirstByte.chain.map((e) => `${kindOf(e)}${packageOf(e.pathname) ? ` ${packageOf(e.pathname)}` : ''} (${e.roundTrips})`).join(' → ')}`,
            );
          }
          continue;
        }
        const tf = await runOnce('terraform', row, s, project, scratch, rusage);
        rr.tf.push(tf);
        const pk = await runOnce('provkit', row, s, project, scratch, rusage);
        rr.pk.push(pk);
        const written = row.command === 'mirror' ? 'mirror directories' : 'lock files';
        if (pk.output !== tf.output)
          throw new Error(
            `${row.label}: the ${written} differ:\n--- terraform\n${tf.output}\n--- provkit\n${pk.output}`,
          );
        const first = results.find((r) => r.row.command === row.command)?.tf[0]?.output;
        if (first !== undefined && pk.output !== first)
          throw new Error(`${row.label}: the ${written} differ from the first such row's`);
        console.log(
          `${row.label}: terraform ${tf.wallS.toFixed(2)} s (${tf.requests} requests, ${tf.connections.registry + tf.connections.cdn} connections, ${tf.series.roundTrips} round trips in series, ${tf.toFirstByte.roundTrips} before the first archive byte), ` +
            `provkit ${pk.wallS.toFixed(2)} s (${pk.requests} requests, ${pk.connections.registry + pk.connections.cdn} connections, ${pk.series.roundTrips} round trips in series, ${pk.toFirstByte.roundTrips} before the first archive byte, at most ${pk.streams.max} streams)`,
        );
        await write();
      }
    }
    if (only.has('memory')) {
      const memoryProject = join(scratch, 'memory');
      await mkdir(memoryProject, { recursive: true });
      await writeFile(
        join(memoryProject, 'main.tf'),
        `terraform {\n  required_providers {\n${MEMORY_PROVIDERS.map((p) => `    ${p} = {\n      source = "${s.registryHost}/acme/${p}"\n    }\n`).join('')}  }\n}\n`,
      );
      const row = ROWS.find((x) => x.id === 'rtt60')!;
      await s.proxy.configure(row.profile);
      memory = await runOnce(
        'provkit',
        { ...row, id: 'memory', label: MEMORY_LABEL },
        s,
        memoryProject,
        scratch,
        rusage,
        { platforms: [MEMORY_PLATFORM], extra: ['-downloads=16'] },
      );
      console.log(
        `${MEMORY_LABEL}: provkit ${memory.wallS.toFixed(2)} s, peak RSS ${fmt(memory.rssMB, 0)} MB, at most ${memory.streams.max} streams, CPU ${fmt(memory.cpuS, 2)} s`,
      );
    }
    if (provkitOnly) {
      for (const [key, xs] of walls)
        console.log(
          `${key}: median ${fmt(
            median(xs, (x) => x),
            2,
          )} s of ${xs.map((x) => x.toFixed(2)).join(', ')}`,
        );
      return 0;
    }
    await write();
    console.log((await readFile(RESULTS, 'utf8')).split('\n## provkit')[0]);
    return 0;
  } finally {
    await s.proxy.close();
    await s.reg.close();
    await s.cdn.close();
    await s.plain.close();
    await rm(scratch, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (!existsSync(join(ROOT, 'bin/provkit.js'))) throw new Error('run `npm run build` first');
  process.exitCode = await main();
}
