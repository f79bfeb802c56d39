// MultiSource (include/exclude patterns, union, first match), MemoizeSource
// (results and errors cached, aborts forgotten, in-flight sharing), the test
// doubles, and one end-to-end composition: filesystem mirror + network mirror.
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  parsePlatform,
  parseProviderSource,
  parseVersion,
  type Platform,
  type ProviderAddress,
} from '../../src/addresses/index.js';
import { ErrorCode, ProvkitError } from '../../src/errors.js';
import {
  canHandleProvider,
  FilesystemMirrorSource,
  HangingSource,
  MemoizeSource,
  MockSource,
  MultiSource,
  NetworkMirrorSource,
  parseProviderPatterns,
  platformNotSupported,
  type AvailableVersions,
  type PackageMeta,
  type Source,
  withContext,
} from '../../src/sources/index.js';
import { startFakeNetMirror, type FakeNetMirror } from '../support/servers/net-mirror.js';
import { makeProvider } from '../support/servers/packages.js';
import { caught, testHttp, type TestHttp } from './helpers.js';

const p = (s: string): ProviderAddress => parseProviderSource(s, 'tofu');
const v = parseVersion;
const LINUX = parsePlatform('linux_amd64');
const DARWIN = parsePlatform('darwin_arm64');

function pkg(provider: string, version: string, platform: Platform = LINUX) {
  return { provider: p(provider), version: v(version), platform };
}

describe('patterns', () => {
  it('parses short, full and wildcard patterns per flavor', () => {
    expect(parseProviderPatterns(['acme/demo'], 'tofu')).toEqual([
      { hostname: 'registry.opentofu.org', namespace: 'acme', type: 'demo' },
    ]);
    expect(parseProviderPatterns(['ACME/*'], 'terraform')).toEqual([
      { hostname: 'registry.terraform.io', namespace: 'acme', type: '*' },
    ]);
    expect(parseProviderPatterns(['Café.Example:443/*/*', '*/*/*'], 'tofu')).toEqual([
      { hostname: 'xn--caf-dma.example', namespace: '*', type: '*' },
      { hostname: '*', namespace: '*', type: '*' },
    ]);
  });

  it.each([
    ['acme', 'invalid provider matching pattern "acme": must have either two or three slash-separated segments'],
    ['a/b/c/d', 'invalid provider matching pattern "a/b/c/d": must have either two or three slash-separated segments'],
    [
      '*/acme/demo',
      'invalid provider matching pattern "*/acme/demo": hostname can be a wildcard only if both namespace and provider type are also wildcards',
    ],
    [
      '*/demo',
      'invalid provider matching pattern "*/demo": namespace can be a wildcard only if the provider type is also a wildcard',
    ],
    [
      'acme/bad.type',
      'invalid provider type "bad.type" in provider matching pattern "acme/bad.type": must either be the wildcard * or a provider type name',
    ],
    // The reference prints the type segment in the namespace error.
    [
      'bad.ns/demo',
      'invalid registry namespace "demo" in provider matching pattern "bad.ns/demo": must either be the wildcard * or a literal namespace',
    ],
  ])('refuses %s', (pattern, message) => {
    expect(() => parseProviderPatterns([pattern], 'tofu')).toThrow(message);
  });

  it('lets exclusion win over inclusion', () => {
    const sel = {
      source: new MockSource([]),
      include: parseProviderPatterns(['acme/*'], 'tofu'),
      exclude: parseProviderPatterns(['acme/demo'], 'tofu'),
    };
    expect(canHandleProvider(sel, p('acme/tools'))).toBe(true);
    expect(canHandleProvider(sel, p('acme/demo'))).toBe(false);
    expect(canHandleProvider(sel, p('other/demo'))).toBe(false);
    expect(canHandleProvider({ source: sel.source }, p('other/demo'))).toBe(true);
  });
});

describe('MultiSource', () => {
  it('unions the versions and warnings of every source that handles the provider', async () => {
    const a = new MockSource([pkg('acme/demo', '1.0.0'), pkg('acme/demo', '1.1.0')], {
      warnings: { 'registry.opentofu.org/acme/demo': ['from a'] },
    });
    const b = new MockSource([pkg('acme/demo', '1.1.0'), pkg('acme/demo', '2.0.0')], {
      warnings: { 'registry.opentofu.org/acme/demo': ['from b'] },
    });
    const skipped = new MockSource([pkg('acme/demo', '9.0.0')]);
    const multi = new MultiSource([
      { source: a },
      { source: skipped, exclude: parseProviderPatterns(['acme/*'], 'tofu') },
      { source: b },
    ]);
    expect(await multi.availableVersions(p('acme/demo'))).toEqual({
      versions: [v('1.0.0'), v('1.1.0'), v('2.0.0')],
      warnings: ['from a', 'from b'],
    });
    expect(skipped.calls).toEqual([]);
  });

  it('skips not-found sources, aborts on other errors, and reports an empty union', async () => {
    const unknown = new MockSource([]);
    const notFound = new MockSource([], { unknown: 'not-found', display: '/mirror' });
    const has = new MockSource([pkg('acme/demo', '1.0.0')]);
    expect(
      (
        await new MultiSource([{ source: unknown }, { source: notFound }, { source: has }]).availableVersions(
          p('acme/demo'),
        )
      ).versions,
    ).toEqual([v('1.0.0')]);

    const broken = new MockSource([], {
      errors: { 'registry.opentofu.org/acme/demo': new ProvkitError('IO', 'disk on fire') },
    });
    expect(
      (await caught(new MultiSource([{ source: broken }, { source: has }]).availableVersions(p('acme/demo')))).message,
    ).toBe('disk on fire');

    const reg = await caught(
      new MultiSource([{ source: notFound }, { source: unknown }]).availableVersions(p('acme/demo')),
    );
    expect(reg).toMatchObject({ code: ErrorCode.REGISTRY_PROVIDER_UNKNOWN });
    const none = await caught(new MultiSource([{ source: notFound }]).availableVersions(p('acme/demo')));
    expect(none).toMatchObject({
      code: ErrorCode.PROVIDER_NOT_FOUND,
      message: 'provider registry.opentofu.org/acme/demo was not found in any of the search locations',
      hint: 'searched:\n- /mirror',
    });
  });

  it('takes the package from the first source that has it, in order', async () => {
    const first = new MockSource([pkg('acme/demo', '1.0.0', DARWIN)], { display: 'first' });
    const second = new MockSource([pkg('acme/demo', '1.0.0'), pkg('acme/demo', '1.0.0', DARWIN)], {
      display: 'second',
    });
    const multi = new MultiSource([{ source: first }, { source: second }]);
    expect((await multi.packageMeta(p('acme/demo'), v('1.0.0'), DARWIN)).source).toBe('first');
    expect((await multi.packageMeta(p('acme/demo'), v('1.0.0'), LINUX)).source).toBe('second');
    expect(await caught(multi.packageMeta(p('acme/demo'), v('1.0.0'), parsePlatform('windows_amd64')))).toMatchObject({
      code: ErrorCode.PLATFORM_NOT_SUPPORTED,
      platform: 'windows_amd64',
    });
    const broken = new MockSource([], {
      errors: { 'registry.opentofu.org/acme/demo': new ProvkitError('IO', 'boom') },
    });
    expect(
      (
        await caught(
          new MultiSource([{ source: broken }, { source: second }]).packageMeta(p('acme/demo'), v('1.0.0'), LINUX),
        )
      ).message,
    ).toBe('boom');
    expect(multi.forDisplay(p('acme/demo'))).toBe('first\nsecond');
  });

  it("names the platforms the skipped sources have, read from their errors' availablePlatforms", async () => {
    // The messages name no platforms: the union comes from the field, never from message text.
    const without = (available: string[]) =>
      new MockSource([], {
        errors: {
          'registry.opentofu.org/acme/demo': new ProvkitError(ErrorCode.PLATFORM_NOT_SUPPORTED, 'no such build', {
            availablePlatforms: available,
          }),
        },
      });
    const multi = new MultiSource([
      { source: without(['linux_amd64', 'darwin_arm64']) },
      { source: without(['windows_amd64', 'linux_amd64']) },
    ]);
    const err = await caught(multi.packageMeta(p('acme/demo'), v('1.0.0'), parsePlatform('linux_arm')));
    expect(err).toMatchObject({
      code: ErrorCode.PLATFORM_NOT_SUPPORTED,
      message:
        'provider registry.opentofu.org/acme/demo 1.0.0 is not available for linux_arm (available for: darwin_arm64, linux_amd64, windows_amd64)',
      availablePlatforms: ['darwin_arm64', 'linux_amd64', 'windows_amd64'],
    });
  });
});

describe('platformNotSupported', () => {
  it('carries the available platforms as a field that survives added context and a worker round trip', () => {
    const err = platformNotSupported('provider acme/demo 1.0.0 is not available for linux_arm', {}, [
      LINUX,
      DARWIN,
      'linux_amd64',
    ]);
    expect(err.message).toBe(
      'provider acme/demo 1.0.0 is not available for linux_arm (available for: darwin_arm64, linux_amd64)',
    );
    expect(err.availablePlatforms).toEqual(['darwin_arm64', 'linux_amd64']);
    expect((withContext(err, { version: v('1.0.0') }) as ProvkitError).availablePlatforms).toEqual([
      'darwin_arm64',
      'linux_amd64',
    ]);
    expect(ProvkitError.fromJSON(err.toJSON()).availablePlatforms).toEqual(['darwin_arm64', 'linux_amd64']);
    const none = platformNotSupported('provider acme/demo 1.0.0 is not available for linux_arm', {}, undefined);
    expect(none.message).toBe('provider acme/demo 1.0.0 is not available for linux_arm');
    expect(none.availablePlatforms).toBeUndefined();
  });
});

describe('MemoizeSource', () => {
  it('asks once per provider and per package, errors included', async () => {
    const mock = new MockSource([pkg('acme/demo', '1.0.0')]);
    const memo = new MemoizeSource(mock);
    await memo.availableVersions(p('acme/demo'));
    await memo.availableVersions(p('acme/demo'));
    await memo.packageMeta(p('acme/demo'), v('1.0.0'), LINUX);
    await memo.packageMeta(p('acme/demo'), v('1.0.0'), LINUX);
    await caught(memo.availableVersions(p('acme/nope')));
    await caught(memo.availableVersions(p('acme/nope')));
    expect(mock.calls.map((c) => c.method)).toEqual(['availableVersions', 'packageMeta', 'availableVersions']);
    // Metadata makes a different version (Go ==).
    await caught(memo.packageMeta(p('acme/demo'), v('1.0.0+x'), LINUX));
    expect(mock.calls).toHaveLength(4);
  });

  it('shares in-flight calls, forgets aborted ones, and lets a live waiter retry', async () => {
    let calls = 0;
    const flaky: Source = {
      forDisplay: () => 'flaky',
      availableVersions: (provider, signal) => {
        calls += 1;
        if (calls === 1) return new HangingSource().availableVersions(provider, signal);
        return Promise.resolve<AvailableVersions>({ versions: [v('1.0.0')], warnings: [] });
      },
      packageMeta: () => Promise.reject<PackageMeta>(new Error('unused')),
    };
    const memo = new MemoizeSource(flaky);
    const ac = new AbortController();
    const owner = memo.availableVersions(p('acme/demo'), ac.signal);
    const waiter = memo.availableVersions(p('acme/demo'));
    ac.abort();
    expect(await caught(owner)).toMatchObject({ code: 'ABORTED' });
    expect((await waiter).versions).toEqual([v('1.0.0')]);
    expect(calls).toBe(2);
  });
});

describe('HangingSource', () => {
  it('answers only by rejecting when aborted', async () => {
    const h = new HangingSource();
    const ac = new AbortController();
    const pending = h.packageMeta(p('acme/demo'), v('1.0.0'), LINUX, ac.signal);
    setTimeout(() => ac.abort(), 5);
    expect(await caught(pending)).toMatchObject({ code: 'ABORTED', provider: 'registry.opentofu.org/acme/demo' });
    expect(h.calls).toEqual([
      { method: 'packageMeta', provider: 'registry.opentofu.org/acme/demo', version: '1.0.0', platform: 'linux_amd64' },
    ]);
  });
});

describe('a filesystem mirror before a network mirror', () => {
  let mirror: FakeNetMirror;
  let t: TestHttp;
  beforeAll(async () => {
    mirror = await startFakeNetMirror({ providers: [await makeProvider('acme', 'demo', ['1.2.0'], ['linux_amd64'])] });
    t = testHttp(mirror.caPath);
  });
  afterAll(async () => {
    t.close();
    await mirror.close();
  });

  it('combines both, first match wins, per provider_installation order', async () => {
    const fs = new FilesystemMirrorSource({
      baseDir: fileURLToPath(new URL('../../mirror-fixtures/', import.meta.url)),
      flavor: 'tofu',
    });
    const net = new NetworkMirrorSource({ baseUrl: mirror.url, http: t.http, flavor: 'tofu' });
    const multi = new MemoizeSource(
      new MultiSource([
        { source: fs, include: parseProviderPatterns(['registry.example.test/*/*'], 'tofu') },
        { source: net, exclude: parseProviderPatterns(['registry.example.test/acme/tools'], 'tofu') },
      ]),
    );
    const demo = p('registry.example.test/acme/demo');
    expect((await multi.availableVersions(demo)).versions.map(String)).toEqual(['1.0.0', '1.1.0', '1.2.0']);
    expect((await multi.packageMeta(demo, v('1.1.0'), LINUX)).location.kind).toBe('local-archive');
    expect((await multi.packageMeta(demo, v('1.2.0'), LINUX)).location.kind).toBe('http');
    // tools: only the filesystem mirror may answer, and it has it.
    expect((await multi.availableVersions(p('registry.example.test/acme/tools'))).versions.map(String)).toEqual([
      '0.3.0',
    ]);
    expect(mirror.requests(/tools/)).toEqual([]);
  });
});
