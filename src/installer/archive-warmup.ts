/**
 * What the network does for a run's archives before their download slots
 * come, one rule for every run that downloads packages (`lock`'s fetch
 * cache, `mirror`, `install`, `bundle create`): a user's registry and its
 * release host are 20–150 ms away, and every round trip a download waits
 * for in its slot is one the run waits for (bench/results-wan.md,
 * bench/PROFILE.md "WAN").
 *
 * - **Metadata ahead of bytes.** Every package's metadata (for a registry:
 *   download metadata, SHA256SUMS and its signature, checked) is asked as
 *   soon as the run knows the package, under a limit of its own
 *   ({@link METADATA_CONCURRENCY}), never inside a download slot: a slot
 *   never waits on a metadata round trip.
 * - **The archive host warmed.** As soon as the source names a package's
 *   archive URL (`PackageMetaHints`: a registry names it in its download
 *   metadata, before its SHA256SUMS and signature are asked), that host's
 *   connections are opened (HttpClient.preconnect), as many as downloads may
 *   run at once (packages to download asked so far, at most the slots), so
 *   that the first download from a host that serves archives itself (a
 *   release site) finds its connection ready instead of opening it, two
 *   round trips on HTTPS, after its signature was checked. Not for a package
 *   the run will not download: in `lock`, one whose expected `zh:` the hash
 *   store has ({@link ArchiveWarmupOptions.storeSparesDownload}); in
 *   `mirror`, an archive already in the target, kept when it verifies.
 * - **Redirects learnt ahead** (redirects-ahead.ts), under the same limit.
 *
 * Only time is at stake: nothing is asked of the archive host, trusted or
 * written; the hint is checked by nothing because nothing depends on it (the
 * package's authentication is in the metadata's answer).
 */
import pLimit from 'p-limit';

import type { Platform, ProviderAddress, Version } from '../addresses/index.js';
import type { Hash, HashStore, ZipPackageHashes } from '../hashing/index.js';
import type { HttpClient, NetEvents } from '../net/index.js';
import type { PackageAhead, PackageMeta, Source } from '../sources/index.js';
import { RedirectsAhead } from './redirects-ahead.js';

/**
 * Packages whose metadata is asked at once: enough to have every package's
 * ready before a download slot frees for it, few enough not to open a
 * connection per package (each request is a few KB; raising it to 32 was
 * measured to add round trips, bench/results-wan.md).
 */
export const METADATA_CONCURRENCY = 16;

/**
 * A package's archive as its source named it before authenticating it
 * (PackageMetaHints.archiveURL), with the hash store's entry for the `zh:`
 * the source expects, read once for the warm-up and its caller alike.
 */
export interface HeardArchive {
  /** The archive's URL, not yet authenticated. */
  readonly url: string;
  /** The `zh:` the source expects of it, not yet authenticated. */
  readonly zh: Hash;
  /** The size the source announced (a download queue's priority), when it did. */
  readonly size: number | undefined;
  /** {@link ArchiveWarmupOptions.storeSparesDownload}'s entry for `zh`: undefined when it has none (or there is no such store). */
  readonly stored: Promise<ZipPackageHashes | undefined>;
}

/** What {@link ArchiveWarmup} needs of its run. */
export interface ArchiveWarmupOptions {
  /** The run's client (none: nothing is warmed or learnt, e.g. a run over local sources only). */
  readonly http: HttpClient | undefined;
  readonly signal?: AbortSignal | undefined;
  /** The run's download slots: at most this many connections are opened per host. */
  readonly slots: number;
  /**
   * The hash store whose entry for a package's expected `zh:` spares its
   * download (`lock`: the stored hashes are the package's): such a package
   * warms nothing. Absent: every package named is downloaded (`mirror`,
   * `install` and `bundle create` need the bytes whatever the store knows).
   */
  readonly storeSparesDownload?: HashStore | undefined;
}

/** See the module comment. One per run (per fetch cache). */
export class ArchiveWarmup {
  /** Metadata requests and redirect probes in flight (small responses, over warm connections). */
  private readonly limit = pLimit(METADATA_CONCURRENCY);
  private readonly ahead: RedirectsAhead;
  /** Packages to download asked so far (the downloads that may run at once, up to the slots). */
  private asked = 0;

  constructor(private readonly options: ArchiveWarmupOptions) {
    this.ahead = new RedirectsAhead({
      http: options.http,
      signal: options.signal,
      slots: options.slots,
      limit: this.limit,
    });
  }

  /**
   * The package's metadata from `source`, asked under the metadata limit;
   * the archive host it names is warmed meanwhile unless `download` is false
   * (the run expects not to download it, e.g. an archive already in a mirror);
   * `heard` hears the archive too ({@link HeardArchive}).
   */
  packageMeta(
    source: Source,
    pkg: { readonly provider: ProviderAddress; readonly version: Version; readonly platform: Platform },
    download = true,
    heard?: (archive: HeardArchive) => void,
  ): Promise<PackageMeta> {
    if (download) this.asked += 1;
    const { signal, storeSparesDownload } = this.options;
    return this.limit(() =>
      source.packageMeta(
        pkg.provider,
        pkg.version,
        pkg.platform,
        signal,
        download
          ? {
              archiveURL: (url, zh, size) => {
                const stored = storeSparesDownload?.get(zh).catch(() => undefined) ?? Promise.resolve(undefined);
                void this.anticipate(url, stored);
                // The caller's own use of the hint (fetch-cache.ts: the download begun ahead).
                heard?.({ url, zh, size, stored });
              },
            }
          : undefined,
      ),
    );
  }

  /** Runs a download through its slot, learning its redirect while it waits ({@link RedirectsAhead.download}). */
  download<T>(meta: PackageMeta | PackageAhead, enqueue: (started: () => void) => Promise<T>): Promise<T> {
    return this.ahead.download(meta, enqueue);
  }

  /** A download's network events, plus: a redirect warms its target's origin ({@link RedirectsAhead.events}). */
  events(events: NetEvents): NetEvents {
    return this.ahead.events(events);
  }

  /** Warms `url`'s host unless the package will not be downloaded (see the module comment). */
  private async anticipate(url: string, stored: Promise<ZipPackageHashes | undefined>): Promise<void> {
    const { http, signal, slots } = this.options;
    if (http === undefined) return;
    if ((await stored) === undefined && signal?.aborted !== true) http.preconnect(url, Math.min(this.asked, slots));
  }
}
