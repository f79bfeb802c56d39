// A registry package's archive is downloaded while its SHA256SUMS and their
// signature are still on their way (sources/fetch/fetch.ts fetchPackageAhead,
// installer/fetch-cache.ts), and nothing is believed of it before they are
// checked (sources/fetch/archive.ts authenticatedMeta, the one gate): no hash
// in a lock file, the hash store or a `-json` message, no file written, and a
// refused package fails with the error, message and exit code of a package
// refused before any byte was asked for. The servers (another process) hold
// the SHA256SUMS or the signature until the archive was requested, or sent
// whole (the `after` fault of test/support/servers/http-server.ts), so the
// overlap is the servers' fact, not a timing: without the early download
// these runs would wait for a signature that waits for the archive.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { e2eWorkspace, jsonLines, requiresTf, runCli, type CliResult, type E2eWorkspace } from '../support/e2e.js';
import { startHost, type RemoteFault, type RemoteServer, type ServerHost } from '../support/remote/index.js';
import { buildZip } from '../support/zip-writer.js';
import { pseudoRandom } from './fixtures/large-packages.js';

const NS = 'acme';
const TYPE = 'gate';
const V = '1.0.0';
const PLAT = 'linux_amd64';
const OLD_LOCK =
  '# This file is maintained automatically by "tofu init".\n# Manual edits may be lost in future updates.\n';

let host: ServerHost;
let reg: RemoteServer;
let w: E2eWorkspace;
let archive: string;
let shasums: string;
let signature: string;

beforeAll(async () => {
  host = await startHost();
  const zip = await buildZip([
    { name: `terraform-provider-${TYPE}_v${V}`, data: pseudoRandom('gate', 192 * 1024), method: 0 },
  ]);
  reg = await host.registry({
    archiveHost: 'same',
    providers: [{ namespace: NS, type: TYPE, versions: [{ version: V, packages: [{ platform: PLAT, zip }] }] }],
  });
  archive = await reg.path('archive', NS, TYPE, V, PLAT);
  shasums = await reg.path('shasums', NS, TYPE, V);
  signature = await reg.path('signature', NS, TYPE, V);
  // A held response must not outlive the run: a client that waits for it gives up after 5 s of silence.
  w = e2eWorkspace(reg.caPath, { PROVKIT_HTTP_TUNING: 'idle=5000,backoff=20' });
}, 60_000);

afterAll(async () => {
  await host?.close();
});

interface Run {
  readonly r: CliResult;
  readonly dir: string;
  readonly store: string;
}

/** Runs `args` in a new project (with a lock file of its own) under `fault` on `path`, with a hash store of its own. */
async function run(name: string, args: string[], faults: Array<[string, RemoteFault]>): Promise<Run> {
  const dir = w.project(name, { 'main.tf': requiresTf({ [TYPE]: `${reg.host}/${NS}/${TYPE}` }) });
  writeFileSync(join(dir, '.terraform.lock.hcl'), OLD_LOCK);
  const store = join(dir, '..', `${name}-store`);
  mkdirSync(store);
  await reg.clearFaults();
  for (const [path, fault] of faults) await reg.setFault(path, fault, 'main');
  await reg.mark();
  const r = await runCli(args, { cwd: dir, env: { ...w.env, PROVKIT_HASH_STORE: store }, timeoutMs: 60_000 });
  return { r, dir, store };
}

/** The request log's times of the archive and of `held`: when each was received and sent whole. */
async function times(held: string): Promise<{ archiveAt: number; archiveDone: number; heldDone: number }> {
  const log = await reg.log();
  const a = log.find((q) => q.pathname === archive);
  const h = log.filter((q) => q.pathname === held).at(-1);
  expect(a, 'the archive was requested').toBeDefined();
  expect(h, `${held} was requested`).toBeDefined();
  expect(a!.finishedAt, 'the archive was sent whole').toBeDefined();
  // A reset leaves no time of its own: it came after its hold.
  return { archiveAt: a!.at, archiveDone: a!.finishedAt!, heldDone: h!.finishedAt ?? Infinity };
}

/** A refused run: exit 1, the lock file, the hash store, the project and TMPDIR as they were. */
function expectNothingWritten({ r, dir, store }: Run): void {
  expect(r.code, r.stderr).toBe(1);
  expect(r.stderr).not.toMatch(/\n\s+at /);
  expect(readFileSync(join(dir, '.terraform.lock.hcl'), 'utf8')).toBe(OLD_LOCK);
  expect(readdirSync(dir).sort()).toEqual(['.terraform.lock.hcl', 'main.tf']);
  expect(readdirSync(store)).toEqual([]);
  expect(w.tmpLeftovers()).toEqual([]);
}

const holdUntilSent = (then?: RemoteFault): RemoteFault => ({
  kind: 'after',
  request: archive,
  finished: true,
  ...(then === undefined ? {} : { then }),
});

describe('a registry archive downloads while its signature is on its way, and is trusted only after it', () => {
  it('lock: the archive is requested before the signature is sent, and the package is locked as signed', async () => {
    const got = await run(
      'overlap',
      ['lock', `-platform=${PLAT}`, '-json'],
      [[signature, { kind: 'after', request: archive }]],
    );
    expect(got.r.code, got.r.stderr).toBe(0);
    const t = await times(signature);
    expect(t.archiveAt).toBeLessThan(t.heldDone);
    const lock = readFileSync(join(got.dir, '.terraform.lock.hcl'), 'utf8');
    expect(lock).toMatch(/"zh:[0-9a-f]{64}"/);
    expect(lock).toMatch(/"h1:/);
    const complete = jsonLines(got.r.stdout).find((m) => m['type'] === 'package_fetch_complete');
    expect(complete?.['authentication']).toBe('signed');
    // Stored once authenticated: the store has the entry.
    expect(readdirSync(got.store).length).toBeGreaterThan(0);
    expect(w.tmpLeftovers()).toEqual([]);
  });

  it('lock: a bad signature after the archive arrived whole fails as before, with nothing written or said', async () => {
    // The same refusal without the hold: the message a refused package has, whenever its bytes came.
    const plain = await run(
      'bad-signature-plain',
      ['lock', `-platform=${PLAT}`],
      [[signature, { kind: 'replace', body: { $fn: 'corruptNearEnd' } }]],
    );
    expectNothingWritten(plain);
    expect(plain.r.stderr.toLowerCase()).toContain('signature');
    const held = await run(
      'bad-signature-held',
      ['lock', `-platform=${PLAT}`],
      [[signature, holdUntilSent({ kind: 'replace', body: { $fn: 'corruptNearEnd' } })]],
    );
    const t = await times(signature);
    expect(t.archiveDone).toBeLessThanOrEqual(t.heldDone);
    expectNothingWritten(held);
    expect(held.r.stderr.replaceAll('bad-signature-held', 'X')).toBe(
      plain.r.stderr.replaceAll('bad-signature-plain', 'X'),
    );
    expect(held.r.stdout.replaceAll('bad-signature-held', 'X')).toBe(
      plain.r.stdout.replaceAll('bad-signature-plain', 'X'),
    );
    // -json: the package is not said to be retrieved, nor any hash obtained.
    const json = await run(
      'bad-signature-json',
      ['lock', `-platform=${PLAT}`, '-json'],
      [[signature, holdUntilSent({ kind: 'replace', body: { $fn: 'corruptNearEnd' } })]],
    );
    expectNothingWritten(json);
    const types = jsonLines(json.r.stdout).map((m) => m['type']);
    expect(types).not.toContain('package_fetch_complete');
    expect(types).not.toContain('lock_hashes');
    expect(types).not.toContain('package_fetch_start');
  });

  it.each<[string, RemoteFault, RegExp]>([
    [
      'not listing the archive',
      { kind: 'replace', body: `${'0'.repeat(64)}  terraform-provider-${TYPE}_${V}_darwin_arm64.zip\n` },
      /no checksum|not (found|listed)|does not (contain|list)|checksum/i,
    ],
    [
      'listing it with another checksum',
      { kind: 'replace', body: `${'0'.repeat(64)}  terraform-provider-${TYPE}_${V}_${PLAT}.zip\n` },
      /checksum/i,
    ],
    ['failing with 500', { kind: 'status', status: 500 }, /SHA256SUMS|checksums|500/i],
  ])('lock: a SHA256SUMS %s after the archive arrived whole: refused, nothing written', async (what, then, message) => {
    const got = await run(
      `shasums-${what.replace(/ /g, '-')}`,
      ['lock', `-platform=${PLAT}`],
      [[shasums, holdUntilSent(then)]],
    );
    const t = await times(shasums);
    expect(t.archiveDone).toBeLessThanOrEqual(t.heldDone);
    expectNothingWritten(got);
    expect(got.r.stderr).toMatch(message);
  });

  it.each<[string, RemoteFault]>([
    ['500 on every attempt', { kind: 'status', status: 500 }],
    ['a reset on every attempt', { kind: 'reset' }],
  ])(
    'lock: the signature fetch failing (%s) after the archive arrived whole: refused, nothing written',
    async (what, then) => {
      const got = await run(
        `signature-${what.replace(/ /g, '-')}`,
        ['lock', `-platform=${PLAT}`],
        [[signature, holdUntilSent(then)]],
      );
      const t = await times(signature);
      expect(t.archiveDone).toBeLessThanOrEqual(t.heldDone);
      expectNothingWritten(got);
      expect(got.r.stderr).toContain('signature');
    },
  );
});

describe('mirror and install refuse a package whose signature does not verify, writing nothing', () => {
  const bad = (): Array<[string, RemoteFault]> => [[signature, { kind: 'replace', body: { $fn: 'corruptNearEnd' } }]];

  it('mirror: nothing in the target, nothing stored', async () => {
    const got = await run('mirror-bad', ['mirror', `-platform=${PLAT}`, 'target'], bad());
    expect(got.r.code, got.r.stderr).toBe(1);
    expect(got.r.stderr.toLowerCase()).toContain('signature');
    expect(readdirSync(got.dir).sort()).toEqual(['.terraform.lock.hcl', 'main.tf']);
    expect(readdirSync(got.store)).toEqual([]);
    expect(w.tmpLeftovers()).toEqual([]);
  });

  it('install: nothing installed, no lock file change, nothing stored', async () => {
    const got = await run('install-bad', ['install'], bad());
    expect(got.r.code, got.r.stderr).toBe(1);
    expect(got.r.stderr.toLowerCase()).toContain('signature');
    expect(readFileSync(join(got.dir, '.terraform.lock.hcl'), 'utf8')).toBe(OLD_LOCK);
    expect(
      readdirSync(got.dir)
        .filter((f) => f !== '.terraform')
        .sort(),
    ).toEqual(['.terraform.lock.hcl', 'main.tf']);
    const installed = existsSync(join(got.dir, '.terraform'))
      ? readdirSync(join(got.dir, '.terraform'), { recursive: true }).map(String)
      : [];
    expect(installed.filter((f) => f.includes(TYPE))).toEqual([]);
    expect(readdirSync(got.store)).toEqual([]);
    expect(w.tmpLeftovers()).toEqual([]);
  });
});
