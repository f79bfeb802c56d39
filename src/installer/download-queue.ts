/**
 * The network budget of a run that downloads packages (lock, mirror, bundle,
 * install, OCI publishing): how many archives stream at once, independent of
 * the cores (the hash pool is the CPU's budget, hashing/pool.ts).
 *
 * Why a fixed default and not the core count (bench/PROFILE.md "WAN"): users'
 * registries and release CDNs are 20–150 ms away and cap each connection
 * (12 MB/s in the benchmark's scenario), so the bytes per second of a run are
 * the streams in flight × that cap, not what the cores can hash: 2 streams
 * (the old default on 2 cores) carried at most 24 MB/s. Streams beyond what
 * the cores can hash do not grow memory: every stream is hashed as it
 * arrives by the pool's workers, and a stream whose hasher falls behind stops
 * being read (hashing/pool.ts `STREAM_IN_FLIGHT`), so TCP's window holds the
 * sender.
 */
import type { NetEvents } from '../net/index.js';
import type { PackageMeta } from '../sources/index.js';

/** Archives downloaded at once by default (`-downloads=N`, `PROVKIT_DOWNLOADS`; docs/reliability.md). */
export const DEFAULT_DOWNLOADS = 8;

/** The most `-downloads` / `PROVKIT_DOWNLOADS` accept: each stream holds a connection and ~2 MiB in flight. */
export const MAX_DOWNLOADS = 64;

/**
 * Runs `task` when one of the queue's slots is free. Among waiting tasks the
 * one with the highest `priority` starts first (a package's size: the
 * largest archive first, so that the batch does not end with one large
 * download alone), then the one given first. A task's rejection is its
 * caller's alone.
 *
 * The slot is the network's: a task may give it back before it settles by
 * calling the `release` it is given, once its last byte has arrived (what
 * remains, hashing the tail of the stream, is the CPU's budget: the hash
 * pool's). Otherwise, and in any case, the slot is freed when the task
 * settles; a second release does nothing.
 */
export type DownloadQueue = <T>(task: (release: () => void) => Promise<T>, priority?: number) => Promise<T>;

/** A {@link DownloadQueue} of `limit` slots (an integer ≥ 1). */
export function downloadQueue(limit: number): DownloadQueue {
  if (!Number.isInteger(limit) || limit < 1) throw new TypeError(`downloadQueue: limit must be ≥ 1, got ${limit}`);
  /** Waiting starts, highest priority first, then in the order given (a stable insertion). */
  const waiting: Array<{ priority: number; start: () => void }> = [];
  let active = 0;
  const pump = (): void => {
    while (active < limit && waiting.length > 0) {
      active += 1;
      waiting.shift()!.start();
    }
  };
  return <T>(task: (release: () => void) => Promise<T>, priority = 0): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const start = (): void => {
        let held = true;
        const release = (): void => {
          if (!held) return;
          held = false;
          active -= 1;
          // Not inside the caller's stack (a release from a body reader's progress callback).
          queueMicrotask(pump);
        };
        // A task that throws instead of rejecting settles the same way.
        const settled = new Promise<T>((run) => run(task(release)));
        settled.then(resolve, reject).finally(release);
      };
      let at = waiting.length;
      while (at > 0 && waiting[at - 1]!.priority < priority) at -= 1;
      waiting.splice(at, 0, { priority, start });
      pump();
    });
}

/**
 * Adds the slot rule to a download's network events: the slot is given back
 * (`release`) once the body's last byte has arrived (`onProgress` reports
 * the end once, after the length check, net/body.ts), so that the next
 * archive's request is not held while the hash worker finishes the tail of
 * this one (the hash pool's budget, not the network's; hashing/pool.ts still
 * holds a stream whose hasher is behind, so memory does not grow). A body of
 * unannounced length keeps its slot until its task settles. A download
 * retried after that point (its complete body failed a check) runs outside
 * the budget.
 */
export type SlotEvents = (events: NetEvents) => NetEvents;

/**
 * Runs `download` in one of `queue`'s slots, the largest announced archive
 * ({@link announcedSize}, or the size given: an archive fetched before its
 * metadata was authenticated, fetch-cache.ts) first, with the slot rule ({@link SlotEvents}) to
 * put on its network events: the one way every run that downloads packages
 * (`lock`'s fetch cache, `mirror`, `install`, `bundle create`) takes a slot.
 */
export function queueDownload<T>(
  queue: DownloadQueue,
  meta: Pick<PackageMeta, 'authentication'> | number,
  download: (slotEvents: SlotEvents) => Promise<T>,
): Promise<T> {
  return queue(
    (release) =>
      download((events) => ({
        ...events,
        onProgress: (e) => {
          events.onProgress?.(e);
          if (e.total !== undefined && e.received >= e.total) release();
        },
      })),
    typeof meta === 'number' ? meta : announcedSize(meta),
  );
}

/**
 * The size a package's metadata announces before its download (a registry's
 * `packages` size, OpenTofu 1.12; an OCI blob's descriptor), as a
 * {@link DownloadQueue} priority: 0 when unknown, so that unknown sizes keep
 * the order given.
 */
export function announcedSize(meta: Pick<PackageMeta, 'authentication'>): number {
  const auth = meta.authentication;
  if (auth?.kind === 'registry') return auth.packageSize ?? 0;
  if (auth?.kind === 'oci-blob') return auth.size;
  return 0;
}
