// NetworkMirrorSource + fetchPackage against the fake network mirror (HTTPS
// on 127.0.0.1): protocol, hash trust, credentials, and every fault switch
// ending in a retry that works or a typed error with no partial file.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { parsePlatform, parseProviderSource, parseVersion } from '../../src/addresses/index.js';
import { fetchPackage, NetworkMirrorSource, staticCredentials, type FetchedArchive } from '../../src/sources/index.js';
import { startFakeNetMirror, type FakeNetMirror } from '../support/servers/net-mirror.js';
import { fixtureProviders, makeProvider } from '../support/servers/packages.js';
import { caught, listing, testHttp, type TestHttp } from './helpers.js';
import { ErrorCode } from '../../src/errors.js';

const FIXTURES = fileURLToPath(new URL('../../mirror-fixtures/', import.meta.url));
const HASHES = JSON.parse(await readFile(join(FIXTURES, 'hashes.json'), 'utf8')) as {
  packages: Record<string, { zh: string; h1: string }>;
};
const HOST = 'registry.example.test';
const demo = parseProviderSource(`${HOST}/acme/demo`, 'tofu');
const V110 = parseVersion('1.1.0');
const LINUX = parsePlatform('linux_amd64');
const ZIP = `${HOST}/acme/demo/terraform-provider-demo_1.1.0_linux_amd64.zip`;

let mirror: FakeNetMirror;
let t: TestHttp;
let tmp: string;

beforeAll(async () => {
  const providers = [
    ...(await fixtureProviders()),
    await makeProvider('acme', 'uni', ['0.1.0'], ['linux_amd64'], 'café.example'),
    await makeProvider('acme', 'ported', ['0.2.0'], ['linux_amd64'], 'localhost:8443'),
  ];
  mirror = await startFakeNetMirror({ providers, extraIndexVersions: ['not-a-version'] });
  t = testHttp(mirror.caPath);
  tmp = await mkdtemp(join(tmpdir(), 'provkit-netmirror-'));
});
afterAll(async () => {
  t.close();
  await mirror.close();
  await rm(tmp, { recursive: true, force: true });
});
afterEach(() => {
  mirror.clearFaults();
  mirror.log.length = 0;
});

function source(extra: Partial<ConstructorParameters<typeof NetworkMirrorSource>[0]> = {}): NetworkMirrorSource {
  return new NetworkMirrorSource({
    baseUrl: mirror.url,
    http: t.http,
    flavor: 'tofu',
    terraformVersion: '1.12.0',
    ...extra,
  });
}

async function fetchTo(src: NetworkMirrorSource, name: string) {
  const meta = await src.packageMeta(demo, V110, LINUX);
  const dir = await mkdtemp(join(tmp, `${name}-`));
  return { meta, dir, fetch: () => fetchPackage(meta, { destPath: join(dir, meta.filename), http: t.http }) };
}

describe('protocol', () => {
  it('lists versions from index.json and skips unparsable ones with a warning', async () => {
    const r = await source().availableVersions(demo);
    expect(r.versions.map(String)).toEqual(['1.0.0', '1.1.0']);
    expect(r.warnings).toEqual([expect.stringContaining('invalid version "not-a-version"')]);
    const req = mirror.log[0];
    expect(req?.pathname).toBe(`/mirror/${HOST}/acme/demo/index.json`);
    expect(req?.headers['accept']).toBe('application/json');
    expect(req?.headers['x-terraform-version']).toBe('1.12.0');
  });

  it('describes a package: URL relative to VERSION.json, mirror-reported hashes, hash authentication', async () => {
    const meta = await source().packageMeta(demo, V110, LINUX);
    const h1Zip = mirror.hashesOf(HOST, 'acme', 'demo', '1.1.0', 'linux_amd64').h1Zip;
    expect(meta).toMatchObject({
      filename: 'terraform-provider-demo_1.1.0_linux_amd64.zip',
      location: { kind: 'http', url: `${mirror.url}${HOST}/acme/demo/terraform-provider-demo_1.1.0_linux_amd64.zip` },
      reportedHashes: [
        { hash: { text: h1Zip }, trust: { kind: 'reported-by-mirror', mirror: mirror.url }, platform: LINUX },
      ],
      authentication: { kind: 'mirror-hashes', mirror: mirror.url, hashes: [{ text: h1Zip }] },
      warnings: [],
    });
  });

  it('fetches and verifies the archive (h1 zip form), recording the match as computed-locally (nobody signed it)', async () => {
    const { dir, fetch } = await fetchTo(source(), 'ok');
    const got = (await fetch()) as FetchedArchive;
    expect(got.zh.text).toBe(HASHES.packages[ZIP]?.zh);
    expect(got.label).toBe('verified checksum');
    expect(got.hashes.map((h) => h.trust.kind)).toEqual(['reported-by-mirror', 'computed-locally']);
    expect(got.hashes.at(-1)?.trust).toEqual({ kind: 'computed-locally', from: expect.stringContaining(ZIP) });
    expect(got.zipHashes?.h1.ok && got.zipHashes.h1.hash.text).toBe(HASHES.packages[ZIP]?.h1);
    expect(await listing(dir)).toEqual(['terraform-provider-demo_1.1.0_linux_amd64.zip']);
  });

  it.each([
    ['zh', ['computed-locally']],
    ['h1', ['computed-locally']],
    ['both', ['computed-locally', 'computed-locally']],
  ] as const)('verifies with %s hashes', async (hashes, verified) => {
    const m = await startFakeNetMirror({ providers: await fixtureProviders(), hashes });
    try {
      const src = new NetworkMirrorSource({ baseUrl: m.url, http: t.http, flavor: 'tofu' });
      const meta = await src.packageMeta(demo, V110, LINUX);
      const got = (await fetchPackage(meta, { destPath: join(tmp, `${hashes}.zip`), http: t.http })) as FetchedArchive;
      expect(got.hashes.filter((h) => h.trust.kind === 'computed-locally').map((h) => h.trust.kind)).toEqual(verified);
      // The zip's hashes always come back, computed from the very bytes fetched (issue 11 #1).
      expect(got.zipHashes.zh.text).toBe(got.zh.text);
    } finally {
      await m.close();
    }
  });

  it('installs unverified, with a warning, when the hash list is empty', async () => {
    const m = await startFakeNetMirror({ providers: await fixtureProviders(), hashes: 'none' });
    try {
      const meta = await new NetworkMirrorSource({ baseUrl: m.url, http: t.http, flavor: 'tofu' }).packageMeta(
        demo,
        V110,
        LINUX,
      );
      expect(meta.authentication).toBeUndefined();
      expect(meta.warnings).toEqual([
        expect.stringContaining('lists no checksums for registry.example.test/acme/demo 1.1.0 (linux_amd64)'),
      ]);
      const got = await fetchPackage(meta, { destPath: join(tmp, 'none.zip'), http: t.http });
      expect(got.label).toBe('unauthenticated');
    } finally {
      await m.close();
    }
  });

  it('refuses hashes of unknown schemes only', async () => {
    const m = await startFakeNetMirror({ providers: await fixtureProviders(), hashes: () => ['h9:abc'] });
    try {
      const err = await caught(
        new NetworkMirrorSource({ baseUrl: m.url, http: t.http, flavor: 'tofu' }).packageMeta(demo, V110, LINUX),
      );
      expect(err.message).toBe(
        'this version of OpenTofu does not support any of the checksum formats given for this provider',
      );
    } finally {
      await m.close();
    }
  });

  it('reports every platform with trust_all_hashes', async () => {
    const meta = await source({ trustAllHashes: true }).packageMeta(demo, V110, LINUX);
    expect(meta.reportedHashes.map((h) => h.platform?.toString()).sort()).toEqual([
      'darwin_amd64',
      'darwin_arm64',
      'linux_amd64',
      'linux_arm64',
      'windows_amd64',
    ]);
  });

  it('puts the host in punycode in the path, and handles a host with a port', async () => {
    const uni = parseProviderSource('café.example/acme/uni', 'tofu');
    expect((await source().availableVersions(uni)).versions.map(String)).toEqual(['0.1.0']);
    expect(mirror.log[0]?.pathname).toBe('/mirror/xn--caf-dma.example/acme/uni/index.json');
    const ported = parseProviderSource('localhost:8443/acme/ported', 'tofu');
    const meta = await source().packageMeta(ported, parseVersion('0.2.0'), LINUX);
    expect(meta.location).toEqual({
      kind: 'http',
      url: `${mirror.url}localhost:8443/acme/ported/terraform-provider-ported_0.2.0_linux_amd64.zip`,
    });
  });

  it('accepts absolute and root-relative archive URLs', async () => {
    for (const urlStyle of ['absolute', 'root-relative'] as const) {
      const m = await startFakeNetMirror({ providers: await fixtureProviders(), urlStyle });
      try {
        const meta = await new NetworkMirrorSource({ baseUrl: m.url, http: t.http, flavor: 'tofu' }).packageMeta(
          demo,
          V110,
          LINUX,
        );
        expect(meta.location).toEqual({
          kind: 'http',
          url: `${m.origin}/mirror/${HOST}/acme/demo/terraform-provider-demo_1.1.0_linux_amd64.zip`,
        });
        const got = await fetchPackage(meta, { destPath: join(tmp, `${urlStyle}.zip`), http: t.http });
        expect(got.label).toBe('verified checksum');
      } finally {
        await m.close();
      }
    }
  });
});

describe('errors', () => {
  it('refuses a non-https base URL', () => {
    expect(() => source({ baseUrl: 'http://127.0.0.1/mirror/' })).toThrow(
      'Cannot use "http://127.0.0.1/mirror/" as a URL for a network provider mirror: the mirror must be at an https: URL.',
    );
  });

  it('says not found for an unknown provider, and hints at a missing trailing slash', async () => {
    const err = await caught(source().availableVersions(parseProviderSource(`${HOST}/acme/nope`, 'tofu')));
    expect(err).toMatchObject({
      code: ErrorCode.PROVIDER_NOT_FOUND,
      provider: `${HOST}/acme/nope`,
      message: `provider ${HOST}/acme/nope was not found in any of the search locations`,
    });
    expect(err['hint']).toBeUndefined();

    const slashless = await caught(source({ baseUrl: mirror.url.slice(0, -1) }).availableVersions(demo));
    expect(slashless).toMatchObject({
      code: ErrorCode.PROVIDER_NOT_FOUND,
      url: `${mirror.origin}/${HOST}/acme/demo/index.json`,
    });
    expect(slashless['hint']).toContain('no trailing "/"');
  });

  it('requires application/json (parameters allowed)', async () => {
    mirror.setFault(`/mirror/${HOST}/acme/demo/index.json`, { kind: 'content-type', value: 'text/plain', times: 1 });
    const err = await caught(source().availableVersions(demo));
    expect(err).toMatchObject({
      code: ErrorCode.INVALID_RESPONSE,
      message: 'response has invalid Content-Type: must be application/json',
    });
    mirror.setFault(`/mirror/${HOST}/acme/demo/index.json`, {
      kind: 'content-type',
      value: 'application/json; charset=utf-8',
      times: 1,
    });
    expect((await source().availableVersions(demo)).versions).toHaveLength(2);
  });

  it('treats a missing VERSION.json as a hard error and a missing platform as unsupported', async () => {
    mirror.setFault(`/mirror/${HOST}/acme/demo/1.1.0.json`, { kind: 'status', status: 404, times: 1 });
    const err = await caught(source().packageMeta(demo, V110, LINUX));
    expect(err).toMatchObject({
      code: ErrorCode.INVALID_RESPONSE,
      message: `provider mirror does not have archive index for previously-reported ${HOST}/acme/demo version 1.1.0`,
    });
    const plat = await caught(source().packageMeta(demo, V110, parsePlatform('linux_arm')));
    expect(plat).toMatchObject({
      code: ErrorCode.PLATFORM_NOT_SUPPORTED,
      provider: `${HOST}/acme/demo`,
      version: '1.1.0',
      platform: 'linux_arm',
    });
  });

  // terraform 1.11 retries the JSON with its registry client's RetryMax (default 1); so does provkit.
  it('retries the JSON once and reports other statuses', async () => {
    const index = `/mirror/${HOST}/acme/demo/index.json`;
    mirror.setFault(index, { kind: 'status', status: 500, times: 1 });
    expect((await source().availableVersions(demo)).versions.length).toBeGreaterThan(0);
    expect(mirror.log.filter((r) => r.path === index)).toHaveLength(2);
    mirror.setFault(index, { kind: 'status', status: 500, times: 2 });
    const err = await caught(source().availableVersions(demo));
    expect(err).toMatchObject({
      code: ErrorCode.NET_HTTP_STATUS,
      message: `failed to query provider mirror ${mirror.url} for ${HOST}/acme/demo: server returned unsuccessful status 500`,
    });
    expect(mirror.log.filter((r) => r.path === index)).toHaveLength(4);
  });

  it('maps 401 to UNAUTHORIZED', async () => {
    const m = await startFakeNetMirror({ providers: await fixtureProviders(), requireToken: 'tok' });
    try {
      const err = await caught(
        new NetworkMirrorSource({ baseUrl: m.url, http: t.http, flavor: 'tofu' }).availableVersions(demo),
      );
      expect(err).toMatchObject({
        code: ErrorCode.UNAUTHORIZED,
        message: `host ${m.host} rejected the given authentication credentials`,
      });
    } finally {
      await m.close();
    }
  });

  it('sends the mirror token to the JSON only, never to archives (even on another host)', async () => {
    const m = await startFakeNetMirror({
      providers: await fixtureProviders(),
      requireToken: 'tok',
      urlStyle: 'absolute',
      archiveHost: 'separate',
    });
    try {
      const src = new NetworkMirrorSource({
        baseUrl: m.url,
        http: t.http,
        flavor: 'tofu',
        credentials: staticCredentials({ [m.host]: 'tok' }),
      });
      const meta = await src.packageMeta(demo, V110, LINUX);
      await fetchPackage(meta, { destPath: join(tmp, 'cred.zip'), http: t.http });
      expect(m.log.map((r) => r.headers['authorization'])).toEqual(['Bearer tok']);
      expect(m.archives.log.map((r) => r.headers['authorization'])).toEqual([undefined]);
    } finally {
      await m.close();
    }
  });
});

describe('archive faults', () => {
  const archive = `/mirror/${HOST}/acme/demo/terraform-provider-demo_1.1.0_linux_amd64.zip`;

  it.each([
    ['a 500', { kind: 'status', status: 500, times: 1 }],
    ['a 429 with Retry-After', { kind: 'status', status: 429, headers: { 'retry-after': '1' }, times: 2 }],
    ['a connection dropped mid-body', { kind: 'drop', times: 1 }],
    ['a wrong Content-Length', { kind: 'wrong-length', delta: 50, times: 1 }],
    ['a stall past the idle timeout', { kind: 'stall', phase: 'body', times: 1 }],
  ] as const)('recovers from %s by retrying', async (_name, fault) => {
    mirror.setFault(archive, fault);
    const { dir, fetch } = await fetchTo(source(), 'retry');
    const got = (await fetch()) as FetchedArchive;
    expect(got.zh.text).toBe(HASHES.packages[ZIP]?.zh);
    expect(mirror.requests(archive).length).toBeGreaterThan(1);
    expect(await listing(dir)).toEqual(['terraform-provider-demo_1.1.0_linux_amd64.zip']);
  });

  it.each([
    ['a 404', { kind: 'status', status: 404 }, ErrorCode.NET_HTTP_STATUS],
    ['a 500 every time', { kind: 'status', status: 500 }, ErrorCode.NET_HTTP_STATUS],
    ['a connection dropped every time', { kind: 'drop' }, ErrorCode.NET_SIZE_MISMATCH],
    ['a stall every time', { kind: 'stall', phase: 'body' }, ErrorCode.NET_TIMEOUT],
    ['a truncated close-delimited body', { kind: 'truncate' }, ErrorCode.CHECKSUM_MISMATCH],
    ['a tampered zip', { kind: 'tamper' }, ErrorCode.CHECKSUM_MISMATCH],
  ] as const)('fails clearly on %s and leaves no file', async (_name, fault, code) => {
    mirror.setFault(archive, fault);
    const { dir, fetch } = await fetchTo(source(), 'fail');
    const err = await caught(fetch());
    expect(err).toMatchObject({ code, provider: `${HOST}/acme/demo`, version: '1.1.0', platform: 'linux_amd64' });
    expect(String(err['url'])).toContain('terraform-provider-demo_1.1.0_linux_amd64.zip');
    if (code === ErrorCode.CHECKSUM_MISMATCH) {
      expect(err.message).toBe(
        `provider package doesn't match the expected checksum "${mirror.hashesOf(HOST, 'acme', 'demo', '1.1.0', 'linux_amd64').h1Zip}"`,
      );
    }
    expect(await listing(dir)).toEqual([]);
  });
});
