/**
 * `provkit verify -mirror=oci://REGISTRY/TEMPLATE`: the checks of
 * `verify.ts` against a published OCI mirror instead of a directory (issue
 * 16). The registry is read, nothing is written; every package of every
 * locked version is downloaded into TMPDIR (removed afterwards) and hashed.
 *
 * Problems, with `verify.ts`'s codes:
 * - `VERSION_NOT_IN_MIRROR`: the provider's repository does not exist or
 *   has no tag for the locked version;
 * - `INDEX_INVALID`: the version's index or a platform's manifest is not
 *   what OpenTofu reads (the reader's message: no `artifactType`, two zip
 *   layers, …);
 * - `INDEX_MISMATCH`: a blob does not match its layer's digest or size;
 * - `PLATFORM_NOT_IN_MIRROR`: a platform in scope has no manifest, or the
 *   version's index lists no usable platform at all (the directory mirror's
 *   rule, verify.ts `platformCoverage`);
 * - `LOCK_MISSING_H1`, `LOCK_MISSING_ZH`, `H1_FORMS_DIFFER`,
 *   `PACKAGE_REFUSED`: as for a directory.
 *
 * Platforms in scope: those given, else every platform the indexes of the
 * locked versions list.
 *
 * Every package downloaded and hashed is reported with who vouches for its
 * hashes, and the lock hashes of a checked version that nobody vouches for,
 * as for a directory (installer/verify-provenance.ts): `computed-locally`
 * from the blob's URL (`verified-locally` when the hash store records its
 * `zh:` as signed), the manifest's `zh:` `reported-by-mirror`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import pLimit from 'p-limit';

import { removeOnExit } from '../fs/cleanup.js';
import { type Platform, sortPlatforms } from '../addresses/index.js';
import { ErrorCode, isProvkitError, errorText } from '../errors.js';
import type { HashPool, HashStore } from '../hashing/index.js';
import type { Locks } from '../lockfile/index.js';
import type { HttpClient } from '../net/index.js';
import { fetchPackage, localDisposition, type OciMirrorSource, poolHashing } from '../sources/index.js';
import { DEFAULT_DOWNLOADS } from './download-queue.js';
import type { EventSink } from './events.js';
import {
  compareProblems,
  emitProvenance,
  lookupAll,
  platformCoverage,
  problemCollector,
  type VerifyOutcome,
  zipHashTexts,
} from './verify.js';
import {
  type UnvouchedHashes,
  unvouchedLockHashes,
  type VerifiedPackage,
  verifiedPackageHashes,
} from './verify-provenance.js';
import { downloadName } from '../layout/index.js';

export interface OciVerifyOptions {
  readonly locks: Locks;
  readonly source: OciMirrorSource;
  /** For messages: the mirror as given. */
  readonly mirror: string;
  readonly platforms?: readonly Platform[];
  readonly pool: HashPool;
  readonly http: HttpClient;
  /** Read only: whether a package's `zh:` is recorded as signed (installer/verify-provenance.ts). */
  readonly hashStore?: HashStore;
  readonly signal?: AbortSignal;
  /** `verify_package` and `verify_unvouched` events, at the end (as {@link VerifyOutcome}'s `checked` and `unvouched`). */
  readonly events?: EventSink;
}

function message(err: unknown): string {
  return errorText(err);
}

/** See the module comment. */
export async function runOciVerify(options: OciVerifyOptions): Promise<VerifyOutcome> {
  const { problems, problem } = problemCollector();
  const network = pLimit(DEFAULT_DOWNLOADS);
  const work = await mkdtemp(join(tmpdir(), 'provkit-oci-verify-'));
  // Removed however the process ends (an interrupt's process.exit included: src/fs/cleanup.ts).
  const forgetWork = removeOnExit(work);
  let packages = 0;
  const scopeAll: Platform[] = [];
  const checked: VerifiedPackage[] = [];
  const unvouched: UnvouchedHashes[] = [];
  try {
    // Which platforms each locked version has.
    const published = await Promise.all(
      options.locks.all().map(async (lock) => {
        const { provider, version } = lock;
        try {
          const available = await options.source.availableVersions(provider, options.signal);
          if (!available.versions.some((v) => v.equals(version))) {
            problem(
              provider,
              version,
              undefined,
              'VERSION_NOT_IN_MIRROR',
              `the mirror ${options.mirror} has no tag for this version, so the lock file cannot be checked against it`,
            );
            return { lock, present: false, platforms: [] as Platform[] };
          }
          const platforms = (await options.source.publishedPlatforms(provider, version, options.signal)) ?? [];
          return { lock, present: true, platforms };
        } catch (err) {
          if (isProvkitError(err, ErrorCode.PROVIDER_NOT_FOUND)) {
            problem(
              provider,
              version,
              undefined,
              'VERSION_NOT_IN_MIRROR',
              `the mirror ${options.mirror} has no repository for this provider, so the lock file cannot be checked against it`,
            );
          } else {
            problem(provider, version, undefined, 'INDEX_INVALID', message(err));
          }
          return { lock, present: false, platforms: [] as Platform[] };
        }
      }),
    );
    for (const p of published) scopeAll.push(...p.platforms);
    const scope = sortPlatforms(options.platforms ?? scopeAll);
    const inScope = (p: Platform): boolean => scope.some((s) => s.equals(p));

    await Promise.all(
      published.flatMap(({ lock, present, platforms }) => {
        const { provider, version } = lock;
        const locked = new Set(lock.hashes.map((h) => h.text));
        const lockHasZh = lock.hashes.some((h) => h.scheme === 'zh:');
        // The directory mirror's rule (verify.ts): a tag whose index lists no usable platform is not "no problems".
        if (present)
          for (const c of platformCoverage(platforms, scope)) problem(provider, version, c.platform, c.code, c.message);
        return platforms.map((platform) =>
          network(async () => {
            let path: string | undefined;
            try {
              let meta;
              try {
                meta = await options.source.packageMeta(provider, version, platform, options.signal);
              } catch (err) {
                problem(provider, version, platform, 'INDEX_INVALID', message(err));
                return;
              }
              let fetched;
              try {
                // Hashed by the pool as the blob arrives (fetched.zipHashes): one pass over its bytes.
                fetched = await fetchPackage(meta, {
                  destPath: join(work, downloadName(meta.filename, packages++)),
                  http: options.http,
                  ...(options.signal ? { signal: options.signal } : {}),
                  hashing: poolHashing(options.pool),
                });
              } catch (err) {
                problem(
                  provider,
                  version,
                  platform,
                  isProvkitError(err, ErrorCode.CHECKSUM_MISMATCH) ? 'INDEX_MISMATCH' : 'PACKAGE_REFUSED',
                  message(err),
                );
                return;
              }
              if (fetched.kind !== 'archive') return;
              path = fetched.path;
              const zip = fetched.zipHashes;
              if (!zip.h1.ok) {
                problem(
                  provider,
                  version,
                  platform,
                  'PACKAGE_REFUSED',
                  `the package is refused: ${zip.h1.error.message}`,
                );
                return;
              }
              const stored = await options.hashStore?.lookup(zip.zh);
              // Where the bytes came from, as every fetch names it (a URL without userinfo).
              const local = localDisposition(meta);
              const from =
                (local.kind === 'computed-locally' || local.kind === 'verified-locally' ? local.from : undefined) ??
                fetched.from;
              checked.push({
                provider,
                version,
                platform,
                location: from,
                hashes: verifiedPackageHashes({
                  platform,
                  from,
                  computed: zipHashTexts(zip),
                  zh: zip.zh,
                  ...(stored === undefined ? {} : { stored: stored.dispositions }),
                  reported: meta.reportedHashes.filter(
                    (r) => r.trust.kind === 'reported-by-mirror' && (r.platform?.equals(platform) ?? false),
                  ),
                }),
              });
              const differ = zip.warnings.find((w) => w.code === 'H1_FORMS_DIFFER');
              if (differ)
                problem(
                  provider,
                  version,
                  platform,
                  'H1_FORMS_DIFFER',
                  `${differ.message} Entries: ${differ.entries.map((e) => JSON.stringify(e)).join(', ')}.`,
                );
              if (!inScope(platform)) return;
              if (!locked.has(zip.h1.hash.text)) {
                problem(
                  provider,
                  version,
                  platform,
                  'LOCK_MISSING_H1',
                  `its h1: (${zip.h1.hash.text}) is not in the lock file: the lock does not cover ${platform.toString()}, or the package differs from the one locked (provkit lock -platform=${platform.toString()} records it)`,
                );
              }
              if (lockHasZh && !locked.has(zip.zh.text)) {
                problem(
                  provider,
                  version,
                  platform,
                  'LOCK_MISSING_ZH',
                  `the lock file records zh: hashes for this provider, but not this archive's (${zip.zh.text}): it is not the archive the registry signed`,
                );
              }
            } finally {
              if (path !== undefined) await rm(path, { force: true });
            }
          }),
        );
      }),
    );
    for (const { lock, present } of published) {
      const mine = checked.filter((p) => p.provider.equals(lock.provider) && p.version.equals(lock.version));
      if (!present || mine.length === 0) continue;
      // eslint-disable-next-line no-await-in-loop -- a few small store entries per provider
      const hashes = unvouchedLockHashes(lock.hashes, mine, await lookupAll(options.hashStore, lock.hashes));
      if (hashes.length > 0) unvouched.push({ provider: lock.provider, version: lock.version, hashes });
    }
    problems.sort(compareProblems);
    emitProvenance(checked, unvouched, options.events);
    return { problems, packages, providers: options.locks.size, platforms: scope, checked, unvouched };
  } finally {
    await rm(work, { recursive: true, force: true }).catch(() => undefined);
    forgetWork();
  }
}
