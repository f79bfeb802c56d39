/**
 * Connections to a registry host warmed while its service discovery is in
 * flight (discovery.ts): every provider of a run asks for its versions at
 * once, and all of them wait for the host's discovery document; counted in
 * one turn of the event loop, that many connections are opened beside the
 * discovery's own (HttpClient.preconnect), so that the versions requests
 * find them ready: 1 round trip each after discovery instead of 3 on new
 * HTTPS connections (bench/PROFILE.md "WAN", the head of the critical path).
 * Only a host whose discovery document is fetched is warmed: it is the host
 * the configuration names, asked anyway (a `host` block's services are not).
 *
 * Beyond the versions requests, the package metadata that follows them: as
 * soon as a provider's versions arrive, its packages' download metadata is
 * asked at once (installer/fetch-cache.ts, up to 16 packages at a time), then
 * its SHA256SUMS and signature side by side: up to 16 packages, each with
 * up to two requests in flight, 32 at once. A request that finds no free
 * connection opens one, two round trips more on the head of the run
 * (bench/results-wan.md, "new connection to the registry" after the
 * versions in the chains of round trips in series). So
 * {@link PER_PROVIDER} connections per provider are warmed, at most
 * {@link MAX_WARM}, while the discovery is in flight (the run waits on it
 * anyway).
 */
import type { HttpClient } from '../../net/index.js';

/** Connections warmed per provider waiting for the discovery: its versions request, then its packages' metadata. */
export const PER_PROVIDER = 4;
/** The most connections warmed to one host (the metadata fan-out of installer/fetch-cache.ts: 16 packages × 2 requests). */
export const MAX_WARM = 32;

/** See the module comment. One per source (it keeps the counts of one turn only). */
export class HostWarmer {
  private readonly waiting = new Map<string, number>();

  constructor(private readonly http: HttpClient) {}

  /** One more request will go to `origin` once its discovery is done. */
  expect(origin: string): void {
    const n = (this.waiting.get(origin) ?? 0) + 1;
    this.waiting.set(origin, n);
    if (n > 1) return;
    setImmediate(() => {
      const count = this.waiting.get(origin) ?? 0;
      this.waiting.delete(origin);
      // One request reuses the discovery's own connection: nothing to warm for it alone.
      if (count > 1) this.http.preconnect(origin, Math.min(MAX_WARM, count * PER_PROVIDER));
    });
  }
}
