/**
 * Downloads that learn their redirects while they wait for a download slot,
 * for every run that downloads registry packages (lock, mirror, install,
 * bundle create, each through archive-warmup.ts): a registry's archive URL answers with a redirect to its CDN host
 * (GitHub's release assets, a bucket), so once one download from an origin
 * was redirected, each package still waiting for a slot asks its archive URL
 * where it leads (HttpClient.learnRedirect) and that host's connections are
 * warmed; its download then starts at the CDN, on a connection ready for it:
 * one round trip per archive per slot, and for the first archives there two
 * more (bench/results-wan.md).
 *
 * Which origins redirect is the HTTP client's knowledge alone
 * (net/learnt-redirects.ts, HttpClient.whenRedirecting); this keeps only
 * the run's side: which packages wait, how many downloads are waiting or
 * running (the connections worth warming), and the limit the probes run
 * under.
 */
import type { HttpClient, NetEvents } from '../net/index.js';
import type { PackageAhead, PackageMeta } from '../sources/index.js';

type HttpLocation = Extract<PackageMeta['location'], { kind: 'http' }>;

/** Runs a task under a concurrency limit (`p-limit`'s function). */
export type Limit = <T>(task: () => Promise<T>) => Promise<T>;

/** What {@link RedirectsAhead} needs of its run. */
export interface RedirectsAheadOptions {
  /** The run's client (none: nothing is learnt, e.g. a run over local sources only). */
  readonly http: HttpClient | undefined;
  readonly signal?: AbortSignal | undefined;
  /** The run's download slots: at most this many connections are warmed per redirect target. */
  readonly slots: number;
  /** The limit the probes run under (the run's metadata limit: archive-warmup.ts). */
  readonly limit: Limit;
}

/** See the module comment. One per run. */
export class RedirectsAhead {
  /** Downloads waiting for a slot or running. */
  private downloads = 0;

  constructor(private readonly options: RedirectsAheadOptions) {}

  /**
   * Runs `enqueue` (the caller's download slot around its download), which
   * must call `started` when the download leaves the queue. Until then, once
   * a download from the package's origin was redirected, the package's
   * redirect is learnt (a registry package only: other sources' URLs are the
   * bytes themselves).
   */
  async download<T>(meta: PackageMeta | PackageAhead, enqueue: (started: () => void) => Promise<T>): Promise<T> {
    let started = false;
    const { http } = this.options;
    // A package fetched ahead of its authentication is a registry's (only its download metadata names an archive
    // before the package is authenticated: PackageMetaHints.archiveURL).
    const location =
      'authenticated' in meta
        ? { kind: 'http' as const, url: meta.url }
        : meta.authentication?.kind === 'registry'
          ? meta.location
          : undefined;
    if (http !== undefined && location?.kind === 'http')
      http.whenRedirecting(location.url, () => {
        if (!started) void this.options.limit(() => (started ? Promise.resolve() : this.learn(http, location)));
      });
    this.downloads += 1;
    try {
      return await enqueue(() => {
        started = true;
      });
    } finally {
      this.downloads -= 1;
    }
  }

  /**
   * A download's network events, plus: a redirect warms connections to its
   * target's origin, as many as downloads are waiting or running (at most the
   * slots), so that the next archives find a connection ready there instead
   * of opening one (two more round trips on HTTPS) after their slot came
   * (net/warm.ts).
   */
  events(events: NetEvents): NetEvents {
    return {
      ...events,
      onRedirect: (e) => {
        events.onRedirect?.(e);
        this.options.http?.preconnect(e.to, this.warm());
      },
    };
  }

  private warm(): number {
    return Math.min(this.downloads, this.options.slots);
  }

  private async learn(http: HttpClient, location: HttpLocation): Promise<void> {
    const { signal } = this.options;
    if (signal?.aborted === true) return;
    const credential = location.credential?.();
    const target = await http.learnRedirect(location.url, {
      ...(credential === undefined ? {} : { credential }),
      ...(location.headers === undefined ? {} : { headers: location.headers }),
      ...(signal === undefined ? {} : { signal }),
    });
    if (target !== undefined) http.preconnect(target, this.warm());
  }
}
