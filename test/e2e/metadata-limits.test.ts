// Issue 11 #12: metadata documents had no size limit (apart from discovery's):
// a versions response without end grew provkit to 6.4 GB until V8 died (exit
// 133), and a 500 MB versions document was read whole. Every metadata URL
// kind now has a limit (src/sources/http-util.ts METADATA_LIMITS), enforced
// while the body streams. Each kind is served over its limit twice: with a
// Content-Length (refused before the body is read) and as a body without end
// (chunked, no length: cut at the limit). provkit runs as a child against
// servers in another process; the run must end with a diagnostic naming the
// URL and the limit, exit 1, and nothing left behind. That memory stays
// bounded shows in the endless cases ending at all.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { e2eWorkspace, requiresTf, runCli, type CliResult, type E2eWorkspace, flat } from '../support/e2e.js';
import { startHost, type RemoteFault, type RemoteServer, type ServerHost } from '../support/remote/index.js';
import { makeProvider } from '../support/servers/packages.js';

let host: ServerHost;
let reg: RemoteServer;
let mirror: RemoteServer;
let w: E2eWorkspace;

const MiB = 1024 * 1024;
const V = '1.0.0';
const PLATFORM = 'linux_amd64';
/** A hang or a run that never stops growing shows as a killed child, not a test timeout. */
const RUN = { timeoutMs: 30_000 };

beforeAll(async () => {
  host = await startHost();
  const providers = [await makeProvider('acme', 'demo', [V], [PLATFORM])];
  reg = await host.registry({ providers });
  mirror = await host.netMirror({ providers, hashes: 'zh' });
});
beforeEach(() => {
  w = e2eWorkspace(reg.caPath, { PROVKIT_HTTP_TUNING: 'connect=5000,idle=5000,backoff=50' });
});
afterEach(async () => {
  await reg.clearFaults();
  await mirror.clearFaults();
  w.remove();
});
afterAll(async () => {
  await host.close();
});

interface Kind {
  /** How the limit reads in the message. */
  limit: string;
  bytes: number;
  server: () => RemoteServer;
  path: () => Promise<string>;
  /** The lock command's arguments (registry, or the network mirror). */
  args: () => string[];
  /** The provider source in main.tf. */
  source: () => string;
  /** The endless body: how it starts and what repeats. */
  endless: { prefix: string; chunk: string };
}

const viaRegistry = {
  server: () => reg,
  args: () => ['lock', `-platform=${PLATFORM}`],
  source: () => `${reg.host}/acme/demo`,
};
const viaMirror = {
  server: () => mirror,
  args: () => ['lock', `-net-mirror=${mirror.url}`, `-platform=${PLATFORM}`],
  source: () => 'registry.example.test/acme/demo',
};
const entries = (entry: string): string => entry.repeat(Math.ceil((128 * 1024) / entry.length));

const KINDS: Record<string, Kind> = {
  'service discovery document': {
    ...viaRegistry,
    limit: '1 MiB (1048576 bytes)',
    bytes: 1 * MiB,
    path: () => Promise.resolve('/.well-known/terraform.json'),
    endless: { prefix: '{"providers.v1":"/v1/providers/","padding":"', chunk: 'x'.repeat(128 * 1024) },
  },
  'provider version list': {
    ...viaRegistry,
    limit: '16 MiB (16777216 bytes)',
    bytes: 16 * MiB,
    path: () => reg.path('versions', 'acme', 'demo'),
    endless: {
      prefix: '{"versions":[',
      chunk: entries('{"version":"0.0.1","protocols":["5.0"],"platforms":[{"os":"linux","arch":"amd64"}]},'),
    },
  },
  'provider download metadata': {
    ...viaRegistry,
    limit: '4 MiB (4194304 bytes)',
    bytes: 4 * MiB,
    path: () => reg.path('download', 'acme', 'demo', V, PLATFORM),
    endless: {
      prefix: '{"protocols":["5.0"],"os":"linux","arch":"amd64","signing_keys":{"gpg_public_keys":[',
      chunk: entries('{"ascii_armor":"x"},'),
    },
  },
  'SHA256SUMS document': {
    ...viaRegistry,
    limit: '4 MiB (4194304 bytes)',
    bytes: 4 * MiB,
    path: () => reg.path('shasums', 'acme', 'demo', V),
    endless: { prefix: '', chunk: entries(`${'0'.repeat(64)}  terraform-provider-demo_${V}_linux_amd64.zip\n`) },
  },
  'SHA256SUMS signature': {
    ...viaRegistry,
    limit: '1 MiB (1048576 bytes)',
    bytes: 1 * MiB,
    path: () => reg.path('signature', 'acme', 'demo', V),
    endless: { prefix: '', chunk: 'x'.repeat(128 * 1024) },
  },
  'provider mirror index': {
    ...viaMirror,
    limit: '16 MiB (16777216 bytes)',
    bytes: 16 * MiB,
    path: () => mirror.call('paths.index', 'registry.example.test', 'acme', 'demo') as Promise<string>,
    endless: { prefix: '{"versions":{', chunk: entries('"0.0.1":{},') },
  },
  'provider mirror version index': {
    ...viaMirror,
    limit: '4 MiB (4194304 bytes)',
    bytes: 4 * MiB,
    path: () => mirror.call('paths.version', 'registry.example.test', 'acme', 'demo', V) as Promise<string>,
    endless: {
      prefix: '{"archives":{"linux_amd64":{"url":"x.zip","hashes":[',
      chunk: entries(`"zh:${'0'.repeat(64)}",`),
    },
  },
};

function expectRefused(r: CliResult, what: string, kind: Kind, url: string): void {
  expect(r.timedOut).toBe(false);
  expect(r.code).toBe(1);
  expect(flat(r.stderr)).toContain(`the ${what} at ${url} is `);
  expect(flat(r.stderr)).toContain(`${kind.limit}, the most provkit reads for one`);
  expect(r.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
  expect(w.tmpLeftovers()).toEqual([]);
  expect(w.leftovers()).toEqual([]);
}

describe('metadata documents are read up to a limit, with a clear error', () => {
  for (const [what, kind] of Object.entries(KINDS)) {
    const faults: Record<string, () => RemoteFault> = {
      'declared one byte over the limit (Content-Length)': () => ({
        kind: 'replace',
        body: { $fn: 'repeat', arg: { text: ' ', size: kind.bytes + 1 } },
      }),
      'without end (no Content-Length)': () => ({
        kind: 'endless',
        prefix: kind.endless.prefix,
        chunk: kind.endless.chunk,
        intervalMs: 5,
      }),
    };
    for (const [how, fault] of Object.entries(faults)) {
      it(`the ${what}, ${how} → exit 1 naming the URL and the limit, nothing left`, async () => {
        const path = await kind.path();
        await kind.server().setFault(path, fault());
        const p = w.project('p', { 'main.tf': requiresTf({ demo: kind.source() }) });
        const r = await runCli(kind.args(), { cwd: p, env: w.env, ...RUN });
        expectRefused(r, what, kind, `${kind.server().origin}${path}`);
      });
    }
  }

  it('a 50 MB provider version list (valid JSON) → refused from its Content-Length, exit 1', async () => {
    const path = await reg.path('versions', 'acme', 'demo');
    await reg.setFault(path, { kind: 'replace', body: { $fn: 'manyVersions', arg: { count: 330_000 } } });
    const p = w.project('p', { 'main.tf': requiresTf({ demo: `${reg.host}/acme/demo` }) });
    // The server takes a while to build 50 MB of JSON: no connect timeout may race it.
    const r = await runCli(['lock', `-platform=${PLATFORM}`], {
      cwd: p,
      env: { ...w.env, PROVKIT_HTTP_TUNING: 'connect=25000,idle=5000,backoff=50' },
      ...RUN,
    });
    expectRefused(r, 'provider version list', KINDS['provider version list']!, `${reg.origin}${path}`);
    expect(flat(r.stderr)).toMatch(/is \d{8} bytes, more than 16 MiB/);
  });

  it('mirror: a provider version list without end → exit 1 naming the URL and the limit, nothing left', async () => {
    const path = await reg.path('versions', 'acme', 'demo');
    const kind = KINDS['provider version list']!;
    await reg.setFault(path, { kind: 'endless', ...kind.endless, intervalMs: 5 });
    const p = w.project('p', { 'main.tf': requiresTf({ demo: `${reg.host}/acme/demo` }) });
    const r = await runCli(['mirror', `-platform=${PLATFORM}`, 'out'], { cwd: p, env: w.env, ...RUN });
    expectRefused(r, 'provider version list', kind, `${reg.origin}${path}`);
  });

  it('a 12 MB provider version list (several times the largest real one) is still read: exit 0', async () => {
    const path = await reg.path('versions', 'acme', 'demo');
    await reg.setFault(path, { kind: 'replace', body: { $fn: 'manyVersions', arg: { count: 80_000 } } });
    const p = w.project('p', { 'main.tf': requiresTf({ demo: `${reg.host}/acme/demo` }) });
    const r = await runCli(['lock', `-platform=${PLATFORM}`], {
      cwd: p,
      env: { ...w.env, PROVKIT_HTTP_TUNING: 'connect=25000,idle=5000,backoff=50' },
      ...RUN,
    });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(w.tmpLeftovers()).toEqual([]);
  });
});
