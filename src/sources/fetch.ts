/**
 * Fetching a package any source described, and authenticating it as its
 * {@link PackageMeta.authentication} demands (spec §4.1 items 56 and 58,
 * §4.3 item 69, §5.3).
 *
 * Verify-then-commit: the archive is streamed (download or local copy)
 * through a `zh:` hasher ({@link ZhStream}) into a temporary file beside the
 * destination; the authentication runs on that file; only then is it renamed
 * into place. On any failure nothing is left at the destination and the
 * temporary file is removed.
 *
 * Authentication after the fetch:
 * - registry: the `packages` size (when given) and the archive's SHA-256
 *   against `shasum` (`archive has incorrect checksum zh:… (expected zh:…)`).
 *   The SHA256SUMS line and the signature were already checked when the
 *   metadata was fetched (see `registry/`), so a bad signature fails before
 *   any download; the reference checks it last, after the archive, so when a
 *   package has *both* a bad signature and a bad archive, provkit reports the
 *   signature and the reference the archive.
 * - network mirror: at least one listed `zh:` or `h1:` must match the archive;
 *   `h1:` is compared with the zip form (`dirhash.HashZip`, as the reference)
 *   and, as a deliberate extension, also with the extracted form (what a
 *   registry's `packages` h1 and lock files hold), so mirrors that copied
 *   those hashes work. Matching hashes become `verified-locally`.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

import { ErrorCode, isProvkitError, ProvkitError, systemErrorCode } from '../errors.js';
import { hashZipPackage, type HashStore, makeHash, ZhStream, type Hash, type ZipPackageHashes, type ZipStream } from '../hashing/index.js';
import { tempPathFor, type HttpClient, type NetEvents } from '../net/index.js';
import { SourceErrorCode } from './codes.js';
import { authenticationLabel, sourceError, withContext, type PackageMeta, type TrustedHash } from './source.js';

export interface FetchOptions {
  /**
   * Where the archive goes. Required for http locations; for a local archive,
   * omit it to authenticate the file in place (no copy).
   */
  readonly destPath?: string;
  /** Required for http locations. */
  readonly http?: HttpClient;
  readonly signal?: AbortSignal;
  readonly events?: NetEvents;
  /** Hashes a zip when a mirror lists only `h1:` hashes (default `hashZipPackage`; pass a worker pool's). */
  readonly hashZip?: (path: string) => Promise<ZipPackageHashes>;
  /**
   * Hash the archive while it is fetched (a pool's `streamZip`): the result
   * comes back as {@link FetchedArchive.zipHashes}, so the caller need not
   * hash the file again. Without it the archive is only hashed when
   * authentication needs it.
   */
  readonly streamZip?: () => ZipStream;
  /**
   * Hashes of archives seen before, by `zh:` (hashing/store.ts). A registry
   * package whose signed `zh:` is there is fetched (and checked against that
   * `zh:`) without being hashed: its {@link FetchedArchive.zipHashes} come
   * from the store. Hashes computed here are added to it.
   */
  readonly hashStore?: HashStore;
}

/** A fetched, authenticated archive. */
export interface FetchedArchive {
  readonly kind: 'archive';
  readonly path: string;
  /** The archive's `zh:`, computed from its bytes as they were written. */
  readonly zh: Hash;
  readonly size: number;
  /** Where it came from (final URL after redirects, or the local path). */
  readonly from: string;
  /** The metadata's reported hashes plus what authentication verified, each with its reason. */
  readonly hashes: readonly TrustedHash[];
  /** The reference's summary (`signed`, `signing skipped`, `verified checksum`, `unauthenticated`). */
  readonly label: ReturnType<typeof authenticationLabel>;
  /** The signing key, when signed. */
  readonly keyId?: string;
  /** The zip's hashes when authentication had to compute them (reuse them instead of hashing again). */
  readonly zipHashes?: ZipPackageHashes;
  /**
   * True when nothing was fetched: the registry's signed `zh:` named an
   * archive whose hashes a hash store already held ({@link storedArchive});
   * `path` is then the store entry, not an archive.
   */
  readonly stored?: boolean;
  readonly warnings: readonly string[];
}

/** An unpacked directory from a filesystem mirror: not copied, nothing to authenticate. */
export interface FetchedDirectory {
  readonly kind: 'dir';
  readonly path: string;
  readonly hashes: readonly TrustedHash[];
  readonly label: 'unauthenticated';
  readonly warnings: readonly string[];
}

export type FetchedPackage = FetchedArchive | FetchedDirectory;

interface Verified {
  hashes: TrustedHash[];
  zipHashes?: ZipPackageHashes;
}

/**
 * Checks a complete archive against the metadata's authentication and returns
 * the hashes it verified. Exported for re-authenticating a cached archive.
 *
 * @throws {ProvkitError} `CHECKSUM_MISMATCH` naming provider, version, platform.
 */
export async function authenticateArchive(
  meta: PackageMeta,
  archivePath: string,
  got: { readonly zh: Hash; readonly size: number },
  hashZip: (path: string) => Promise<ZipPackageHashes> = hashZipPackage,
): Promise<Verified> {
  const auth = meta.authentication;
  const ctx = { provider: meta.provider, version: meta.version, platform: meta.platform, ...locationContext(meta) };
  const local: TrustedHash = { hash: got.zh, trust: { kind: 'verified-locally' }, platform: meta.platform };
  if (auth === undefined) return { hashes: [] };
  if (auth.kind === 'registry') {
    if (auth.packageSize !== undefined && auth.packageSize !== got.size) {
      throw sourceError(
        SourceErrorCode.CHECKSUM_MISMATCH,
        `registry response indicates a package of size ${auth.packageSize}, but received a package of size ${got.size}`,
        { ...ctx, expected: String(auth.packageSize), found: String(got.size) },
      );
    }
    if (got.zh.value !== auth.sha256) {
      throw sourceError(SourceErrorCode.CHECKSUM_MISMATCH, `archive has incorrect checksum ${got.zh.text} (expected zh:${auth.sha256})`, {
        ...ctx,
        expected: `zh:${auth.sha256}`,
        found: got.zh.text,
      });
    }
    return { hashes: [local] };
  }
  // Network mirror hashes.
  const matched: TrustedHash[] = [];
  let zipHashes: ZipPackageHashes | undefined;
  for (const h of auth.hashes) {
    if (h.scheme === 'zh:') {
      if (h.text === got.zh.text) matched.push({ hash: h, trust: { kind: 'verified-locally' }, platform: meta.platform });
      continue;
    }
    // eslint-disable-next-line no-await-in-loop -- computed at most once, only when an h1 is listed
    zipHashes ??= await hashZip(archivePath);
    const forms = [zipHashes.h1Zip, zipHashes.h1].flatMap((f) => (f.ok ? [f.hash.text] : []));
    if (forms.includes(h.text)) matched.push({ hash: h, trust: { kind: 'verified-locally' }, platform: meta.platform });
  }
  if (matched.length === 0) {
    const [only] = auth.hashes;
    const message =
      auth.hashes.length === 1 && only !== undefined
        ? `provider package doesn't match the expected checksum ${JSON.stringify(only.text)}`
        : "provider package doesn't match the any of the expected checksums";
    throw sourceError(SourceErrorCode.CHECKSUM_MISMATCH, message, { ...ctx, expected: auth.hashes.map((h) => h.text).join(', '), found: got.zh.text });
  }
  return { hashes: matched, ...(zipHashes === undefined ? {} : { zipHashes }) };
}

function locationContext(meta: PackageMeta): { url?: string; file?: string } {
  const loc = meta.location;
  return loc.kind === 'http' ? { url: loc.url } : { file: loc.path };
}

/**
 * Fetches and authenticates the package `meta` describes; see the module
 * comment. A local directory is returned as it is (the installer links or
 * hashes it).
 *
 * @throws {ProvkitError} `CHECKSUM_MISMATCH`, the `NET_*` codes of the
 *   download, `ABORTED` ("provider download was interrupted"), `IO`,
 *   `USAGE` (missing `destPath`/`http`), each naming provider, version,
 *   platform and URL or file.
 */
export async function fetchPackage(meta: PackageMeta, options: FetchOptions = {}): Promise<FetchedPackage> {
  const ctx = { provider: meta.provider, version: meta.version, platform: meta.platform, ...locationContext(meta) };
  const loc = meta.location;
  if (loc.kind === 'local-dir') {
    return { kind: 'dir', path: loc.path, hashes: [...meta.reportedHashes], label: 'unauthenticated', warnings: [...meta.warnings] };
  }
  const plainHashZip = options.hashZip ?? hashZipPackage;
  let zh: ZhStream | undefined;
  let verified: Verified | undefined;
  let path: string;
  let size: number;
  let from: string;
  // Known hashes make streaming pointless (the download is still checked against the zh:).
  const expected = expectedZh(meta);
  const stored = expected && (await options.hashStore?.get(expected));
  // At most one streaming job per attempt (a restarted download starts a new one).
  let stream: ZipStream | undefined;
  let streamed: Promise<ZipPackageHashes> | undefined;
  const startStream = (): Transform[] => {
    stream?.abort();
    stream = stored ? undefined : options.streamZip?.();
    return stream ? [stream.transform] : [];
  };
  /** The streamed job's result for the written file (once), else the plain hasher. */
  const hashZip = (p: string): Promise<ZipPackageHashes> => {
    if (!stream) return plainHashZip(p);
    streamed ??= stream.finish(p, zh?.result().zh);
    return streamed;
  };
  try {
    if (loc.kind === 'http') {
      if (options.http === undefined || options.destPath === undefined) {
        throw sourceError(ErrorCode.USAGE, 'fetchPackage needs an http client and a destination path for a remote package', ctx);
      }
      const res = await options.http.download(loc.url, options.destPath, {
        ...(options.signal === undefined ? {} : { signal: options.signal }),
        ...(options.events === undefined ? {} : { events: options.events }),
        transforms: () => [(zh = new ZhStream()), ...startStream()],
        verify: async (tmp, info) => {
          const got = hashed(zh);
          verified = await authenticateArchive(meta, tmp, { zh: got.zh, size: info.size }, hashZip);
        },
      });
      path = res.path;
      size = res.size;
      from = res.url;
    } else if (options.destPath === undefined) {
      zh = new ZhStream();
      await pipeline(createReadStream(loc.path), zh, async (source: AsyncIterable<Buffer>) => {
        for await (const _ of source) {
          // Only the hash is wanted.
        }
      });
      verified = await authenticateArchive(meta, loc.path, hashed(zh), hashZip);
      path = loc.path;
      size = hashed(zh).size;
      from = loc.path;
    } else {
      const dest = options.destPath;
      await mkdir(dirname(dest), { recursive: true });
      const tmp = tempPathFor(dest);
      try {
        zh = new ZhStream();
        await pipeline([createReadStream(loc.path), zh, ...startStream(), createWriteStream(tmp, { flags: 'wx', mode: 0o644 })]);
        verified = await authenticateArchive(meta, tmp, hashed(zh), hashZip);
        await rename(tmp, dest);
      } catch (err) {
        await rm(tmp, { force: true });
        throw err;
      }
      path = dest;
      size = hashed(zh).size;
      from = loc.path;
    }
    if (stored && stored.zh.text === hashed(zh).zh.text) {
      // Authenticated against the registry's zh:, which is the stored one.
      verified = { ...verified!, zipHashes: stored };
    } else {
      // The streamed hashes are wanted whatever authentication needed.
      if (stream && !streamed) verified = { ...verified!, zipHashes: await hashZip(path) };
      if (verified?.zipHashes) await options.hashStore?.put(verified.zipHashes);
    }
  } catch (err) {
    stream?.abort();
    if (isProvkitError(err, ErrorCode.ABORTED)) {
      throw sourceError(ErrorCode.ABORTED, 'provider download was interrupted', { ...ctx, cause: err });
    }
    if (err instanceof ProvkitError) throw withContext(err, ctx);
    const code = systemErrorCode(err);
    throw sourceError(code === 'ENOENT' ? ErrorCode.NOT_FOUND : ErrorCode.IO, `${loc.kind === 'http' ? loc.url : loc.path}: ${String(err)}`, {
      ...ctx,
      cause: err,
    });
  }
  const got = hashed(zh);
  const hashes: TrustedHash[] = [...meta.reportedHashes, ...(verified?.hashes ?? [])];
  const auth = meta.authentication;
  const keyId = auth?.kind === 'registry' && auth.signature.kind === 'signed' ? auth.signature.keyId : undefined;
  return {
    kind: 'archive',
    path,
    zh: got.zh,
    size,
    from,
    hashes,
    label: authenticationLabel(hashes),
    ...(keyId === undefined ? {} : { keyId }),
    ...(verified?.zipHashes === undefined ? {} : { zipHashes: verified.zipHashes }),
    warnings: [...meta.warnings],
  };
}

/**
 * The `zh:` a registry vouches for before any download (its SHA256SUMS line,
 * whose signature `packageMeta` already checked; the download would have to
 * match it), or undefined for other sources.
 */
export function expectedZh(meta: PackageMeta): Hash | undefined {
  const auth = meta.authentication;
  return auth?.kind === 'registry' ? makeHash('zh:', auth.sha256) : undefined;
}

/**
 * A registry package known by its hashes instead of its bytes: what
 * {@link fetchPackage} would return, for `stored` hashes of the archive whose
 * `zh:` is {@link expectedZh} (see hashing/store.ts for why that is sound).
 * The `zh:` counts as verified locally: it was, when the store was filled.
 */
export function storedArchive(meta: PackageMeta, stored: ZipPackageHashes): FetchedArchive {
  const auth = meta.authentication;
  const zh = expectedZh(meta);
  if (auth?.kind !== 'registry' || zh === undefined || zh.text !== stored.zh.text) {
    throw new ProvkitError(ErrorCode.IO, 'internal: stored hashes used for a package without a matching registry checksum');
  }
  const hashes: TrustedHash[] = [...meta.reportedHashes, { hash: zh, trust: { kind: 'verified-locally' }, platform: meta.platform }];
  const keyId = auth.signature.kind === 'signed' ? auth.signature.keyId : undefined;
  return {
    kind: 'archive',
    path: stored.path,
    zh,
    size: auth.packageSize ?? 0,
    from: stored.path,
    hashes,
    label: authenticationLabel(hashes),
    ...(keyId === undefined ? {} : { keyId }),
    zipHashes: stored,
    stored: true,
    warnings: [...meta.warnings],
  };
}

function hashed(zh: ZhStream | undefined): { zh: Hash; size: number } {
  if (zh === undefined) throw new ProvkitError(ErrorCode.IO, 'internal: the archive was not hashed');
  return zh.result();
}
