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
  /** The providers to fetch, with their constraints. */
  readonly requirements: readonly Requirement[];
  /** The platforms to fetch every provider's package for. */
  readonly platforms: readonly Platform[];
  /** Where versions, metadata and packages come from. */
  readonly source: Source;
  /** Hashing, bounded by its own (CPU) limit. */
  readonly pool: HashPool;
  /** Needed when a source returns http locations. */
  readonly http?: HttpClient;
  /** The flavor: lock-file rules, signature policy and the words of messages. */
  readonly flavor: Flavor;
  /** The run's events (selection, package fetches, progress, warnings; see {@link InstallerEvent}). */
  readonly events?: EventSink;
  /**
   * Stops the run: the one cancellation contract (installer/abort.ts): no source call after it, nothing changed,
   * `ProvkitError` `ABORTED` thrown.
   */
  readonly signal?: AbortSignal;
  /** Archives downloaded at once, exactly; unset: the cores' share, 8 once the link holds the streams (installer/download-queue.ts `networkQueue`). */
  readonly networkConcurrency?: number;
  /**
   * Hashes of archives seen before, by `zh:` (hashing/store.ts): a registry
   * package whose signed `zh:` is there is not downloaded to be hashed again,
   * and every archive hashed in the run is added.
   */
  readonly hashStore?: HashStore;
}
