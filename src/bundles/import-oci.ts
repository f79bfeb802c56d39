/**
 * `bundle import BUNDLE.tar oci://REGISTRY/TEMPLATE`: a verified bundle
 * published into an OCI registry (docs/oci.md, docs/bundles.md).
 *
 * The bundle is unpacked and checked exactly as for a directory target
 * (bundles/import.ts steps 1 and 2: every member against the manifest, every
 * package against its hashes, the bundle's lock entries and the trusted lock
 * file) into a staging directory in TMPDIR; only then is anything sent, by
 * the publisher (installer/oci-publish.ts) reading that staging directory as
 * a filesystem mirror. A bundle that fails a check sends nothing; a publish
 * that fails moves no tag. The staging directory is always removed.
 *
 * Only the packages the bundle holds are published; a delta bundle's others
 * are expected in the registry already (a version's index keeps the
 * platforms published before).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { type Flavor, parsePlatform, parseProviderSource, parseVersion, type Platform } from '../addresses/index.js';
import type { HashPool } from '../hashing/index.js';
import type { Locks } from '../lockfile/index.js';
import type { OciClient } from '../net/index.js';
import { FilesystemMirrorSource } from '../sources/index.js';
import type { EventSink } from '../installer/events.js';
import { removeOnExit } from '../fs/cleanup.js';
import { type OciTarget, publishToOci, type PublishItem, type PublishOutcome } from '../installer/oci-publish.js';
import type { BundleManifest } from './manifest.js';
import { unpackAndVerifyBundle } from './import.js';

export interface BundleOciImportOptions {
  readonly bundlePath: string;
  readonly pool: HashPool;
  readonly flavor: Flavor;
  readonly client: OciClient;
  readonly target: OciTarget;
  readonly maxMemberSize?: number;
  readonly trustedLocks?: Locks;
  readonly events?: EventSink;
  readonly signal?: AbortSignal;
}

export interface BundleOciImportOutcome extends PublishOutcome {
  readonly manifest: BundleManifest;
  readonly lockFile: Buffer;
  /** Packages published (bundle members). */
  readonly packages: number;
}

/** See the module comment. @throws what the bundle checks throw (nothing was sent then). */
export async function importBundleToOci(options: BundleOciImportOptions): Promise<BundleOciImportOutcome> {
  const staging = await mkdtemp(join(tmpdir(), 'provkit-bundle-oci-'));
  // Removed however the process ends (an interrupt's process.exit included).
  const forget = removeOnExit(staging);
  try {
    const { manifest, lockFile } = await unpackAndVerifyBundle(options, staging, tmpdir());
    const members = new Set(manifest.members.map((m) => m.name));
    const items: PublishItem[] = [];
    let packages = 0;
    for (const p of manifest.providers) {
      const platforms: Platform[] = p.packages.filter((k) => members.has(k.path)).map((k) => parsePlatform(k.platform));
      if (platforms.length === 0) continue;
      packages += platforms.length;
      items.push({
        provider: parseProviderSource(p.source, options.flavor),
        version: parseVersion(p.version),
        platforms,
      });
    }
    const outcome = await publishToOci({
      items,
      source: new FilesystemMirrorSource({ baseDir: staging, flavor: options.flavor }),
      client: options.client,
      target: options.target,
      ...(options.events ? { events: options.events } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    return { ...outcome, manifest, lockFile, packages };
  } finally {
    await rm(staging, { recursive: true, force: true }).catch(() => undefined);
    forget();
  }
}
