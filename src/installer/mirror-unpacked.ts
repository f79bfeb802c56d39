/**
 * `provkit mirror -layout=unpacked`: the filesystem-mirror layout
 * `HOST/NS/TYPE/VERSION/OS_ARCH/` (spec §4.2), each package extracted as the
 * reference extracts it.
 *
 * How: the packages are first mirrored in the packed layout into `packedDir`
 * (a cache kept outside the target, so re-runs are incremental exactly as for
 * a packed mirror: verified packages are not fetched again), then each
 * selected package is extracted into the target. A package directory whose
 * `h1:` already equals the archive's extracted-form `h1:` is kept; any other
 * is replaced atomically (extraction into a temporary directory beside it,
 * then a rename). No index files are written: the unpacked layout has none
 * (`provkit serve` generates them).
 */
import { join } from 'node:path';

import type { Platform, ProviderAddress, Version } from '../addresses/index.js';
import { hashPackageDir } from '../hashing/index.js';
import { unpackedDirPath } from '../layout/index.js';
import type { InstallerEvent } from './events.js';
import { ignoreEvents } from './events.js';
import { extractPackage } from './extract.js';
import { type MirrorOptions, type MirrorOutcome, runMirror } from './mirror.js';

export interface UnpackedMirrorOptions extends MirrorOptions {
  /** Where the packed copies live between runs (outside `targetDir`). */
  readonly packedDir: string;
}

export async function runUnpackedMirror(options: UnpackedMirrorOptions): Promise<MirrorOutcome> {
  const events = options.events ?? ignoreEvents;
  const selected: Array<{ provider: ProviderAddress; version: Version; platform: Platform; zip: string }> = [];
  // The packed run's own package events describe the cache, not the target:
  // they are collected here and the unpacked ones are reported instead.
  const packedEvents = (e: InstallerEvent): void => {
    if (e.type === 'mirror_package') {
      selected.push({ provider: e.provider, version: e.version, platform: e.platform, zip: join(options.packedDir, e.path) });
      return;
    }
    if (e.type === 'mirror_index') return;
    events(e);
  };
  const packed = await runMirror({ ...options, targetDir: options.packedDir, hashes: 'all', events: packedEvents });
  if (packed.failures.length > 0) return packed;

  let written = 0;
  let reused = 0;
  for (const s of selected) {
    const rel = unpackedDirPath(s.provider, s.version, s.platform);
    const dir = join(options.targetDir, rel);
    // eslint-disable-next-line no-await-in-loop -- one package at a time keeps the disk writes sequential
    const zip = await options.pool.hashZip(s.zip);
    // eslint-disable-next-line no-await-in-loop
    const present = await hashPackageDir(dir).catch(() => undefined);
    if (present && zip.h1.ok && present.text === zip.h1.hash.text) {
      reused += 1;
      events({ type: 'mirror_package', provider: s.provider, version: s.version, platform: s.platform, path: rel, action: 'kept' });
      continue;
    }
    // eslint-disable-next-line no-await-in-loop
    await extractPackage(s.zip, dir, { existing: 'replace', ...(options.signal ? { signal: options.signal } : {}) });
    written += 1;
    events({ type: 'mirror_package', provider: s.provider, version: s.version, platform: s.platform, path: rel, action: 'written' });
  }
  return { failures: [], written, reused };
}
