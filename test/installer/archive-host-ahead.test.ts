// A lock warms an archive's host as soon as the source names the archive's URL
// (Source.packageMeta's `archiveURL` hint: a registry names it in its download
// metadata, before its SHA256SUMS and signature arrive), not after the package
// was authenticated; a package whose expected zh: the hash store already has
// warms nothing (it will not be downloaded). The source here is the demo
// filesystem mirror, hinting as a registry would: the packages themselves are
// read locally, so the only use of the HTTP client is the warming. The rule
// is one module's (installer/archive-warmup.ts), which mirror, install and
// bundle create use too: they download whatever the store holds.
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

import {
  parsePlatform,
  parseProviderSource,
  parseVersion,
  type Platform,
  type ProviderAddress,
  type Version,
} from '../../src/addresses/index.js';
import { createHashPool, makeHash, type HashStore } from '../../src/hashing/index.js';
import { ArchiveWarmup } from '../../src/installer/archive-warmup.js';
import { FetchCache } from '../../src/installer/fetch-cache.js';
import type { HttpClient } from '../../src/net/index.js';
import { FilesystemMirrorSource } from '../../src/sources/fs-mirror.js';
import type { PackageMeta, PackageMetaHints, Source } from '../../src/sources/index.js';
import { lockOverCache } from '../support/lock-run.js';

const MIRROR = fileURLToPath(new URL('../../mirror-fixtures/', import.meta.url));
const PLATFORMS = ['linux_amd64', 'darwin_arm64'].map((p) => parsePlatform(p));
/** The zh: the hinting source says each archive has (the store case stores it). */
const HINTED_ZH = makeHash('zh:', 'ab'.repeat(32));

/** The demo mirror, naming each archive's URL (on a host of its own) before it answers. */
function hintingSource(log: string[]): Source {
  const mirror = new FilesystemMirrorSource({ baseDir: MIRROR, flavor: 'tofu' });
  return {
    forDisplay: () => mirror.forDisplay(),
    availableVersions: (p) => mirror.availableVersions(p),
    packageMeta: async (
      provider: ProviderAddress,
      version: Version,
      platform: Platform,
      signal?: AbortSignal,
      hints?: PackageMetaHints,
    ): Promise<PackageMeta> => {
      const url = `https://archives.example.test/${provider.type}_${version.toString()}_${platform.toString()}.zip`;
      hints?.archiveURL?.(url, HINTED_ZH);
      const meta = await mirror.packageMeta(provider, version, platform);
      // The answer comes after the hint's consequences had their turn (a registry's SHA256SUMS round trip).
      await new Promise((resolve) => setImmediate(resolve));
      log.push(`answer ${url}`);
      return meta;
    },
  };
}

async function lock(log: string[], hashStore?: HashStore): Promise<void> {
  const http = {
    preconnect: (url: string, count: number) => log.push(`warm ${url} ×${count}`),
  } as unknown as HttpClient;
  const cache = new FetchCache({
    source: hintingSource(log),
    pool: createHashPool({ concurrency: 0 }),
    http,
    ...(hashStore ? { hashStore } : {}),
  });
  await lockOverCache(cache, { 'registry.example.test/acme/demo': '1.1.0' }, PLATFORMS);
}

describe("an archive's host is warmed as soon as the source names the archive", () => {
  it('each archive host is warmed before the package is answered (authenticated), for the downloads to come', async () => {
    const log: string[] = [];
    await lock(log);
    for (const p of PLATFORMS) {
      const url = `https://archives.example.test/demo_1.1.0_${p.toString()}.zip`;
      const warm = log.findIndex((l) => l.startsWith(`warm ${url} `));
      expect(warm, log.join('\n')).toBeGreaterThanOrEqual(0);
      expect(warm, log.join('\n')).toBeLessThan(log.indexOf(`answer ${url}`));
    }
    // As many connections as packages were asked when each was named (two: both platforms at once).
    expect(log.filter((l) => l.startsWith('warm ')).map((l) => l.replace(/.* ×/, ''))).toEqual(['2', '2']);
  });

  it('warms nothing for a package whose expected zh: the hash store has (it will not be downloaded)', async () => {
    const log: string[] = [];
    const asked: string[] = [];
    const store = {
      get: (zh: { text: string }) => {
        asked.push(zh.text);
        return Promise.resolve(zh.text === HINTED_ZH.text ? { zh } : undefined);
      },
      put: () => Promise.resolve(),
    } as unknown as HashStore;
    await lock(log, store);
    expect(asked).toContain(HINTED_ZH.text);
    expect(log.filter((l) => l.startsWith('warm '))).toEqual([]);
  });
});

describe('the warm-up rule, for runs that always download (mirror, install, bundle create)', () => {
  const pkg = {
    provider: parseProviderSource('registry.example.test/acme/demo', 'tofu'),
    version: parseVersion('1.1.0'),
    platform: PLATFORMS[0]!,
  };
  const url = `https://archives.example.test/demo_1.1.0_${PLATFORMS[0]!.toString()}.zip`;

  async function warmed(options: { download?: boolean; store?: HashStore }): Promise<string[]> {
    const log: string[] = [];
    const http = {
      preconnect: (u: string, count: number) => log.push(`warm ${u} ×${count}`),
    } as unknown as HttpClient;
    const warmup = new ArchiveWarmup({
      http,
      slots: 8,
      ...(options.store ? { storeSparesDownload: options.store } : {}),
    });
    await warmup.packageMeta(hintingSource(log), pkg, options.download);
    return log.filter((l) => l.startsWith('warm '));
  }

  it('warms the archive host whatever a hash store holds when the store spares no download', async () => {
    expect(await warmed({})).toEqual([`warm ${url} ×1`]);
  });

  it('warms nothing for a package the run expects not to download (an archive already in the mirror)', async () => {
    expect(await warmed({ download: false })).toEqual([]);
  });

  it('warms nothing when the store that spares downloads has the expected zh:', async () => {
    const store = { get: () => Promise.resolve({}) } as unknown as HashStore;
    expect(await warmed({ store })).toEqual([]);
  });
});
