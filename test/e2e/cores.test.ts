// A real control group under a real CPU quota (src/fs/cores.ts): a process
// started in a group limited to 1 CPU sizes its hash pool for 1 core, on a
// machine with more. Needs root and a writable cgroup file system (v1's cpu
// controller or v2 with cpu enabled): skipped elsewhere, with the reason in
// the test's name. The file formats are pinned by test/fs/cores.test.ts.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { afterAll, describe, expect, it } from 'vitest';

import { usableCores } from '../../src/fs/cores.js';

const dist = fileURLToPath(new URL('../../dist/', import.meta.url));

/** A new group with a quota of 1 CPU, or why there is none. */
function makeGroup(): { dir: string } | { reason: string } {
  if (process.platform !== 'linux') return { reason: 'not Linux' };
  if (process.getuid?.() !== 0) return { reason: 'not root' };
  const name = `provkit-cores-test-${process.pid}`;
  const v2 = existsSync('/sys/fs/cgroup/cgroup.controllers');
  const base = v2
    ? '/sys/fs/cgroup'
    : ['/sys/fs/cgroup/cpu,cpuacct', '/sys/fs/cgroup/cpu'].find((d) => existsSync(`${d}/cpu.cfs_quota_us`));
  if (base === undefined) return { reason: 'no cgroup cpu controller mounted' };
  const dir = `${base}/${name}`;
  try {
    if (v2) {
      // The machine's cgroup set-up is not this test's to change: without the cpu controller enabled, skip.
      if (!readFileSync(`${base}/cgroup.subtree_control`, 'utf8').split(/\s+/).includes('cpu'))
        return { reason: 'cgroup v2 without the cpu controller enabled' };
      mkdirSync(dir);
      writeFileSync(`${dir}/cpu.max`, '100000 100000');
    } else {
      mkdirSync(dir);
      writeFileSync(`${dir}/cpu.cfs_period_us`, '100000');
      writeFileSync(`${dir}/cpu.cfs_quota_us`, '100000');
    }
    // A process must be able to join it (a delegated or read-only hierarchy may refuse): else skip.
    const join = spawnSync('sh', ['-c', `echo $$ > ${dir}/cgroup.procs`], { encoding: 'utf8' });
    if (join.status !== 0) {
      rmdirSync(dir);
      return { reason: 'a process cannot join a new cgroup here' };
    }
    return { dir };
  } catch (err) {
    try {
      rmdirSync(dir);
    } catch {
      // Not made.
    }
    return { reason: `cgroup file system not writable (${(err as NodeJS.ErrnoException).code ?? 'error'})` };
  }
}

const group = usableCores() >= 2 ? makeGroup() : { reason: 'fewer than 2 cores' };

describe('cores under a real CPU quota', () => {
  afterAll(() => {
    if ('dir' in group) rmdirSync(group.dir);
  });

  it.skipIf(!('dir' in group))(
    `a process in a group limited to 1 CPU counts 1 core and its hash pool starts 1 worker's worth (${'reason' in group ? `skipped: ${group.reason}` : 'real group'})`,
    () => {
      const dir = (group as { dir: string }).dir;
      const script =
        `const { usableCores } = await import(${JSON.stringify(`${dist}fs/cores.js`)});` +
        `const { createHashPool } = await import(${JSON.stringify(`${dist}hashing/index.js`)});` +
        'const pool = createHashPool(); console.log(JSON.stringify({ cores: usableCores(), shareUpTo: pool.shareUpTo })); await pool.close();';
      const run = (inGroup: boolean): { cores: number; shareUpTo: number } => {
        const enter = inGroup ? `echo $$ > ${dir}/cgroup.procs && ` : '';
        const r = spawnSync('sh', ['-c', `${enter}exec "$0" --input-type=module -e "$1"`, process.execPath, script], {
          encoding: 'utf8',
        });
        expect(r.status, r.stderr).toBe(0);
        return JSON.parse(r.stdout) as { cores: number; shareUpTo: number };
      };
      // Outside the group: this process's cores (at least 2, or the test is skipped), the pool's tail share 2 × cores − 1.
      const outside = run(false);
      expect(outside.cores).toBe(usableCores());
      expect(outside.shareUpTo).toBe(2 * outside.cores - 1);
      // Inside: 1 core, 1 worker and no extra ones.
      expect(run(true)).toEqual({ cores: 1, shareUpTo: 1 });
    },
  );
});
