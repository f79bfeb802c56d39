// RegistrySource + fetchPackage against the fake registry (HTTPS on
// 127.0.0.1): discovery, versions, download metadata, SHA256SUMS parsing,
// signatures per flavor, credentials scoping, and every fault switch.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import {
  parsePlatform,
  parseProviderSource,
  parseVersion,
  type Flavor,
  type ProviderAddress,
} from '../../src/addresses/index.js';
import {
  credentialsFromEnv,
  fetchPackage,
  RegistrySource,
  ServiceDiscovery,
  signaturePolicy,
  signatureSwitchesFromEnv,
  type CredentialsLookup,
  type FetchedArchive,
  type ServiceMap,
} from '../../src/sources/index.js';
import { startFakeRegistry, type FakeRegistry, type FakeRegistryOptions } from '../support/servers/registry.js';
import { fixtureProviders, makeProvider, type FakeProvider } from '../support/servers/packages.js';
import { caught, listing, testHttp, type TestHttp } from './helpers.js';
import { ErrorCode } from '../../src/errors.js';

const FIXTURES = fileURLToPath(new URL('../../mirror-fixtures/', import.meta.url));
const HASHES = JSON.parse(await readFile(join(FIXTURES, 'hashes.json'), 'utf8')) as {
  packages: Record<string, { zh: string; h1: string }>;
};
const ZIP_KEY = 'registry.example.test/acme/demo/terraform-provider-demo_1.1.0_linux_amd64.zip';
const V110 = parseVersion('1.1.0');
const LINUX = parsePlatform('linux_amd64');
const FILE = 'terraform-provider-demo_1.1.0_linux_amd64.zip';

let providers: FakeProvider[];
let reg: FakeRegistry;
let t: TestHttp;
let tmp: string;

beforeAll(async () => {
  providers = await fixtureProviders();
  reg = await startFakeRegistry({ providers });
  t = testHttp(reg.caPath);
  tmp = await mkdtemp(join(tmpdir(), 'provkit-registry-'));
});
afterAll(async () => {
  t.close();
  await reg.close();
  await rm(tmp, { recursive: true, force: true });
});
afterEach(() => {
  for (const s of [reg, reg.archives]) {
    s.clearFaults();
    s.log.length = 0;
  }
  t.sleeps.length = 0;
});

interface SourceOpts {
  flavor?: Flavor;
  env?: Record<string, string>;
  credentials?: CredentialsLookup;
  overrides?: Record<string, ServiceMap>;
  discovery?: ServiceDiscovery;
}
function source(o: SourceOpts = {}): RegistrySource {
  const flavor = o.flavor ?? 'tofu';
  const credentials = o.credentials ?? credentialsFromEnv(o.env ?? {});
  return new RegistrySource({
    http: t.http,
    discovery:
      o.discovery ??
      new ServiceDiscovery({ http: t.http, credentials, ...(o.overrides ? { overrides: o.overrides } : {}) }),
    flavor,
    credentials,
    terraformVersion: '1.12.0',
    signaturePolicy: signaturePolicy(flavor, signatureSwitchesFromEnv(o.env ?? {})),
  });
}
const addr = (r: { host: string }, type = 'demo', ns = 'acme'): ProviderAddress =>
  parseProviderSource(`${r.host}/${ns}/${type}`, 'tofu');

async function withRegistry<T>(opts: Partial<FakeRegistryOptions>, fn: (r: FakeRegistry) => Promise<T>): Promise<T> {
  const r = await startFakeRegistry({ providers, ...opts });
  try {
    return await fn(r);
  } finally {
    await r.close();
  }
}

async function fetchInto(meta: Awaited<ReturnType<RegistrySource['packageMeta']>>, name: string) {
  const dir = await mkdtemp(join(tmp, `${name}-`));
  return { dir, result: fetchPackage(meta, { destPath: join(dir, meta.filename), http: t.http }) };
}

describe('protocol', () => {
  it('discovers once per host, lists versions, and sends the reference headers', async () => {
    const discovery = new ServiceDiscovery({ http: t.http });
    const a = source({ discovery });
    expect((await a.availableVersions(addr(reg))).versions.map(String)).toEqual(['1.0.0', '1.1.0']);
    expect((await source({ discovery }).availableVersions(addr(reg, 'tools'))).versions.map(String)).toEqual(['0.3.0']);
    expect(reg.requests(reg.paths.discovery)).toHaveLength(1);
    const versions = reg.requests(reg.paths.versions('acme', 'demo'))[0];
    expect(versions?.headers['x-terraform-version']).toBe('1.12.0');
    expect(versions?.headers['user-agent']).toBe('provkit-test');
    expect(versions?.headers['authorization']).toBeUndefined();
  });

  it('names the archive URL and the zh: it expects as soon as the download metadata is read, before the SHA256SUMS is asked', async () => {
    const heard: Array<[string, string, number]> = [];
    const before = reg.requests(/_SHA256SUMS/).length;
    const meta = await source().packageMeta(addr(reg, 'tools'), parseVersion('0.3.0'), LINUX, undefined, {
      archiveURL: (url, zh) => heard.push([url, zh.text, reg.requests(/_SHA256SUMS/).length - before]),
    });
    const sha = reg.sha256('acme', 'tools', '0.3.0', 'linux_amd64');
    expect(heard).toEqual([[meta.location.kind === 'http' ? meta.location.url : '', `zh:${sha}`, 0]]);
    expect(reg.requests(/_SHA256SUMS/).length - before).toBe(2);
  });

  it('describes a package: signed SHA256SUMS lines, the shasum, a registry authentication', async () => {
    const meta = await source().packageMeta(addr(reg), V110, LINUX);
    const sha = reg.sha256('acme', 'demo', '1.1.0', 'linux_amd64');
    expect(meta).toMatchObject({
      filename: FILE,
      protocols: ['5.0'],
      location: { kind: 'http', url: `${reg.origin}${reg.paths.archive('acme', 'demo', '1.1.0', 'linux_amd64')}` },
      authentication: {
        kind: 'registry',
        sha256: sha,
        signature: { kind: 'signed', keyId: reg.keyIds[0], expired: false },
      },
      warnings: [],
    });
    expect(meta.reportedHashes[0]).toMatchObject({
      hash: { text: `zh:${sha}` },
      trust: { kind: 'reported-by-registry' },
      platform: LINUX,
    });
    const signed = meta.reportedHashes.filter((h) => h.trust.kind === 'signed');
    expect(signed).toHaveLength(5);
    expect(
      signed.every((h) => h.trust.kind === 'signed' && h.trust.keyId === reg.keyIds[0] && h.platform === undefined),
    ).toBe(true);
    // Who vouches for each line: the key (never expiring), the document, and the file the line names.
    expect(signed[0]?.trust).toEqual({
      kind: 'signed',
      keyId: reg.keyIds[0],
      keyExpires: null,
      url: `${reg.origin}${reg.paths.shasums('acme', 'demo', '1.1.0')}`,
    });
    expect(signed.map((h) => h.file).sort()).toContain('terraform-provider-demo_1.1.0_linux_amd64.zip');
    // SHA256SUMS and signature are fetched without the API headers.
    const sums = reg.requests(reg.paths.shasums('acme', 'demo', '1.1.0'))[0];
    expect(sums?.headers['x-terraform-version']).toBeUndefined();
  });

  it('fetches and authenticates the archive', async () => {
    const meta = await source().packageMeta(addr(reg), V110, LINUX);
    const { dir, result } = await fetchInto(meta, 'ok');
    const got = (await result) as FetchedArchive;
    expect(got.zh.text).toBe(HASHES.packages[ZIP_KEY]?.zh);
    expect(got).toMatchObject({ label: 'signed', keyId: reg.keyIds[0], size: expect.any(Number) });
    expect(got.hashes.at(-1)).toMatchObject({ hash: got.zh, trust: { kind: 'verified-locally' }, platform: LINUX });
    // Verified locally: computed from bytes whose zh: the key's signature covered, downloaded from there.
    expect(got.hashes.at(-1)?.trust).toEqual({
      kind: 'verified-locally',
      keyId: reg.keyIds[0],
      from: expect.stringContaining('/files/acme/demo/1.1.0/'),
    });
    expect(await listing(dir)).toEqual([FILE]);
  });

  it.each(['relative', 'root-relative'] as const)('resolves %s URLs against the response URL', async (urlStyle) => {
    await withRegistry({ urlStyle }, async (r) => {
      const meta = await source().packageMeta(addr(r), V110, LINUX);
      expect(meta.location.kind === 'http' && meta.location.url.startsWith(r.origin)).toBe(true);
      expect(((await (await fetchInto(meta, urlStyle)).result) as FetchedArchive).label).toBe('signed');
    });
  });

  it('works over plain http when a host-services override points there', async () => {
    await withRegistry({ tls: false }, async (r) => {
      const src = source({ overrides: { 'registry.example.test': { 'providers.v1': r.providersUrl } } });
      const meta = await src.packageMeta(parseProviderSource('registry.example.test/acme/demo', 'tofu'), V110, LINUX);
      expect(meta.location.kind === 'http' && meta.location.url.startsWith('http://127.0.0.1:')).toBe(true);
      expect(((await (await fetchInto(meta, 'plain')).result) as FetchedArchive).label).toBe('signed');
    });
  });

  it('passes registry warnings on, and refuses an unparsable version', async () => {
    await withRegistry({ versionsWarnings: ['deprecated provider'] }, async (r) => {
      expect((await source().availableVersions(addr(r))).warnings).toEqual(['deprecated provider']);
    });
    await withRegistry({ providers: [await makeProvider('acme', 'bad', ['1.0.0', 'v2.0.0'])] }, async (r) => {
      const err = await caught(source().availableVersions(addr(r, 'bad')));
      expect(err).toMatchObject({ code: ErrorCode.INVALID_RESPONSE });
      expect(err.message).toMatch(
        /^registry response includes invalid version string "v2\.0\.0": a "v" prefix should not be used/,
      );
    });
  });

  it('maps 404s to unknown provider and unsupported platform', async () => {
    const unknown = await caught(source().availableVersions(addr(reg, 'nope')));
    expect(unknown).toMatchObject({
      code: ErrorCode.REGISTRY_PROVIDER_UNKNOWN,
      message: `provider registry ${reg.host} does not have a provider named ${reg.host}/acme/nope`,
    });
    const plat = await caught(source().packageMeta(addr(reg), V110, parsePlatform('linux_arm')));
    expect(plat).toMatchObject({
      code: ErrorCode.PLATFORM_NOT_SUPPORTED,
      message: `provider ${reg.host}/acme/demo 1.1.0 is not available for linux_arm (available for: darwin_amd64, darwin_arm64, linux_amd64, linux_arm64, windows_amd64)`,
      version: '1.1.0',
      platform: 'linux_arm',
    });
  });

  it('refuses unsupported plugin protocols and suggests a version that has one', async () => {
    await withRegistry(
      { downloadTransform: (b, c) => (c.version === '1.1.0' ? { ...b, protocols: ['4.0'] } : b) },
      async (r) => {
        const err = await caught(source().packageMeta(addr(r), V110, LINUX));
        expect(err).toMatchObject({
          code: ErrorCode.PROTOCOL_NOT_SUPPORTED,
          message: `provider ${r.host}/acme/demo 1.1.0 is not supported by this version of OpenTofu`,
          hint: 'the newest version compatible with this tofu is 1.0.0',
        });
      },
    );
  });

  it('checks the download response fields', async () => {
    const cases: Array<[(b: Record<string, unknown>) => Record<string, unknown>, string]> = [
      [
        (b) => ({ ...b, os: 'darwin' }),
        'registry response to request for linux_amd64 archive has incorrect target darwin_amd64',
      ],
      [
        (b) => ({ ...b, shasum: 'abc' }),
        'registry response includes invalid SHA256 hash "abc": must be 64 hexadecimal digits',
      ],
      [
        (b) => ({ ...b, download_url: 'ftp://example.test/x.zip' }),
        'registry response includes download URL with unsupported scheme "ftp"',
      ],
      [(b) => ({ ...b, filename: 'other.zip' }), 'checksum list has no SHA-256 hash for "other.zip"'],
    ];
    for (const [transform, message] of cases) {
      await withRegistry({ downloadTransform: transform }, async (r) => {
        expect((await caught(source().packageMeta(addr(r), V110, LINUX))).message).toBe(message);
      });
    }
  });
});

describe('SHA256SUMS parsing', () => {
  const extra = `${'ab'.repeat(32)}  terraform-provider-demo_1.1.0_manifest.json`;

  async function lineHashes(opts: Partial<FakeRegistryOptions>) {
    return withRegistry(opts, async (r) => {
      const meta = await source().packageMeta(addr(r), V110, LINUX);
      const got = (await (await fetchInto(meta, 'sums')).result) as FetchedArchive;
      return { meta, got, lines: meta.reportedHashes.filter((h) => h.trust.kind === 'signed').map((h) => h.hash.text) };
    });
  }

  it('records every line, manifest included', async () => {
    const { lines } = await lineHashes({ shasumsExtraLines: [extra] });
    expect(lines).toHaveLength(6);
    expect(lines).toContain(`zh:${'ab'.repeat(32)}`);
  });

  it('splits on any white space and lowers upper-case hex', async () => {
    const { lines } = await lineHashes({
      shasumsTransform: (d) =>
        d
          .replaceAll('  ', '\t \t')
          .replaceAll('\n', '\r\n')
          .toUpperCase()
          .replaceAll('TERRAFORM-PROVIDER-DEMO', 'terraform-provider-demo')
          .replaceAll('_LINUX_AMD64.ZIP', '_linux_amd64.zip'),
    });
    expect(lines).toHaveLength(5);
    expect(lines.every((l) => /^zh:[0-9a-f]{64}$/.test(l))).toBe(true);
  });

  it('falls back to the archive zh only when a line is malformed', async () => {
    const { meta, got, lines } = await lineHashes({ shasumsExtraLines: ['garbage'] });
    expect(lines).toEqual([]);
    expect(meta.warnings).toEqual([expect.stringContaining('is not a checksum list (line 6 has only one field)')]);
    expect(got.hashes.filter((h) => h.trust.kind === 'verified-locally').map((h) => h.hash.text)).toEqual([
      got.zh.text,
    ]);
  });

  it('skips a blank line (where terraform 1.11.4 crashes) and says so', async () => {
    const { meta, lines } = await lineHashes({ shasumsTransform: (d) => `${d}\n` });
    expect(lines).toHaveLength(5);
    expect(meta.warnings).toEqual([expect.stringContaining('has blank lines (line 6)')]);
  });
});

describe('signatures', () => {
  const OFFICIAL = 'registry.opentofu.org';

  /** A source that sees `r` as the given host through a host-services override. */
  function as(r: FakeRegistry, host: string, o: SourceOpts = {}) {
    return {
      src: source({ ...o, overrides: { [host]: { 'providers.v1': r.providersUrl } } }),
      provider: parseProviderSource(`${host}/acme/demo`, 'tofu'),
    };
  }

  it('checks a release’s signature once for all its platforms, asked at once or one after another', async () => {
    // Every check looks in the signature cache first: its look-ups count the checks.
    const lookups: string[] = [];
    const cache = {
      get: (key: string) => {
        lookups.push(key);
        return Promise.resolve(undefined);
      },
      put: () => Promise.resolve(),
    };
    const flavor = 'terraform';
    const src = new RegistrySource({
      http: t.http,
      discovery: new ServiceDiscovery({ http: t.http, credentials: credentialsFromEnv({}) }),
      flavor,
      credentials: credentialsFromEnv({}),
      signaturePolicy: signaturePolicy(flavor),
      signatureCache: cache,
    });
    const platforms = ['linux_amd64', 'linux_arm64', 'darwin_amd64', 'darwin_arm64'].map(parsePlatform);
    const metas = await Promise.all(platforms.map((p) => src.packageMeta(addr(reg), V110, p)));
    await src.packageMeta(addr(reg), V110, parsePlatform('windows_amd64'));
    expect(metas.map((m) => m.authentication?.kind === 'registry' && m.authentication.signature.kind)).toEqual(
      platforms.map(() => 'signed'),
    );
    expect(lookups).toHaveLength(1);
  });

  it('checks the signatures of releases one at a time, in the order asked, so the first ends first', async () => {
    // Every check looks in the signature cache first and stores its result last: the log of both is the checks'
    // order. The first check's look-up is held until every release's SHA256SUMS and signature have arrived, so
    // that all three checks could run together if nothing kept them apart.
    const log: string[] = [];
    let documents = 0;
    let allArrived!: () => void;
    const arrived = new Promise<void>((resolve) => (allArrived = resolve));
    const http = Object.create(t.http) as typeof t.http;
    http.get = async (url, o) => {
      const res = await t.http.get(url, o);
      if (url.includes('SHA256SUMS') && (documents += 1) === 6) allArrived();
      return res;
    };
    const names = new Map<string, string>();
    const name = (key: string): string =>
      names.get(key) ?? (names.set(key, `check ${names.size + 1}`), `check ${names.size}`);
    const cache = {
      get: async (key: string) => {
        log.push(`${name(key)} starts`);
        if (log.length === 1) {
          await arrived;
          // The turns in which the other releases' code would reach their checks.
          for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
        }
        return undefined;
      },
      put: (key: string) => {
        log.push(`${name(key)} ends`);
        return Promise.resolve();
      },
    };
    const flavor = 'terraform';
    const src = new RegistrySource({
      http,
      discovery: new ServiceDiscovery({ http, credentials: credentialsFromEnv({}) }),
      flavor,
      credentials: credentialsFromEnv({}),
      signaturePolicy: signaturePolicy(flavor),
      signatureCache: cache,
    });
    const asked = [
      src.packageMeta(addr(reg), V110, LINUX),
      src.packageMeta(addr(reg), parseVersion('1.0.0'), LINUX),
      src.packageMeta(addr(reg, 'tools'), parseVersion('0.3.0'), LINUX),
    ];
    const metas = await Promise.all(asked);
    expect(metas.map((m) => m.authentication?.kind === 'registry' && m.authentication.signature.kind)).toEqual([
      'signed',
      'signed',
      'signed',
    ]);
    expect(log).toEqual([
      'check 1 starts',
      'check 1 ends',
      'check 2 starts',
      'check 2 ends',
      'check 3 starts',
      'check 3 ends',
    ]);
  });

  it('skips validation on the OpenTofu default registry when it lists no keys', async () => {
    await withRegistry({ listedKeys: [] }, async (r) => {
      const { src, provider } = as(r, OFFICIAL);
      const meta = await src.packageMeta(provider, V110, LINUX);
      expect(meta.authentication).toMatchObject({ signature: { kind: 'skipped' } });
      expect(meta.warnings).toEqual([expect.stringContaining('Signature validation was skipped')]);
      expect(meta.reportedHashes.filter((h) => h.trust.kind === 'reported-by-registry')).toHaveLength(6);
      expect(((await (await fetchInto(meta, 'skip')).result) as FetchedArchive).label).toBe('signing skipped');
      expect(r.requests(r.paths.discovery)).toEqual([]);
    });
  });

  it.each([
    ['OPENTOFU_ENFORCE_GPG_VALIDATION=true', OFFICIAL, 'tofu', { OPENTOFU_ENFORCE_GPG_VALIDATION: 'true' }],
    ['another host', 'registry.example.test', 'tofu', {}],
  ] as const)('enforces validation with %s', async (_name, host, flavor, env) => {
    await withRegistry({ listedKeys: [] }, async (r) => {
      const { src, provider } = as(r, host, { flavor, env });
      const err = await caught(src.packageMeta(provider, V110, LINUX));
      expect(err).toMatchObject({
        code: ErrorCode.SIGNATURE_INVALID,
        message:
          'the provider is not signed with a valid signing key; please contact the provider author (authentication signature from unknown issuer)',
        provider: `${host}/acme/demo`,
      });
    });
  });

  it('always enforces for terraform, with its bare message', async () => {
    await withRegistry({ listedKeys: [] }, async (r) => {
      const { src, provider } = as(r, 'registry.terraform.io', { flavor: 'terraform' });
      expect((await caught(src.packageMeta(provider, V110, LINUX))).message).toBe(
        'authentication signature from unknown issuer',
      );
    });
  });

  it('refuses a signature by an unlisted key before downloading anything', async () => {
    reg.unlistedKey('acme', 'demo', '1.1.0');
    const err = await caught(source().packageMeta(addr(reg), V110, LINUX));
    expect(err).toMatchObject({
      code: ErrorCode.SIGNATURE_INVALID,
      provider: `${reg.host}/acme/demo`,
      version: '1.1.0',
      platform: 'linux_amd64',
    });
    expect(err.message).toContain('(authentication signature from unknown issuer)');
    expect(reg.requests(reg.paths.archive('acme', 'demo', '1.1.0', 'linux_amd64'))).toEqual([]);
  });

  it('refuses a corrupted signature', async () => {
    reg.badSignature('acme', 'demo', '1.1.0');
    const err = await caught(source({ flavor: 'terraform' }).packageMeta(addr(reg), V110, LINUX));
    expect(err).toMatchObject({
      code: ErrorCode.SIGNATURE_INVALID,
      url: `${reg.origin}${reg.paths.signature('acme', 'demo', '1.1.0')}`,
    });
    expect(err.message).toMatch(/^error checking signature: /);
  });

  it('refuses a tampered SHA256SUMS (signature no longer matches)', async () => {
    reg.setFault(reg.paths.shasums('acme', 'demo', '1.1.0'), {
      kind: 'replace',
      body: (b) => Buffer.concat([b, Buffer.from(`${'cd'.repeat(32)}  evil.zip\n`)]),
    });
    expect((await caught(source().packageMeta(addr(reg), V110, LINUX))).message).toMatch(/error checking signature: /);
  });

  it('tries each listed key in turn', async () => {
    await withRegistry({ listedKeys: ['other', 'main'] }, async (r) => {
      const meta = await source().packageMeta(addr(r), V110, LINUX);
      expect(meta.authentication).toMatchObject({ signature: { kind: 'signed', keyId: r.keyIds[1] } });
    });
  });

  it('refuses an undecodable key', async () => {
    await withRegistry(
      { downloadTransform: (b) => ({ ...b, signing_keys: { gpg_public_keys: [{ ascii_armor: 'junk' }] } }) },
      async (r) => {
        expect((await caught(source().packageMeta(addr(r), V110, LINUX))).message).toMatch(
          /\(error decoding signing key: /,
        );
      },
    );
  });

  it('tolerates an expired key in OpenTofu (with a warning) unless enforced; terraform refuses it', async () => {
    await withRegistry({ listedKeys: ['expired'], signWith: 'expired' }, async (r) => {
      const meta = await source().packageMeta(addr(r), V110, LINUX);
      expect(meta.authentication).toMatchObject({ signature: { kind: 'signed', keyId: r.keyIds[0], expired: true } });
      expect(meta.warnings).toEqual([
        `Provider acme/demo (${r.host}) gpg key expired, this will fail in future versions of OpenTofu`,
      ]);

      const enforced = await caught(
        source({ env: { OPENTOFU_ENFORCE_GPG_EXPIRATION: 'true' } }).packageMeta(addr(r), V110, LINUX),
      );
      expect(enforced.message).toBe(
        'the provider is not signed with a valid signing key; please contact the provider author (error checking signature: openpgp: key expired)',
      );
      const tf = await caught(source({ flavor: 'terraform' }).packageMeta(addr(r), V110, LINUX));
      expect(tf.message).toBe('error checking signature: openpgp: key expired');
    });
  });
});

describe('credentials', () => {
  it('sends the host token to discovery and the API only, never to SHA256SUMS, signatures or archives', async () => {
    await withRegistry({ requireToken: 'sekret', archiveHost: 'separate' }, async (r) => {
      const denied = await caught(source().availableVersions(addr(r)));
      expect(denied).toMatchObject({ code: ErrorCode.SERVICE_DISCOVERY });
      r.log.length = 0;

      const env = { [`TF_TOKEN_${r.host}`]: 'sekret' };
      const meta = await source({ env }).packageMeta(addr(r), V110, LINUX);
      await (
        await fetchInto(meta, 'cred')
      ).result;
      expect(r.log.map((q) => [q.pathname, q.headers['authorization']])).toEqual([
        [r.paths.discovery, 'Bearer sekret'],
        [r.paths.download('acme', 'demo', '1.1.0', 'linux_amd64'), 'Bearer sekret'],
      ]);
      expect(r.archives.log.map((q) => q.headers['authorization'])).toEqual([undefined, undefined, undefined]);
    });
  });

  it('sends no token to the documents even on the API host', async () => {
    await withRegistry({ requireToken: 'sekret' }, async (r) => {
      const meta = await source({ env: { [`TF_TOKEN_${r.host}`]: 'sekret' } }).packageMeta(addr(r), V110, LINUX);
      await (
        await fetchInto(meta, 'cred2')
      ).result;
      const files = r.log.filter((q) => q.pathname.startsWith('/files/'));
      expect(files).toHaveLength(3);
      expect(files.every((q) => q.headers['authorization'] === undefined)).toBe(true);
    });
  });

  it('decodes TF_TOKEN_ names and follows a host-services override to the delegated API', async () => {
    await withRegistry({ requireToken: 'tok' }, async (r) => {
      const src = source({
        env: { TF_TOKEN_registry_example__two_test: 'tok' },
        overrides: { 'registry.example-two.test': { 'providers.v1': r.providersUrl } },
      });
      const provider = parseProviderSource('registry.example-two.test/acme/demo', 'tofu');
      expect((await src.availableVersions(provider)).versions).toHaveLength(2);
      expect(r.log.map((q) => q.headers['authorization'])).toEqual(['Bearer tok']);
    });
  });

  it('reports rejected and missing credentials', async () => {
    await withRegistry({ requireToken: 'tok' }, async (r) => {
      const overrides = { [r.host]: { 'providers.v1': r.providersUrl } };
      const missing = await caught(source({ overrides }).availableVersions(addr(r)));
      expect(missing).toMatchObject({
        code: ErrorCode.UNAUTHORIZED,
        message: `host ${r.host} requires authentication credentials`,
      });
      const wrong = await caught(
        source({ overrides, env: { [`TF_TOKEN_${r.host}`]: 'bad' } }).availableVersions(addr(r)),
      );
      expect(wrong.message).toBe(`host ${r.host} rejected the given authentication credentials`);
    });
  });
});

describe('discovery', () => {
  it.each([
    [{}, 'does not offer a OpenTofu provider registry'],
    [
      { 'providers.v2': '/v2/' },
      'does not support the provider registry protocol required by this OpenTofu version, but may be compatible with a different OpenTofu version',
    ],
    [{ 'providers.v1': 'ftp://x/' }, 'Service URL is using an unsupported scheme: ftp'],
  ])('reports services %j', async (services, message) => {
    await withRegistry({ services }, async (r) => {
      expect((await caught(source().availableVersions(addr(r)))).message).toContain(message);
    });
  });

  // The reference does not retry discovery; provkit retries once (docs/reference.md §4.1 item 52).
  it('treats a 404 as no services and other statuses as failures after one retry', async () => {
    reg.setFault(reg.paths.discovery, { kind: 'status', status: 404, times: 1 });
    expect((await caught(source().availableVersions(addr(reg)))).message).toBe(
      `host ${reg.host} does not offer a OpenTofu provider registry`,
    );
    reg.setFault(reg.paths.discovery, { kind: 'status', status: 503, times: 2 });
    const err = await caught(source().availableVersions(addr(reg)));
    expect(err).toMatchObject({
      code: ErrorCode.SERVICE_DISCOVERY,
      message: 'failed to request discovery document: 503 Service Unavailable',
    });
    expect(reg.requests(reg.paths.discovery)).toHaveLength(3);
  });

  it('requires application/json', async () => {
    reg.setFault(reg.paths.discovery, { kind: 'content-type', value: 'text/html', times: 1 });
    expect((await caught(source().availableVersions(addr(reg)))).message).toBe(
      'discovery URL returned an unsupported Content-Type "text/html"',
    );
  });

  it('does not cache failures', async () => {
    const discovery = new ServiceDiscovery({ http: t.http });
    reg.setFault(reg.paths.discovery, { kind: 'status', status: 500, times: 2 });
    await caught(source({ discovery }).availableVersions(addr(reg)));
    expect((await source({ discovery }).availableVersions(addr(reg))).versions).toHaveLength(2);
  });
});

describe('API faults', () => {
  const versions = () => reg.paths.versions('acme', 'demo');

  it('retries a 500 once (the default) and succeeds', async () => {
    reg.setFault(versions(), { kind: 'status', status: 500, times: 1 });
    expect((await source().availableVersions(addr(reg))).versions).toHaveLength(2);
    expect(reg.requests(versions())).toHaveLength(2);
  });

  it('gives up after the retries with the reference text', async () => {
    reg.setFault(versions(), { kind: 'status', status: 500 });
    const err = await caught(source().availableVersions(addr(reg)));
    expect(err).toMatchObject({ code: ErrorCode.NET_HTTP_STATUS, provider: `${reg.host}/acme/demo` });
    expect(err.message).toBe(
      `could not query provider registry for ${reg.host}/acme/demo: the request failed after 2 attempts, please try again later: 500 Internal Server Error returned from ${reg.origin}${versions()}`,
    );
  });

  it('honours Retry-After on a 429', async () => {
    reg.setFault(reg.paths.download('acme', 'demo', '1.1.0', 'linux_amd64'), {
      kind: 'status',
      status: 429,
      headers: { 'retry-after': '7' },
      times: 1,
    });
    await source().packageMeta(addr(reg), V110, LINUX);
    expect(t.sleeps).toEqual([7000]);
  });

  it('times out a stalled API response and retries it', async () => {
    reg.setFault(versions(), { kind: 'stall', phase: 'body', times: 1 });
    expect((await source().availableVersions(addr(reg))).versions).toHaveLength(2);
    reg.setFault(versions(), { kind: 'stall', phase: 'headers' });
    const err = await caught(source().availableVersions(addr(reg)));
    expect(err).toMatchObject({
      code: ErrorCode.NET_TIMEOUT,
      provider: `${reg.host}/acme/demo`,
      url: `${reg.origin}${versions()}`,
    });
  }, 10_000);

  it('reports a missing SHA256SUMS', async () => {
    reg.setFault(reg.paths.shasums('acme', 'demo', '1.1.0'), { kind: 'status', status: 404 });
    const err = await caught(source().packageMeta(addr(reg), V110, LINUX));
    expect(err).toMatchObject({ code: ErrorCode.NET_HTTP_STATUS, version: '1.1.0', platform: 'linux_amd64' });
    expect(err.message).toBe(
      `could not query provider registry for ${reg.host}/acme/demo: failed to retrieve authentication checksums for provider: 404 Not Found returned from ${reg.host}`,
    );
  });
});

describe('archive faults', () => {
  const archive = () => reg.paths.archive('acme', 'demo', '1.1.0', 'linux_amd64');

  it.each([
    ['a 500', { kind: 'status', status: 500, times: 1 }],
    ['a dropped connection', { kind: 'drop', times: 2 }],
    ['a wrong Content-Length', { kind: 'wrong-length', delta: 10, times: 1 }],
    ['a stall', { kind: 'stall', phase: 'body', times: 1 }],
  ] as const)('recovers from %s', async (_n, fault) => {
    reg.setFault(archive(), fault);
    const meta = await source().packageMeta(addr(reg), V110, LINUX);
    const { dir, result } = await fetchInto(meta, 'recover');
    expect(((await result) as FetchedArchive).zh.text).toBe(HASHES.packages[ZIP_KEY]?.zh);
    expect(await listing(dir)).toEqual([FILE]);
  });

  it.each([
    ['a tampered zip', { kind: 'tamper' }, ErrorCode.CHECKSUM_MISMATCH],
    ['a truncated body', { kind: 'truncate' }, ErrorCode.CHECKSUM_MISMATCH],
    ['a connection dropped every time', { kind: 'drop' }, ErrorCode.NET_SIZE_MISMATCH],
    ['a stall every time', { kind: 'stall', phase: 'body' }, ErrorCode.NET_TIMEOUT],
    ['a 404', { kind: 'status', status: 404 }, ErrorCode.NET_HTTP_STATUS],
  ] as const)('fails on %s with a typed error and no file', async (_n, fault, code) => {
    reg.setFault(archive(), fault);
    const meta = await source().packageMeta(addr(reg), V110, LINUX);
    const { dir, result } = await fetchInto(meta, 'fail');
    const err = await caught(result);
    expect(err).toMatchObject({
      code,
      provider: `${reg.host}/acme/demo`,
      version: '1.1.0',
      platform: 'linux_amd64',
      url: `${reg.origin}${archive()}`,
    });
    if (code === ErrorCode.CHECKSUM_MISMATCH) {
      expect(err.message).toMatch(
        new RegExp(
          `^archive has incorrect checksum zh:[0-9a-f]{64} \\(expected zh:${reg.sha256('acme', 'demo', '1.1.0', 'linux_amd64')}\\)$`,
        ),
      );
    }
    expect(await listing(dir)).toEqual([]);
  });
});

describe('OpenTofu packages extension', () => {
  it('reports every platform hash, and checks the size after the download', async () => {
    await withRegistry({ packagesExtension: true }, async (r) => {
      const meta = await source().packageMeta(addr(r), V110, LINUX);
      const h1s = meta.reportedHashes.filter((h) => h.hash.scheme === 'h1:');
      expect(h1s.map((h) => h.platform?.toString()).sort()).toEqual([
        'darwin_amd64',
        'darwin_arm64',
        'linux_amd64',
        'linux_arm64',
        'windows_amd64',
      ]);
      expect(h1s.find((h) => h.platform?.toString() === 'linux_amd64')?.hash.text).toBe(HASHES.packages[ZIP_KEY]?.h1);
      expect(((await (await fetchInto(meta, 'pkgs')).result) as FetchedArchive).label).toBe('signed');
    });
    await withRegistry(
      {
        packagesExtension: true,
        downloadTransform: (b) => ({
          ...b,
          packages: {
            ...(b['packages'] as object),
            linux_amd64: { hashes: [`zh:${String(b['shasum'])}`], package_size: 5 },
          },
        }),
      },
      async (r) => {
        const meta = await source().packageMeta(addr(r), V110, LINUX);
        const { dir, result } = await fetchInto(meta, 'size');
        const err = await caught(result);
        expect(err).toMatchObject({ code: ErrorCode.CHECKSUM_MISMATCH, expected: '5' });
        expect(err.message).toMatch(
          /^registry response indicates a package of size 5, but received a package of size \d+$/,
        );
        expect(await listing(dir)).toEqual([]);
      },
    );
  });

  it('refuses inconsistent packages entries', async () => {
    await withRegistry(
      {
        packagesExtension: true,
        downloadTransform: (b) => ({ ...b, packages: { darwin_arm64: { hashes: [], package_size: 1 } } }),
      },
      async (r) => {
        expect((await caught(source().packageMeta(addr(r), V110, LINUX))).message).toBe(
          'registry response missing package with platform "linux_amd64"',
        );
      },
    );
    await withRegistry(
      {
        packagesExtension: true,
        downloadTransform: (b) => ({ ...b, packages: { 'not a platform': { hashes: [], package_size: 1 } } }),
      },
      async (r) => {
        expect((await caught(source().packageMeta(addr(r), V110, LINUX))).message).toMatch(
          /^registry response includes invalid platform "not a platform"/,
        );
      },
    );
  });
});
