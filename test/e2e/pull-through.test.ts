// `provkit serve -upstream` as a fleet uses it: the service in a child
// process, an origin registry with signed SHA256SUMS in the server host (a
// third process), clients speaking the network mirror protocol over HTTPS.
// One host, one origin, one service for the whole file; each test uses its
// own provider so that what it counts at the origin is its own.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startServe, type ServeChild } from '../serve/child.js';
import { dockerRegistryBinary, SKIP_REASON, startDockerRegistry } from '../support/docker-registry.js';
import { jsonUiStreamProblems } from '../support/json-ui-schema.js';
import {
  httpsGet,
  type HttpsAnswer,
  mirrorEnv,
  type MirrorFiles,
  upstreamArgs,
  writeMirrorFiles,
} from '../support/pull-through.js';
import { startHost, type RemoteServer, type ServerHost } from '../support/remote/index.js';
import { makeProvider } from '../support/servers/packages.js';
import { testTls, type TestTls } from '../support/servers/tls.js';

const HOST = 'registry.example.test';
const FLEET_PLATFORMS = ['linux_amd64', 'darwin_arm64', 'windows_amd64'];
const DOCKER = dockerRegistryBinary();

type Res = HttpsAnswer;

let tls: TestTls;
let host: ServerHost;
let origin: RemoteServer;
let base: string;
let storeDir: string;
let env: Record<string, string>;
let files: MirrorFiles;
let mirror: ServeChild;

/** One GET over HTTPS with the test CA, a fresh connection each. */
const get = (url: string): Promise<Res> => httpsGet(url, tls.caPem);

const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');
const json = <T>(r: Res): T => JSON.parse(r.body.toString('utf8')) as T;

/** The origin requests since the last mark whose path includes `part`. */
async function originRequests(part: string): Promise<string[]> {
  return (await origin.log()).map((r) => r.pathname).filter((p) => p.includes(part));
}

/** The service's JSON lines of `type` so far. */
function logLines(child: ServeChild, type: string): Array<Record<string, unknown>> {
  return child
    .stdout()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l['type'] === type);
}

beforeAll(async () => {
  tls = await testTls();
  host = await startHost();
  origin = await host.registry({
    providers: await Promise.all([
      makeProvider('acme', 'demo', ['1.0.0', '1.1.0']),
      makeProvider('acme', 'crowd', ['2.0.0']),
      makeProvider('acme', 'ttl', ['1.0.0']),
      makeProvider('other', 'thing', ['1.0.0']),
      makeProvider('acme', 'fleet', ['1.0.0'], FLEET_PLATFORMS),
      makeProvider('acme', 'killed', ['1.0.0'], ['linux_amd64']),
    ]),
  });
  base = mkdtempSync(join(tmpdir(), 'provkit-pull-through-'));
  storeDir = join(base, 'store');
  // The service trusts the origin's CA (the server host makes its own) and reaches it through a `host` block,
  // as an operator points a private registry's host at its API.
  files = writeMirrorFiles(base, tls, origin);
  // A hash store of its own (tests run without one by default): what it records is the provenance -offline serves.
  env = { ...mirrorEnv(files, base, join(base, 'cache')), PROVKIT_HASH_STORE: join(base, 'hashes') };
  mirror = await startServe(
    upstreamArgs(files, storeDir, [`-allow=${HOST}/acme/*`, '-versions-ttl=1', '-json']),
    base,
    env,
  );
}, 60_000);

afterAll(async () => {
  await mirror?.stop();
  await host?.close();
  if (base) rmSync(base, { recursive: true, force: true });
});

describe('serve -upstream: a pull-through mirror', () => {
  it('fetches a package from the origin once, verified, stores it in the mirror layout and serves it from storage', async () => {
    await origin.mark();
    const index = await get(`${mirror.url}${HOST}/acme/demo/index.json`);
    expect(index.status).toBe(200);
    expect(json<{ versions: Record<string, object> }>(index).versions).toEqual({ '1.0.0': {}, '1.1.0': {} });

    const doc = await get(`${mirror.url}${HOST}/acme/demo/1.1.0.json`);
    expect(doc.status).toBe(200);
    const archives = json<{ archives: Record<string, { url: string; hashes: string[] }> }>(doc).archives;
    expect(Object.keys(archives).sort()).toEqual(['darwin_arm64', 'linux_amd64']);
    const signedZh = `zh:${(await origin.call('sha256', 'acme', 'demo', '1.1.0', 'linux_amd64')) as string}`;
    // Not stored yet: the signed zh: only, nothing downloaded for it.
    expect(archives['linux_amd64']!.hashes).toEqual([signedZh]);
    expect(await originRequests('/files/acme/demo/1.1.0/terraform-provider-demo_1.1.0_linux_amd64.zip')).toEqual([]);

    const first = await get(`${mirror.url}${HOST}/acme/demo/${archives['linux_amd64']!.url}`);
    expect(first.status).toBe(200);
    expect(first.headers['x-provkit-origin']).toBe('fresh');
    expect(`zh:${sha256(first.body)}`).toBe(signedZh);
    const second = await get(`${mirror.url}${HOST}/acme/demo/${archives['linux_amd64']!.url}`);
    expect(second.status).toBe(200);
    expect(second.body.equals(first.body)).toBe(true);
    expect(await originRequests('terraform-provider-demo_1.1.0_linux_amd64.zip')).toHaveLength(1);

    // The layout `provkit mirror` writes, with zh: and both h1: forms of what is stored.
    const dir = join(storeDir, HOST, 'acme', 'demo');
    expect(readdirSync(dir).sort()).toEqual([
      '1.1.0.json',
      'index.json',
      'terraform-provider-demo_1.1.0_linux_amd64.zip',
    ]);
    const stored = JSON.parse(readFileSync(join(dir, '1.1.0.json'), 'utf8')) as {
      archives: Record<string, { hashes: string[] }>;
    };
    expect(stored.archives['linux_amd64']!.hashes).toContain(signedZh);
    // Both h1: forms (equal for a zip whose entries are plain files, so listed once).
    expect(stored.archives['linux_amd64']!.hashes.filter((h) => h.startsWith('h1:')).length).toBeGreaterThanOrEqual(1);
    // Stored now: VERSION.json lists its h1: forms too.
    const again = json<{ archives: Record<string, { hashes: string[] }> }>(
      await get(`${mirror.url}${HOST}/acme/demo/1.1.0.json`),
    );
    expect(again.archives['linux_amd64']!.hashes).toEqual(stored.archives['linux_amd64']!.hashes);
    expect(again.archives['darwin_arm64']!.hashes).toEqual([
      `zh:${(await origin.call('sha256', 'acme', 'demo', '1.1.0', 'darwin_arm64')) as string}`,
    ]);
    // Who vouches for each hash, in a field terraform and tofu ignore (docs/fleet-mirror.md "Provenance").
    const vouched = json<{
      archives: Record<string, { provkit_dispositions: Record<string, Array<Record<string, unknown>>> }>;
    }>(await get(`${mirror.url}${HOST}/acme/demo/1.1.0.json`)).archives;
    const keyId = origin.keyIds[0]!;
    const linux = vouched['linux_amd64']!.provkit_dispositions;
    expect(Object.keys(linux).sort()).toEqual([...stored.archives['linux_amd64']!.hashes].sort());
    expect(linux[signedZh]).toContainEqual(
      expect.objectContaining({ kind: 'signed', key_id: keyId, url: expect.stringMatching(/SHA256SUMS$/) }),
    );
    for (const h of stored.archives['linux_amd64']!.hashes.filter((x) => x.startsWith('h1:')))
      expect(linux[h]).toEqual([{ kind: 'verified-locally', key_id: keyId }]);
    expect(Object.keys(vouched['darwin_arm64']!.provkit_dispositions)).toEqual([
      `zh:${(await origin.call('sha256', 'acme', 'demo', '1.1.0', 'darwin_arm64')) as string}`,
    ]);

    const fetches = logLines(mirror, 'fetch').filter((l) => l['provider'] === `${HOST}/acme/demo`);
    expect(fetches).toHaveLength(1);
    expect(fetches[0]).toMatchObject({ result: 'stored', version: '1.1.0', platform: 'linux_amd64', zh: signedZh });
    expect(typeof fetches[0]!['keyId']).toBe('string');
  });

  it('20 clients asking for one package at once cause one fetch from the origin and all get the whole archive', async () => {
    await origin.mark();
    const url = `${mirror.url}${HOST}/acme/crowd/terraform-provider-crowd_2.0.0_linux_amd64.zip`;
    const answers = await Promise.all(Array.from({ length: 20 }, () => get(url)));
    const signed = (await origin.call('sha256', 'acme', 'crowd', '2.0.0', 'linux_amd64')) as string;
    expect(answers.map((a) => a.status)).toEqual(Array<number>(20).fill(200));
    expect(new Set(answers.map((a) => sha256(a.body)))).toEqual(new Set([signed]));
    expect(await originRequests('terraform-provider-crowd_2.0.0_linux_amd64.zip')).toHaveLength(1);
    const fetch = logLines(mirror, 'fetch').filter((l) => l['provider'] === `${HOST}/acme/crowd`);
    expect(fetch).toHaveLength(1);
    expect(fetch[0]!['waiters']).toBeGreaterThan(0);
  });

  it('never fetches a provider outside the allow-list, nor a host nobody allowed', async () => {
    await origin.mark();
    const otherNs = await get(`${mirror.url}${HOST}/other/thing/index.json`);
    expect(otherNs.status).toBe(403);
    expect(otherNs.body.toString()).toContain(`${HOST}/other/thing is not in this mirror's allow-list`);
    const otherHost = await get(`${mirror.url}169.254.169.254/acme/demo/terraform-provider-demo_1.0.0_linux_amd64.zip`);
    expect(otherHost.status).toBe(403);
    const loopback = await get(`${mirror.url}127.0.0.1/acme/demo/index.json`);
    expect(loopback.status).toBe(403);
    expect(await origin.log()).toEqual([]);
  });

  it('keeps a version list for its time to live and serves it stale, said in a header, while the origin is down', async () => {
    await origin.mark();
    const url = `${mirror.url}${HOST}/acme/ttl/index.json`;
    const fresh = await get(url);
    expect(fresh.headers['x-provkit-origin']).toBe('fresh');
    const cached = await get(url);
    expect(cached.headers['x-provkit-origin']).toBe('cached');
    expect(await originRequests('/v1/providers/acme/ttl/versions')).toHaveLength(1);
    await origin.setFault(await origin.path('versions', 'acme', 'ttl'), { kind: 'status', status: 503 });
    try {
      await new Promise((r) => setTimeout(r, 1100));
      const stale = await get(url);
      expect(stale.status).toBe(200);
      expect(stale.headers['x-provkit-origin']).toBe('stale');
      expect(stale.headers['x-provkit-origin-error']).toMatch(/^NET_/);
      expect(json(stale)).toEqual(json(fresh));
      // Asked again (with the client's retries) once the time to live was over.
      expect((await originRequests('/v1/providers/acme/ttl/versions')).length).toBeGreaterThan(1);
    } finally {
      await origin.clearFaults();
    }
    await new Promise((r) => setTimeout(r, 1100));
    expect((await get(url)).headers['x-provkit-origin']).toBe('fresh');
  });

  it('answers /healthz, and /metrics in the Prometheus text format counting fetches, hits and refusals', async () => {
    const health = await get(`${mirror.url}healthz`);
    expect(health.status).toBe(200);
    expect(health.body.toString()).toBe('ok\n');
    const metrics = await get(`${mirror.url}metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = metrics.body.toString();
    const value = (series: string): number =>
      Number(new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\d+)$`, 'm').exec(text)?.[1]);
    expect(text).toContain('# TYPE provkit_mirror_requests_total counter');
    expect(value('provkit_mirror_upstream_fetches_total{result="stored"}')).toBe(2);
    expect(value('provkit_mirror_requests_total{kind="archive",result="miss"}')).toBeGreaterThanOrEqual(1);
    expect(value('provkit_mirror_requests_total{kind="archive",result="hit"}')).toBeGreaterThanOrEqual(1);
    expect(value('provkit_mirror_requests_total{kind="index",result="refused"}')).toBe(2);
    expect(value('provkit_mirror_single_flight_joins_total')).toBeGreaterThan(0);
    expect(value('provkit_mirror_upstream_bytes_total')).toBeGreaterThan(0);
    expect(value('provkit_mirror_sent_bytes_total')).toBeGreaterThan(0);
    expect(value('provkit_mirror_requests_in_flight')).toBe(1);
    // The access log: JSON lines with how each request ended.
    const access = logLines(mirror, 'access');
    expect(access.some((l) => l['result'] === 'miss' && String(l['path']).endsWith('_linux_amd64.zip'))).toBe(true);
    expect(access.some((l) => l['result'] === 'refused' && l['status'] === 403)).toBe(true);
  });

  it('-offline serves only what the store holds and asks no origin', async () => {
    await origin.mark();
    const offline = await startServe(
      ['-offline', '-listen=127.0.0.1:0', `-tls-cert=${files.cert}`, `-tls-key=${files.key}`, storeDir],
      base,
      env,
    );
    try {
      const index = await get(`${offline.url}${HOST}/acme/demo/index.json`);
      expect(index.status).toBe(200);
      expect(index.headers['x-provkit-origin']).toBe('offline');
      expect(json<{ versions: object }>(index).versions).toEqual({ '1.1.0': {} });
      const doc = json<{ archives: Record<string, { hashes: string[] }> }>(
        await get(`${offline.url}${HOST}/acme/demo/1.1.0.json`),
      );
      expect(Object.keys(doc.archives)).toEqual(['linux_amd64']);
      // Offline, the provenance is what this machine's hash store recorded when the archive was fetched.
      const vouched = (doc.archives['linux_amd64'] as { provkit_dispositions?: Record<string, unknown[]> })
        .provkit_dispositions!;
      const zh = doc.archives['linux_amd64']!.hashes.find((h) => h.startsWith('zh:'))!;
      expect(vouched[zh]).toContainEqual(expect.objectContaining({ kind: 'signed', key_id: origin.keyIds[0] }));
      expect(doc.archives['linux_amd64']!.hashes).toEqual(
        JSON.parse(readFileSync(join(storeDir, HOST, 'acme', 'demo', '1.1.0.json'), 'utf8')).archives.linux_amd64
          .hashes,
      );
      expect((await get(`${offline.url}${HOST}/acme/demo/terraform-provider-demo_1.1.0_linux_amd64.zip`)).status).toBe(
        200,
      );
      expect((await get(`${offline.url}${HOST}/acme/demo/terraform-provider-demo_1.1.0_darwin_arm64.zip`)).status).toBe(
        404,
      );
      expect((await get(`${offline.url}${HOST}/acme/demo/1.0.0.json`)).status).toBe(404);
      expect(await origin.log()).toEqual([]);
    } finally {
      expect(await offline.stop()).toBe(0);
    }
  });

  it("refuses a package signed by a key outside the audit policy's trusted_keys (provkit.hcl), storing nothing", async () => {
    const dir = join(base, 'pinned');
    const store = join(dir, 'store');
    mkdirSync(dir);
    // The origin's key is pinned for acme/crowd only; every other provider must be signed by another key.
    writeFileSync(
      join(dir, 'provkit.hcl'),
      `audit {\n  trusted_keys = ["0123456789ABCDEF"]\n  provider "${HOST}/acme/crowd" {\n    trusted_keys = ["${origin.keyIds[0]!}"]\n  }\n}\n`,
    );
    const pinned = await startServe(upstreamArgs(files, store, [`-allow=${HOST}`]), dir, env);
    try {
      const refused = await get(`${pinned.url}${HOST}/acme/ttl/terraform-provider-ttl_1.0.0_linux_amd64.zip`);
      expect(refused.status).toBe(403);
      expect(refused.headers['x-provkit-error']).toBe('UPSTREAM_UNTRUSTED');
      expect(refused.body.toString()).toBe(
        `refused by the mirror: refused ${HOST}/acme/ttl 1.0.0 for linux_amd64: its checksums are signed with key ${origin.keyIds[0]!}, which is not one of the trusted_keys of provkit.hcl (0123456789ABCDEF)\n`,
      );
      // VERSION.json is refused too: it would list the hashes of a package the mirror does not accept.
      expect((await get(`${pinned.url}${HOST}/acme/ttl/1.0.0.json`)).status).toBe(403);
      expect(existsSync(join(store, HOST, 'acme', 'ttl'))).toBe(false);
      const accepted = await get(`${pinned.url}${HOST}/acme/crowd/terraform-provider-crowd_2.0.0_linux_amd64.zip`);
      expect(accepted.status).toBe(200);
      expect(readdirSync(join(store, HOST, 'acme', 'crowd'))).toContain(
        'terraform-provider-crowd_2.0.0_linux_amd64.zip',
      );
    } finally {
      await pinned.stop();
    }
    expect(pinned.stdout()).toContain('Signing keys must be the trusted_keys of provkit.hcl.');
  });

  it('a replica killed mid-fetch leaves nothing partial; the next one on the store cleans up and stores the package', async () => {
    const store = join(base, 'store-killed');
    const zip = `${HOST}/acme/killed/terraform-provider-killed_1.0.0_linux_amd64.zip`;
    await origin.setFault(await origin.path('archive', 'acme', 'killed', '1.0.0', 'linux_amd64'), {
      kind: 'throttle',
      bytesPerSecond: 50,
    });
    const doomed = await startServe(upstreamArgs(files, store, [`-allow=${HOST}`]), base, env);
    const pending = get(`${doomed.url}${zip}`).catch(() => undefined);
    const fetching = (): string[] =>
      existsSync(store) ? readdirSync(store).filter((n) => n.startsWith('.provkit-fetch-')) : [];
    for (let i = 0; i < 100 && fetching().length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(fetching()).toHaveLength(1);
    await doomed.stop('SIGKILL');
    await pending;
    expect(existsSync(join(store, HOST, 'acme', 'killed'))).toBe(false);
    await origin.clearFaults();
    const next = await startServe(upstreamArgs(files, store, [`-allow=${HOST}`]), base, env);
    try {
      const r = await get(`${next.url}${zip}`);
      expect(r.status).toBe(200);
      expect(sha256(r.body)).toBe(await origin.call('sha256', 'acme', 'killed', '1.0.0', 'linux_amd64'));
      expect(fetching()).toEqual([]);
      expect(readdirSync(join(store, HOST, 'acme', 'killed'))).toContain(
        'terraform-provider-killed_1.0.0_linux_amd64.zip',
      );
    } finally {
      await next.stop();
    }
  });

  it('a store that refuses is an error per request (503), never a wrong answer', async () => {
    // A registry that is not there: every store operation fails.
    const broken = await startServe(
      upstreamArgs(files, 'oci://127.0.0.1:1/providers/{namespace}/{type}', [`-allow=${HOST}`]),
      base,
      env,
    );
    try {
      const r = await get(`${broken.url}${HOST}/acme/demo/terraform-provider-demo_1.0.0_linux_amd64.zip`);
      expect(r.status).toBe(503);
      expect(r.body.toString()).toMatch(/^the mirror could not store the package: .*127\.0\.0\.1:1/);
      expect((await get(`${broken.url}healthz`)).status).toBe(200);
    } finally {
      await broken.stop();
    }
  });

  it('stops on SIGTERM with exit 0, nothing partial left in the store', async () => {
    // Last in the file: the shared service ends here.
    const code = await mirror.stop('SIGTERM');
    expect(code).toBe(0);
    expect(logLines(mirror, 'stopped')).toEqual([expect.objectContaining({ signal: 'SIGTERM' })]);
    // Access, fetch and service lines are one -json stream (docs/json-ui.md).
    expect(jsonUiStreamProblems(mirror.stdout())).toEqual([]);
    expect(readdirSync(storeDir).filter((n) => n.startsWith('.provkit-fetch-'))).toEqual([]);
    expect(existsSync(join(storeDir, '.provkit-mirror.lock'))).toBe(false);
  });
});

describe.skipIf(DOCKER === undefined)(
  `serve -upstream oci://…: replicas sharing one store${DOCKER === undefined ? ` (${SKIP_REASON})` : ''}`,
  () => {
    it('three replicas on one registry, asked at once for different platforms of one version, lose nothing and serve what any stored', async () => {
      const registry = await startDockerRegistry();
      const replicas: ServeChild[] = [];
      try {
        const store = `oci://${registry.host}/providers/{namespace}/{type}`;
        const started = await Promise.all(
          [0, 1, 2].map((i) =>
            startServe(upstreamArgs(files, store, [`-allow=${HOST}`, '-json']), base, {
              ...env,
              PROVKIT_CACHE_DIR: join(base, `replica-${String(i)}`),
            }),
          ),
        );
        replicas.push(...started);
        await origin.mark();
        const path = (p: string): string => `${HOST}/acme/fleet/terraform-provider-fleet_1.0.0_${p}.zip`;
        // Each replica stores another platform of 1.0.0 at the same moment: three writers of one tag.
        const first = await Promise.all(FLEET_PLATFORMS.map((p, i) => get(`${replicas[i]!.url}${path(p)}`)));
        expect(first.map((r) => r.status)).toEqual([200, 200, 200]);
        for (const [i, p] of FLEET_PLATFORMS.entries())
          expect(sha256(first[i]!.body)).toBe(await origin.call('sha256', 'acme', 'fleet', '1.0.0', p));
        // Every replica serves every platform, from the registry, without asking the origin for an archive again.
        for (const replica of replicas) {
          const doc = json<{ archives: Record<string, { hashes: string[] }> }>(
            await get(`${replica.url}${HOST}/acme/fleet/1.0.0.json`),
          );
          expect(Object.keys(doc.archives).sort()).toEqual([...FLEET_PLATFORMS].sort());
          for (const p of FLEET_PLATFORMS) {
            expect(doc.archives[p]!.hashes.some((h) => h.startsWith('h1:'))).toBe(true);
            const got = await get(`${replica.url}${path(p)}`);
            expect(got.status).toBe(200);
            expect(got.body.equals(first[FLEET_PLATFORMS.indexOf(p)]!.body)).toBe(true);
          }
        }
        for (const p of FLEET_PLATFORMS)
          expect(await originRequests(`terraform-provider-fleet_1.0.0_${p}.zip`)).toHaveLength(1);
      } finally {
        await Promise.all(replicas.map((r) => r.stop()));
        await registry.stop();
      }
    });

    it('a registry that refuses the replica (no credentials for it) is an error per request (503), and the replica keeps serving', async () => {
      const registry = await startDockerRegistry({ auth: { username: 'fleet', password: 'secret' } });
      const replica = await startServe(
        upstreamArgs(files, `oci://${registry.host}/providers/{namespace}/{type}`, [`-allow=${HOST}`]),
        base,
        { ...env, PROVKIT_CACHE_DIR: join(base, 'refused-replica') },
      );
      try {
        const url = `${replica.url}${HOST}/acme/demo/terraform-provider-demo_1.0.0_linux_amd64.zip`;
        for (const r of [await get(url), await get(url)]) {
          expect(r.status).toBe(503);
          expect(r.body.toString()).toMatch(
            /^the mirror could not store the package: .*the registry 127\.0\.0\.1:\d+ refused access \(HTTP 401\).*\n$/,
          );
          expect(r.body.toString().split('\n')).toHaveLength(2);
        }
        expect((await get(`${replica.url}healthz`)).status).toBe(200);
        // Nothing reached the registry's storage.
        expect(existsSync(join(registry.storage, 'docker', 'registry', 'v2', 'repositories'))).toBe(false);
      } finally {
        await replica.stop();
        await registry.stop();
      }
    });
  },
);
