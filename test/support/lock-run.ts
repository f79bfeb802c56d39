// runLock over a FetchCache the test built (its source, pool, store and HTTP client are what the test
// observes), with no old locks: the set-up the installer tests that look at what one lock run asks share.
import { expect } from 'vitest';

import { parseConstraints, parseProviderSource, type Platform } from '../../src/addresses/index.js';
import type { FetchCache } from '../../src/installer/fetch-cache.js';
import { runLock } from '../../src/installer/lock.js';
import { Locks } from '../../src/lockfile/index.js';

/**
 * Locks `providers` (`SOURCE` → constraint, tofu flavor) for `platforms` over `cache`, closes the cache,
 * expects no failures and returns the new locks.
 */
export async function lockOverCache(
  cache: FetchCache,
  providers: Readonly<Record<string, string>>,
  platforms: readonly Platform[],
): Promise<Locks> {
  const outcome = await runLock({
    requirements: Object.entries(providers).map(([source, constraint]) => ({
      provider: parseProviderSource(source, 'tofu'),
      constraints: parseConstraints(constraint, 'tofu'),
    })),
    platforms,
    cache,
    flavor: 'tofu',
    oldLocks: new Locks(),
  }).finally(() => cache.close());
  expect(outcome.failures).toEqual([]);
  return outcome.locks;
}
