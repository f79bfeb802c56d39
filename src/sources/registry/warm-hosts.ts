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
 */
import type { HttpClient } from '../../net/index.js';

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
      if (count > 1) this.http.preconnect(origin, count);
    });
  }
}
