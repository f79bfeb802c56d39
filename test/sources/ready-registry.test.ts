// The registry source a library user builds with one call from the root
// export (createRegistrySource), and the HttpClient it defaults to, against
// the fake registry over plain http on 127.0.0.1 with a request log: host
// overrides replace discovery, credentials reach the API, and each question is
// asked of the registry once however often a run asks it.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import {
  createHashPool,
  createRegistrySource,
  HttpClient,
  FetchCache,
  Locks,
  parseConstraints,
  parsePlatform,
  parseProviderSource,
  parseVersion,
  runLock,
  serializeLocks,
  type HashPool,
  type Source,
} from '../../src/index.js';
import { RegistrySource, ServiceDiscovery } from '../../src/sources/index.js';
import { fixtureProviders } from '../support/servers/packages.js';
import { startFakeRegistry, type FakeRegistry } from '../support/servers/registry.js';

const HOST = 'registry.example.test';
const PROVIDER = parseProviderSource(`${HOST}/acme/demo`, 'tofu');
const PLATFORMS = ['linux_amd64', 'darwin_arm64'].map((p) => parsePlatform(p));

let reg: FakeRegistry;
let pool: HashPool;

beforeAll(async () => {
  reg = await startFakeRegistry({ providers: await fixtureProviders(), tls: false, requireToken: 'secret' });
  pool = createHashPool();
});
afterAll(async () => {
  await pool.close();
  await reg.close();
});
afterEach(() => {
  reg.log.length = 0;
});

/** The ready source for the fake registry: its host's services given, its token given. */
function ready(http?: HttpClient): Source {
  return createRegistrySource({
    flavor: 'tofu',
    hosts: { [HOST]: { 'providers.v1': reg.providersUrl } },
    credentials: { [HOST]: 'secret' },
    env: {},
    ...(http === undefined ? {} : { http }),
  });
}

async function lock(source: Source, http: HttpClient): Promise<string> {
  const cache = new FetchCache({ source, http, pool });
  const outcome = await runLock({
    requirements: [{ provider: PROVIDER, constraints: parseConstraints('~> 1.0') }],
    platforms: PLATFORMS,
    cache,
    flavor: 'tofu',
    oldLocks: new Locks(),
  }).finally(() => cache.close());
  expect(outcome.failures.map((f) => f.error.message)).toEqual([]);
  return serializeLocks(outcome.locks, 'tofu').toString('utf8');
}

/** How many requests the registry got for each API document and SHA256SUMS. */
function asked(): Record<string, number> {
  const count = (path: string): number => reg.requests(path).length;
  const version = '1.1.0';
  return {
    discovery: count(reg.paths.discovery),
    versions: count(reg.paths.versions('acme', 'demo')),
    ...Object.fromEntries(
      PLATFORMS.map((p) => [
        `download ${p.toString()}`,
        count(reg.paths.download('acme', 'demo', version, p.toString())),
      ]),
    ),
    shasums: count(reg.paths.shasums('acme', 'demo', version)),
  };
}

describe('createRegistrySource', () => {
  it('asks the registry each question once: the versions, and the download metadata of each package, however often a run asks', async () => {
    const http = new HttpClient();
    const source = ready();
    const text = await lock(source, http);
    expect(text).toContain('version     = "1.1.0"');
    // The same questions again, as a caller that looks before (or after) locking does.
    const meta = await source.packageMeta(PROVIDER, parseVersion('1.1.0'), PLATFORMS[0]!);
    expect(meta.location).toEqual({ kind: 'http', url: expect.stringContaining(reg.origin) as string });
    expect((await source.availableVersions(PROVIDER)).versions.map(String)).toContain('1.1.0');
    await lock(source, http);
    // The host's services were given: no discovery request. The token reached the API (it answers 401 without).
    expect(asked()).toEqual({
      discovery: 0,
      versions: 1,
      'download linux_amd64': 1,
      'download darwin_arm64': 1,
      shasums: 1,
    });
    expect(reg.requests(/\/v1\/providers\//).every((r) => r.headers['authorization'] === 'Bearer secret')).toBe(true);
  });

  it('a bare RegistrySource asks again (what the memoising of the ready one saves)', async () => {
    const http = new HttpClient();
    const credentials = (): string => 'secret';
    const bare = new RegistrySource({
      http,
      flavor: 'tofu',
      credentials,
      discovery: new ServiceDiscovery({
        http,
        credentials,
        overrides: { [HOST]: { 'providers.v1': reg.providersUrl } },
      }),
    });
    for (let i = 0; i < 2; i++) await bare.packageMeta(PROVIDER, parseVersion('1.1.0'), PLATFORMS[0]!);
    expect(asked()['download linux_amd64']).toBe(2);
  });

  it('TF_TOKEN_<host> of its env wins over the credentials given, as in the reference', async () => {
    const source = createRegistrySource({
      hosts: { [HOST]: { 'providers.v1': reg.providersUrl } },
      credentials: { [HOST]: 'stale' },
      env: { TF_TOKEN_registry_example_test: 'secret' },
    });
    expect((await source.availableVersions(PROVIDER)).versions.length).toBeGreaterThan(0);
  });
});

describe('HttpClient', () => {
  it('new HttpClient({ fetch: globalThis.fetch }) locks the same bytes as the default client (node-fetch)', async () => {
    const viaDefault = await lock(ready(), new HttpClient({}));
    const web = new HttpClient({ fetch: globalThis.fetch });
    expect(await lock(ready(web), web)).toBe(viaDefault);
    expect(reg.requests(/\.zip$/).length).toBe(2 * PLATFORMS.length);
  });

  it('reads a body given as a ReadableStream that is not async-iterable (the DOM’s typing of fetch)', async () => {
    const viaDefault = await lock(ready(), new HttpClient());
    let readers = 0;
    const readerOnly = new HttpClient({
      fetch: async (url, init) => {
        const res = await globalThis.fetch(url, init);
        const body = res.body;
        return {
          status: res.status,
          statusText: res.statusText,
          headers: res.headers,
          body: body === null ? null : { getReader: () => (readers++, body.getReader()) },
        };
      },
    });
    expect(await lock(ready(readerOnly), readerOnly)).toBe(viaDefault);
    expect(readers).toBeGreaterThan(0);
  });
});
