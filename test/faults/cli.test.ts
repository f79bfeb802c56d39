// The fault matrix of `provkit lock` and `provkit mirror` against the fake
// registry: each fault is armed, the command runs (in-process), and then the
// lock file or mirror must be byte-identical to before or to a clean run's
// result, no temporary file may remain, and a plain re-run must succeed.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import type { FakeRegistry } from '../support/servers/registry.js';
import type { Fault } from '../support/servers/http-server.js';
import { recordFault } from './report.js';
import { hermeticEnv, leftovers, mainTf, PLAT, runInProcess, snapshot, startBigRegistry, V } from './support.js';

let reg: FakeRegistry;
let base: string;
let env: Record<string, string>;
/** Results of a clean run, the "fully updated" states. */
let fullLock: string;
let fullMirror: Awaited<ReturnType<typeof snapshot>>;
const OLD_LOCK =
  '# This file is maintained automatically by "tofu init".\n# Manual edits may be lost in future updates.\n';

beforeAll(async () => {
  reg = await startBigRegistry();
  base = await mkdtemp(join(tmpdir(), 'provkit-faults-cli-'));
  env = await hermeticEnv(base, reg.caPath, 'connect=2000,idle=300,backoff=5,retry-after-max=50');
  const p = await project('clean');
  expect((await runInProcess(['lock', `-platform=${PLAT}`], p, env)).code).toBe(0);
  fullLock = await readFile(join(p, '.terraform.lock.hcl'), 'utf8');
  expect((await runInProcess(['mirror', `-platform=${PLAT}`, join(p, 'out')], p, env)).code).toBe(0);
  fullMirror = await snapshot(join(p, 'out'));
});
afterAll(async () => {
  await reg.close();
  await rm(base, { recursive: true, force: true });
});
afterEach(() => {
  reg.clearFaults();
  reg.archives.clearFaults();
  reg.setRanges(false);
});

let n = 0;
async function project(name = `p${n++}`): Promise<string> {
  const p = join(base, name);
  await mkdir(p, { recursive: true });
  await writeFile(join(p, 'main.tf'), mainTf(reg.host));
  return p;
}

const archive = (): string => reg.paths.archive('acme', 'demo', V, PLAT);
const arm = (path: () => string, fault: Fault) => (r: FakeRegistry) => r.setFault(path(), fault);

interface Case {
  name: string;
  arm: (r: FakeRegistry) => void;
  /** Whether the run must succeed despite the fault. */
  transient: boolean;
  ranges?: boolean;
}

const CASES: Case[] = [
  {
    name: 'connection dropped mid-archive once (Range resume)',
    arm: arm(archive, { kind: 'drop', after: 1024 * 1024, times: 1 }),
    transient: true,
    ranges: true,
  },
  {
    name: 'connection dropped mid-archive once (no Range)',
    arm: arm(archive, { kind: 'drop', after: 1024 * 1024, times: 1 }),
    transient: true,
  },
  {
    name: 'archive stalls past the idle timeout once',
    arm: arm(archive, { kind: 'stall', phase: 'body', times: 1 }),
    transient: true,
  },
  {
    name: '503 burst (2) on the archive',
    arm: arm(archive, { kind: 'status', status: 503, times: 2 }),
    transient: true,
  },
  {
    name: '429 with Retry-After on the download metadata',
    arm: arm(() => reg.paths.download('acme', 'demo', V, PLAT), {
      kind: 'status',
      status: 429,
      headers: { 'retry-after': '0' },
      times: 1,
    }),
    transient: true,
  },
  {
    name: '502 once on the versions list',
    arm: arm(() => reg.paths.versions('acme', 'demo'), { kind: 'status', status: 502, times: 1 }),
    transient: true,
  },
  {
    name: 'wrong Content-Length on the archive once',
    arm: arm(archive, { kind: 'wrong-length', delta: 9, times: 1 }),
    transient: true,
  },
  {
    name: 'connection dropped after 64 KiB on every attempt',
    arm: arm(archive, { kind: 'drop', after: 64 * 1024 }),
    transient: false,
    ranges: true,
  },
  { name: 'archive stalls on every attempt', arm: arm(archive, { kind: 'stall', phase: 'body' }), transient: false },
  { name: '500 on every attempt', arm: arm(archive, { kind: 'status', status: 500 }), transient: false },
  { name: 'truncated archive (close-delimited)', arm: arm(archive, { kind: 'truncate' }), transient: false },
  {
    name: 'oversized archive (junk appended)',
    arm: arm(archive, { kind: 'replace', body: (b) => Buffer.concat([b, Buffer.alloc(1000, 1)]) }),
    transient: false,
  },
  {
    name: 'tampered archive (one byte flipped)',
    arm: (r) => r.tamperArchive('acme', 'demo', V, PLAT),
    transient: false,
  },
  { name: 'bad SHA256SUMS signature', arm: (r) => r.badSignature('acme', 'demo', V), transient: false },
  { name: 'SHA256SUMS signed by an unlisted key', arm: (r) => r.unlistedKey('acme', 'demo', V), transient: false },
  {
    name: 'tampered SHA256SUMS',
    arm: arm(() => reg.paths.shasums('acme', 'demo', V), { kind: 'tamper' }),
    transient: false,
  },
];

function firstCode(text: string): string {
  return (
    /\b(NET_[A-Z_]+|CHECKSUM_MISMATCH|SIGNATURE_INVALID|incorrect response size|unsuccessful request|no data from|checksum|signature)\b/i.exec(
      text,
    )?.[0] ?? 'error'
  );
}

describe.each(['lock', 'mirror'] as const)('provkit %s', (command) => {
  it.each(CASES)('$name', async (c) => {
    const p = await project();
    const lockPath = join(p, '.terraform.lock.hcl');
    const target = join(p, 'out');
    await writeFile(lockPath, OLD_LOCK);
    const state = async (): Promise<unknown> => (command === 'lock' ? readFile(lockPath, 'utf8') : snapshot(target));
    const before = await state();
    const full = command === 'lock' ? fullLock : fullMirror;
    const args = command === 'lock' ? ['lock', `-platform=${PLAT}`] : ['mirror', `-platform=${PLAT}`, target];
    if (c.ranges) reg.setRanges(true);
    const logStart = reg.log.length;
    c.arm(reg);
    const r = await runInProcess(args, p, env);
    reg.clearFaults();
    const after = await state();
    expect(await leftovers(p, join(base, 'cache'))).toEqual([]);
    const resumed = reg.log.slice(logStart).some((q) => q.status === 206);
    if (c.transient) {
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(after).toEqual(full);
    } else {
      expect(r.code).toBe(1);
      expect(after).toEqual(before);
    }
    const again = await runInProcess(args, p, env);
    expect(again.code).toBe(0);
    expect(await state()).toEqual(full);
    expect(await leftovers(p)).toEqual([]);
    recordFault({
      group: 'command',
      fault: c.name,
      command: `provkit ${command}`,
      outcome:
        r.code === 0 ? `exit 0${resumed ? ' (resumed with Range)' : ''}` : `exit ${r.code}: ${firstCode(r.stderr)}`,
      state:
        after === before ? 'unchanged' : JSON.stringify(after) === JSON.stringify(full) ? 'fully updated' : 'MIXED',
      rerun: again.code === 0 ? 'ok' : `exit ${again.code}`,
    });
  });
});
