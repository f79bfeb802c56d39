/**
 * Provider packages for the fake servers: the demo packages of
 * `mirror-fixtures/` or small zips made with the test zip writer.
 */
import { readFile } from 'node:fs/promises';

import { fixturePackages, MIRROR_HOST } from '../../../mirror-fixtures/generate.js';
import { buildZip } from '../zip-writer.js';

/** One platform's archive. */
export interface FakePackage {
  /** `os_arch`. */
  platform: string;
  zip: Buffer;
  /** Default `terraform-provider-TYPE_VERSION_OS_ARCH.zip`. */
  filename?: string;
}

export interface FakeVersion {
  version: string;
  /** Default `['5.0']`. */
  protocols?: string[];
  packages: FakePackage[];
}

export interface FakeProvider {
  /** Only the network mirror uses it (the registry serves its own host). Default `registry.example.test`. */
  hostname?: string;
  namespace: string;
  type: string;
  versions: FakeVersion[];
}

export function packageFilename(type: string, version: string, platform: string): string {
  return `terraform-provider-${type}_${version}_${platform}.zip`;
}

const FIXTURES = new URL('../../../mirror-fixtures/', import.meta.url);

/**
 * The demo providers of `mirror-fixtures/` (`registry.example.test/acme/demo`
 * 1.0.0 and 1.1.0, `acme/tools` 0.3.0, five platforms each), read from disk.
 */
export async function fixtureProviders(): Promise<FakeProvider[]> {
  const byProvider = new Map<string, FakeProvider>();
  for (const pkg of fixturePackages()) {
    const key = `${pkg.namespace}/${pkg.type}`;
    let p = byProvider.get(key);
    if (!p) {
      p = { hostname: MIRROR_HOST, namespace: pkg.namespace, type: pkg.type, versions: [] };
      byProvider.set(key, p);
    }
    let v = p.versions.find((x) => x.version === pkg.version);
    if (!v) {
      v = { version: pkg.version, packages: [] };
      p.versions.push(v);
    }
    v.packages.push({ platform: pkg.platform, zip: await readFile(new URL(pkg.path, FIXTURES)) });
  }
  return [...byProvider.values()];
}

/** A tiny valid provider zip: the executable and a README, distinct per (type, version, platform). */
export function makeProviderZip(type: string, version: string, platform: string): Promise<Buffer> {
  return buildZip([
    {
      name: `terraform-provider-${type}_v${version}`,
      data: `#!/bin/sh\n# ${type} ${version} ${platform}\nexit 1\n`,
      unixMode: 0o100755,
    },
    { name: 'README.md', data: `fake ${type} ${version} for ${platform}\n` },
  ]);
}

/** A provider with small generated zips for every (version, platform) given. */
export async function makeProvider(
  namespace: string,
  type: string,
  versions: readonly string[],
  platforms: readonly string[] = ['linux_amd64', 'darwin_arm64'],
  hostname?: string,
): Promise<FakeProvider> {
  return {
    ...(hostname === undefined ? {} : { hostname }),
    namespace,
    type,
    versions: await Promise.all(
      versions.map(async (version) => ({
        version,
        packages: await Promise.all(
          platforms.map(async (platform) => ({ platform, zip: await makeProviderZip(type, version, platform) })),
        ),
      })),
    ),
  };
}
