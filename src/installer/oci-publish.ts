/**
 * Publishing provider packages into an OCI registry, in the layout
 * OpenTofu's `oci_mirror` reads (sources/oci-mirror.ts; docs/oci.md):
 *
 * - one repository per provider (`target.repositoryFor`);
 * - per platform, the upstream zip as a blob, byte for byte (its digest is
 *   the package's `zh:`), a config blob holding the platform
 *   (`{"architecture":"amd64","os":"linux"}`, media type
 *   `application/vnd.oci.image.config.v1+json`, as `oras push
 *   --artifact-platform` writes it in OpenTofu's documented recipe), and an
 *   image manifest (`artifactType: application/vnd.opentofu.provider-target`,
 *   one `archive/zip` layer titled with the package's file name);
 * - per version, an image index (`artifactType:
 *   application/vnd.opentofu.provider`) listing one manifest per platform,
 *   tagged with the version (`+` written `_`).
 *
 * Deterministic: manifests are compact JSON with a fixed key order and no
 * timestamps, the index lists platforms sorted, so publishing the same
 * packages again yields the same digests (and a tag already naming the same
 * index is left alone). A version's index keeps the platforms an earlier
 * publish put there and this run does not touch.
 *
 * Order and atomicity: blobs first (a blob the repository has is not
 * uploaded again — `HEAD`; one this run put into another repository of the
 * registry is mounted from there), then the platform manifests by digest,
 * and only when every package of the run got that far, the indexes by tag:
 * a reader never sees a tag whose manifests or blobs are missing, and a
 * failed run moves no tag (what it uploaded is unreferenced; the registry's
 * garbage collection removes it).
 *
 * Downloads: a registry package whose signed `zh:` the target repository
 * already holds as a blob is not downloaded at all; everything else is
 * fetched and authenticated as `mirror` does (sources/fetch/) into a
 * temporary directory that is removed afterwards. Uploads read the file in
 * chunks (net/oci/client.ts), so memory stays bounded whatever the size.
 */
import { open, rm, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import pLimit from 'p-limit';

import { removeOnExit } from '../fs/cleanup.js';
import {
  compareVersions,
  parsePlatform,
  type Platform,
  ProviderAddress,
  sortPlatforms,
  type Version,
} from '../addresses/index.js';
import { asProvkitError, ErrorCode, ProvkitError, errorText } from '../errors.js';
import { H1, hashZipForms } from '../hashing/index.js';
import { archiveMatch, type Locks } from '../lockfile/index.js';
import { downloadName, packedFileName } from '../layout/index.js';
import {
  MediaType,
  type OciClient,
  type OciRepository,
  type RepositoryAddress,
  sha256Digest,
  versionTag,
} from '../net/index.js';
import {
  expectedZh,
  fetchPackage,
  PACKAGE_MEDIA_TYPE,
  PROVIDER_ARTIFACT_TYPE,
  PROVIDER_TARGET_ARTIFACT_TYPE,
  readDescriptor,
  type Descriptor,
  type PackageMeta,
  type Source,
} from '../sources/index.js';
import { type EventSink, fetchCompleteEvent, ignoreEvents } from './events.js';
import { DEFAULT_DOWNLOADS } from './download-queue.js';
import type { FetchRunOptions } from './run-options.js';
import { checkLockHashes, type MirrorFailure, selectMirrorVersion } from './mirror.js';
import { lockedHashesFor } from './mirror-plan.js';

/** Where packages are published. */
export interface OciTarget {
  /** For messages: the template as given. */
  readonly display: string;
  /** The repository of a provider; throws when the template cannot name one. */
  readonly repositoryFor: (provider: ProviderAddress) => RepositoryAddress;
}

/** One provider version to publish, for the given platforms. */
export interface PublishItem {
  readonly provider: ProviderAddress;
  readonly version: Version;
  readonly platforms: readonly Platform[];
}

export interface PublishOptions {
  readonly items: readonly PublishItem[];
  readonly source: Source;
  readonly client: OciClient;
  readonly target: OciTarget;
  readonly http?: FetchRunOptions['http'];
  readonly events?: EventSink;
  readonly signal?: AbortSignal;
  /** Requests and blob transfers at once (default `DEFAULT_DOWNLOADS`: download-queue.ts). */
  readonly networkConcurrency?: number;
  /**
   * How long to wait after writing tags before reading them back to check
   * that no concurrent publisher overwrote them (default: four times the
   * slowest read-and-write of a tag, 1 to 10 s; see `updateTags`).
   */
  readonly tagSettleMs?: number;
  /**
   * A lock file every package published must match, per version
   * (`mirror oci://`, as `mirror`: {@link checkLockHashes}); none: no check.
   */
  readonly locks?: Locks;
  /** Publish a package that matches none of the lock's hashes all the same, with a warning each (`-ignore-lock-hashes`). */
  readonly ignoreLockHashes?: boolean;
}

export interface PublishFailure {
  readonly provider?: ProviderAddress;
  readonly version?: Version;
  readonly platform?: Platform;
  readonly summary: string;
  readonly error: ProvkitError;
}

export interface PublishOutcome {
  readonly failures: readonly PublishFailure[];
  /** Blobs uploaded (bytes sent), found present, mounted. */
  readonly uploaded: number;
  readonly uploadedBytes: number;
  readonly present: number;
  readonly mounted: number;
  /** Tags pushed and tags that already named the same index. */
  readonly tagsPushed: number;
  readonly tagsUnchanged: number;
}

/** A platform's published parts, ready for the index. */
interface PlatformManifest {
  readonly platform: Platform;
  readonly descriptor: Descriptor;
  readonly body: Buffer;
}

/** The config blob of a platform: its OCI platform object, compact, fixed key order. */
export function platformConfig(platform: Platform): Buffer {
  return Buffer.from(JSON.stringify({ architecture: platform.arch, os: platform.os }));
}

/** The image manifest of one platform's package (see the module comment). */
export function platformManifest(config: Descriptor, layer: { digest: string; size: number; title: string }): Buffer {
  return Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: MediaType.MANIFEST,
      artifactType: PROVIDER_TARGET_ARTIFACT_TYPE,
      config: { mediaType: config.mediaType, digest: config.digest, size: config.size },
      layers: [
        {
          mediaType: PACKAGE_MEDIA_TYPE,
          digest: layer.digest,
          size: layer.size,
          annotations: { 'org.opencontainers.image.title': layer.title },
        },
      ],
    }),
  );
}

/** The descriptor of an entry of a version's index. */
function indexEntry(m: {
  digest: string;
  size: number;
  platform: { os: string; architecture: string };
}): Record<string, unknown> {
  return {
    mediaType: MediaType.MANIFEST,
    digest: m.digest,
    size: m.size,
    platform: { architecture: m.platform.architecture, os: m.platform.os },
    artifactType: PROVIDER_TARGET_ARTIFACT_TYPE,
  };
}

/** The index of a version: entries sorted by platform (`os_arch`), then digest. */
export function providerIndex(entries: ReadonlyArray<Record<string, unknown>>): Buffer {
  const key = (e: Record<string, unknown>): string => {
    const p = e['platform'] as { os?: string; architecture?: string } | undefined;
    return `${p?.os ?? ''}_${p?.architecture ?? ''}\u0000${String(e['digest'])}`;
  };
  const sorted = [...entries].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  return Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: MediaType.INDEX,
      artifactType: PROVIDER_ARTIFACT_TYPE,
      manifests: sorted,
    }),
  );
}

/** Publishes `items` (see the module comment). */
export async function publishToOci(options: PublishOptions): Promise<PublishOutcome> {
  const events = options.events ?? ignoreEvents;
  const network = pLimit(options.networkConcurrency ?? DEFAULT_DOWNLOADS);
  const failures: PublishFailure[] = [];
  const work = await mkdtemp(join(tmpdir(), 'provkit-oci-'));
  // Removed however the process ends (an interrupt's process.exit included: src/fs/cleanup.ts).
  const forgetWork = removeOnExit(work);
  const counts = { uploaded: 0, uploadedBytes: 0, present: 0, mounted: 0, tagsPushed: 0, tagsUnchanged: 0 };
  /** Blobs known to be in a repository of a registry this run: digest → `registry` → repository names. */
  const knownBlobs = new Map<string, Map<string, Set<string>>>();
  /** One in-flight placement per repository and digest. */
  const placing = new Map<string, Promise<'uploaded' | 'present' | 'mounted'>>();
  /**
   * The first placement of each digest per registry: later ones (into other
   * repositories) wait for it, then mount from there instead of uploading
   * the same bytes again (the platform configs are shared by every provider).
   */
  const firstPlacement = new Map<string, Promise<void>>();
  const remember = (repo: OciRepository, digest: string): void => {
    let byRegistry = knownBlobs.get(digest);
    if (!byRegistry) knownBlobs.set(digest, (byRegistry = new Map<string, Set<string>>()));
    let names = byRegistry.get(repo.registry);
    if (!names) byRegistry.set(repo.registry, (names = new Set()));
    names.add(repo.name);
  };

  /**
   * Puts a blob into a repository: nothing when it is there, a mount when
   * another repository of the registry has it from this run, else an upload.
   */
  const placeBlob = (
    repo: OciRepository,
    digest: string,
    size: number,
    read: (offset: number, length: number) => Promise<Buffer>,
  ): Promise<{ action: 'uploaded' | 'present' | 'mounted'; from?: string }> => {
    const key = `${repo.toString()}@${digest}`;
    let from: string | undefined;
    let p = placing.get(key);
    if (!p) {
      const registryKey = `${repo.registry}@${digest}`;
      const earlier = firstPlacement.get(registryKey);
      p = (async () => {
        await earlier;
        if (await repo.hasBlob(digest, options.signal)) return 'present';
        const others = [...(knownBlobs.get(digest)?.get(repo.registry) ?? [])].filter((n) => n !== repo.name).sort();
        for (const other of others) {
          // eslint-disable-next-line no-await-in-loop -- the first repository that lends it wins
          if (await repo.mountBlob(digest, other, options.signal)) {
            from = `${repo.registry}/${other}`;
            return 'mounted';
          }
        }
        await repo.pushBlob(digest, size, read, options.signal);
        return 'uploaded';
      })();
      placing.set(key, p);
      if (earlier === undefined)
        firstPlacement.set(
          registryKey,
          p.then(
            () => undefined,
            () => undefined,
          ),
        );
      p.catch(() => placing.delete(key));
    }
    return p.then((action) => {
      remember(repo, digest);
      return { action, ...(from === undefined ? {} : { from }) };
    });
  };

  /** Everything of one platform short of the index: blobs and the image manifest. */
  const publishPlatform = async (
    repo: OciRepository,
    provider: ProviderAddress,
    version: Version,
    platform: Platform,
    n: number,
  ): Promise<PlatformManifest> => {
    const meta: PackageMeta = await options.source.packageMeta(provider, version, platform, options.signal);
    const title = packedFileName(provider, version, platform);
    const blob = (
      what: 'package' | 'config',
      digest: string,
      size: number,
      r: { action: 'uploaded' | 'present' | 'mounted'; from?: string },
    ): void => {
      if (r.action === 'uploaded') {
        counts.uploaded += 1;
        counts.uploadedBytes += size;
      } else if (r.action === 'present') counts.present += 1;
      else counts.mounted += 1;
      events({
        type: 'oci_blob',
        provider,
        version,
        platform,
        repository: repo.toString(),
        digest,
        size,
        what,
        action: r.action,
        ...(r.from === undefined ? {} : { from: r.from }),
      });
    };

    // A registry package whose signed zh: the repository holds needs no download.
    let layer: { digest: string; size: number } | undefined;
    const zh = expectedZh(meta);
    // A package whose signed zh: the lock file does not list is downloaded and checked (its h1: may be listed).
    const locked = options.locks ? lockedHashesFor(options.locks, provider, version) : [];
    if (zh !== undefined && (locked.length === 0 || archiveMatch(locked, { zh, h1Zip: null }) !== undefined)) {
      const digest = `sha256:${zh.value}`;
      const size = await network(() => blobSize(repo, digest, options.signal));
      if (
        size !== undefined &&
        (meta.authentication?.kind !== 'registry' ||
          meta.authentication.packageSize === undefined ||
          meta.authentication.packageSize === size)
      ) {
        layer = { digest, size };
        remember(repo, digest);
        blob('package', digest, size, { action: 'present' });
        events(fetchCompleteEvent({ provider, version, platform }, 'reused'));
      }
    }
    if (layer === undefined) {
      events({ type: 'fetch_start', provider, version, platform, location: options.source.forDisplay(provider) });
      const fetched = await network(async () => {
        // The archive is published as it is: its bytes and zh: (the blob's
        // digest), not its h1: forms.
        const f = await fetchPackage(meta, {
          hashing: { kind: 'zh-only' },
          ...(meta.location.kind === 'http' ? { destPath: join(work, downloadName(meta.filename, n)) } : {}),
          ...(options.http ? { http: options.http } : {}),
          ...(options.signal ? { signal: options.signal } : {}),
          events: {
            onProgress: (e) =>
              events({ type: 'fetch_progress', provider, version, platform, bytes: e.received, total: e.total }),
          },
        });
        if (f.kind === 'dir') {
          throw new ProvkitError(
            ErrorCode.USAGE,
            `${provider.toString()} ${version.toString()} for ${platform.toString()} is an unpacked directory in the source; an OCI mirror needs its zip`,
            {
              provider: provider.toString(),
            },
          );
        }
        if (options.locks) {
          // The lock's h1: is the zip form: computed only when the zh: matched nothing and the lock has an h1:.
          const needH1 =
            locked.some((h) => h.scheme === H1) && archiveMatch(locked, { zh: f.zh, h1Zip: null }) === undefined;
          const forms = needH1 ? await hashZipForms(f.path) : undefined;
          const refused = checkLockHashes(
            { locks: options.locks, ignoreLockHashes: options.ignoreLockHashes },
            events,
            { provider, version, platform },
            { zh: f.zh, h1Zip: forms?.h1Zip.ok ? forms.h1Zip.hash : null },
          );
          if (refused) {
            if (f.path.startsWith(work)) await rm(f.path, { force: true });
            throw new LockRefusal(refused);
          }
        }
        events(fetchCompleteEvent({ provider, version, platform }, f));
        const digest = `sha256:${f.zh.value}`;
        const fh = await open(f.path, 'r');
        try {
          const read = async (offset: number, length: number): Promise<Buffer> => {
            const buf = Buffer.alloc(length);
            let got = 0;
            while (got < length) {
              // eslint-disable-next-line no-await-in-loop -- a short read continues where it stopped
              const { bytesRead } = await fh.read(buf, got, length - got, offset + got);
              if (bytesRead === 0)
                throw new ProvkitError(ErrorCode.IO, `${f.path}: ended after ${offset + got} bytes while uploading`, {
                  file: f.path,
                });
              got += bytesRead;
            }
            return buf;
          };
          blob('package', digest, f.size, await placeBlob(repo, digest, f.size, read));
        } finally {
          await fh.close();
          if (f.path.startsWith(work)) await rm(f.path, { force: true });
        }
        return { digest, size: f.size };
      });
      layer = fetched;
    }

    const configBytes = platformConfig(platform);
    const config: Descriptor = {
      mediaType: MediaType.CONFIG,
      digest: sha256Digest(configBytes),
      size: configBytes.length,
    };
    blob(
      'config',
      config.digest,
      config.size,
      await network(() =>
        placeBlob(repo, config.digest, config.size, (o, l) => Promise.resolve(configBytes.subarray(o, o + l))),
      ),
    );
    const body = platformManifest(config, { ...layer, title });
    const digest = sha256Digest(body);
    await network(() => repo.putManifest(digest, MediaType.MANIFEST, body, options.signal));
    return {
      platform,
      body,
      descriptor: {
        mediaType: MediaType.MANIFEST,
        digest,
        size: body.length,
        artifactType: PROVIDER_TARGET_ARTIFACT_TYPE,
        platform: { os: platform.os, architecture: platform.arch },
      },
    };
  };

  const ready: Array<{ item: PublishItem; repo: OciRepository; manifests: PlatformManifest[] }> = [];
  let counter = 0;
  try {
    await Promise.all(
      options.items.map(async (item) => {
        let repo: OciRepository;
        try {
          const addr = options.target.repositoryFor(item.provider);
          if (addr.repository === '') throw new Error(`${addr.registry} names a registry but no repository`);
          repo = options.client.repository(addr.registry, addr.repository);
        } catch (err) {
          failures.push({
            provider: item.provider,
            summary: 'Invalid OCI repository',
            error: new ProvkitError(
              ErrorCode.INVALID_SOURCE_CONFIG,
              `selecting OCI repository address for ${item.provider.toString()} from ${options.target.display}: ${errorText(err)}`,
              {
                provider: item.provider.toString(),
                cause: err,
              },
            ),
          });
          return;
        }
        const manifests: PlatformManifest[] = [];
        await Promise.all(
          item.platforms.map(async (platform) => {
            try {
              manifests.push(await publishPlatform(repo, item.provider, item.version, platform, counter++));
            } catch (err) {
              if (err instanceof LockRefusal) {
                failures.push(err.failure);
                return;
              }
              failures.push({
                provider: item.provider,
                version: item.version,
                platform,
                summary: 'Cannot publish provider package',
                error: asProvkitError(err),
              });
            }
          }),
        );
        ready.push({ item, repo, manifests });
      }),
    );
    if (options.signal?.aborted) {
      throw new ProvkitError(
        ErrorCode.ABORTED,
        `publishing to ${options.target.display} was interrupted; no tag was changed`,
        { cause: options.signal.reason },
      );
    }
    // All or nothing: no tag moves unless every package is in place.
    if (failures.length > 0) return { failures, ...counts, tagsPushed: 0, tagsUnchanged: 0 };

    // Tags in provider order, then version precedence (1.9.0 before 1.10.0), whatever the locale.
    ready.sort(
      (a, b) =>
        ProviderAddress.compare(a.item.provider, b.item.provider) || compareVersions(a.item.version, b.item.version),
    );
    const tagged = await updateTags(
      ready.map(({ item, repo, manifests }) => ({ item, repo, manifests })),
      options.signal,
      options.tagSettleMs,
    );
    for (const t of tagged) {
      const { item, repo } = t.update;
      if ('error' in t) {
        failures.push({
          provider: item.provider,
          version: item.version,
          summary: 'Cannot tag provider version',
          error: t.error,
        });
        continue;
      }
      if (t.action === 'unchanged') counts.tagsUnchanged += 1;
      else counts.tagsPushed += 1;
      events({
        type: 'oci_tag',
        provider: item.provider,
        version: item.version,
        repository: repo.toString(),
        tag: versionTag(item.version.toString()),
        digest: t.digest,
        platforms: t.platforms,
        action: t.action,
      });
    }
    return { failures, ...counts };
  } finally {
    await rm(work, { recursive: true, force: true }).catch(() => undefined);
    forgetWork();
  }
}

/** A package that does not match the lock file: its failure, carried out of the upload slot as it is. */
class LockRefusal extends Error {
  constructor(readonly failure: MirrorFailure) {
    super(failure.error.message);
  }
}

/** One version's tag to point at an index holding this run's platform manifests. */
interface TagUpdate {
  readonly item: PublishItem;
  readonly repo: OciRepository;
  readonly manifests: readonly PlatformManifest[];
}

/** How many times a tag is re-read, merged and written before the run gives up on it. */
const MAX_TAG_ATTEMPTS = 8;

/**
 * Points each version's tag at an index that holds this run's platform
 * manifests and keeps every other platform the tag's index holds. Two runs
 * publishing one version for different platforms at the same time must not
 * lose each other's (docs/oci.md, "Concurrent publishes"):
 *
 * 1. read the tag's index, merge this run's entries in, and write it back,
 *    conditionally (`If-Match` with the `ETag` read, `If-None-Match: *` when
 *    there was no tag) so that a registry that supports conditional requests
 *    refuses a write over a change made since the read (412: read again);
 * 2. distribution 2.8 (Debian's `docker-registry`) and others ignore those
 *    headers, so after the writes, and once a concurrent writer that read
 *    before them has had time to write too (`settleMs`: four times the
 *    slowest read-and-write of the round, 1 to 10 s, or as given), every
 *    written tag is read again: one whose index no longer holds this run's
 *    entries was overwritten by a writer that had read it before, and goes
 *    back to step 1, merged with what that writer wrote;
 * 3. after {@link MAX_TAG_ATTEMPTS} rounds a tag that still does not hold
 *    this run's entries fails the run, loudly: never "Tagged" for a tag that
 *    does not hold what it says.
 *
 * Tags are read and written one after another, in the order given.
 */
async function updateTags(
  updates: readonly TagUpdate[],
  signal: AbortSignal | undefined,
  settleMs: number | undefined,
): Promise<
  Array<
    | { update: TagUpdate; action: 'pushed' | 'unchanged'; digest: string; platforms: Platform[] }
    | { update: TagUpdate; error: ProvkitError }
  >
> {
  type Done =
    | { update: TagUpdate; action: 'pushed' | 'unchanged'; digest: string; platforms: Platform[] }
    | { update: TagUpdate; error: ProvkitError };
  const done = new Map<TagUpdate, Done>();
  let pending: TagUpdate[] = [...updates];
  const pushedOnce = new Set<TagUpdate>();
  for (let round = 1; pending.length > 0; round++) {
    const written: Array<{ update: TagUpdate; digest: string; platforms: Platform[] }> = [];
    let slowest = 0;
    for (const update of pending) {
      const { repo, manifests, item } = update;
      const tag = versionTag(item.version.toString());
      try {
        for (let attempt = 1; ; attempt++) {
          const started = Date.now();
          // eslint-disable-next-line no-await-in-loop -- tags one after another, in a stable order
          const previous = await previousEntries(repo, tag, signal);
          const entries = mergedEntries(previous.entries, manifests);
          const body = providerIndex(entries);
          const digest = sha256Digest(body);
          const platforms = platformsOf(entries, manifests);
          if (previous.digest === digest) {
            done.set(update, {
              update,
              action: pushedOnce.has(update) ? 'pushed' : 'unchanged',
              digest,
              platforms,
            });
            break;
          }
          // eslint-disable-next-line no-await-in-loop
          const put = await repo.putManifestIf(
            tag,
            MediaType.INDEX,
            body,
            previous.etag !== undefined
              ? { ifMatch: previous.etag }
              : previous.digest === undefined
                ? { ifNoneMatch: '*' }
                : undefined,
            signal,
          );
          if (put.stored) {
            slowest = Math.max(slowest, Date.now() - started);
            pushedOnce.add(update);
            written.push({ update, digest, platforms });
            break;
          }
          // 412: the tag changed since it was read; read it again.
          if (attempt >= MAX_TAG_ATTEMPTS) throw tagContended(repo, tag, attempt);
        }
      } catch (err) {
        done.set(update, { update, error: asProvkitError(err) });
      }
    }
    if (written.length === 0) break;
    // A writer that read a tag before this round wrote it writes within about as long as a read and a write take.
    // eslint-disable-next-line no-await-in-loop
    await settle(settleMs ?? Math.min(10_000, Math.max(1_000, 4 * slowest)), signal);
    pending = [];
    for (const w of written) {
      const { repo, manifests, item } = w.update;
      const tag = versionTag(item.version.toString());
      try {
        // eslint-disable-next-line no-await-in-loop
        const now = await previousEntries(repo, tag, signal);
        if (holdsAll(now.entries, manifests)) {
          done.set(w.update, { update: w.update, action: 'pushed', digest: w.digest, platforms: w.platforms });
        } else if (round >= MAX_TAG_ATTEMPTS) {
          done.set(w.update, { update: w.update, error: tagContended(repo, tag, round) });
        } else {
          pending.push(w.update);
        }
      } catch (err) {
        done.set(w.update, { update: w.update, error: asProvkitError(err) });
      }
    }
  }
  return updates.map((u) => done.get(u)!);
}

/** The tag's entries with this run's replacing those of the same platforms. */
function mergedEntries(
  previous: ReadonlyArray<Record<string, unknown>>,
  manifests: readonly PlatformManifest[],
): Array<Record<string, unknown>> {
  const mine = new Set(manifests.map((m) => m.platform.toString()));
  const kept = previous.filter((e) => {
    const d = readDescriptor(e);
    const p = d?.platform;
    return !(
      d?.artifactType === PROVIDER_TARGET_ARTIFACT_TYPE &&
      p?.os !== undefined &&
      p.architecture !== undefined &&
      mine.has(`${p.os}_${p.architecture}`)
    );
  });
  return [
    ...kept,
    ...manifests.map((m) =>
      indexEntry({
        digest: m.descriptor.digest,
        size: m.descriptor.size,
        platform: { os: m.platform.os, architecture: m.platform.arch },
      }),
    ),
  ];
}

/** Whether an index's entries list every one of this run's manifests (platform and digest). */
function holdsAll(entries: ReadonlyArray<Record<string, unknown>>, manifests: readonly PlatformManifest[]): boolean {
  return manifests.every((m) =>
    entries.some((e) => {
      const d = readDescriptor(e);
      return (
        d?.digest === m.descriptor.digest &&
        d.platform?.os === m.platform.os &&
        d.platform.architecture === m.platform.arch
      );
    }),
  );
}

function tagContended(repo: OciRepository, tag: string, attempts: number): ProvkitError {
  return new ProvkitError(
    ErrorCode.OCI_PUSH_REFUSED,
    `the tag ${repo.toString()}:${tag} kept changing while this run wrote it (another publisher at the same time; ${attempts} attempts): it may not list this run's platforms`,
    {
      url: repo.url(`manifests/${tag}`),
      hint: 'Run the publish again: packages already in the registry are not sent twice.',
    },
  );
}

/** Waits `ms` (or until `signal` aborts: the read after it then reports the interrupt). */
function settle(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) {
      resolve();
      return;
    }
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** The size of a blob the repository has (`HEAD`), or undefined (absent, or no length given). */
async function blobSize(repo: OciRepository, digest: string, signal?: AbortSignal): Promise<number | undefined> {
  return (await repo.statBlob(digest, signal))?.size;
}

/**
 * The entries of the index a tag names now, to keep what this run does not
 * replace. A tag naming anything but a provider index is not overwritten.
 */
async function previousEntries(
  repo: OciRepository,
  tag: string,
  signal?: AbortSignal,
): Promise<{ digest?: string; etag?: string; entries: Array<Record<string, unknown>> }> {
  const existing = await repo.getManifest(
    tag,
    [MediaType.INDEX, MediaType.MANIFEST, MediaType.DOCKER_LIST, MediaType.DOCKER_MANIFEST],
    signal,
  );
  if (existing === undefined) return { entries: [] };
  let doc: unknown;
  try {
    doc = JSON.parse(existing.body.toString('utf8'));
  } catch {
    doc = undefined;
  }
  const rec = typeof doc === 'object' && doc !== null ? (doc as Record<string, unknown>) : {};
  if (
    rec['mediaType'] !== MediaType.INDEX ||
    rec['artifactType'] !== PROVIDER_ARTIFACT_TYPE ||
    !Array.isArray(rec['manifests'] ?? [])
  ) {
    throw new ProvkitError(
      ErrorCode.OCI_PUSH_REFUSED,
      `the tag ${repo.toString()}:${tag} already names something that is not an OpenTofu provider index (media type ${JSON.stringify(rec['mediaType'] ?? existing.mediaType ?? '')}, artifact type ${JSON.stringify(rec['artifactType'] ?? '')}); it was not replaced`,
      { url: existing.url },
    );
  }
  const entries = ((rec['manifests'] as unknown[] | undefined) ?? []).filter(
    (e): e is Record<string, unknown> => typeof e === 'object' && e !== null && !Array.isArray(e),
  );
  return { digest: existing.digest, ...(existing.etag === undefined ? {} : { etag: existing.etag }), entries };
}

/** The platforms an index lists (this run's, and those kept from before), sorted. */
function platformsOf(entries: ReadonlyArray<Record<string, unknown>>, mine: readonly PlatformManifest[]): Platform[] {
  const out: Platform[] = mine.map((m) => m.platform);
  for (const e of entries) {
    const d = readDescriptor(e);
    const p = d?.platform;
    if (d?.artifactType !== PROVIDER_TARGET_ARTIFACT_TYPE || p?.os === undefined || p.architecture === undefined)
      continue;
    if (out.some((q) => q.os === p.os && q.arch === p.architecture)) continue;
    try {
      out.push(parsePlatform(`${p.os}_${p.architecture}`));
    } catch {
      // Not a platform provkit knows: listed in the index all the same.
    }
  }
  return sortPlatforms(out);
}

/** Options of {@link runOciMirror}: `mirror oci://…`. */
export interface OciMirrorOptions extends Omit<FetchRunOptions, 'pool' | 'hashStore'> {
  /** The lock file's selections; when non-empty, versions follow it and packages must match its hashes (as `mirror`). */
  readonly locks: Locks;
  /** As `mirror`'s `ignoreLockHashes` (mirror.ts). */
  readonly ignoreLockHashes?: boolean;
  readonly client: OciClient;
  readonly target: OciTarget;
}

/**
 * `provkit mirror oci://…`: selects each required provider's version as
 * `mirror` does (the lock file's, else the newest meeting the constraints)
 * and publishes it for every platform.
 */
export async function runOciMirror(options: OciMirrorOptions): Promise<PublishOutcome> {
  const events = options.events ?? ignoreEvents;
  const failures: PublishFailure[] = [];
  const items: PublishItem[] = [];
  await Promise.all(
    options.requirements.map(async (req) => {
      const selected = await selectMirrorVersion(options, req, events);
      if ('failure' in selected) failures.push(selected.failure);
      else items.push({ provider: req.provider, version: selected.version, platforms: options.platforms });
    }),
  );
  if (failures.length > 0)
    return { failures, uploaded: 0, uploadedBytes: 0, present: 0, mounted: 0, tagsPushed: 0, tagsUnchanged: 0 };
  return publishToOci({
    items,
    source: options.source,
    client: options.client,
    target: options.target,
    events,
    locks: options.locks,
    ...(options.ignoreLockHashes === undefined ? {} : { ignoreLockHashes: options.ignoreLockHashes }),
    ...(options.http ? { http: options.http } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.networkConcurrency === undefined ? {} : { networkConcurrency: options.networkConcurrency }),
  });
}
