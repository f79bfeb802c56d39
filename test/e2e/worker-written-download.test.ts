// Issue 13: a downloaded archive is written by the hash worker that hashes it
// (hashing/pool.ts `WorkerFileSink`): the main thread gathers the body into
// blocks and transfers each one to the worker, which computes the zh:, writes
// the block at its place in the temporary file and digests the entries. These
// runs pin the download contract through that path, with bin/provkit.js as a
// child and the registry in another process: a body dropped mid-way resumes
// with Range (the kept prefix is fed to the worker's hashers, not written
// again) and still gives the hashes `provkit hash` computes from the package
// and the archive byte for byte; a body that keeps dropping fails with the
// diagnostic, exit 1 and nothing left behind.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { e2eWorkspace, runCli, type CliResult, type E2eWorkspace, packageHashes } from '../support/e2e.js';
import { startHost, type RemoteServer, type ServerHost } from '../support/remote/index.js';
import { buildZip } from '../support/zip-writer.js';
import { pseudoRandom, sha256Hex } from './fixtures/large-packages.js';

const TYPE = 'written';
const VERSION = '1.0.0';
const PLATFORM = 'linux_amd64';
const MiB = 1024 * 1024;

let host: ServerHost;
let reg: RemoteServer;
let w: E2eWorkspace;
let pkg: Buffer;
/** `provkit hash -json` of the package as served. */
let expected: { h1: string; zh: string; h1_zip: string };
let archivePath: string;

beforeAll(async () => {
  // ~9 MiB: a deflated binary (a 48 KiB pseudo-random pattern repeated, so
  // that deflate finds matches only across its 32 KiB window's edge: it stays
  // large), a stored entry, and a small file: a drop lands mid-entry.
  const pattern = pseudoRandom('worker-written', 48 * 1024);
  const binary = Buffer.concat([Buffer.from('#!/bin/sh\nexit 1\n'), ...Array.from({ length: 128 }, () => pattern)]);
  pkg = await buildZip([
    { name: `terraform-provider-${TYPE}_v${VERSION}`, data: binary, unixMode: 0o100755 },
    { name: 'data.bin', data: pseudoRandom('worker-written-stored', 3 * MiB), method: 0 },
    { name: 'README.md', data: 'written by the hash worker\n' },
  ]);
  host = await startHost();
  reg = await host.registry({
    providers: [
      { namespace: 'acme', type: TYPE, versions: [{ version: VERSION, packages: [{ platform: PLATFORM, zip: pkg }] }] },
    ],
  });
  archivePath = await reg.path('archive', 'acme', TYPE, VERSION, PLATFORM);
  const probe = e2eWorkspace(reg.caPath);
  const file = join(probe.base, 'pkg.zip');
  writeFileSync(file, pkg);
  const r = await runCli(['hash', '-json', file], { cwd: probe.base, env: probe.env });
  expect(r.stderr).toBe('');
  expected = packageHashes<typeof expected>(r.stdout)[0]!;
  probe.remove();
  expect(expected.zh).toBe(`zh:${sha256Hex(pkg)}`);
}, 120_000);
beforeEach(async () => {
  w = e2eWorkspace(reg.caPath, { PROVKIT_HTTP_TUNING: 'connect=5000,idle=3000,backoff=50', PROVKIT_HASH_STORE: 'off' });
  await reg.clearFaults();
  await reg.mark();
});
afterEach(async () => {
  await reg.setRanges(false);
  w.remove();
});
afterAll(async () => {
  await host?.close();
});

const RUN = { timeoutMs: 60_000 };
const mainTf = `terraform {\n  required_providers {\n    ${TYPE} = {\n      source = "REG/acme/${TYPE}"\n    }\n  }\n}\n`;
const project = (): string => w.project(TYPE, { 'main.tf': mainTf.replace('REG', reg.host) });

function expectClean(r: CliResult): void {
  expect(r.timedOut).toBe(false);
  expect(w.tmpLeftovers()).toEqual([]);
  expect(w.leftovers()).toEqual([]);
}

/** The archive requests: the first full, then one resumed at a byte > 0 with a 206. */
async function expectResumed(): Promise<void> {
  const gets = (await reg.log()).filter((q) => q.pathname === archivePath);
  expect(gets.length).toBe(2);
  expect(gets[0]!.headers['range']).toBeUndefined();
  expect(gets[1]!.status).toBe(206);
  expect(gets[1]!.rangeStart).toBeGreaterThan(0);
}

describe('a download written by its hash worker keeps the download contract', { timeout: 120_000 }, () => {
  it('lock: a body dropped after 4 MiB resumes with Range and gives the hashes of the package (zh: and h1:)', async () => {
    await reg.setRanges(true);
    await reg.setFault(archivePath, { kind: 'drop', after: 4 * MiB + 12345, times: 1 }, 'archives');
    const dir = project();
    const r = await runCli(['lock', `-platform=${PLATFORM}`], { cwd: dir, env: w.env, ...RUN });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expectClean(r);
    const lock = readFileSync(join(dir, '.terraform.lock.hcl'), 'utf8');
    expect(lock).toContain(`"${expected.h1}"`);
    expect(lock).toContain(`"${expected.zh}"`);
    await expectResumed();
  });

  it('mirror: a body dropped twice resumes twice; the archive is the package byte for byte, with its zip-form h1', async () => {
    await reg.setRanges(true);
    await reg.setFault(archivePath, { kind: 'drop', after: 3 * MiB + 777, times: 2 }, 'archives');
    const dir = project();
    const out = join(w.base, 'mirror-out');
    const r = await runCli(['-flavor=terraform', 'mirror', `-platform=${PLATFORM}`, out], {
      cwd: dir,
      env: w.env,
      ...RUN,
    });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expectClean(r);
    const base = join(out, reg.host, 'acme', TYPE);
    const archive = readFileSync(join(base, `terraform-provider-${TYPE}_${VERSION}_${PLATFORM}.zip`));
    expect(archive.equals(pkg)).toBe(true);
    const index = JSON.parse(readFileSync(join(base, `${VERSION}.json`), 'utf8')) as {
      archives: Record<string, { hashes: string[] }>;
    };
    expect(index.archives[PLATFORM]?.hashes).toEqual([expected.h1_zip]);
    const gets = (await reg.log()).filter((q) => q.pathname === archivePath);
    expect(gets.map((q) => q.status)).toEqual([200, 206, 206]);
  });

  it('lock: without Range support a dropped body starts over, and the hashes are still the package’s', async () => {
    await reg.setFault(archivePath, { kind: 'drop', after: 5 * MiB, times: 1 }, 'archives');
    const dir = project();
    const r = await runCli(['lock', `-platform=${PLATFORM}`], { cwd: dir, env: w.env, ...RUN });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expectClean(r);
    const lock = readFileSync(join(dir, '.terraform.lock.hcl'), 'utf8');
    expect(lock).toContain(`"${expected.h1}"`);
    expect(lock).toContain(`"${expected.zh}"`);
  });

  it('mirror: a body that keeps dropping fails with the size diagnostic, exit 1, no mirror, nothing left', async () => {
    await reg.setRanges(true);
    await reg.setFault(archivePath, { kind: 'drop', after: 2 * MiB }, 'archives');
    const dir = project();
    const out = join(w.base, 'mirror-out');
    const r = await runCli(['-flavor=terraform', 'mirror', `-platform=${PLATFORM}`, out], {
      cwd: dir,
      env: w.env,
      ...RUN,
    });
    expectClean(r);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^(│ )?Error: /m);
    expect(r.stderr).toContain('incorrect response size');
    expect(r.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
  });
});
