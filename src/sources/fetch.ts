/**
 * Fetching a package any source described, and authenticating it as its
 * {@link PackageMeta.authentication} demands (docs/reference.md §4.1 items 56 and 58,
 * §4.3 item 69, §5.3).
 *
 * Verify-then-commit: the archive is streamed (download or local copy)
 * through a `zh:` hasher ({@link ZhStream}) into a temporary file beside the
 * destination; the authentication runs on that file; only then is it renamed
 * into place. On any failure nothing is left at the destination and the
 * temporary file is removed.
 *
 * One package, one set of bytes, one set of hashes (docs/reliability.md: two packages
 * whose archives share a file name, e.g. `hashicorp/github` and
 * `integrations/github` 4.4.0, once shared a destination, and one was hashed
 * and recorded for the other):
 * - the destination is claimed exclusively (created with `wx`) before any
 *   byte is fetched: a destination that exists, another fetch's included,
 *   is refused, never overwritten;
 * - the archive's hashes ({@link FetchedArchive.zipHashes}) are computed
 *   from the temporary file the bytes were streamed into (its name is random
 *   and created exclusively, see net/download.ts `tempPathFor`), before it is
 *   committed, and their `zh:` must be the one the stream computed;
 * - what comes back names the package it was fetched for
 *   ({@link FetchedArchive.identity}); whoever records its hashes checks that
 *   with {@link checkFetchedFor}.
 *
 * Authentication after the fetch:
 * - registry: the `packages` size (when given) and the archive's SHA-256
 *   against `shasum` (`archive has incorrect checksum zh:… (expected zh:…)`).
 *   The SHA256SUMS line and the signature were already checked when the
 *   metadata was fetched (see `registry/`), so a bad signature fails before
 *   any download; the reference checks it last, after the archive, so when a
 *   package has *both* a bad signature and a bad archive, provkit reports the
 *   signature and the reference the archive.
 * - OCI blob: the layer's size and digest (`provider package does not match
 *   digest sha256:…`, OpenTofu `fetchOCIBlobToTemporaryFile`); the download
 *   carries the registry credential its location names and reads at most
 *   the layer's size;
 * - network mirror: at least one listed `zh:` or `h1:` must match the archive;
 *   `h1:` is compared with the zip form (`dirhash.HashZip`, as the reference)
 *   and, as a deliberate extension, also with the extracted form (what a
 *   registry's `packages` h1 and lock files hold), so mirrors that copied
 *   those hashes work. Matching hashes become `verified-locally`.
 */
import { createReadStream, createWriteStream, type Stats } from 'node:fs';
import { mkdir, open, rename, rm, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

import type { Platform, ProviderAddress, Version } from '../addresses/index.js';
import {
  ErrorCode,
  fileError,
  isProvkitError,
  ProvkitError,
  renameFileInError,
  systemErrorCode,
  systemErrorPath,
  systemErrorSyscall,
  systemErrorText,
} from '../errors.js';
import {
  hashZipPackage,
  zhOfPackage,
  type HashPool,
  type HashStore,
  makeHash,
  ZhStream,
  type Hash,
  type ZipForms,
  type ZipPackageHashes,
  type ZipStream,
} from '../hashing/index.js';
import { redactURL, tempPathFor, type HttpClient, type NetEvents } from '../net/index.js';
import { SourceErrorCode } from './codes.js';
import { authenticationLabel, sourceError, withContext, type PackageMeta, type TrustedHash } from './source.js';

export interface FetchOptions {
  /**
   * Where the archive goes. Required for http locations; for a local archive,
   * omit it to authenticate the file in place (no copy). It must not exist:
   * it is created exclusively (see the module comment), so give every fetch
   * a path of its own (a fresh `mkdtemp` directory per package).
   */
  readonly destPath?: string;
  /** Required for http locations. */
  readonly http?: HttpClient;
  readonly signal?: AbortSignal;
  readonly events?: NetEvents;
  /**
   * Hashes a zip (default `hashZipPackage`; pass a worker pool's). `knownZh`:
   * the `zh:` of these very bytes, computed as they were written to the
   * fetch's own file (not computed again, as a streaming job's `finish` is
   * given it).
   */
  readonly hashZip?: (path: string, knownZh?: Hash) => Promise<ZipPackageHashes>;
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
  /**
   * Both `h1:` forms of a zip without its `zh:` (a pool's `hashZipForms`).
   * A local archive read in place (no `destPath`) that has nothing to
   * authenticate (a filesystem mirror's) and no `hashStore` to go into is
   * read with it: the result is a {@link FetchedForms}, and no SHA-256 pass
   * is spent on a `zh:` nobody records (a `lock` from a filesystem mirror
   * without a hash store; issue 13). Every other fetch is as without it.
   */
  readonly hashZipForms?: (path: string) => Promise<ZipForms>;
  /**
   * `false`: the caller uses the archive's bytes and `zh:` only (`mirror
   * oci://` publishes them as they are), so its `h1:` forms are not computed
   * (an inflate and a SHA-256 of everything it holds) unless authentication
   * needs them (a network mirror that lists only `h1:`). The result is a
   * {@link FetchedBytes}. Authentication is the same.
   */
  readonly forms?: false;
}

/**
 * A local copy's bytes as download progress (`NetEvents.onProgress`, at
 * most every 100 ms and at the end): a filesystem mirror's archive copied
 * into a mirror shows on the progress display as a download does. None
 * without a progress listener.
 */
function copyProgress(path: string, events: NetEvents | undefined): Transform[] {
  if (events?.onProgress === undefined) return [];
  let received = 0;
  let last = 0;
  let total: number | undefined;
  const report = (): void => events.onProgress?.({ url: path, received, total });
  return [
    new Transform({
      construct(cb) {
        stat(path).then(
          (s) => {
            total = s.size;
            cb();
          },
          () => cb(),
        );
      },
      transform(chunk: Buffer, _enc, cb) {
        received += chunk.length;
        const now = Date.now();
        if (now - last >= 100) {
          last = now;
          report();
        }
        cb(null, chunk);
      },
      flush(cb) {
        report();
        cb();
      },
    }),
  ];
}

/**
 * The hashing options of a fetch that hashes with a worker pool: a whole
 * archive with the pool's `hashZip`, a download as it arrives with its
 * `streamZip`. One definition for every command that fetches packages.
 */
export function poolHashing(pool: HashPool): Required<Pick<FetchOptions, 'hashZip' | 'streamZip'>> {
  return { hashZip: (path, knownZh) => pool.hashZip(path, knownZh), streamZip: () => pool.streamZip() };
}

/** The package a fetch was for. */
export interface PackageIdentity {
  readonly provider: ProviderAddress;
  readonly version: Version;
  readonly platform: Platform;
}

/** A fetched, authenticated archive. */
export interface FetchedArchive {
  readonly kind: 'archive';
  /** The package whose metadata this was fetched by (see {@link checkFetchedFor}). */
  readonly identity: PackageIdentity;
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
  /**
   * The zip's hashes (`zh:` and both `h1:` forms), computed from the bytes
   * this fetch wrote before they were committed to `path` (or, for a store
   * hit, the store's entry for {@link zh}); their `zh:` is {@link zh}.
   */
  readonly zipHashes: ZipPackageHashes;
  /**
   * True when nothing was fetched: the registry's signed `zh:` named an
   * archive whose hashes a hash store already held ({@link storedArchive});
   * `path` is then the store entry, not an archive.
   */
  readonly stored?: boolean;
  readonly warnings: readonly string[];
}

/**
 * A local archive read in place for its `h1:` forms alone
 * ({@link FetchOptions.hashZipForms}): nothing to authenticate, so no
 * `zh:` was computed. Checked as a {@link FetchedArchive} is (the same file
 * before and after the read).
 */
export type FetchedForms = Omit<FetchedArchive, 'kind' | 'zh' | 'zipHashes' | 'keyId' | 'stored'> & {
  readonly kind: 'archive-forms';
  readonly forms: ZipForms;
};

/** A fetched, authenticated archive whose `h1:` forms were not asked for ({@link FetchOptions.forms}). */
export type FetchedBytes = Omit<FetchedArchive, 'kind' | 'zipHashes'> & { readonly kind: 'archive-bytes' };

/** An unpacked directory from a filesystem mirror: not copied, nothing to authenticate. */
export interface FetchedDirectory {
  readonly kind: 'dir';
  readonly identity: PackageIdentity;
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
      throw sourceError(
        SourceErrorCode.CHECKSUM_MISMATCH,
        `archive has incorrect checksum ${got.zh.text} (expected zh:${auth.sha256})`,
        {
          ...ctx,
          expected: `zh:${auth.sha256}`,
          found: got.zh.text,
        },
      );
    }
    return { hashes: [local] };
  }
  if (auth.kind === 'oci-blob') {
    if (got.size !== auth.size) {
      throw sourceError(
        SourceErrorCode.CHECKSUM_MISMATCH,
        `fetching provider package blob ${auth.digest}: incorrect response size: expected ${auth.size} bytes, but got ${got.size} bytes`,
        {
          ...ctx,
          expected: String(auth.size),
          found: String(got.size),
        },
      );
    }
    if (`sha256:${got.zh.value}` !== auth.digest) {
      throw sourceError(
        SourceErrorCode.CHECKSUM_MISMATCH,
        `fetching provider package blob ${auth.digest}: provider package does not match digest ${auth.digest}`,
        {
          ...ctx,
          expected: `zh:${auth.digest.slice('sha256:'.length)}`,
          found: got.zh.text,
        },
      );
    }
    return { hashes: [local] };
  }
  // Network mirror hashes.
  const matched: TrustedHash[] = [];
  let zipHashes: ZipPackageHashes | undefined;
  for (const h of auth.hashes) {
    if (h.scheme === 'zh:') {
      if (h.text === got.zh.text)
        matched.push({ hash: h, trust: { kind: 'verified-locally' }, platform: meta.platform });
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
    throw sourceError(SourceErrorCode.CHECKSUM_MISMATCH, message, {
      ...ctx,
      expected: auth.hashes.map((h) => h.text).join(', '),
      found: got.zh.text,
    });
  }
  return { hashes: matched, ...(zipHashes === undefined ? {} : { zipHashes }) };
}

function locationContext(meta: PackageMeta): { url?: string; file?: string } {
  const loc = meta.location;
  // Never a password in output: a download URL may carry userinfo (net/url.ts `splitUserinfo`).
  return loc.kind === 'http' ? { url: redactURL(loc.url) } : { file: loc.path };
}

/**
 * Fetches and authenticates the package `meta` describes; see the module
 * comment. A local directory is returned as it is (the installer links or
 * hashes it).
 *
 * @throws {ProvkitError} `CHECKSUM_MISMATCH`, the `NET_*` codes of the
 *   download, `ABORTED` ("provider download was interrupted"), `IO` (also:
 *   `destPath` exists), `USAGE` (missing `destPath`/`http`), each naming
 *   provider, version, platform and URL or file.
 */
export async function fetchPackage(
  meta: PackageMeta,
  options?: FetchOptions & { readonly hashZipForms?: undefined; readonly forms?: undefined },
): Promise<FetchedPackage>;
export async function fetchPackage(
  meta: PackageMeta,
  options: FetchOptions & { readonly hashZipForms?: undefined; readonly forms: false },
): Promise<FetchedBytes | FetchedDirectory>;
export async function fetchPackage(
  meta: PackageMeta,
  options: FetchOptions & { readonly forms?: undefined },
): Promise<FetchedPackage | FetchedForms>;
export async function fetchPackage(
  meta: PackageMeta,
  options: FetchOptions = {},
): Promise<FetchedPackage | FetchedForms | FetchedBytes> {
  const ctx = { provider: meta.provider, version: meta.version, platform: meta.platform, ...locationContext(meta) };
  const identity: PackageIdentity = { provider: meta.provider, version: meta.version, platform: meta.platform };
  const loc = meta.location;
  if (loc.kind === 'local-dir') {
    return {
      kind: 'dir',
      identity,
      path: loc.path,
      hashes: [...meta.reportedHashes],
      label: 'unauthenticated',
      warnings: [...meta.warnings],
    };
  }
  const plainHashZip =
    options.hashZip ?? ((p: string, knownZh?: Hash) => hashZipPackage(p, knownZh ? { knownZh } : {}));
  let zh: ZhStream | undefined;
  /** A local archive read in place: its `zh:` and size, from the hashing job. */
  let inPlace: { zh: Hash; size: number } | undefined;
  let verified: Verified | undefined;
  let zipHashes: ZipPackageHashes | undefined;
  /** The forms alone, read in place for a caller that records no `zh:` (FetchOptions.hashZipForms). */
  let formsOnly: ZipForms | undefined;
  let path: string;
  let size: number;
  let from: string;
  // Known hashes make streaming pointless (the download is still checked against the zh:).
  const expected = expectedZh(meta);
  const stored = expected && (await options.hashStore?.get(expected));
  // At most one streaming job per attempt (a restarted download starts a new one).
  let stream: ZipStream | undefined;
  let streamed: Promise<ZipPackageHashes> | undefined;
  /**
   * A new attempt's stages before the file: the streaming job's pass-through
   * (unless its worker writes the file, see `writeFile` below) or, with no
   * job, a `zh:` hasher in this thread.
   */
  const startStream = (writerAllowed: boolean): Transform[] => {
    stream?.abort();
    zh = undefined;
    stream = stored ? undefined : options.streamZip?.();
    if (!stream) return [(zh = new ZhStream())];
    return writerAllowed && stream.writes ? [] : [stream.transform];
  };
  /**
   * The `zh:` and size of the bytes this attempt wrote: the streaming job's
   * worker computed them (it saw every byte), else the hasher in this thread.
   */
  const digest = async (): Promise<{ zh: Hash; size: number }> => (stream ? stream.digest() : hashed(zh));
  let got: { zh: Hash; size: number } | undefined;
  /** The streamed job's result for the written file (once), else the plain hasher. */
  const hashZip = (p: string): Promise<ZipPackageHashes> => {
    if (!stream) return plainHashZip(p, got?.zh);
    streamed ??= stream.finish(p, got?.zh);
    return streamed;
  };
  /**
   * Authenticates the complete file `p` (the temporary file, or a local
   * archive read in place) and hashes it, before anything is committed.
   */
  const check = async (p: string, got: { zh: Hash; size: number }): Promise<void> => {
    verified = await authenticateArchive(meta, p, got, hashZip);
    zipHashes =
      stored && stored.zh.text === got.zh.text
        ? stored
        : (verified.zipHashes ?? (options.forms === false ? undefined : await hashZip(p)));
    if (zipHashes !== undefined && zipHashes.zh.text !== got.zh.text) {
      // The file is not (or no longer) the bytes the stream hashed: a local
      // archive changed while it was read, or a bug.
      throw sourceError(
        ErrorCode.IO,
        `${p} changed while it was being read: its zh: is ${zipHashes.zh.text}, the bytes read had ${got.zh.text}`,
        {
          ...ctx,
          expected: got.zh.text,
          found: zipHashes.zh.text,
        },
      );
    }
  };
  let claimed: string | undefined;
  /** Temporary copies (download, local copy): named by the source in any error, never by themselves. */
  const copies: string[] = [];
  try {
    if (loc.kind === 'http') {
      if (options.http === undefined || options.destPath === undefined) {
        throw sourceError(
          ErrorCode.USAGE,
          'fetchPackage needs an http client and a destination path for a remote package',
          ctx,
        );
      }
      claimed = await claimDestination(options.destPath);
      const credential = loc.credential?.();
      const res = await options.http.download(loc.url, options.destPath, {
        ...(credential === undefined ? {} : { credential }),
        ...(loc.headers === undefined ? {} : { headers: loc.headers }),
        // An OCI blob is never more than its layer's size (OpenTofu reads through an io.LimitReader).
        ...(meta.authentication?.kind === 'oci-blob' ? { maxBytes: meta.authentication.size } : {}),
        ...(options.signal === undefined ? {} : { signal: options.signal }),
        ...(options.events === undefined ? {} : { events: options.events }),
        transforms: () => startStream(true),
        // The streaming job's worker writes the file it hashes (no copy of the bytes between threads).
        writeFile: (tmp, offset, mode) => (stream?.writes ? stream.writeFile(tmp, offset, mode) : undefined),
        verify: async (tmp, info) => {
          copies.push(tmp);
          try {
            got = await digest();
            await check(tmp, { zh: got.zh, size: info.size });
          } catch (err) {
            // Named by the URL, never by the temporary copy.
            throw renameFileInError(err, tmp, loc.url);
          }
        },
      });
      path = res.path;
      size = res.size;
      from = res.url;
    } else if (options.destPath === undefined) {
      // Read in place, no copy: one pass over the file gives what the caller
      // asked for, its `zh:` and both `h1:` forms (hashZipPackage), its
      // forms alone (FetchOptions.hashZipForms: nothing needs the `zh:`, no
      // authentication, no store) or its `zh:` alone (FetchOptions.forms).
      // The file must be the same before and after (size, times, inode),
      // else the hashes might describe two different contents.
      options.signal?.throwIfAborted();
      const before = await stat(loc.path);
      const formsOf =
        meta.authentication === undefined && options.hashStore === undefined ? options.hashZipForms : undefined;
      const zhAlone = !formsOf && options.forms === false;
      const hashes = formsOf || zhAlone ? undefined : await plainHashZip(loc.path);
      formsOnly = formsOf ? await formsOf(loc.path) : undefined;
      const zhOfBytes = zhAlone ? await zhOfPackage(loc.path) : undefined;
      const after = await stat(loc.path);
      if (!sameFile(before, after)) {
        throw sourceError(ErrorCode.IO, `${loc.path} changed while it was being read`, ctx);
      }
      options.signal?.throwIfAborted();
      if (hashes) {
        inPlace = { zh: hashes.zh, size: before.size };
        verified = await authenticateArchive(meta, loc.path, inPlace, () => Promise.resolve(hashes));
        zipHashes = stored && stored.zh.text === hashes.zh.text ? stored : hashes;
      } else if (zhOfBytes) {
        inPlace = { zh: zhOfBytes, size: before.size };
        verified = await authenticateArchive(meta, loc.path, inPlace, (p) => plainHashZip(p, zhOfBytes));
      }
      path = loc.path;
      size = before.size;
      from = loc.path;
    } else {
      const dest = options.destPath;
      claimed = await claimDestination(dest);
      const tmp = tempPathFor(dest);
      copies.push(tmp);
      const reader = createReadStream(loc.path);
      const writer = createWriteStream(tmp, { flags: 'wx', mode: 0o644 });
      try {
        try {
          await pipeline(
            [reader, ...copyProgress(loc.path, options.events), ...startStream(false), writer],
            options.signal === undefined ? {} : { signal: options.signal },
          );
        } catch (err) {
          // A full or read-only destination is not the source's fault: name the one that failed.
          if (writer.errored) throw fileError(writer.errored, 'cannot write', dest);
          if (reader.errored) throw fileError(reader.errored, 'cannot read', loc.path);
          throw err;
        }
        got = await digest();
        await check(tmp, got);
        await rename(tmp, dest);
      } catch (err) {
        await rm(tmp, { force: true });
        // Named by the source, never by the temporary copy.
        throw renameFileInError(err, tmp, loc.path);
      }
      path = dest;
      size = got.size;
      from = loc.path;
    }
    // Only results computed here go to the store (a store hit came from it),
    // with the platform they were fetched for (a hint, hashing/store.ts).
    if (zipHashes !== undefined && zipHashes !== stored)
      await options.hashStore?.put(zipHashes, meta.platform.toString());
  } catch (err) {
    stream?.abort();
    if (claimed !== undefined) await rm(claimed, { force: true });
    if (isProvkitError(err, ErrorCode.ABORTED) || options.signal?.aborted) {
      throw sourceError(ErrorCode.ABORTED, 'provider download was interrupted', { ...ctx, cause: err });
    }
    if (err instanceof ProvkitError) throw withContext(err, ctx);
    const code = systemErrorCode(err);
    // A system error about another file than the source (the destination, a
    // temporary copy: a full disk) names that file's final place, not the source.
    const errPath = systemErrorPath(err);
    const source = loc.kind === 'http' ? redactURL(loc.url) : loc.path;
    if (
      (errPath !== undefined && errPath !== (loc.kind === 'http' ? loc.url : loc.path)) ||
      (errPath === undefined && (systemErrorSyscall(err) === 'write' || systemErrorSyscall(err) === 'fsync'))
    ) {
      const shown = errPath !== undefined && !copies.includes(errPath) ? errPath : (options.destPath ?? errPath);
      throw withContext(fileError(err, 'cannot write', shown), ctx);
    }
    throw sourceError(code === 'ENOENT' ? ErrorCode.NOT_FOUND : ErrorCode.IO, `${source}: ${systemErrorText(err)}`, {
      ...ctx,
      cause: err,
    });
  }
  // What every kind of fetched file shares, with the hashes it carries.
  const common = (hashes: TrustedHash[]): Omit<FetchedForms, 'kind' | 'forms'> => ({
    identity,
    path,
    size,
    from,
    hashes,
    label: authenticationLabel(hashes),
    warnings: [...meta.warnings],
  });
  if (formsOnly !== undefined) return { kind: 'archive-forms', ...common([...meta.reportedHashes]), forms: formsOnly };
  const final = inPlace ?? got;
  if (final === undefined) throw new ProvkitError(ErrorCode.IO, 'internal: the archive was not hashed');
  const auth = meta.authentication;
  const keyId = auth?.kind === 'registry' && auth.signature.kind === 'signed' ? auth.signature.keyId : undefined;
  const bytes = {
    ...common([...meta.reportedHashes, ...(verified?.hashes ?? [])]),
    zh: final.zh,
    ...(keyId === undefined ? {} : { keyId }),
  };
  if (options.forms === false) return { kind: 'archive-bytes', ...bytes };
  return { kind: 'archive', ...bytes, zipHashes: zipHashes! };
}

/**
 * Creates `dest` exclusively (an empty file the fetch's rename replaces), so
 * that no two fetches ever share a destination; returns it.
 *
 * @throws {ProvkitError} `IO` when it exists.
 */
async function claimDestination(dest: string): Promise<string> {
  await mkdir(dirname(dest), { recursive: true, mode: 0o755 });
  try {
    await (await open(dest, 'wx', 0o644)).close();
  } catch (err) {
    if (systemErrorCode(err) === 'EEXIST') {
      throw new ProvkitError(
        ErrorCode.IO,
        `${dest} already exists: a package is only ever fetched to a new file of its own`,
        { file: dest, cause: err },
      );
    }
    throw err;
  }
  return dest;
}

/**
 * Checks that `fetched` is the package (provider, version, platform) whose
 * hashes the caller is about to record, and that its hashes are those of its
 * own bytes (the `zh:` they were computed for is the archive's). Call it
 * wherever a fetched package's hashes are recorded (a lock, an index, a
 * manifest): a mix-up then fails loudly instead of writing a wrong hash.
 *
 * @throws {ProvkitError} `IO` ("internal: …") on a mismatch.
 */
export function checkFetchedFor(
  fetched: FetchedPackage | FetchedForms | FetchedBytes,
  provider: ProviderAddress,
  version: Version,
  platform: Platform,
): void {
  const id = fetched.identity;
  const same = id.provider.equals(provider) && id.version.equals(version) && id.platform.equals(platform);
  const zhOk = fetched.kind !== 'archive' || fetched.zipHashes.zh.text === fetched.zh.text;
  if (same && zhOk) return;
  const what = `${provider.toString()} ${version.toString()} ${platform.toString()}`;
  throw new ProvkitError(
    ErrorCode.IO,
    same
      ? `internal: the hashes of ${what} were computed for other bytes (${fetched.kind === 'archive' ? `${fetched.zipHashes.zh.text}, not ${fetched.zh.text}` : ''})`
      : `internal: the package fetched for ${id.provider.toString()} ${id.version.toString()} ${id.platform.toString()} was about to be recorded for ${what}`,
    { provider: provider.toString(), version: version.toString(), platform: platform.toString(), file: fetched.path },
  );
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
    throw new ProvkitError(
      ErrorCode.IO,
      'internal: stored hashes used for a package without a matching registry checksum',
    );
  }
  const hashes: TrustedHash[] = [
    ...meta.reportedHashes,
    { hash: zh, trust: { kind: 'verified-locally' }, platform: meta.platform },
  ];
  const keyId = auth.signature.kind === 'signed' ? auth.signature.keyId : undefined;
  return {
    kind: 'archive',
    identity: { provider: meta.provider, version: meta.version, platform: meta.platform },
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

/** The same file, unchanged: inode, size and modification and change times. */
function sameFile(a: Stats, b: Stats): boolean {
  return a.ino === b.ino && a.dev === b.dev && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs;
}

function hashed(zh: ZhStream | undefined): { zh: Hash; size: number } {
  if (zh === undefined) throw new ProvkitError(ErrorCode.IO, 'internal: the archive was not hashed');
  return zh.result();
}
