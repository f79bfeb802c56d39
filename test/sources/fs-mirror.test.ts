// FilesystemMirrorSource: packed and unpacked layouts mixed, Unicode hosts,
// case-insensitive packed names, symlink rules, warnings, and fetchPackage
// from local archives (verify-then-commit copy, or in place).
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { parsePlatform, parseProviderSource, parseVersion } from '../../src/addresses/index.js';
import { fetchPackage, FilesystemMirrorSource, type ScanWarning } from '../../src/sources/index.js';
import { makeProviderZip } from '../support/servers/packages.js';
import { ErrorCode } from '../../src/errors.js';

const FIXTURES = fileURLToPath(new URL('../../mirror-fixtures/', import.meta.url));
const HASHES = JSON.parse(await readFile(join(FIXTURES, 'hashes.json'), 'utf8')) as {
  packages: Record<string, { zh: string; h1: string }>;
};

const p = (s: string) => parseProviderSource(s, 'tofu');
const v = parseVersion;
const plat = parsePlatform;

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'provkit-fsm-'));
});
afterAll(() => rm(tmp, { recursive: true, force: true }));

async function mkfile(path: string, data: string | Buffer = 'x'): Promise<void> {
  await mkdir(join(path, '..'), { recursive: true });
  await writeFile(path, data);
}

async function caught(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}

describe('the demo mirror (packed)', () => {
  const src = new FilesystemMirrorSource({ baseDir: FIXTURES, flavor: 'tofu' });

  it('lists versions, finds packages, and has nothing for unknown providers', async () => {
    expect((await src.availableVersions(p('registry.example.test/acme/demo'))).versions.map(String)).toEqual([
      '1.0.0',
      '1.1.0',
    ]);
    expect((await src.availableVersions(p('registry.example.test/acme/tools'))).versions.map(String)).toEqual([
      '0.3.0',
    ]);
    expect(await src.availableVersions(p('registry.example.test/acme/nope'))).toEqual({ versions: [], warnings: [] });

    const meta = await src.packageMeta(p('registry.example.test/acme/demo'), v('1.1.0'), plat('darwin_arm64'));
    expect(meta).toMatchObject({
      filename: 'terraform-provider-demo_1.1.0_darwin_arm64.zip',
      location: {
        kind: 'local-archive',
        path: join(FIXTURES, 'registry.example.test/acme/demo/terraform-provider-demo_1.1.0_darwin_arm64.zip'),
      },
      reportedHashes: [],
      source: FIXTURES,
    });
    expect(meta.authentication).toBeUndefined();
  });

  it('says PLATFORM_NOT_SUPPORTED for a missing package, naming it', async () => {
    const err = await caught(src.packageMeta(p('registry.example.test/acme/demo'), v('1.1.0'), plat('linux_arm')));
    expect(err).toMatchObject({
      code: ErrorCode.PLATFORM_NOT_SUPPORTED,
      provider: 'registry.example.test/acme/demo',
      version: '1.1.0',
      platform: 'linux_arm',
    });
  });

  it('fetches an archive in place or as a verified copy, with the zh the reference computed', async () => {
    const key = 'registry.example.test/acme/tools/terraform-provider-tools_0.3.0_linux_amd64.zip';
    const meta = await src.packageMeta(p('registry.example.test/acme/tools'), v('0.3.0'), plat('linux_amd64'));
    const inPlace = await fetchPackage(meta);
    expect(inPlace).toMatchObject({ kind: 'archive', path: join(FIXTURES, key), label: 'unauthenticated', hashes: [] });
    expect(inPlace.kind === 'archive' && inPlace.zh.text).toBe(HASHES.packages[key]?.zh);

    const dest = join(tmp, 'copy', 'pkg.zip');
    const copy = await fetchPackage(meta, { destPath: dest });
    expect(copy.kind === 'archive' && copy.zh.text).toBe(HASHES.packages[key]?.zh);
    expect(await readdir(join(tmp, 'copy'))).toEqual(['pkg.zip']);
  });

  it('fetches the bytes and zh: alone when the h1: forms are not asked for (hashing zh-only), in place or as a copy', async () => {
    const key = 'registry.example.test/acme/tools/terraform-provider-tools_0.3.0_linux_amd64.zip';
    const meta = await src.packageMeta(p('registry.example.test/acme/tools'), v('0.3.0'), plat('linux_amd64'));
    const hashed: string[] = [];
    const hashZip = (path: string): never => {
      hashed.push(path);
      throw new Error('hashZip must not be called');
    };
    const inPlace = await fetchPackage(meta, { hashing: { kind: 'zh-only', hashZip } });
    expect(inPlace).toMatchObject({ kind: 'archive-bytes', path: join(FIXTURES, key), label: 'unauthenticated' });
    expect(inPlace.kind === 'archive-bytes' && inPlace.zh.text).toBe(HASHES.packages[key]?.zh);
    expect(Object.keys(inPlace)).not.toContain('zipHashes');
    const dest = join(tmp, 'bytes', 'pkg.zip');
    const copy = await fetchPackage(meta, { hashing: { kind: 'zh-only', hashZip }, destPath: dest });
    expect(copy.kind === 'archive-bytes' && copy.zh.text).toBe(HASHES.packages[key]?.zh);
    expect(await readdir(join(tmp, 'bytes'))).toEqual(['pkg.zip']);
    expect(hashed).toEqual([]);
  });
});

describe('a hand-made mirror', () => {
  let base: string;
  const warnings: ScanWarning[] = [];
  let src: FilesystemMirrorSource;

  beforeAll(async () => {
    base = join(tmp, 'mirror');
    const zip = await makeProviderZip('demo', '1.2.0', 'linux_amd64');
    // Packed and unpacked of the same package: unpacked wins.
    await mkfile(join(base, 'registry.example.test/acme/demo/terraform-provider-demo_1.2.0_linux_amd64.zip'), zip);
    await mkfile(
      join(base, 'registry.example.test/acme/demo/1.2.0/linux_amd64/terraform-provider-demo_v1.2.0'),
      '#!/bin/sh\n',
    );
    // Installer lock files and mirror indexes are ignored.
    await mkfile(join(base, 'registry.example.test/acme/demo/1.2.0/linux_amd64.lock'), '');
    await mkfile(join(base, 'registry.example.test/acme/demo/index.json'), '{}');
    await mkfile(join(base, 'registry.example.test/acme/demo/1.2.0.json'), '{}');
    // Lenient versions; extra name parts ignored; case-insensitive names.
    await mkfile(join(base, 'registry.example.test/acme/demo/2.0/darwin_arm64/x'), '');
    await mkfile(
      join(base, 'registry.example.test/acme/demo/terraform-provider-demo_1.3.0_linux_amd64_extra.zip'),
      zip,
    );
    await mkfile(join(base, 'registry.example.test/acme/gamma/Terraform-Provider-Gamma_1.0.0-RC.1_Linux_ARM.zip'), zip);
    // Upper-case directories are normalised; Unicode host directories work.
    await mkfile(join(base, 'Registry.Example.Test/ACME/Upper/1.0.0/linux_amd64/f'), '');
    await mkfile(join(base, 'café.example/acme/uni/terraform-provider-uni_0.1.0_linux_amd64.zip'), zip);
    // Rejected: punycode host, bad type, bad platform, bad prefix, legacy namespace off the default host.
    await mkfile(join(base, 'xn--caf-dma.example/acme/puny/1.0.0/linux_amd64/f'), '');
    await mkfile(join(base, 'registry.example.test/acme/bad.type/1.0.0/linux_amd64/f'), '');
    await mkfile(join(base, 'registry.example.test/acme/demo/1.4.0/Linux-AMD64/f'), '');
    await mkfile(join(base, 'registry.example.test/acme/demo/terraform-provider-other_1.0.0_linux_amd64.zip'), zip);
    await mkfile(join(base, 'registry.example.test/acme/demo/README.md'), 'hi');
    await mkfile(join(base, 'registry.example.test/-/legacy/1.0.0/linux_amd64/f'), '');
    await mkfile(join(base, 'registry.opentofu.org/-/legacy/1.0.0/linux_amd64/f'), '');
    // 0.0.0 is found but warned about.
    await mkfile(join(base, 'registry.example.test/acme/zero/0.0.0/linux_amd64/f'), '');
    // Symlinks: depth 4 to a zip and depth 5 to a dir are packages; depth 1 is ignored.
    const outside = join(tmp, 'outside');
    await mkfile(join(outside, 'pkg.zip'), zip);
    await mkfile(join(outside, 'unpacked/terraform-provider-linked'), '');
    await mkdir(join(base, 'registry.example.test/acme/linked/1.0.0'), { recursive: true });
    await symlink(
      join(outside, 'pkg.zip'),
      join(base, 'registry.example.test/acme/linked/terraform-provider-linked_0.9.0_linux_amd64.zip'),
    );
    await symlink(join(outside, 'unpacked'), join(base, 'registry.example.test/acme/linked/1.0.0/linux_amd64'));
    await mkdir(join(outside, 'hostdir/acme/viahost/1.0.0/linux_amd64'), { recursive: true });
    await symlink(join(outside, 'hostdir'), join(base, 'linked.example'));
    src = new FilesystemMirrorSource({ baseDir: base, flavor: 'tofu', onWarning: (w) => warnings.push(w) });
  });

  it('mixes layouts; the unpacked directory wins for the same package', async () => {
    const demo = p('registry.example.test/acme/demo');
    expect((await src.availableVersions(demo)).versions.map(String)).toEqual(['1.2.0', '1.3.0', '2.0.0']);
    expect(await src.packageMeta(demo, v('1.2.0'), plat('linux_amd64'))).toMatchObject({
      filename: 'terraform-provider-demo_1.2.0_linux_amd64.zip',
      location: { kind: 'local-dir', path: join(base, 'registry.example.test/acme/demo/1.2.0/linux_amd64') },
    });
    expect((await src.packageMeta(demo, v('1.3.0'), plat('linux_amd64'))).location.kind).toBe('local-archive');
    expect((await src.packageMeta(demo, v('2.0.0'), plat('darwin_arm64'))).location.kind).toBe('local-dir');
  });

  it('matches packed names case-insensitively and records the lower-case name', async () => {
    const meta = await src.packageMeta(p('registry.example.test/acme/gamma'), v('1.0.0-rc.1'), plat('linux_arm'));
    expect(meta.filename).toBe('terraform-provider-gamma_1.0.0-rc.1_linux_arm.zip');
    expect(meta.location).toEqual({
      kind: 'local-archive',
      path: join(base, 'registry.example.test/acme/gamma/Terraform-Provider-Gamma_1.0.0-RC.1_Linux_ARM.zip'),
    });
  });

  it('normalises upper-case and Unicode host directories, and refuses punycode ones', async () => {
    expect((await src.availableVersions(p('registry.example.test/acme/upper'))).versions.map(String)).toEqual([
      '1.0.0',
    ]);
    const uni = p('café.example/acme/uni');
    expect(uni.hostname).toBe('xn--caf-dma.example');
    expect((await src.availableVersions(uni)).versions.map(String)).toEqual(['0.1.0']);
    // The punycode directory is not the same provider, and is not found at all.
    expect((await src.availableVersions(p('café.example/acme/puny'))).versions).toEqual([]);
    expect(warnings.some((w) => w.message.includes('contains invalid hostname "xn--caf-dma.example"'))).toBe(true);
  });

  it('skips other files and invalid names with warnings, never errors', async () => {
    expect((await src.availableVersions(p('registry.example.test/acme/demo'))).versions.map(String)).not.toContain(
      '1.4.0',
    );
    const texts = warnings.map((w) => w.message);
    expect(texts.some((t) => t.includes('contains invalid type "bad.type"'))).toBe(true);
    expect(texts.some((t) => t.includes('with invalid platform "Linux-AMD64"'))).toBe(true);
    expect(texts.some((t) => t.includes('filename lacks expected prefix "terraform-provider-demo_"'))).toBe(true);
    expect(texts.some((t) => t.includes('indicates a legacy provider not on the default registry host'))).toBe(true);
    // A packed mirror's own index files are not packages, and not worth a warning (docs/reference.md §4.2 item 63).
    expect(texts.filter((t) => t.includes('index.json') || t.includes('1.2.0.json'))).toEqual([]);
    expect((await src.availableVersions(p('-/legacy'))).versions.map(String)).toEqual(['1.0.0']);
  });

  it('follows symlinks only where the reference does', async () => {
    const linked = p('registry.example.test/acme/linked');
    expect((await src.availableVersions(linked)).versions.map(String)).toEqual(['0.9.0', '1.0.0']);
    expect((await src.packageMeta(linked, v('1.0.0'), plat('linux_amd64'))).location.kind).toBe('local-dir');
    expect((await src.availableVersions(p('linked.example/acme/viahost'))).versions).toEqual([]);
    expect(
      warnings.some((w) =>
        w.message.startsWith(`Provider plugin search ignored symlink ${join(base, 'linked.example')}`),
      ),
    ).toBe(true);
  });

  it('warns about 0.0.0', async () => {
    const r = await src.availableVersions(p('registry.example.test/acme/zero'));
    expect(r.versions.map(String)).toEqual(['0.0.0']);
    expect(r.warnings[0]).toMatch(
      /^Provider registry\.example\.test\/acme\/zero has an unspecified \(0\.0\.0\) version available in the filesystem mirror, source at .*\. It will not be used\. \n/,
    );
  });

  it('returns an unpacked directory as is from fetchPackage', async () => {
    const meta = await src.packageMeta(p('registry.example.test/acme/demo'), v('1.2.0'), plat('linux_amd64'));
    expect(await fetchPackage(meta)).toEqual({
      kind: 'dir',
      identity: { provider: meta.provider, version: meta.version, platform: meta.platform },
      path: meta.location.kind === 'local-dir' ? meta.location.path : '',
      hashes: [],
      label: 'unauthenticated',
      warnings: [],
    });
  });

  it('accepts a symlinked base directory', async () => {
    const link = join(tmp, 'base-link');
    await symlink(base, link);
    const viaLink = new FilesystemMirrorSource({ baseDir: link, flavor: 'tofu' });
    expect((await viaLink.availableVersions(p('registry.example.test/acme/demo'))).versions.map(String)).toEqual([
      '1.2.0',
      '1.3.0',
      '2.0.0',
    ]);
  });
});

describe('scan failures', () => {
  it('fails the whole source when the base directory is missing', async () => {
    const src = new FilesystemMirrorSource({ baseDir: join(tmp, 'missing'), flavor: 'tofu' });
    const err = await caught(src.availableVersions(p('registry.example.test/acme/demo')));
    expect(err).toMatchObject({ code: 'NOT_FOUND' });
    expect(err.message).toMatch(/^cannot search .*missing: /);
  });

  it.skipIf(process.getuid?.() === 0)('fails the whole source on an unreadable directory', async () => {
    const { chmod } = await import('node:fs/promises');
    const base = join(tmp, 'unreadable');
    await mkfile(join(base, 'registry.example.test/acme/demo/1.0.0/linux_amd64/f'), '');
    await chmod(join(base, 'registry.example.test/acme'), 0o000);
    try {
      const err = await caught(
        new FilesystemMirrorSource({ baseDir: base, flavor: 'tofu' }).availableVersions(
          p('registry.example.test/acme/demo'),
        ),
      );
      expect(err).toMatchObject({ code: 'IO' });
    } finally {
      await chmod(join(base, 'registry.example.test/acme'), 0o755);
    }
  });
});
