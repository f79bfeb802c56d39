/**
 * `bundle create`: resolve the providers, fetch and hash every package, then
 * stream a deterministic tar (see manifest.ts for the format) to a writable
 * (`createBundle`) or into a file committed atomically (`createBundleFile`,
 * which the command calls).
 *
 * - No second copy on disk: packages of a local (filesystem mirror) source
 *   are read in place; remote ones are downloaded to `workDir` (temporary,
 *   removed afterwards) and streamed from there into the tar.
 * - Everything is fetched and hashed before the first byte is written, so
 *   the manifest can come first (the importer checks every later member
 *   against it while streaming) and a failure writes nothing.
 * - Packages are checked against the lock file: when the lock holds hashes
 *   for the selected version, the package must match one of them.
 * - Deterministic: members sorted by name, fixed mtime (`createdEpoch`),
 *   mode 0644, uid/gid 0, no user names; `manifest.json` has a fixed key order.
 * - `since`: packages listed by an older bundle's manifest are left out (but
 *   still listed, with their hashes, in this manifest and the lock entries).
 * - Failures name the file the user knows: a full or read-only output names
 *   the bundle (`outPath`), never the package being copied into it; a corrupt
 *   download is named by its URL, never by its temporary copy. The
 *   temporary directory is removed however the run ends (src/fs/cleanup.ts).
 */
/* eslint-disable no-await-in-loop -- tar members are written and read one after another, in order; moves and index writes are ordered on purpose */
import { createHash } from 'node:crypto';
import { createReadStream, type WriteStream } from 'node:fs';
import { mkdtemp, open, rename, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Transform, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

import tar from 'tar-stream';

import {
  parsePlatform,
  type Platform,
  type ProviderAddress,
  type Version,
  type Requirement,
} from '../addresses/index.js';
import { asError, asProvkitError, ErrorCode, fileError, ProvkitError } from '../errors.js';
import { removeOnExit } from '../fs/cleanup.js';
import { makeDirectory } from '../fs/target.js';
import { tempPathBeside } from '../fs/temp-name.js';
import { compareBytewise } from '../go/index.js';
import { normalizeHashes, parseHash } from '../hashing/index.js';
import { Locks, newProviderLock, serializeLocks } from '../lockfile/index.js';
import { mirrorIndexJSON, mirrorVersionJSON, packedFileName, providerDirPath } from '../layout/index.js';
import { checkFetchedFor, fetchPackage, poolHashing } from '../sources/index.js';
import { namedBySource, requireExtractable } from '../installer/archive-check.js';
import { fetchCompleteEvent, ignoreEvents } from '../installer/events.js';
import { type FetchRunOptions } from '../installer/run-options.js';
import { querySelectVersion } from '../installer/select-version.js';
import { DEFAULT_DOWNLOADS, networkQueue, queueDownload } from '../installer/download-queue.js';
import { ArchiveWarmup } from '../installer/archive-warmup.js';
import { abortable, abortableSource, throwIfAborted, withSignal } from '../installer/abort.js';
import {
  BUNDLE_FORMAT,
  BUNDLE_LOCK_NAME,
  type BundleManifest,
  type BundleMember,
  type BundlePackage,
  type BundleProvider,
  createdFromEpoch,
  MANIFEST_NAME,
  serializeManifest,
} from './manifest.js';

/**
 * How {@link createBundle} writes an air-gap bundle (docs/bundles.md): the requirements' packages for the
 * platforms, verified against the lock file, as one tar stream with a manifest.
 */
export interface BundleCreateOptions extends FetchRunOptions {
  /** The lock file's selections: versions follow it, and packages must match its hashes. */
  readonly locks: Locks;
  /** The provkit version recorded in the manifest (`provkit_version`). */
  readonly provkitVersion: string;
  /** Unix seconds: the manifest's `created` and every member's mtime. */
  readonly createdEpoch: number;
  /** Where the tar goes; ended when the bundle is complete. Not written to at all when there are failures. */
  readonly out: Writable;
  /** The file `out` writes (named in messages when writing fails). */
  readonly outPath?: string;
  /** An older bundle's manifest and its SHA-256: what it holds is left out. */
  readonly since?: { readonly manifest: BundleManifest; readonly sha256: string };
  /** Parent of the temporary download directory (default: the OS temp dir). */
  readonly workDir?: string;
}

/**
 * A package (or a provider as a whole, without `platform`) that could not go into the bundle; when there is one,
 * nothing is written.
 */
export interface BundleFailure {
  /** The provider the failure is about, normalised (as the manifest's `source` would name it). */
  readonly provider: ProviderAddress;
  /** The platform, when the failure is about one package. */
  readonly platform?: Platform;
  /** One line for a list of failures (the cause's summary, said once for the packages it stopped). */
  readonly summary: string;
  /** The error, with its code and context fields. */
  readonly error: ProvkitError;
}

/** What {@link createBundle} did: the failures (then `out` was not written), or the manifest and the sizes. */
export interface BundleCreateOutcome {
  /** Packages or providers that could not be bundled; non-empty means no bundle was written. */
  readonly failures: readonly BundleFailure[];
  /** Set when the bundle was written. */
  readonly manifest?: BundleManifest;
  /** Bytes of the tar. */
  readonly bytes: number;
  /** Packages in this bundle, and packages left out because the `since` bundle has them. */
  readonly packages: number;
  /** Packages left out because the `since` bundle already has them. */
  readonly skipped: number;
}

interface Picked {
  readonly req: Requirement;
  readonly version: Version;
  /** `file`: where the zip is read from; `from`: its URL or source path, for messages. */
  readonly packages: Array<BundlePackage & { readonly file?: string; readonly from?: string; readonly size?: number }>;
}

/** See the module comment. */
export async function createBundle(options: BundleCreateOptions): Promise<BundleCreateOutcome> {
  return abortable('bundle create', options.signal, (signal) =>
    createWith({ ...withSignal(options, signal), source: abortableSource(options.source, signal, 'bundle create') }),
  );
}

/** How {@link createBundleFile} writes an air-gap bundle into a file: {@link BundleCreateOptions} with a path for `out`. */
export interface BundleFileOptions extends Omit<BundleCreateOptions, 'out' | 'outPath'> {
  /** The bundle file to write (replaced atomically; its directory is created when missing). */
  readonly outPath: string;
}

/**
 * {@link createBundle} into the file `outPath`, committed as CONTRIBUTING.md house style 3 says: the tar is
 * written to a temporary file opened `wx` beside it, synced and renamed over it only when the bundle is
 * complete; on failures (the outcome's or a thrown error, an interrupt included) the temporary file is removed
 * and `outPath` is untouched. The output's directory and the temporary file are made before any package is
 * fetched, so an unwritable place fails at once, naming the bundle (a `ProvkitError` with `file`).
 */
export async function createBundleFile(options: BundleFileOptions): Promise<BundleCreateOutcome> {
  const { outPath, ...rest } = options;
  const tmp = tempPathBeside(outPath);
  let out: WriteStream;
  try {
    await makeDirectory(dirname(outPath), 'cannot write the bundle into');
    if ((await stat(outPath).catch(() => undefined))?.isDirectory())
      throw new ProvkitError(ErrorCode.USAGE, `cannot write the bundle ${outPath}: it is a directory`, {
        file: outPath,
      });
    out = (await open(tmp, 'wx', 0o644)).createWriteStream();
  } catch (err) {
    throw fileError(err, 'cannot write the bundle', outPath);
  }
  const forget = removeOnExit(tmp);
  // Failures of the stream are reported by createBundle; until it listens, one here keeps them from being uncaught.
  out.on('error', () => undefined);
  let committed = false;
  try {
    const outcome = await createBundle({ ...rest, out, outPath });
    if (outcome.failures.length > 0) return outcome;
    try {
      // The stream closed its descriptor when it finished; fsync flushes the file whichever descriptor asks.
      const synced = await open(tmp, 'r');
      try {
        await synced.sync();
      } finally {
        await synced.close();
      }
      await rename(tmp, outPath);
    } catch (err) {
      throw fileError(err, 'cannot write the bundle', outPath);
    }
    committed = true;
    return outcome;
  } finally {
    out.destroy();
    if (!committed) await rm(tmp, { force: true });
    forget();
  }
}

async function createWith(options: BundleCreateOptions): Promise<BundleCreateOutcome> {
  const events = options.events ?? ignoreEvents;
  // As mirror downloads (mirror.ts, download-queue.ts).
  const slots = options.networkConcurrency ?? DEFAULT_DOWNLOADS;
  const network = networkQueue(options.networkConcurrency);
  // Metadata ahead of bytes, archive hosts warmed, redirects learnt ahead: as for lock (installer/archive-warmup.ts).
  const warmup = new ArchiveWarmup({ http: options.http, signal: options.signal, slots });
  const failures: BundleFailure[] = [];
  // Made on the first download (a local source needs none); removed at exit whatever happens.
  let work: { path: Promise<string>; forget?: () => void } | undefined;
  const workDir = (): Promise<string> => {
    if (!work) {
      const made: { path: Promise<string>; forget?: () => void } = {
        path: mkdtemp(join(options.workDir ?? tmpdir(), 'provkit-bundle-')).then(
          (dir) => {
            made.forget = removeOnExit(dir);
            return dir;
          },
          (err: unknown) => {
            throw fileError(err, 'cannot create a temporary directory in', options.workDir ?? tmpdir());
          },
        ),
      };
      work = made;
    }
    return work.path;
  };
  const packageDir = async (): Promise<string> => {
    const base = await workDir();
    return mkdtemp(join(base, 'pkg-')).catch((err: unknown) =>
      Promise.reject(fileError(err, 'cannot create a temporary directory in', base)),
    );
  };
  const oldPackages = new Map<string, BundlePackage>();
  for (const p of options.since?.manifest.providers ?? []) {
    for (const k of p.packages) oldPackages.set(`${p.source}|${p.version}|${k.platform}`, k);
  }
  let skipped = 0;
  try {
    const picked: Picked[] = [];
    await Promise.all(
      options.requirements.map(async (req) => {
        const { provider } = req;
        const locked = options.locks.provider(provider);
        let version: Version;
        try {
          version = await querySelectVersion(options.source, req, locked?.version, {
            flavor: options.flavor,
            events,
            signal: options.signal,
          });
        } catch (err) {
          failures.push({ provider, summary: 'Provider not available', error: asProvkitError(err) });
          return;
        }
        const entry: Picked = { req, version, packages: [] };
        picked.push(entry);
        const lockHashes =
          locked && locked.version.equals(version)
            ? new Set(locked.preferredHashes().map((h) => h.text))
            : new Set<string>();
        await Promise.all(
          options.platforms.map(async (platform, i) => {
            const old = oldPackages.get(`${provider.toString()}|${version.toString()}|${platform.toString()}`);
            if (old) {
              skipped += 1;
              entry.packages[i] = old;
              return;
            }
            try {
              const meta = await warmup.packageMeta(options.source, { provider, version, platform });
              throwIfAborted('bundle create', options.signal);
              events({
                type: 'fetch_start',
                provider,
                version,
                platform,
                location: options.source.forDisplay(provider),
              });
              // A directory of its own per package: packages of other providers have the same file names (docs/reliability.md).
              const destPath =
                meta.location.kind === 'http'
                  ? join(await packageDir(), packedFileName(provider, version, platform))
                  : undefined;
              const fetched = await warmup.download(meta, (started) =>
                queueDownload(network, meta, (slotEvents) => {
                  started();
                  return fetchPackage(meta, {
                    ...(destPath === undefined ? {} : { destPath }),
                    ...(options.http ? { http: options.http } : {}),
                    ...(options.signal ? { signal: options.signal } : {}),
                    hashing: poolHashing(options.pool),
                    events: slotEvents(warmup.events({})),
                  });
                }),
              );
              if (fetched.kind !== 'archive') {
                throw new ProvkitError(
                  ErrorCode.USAGE,
                  `${provider.toString()} ${version.toString()} for ${platform.toString()} is an unpacked directory in the source; a bundle needs its zip`,
                  {
                    provider: provider.toString(),
                    version: version.toString(),
                    platform: platform.toString(),
                  },
                );
              }
              checkFetchedFor(fetched, provider, version, platform);
              // Refused as `mirror` refuses it; a downloaded copy is named by its URL (archive-check.ts).
              const z = fetched.zipHashes;
              const h1 = requireExtractable(z, fetched.from);
              if (!z.h1Zip.ok) throw namedBySource(z.h1Zip.error, z.path, fetched.from);
              const hashes = { zh: z.zh.text, h1: h1.text, h1Zip: z.h1Zip.hash.text };
              if (lockHashes.size > 0 && !lockHashes.has(hashes.zh) && !lockHashes.has(hashes.h1)) {
                throw new ProvkitError(
                  ErrorCode.LOCKFILE_CHECKSUM_MISMATCH,
                  `the package of ${provider.toString()} ${version.toString()} for ${platform.toString()} does not match any of the checksums recorded in the dependency lock file`,
                  {
                    provider: provider.toString(),
                    version: version.toString(),
                    platform: platform.toString(),
                    found: hashes.h1,
                  },
                );
              }
              events(fetchCompleteEvent({ provider, version, platform }, fetched));
              entry.packages[i] = {
                platform: platform.toString(),
                path: `${providerDirPath(provider)}/${packedFileName(provider, version, platform)}`,
                ...hashes,
                file: fetched.path,
                from: fetched.from,
                size: fetched.size,
              };
            } catch (err) {
              failures.push({
                provider,
                platform,
                summary: 'Cannot fetch provider package',
                error: asProvkitError(err),
              });
            }
          }),
        );
      }),
    );
    if (failures.length > 0) return { failures, bytes: 0, packages: 0, skipped };
    if (options.signal?.aborted) throw new ProvkitError(ErrorCode.ABORTED, 'bundle create was interrupted');

    // Members other than the manifest, with their bytes or their file.
    picked.sort((a, b) => compareBytewise(a.req.provider.toString(), b.req.provider.toString()));
    const members: Array<TarMember> = [];
    const providers: BundleProvider[] = [];
    const locks = [];
    for (const p of picked) {
      const packages = p.packages
        .filter((k) => k !== undefined)
        .sort((a, b) => compareBytewise(a.platform, b.platform));
      const fresh = packages.filter((k) => k.file !== undefined);
      const dir = providerDirPath(p.req.provider);
      if (fresh.length > 0) {
        for (const k of fresh)
          members.push({ name: k.path, size: k.size!, sha256: k.zh.slice(3), file: k.file!, from: k.from ?? k.file! });
        const doc = mirrorVersionJSON(
          fresh.map((k) => ({
            platform: parsePlatform(k.platform),
            hashes: normalizeHashes([k.zh, k.h1, k.h1Zip].map(parseHash)).map((h) => h.text),
            url: k.path.slice(dir.length + 1),
          })),
        );
        members.push(memberOf(`${dir}/${p.version.toString()}.json`, Buffer.from(doc)));
        members.push(memberOf(`${dir}/index.json`, Buffer.from(mirrorIndexJSON([p.version]))));
      }
      providers.push({
        source: p.req.provider.toString(),
        version: p.version.toString(),
        constraints: p.req.constraints.toString(),
        packages: packages.map((k) => ({ platform: k.platform, path: k.path, zh: k.zh, h1: k.h1, h1Zip: k.h1Zip })),
      });
      const locked = options.locks.provider(p.req.provider);
      const kept = locked && locked.version.equals(p.version) ? locked.hashes : [];
      locks.push(
        newProviderLock(p.req.provider, p.version, p.req.constraints, [
          ...kept,
          ...packages.flatMap((k) => [parseHash(k.zh), parseHash(k.h1)]),
        ]),
      );
    }
    members.push(memberOf(BUNDLE_LOCK_NAME, serializeLocks(new Locks(locks), options.flavor)));
    members.sort((a, b) => compareBytewise(a.name, b.name));
    const manifest: BundleManifest = {
      format: BUNDLE_FORMAT,
      provkitVersion: options.provkitVersion,
      flavor: options.flavor,
      created: createdFromEpoch(options.createdEpoch),
      ...(options.since ? { since: options.since.sha256 } : {}),
      platforms: options.platforms.map(String).sort(compareBytewise),
      providers,
      members: members.map((m) => ({ name: m.name, size: m.size, sha256: m.sha256 })),
    };
    const bytes = await writeTar(
      options.out,
      options.outPath,
      options.createdEpoch,
      [memberOf(MANIFEST_NAME, serializeManifest(manifest)), ...members],
      options.signal,
    );
    return { failures, manifest, bytes, packages: members.filter((m) => m.file !== undefined).length, skipped };
  } finally {
    if (work) {
      const dir = await work.path.catch(() => undefined);
      if (dir !== undefined) await rm(dir, { recursive: true, force: true });
      work.forget?.();
    }
  }
}

/** A member with its bytes, or with the file holding them and where that came from (for messages). */
type TarMember = BundleMember &
  (
    | { readonly data: Buffer; readonly file?: undefined }
    | { readonly data?: undefined; readonly file: string; readonly from: string }
  );

function memberOf(name: string, data: Buffer): BundleMember & { data: Buffer } {
  return { name, size: data.length, sha256: createHash('sha256').update(data).digest('hex'), data };
}

/**
 * Streams the members into a tar on `out`; returns the byte count. Files are
 * checked against their SHA-256 as they stream. A failure of `out` (a full
 * or read-only disk) is reported as writing `outPath`, whatever member was
 * being copied; a failure to read a member names where that member came from.
 */
async function writeTar(
  out: Writable,
  outPath: string | undefined,
  epoch: number,
  members: readonly TarMember[],
  signal: AbortSignal | undefined,
): Promise<number> {
  const pack = tar.pack();
  let bytes = 0;
  let outFailure: unknown;
  const onOutError = (err: unknown): void => {
    outFailure ??= err;
  };
  out.on('error', onOutError);
  const onAbort = (): void => {
    pack.destroy(new ProvkitError(ErrorCode.ABORTED, 'bundle create was interrupted'));
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  const outError = (err: unknown): ProvkitError => fileError(err, 'cannot write the bundle', outPath ?? '(output)');
  const counter = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      bytes += chunk.length;
      cb(null, chunk);
    },
  });
  const done = pipeline(pack, counter, out);
  // Awaited below; until then a failure must not count as an unhandled rejection.
  done.catch(() => undefined);
  const header = (m: BundleMember): Partial<tar.Header> & { name: string } => ({
    name: m.name,
    size: m.size,
    mode: 0o644,
    mtime: new Date(epoch * 1000),
    uid: 0,
    gid: 0,
    uname: '',
    gname: '',
    type: 'file',
  });
  try {
    for (const m of members) {
      if (signal?.aborted) throw new ProvkitError(ErrorCode.ABORTED, 'bundle create was interrupted');
      if (m.data !== undefined) {
        const data = m.data;
        await new Promise<void>((resolve, reject) =>
          pack.entry(header(m), data, (err) => (err ? reject(err) : resolve())),
        );
        continue;
      }
      const { file, from } = m;
      const st = await stat(file).catch((err: unknown) => Promise.reject(fileError(err, 'cannot read', from)));
      if (st.size !== m.size)
        throw new ProvkitError(
          ErrorCode.IO,
          `${from} changed while the bundle was written (size ${st.size}, expected ${m.size})`,
          { file: from },
        );
      const sha = createHash('sha256');
      const entry = pack.entry(header(m));
      const input = createReadStream(file);
      try {
        await pipeline(
          input,
          new Transform({
            transform(chunk: Buffer, _enc, cb) {
              sha.update(chunk);
              cb(null, chunk);
            },
          }),
          entry,
        );
      } catch (err) {
        // Reading the package failed only if its own stream did; otherwise the output did.
        if (input.errored && outFailure === undefined) throw fileError(input.errored, 'cannot read', from);
        throw err;
      }
      const got = sha.digest('hex');
      if (got !== m.sha256)
        throw new ProvkitError(ErrorCode.CHECKSUM_MISMATCH, `${from} changed while the bundle was written`, {
          file: from,
          expected: m.sha256,
          found: got,
        });
    }
    pack.finalize();
    await done;
  } catch (err) {
    pack.destroy(asError(err));
    await done.catch(() => undefined);
    if (outFailure !== undefined) throw outError(outFailure);
    if (err instanceof ProvkitError) throw err;
    // The tar stream between the members and the output.
    throw outError(err);
  } finally {
    out.off('error', onOutError);
    signal?.removeEventListener('abort', onAbort);
  }
  return bytes;
}
