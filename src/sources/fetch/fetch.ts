/**
 * Fetching a package any source described, and authenticating it as its
 * {@link PackageMeta.authentication} demands (docs/reference.md §4.1 items 56 and 58,
 * §4.3 item 69, §5.3).
 *
 * Verify-then-commit: the archive is streamed (download or local copy)
 * through the fetch's hashing stages (strategy.ts `AttemptHashing`) into a temporary file beside the
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
 * - the archive's hashes (`FetchedArchive.zipHashes`, fetched.ts) are computed
 *   from the temporary file the bytes were streamed into (its name is random
 *   and created exclusively, see net/download.ts `tempPathFor`), before it is
 *   committed, and their `zh:` must be the one the stream computed;
 * - what comes back names the package it was fetched for
 *   (`FetchedArchive.identity`); whoever records its hashes checks that
 *   with `checkFetchedFor` (fetched.ts).
 *
 * The steps, as OpenTofu's providercache splits them (`installFromHTTPURL`
 * hands its temporary file to `installFromLocalArchive`), one module each:
 * http.ts downloads to a temporary file, copy.ts copies a local archive to
 * one, archive.ts authenticates and hashes a complete local archive (that
 * temporary file, or a filesystem mirror's archive read in place);
 * authenticate.ts holds the rules (docs/reference.md §4.1 items 56 and 58,
 * §4.3 item 69, §5.3). How the archive is hashed, and so which result comes
 * back (fetched.ts), is one `ArchiveHashing` value (strategy.ts).
 */
import { mkdir, open, rm } from 'node:fs/promises';
import { dirname } from 'node:path';

import {
  ErrorCode,
  fileError,
  isProvkitError,
  ProvkitError,
  systemErrorCode,
  systemErrorPath,
  systemErrorSyscall,
  systemErrorText,
} from '../../errors.js';
import { eitherSignal, redactURL, type HttpClient, type NetEvents } from '../../net/index.js';
import { dispositionsOf } from '../provenance.js';
import { authenticationLabel, sourceError, withContext, type PackageMeta, type TrustedHash } from '../source.js';
import {
  authenticatedMeta,
  isPending,
  readInPlace,
  type CheckedArchive,
  type FetchJob,
  type PendingMeta,
} from './archive.js';
import { fetchContext } from './authenticate.js';
import { copyArchive } from './copy.js';
import { expectedZh, signingKeyOf, type FetchedForms, type PackageIdentity } from './fetched.js';
import { downloadArchive } from './http.js';
import { AttemptHashing, type ArchiveHashing, type FetchedWith } from './strategy.js';

/** How {@link fetchPackage} fetches: where to, over which client, hashed how, under which signal, with which events. */
export interface FetchOptions<H extends ArchiveHashing = ArchiveHashing> {
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
  /** How the archive is hashed (strategy.ts); `{ kind: 'zip-hashes' }` in this thread when omitted. */
  readonly hashing?: H;
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
export async function fetchPackage<K extends ArchiveHashing['kind'] = 'zip-hashes'>(
  meta: PackageMeta,
  options: FetchOptions<Extract<ArchiveHashing, { readonly kind: K }>> = {},
): Promise<FetchedWith<K>> {
  return (await fetchAny(
    meta,
    { provider: meta.provider, version: meta.version, platform: meta.platform },
    options,
  )) as FetchedWith<K>;
}

/**
 * A package's archive fetched before its source has authenticated it (a registry's download metadata named the
 * archive; its SHA256SUMS and signature are still on their way), so that its bytes flow meanwhile.
 */
export interface PackageAhead {
  /** The package. */
  readonly identity: PackageIdentity;
  /** The archive's URL as the source named it (`PackageMetaHints.archiveURL`), not yet authenticated. */
  readonly url: string;
  /**
   * The source's answer for the package (`Source.packageMeta`): resolves once it authenticated the package, rejects
   * with its error when it did not. Its location must be {@link url}.
   */
  readonly authenticated: Promise<PackageMeta>;
}

/**
 * {@link fetchPackage} of an archive whose package its source has not authenticated yet. The bytes are downloaded
 * and hashed as they arrive, but nothing is believed of them before `ahead.authenticated` resolves (archive.ts
 * `authenticatedMeta`, the one gate): the archive is checked against the authenticated metadata, then returned as
 * {@link fetchPackage} returns it. When the authentication fails, the download (running or not yet begun) is
 * aborted, its temporary file removed, and the fetch rejects with the source's own error, exactly as the source's
 * `packageMeta` would have, as if no byte had been asked for. A download that fails while the authentication is
 * pending waits for it: a package the source refuses fails with the source's error, whatever its bytes did.
 */
export async function fetchPackageAhead<K extends ArchiveHashing['kind'] = 'zip-hashes'>(
  ahead: PackageAhead,
  options: FetchOptions<Extract<ArchiveHashing, { readonly kind: K }>> = {},
): Promise<FetchedWith<K>> {
  // The source's failure ends the download at once: an abort of the fetch, whose failure then becomes the source's.
  const refused = new AbortController();
  const failure = ahead.authenticated.then(
    () => undefined,
    (err: unknown) => {
      refused.abort();
      return { err };
    },
  );
  const signal = eitherSignal(options.signal, refused.signal);
  try {
    return (await fetchAny({ kind: 'pending', url: ahead.url, authenticated: ahead.authenticated }, ahead.identity, {
      ...options,
      signal,
    })) as FetchedWith<K>;
  } catch (err) {
    const refusal = await failure;
    if (refusal !== undefined) throw refusal.err;
    throw err;
  }
}

async function fetchAny(
  meta: PackageMeta | PendingMeta,
  identity: PackageIdentity,
  options: FetchOptions,
): Promise<FetchedWith<ArchiveHashing['kind']>> {
  const pending = isPending(meta);
  const ctx = pending ? { ...identity, url: redactURL(meta.url) } : fetchContext(meta);
  const loc: PackageMeta['location'] = pending ? { kind: 'http', url: meta.url } : meta.location;
  if (loc.kind === 'local-dir' && !pending) {
    return {
      kind: 'dir',
      identity,
      path: loc.path,
      hashes: [...meta.reportedHashes],
      label: 'unauthenticated',
      warnings: [...meta.warnings],
    };
  }
  const hashing: ArchiveHashing = options.hashing ?? { kind: 'zip-hashes' };
  const store = hashing.kind === 'zip-hashes' ? hashing.store : undefined;
  // Known hashes make streaming pointless (the download is still checked against the zh:). Not for a fetch begun
  // ahead: its zh: is not known (authenticated) yet.
  const expected = pending ? undefined : expectedZh(meta);
  const stored = (expected && (await store?.get(expected))) || undefined;
  const job: FetchJob = {
    meta,
    hashing,
    stored,
    attempt: new AttemptHashing(hashing, stored),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    ...(options.events === undefined ? {} : { events: options.events }),
    temps: [],
  };
  let claimed: string | undefined;
  let checked: CheckedArchive;
  let authentic: PackageMeta;
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
      checked = await downloadArchive(job, loc, options.http, options.destPath);
    } else if (options.destPath === undefined) {
      checked = await readInPlace(job, loc.path);
    } else {
      claimed = await claimDestination(options.destPath);
      checked = await copyArchive(job, loc.path, options.destPath);
    }
    // Only results computed here go to the store (a store hit came from it),
    // with the platform they were fetched for (a hint, hashing/store.ts).
    // The check above passed, so the metadata is authenticated (archive.ts `authenticatedMeta`).
    authentic = await authenticatedMeta(job);
    const { zipHashes } = checked;
    if (zipHashes !== undefined && zipHashes !== stored)
      await store?.put(
        zipHashes,
        identity.platform.toString(),
        dispositionsOf([...authentic.reportedHashes, ...checked.verified], zipHashes.zh),
      );
  } catch (err) {
    job.attempt.abort();
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
      const shown = errPath !== undefined && !job.temps.includes(errPath) ? errPath : (options.destPath ?? errPath);
      throw withContext(fileError(err, 'cannot write', shown), ctx);
    }
    throw sourceError(code === 'ENOENT' ? ErrorCode.NOT_FOUND : ErrorCode.IO, `${source}: ${systemErrorText(err)}`, {
      ...ctx,
      cause: err,
    });
  }
  // What every kind of fetched file shares, with the hashes it carries.
  const common = (hashes: readonly TrustedHash[]): Omit<FetchedForms, 'kind' | 'forms'> => ({
    identity,
    path: checked.path,
    size: checked.size,
    from: checked.from,
    hashes,
    label: authenticationLabel(hashes),
    warnings: [...authentic.warnings],
  });
  if (checked.forms !== undefined)
    return { kind: 'archive-forms', ...common([...authentic.reportedHashes]), forms: checked.forms };
  if (checked.zh === undefined) throw new ProvkitError(ErrorCode.IO, 'internal: the archive was not hashed');
  const keyId = signingKeyOf(authentic);
  const bytes = {
    ...common([...authentic.reportedHashes, ...checked.verified]),
    zh: checked.zh,
    ...(keyId === undefined ? {} : { keyId }),
  };
  if (hashing.kind === 'zh-only') return { kind: 'archive-bytes', ...bytes };
  if (checked.zipHashes === undefined) throw new ProvkitError(ErrorCode.IO, 'internal: the archive was not hashed');
  return { kind: 'archive', ...bytes, zipHashes: checked.zipHashes };
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
