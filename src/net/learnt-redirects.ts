/**
 * Redirects learnt ahead of the requests that will follow them
 * ({@link HttpClient.learnRedirect}): a registry's archive URL answers with a
 * redirect to another host (its CDN: GitHub's release assets, a bucket), and
 * a download that knows the answer already starts at the CDN, one round trip
 * sooner, on a connection warmed for it (bench/results-wan.md: one round
 * trip per archive per download slot, and the head of the run).
 *
 * The rules, so that a learnt redirect changes nothing but the time:
 * - it is used once, by the first attempt of the first download of that URL
 *   (a retry asks the origin again, which may hand out a new target);
 * - only while it is fresh ({@link LEARNT_REDIRECT_TTL_MS}): CDN targets are
 *   often signed URLs that expire within minutes; and a target that fails
 *   sends the download back to the URL itself (HttpClient `open`);
 * - an origin is probed only once a download from it was redirected (most
 *   registries' archive hosts serve directly, e.g. a release site: a probe
 *   there would be a request in vain), and no longer once a probe of it was
 *   answered without a redirect.
 *
 * Pure bookkeeping: the client sends the probes and follows the redirects.
 */

/** How long a learnt redirect is used (ms): well inside the validity of signed CDN URLs (minutes). */
export const LEARNT_REDIRECT_TTL_MS = 60_000;

/** A redirect learnt ahead: where `url` sent the probe, with which status, and when. */
export interface LearntRedirect {
  readonly to: URL;
  readonly status: number;
  readonly at: number;
}

/** What a probe found: a redirect, an answer without one (the origin serves directly), or nothing (it failed). */
export type ProbeResult =
  | { readonly kind: 'redirect'; readonly redirect: LearntRedirect }
  | { readonly kind: 'direct' }
  | { readonly kind: 'failed' };

/** See the module comment. One per client. */
export class LearntRedirects {
  private readonly byUrl = new Map<string, Promise<LearntRedirect | undefined>>();
  /** Origins a download was redirected from (and no probe answered directly since). */
  private readonly redirecting = new Set<string>();
  /** Per origin not (yet) seen redirecting, what runs once it is ({@link whenRedirecting}). */
  private readonly waiting = new Map<string, Array<() => void>>();

  /** A download of `url` was redirected: its origin's next URLs are worth probing. */
  sawRedirect(url: URL): void {
    const origin = url.origin;
    if (this.redirecting.has(origin)) return;
    this.redirecting.add(origin);
    const then = this.waiting.get(origin) ?? [];
    this.waiting.delete(origin);
    for (const f of then) f();
  }

  /**
   * Runs `then` once a download from `url`'s origin was redirected (at once
   * if one was): only then is a coming download of `url` worth learning
   * ahead ({@link learn}). A download whose origin never redirects never runs it.
   */
  whenRedirecting(url: URL, then: () => void): void {
    const origin = url.origin;
    if (this.redirecting.has(origin)) then();
    else this.waiting.set(origin, [...(this.waiting.get(origin) ?? []), then]);
  }

  /**
   * Runs `probe` for `url` when its origin redirects downloads and `url` was
   * not learnt already. Resolves to the redirect learnt, if any.
   */
  async learn(url: URL, probe: () => Promise<ProbeResult>): Promise<LearntRedirect | undefined> {
    const origin = url.origin;
    if (this.byUrl.has(url.href)) return this.byUrl.get(url.href);
    if (!this.redirecting.has(origin)) return undefined;
    const result = probe().then((r) => {
      if (r.kind === 'direct') this.redirecting.delete(origin);
      return r.kind === 'redirect' ? r.redirect : undefined;
    });
    this.byUrl.set(url.href, result);
    return result;
  }

  /**
   * The redirect learnt for `url` (waiting for its probe when one is in
   * flight), if it is still fresh at `now()`; forgotten either way: used once.
   */
  async take(url: URL, now: () => number): Promise<LearntRedirect | undefined> {
    const learnt = this.byUrl.get(url.href);
    if (learnt === undefined) return undefined;
    this.byUrl.delete(url.href);
    const r = await learnt;
    return r !== undefined && now() - r.at < LEARNT_REDIRECT_TTL_MS ? r : undefined;
  }
}
