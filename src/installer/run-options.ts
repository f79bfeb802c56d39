/**
 * What every run that fetches packages for platforms (`lock`, `mirror`,
 * `bundle create`, OCI publishing) is given, and the default of its network
 * concurrency.
 */
import { availableParallelism } from 'node:os';

import type { Flavor, Platform, Requirement } from '../addresses/index.js';
import type { HashPool, HashStore } from '../hashing/index.js';
import type { HttpClient } from '../net/index.js';
import type { Source } from '../sources/index.js';
import type { EventSink } from './events.js';

/**
 * Parallel downloads by default: as many as there are cores, 2 to 4. More at
 * once only makes every package arrive late: hashing (CPU) can start on the
 * first package while the next downloads, instead of all finishing together
 * (measured with bench/commands.ts: 5 × 100 MB packages locked in 7.0 s with
 * 2 at once against 9.2 s with 8, on 2 cores).
 */
export function defaultNetworkConcurrency(): number {
  return Math.min(4, Math.max(2, availableParallelism()));
}

/** What every run that fetches packages for platforms (lock, mirror, bundle) is given. */
export interface FetchRunOptions {
  readonly requirements: readonly Requirement[];
  readonly platforms: readonly Platform[];
  readonly source: Source;
  /** Hashing, bounded by its own (CPU) limit. */
  readonly pool: HashPool;
  /** Needed when a source returns http locations. */
  readonly http?: HttpClient;
  readonly flavor: Flavor;
  readonly events?: EventSink;
  readonly signal?: AbortSignal;
  /** Parallel downloads (default {@link defaultNetworkConcurrency}). */
  readonly networkConcurrency?: number;
  /**
   * Hashes of archives seen before, by `zh:` (hashing/store.ts): a registry
   * package whose signed `zh:` is there is not downloaded to be hashed again,
   * and every archive hashed in the run is added.
   */
  readonly hashStore?: HashStore;
}
