/**
 * What the pull-through mirror knows of its origin registries: a provider's
 * versions and a package's verified metadata, asked of a {@link Source} (the
 * registry source: discovery, versions, download metadata, SHA256SUMS and
 * its signature, all checked before anything is returned;
 * sources/registry/registry-source.ts) and kept for a while.
 *
 * - **Versions** are kept `versionsTtlMs`. After that the next request asks
 *   again; when the origin cannot answer, the list kept is used and said to
 *   be stale (`state: 'stale'`, with the error and its age), so clients keep
 *   working through an outage of the origin. Nothing kept and no answer: the
 *   error.
 * - **Package metadata** (the signed `zh:` of an archive, its URL, the key
 *   that signed it) is kept `metadataTtlMs`, then asked again the same way.
 *   Every answer passes the signature policy first (policy.ts
 *   {@link signatureRefusal}): a refused package is an `UPSTREAM_UNTRUSTED`
 *   error, never metadata.
 * - Concurrent questions share one request; a failure is not kept: the
 *   next request asks the origin again.
 *
 * The clock is injected.
 */
import type { Platform, ProviderAddress, Version } from '../addresses/index.js';
import { asProvkitError, ErrorCode, ProvkitError } from '../errors.js';
import type { PackageMeta, Source } from '../sources/index.js';
import { type OriginPolicy, signatureRefusal } from './policy.js';

/** How fresh an answer is. */
export type Freshness =
  /** Asked of the origin for this request. */
  | 'fresh'
  /** Kept from an earlier answer, within its time to live. */
  | 'cached'
  /** Kept from an earlier answer past its time to live: the origin could not be reached. */
  | 'stale';

/** An answer with its freshness. */
export interface Kept<T> {
  readonly value: T;
  readonly state: Freshness;
  /** Milliseconds since the origin gave it. */
  readonly ageMs: number;
  /** Why the origin could not be asked (state `stale`). */
  readonly error?: ProvkitError;
}

export interface OriginOptions {
  /** The origin registries (not memoised: this view keeps answers for as long as it should). */
  readonly source: Source;
  readonly policy: OriginPolicy;
  /** How long a versions list is used before the origin is asked again. */
  readonly versionsTtlMs: number;
  /** How long package metadata is used before the origin is asked again (default 1 hour). */
  readonly metadataTtlMs?: number;
  /** Aborts requests to the origin (the mirror is closing). */
  readonly signal?: AbortSignal;
  readonly now?: () => number;
  /** Called for each question the origin answered or failed (for metrics and logs). */
  readonly onRequest?: (what: 'versions' | 'metadata', ok: boolean) => void;
}

interface Entry<T> {
  value: { readonly value: T; readonly at: number } | undefined;
  asking: Promise<{ readonly value: T; readonly at: number }> | undefined;
}

/** See the module comment. */
export class OriginView {
  private readonly versionLists = new Map<string, Entry<readonly Version[]>>();
  private readonly metas = new Map<string, Entry<PackageMeta>>();

  constructor(private readonly options: OriginOptions) {}

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  /**
   * The origin's versions of `provider`, sorted lowest first.
   *
   * @throws {ProvkitError} the origin's error when it cannot answer and no list is kept.
   */
  versions(provider: ProviderAddress): Promise<Kept<readonly Version[]>> {
    return this.kept(
      this.versionLists,
      provider.toComparisonString(),
      this.options.versionsTtlMs,
      'versions',
      async () => {
        const got = await this.options.source.availableVersions(provider, this.options.signal);
        return got.versions;
      },
    );
  }

  /**
   * The platforms the origin publishes `version` for (its versions list), or
   * undefined when the origin does not list the version. Asks for the
   * versions when the version is not in the list kept.
   */
  async platforms(provider: ProviderAddress, version: Version): Promise<Kept<readonly Platform[]> | undefined> {
    let list = await this.versions(provider);
    if (!list.value.some((v) => v.equals(version)) && list.state === 'cached') {
      // Published since the list was kept? Ask once more, now.
      this.versionLists.get(provider.toComparisonString())!.value = undefined;
      list = await this.versions(provider);
    }
    if (!list.value.some((v) => v.equals(version))) return undefined;
    const platforms = await this.options.source.publishedPlatforms?.(provider, version, this.options.signal);
    return platforms === undefined ? undefined : { ...list, value: platforms };
  }

  /**
   * The package's metadata, verified by the source and accepted by the
   * signature policy.
   *
   * @throws {ProvkitError} `UPSTREAM_UNTRUSTED` when the policy refuses it;
   *   the source's errors (`PLATFORM_NOT_SUPPORTED`, `SIGNATURE_INVALID`,
   *   `NET_*`, …) when the origin cannot give it and none is kept.
   */
  packageMeta(provider: ProviderAddress, version: Version, platform: Platform): Promise<Kept<PackageMeta>> {
    const key = `${provider.toComparisonString()} ${version.toString()} ${platform.toString()}`;
    return this.kept(this.metas, key, this.options.metadataTtlMs ?? 3_600_000, 'metadata', async () => {
      const meta = await this.options.source.packageMeta(provider, version, platform, this.options.signal);
      const auth = meta.authentication;
      const why = signatureRefusal(
        this.options.policy,
        provider,
        auth?.kind === 'registry' ? auth.signature : undefined,
      );
      if (why !== undefined) {
        throw new ProvkitError(
          ErrorCode.UPSTREAM_UNTRUSTED,
          `refused ${provider.toString()} ${version.toString()} for ${platform.toString()}: ${why}`,
          {
            provider: provider.toString(),
            version: version.toString(),
            platform: platform.toString(),
            ...(auth?.kind === 'registry' ? { url: auth.signatureUrl } : {}),
          },
        );
      }
      return meta;
    });
  }

  /** The kept answer of `key`, asked again when older than `ttl` (see the module comment). */
  private async kept<T>(
    map: Map<string, Entry<T>>,
    key: string,
    ttl: number,
    what: 'versions' | 'metadata',
    ask: () => Promise<T>,
  ): Promise<Kept<T>> {
    let entry = map.get(key);
    if (!entry) map.set(key, (entry = { value: undefined, asking: undefined }));
    const now = this.now();
    const had = entry.value;
    if (had && now - had.at < ttl) return { value: had.value, state: 'cached', ageMs: now - had.at };
    let asking = entry.asking;
    const mine = asking === undefined;
    if (asking === undefined) {
      const e = entry;
      asking = ask().then(
        (value) => {
          const got = { value, at: this.now() };
          e.value = got;
          e.asking = undefined;
          this.options.onRequest?.(what, true);
          return got;
        },
        (err: unknown) => {
          e.asking = undefined;
          this.options.onRequest?.(what, false);
          throw err;
        },
      );
      entry.asking = asking;
    }
    try {
      const got = await asking;
      return { value: got.value, state: mine ? 'fresh' : 'cached', ageMs: this.now() - got.at };
    } catch (err) {
      const error = asProvkitError(err);
      // A refusal is the policy's answer, not an outage: never covered by an old answer.
      if (had && error.code !== ErrorCode.UPSTREAM_UNTRUSTED && error.code !== ErrorCode.ABORTED)
        return { value: had.value, state: 'stale', ageMs: this.now() - had.at, error };
      throw error;
    }
  }
}
