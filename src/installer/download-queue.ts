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
 *
 * Why the default count adapts (bench/PROFILE.md "Streams that adapt"): when
 * the CPU, not the link, is what a run waits for (a registry on loopback or a
 * fast LAN, where TLS and hashing fill the cores), more streams add no bytes
 * per second; they only make every archive finish later, all together, so
 * that the `h1:` passes that need a whole archive no longer overlap the next
 * downloads (5 × 100 MB on loopback, 2 cores: 1.05–1.13× the wall time of 2
 * streams at the same CPU). So without `-downloads`/`PROVKIT_DOWNLOADS` a run
 * starts with the cores' share of streams and opens the rest of the default
 * once a stream is seen held by its link while the cores have room
 * ({@link AdaptiveStreams}); an explicit count is kept as given.
 */
import { usableCores } from '../fs/cores.js';
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
 * settles; a second release does nothing. A task calls `receiving` with
 * the bytes it has received so far as they arrive (a download's progress
 * reports): what an adaptive queue decides by ({@link AdaptiveStreams}); a
 * fixed queue ignores it.
 */
export type DownloadQueue = <T>(
  task: (release: () => void, receiving: (received: number) => void) => Promise<T>,
  priority?: number,
) => Promise<T>;

/** A process's CPU time so far, in any one unit (ms): what it used, and what it could have used. */
export interface CpuTimes {
  /** CPU time the process used, every thread (the hash workers included). */
  readonly busy: number;
  /** Wall time × the cores it may use. */
  readonly total: number;
}

/**
 * How a queue without an explicit count chooses how many streams run at
 * once: `floor` always (the cores' share, as many as the hash pool has
 * workers, at least 2), and the queue's whole limit once the link is seen to
 * be what the run waits for: a stream's progress report shows it received
 * less than {@link LINK_BOUND_RATE} bytes per second since its last one
 * (held by its connection: a per-connection cap, a long round trip) while
 * the process left more than {@link IDLE_ENOUGH} of the cores idle over the
 * last `windowMs` (so the stream was not slow because its hasher held it,
 * hashing/pool.ts). Both are needed: on loopback (5 × 100 MB, 2 cores, 2
 * streams) a stream gets 28–69 MB/s (5th–90th percentile of its reports)
 * with the process 0.64–0.93 busy; over a 60 ms link capped at 12 MB/s per
 * connection, 10.7–13.3 MB/s with the process 0.25–0.50 busy at 1 to 8
 * streams (bench/PROFILE.md "Streams that adapt"). The count goes down by
 * one at a time when the cores are saturated, never below `floor`. It only
 * decides when a waiting archive starts: a running download is never paused.
 *
 * Why this process's time and not the machine's: what the run waits for is
 * its own bytes; a machine busy with other work (a CI runner's other jobs, a
 * laptop's browser) does not make a far registry any nearer, so it should
 * not keep a link-bound run at two streams.
 */
export interface AdaptiveStreams {
  /** Streams always allowed (≥ 1; at most the queue's limit). */
  readonly floor: number;
  /** The process's CPU times so far (default {@link processCpuTimes}; injected by tests). */
  readonly cpu?: () => CpuTimes;
  /** The clock in ms (default `performance.now`; injected by tests). */
  readonly now?: () => number;
  /** The measuring window in ms (default {@link ADAPT_WINDOW_MS}). */
  readonly windowMs?: number;
  /** The link-bound rate in bytes per second (default {@link LINK_BOUND_RATE}). */
  readonly linkBoundRate?: number;
}

/** How long the queue measures the cores' use (a progress report of every stream comes every 250 ms, net/client.ts). */
export const ADAPT_WINDOW_MS = 200;

/**
 * Below this many bytes per second a stream is held by its link, not by
 * this process: twice the benchmark's per-connection cap (12 MB/s), and
 * below what one stream gets from a registry on loopback here (its 5th
 * percentile, 28 MB/s); release CDNs commonly cap a connection at 5–20 MB/s.
 */
export const LINK_BOUND_RATE = 24_000_000;

/** The process used less than this share of the cores over the last window: room for more streams. */
export const IDLE_ENOUGH = 0.6;

/** Above this share of busy time the cores are saturated: one stream fewer at the next start. */
const SATURATED = 0.95;

/** The streams always allowed by default: the hash pool's share (one worker per core), 2 to 4, as before the count was independent of the cores. */
export function defaultStreamFloor(cores = usableCores()): number {
  return Math.min(4, Math.max(2, cores));
}

/** This process's CPU times now: `process.cpuUsage()` (every thread) against the wall time × the cores it may use (fs/cores.ts: a container's CPU quota counts). */
export function processCpuTimes(): CpuTimes {
  const { user, system } = process.cpuUsage();
  return { busy: (user + system) / 1000, total: performance.now() * usableCores() };
}

/**
 * The queue a run's downloads share: `networkConcurrency` slots when the
 * caller (the `-downloads` flag, `PROVKIT_DOWNLOADS`) chose a count, else an
 * adaptive one of up to {@link DEFAULT_DOWNLOADS} ({@link AdaptiveStreams}).
 */
export function networkQueue(networkConcurrency?: number): DownloadQueue {
  if (networkConcurrency !== undefined) return downloadQueue(networkConcurrency);
  return downloadQueue(DEFAULT_DOWNLOADS, { floor: Math.min(DEFAULT_DOWNLOADS, defaultStreamFloor()) });
}

/**
 * A {@link DownloadQueue} of `limit` slots (an integer ≥ 1), all of them open
 * at once, or, with `adaptive`, as many as {@link AdaptiveStreams} decides.
 */
export function downloadQueue(limit: number, adaptive?: AdaptiveStreams): DownloadQueue {
  if (!Number.isInteger(limit) || limit < 1) throw new TypeError(`downloadQueue: limit must be ≥ 1, got ${limit}`);
  if (adaptive !== undefined && (!Number.isInteger(adaptive.floor) || adaptive.floor < 1))
    throw new TypeError(`downloadQueue: floor must be ≥ 1, got ${adaptive.floor}`);
  /** Waiting starts, highest priority first, then in the order given (a stable insertion). */
  const waiting: Array<{ priority: number; start: () => void }> = [];
  let active = 0;
  /** The streams always open: the limit, or the adaptive count's floor. */
  const floor = Math.min(limit, adaptive?.floor ?? limit);
  /** Tasks started at once now: the limit, or the adaptive count. */
  let open = floor;
  const decide = adaptive === undefined ? undefined : adapter(adaptive, floor, limit);
  // The first window opens with the queue: the run's metadata phase (discovery, versions, the first packages'
  // metadata) is part of it, so that the cores' use is known by the first archive's first progress report.
  decide?.tick(open);
  /**
   * Starts what the count allows. After a slot was freed (`freed`), an
   * adaptive queue also starts the last archives together: fewer waiting
   * than the floor start at once, up to the limit, so that a run does not
   * end on one stream alone (a lone stream cannot keep the cores busy when
   * they are the limit: 5 × 100 MB over 2 streams on loopback ended with
   * ~1 s of one archive alone, ~0.4 s more than two waves of 2 and 3).
   * Only when a slot frees: while a run's packages are still joining the
   * queue, few are waiting because the others have not come yet.
   */
  const pump = (freed = false): void => {
    while (active < open && waiting.length > 0) {
      active += 1;
      waiting.shift()!.start();
    }
    if (freed && decide !== undefined && waiting.length < floor) {
      while (active < limit && waiting.length > 0) {
        active += 1;
        waiting.shift()!.start();
      }
    }
  };
  const decided = (next: number | undefined): void => {
    if (next === undefined || next === open) return;
    open = next;
    // Not inside the caller's stack (a body reader's progress callback).
    queueMicrotask(pump);
  };
  return <T>(
    task: (release: () => void, receiving: (received: number) => void) => Promise<T>,
    priority = 0,
  ): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const start = (): void => {
        let held = true;
        const release = (): void => {
          if (!held) return;
          held = false;
          active -= 1;
          if (active === 0 && waiting.length === 0) decide?.drained();
          // Not inside the caller's stack (a release from a body reader's progress callback).
          queueMicrotask(() => pump(true));
        };
        const receiving =
          decide === undefined ? (): void => {} : reportsOf(decide, (rate) => decided(decide.tick(open, rate)));
        // A task that throws instead of rejecting settles the same way.
        const settled = new Promise<T>((run) => run(task(release, receiving)));
        settled.then(resolve, reject).finally(release);
      };
      let at = waiting.length;
      while (at > 0 && waiting[at - 1]!.priority < priority) at -= 1;
      waiting.splice(at, 0, { priority, start });
      pump();
    });
}

/**
 * One stream's progress reports (its bytes so far) as rates: the bytes since
 * its last report over the time since then, handed to `rate`.
 */
function reportsOf(
  clock: { now(): number },
  rate: (bytesPerSecond: number | undefined) => void,
): (received: number) => void {
  let last = { at: clock.now(), received: 0 };
  return (received) => {
    const at = clock.now();
    rate(at > last.at ? ((received - last.received) * 1000) / (at - last.at) : undefined);
    last = { at, received };
  };
}

/**
 * The adaptive count's measuring ({@link AdaptiveStreams}): `tick`, called
 * as streams report (with the reporting stream's rate in bytes per second),
 * reads the CPU times once a window has passed and returns the
 * count for the next starts (`undefined`: unchanged); `drained` forgets the
 * window when nothing runs (a gap between a recursive lock's roots would
 * otherwise read as idle cores).
 */
function adapter(
  options: AdaptiveStreams,
  floor: number,
  limit: number,
): { now(): number; tick(open: number, rate?: number): number | undefined; drained(): void } {
  const cpu = options.cpu ?? processCpuTimes;
  const now = options.now ?? ((): number => performance.now());
  const windowMs = options.windowMs ?? ADAPT_WINDOW_MS;
  const linkBound = options.linkBoundRate ?? LINK_BOUND_RATE;
  let from: { readonly at: number; readonly times: CpuTimes } | undefined;
  /** The share of the cores the process used over the last whole window. */
  let busy: number | undefined;
  const drained = (): void => {
    from = undefined;
    busy = undefined;
  };
  const tick = (open: number, rate?: number): number | undefined => {
    const at = now();
    if (from === undefined) {
      from = { at, times: cpu() };
    } else if (at - from.at >= windowMs) {
      const times = cpu();
      const total = times.total - from.times.total;
      const used = times.busy - from.times.busy;
      from = { at, times };
      // A counter that did not move (too coarse for the window) measures nothing.
      if (total > 0) {
        busy = Math.min(1, Math.max(0, used / total));
        if (busy >= SATURATED) return Math.max(floor, open - 1);
      }
    }
    // A stream held by its link while the cores had room: every slot opens.
    if (rate !== undefined && rate < linkBound && busy !== undefined && busy < IDLE_ENOUGH) return limit;
    return undefined;
  };
  return { now, tick, drained };
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
    (release, receiving) =>
      download((events) => ({
        ...events,
        onProgress: (e) => {
          events.onProgress?.(e);
          receiving(e.received);
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
