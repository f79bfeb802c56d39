// The cores a process may use (src/fs/cores.ts): the CPUs, lowered to the
// CPU quota of its control group and of the group's ancestors, cgroup v2 and
// v1, as libuv 1.49 (Node 22) counts them. The files are those the kernel
// writes (Documentation/admin-guide/cgroup-v2.rst "cpu.max"; cgroup-v1
// "cfs_quota_us"); a real group under a real quota is test/e2e/cores.test.ts.
import { describe, expect, it } from 'vitest';

import { coresUnderQuota, type ReadText, usableCores } from '../../src/fs/cores.js';

/** A file system of the given files; anything else cannot be read. */
const files =
  (map: Record<string, string>): ReadText =>
  (path) =>
    map[path];

describe('coresUnderQuota', () => {
  it('cgroup v2: a quota of 2 CPUs (200000 per 100000 µs) on a 64-CPU machine gives 2', () => {
    const read = files({
      '/proc/self/cgroup': '0::/kubepods/pod1/ctr\n',
      '/sys/fs/cgroup/kubepods/pod1/ctr/cpu.max': '200000 100000\n',
    });
    expect(coresUnderQuota(64, read)).toBe(2);
  });

  it('cgroup v2: no quota ("max") keeps the CPUs', () => {
    const read = files({
      '/proc/self/cgroup': '0::/user.slice\n',
      '/sys/fs/cgroup/user.slice/cpu.max': 'max 100000\n',
    });
    expect(coresUnderQuota(8, read)).toBe(8);
  });

  it("cgroup v2: a parent's quota binds its children; the least along the path wins", () => {
    const read = files({
      '/proc/self/cgroup': '0::/a/b/c\n',
      '/sys/fs/cgroup/a/cpu.max': '300000 100000\n',
      '/sys/fs/cgroup/a/b/cpu.max': 'max 100000\n',
      '/sys/fs/cgroup/a/b/c/cpu.max': '800000 100000\n',
    });
    expect(coresUnderQuota(16, read)).toBe(3);
  });

  it('a fractional quota is rounded down (2.5 CPUs: 2), and below one CPU still gives 1', () => {
    const at = (max: string): ReadText =>
      files({ '/proc/self/cgroup': '0::/\n', '/sys/fs/cgroup/cpu.max': `${max} 100000\n` });
    expect(coresUnderQuota(64, at('250000'))).toBe(2);
    expect(coresUnderQuota(64, at('50000'))).toBe(1);
  });

  it("a group path the container cannot see (the host's, without a cgroup namespace) is read at the mount's root", () => {
    const read = files({
      '/proc/self/cgroup': '0::/system.slice/docker-0123abcd.scope\n',
      '/sys/fs/cgroup/cpu.max': '150000 100000\n',
    });
    expect(coresUnderQuota(32, read)).toBe(1);
  });

  it('the quota never raises the count: 4 CPUs under a quota of 8 stay 4', () => {
    const read = files({ '/proc/self/cgroup': '0::/\n', '/sys/fs/cgroup/cpu.max': '800000 100000\n' });
    expect(coresUnderQuota(4, read)).toBe(4);
  });

  it('cgroup v1: cpu.cfs_quota_us over cpu.cfs_period_us under the cpu,cpuacct mount; -1 is no quota', () => {
    const v1 = (quota: string): ReadText =>
      files({
        '/proc/self/cgroup': '12:pids:/docker/abc\n4:cpu,cpuacct:/docker/abc\n1:name=systemd:/docker/abc\n',
        '/sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us': `${quota}\n`,
        '/sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us': '100000\n',
        '/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us': '-1\n',
        '/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us': '100000\n',
      });
    expect(coresUnderQuota(48, v1('400000'))).toBe(4);
    expect(coresUnderQuota(48, v1('-1'))).toBe(48);
  });

  it('a hybrid host (v1 controllers and an empty v2 hierarchy) takes the v1 quota', () => {
    const read = files({
      '/proc/self/cgroup': '4:cpu,cpuacct:/ci\n0::/ci\n',
      '/sys/fs/cgroup/cpu,cpuacct/ci/cpu.cfs_quota_us': '200000\n',
      '/sys/fs/cgroup/cpu,cpuacct/ci/cpu.cfs_period_us': '100000\n',
    });
    expect(coresUnderQuota(12, read)).toBe(2);
  });

  it('nothing readable (no /proc, another OS, garbage in the files) keeps the CPUs, and never gives less than 1', () => {
    expect(coresUnderQuota(6, files({}))).toBe(6);
    const garbage = files({ '/proc/self/cgroup': 'not a cgroup line\n0::/\n', '/sys/fs/cgroup/cpu.max': 'lots 0\n' });
    expect(coresUnderQuota(6, garbage)).toBe(6);
    expect(coresUnderQuota(0, files({}))).toBe(1);
  });

  it('usableCores on this machine is at least 1 and at most the CPUs Node counts', async () => {
    const { availableParallelism } = await import('node:os');
    expect(usableCores()).toBeGreaterThanOrEqual(1);
    expect(usableCores()).toBeLessThanOrEqual(availableParallelism());
  });
});
