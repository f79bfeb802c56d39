// How `lock` (and `install`, one package per provider) schedules a registry's downloads, as the servers (another
// process) see it: by default 8 archives in flight whatever the cores once
// the first streams leave the cores idle (throttled archives: the link is the
// limit; installer/download-queue.ts `networkQueue`),
// `-downloads=N` over `PROVKIT_DOWNLOADS`, every package's download metadata
// asked before the archives (not one package at a time inside a download
// slot), and the largest announced archive (OpenTofu's `packages` size)
// first among those waiting. Archives are throttled, so that each download
// lasts long enough for the overlaps to be read from the request log; no
// duration is asserted. Where the order of the queue is pinned, the first
// archives are held by the registry until every package's metadata was
// answered (the `after` fault of test/support/servers/http-server.ts), so that
// every package has joined the queue before a slot frees: the order is the
// servers' fact, not a race with the load. When the registry's archive URLs redirect to a CDN
// host, the waiting archives' redirects are learnt while they wait
// (HttpClient.learnRedirect; lock and mirror alike, installer/redirects-ahead.ts),
// so that their downloads start at the CDN.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { e2eWorkspace, requiresTf, runCli, type E2eWorkspace } from '../support/e2e.js';
import { startHost, type RemoteLoggedRequest, type RemoteServer, type ServerHost } from '../support/remote/index.js';
import type { FakeProvider } from '../support/servers/packages.js';
import { buildZip } from '../support/zip-writer.js';
import { pseudoRandom } from './fixtures/large-packages.js';

/** Ten platforms, so that the default of 8 downloads leaves two waiting. */
const PLATFORMS = [
  'linux_amd64',
  'linux_arm64',
  'linux_386',
  'linux_arm',
  'darwin_amd64',
  'darwin_arm64',
  'windows_amd64',
  'windows_386',
  'freebsd_amd64',
  'freebsd_arm',
];
/** Each platform's archive a different size (incompressible): the order of the queue is the order of sizes. */
const sizeOf = (i: number): number => 48 * 1024 + ((i * 7) % 10) * 12 * 1024;

/**
 * `install`'s packages (one platform, one package per provider), the
 * smallest first in the configuration's (alphabetical) order, so that in the
 * order they join the queue the largest would tend to leave last.
 */
const INSTALLED = ['alpha', 'bravo', 'charlie', 'delta', 'echo'].map((type, i) => ({
  type,
  size: (64 + 8 * i) * 1024,
}));

/** Provider `acme/TYPE` 1.0.0 whose archives are of the sizes given, stored (incompressible). */
async function incompressible(
  type: string,
  packages: ReadonlyArray<{ platform: string; seed: string; size: number }>,
): Promise<FakeProvider> {
  const name = `terraform-provider-${type}_v1.0.0`;
  return {
    namespace: 'acme',
    type,
    versions: [
      {
        version: '1.0.0',
        packages: await Promise.all(
          packages.map(async ({ platform, seed, size }) => ({
            platform,
            zip: await buildZip([{ name, data: pseudoRandom(seed, size), method: 0 }]),
          })),
        ),
      },
    ],
  };
}

let host: ServerHost;
let reg: RemoteServer;
/** A registry whose archive URLs answer 302 to {@link cdn}, as registries send archives to a CDN host. */
let redirecting: RemoteServer;
let cdn: RemoteServer;
/** A registry that serves its archives itself, so that an archive can be held until its metadata requests were answered. */
let sameHost: RemoteServer;
let w: E2eWorkspace;

beforeAll(async () => {
  host = await startHost();
  const providers = [
    await incompressible(
      'sched',
      PLATFORMS.map((platform, i) => ({ platform, seed: platform, size: sizeOf(i) })),
    ),
  ];
  // install's providers, one package each.
  const installed = await Promise.all(
    INSTALLED.map(({ type, size }) => incompressible(type, [{ platform: 'linux_amd64', seed: type, size }])),
  );
  reg = await host.registry({ packagesExtension: true, archiveHost: 'separate', providers });
  // Each archive takes about a second: the downloads' overlaps are visible in the log.
  await reg.setFault(/\.zip$/, { kind: 'throttle', bytesPerSecond: 96 * 1024 }, 'archives');
  redirecting = await host.registry({ packagesExtension: true, archiveHost: 'same', providers });
  cdn = await host.registry({ packagesExtension: true, archiveHost: 'same', providers });
  for (const platform of PLATFORMS) {
    const path = await redirecting.path('archive', 'acme', 'sched', '1.0.0', platform);
    await redirecting.setFault(path, { kind: 'redirect', location: `${cdn.origin}${path}` }, 'main');
  }
  await cdn.setFault(/\.zip$/, { kind: 'throttle', bytesPerSecond: 96 * 1024 }, 'main');
  sameHost = await host.registry({
    packagesExtension: true,
    archiveHost: 'same',
    providers: [...providers, ...installed],
  });
  w = e2eWorkspace(reg.caPath, { PROVKIT_HASH_STORE: 'off' });
}, 120_000);

afterAll(async () => {
  await host?.close();
});

/** The archive requests of a run (whichever server served them), and the most that were in flight at once (from when each was read to its last byte). */
function archives(log: readonly RemoteLoggedRequest[]): { requests: RemoteLoggedRequest[]; maxInFlight: number } {
  const requests = log.filter((q) => q.pathname.endsWith('.zip'));
  let maxInFlight = 0;
  for (const q of requests) {
    const inFlight = requests.filter((o) => o.at <= q.at && (o.finishedAt ?? Infinity) > q.at).length;
    maxInFlight = Math.max(maxInFlight, inFlight);
  }
  return { requests: requests.sort((a, b) => a.at - b.at), maxInFlight };
}

const platformOf = (q: RemoteLoggedRequest): string => /_([a-z0-9]+_[a-z0-9]+)\.zip$/.exec(q.pathname)![1]!;

async function lock(
  name: string,
  args: string[],
  env: Record<string, string> = {},
  from: RemoteServer = reg,
  command: string[] = ['lock'],
): Promise<RemoteLoggedRequest[]> {
  const p = w.project(name, { 'main.tf': requiresTf({ sched: `${from.host}/acme/sched` }) });
  await from.mark();
  const r = await runCli([...command, ...PLATFORMS.map((x) => `-platform=${x}`), ...args], {
    cwd: p,
    env: { ...w.env, ...env },
    timeoutMs: 120_000,
  });
  expect(r.code, r.stderr).toBe(0);
  expect(w.tmpLeftovers()).toEqual([]);
  return from.log();
}

describe('downloads (lock, mirror, install): a network budget of its own, metadata ahead of bytes, largest first', () => {
  it('by default 8 archives in flight at once on a link that the first streams do not fill (not one per core), and every download metadata asked before any archive ended', async () => {
    const log = await lock('default', []);
    const { requests, maxInFlight } = archives(log);
    expect(requests).toHaveLength(PLATFORMS.length);
    expect(maxInFlight).toBe(8);
    const metadata = log.filter((q) => q.server === 'main' && q.pathname.includes('/download/'));
    expect(metadata).toHaveLength(PLATFORMS.length);
    const firstArchiveDone = Math.min(...requests.map((q) => q.finishedAt ?? Infinity));
    expect(metadata.every((q) => q.at < firstArchiveDone)).toBe(true);
  }, 120_000);

  it('-downloads=2 wins over PROVKIT_DOWNLOADS: 2 in flight, and the waiting archives start largest first', async () => {
    // The first two archives (begun as their download metadata named them) are held by the registry until every
    // package's download metadata was answered, then sent slowly (1.5-5 s): every package has joined the queue
    // before a slot frees, however loaded the machine, so the others must leave it by size. (A slot that frees
    // earlier rightly takes the largest of those already waiting; the order then depends on the timing.)
    await sameHost.clearFaults();
    await sameHost.setFault(/\.zip$/, {
      kind: 'after',
      request: /\/download\//,
      count: PLATFORMS.length,
      finished: true,
      then: { kind: 'throttle', bytesPerSecond: 32 * 1024 },
      times: 2,
    });
    const log = await lock('two', ['-downloads=2'], { PROVKIT_DOWNLOADS: '5' }, sameHost);
    const { requests, maxInFlight } = archives(log);
    expect(requests).toHaveLength(PLATFORMS.length);
    expect(maxInFlight).toBe(2);
    const metadata = log.filter((q) => q.pathname.includes('/download/'));
    expect(metadata).toHaveLength(PLATFORMS.length);
    // The hold worked: every package's metadata was answered before the first waiting archive was asked for.
    expect(metadata.every((q) => (q.finishedAt ?? Infinity) < requests[2]!.at)).toBe(true);
    const waited = requests.slice(2).map((q) => sizeOf(PLATFORMS.indexOf(platformOf(q))));
    expect(waited).toEqual([...waited].sort((a, b) => b - a));
  }, 120_000);

  it.each([
    ['lock', ['lock']],
    ['mirror', ['mirror']],
  ])(
    '%s, archives redirected to a CDN host: the redirects of the waiting archives are learnt while they wait, each archive URL asked once',
    async (name, command) => {
      await cdn.mark();
      const args = command[0] === 'mirror' ? ['-downloads=5', 'out'] : ['-downloads=5'];
      const log = await lock(`cdn-${name}`, args, {}, redirecting, command);
      const cdnArchives = (await cdn.log()).filter((q) => q.pathname.endsWith('.zip'));
      const asked = log.filter((q) => q.server === 'main' && q.pathname.endsWith('.zip'));
      // Every archive URL answered its 302 once (a download's own, or the probe that learnt it), every archive came from the CDN once.
      expect(asked.map((q) => q.status)).toEqual(PLATFORMS.map(() => 302));
      expect(new Set(asked.map((q) => q.pathname)).size).toBe(PLATFORMS.length);
      expect(cdnArchives).toHaveLength(PLATFORMS.length);
      // Learnt ahead: more archive URLs asked before the first archive arrived whole than there are slots.
      const firstDone = Math.min(...cdnArchives.map((q) => q.finishedAt ?? Infinity));
      expect(asked.filter((q) => q.at < firstDone).length).toBeGreaterThan(5);
    },
    120_000,
  );

  it('install -downloads=1: one archive at a time, the waiting ones largest first', async () => {
    const p = w.project('install', {
      'main.tf': requiresTf(Object.fromEntries(INSTALLED.map(({ type }) => [type, `${sameHost.host}/acme/${type}`]))),
    });
    // install downloads a package once its signature is checked: the first archive is held until every
    // provider's signature was sent, then sent slowly (2-3 s), so that every package has joined the queue first.
    await sameHost.clearFaults();
    await sameHost.setFault(/\.zip$/, {
      kind: 'after',
      request: /_SHA256SUMS\.sig$/,
      count: INSTALLED.length,
      finished: true,
      then: { kind: 'throttle', bytesPerSecond: 32 * 1024 },
      times: 1,
    });
    await sameHost.mark();
    const r = await runCli(['install', '-platform=linux_amd64', '-downloads=1'], {
      cwd: p,
      env: w.env,
      timeoutMs: 120_000,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(w.tmpLeftovers()).toEqual([]);
    const log = await sameHost.log();
    const { requests, maxInFlight } = archives(log);
    expect(maxInFlight).toBe(1);
    // The hold worked: every signature was sent before the first waiting archive was asked for.
    const signatures = log.filter((q) => q.pathname.endsWith('_SHA256SUMS.sig'));
    expect(signatures).toHaveLength(INSTALLED.length);
    expect(signatures.every((q) => (q.finishedAt ?? Infinity) < requests[1]!.at)).toBe(true);
    const typeOf = (q: RemoteLoggedRequest): string => /terraform-provider-([a-z]+)_/.exec(q.pathname)![1]!;
    expect(requests.map(typeOf).sort()).toEqual(INSTALLED.map((x) => x.type).sort());
    // The first starts as its metadata is checked; the others, all queued by the time it ends, by size.
    const waited = requests.slice(1).map((q) => INSTALLED.find((x) => x.type === typeOf(q))!.size);
    expect(waited).toEqual([...waited].sort((a, b) => b - a));
  }, 120_000);
});
