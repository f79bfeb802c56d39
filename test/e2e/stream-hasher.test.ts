// Issue 11 #11: the streamed hasher (hashing/zip-stream.ts, fed by the pool's
// tap while a package downloads) stopped taking bytes as soon as it met
// something it does not follow (not a zip, data before the first local
// header, a zip64 stored entry) and held the download through backpressure:
// every such package over 4 MiB stopped at exactly 4,194,304 bytes, at 0 %
// CPU, with neither the idle timeout nor the first SIGTERM able to end it.
// Each case below runs bin/provkit.js as a child against servers in another
// process (test/support/remote) and checks the outcome, the diagnostic and
// that nothing in progress is left behind.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { e2eWorkspace, runCli, startCli, type CliResult, type E2eWorkspace, packageHashes } from '../support/e2e.js';
import { startHost, type RemoteServer, type ServerHost } from '../support/remote/index.js';
import type { FakeProvider } from '../support/servers/packages.js';
import {
  largeMainTf,
  largePackage,
  lockHashes,
  packageName,
  PLATFORM,
  pseudoRandom,
  recordedHashes,
  sha256Hex,
  VERSION,
  writeLargeMirror,
  type LargeKind,
} from './fixtures/large-packages.js';

let host: ServerHost;
let reg: RemoteServer;
/** Holds the filesystem mirror; each test runs in a workspace of its own (see `beforeEach`), so one failure cannot leak into the next. */
let shared: E2eWorkspace;
let w: E2eWorkspace;
const TUNING = { PROVKIT_HTTP_TUNING: 'connect=5000,idle=3000,backoff=100' };
/** The packages, as served and as written to the filesystem mirror. */
const packages = new Map<LargeKind, Buffer>();
/** `provkit hash -json` of each valid package: the reference's lock h1 and the zip form. */
const hashed = new Map<LargeKind, { h1: string; zh: string; h1_zip: string }>();
/** A 10 MiB non-zip body, served with a stall after its first half. */
const STALLING = pseudoRandom('stalling', 10 * 1024 * 1024);

const provider = (type: string, zip: Buffer): FakeProvider => ({
  namespace: 'acme',
  type,
  versions: [{ version: VERSION, packages: [{ platform: PLATFORM, zip }] }],
});

beforeAll(async () => {
  for (const kind of ['wide', 'sfx', 'junk'] as const) packages.set(kind, await largePackage(kind));
  host = await startHost();
  reg = await host.registry({
    providers: [...[...packages].map(([kind, zip]) => provider(kind, zip)), provider('stalling', STALLING)],
  });
  shared = e2eWorkspace(reg.caPath, TUNING);
  await writeLargeMirror(join(shared.base, 'fs-mirror'), ['wide', 'sfx', 'junk']);
  for (const kind of ['wide', 'sfx'] as const) {
    const r = await runCli(
      ['hash', '-json', join(shared.base, 'fs-mirror', 'registry.example.test', 'acme', kind, packageName(kind))],
      { cwd: shared.base, env: shared.env },
    );
    expect(r.stderr).toBe('');
    hashed.set(kind, packageHashes<{ h1: string; zh: string; h1_zip: string }>(r.stdout)[0]!);
  }
}, 120_000);
beforeEach(() => {
  w = e2eWorkspace(reg.caPath, TUNING);
});
afterEach(() => {
  w.remove();
});
afterAll(async () => {
  await host.close();
  shared.remove();
});

/** A hang shows as a killed child, not as a test timeout. */
const RUN = { timeoutMs: 40_000 };

function expectClean(r: CliResult): void {
  expect(r.timedOut).toBe(false);
  expect(w.tmpLeftovers()).toEqual([]);
  expect(w.leftovers()).toEqual([]);
}

function expectFailure(r: CliResult, ...texts: string[]): void {
  expectClean(r);
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(/^(│ )?Error: /m);
  for (const t of texts) expect(r.stderr).toContain(t);
  expect(r.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
}

function versionJson(out: string, type: string): { archives: Record<string, { hashes: string[]; url: string }> } {
  return JSON.parse(readFileSync(join(out, reg.host, 'acme', type, `${VERSION}.json`), 'utf8')) as {
    archives: Record<string, { hashes: string[]; url: string }>;
  };
}

const project = (type: string, source = reg.host): string =>
  w.project(type, { 'main.tf': largeMainTf([type as LargeKind], source) });

describe(
  'a package the streamed hasher cannot follow (not a zip, a zip behind a stub, zip64, a stalled body) never stalls the download',
  { timeout: 60_000 },
  () => {
    describe('from the registry', () => {
      for (const command of ['lock', 'install'] as const) {
        it(`${command}: a 5 MiB body that is not a zip → the zip error, exit 1, nothing left`, async () => {
          const p = project('junk');
          const args = command === 'lock' ? ['lock', `-platform=${PLATFORM}`] : ['install', `-platform=${PLATFORM}`];
          const r = await runCli(args, { cwd: p, env: w.env, ...RUN });
          expectFailure(r, `${reg.host}/acme/junk`, 'not a valid zip file');
        });
      }

      for (const flavor of ['terraform', 'tofu'] as const) {
        it(`mirror (${flavor} flavor): a 5 MiB body that is not a zip → the zip error, exit 1, no mirror, nothing left`, async () => {
          const p = project('junk');
          const r = await runCli(['mirror', `-platform=${PLATFORM}`, 'out'], {
            cwd: p,
            env: { ...w.env, PROVKIT_FLAVOR: flavor },
            ...RUN,
          });
          expectFailure(r, `${reg.host}/acme/junk`, 'not a valid zip file');
          expect(existsSync(join(p, 'out'))).toBe(false);
        });
      }

      it('lock: a valid zip behind 5 MiB of stub → exit 0 with the hashes `provkit hash` and terraform give', async () => {
        const p = project('sfx');
        const r = await runCli(['lock', `-platform=${PLATFORM}`], { cwd: p, env: w.env, ...RUN });
        expectClean(r);
        expect(r.stderr).toBe('');
        expect(r.code).toBe(0);
        const hashes = lockHashes(readFileSync(join(p, '.terraform.lock.hcl'), 'utf8'))['sfx'];
        expect(hashes).toContain(hashed.get('sfx')!.h1);
        expect(hashes).toContain(recordedHashes().packages.sfx!.hashes[0]);
        expect(hashes).toContain(`zh:${sha256Hex(packages.get('sfx')!)}`);
      });

      it('mirror (terraform flavor): a valid zip behind 5 MiB of stub → the archive byte for byte and its zip-form h1', async () => {
        const p = project('sfx');
        const r = await runCli(['mirror', `-platform=${PLATFORM}`, 'out'], {
          cwd: p,
          env: { ...w.env, PROVKIT_FLAVOR: 'terraform' },
          ...RUN,
        });
        expectClean(r);
        expect(r.stderr).toBe('');
        expect(r.code).toBe(0);
        const doc = versionJson(join(p, 'out'), 'sfx');
        expect(doc.archives[PLATFORM]?.hashes).toEqual([hashed.get('sfx')!.h1_zip]);
        expect(sha256Hex(readFileSync(join(p, 'out', reg.host, 'acme', 'sfx', packageName('sfx'))))).toBe(
          sha256Hex(packages.get('sfx')!),
        );
      });

      it('lock: a zip64 package with a 6 MiB stored entry → exit 0 with the hashes terraform gives', async () => {
        const p = project('wide');
        const r = await runCli(['lock', `-platform=${PLATFORM}`], { cwd: p, env: w.env, ...RUN });
        expectClean(r);
        expect(r.stderr).toBe('');
        expect(r.code).toBe(0);
        const hashes = lockHashes(readFileSync(join(p, '.terraform.lock.hcl'), 'utf8'))['wide'];
        expect(hashes).toContain(recordedHashes().packages.wide!.hashes[0]);
        expect(hashes).toContain(`zh:${sha256Hex(packages.get('wide')!)}`);
      });

      it('lock: a body that stops arriving after 5 MiB → the idle timeout ends it, exit 1', async () => {
        const p = project('stalling');
        await reg.clearFaults();
        await reg.setFault(await reg.path('archive', 'acme', 'stalling', VERSION, PLATFORM), {
          kind: 'stall',
          phase: 'body',
        });
        const r = await runCli(['lock', `-platform=${PLATFORM}`], {
          cwd: p,
          env: { ...w.env, PROVKIT_HTTP_TUNING: 'connect=5000,idle=1500,retries=0' },
          ...RUN,
        });
        await reg.clearFaults();
        expectFailure(r, `${reg.host}/acme/stalling`, 'no data from', 'for 1500 ms');
      });

      for (const command of ['lock', 'mirror', 'install'] as const) {
        it(`${command}: SIGTERM while a package body is past 4 MiB → exit 143, nothing left`, async () => {
          const p = project('stalling');
          await reg.clearFaults();
          const archive = await reg.path('archive', 'acme', 'stalling', VERSION, PLATFORM);
          await reg.setFault(archive, { kind: 'stall', phase: 'body' });
          await reg.mark();
          const args =
            command === 'lock'
              ? ['lock', `-platform=${PLATFORM}`]
              : command === 'mirror'
                ? ['mirror', `-platform=${PLATFORM}`, 'out']
                : ['install', `-platform=${PLATFORM}`];
          // No idle timeout to race the signal: only SIGTERM can end this run.
          const cli = startCli(args, {
            cwd: p,
            env: { ...w.env, PROVKIT_HTTP_TUNING: 'connect=5000,idle=0,retries=0' },
            ...RUN,
          });
          for (let i = 0; i < 400 && !(await reg.log()).some((q) => q.pathname === archive); i++)
            await new Promise((r) => setTimeout(r, 25));
          // The server sends 5 MiB at once, then nothing: give the client the time to take them in.
          await new Promise((r) => setTimeout(r, 1500));
          cli.child.kill('SIGTERM');
          const r = await cli.result;
          await reg.clearFaults();
          expectClean(r);
          expect(r.code).toBe(143);
          expect(r.stderr).toContain('interrupted');
          expect(r.stderr).toContain('nothing was changed');
        });
      }
    });

    describe('from a packed filesystem mirror (-fs-mirror)', () => {
      const fsMirror = (): string => `-fs-mirror=${join(shared.base, 'fs-mirror')}`;

      it('lock: a 5 MiB file that is not a zip → the zip error, exit 1, nothing left', async () => {
        const p = project('junk', 'registry.example.test');
        const r = await runCli(['lock', fsMirror(), `-platform=${PLATFORM}`], { cwd: p, env: w.env, ...RUN });
        expectFailure(r, 'registry.example.test/acme/junk', 'not a valid zip file');
      });

      it('mirror: a 5 MiB file that is not a zip → the zip error, exit 1, no mirror, nothing left', async () => {
        const p = project('junk', 'registry.example.test');
        const r = await runCli(['mirror', fsMirror(), `-platform=${PLATFORM}`, 'out'], { cwd: p, env: w.env, ...RUN });
        expectFailure(r, packageName('junk'), 'not a valid zip file');
        expect(existsSync(join(p, 'out'))).toBe(false);
      });

      it('lock: a valid zip64 package → exit 0 with the h1 terraform recorded', async () => {
        const p = project('wide', 'registry.example.test');
        const r = await runCli(['lock', fsMirror(), `-platform=${PLATFORM}`], { cwd: p, env: w.env, ...RUN });
        expectClean(r);
        expect(r.stderr).toBe('');
        expect(r.code).toBe(0);
        const recorded = recordedHashes().packages.wide!;
        expect(recorded.sha256).toBe(sha256Hex(packages.get('wide')!));
        expect(lockHashes(readFileSync(join(p, '.terraform.lock.hcl'), 'utf8'))['wide']).toEqual(recorded.hashes);
        expect(recorded.hashes).toEqual([hashed.get('wide')!.h1]);
      });

      it('mirror: a valid zip64 package → copied byte for byte with its zip-form h1', async () => {
        const p = project('wide', 'registry.example.test');
        const r = await runCli(['mirror', fsMirror(), `-platform=${PLATFORM}`, 'out'], { cwd: p, env: w.env, ...RUN });
        expectClean(r);
        expect(r.stderr).toBe('');
        expect(r.code).toBe(0);
        const out = join(p, 'out', 'registry.example.test', 'acme', 'wide');
        expect(sha256Hex(readFileSync(join(out, packageName('wide'))))).toBe(sha256Hex(packages.get('wide')!));
        const doc = JSON.parse(readFileSync(join(out, `${VERSION}.json`), 'utf8')) as {
          archives: Record<string, { hashes: string[] }>;
        };
        expect(doc.archives[PLATFORM]?.hashes).toEqual([hashed.get('wide')!.h1_zip]);
      });

      it('lock and mirror: a valid zip behind 5 MiB of stub → exit 0 with the hashes terraform recorded', async () => {
        const p = project('sfx', 'registry.example.test');
        const r = await runCli(['lock', fsMirror(), `-platform=${PLATFORM}`], { cwd: p, env: w.env, ...RUN });
        expectClean(r);
        expect(r.code).toBe(0);
        const recorded = recordedHashes().packages.sfx!;
        expect(recorded.sha256).toBe(sha256Hex(packages.get('sfx')!));
        expect(lockHashes(readFileSync(join(p, '.terraform.lock.hcl'), 'utf8'))['sfx']).toEqual(recorded.hashes);
        // The lock now exists; mirror follows it.
        const m = await runCli(['mirror', fsMirror(), `-platform=${PLATFORM}`, 'out'], { cwd: p, env: w.env, ...RUN });
        expectClean(m);
        expect(m.stderr).toBe('');
        expect(m.code).toBe(0);
      });
    });
  },
);
