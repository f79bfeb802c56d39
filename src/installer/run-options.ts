/**
 * What every run that fetches packages for platforms (`lock`, `mirror`,
 * `bundle create`, OCI publishing) is given.
 */
import type { Flavor, Platform, Requirement } from '../addresses/index.js';
import type { HashPool, HashStore } from '../hashing/index.js';
import type { HttpClient } from '../net/index.js';
import type { Source } from '../sources/index.js';
import type { EventSink } from './events.js';

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
  /** Archives downloaded at once (default `DEFAULT_DOWNLOADS`, 8: installer/download-queue.ts). */
  readonly networkConcurrency?: number;
  /**
   * Hashes of archives seen before, by `zh:` (hashing/store.ts): a registry
   * package whose signed `zh:` is there is not downloaded to be hashed again,
   * and every archive hashed in the run is added.
   */
  readonly hashStore?: HashStore;
}
