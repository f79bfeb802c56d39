/**
 * The network slots of a run that downloads and hashes packages (lock, mirror):
 * at most `base` tasks at once, except at the tail of the batch, where every
 * task not finished yet runs at once as soon as they all fit in `shareUpTo`.
 *
 * Why (issue 13, bench/PROFILE.md "The tail of the downloads"): a download is
 * hashed as it arrives by one hash worker, so `base` downloads at a time on
 * `base` cores run 5 equal packages as 2 + 2 + 1, and the last package has a
 * core to itself while the other idles (3 package-times). Starting the last
 * three together runs them as 2, then 3 sharing the two cores (2.5
 * package-times, the least two cores allow). It is the download-side twin of
 * the hash pool's `shareUpTo` for file jobs (hashing/pool.ts), and uses the
 * same bound, so the pool has a worker for each of them.
 *
 * Contract: tasks start in the order they were given; a task's rejection is
 * its caller's alone. Up to `base` tasks start as soon as they are given.
 * The tail rule is applied when a task settles, and once after the tasks
 * given in one turn of the event loop are all known (a `setImmediate`):
 * callers give a batch in a loop, and the rule, applied to the first three
 * of five as they come, would start them all, leaving the last two for a
 * second round (2.5 package-times for 4 packages instead of 2).
 */
export type ShareLimit = <T>(task: () => Promise<T>) => Promise<T>;

export function sharingLimit(base: number, shareUpTo: number): ShareLimit {
  if (!Number.isInteger(base) || base < 1) throw new TypeError(`sharingLimit: base must be ≥ 1, got ${base}`);
  const tail = Number.isFinite(shareUpTo) ? Math.max(base, shareUpTo) : base;
  const waiting: Array<() => void> = [];
  let active = 0;
  let deferred = false;
  const pump = (withTail: boolean): void => {
    const limit = withTail && active + waiting.length <= tail ? Number.POSITIVE_INFINITY : base;
    while (active < limit && waiting.length > 0) {
      active += 1;
      waiting.shift()!();
    }
  };
  const pumpLater = (): void => {
    if (deferred || tail === base) return;
    deferred = true;
    setImmediate(() => {
      deferred = false;
      pump(true);
    });
  };
  return <T>(task: () => Promise<T>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      waiting.push(() => {
        // A task that throws instead of rejecting settles the same way.
        const settled = new Promise<T>((run) => run(task()));
        settled.then(resolve, reject).finally(() => {
          active -= 1;
          pump(true);
        });
      });
      pump(false);
      if (waiting.length > 0) pumpLater();
    });
}
