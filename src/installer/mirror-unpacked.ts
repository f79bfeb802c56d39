/**
 * `provkit mirror -layout=unpacked`: the filesystem-mirror layout
 * `HOST/NS/TYPE/VERSION/OS_ARCH/` (docs/reference.md §4.2), each package extracted as the
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
 *
 * The target is a shared place (docs/file-modes.md): its `HOST/NS/TYPE/VERSION`
 * levels are made by {@link TreeDirs} (a symbolic link there is refused,
 * never written through; levels this run made and left empty are removed),
 * a package directory is kept only when it is a real directory, and files
 * lose group and world write bits (docs/file-modes.md). A package that
 * cannot be written is reported as a failure; the others are still written.
 */
import { lstat } from 'node:fs/promises';
import { join } from 'node:path';

import type { Platform, ProviderAddress, Version } from '../addresses/index.js';
import { asProvkitError, ErrorCode, ProvkitError } from '../errors.js';
import { hashPackageDir } from '../hashing/index.js';
import { unpackedDirPath } from '../layout/index.js';
import { TreeDirs, versionDirPath } from './package-dirs.js';
import type { InstallerEvent } from './events.js';
import { ignoreEvents } from './events.js';
import { extractPackage } from './extract.js';
import { type MirrorFailure, type MirrorOptions, type MirrorOutcome, runMirror } from './mirror.js';

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
      selected.push({
        provider: e.provider,
        version: e.version,
        platform: e.platform,
        zip: join(options.packedDir, e.path),
      });
      return;
    }
    if (e.type === 'mirror_index') return;
    events(e);
  };
  const packed = await runMirror({ ...options, targetDir: options.packedDir, hashes: 'all', events: packedEvents });
  if (packed.failures.length > 0) return packed;

  let written = 0;
  let reused = 0;
  const failures: MirrorFailure[] = [];
  const tree = new TreeDirs();
  try {
    for (const s of selected) {
      const rel = unpackedDirPath(s.provider, s.version, s.platform);
      const dir = join(options.targetDir, rel);
      try {
        // eslint-disable-next-line no-await-in-loop -- one package at a time keeps the disk writes sequential
        await tree.make(options.targetDir, versionDirPath(s.provider, s.version));
        // eslint-disable-next-line no-await-in-loop
        const zip = await options.pool.hashZip(s.zip);
        // A link in place of the package directory is replaced, never kept (nor hashed through).
        // eslint-disable-next-line no-await-in-loop
        const isDir = (await lstat(dir).catch(() => undefined))?.isDirectory() === true;
        // eslint-disable-next-line no-await-in-loop
        const present = isDir ? await hashPackageDir(dir).catch(() => undefined) : undefined;
        if (present && zip.h1.ok && present.text === zip.h1.hash.text) {
          reused += 1;
          events({
            type: 'mirror_package',
            provider: s.provider,
            version: s.version,
            platform: s.platform,
            path: rel,
            action: 'kept',
          });
          continue;
        }
        // eslint-disable-next-line no-await-in-loop
        await extractPackage(s.zip, dir, {
          existing: 'replace',
          fileModeMask: 0o755,
          ...(options.signal ? { signal: options.signal } : {}),
        });
        written += 1;
        events({
          type: 'mirror_package',
          provider: s.provider,
          version: s.version,
          platform: s.platform,
          path: rel,
          action: 'written',
        });
      } catch (err) {
        if (err instanceof ProvkitError && err.code === ErrorCode.ABORTED) throw err;
        const error = asProvkitError(err);
        failures.push({ provider: s.provider, platform: s.platform, summary: 'Cannot unpack provider package', error });
      }
    }
  } finally {
    await tree.removeEmpty();
  }
  return { failures, written, reused };
}
