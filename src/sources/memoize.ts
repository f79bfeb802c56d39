/**
 * A source that asks its underlying source at most once per question (spec
 * docs/reference.md §4.4 item 73; OpenTofu `memoize_source.go`): per provider for
 * `availableVersions`, per (provider, version, platform) for `packageMeta`.
 *
 * - Errors are cached like results (a provider that is not found stays not
 *   found for the run), except `ABORTED`: an aborted call is forgotten, so a
 *   caller with a live signal asks again.
 * - Concurrent identical calls share one in-flight request. The first
 *   caller's signal governs it; a waiter whose own signal is still live
 *   retries when that request ends `ABORTED`.
 * - Versions are keyed by their full text (metadata included), as Go's `==`.
 */
import type { Platform, ProviderAddress, Version } from '../addresses/index.js';
import { ErrorCode, isProvkitError } from '../errors.js';
import type { AvailableVersions, PackageMeta, PackageMetaHints, Source } from './source.js';

/** See the module comment. */
export class MemoizeSource implements Source {
  private readonly versions = new Map<string, Promise<AvailableVersions>>();
  private readonly metas = new Map<string, Promise<PackageMeta>>();

  /**
   * Memoises `underlying`: each distinct question is asked of it once, its answer (or failure, except `ABORTED`) shared
   * by every later caller.
   */
  constructor(
    /** The source asked, once per question. */
    readonly underlying: Source,
  ) {}

  /** {@inheritDoc Source.forDisplay} */
  forDisplay(provider?: ProviderAddress): string {
    return this.underlying.forDisplay(provider);
  }

  /** {@inheritDoc Source.availableVersions} */
  availableVersions(provider: ProviderAddress, signal?: AbortSignal): Promise<AvailableVersions> {
    return memo(this.versions, provider.toComparisonString(), signal, (s) =>
      this.underlying.availableVersions(provider, s),
    );
  }

  /** {@inheritDoc Source.packageMeta} */
  packageMeta(
    provider: ProviderAddress,
    version: Version,
    platform: Platform,
    signal?: AbortSignal,
    hints?: PackageMetaHints,
  ): Promise<PackageMeta> {
    const key = `${provider.toComparisonString()} ${version.toString()} ${platform.toString()}`;
    // The hints of the caller whose call asks the underlying source (later callers share its answer).
    return memo(this.metas, key, signal, (s) => this.underlying.packageMeta(provider, version, platform, s, hints));
  }

  /** {@inheritDoc Source.publishedPlatforms} */
  publishedPlatforms(
    provider: ProviderAddress,
    version: Version,
    signal?: AbortSignal,
  ): Promise<Platform[] | undefined> {
    return this.underlying.publishedPlatforms
      ? this.underlying.publishedPlatforms(provider, version, signal)
      : Promise.resolve(undefined);
  }

  /** {@inheritDoc Source.localPlatforms} */
  get localPlatforms(): ((provider: ProviderAddress, version: Version) => Promise<Platform[]>) | undefined {
    const u = this.underlying;
    return u.localPlatforms ? (provider, version) => u.localPlatforms!(provider, version) : undefined;
  }
}

async function memo<T>(
  cache: Map<string, Promise<T>>,
  key: string,
  signal: AbortSignal | undefined,
  call: (s: AbortSignal | undefined) => Promise<T>,
): Promise<T> {
  for (;;) {
    let p = cache.get(key);
    const owner = p === undefined;
    if (p === undefined) {
      p = call(signal);
      cache.set(key, p);
    }
    try {
      // eslint-disable-next-line no-await-in-loop -- a retry happens only after a shared call was aborted
      return await p;
    } catch (err) {
      if (!isProvkitError(err, ErrorCode.ABORTED)) throw err;
      if (cache.get(key) === p) cache.delete(key);
      if (owner || signal?.aborted) throw err;
    }
  }
}
