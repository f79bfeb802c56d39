/**
 * The cores this process may use: `os.availableParallelism()` (the CPUs it
 * may run on), lowered to its control group's CPU quota when one is set (a
 * container's `--cpus`, a Kubernetes CPU limit, a systemd `CPUQuota=`).
 *
 * Why: Node 20's `availableParallelism()` (libuv 1.46) counts the CPUs of
 * the machine, not the quota: a CI job limited to 2 CPUs on a 64-core node
 * would start 64 hash workers (hashing/pool.ts) that the kernel then
 * throttles, each with its own memory, and measure its cores' use against
 * 64 (installer/download-queue.ts). libuv 1.49 (Node 22) applies the quota
 * itself, rounding a fractional one down (libuv/libuv#4278, #4746); this
 * does the same, so provkit sizes its work alike on every Node it runs on.
 *
 * The rule (as libuv's and Rust's `available_parallelism`): the control
 * group of this process is read from `/proc/self/cgroup`; its quota and
 * those of its ancestors (a limit on a parent binds its children) are read
 * from the cgroup file system, cgroup v2 (`cpu.max`: `max 100000` or
 * `200000 100000`) or v1 (`cpu.cfs_quota_us`, −1 for none, over
 * `cpu.cfs_period_us`) under `/sys/fs/cgroup`. A path that is not there (a
 * container that sees its host's path but has its own group mounted as the
 * root) is read at the mount's root. The least quota ÷ period, rounded
 * down, at least 1, bounds the count. Anything unreadable means no quota.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

/** Reads a text file, or undefined when it cannot be read. */
export type ReadText = (path: string) => string | undefined;

const readText: ReadText = (path) => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
};

let cached: number | undefined;

/**
 * The cores this process may use (the module comment): computed once per
 * process. The default of the hash pool's workers and of the download
 * queue's streams.
 */
export function usableCores(): number {
  cached ??= coresUnderQuota(availableParallelism(), readText);
  return cached;
}

/**
 * `cpus` (at least 1) lowered to the CPU quota that `read` finds for this
 * process's control group (the module comment), at least 1.
 */
export function coresUnderQuota(cpus: number, read: ReadText): number {
  const quota = cgroupQuota(read);
  return Math.max(1, quota === undefined ? cpus : Math.min(cpus, Math.floor(quota)));
}

/** The least CPU quota (in CPUs) of this process's control group and its ancestors, or undefined for none. */
function cgroupQuota(read: ReadText): number | undefined {
  const groups = read('/proc/self/cgroup');
  if (groups === undefined) return undefined;
  for (const line of groups.split('\n')) {
    // "hierarchy-ID:controller-list:path"; the path may itself hold ':'.
    const first = line.indexOf(':');
    const second = line.indexOf(':', first + 1);
    if (first < 0 || second < 0) continue;
    const controllers = line.slice(first + 1, second);
    const path = line.slice(second + 1);
    if (!path.startsWith('/')) continue;
    if (line.slice(0, first) === '0' && controllers === '') {
      const q = leastQuota(read, '/sys/fs/cgroup', path, (dir) => v2Quota(read(`${dir}/cpu.max`)));
      if (q !== undefined) return q;
    } else if (controllers.split(',').includes('cpu')) {
      for (const mount of [`/sys/fs/cgroup/${controllers}`, '/sys/fs/cgroup/cpu,cpuacct', '/sys/fs/cgroup/cpu']) {
        const q = leastQuota(read, mount, path, (dir) =>
          v1Quota(read(`${dir}/cpu.cfs_quota_us`), read(`${dir}/cpu.cfs_period_us`)),
        );
        if (q !== undefined) return q;
      }
    }
  }
  return undefined;
}

/**
 * The least quota of the group at `path` under `mount` and of its ancestors;
 * when the group's directory is not there, the quota at the mount's root.
 */
function leastQuota(
  read: ReadText,
  mount: string,
  path: string,
  quotaOf: (dir: string) => number | null | undefined,
): number | undefined {
  const parts = path.split('/').filter((p) => p !== '' && p !== '.' && p !== '..');
  let least: number | undefined;
  let found = false;
  for (let n = parts.length; n >= 0; n -= 1) {
    const dir = n === 0 ? mount : `${mount}/${parts.slice(0, n).join('/')}`;
    const q = quotaOf(dir);
    // undefined: no such file (not this group's mount, or not mounted here); null: present, no quota.
    if (q === undefined) continue;
    found = true;
    if (q !== null) least = least === undefined ? q : Math.min(least, q);
  }
  return found ? least : undefined;
}

/** cgroup v2 `cpu.max`: `$MAX $PERIOD`, `max` for none. */
function v2Quota(text: string | undefined): number | null | undefined {
  if (text === undefined) return undefined;
  const [max, period] = text.trim().split(/\s+/);
  if (max === 'max') return null;
  const q = Number(max);
  const p = Number(period ?? 100000);
  return Number.isFinite(q) && q > 0 && Number.isFinite(p) && p > 0 ? q / p : null;
}

/** cgroup v1 `cpu.cfs_quota_us` (−1 for none) over `cpu.cfs_period_us`. */
function v1Quota(quota: string | undefined, period: string | undefined): number | null | undefined {
  if (quota === undefined) return undefined;
  const q = Number(quota.trim());
  const p = Number(period?.trim());
  return Number.isFinite(q) && q > 0 && Number.isFinite(p) && p > 0 ? q / p : null;
}
