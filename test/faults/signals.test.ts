// SIGINT and SIGTERM to a child `provkit lock`, `mirror` and `install` at
// several points: while the registry's version list, the SHA256SUMS or an
// archive body hangs, and at fixed delays after the start. After each: the
// exit code is 130/143 (or 0 when the run had finished), the lock file and
// the mirror are byte-identical to before or to a clean run's result, no
// temporary file remains (project, mirror, cache, TMPDIR), and a plain re-run
// completes.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import type { Fault } from '../support/servers/http-server.js';
import type { FakeRegistry } from '../support/servers/registry.js';
import { recordFault } from './report.js';
import {
  hermeticEnv,
  leftovers,
  mainTf,
  PLAT,
  runInProcess,
  snapshot,
  spawnCli,
  startBigRegistry,
  V,
  waitFor,
} from './support.js';

let reg: FakeRegistry;
let base: string;
let env: Record<string, string>;
const full: Record<string, unknown> = {};
const OLD_LOCK =
  '# This file is maintained automatically by "tofu init".\n# Manual edits may be lost in future updates.\n';
type Command = 'lock' | 'mirror' | 'install';

const argsFor = (command: Command, p: string): string[] =>
  command === 'lock'
    ? ['lock', `-platform=${PLAT}`]
    : command === 'mirror'
      ? ['mirror', `-platform=${PLAT}`, join(p, 'out')]
      : ['install', `-platform=${PLAT}`];

/** What must be all-or-nothing: the lock file, and the mirror for `mirror`. */
async function state(command: Command, p: string): Promise<unknown> {
  const lock = await readFile(join(p, '.terraform.lock.hcl'), 'utf8').catch(() => 'absent');
  return command === 'mirror' ? { lock, mirror: await snapshot(join(p, 'out')) } : { lock };
}

let n = 0;
async function project(): Promise<string> {
  const p = join(base, `p${n++}`);
  await mkdir(join(p, 'tmp'), { recursive: true });
  await writeFile(join(p, 'main.tf'), mainTf(reg.host));
  await writeFile(join(p, '.terraform.lock.hcl'), OLD_LOCK);
  return p;
}

beforeAll(async () => {
  reg = await startBigRegistry();
  reg.setRanges(true);
  base = await mkdtemp(join(tmpdir(), 'provkit-faults-sig-'));
  env = await hermeticEnv(base, reg.caPath, 'connect=20000,idle=20000,backoff=5');
  for (const command of ['lock', 'mirror', 'install'] as const) {
    const p = await project();
    const r = await runInProcess(argsFor(command, p), p, env);
    expect(r.stderr).toBe('');
    // The -platform of install is this machine's; on another machine only the lock part is compared.
    full[command] = await state(command, p);
  }
});
afterAll(async () => {
  await reg.close();
  await rm(base, { recursive: true, force: true });
});
afterEach(() => {
  reg.clearFaults();
});

interface Point {
  name: string;
  /** A hang to wait in, or a delay after the start. */
  hang?: { path: () => string; fault: Fault };
  delayMs?: number;
}

const POINTS: Point[] = [
  {
    name: 'while the version list hangs',
    hang: { path: () => reg.paths.versions('acme', 'demo'), fault: { kind: 'stall', phase: 'headers' } },
  },
  {
    name: 'while SHA256SUMS hangs',
    hang: { path: () => reg.paths.shasums('acme', 'demo', V), fault: { kind: 'stall', phase: 'headers' } },
  },
  {
    name: 'mid-archive (1 MiB of 2 MiB received)',
    hang: { path: () => reg.paths.archive('acme', 'demo', V, PLAT), fault: { kind: 'stall', phase: 'body' } },
  },
  { name: '100 ms after the start', delayMs: 100 },
  { name: '400 ms after the start', delayMs: 400 },
  { name: '1 s after the start', delayMs: 1000 },
];

describe.each(['lock', 'mirror', 'install'] as const)('provkit %s', (command) => {
  it.each(POINTS.flatMap((point) => (['SIGINT', 'SIGTERM'] as const).map((signal) => ({ point, signal }))))(
    '$signal $point.name',
    async ({ point, signal }) => {
      if (command === 'install' && process.platform !== 'linux') return;
      const p = await project();
      const before = await state(command, p);
      const childEnv = { ...env, TMPDIR: join(p, 'tmp') };
      const logStart = reg.log.length;
      if (point.hang) reg.setFault(point.hang.path(), point.hang.fault);
      const run = spawnCli(argsFor(command, p), p, childEnv);
      if (point.hang) {
        const path = point.hang.path();
        let exited = false;
        void run.done.then(() => (exited = true));
        await waitFor(
          () => exited || reg.log.slice(logStart).some((q) => q.pathname === path),
          20_000,
          `the request for ${path}`,
        );
        // A child that ended before reaching the hang is a failure of its own: show why.
        expect(exited ? run.output() : '').toBe('');
        // Let the hang settle (headers or half the body sent).
        await new Promise((r) => setTimeout(r, 50));
      } else {
        await new Promise((r) => setTimeout(r, point.delayMs));
      }
      run.child.kill(signal);
      const r = await run.done;
      reg.clearFaults();
      const after = await state(command, p);
      const expectCode = signal === 'SIGINT' ? 130 : 143;
      if (point.hang) expect(r.code, r.stdout + r.stderr).toBe(expectCode);
      else expect([0, expectCode], r.stdout + r.stderr).toContain(r.code);
      const same = JSON.stringify(after) === JSON.stringify(before);
      const complete = JSON.stringify(after) === JSON.stringify(full[command]);
      expect(same || complete, r.stdout + r.stderr).toBe(true);
      if (r.code !== 0) expect(same, `exit ${r.code}: ${r.stdout}${r.stderr}`).toBe(true);
      expect(await leftovers(p, join(base, 'cache'))).toEqual([]);
      const again = await runInProcess(argsFor(command, p), p, env);
      expect(again.code).toBe(0);
      expect(await state(command, p)).toEqual(full[command]);
      recordFault({
        group: 'signal',
        fault: `${signal} ${point.name}`,
        command: `provkit ${command}`,
        outcome:
          r.killedBy !== undefined
            ? `killed by ${r.killedBy} before provkit installed its handlers (exit ${r.code})`
            : `exit ${r.code}${r.code === 0 ? ' (had finished)' : ', interrupted cleanly'}`,
        state: same ? 'unchanged' : 'fully updated',
        rerun: again.code === 0 ? 'ok' : `exit ${again.code}`,
      });
    },
    60_000,
  );
});
