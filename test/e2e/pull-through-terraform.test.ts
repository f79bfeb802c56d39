// terraform 1.11.4 as the pull-through mirror's client, without terraform:
// its runs against `provkit serve -upstream` were recorded by
// test/fixtures/terraform-pull-through/record.ts (terraform-1.11.4.json) and
// are replayed here against the service in a child process, with the same
// origin (the fake registry serving mirror-fixtures/) in the server host.
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  CONFIG,
  LOCK_PLATFORMS,
  serveArgs,
  type RecordedRequest,
  type Recording,
} from '../fixtures/terraform-pull-through/cases.js';
import { startServe, type ServeChild } from '../serve/child.js';
import { e2eWorkspace, runCli, type E2eWorkspace } from '../support/e2e.js';
import { httpsGet, type HttpsAnswer, mirrorEnv, type MirrorFiles, writeMirrorFiles } from '../support/pull-through.js';
import { startHost, type RemoteServer, type ServerHost } from '../support/remote/index.js';
import { fixtureProviders } from '../support/servers/packages.js';
import { testTls, type TestTls } from '../support/servers/tls.js';

const RECORDING = JSON.parse(
  readFileSync(new URL('../fixtures/terraform-pull-through/terraform-1.11.4.json', import.meta.url), 'utf8'),
) as Recording;

let tls: TestTls;
let host: ServerHost;
let origin: RemoteServer;
let w: E2eWorkspace;
let files: MirrorFiles;
const mirrors: ServeChild[] = [];

const get = (url: string, method = 'GET'): Promise<HttpsAnswer> => httpsGet(url, tls.caPem, method);

async function startMirror(name: string): Promise<ServeChild> {
  const m = await startServe(
    serveArgs(files, join(w.base, `store-${name}`)),
    w.base,
    mirrorEnv(files, w.base, join(w.base, `cache-${name}`)),
  );
  mirrors.push(m);
  return m;
}

/** Replays terraform's requests in order; the statuses the mirror answered. */
async function replay(m: ServeChild, requests: readonly RecordedRequest[]): Promise<number[]> {
  const out: number[] = [];
  for (const r of requests) out.push((await get(`${m.url}${r.path.slice(1)}`, r.method)).status);
  return out;
}

/** The h1: hashes of each provider block of a lock file. */
function lockH1(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const m of text.matchAll(/provider "([^"]+)" \{[\s\S]*?hashes = \[([\s\S]*?)\]/g))
    out.set(
      m[1]!,
      [...m[2]!.matchAll(/"(h1:[^"]+)"/g)].map((x) => x[1]!),
    );
  return out;
}

beforeAll(async () => {
  tls = await testTls();
  host = await startHost();
  origin = await host.registry({ providers: await fixtureProviders() });
  w = e2eWorkspace(tls.caPath);
  files = writeMirrorFiles(w.base, tls, origin);
}, 60_000);

afterAll(async () => {
  await Promise.all(mirrors.map((m) => m.stop()));
  await host?.close();
  if (w) rmSync(w.base, { recursive: true, force: true });
});

describe('terraform 1.11.4 through serve -upstream (recorded)', () => {
  it("terraform's init and providers lock requests are answered as terraform was, with the hashes it locked", async () => {
    expect(RECORDING.init.exit).toBe(0);
    expect(RECORDING.lock.exit).toBe(0);
    const m = await startMirror('replay');
    for (const run of [RECORDING.init, RECORDING.lock]) {
      expect(await replay(m, run.requests)).toEqual(run.requests.map((r) => r.status));
      // Every h1: terraform locked from the mirror is one the mirror's VERSION.json lists for that provider.
      for (const [provider, hashes] of lockH1(run.lock)) {
        const [hostname, ns, type] = provider.split('/');
        const version = /version\s+=\s+"([^"]+)"/.exec(run.lock.slice(run.lock.indexOf(provider)))![1]!;
        const doc = JSON.parse((await get(`${m.url}${hostname!}/${ns!}/${type!}/${version}.json`)).body.toString()) as {
          archives: Record<string, { hashes: string[] }>;
        };
        const served = Object.values(doc.archives).flatMap((a) => a.hashes);
        for (const h of hashes) expect(served).toContain(h);
      }
    }
    // terraform accepted VERSION.json documents carrying who vouches for each hash (a field it ignores).
    for (const run of [RECORDING.init, RECORDING.lock]) {
      const docs = Object.values(run.documents ?? {}) as Array<{
        archives: Record<string, { hashes: string[]; provkit_dispositions?: Record<string, unknown[]> }>;
      }>;
      expect(docs.length).toBeGreaterThan(0);
      for (const doc of docs)
        for (const a of Object.values(doc.archives))
          expect(Object.keys(a.provkit_dispositions ?? {}).sort()).toEqual([...a.hashes].sort());
    }
    // terraform locks from a network mirror only the h1: of what it fetched; from the origin it adds the signed zh: of
    // every platform. The h1: are the same either way.
    expect(lockH1(RECORDING.lock.lock)).toEqual(lockH1(RECORDING.direct.lock));
  });

  it('provkit lock -net-mirror through the pull-through writes the lock file terraform wrote, byte for byte', async () => {
    const m = mirrors[0] ?? (await startMirror('replay'));
    const dir = w.project('provkit-lock', { 'main.tf': CONFIG });
    const r = await runCli(
      ['-flavor=terraform', 'lock', `-net-mirror=${m.url}`, ...LOCK_PLATFORMS.map((p) => `-platform=${p}`)],
      { cwd: dir, env: w.env },
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(readFileSync(join(dir, '.terraform.lock.hcl'), 'utf8')).toBe(RECORDING.lock.lock);
  });

  it("20 clients replaying terraform init at once: all succeed and the origin is asked for each archive once, as terraform's 20 were", async () => {
    expect(RECORDING.fleet.exits).toEqual(Array<number>(20).fill(0));
    const m = await startMirror('fleet');
    await origin.mark();
    const statuses = await Promise.all(Array.from({ length: 20 }, () => replay(m, RECORDING.init.requests)));
    for (const s of statuses) expect(s).toEqual(RECORDING.init.requests.map((r) => r.status));
    const counts: Record<string, number> = {};
    for (const r of await origin.log())
      if (r.pathname.endsWith('.zip')) counts[r.pathname] = (counts[r.pathname] ?? 0) + 1;
    expect(counts).toEqual(RECORDING.fleet.originArchiveRequests);
  });
});
