// A full disk: the mirror target and TMPDIR on a small tmpfs (needs root
// and mount(2); the tests are skipped where it cannot be mounted). A mirror
// run that hits ENOSPC leaves the target exactly as it was, a lock run leaves
// the lock file untouched, no temporary file remains, and once there is room
// a plain re-run completes.
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { FakeRegistry } from '../support/servers/registry.js';
import { recordFault } from './report.js';
import { leftovers, mainTf, PLAT, runInProcess, snapshot, spawnCli, startBigRegistry } from './support.js';

let base: string;
let disk: string;
let mounted = false;
let reg: FakeRegistry;
let env: Record<string, string>;

function mount(size: string, remount = false): void {
  execFileSync('mount', ['-t', 'tmpfs', '-o', `${remount ? 'remount,' : ''}size=${size}`, 'tmpfs', disk], {
    stdio: 'ignore',
  });
}

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'provkit-faults-disk-'));
  disk = join(base, 'disk');
  await mkdir(disk);
  try {
    if (process.platform !== 'linux') throw new Error('not linux');
    mount('3m');
    mounted = true;
  } catch {
    mounted = false;
  }
  reg = await startBigRegistry();
  await writeFile(join(base, 'empty.tfrc'), '');
  env = {
    SSL_CERT_FILE: reg.caPath,
    TF_CLI_CONFIG_FILE: join(base, 'empty.tfrc'),
    PROVKIT_FLAVOR: '',
    HOME: base,
    PROVKIT_CACHE_DIR: join(base, 'cache'),
    PROVKIT_HASH_STORE: 'off',
    PROVKIT_HTTP_TUNING: 'backoff=5',
  };
});
afterAll(async () => {
  await reg.close();
  if (mounted) {
    try {
      execFileSync('umount', [disk], { stdio: 'ignore' });
    } catch {
      // Busy or already gone: rm below may then fail on the mount point, which force ignores.
    }
  }
  await rm(base, { recursive: true, force: true });
});

describe('full disk', () => {
  it('mirror: ENOSPC while staging leaves the target as it was; a re-run with room completes', async (ctx) => {
    if (!mounted) ctx.skip();
    const p = join(base, 'm');
    await mkdir(p, { recursive: true });
    await writeFile(join(p, 'main.tf'), mainTf(reg.host));
    const target = join(disk, 'mirror');
    // One 2 MiB package fits in 3 MiB; a second one does not.
    expect((await runInProcess(['mirror', `-platform=${PLAT}`, target], p, env)).code).toBe(0);
    const before = await snapshot(target);
    const r = await runInProcess(['mirror', `-platform=${PLAT}`, '-platform=darwin_arm64', target], p, env);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/ENOSPC|no space/i);
    expect(await snapshot(target)).toEqual(before);
    expect(await leftovers(disk)).toEqual([]);
    mount('16m', true);
    try {
      const again = await runInProcess(['mirror', `-platform=${PLAT}`, '-platform=darwin_arm64', target], p, env);
      expect(again.code).toBe(0);
      expect(again.stdout).toContain('1 fetched, 1 already present');
      recordFault({
        group: 'disk',
        fault: 'mirror target on a full 3 MiB tmpfs (ENOSPC mid-download)',
        command: 'provkit mirror',
        outcome: `exit ${r.code}: IO (ENOSPC)`,
        state: 'unchanged',
        rerun: again.code === 0 ? 'ok (after making room)' : `exit ${again.code}`,
      });
    } finally {
      // A fresh, empty 3 MiB disk for the next test.
      execFileSync('umount', [disk], { stdio: 'ignore' });
      mount('3m');
    }
  });

  it('lock: ENOSPC in TMPDIR leaves the lock file untouched', async (ctx) => {
    if (!mounted) ctx.skip();
    const p = join(base, 'l');
    await mkdir(p, { recursive: true });
    await writeFile(join(p, 'main.tf'), mainTf(reg.host));
    await writeFile(join(p, '.terraform.lock.hcl'), '# before\n');
    // Fill the disk but for 512 KiB.
    await writeFile(join(disk, 'filler'), Buffer.alloc(3 * 1024 * 1024 - 512 * 1024));
    const tmp = join(disk, 'tmp');
    await mkdir(tmp);
    try {
      const r = await spawnCli(['lock', `-platform=${PLAT}`], p, { ...env, TMPDIR: tmp }).done;
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/ENOSPC|no space/i);
      expect(await readFile(join(p, '.terraform.lock.hcl'), 'utf8')).toBe('# before\n');
      expect(await leftovers(disk, p)).toEqual([]);
      const again = await runInProcess(['lock', `-platform=${PLAT}`], p, env);
      expect(again.code).toBe(0);
      recordFault({
        group: 'disk',
        fault: 'TMPDIR on a full tmpfs (ENOSPC while downloading)',
        command: 'provkit lock',
        outcome: `exit ${r.code}: IO (ENOSPC)`,
        state: 'unchanged',
        rerun: again.code === 0 ? 'ok (TMPDIR with room)' : `exit ${again.code}`,
      });
    } finally {
      await rm(join(disk, 'filler'), { force: true });
      await rm(tmp, { recursive: true, force: true });
    }
  });
});
