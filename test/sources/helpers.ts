// Shared by the source tests: an HttpClient that trusts the test CA, with
// millisecond backoff and short timeouts, and a few assertions.
import { readdir } from 'node:fs/promises';

import { createNodeFetch, HttpClient, systemClock, type Clock, type HttpClientOptions } from '../../src/net/index.js';

export interface TestHttp {
  http: HttpClient;
  /** Backoff delays requested so far. */
  sleeps: number[];
  close(): void;
}

/** A client trusting `caPath`, with instant backoff sleeps (recorded) and short timeouts (1 s connect, 300 ms idle). */
export function testHttp(caPath: string, opts: Partial<HttpClientOptions> = {}): TestHttp {
  const nf = createNodeFetch({ env: { SSL_CERT_FILE: caPath } });
  const sleeps: number[] = [];
  const clock: Clock = {
    now: () => Date.now(),
    sleep: async (ms, signal) => {
      sleeps.push(ms);
      if (signal?.aborted) throw signal.reason;
      await Promise.resolve();
    },
    setTimer: (fn, ms) => systemClock.setTimer(fn, ms),
  };
  const http = new HttpClient({
    fetch: nf.fetch,
    clock,
    connectTimeoutMs: 1000,
    idleTimeoutMs: 300,
    userAgent: 'provkit-test',
    ...opts,
  });
  return { http, sleeps, close: () => nf.close() };
}

export async function caught(p: Promise<unknown>): Promise<Error & Record<string, unknown>> {
  try {
    await p;
  } catch (err) {
    return err as Error & Record<string, unknown>;
  }
  throw new Error('expected a rejection');
}

/** Sorted names in a directory (hidden temp files included). */
export async function listing(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).sort();
  } catch {
    return [];
  }
}
