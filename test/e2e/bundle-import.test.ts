// Issue 11 #16 and #20 (bundle part): `provkit bundle import` run as a child
// process against real bundles made by `provkit bundle create` from
// mirror-fixtures/, and hostile bundles built from their members.
//
// - a tar truncated inside a member: a diagnostic naming the member, exit 1,
//   no staging left;
// - an import interrupted by SIGINT/SIGTERM (cleans up) or SIGKILL (the next
//   run removes the staging it left, under the target lock);
// - two imports (or an import and a mirror) into one target at the same time:
//   index.json lists every version;
// - a manifest that relabels a package's version or platform, and packages
//   `provkit hash` refuses, are refused even with -trusted-lock / an empty h1;
// - only HOST/NS/TYPE/index.json and VERSION.json may be imported: a planted
//   TARGET/.provkit-mirror.lock/… is refused (it broke every later mirror).
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { parseConstraints, parsePlatform, parseProviderSource, parseVersion } from '../../src/addresses/index.js';
import { parseHash } from '../../src/hashing/index.js';
import { mirrorIndexJSON, mirrorVersionJSON } from '../../src/layout/index.js';
import { Locks, newProviderLock, serializeLocks } from '../../src/lockfile/index.js';
import { MIRROR, readTar, sha256, snapshot, type RawEntry, writeTar } from '../bundles/helpers.js';
import { BIN, e2eWorkspace, runCli, type E2eWorkspace, packageHashes } from '../support/e2e.js';
import { buildZip } from '../support/zip-writer.js';

/** Diagnostics are wrapped to the width (issue 14): text compared with its line breaks as spaces. */
const flat = (s: string): string => s.replace(/\s+/g, ' ');

const DEMO = 'registry.example.test/acme/demo';
const TOOLS = 'registry.example.test/acme/tools';
const PLATS = ['-platform=linux_amd64', '-platform=darwin_arm64'];
const CONFIG = readFileSync(join(MIRROR, 'config/main.tf'), 'utf8');

let w: E2eWorkspace;
let work: string;
/** demo 1.1.0 + tools 0.3.0 for linux_amd64 and darwin_arm64. */
let good: string;
let goodEntries: RawEntry[];
/** The genuine lock file of the same providers (`provkit lock -fs-mirror`), a trusted lock that did not travel with bundles. */
let trusted: string;

beforeAll(async () => {
  w = e2eWorkspace();
  work = w.project('work', { 'main.tf': CONFIG });
  good = join(work, 'good.tar');
  const made = await runCli(['bundle', 'create', `-fs-mirror=${MIRROR}`, ...PLATS, good], { cwd: work, env: w.env });
  expect(made.stderr).toBe('');
  expect(made.code).toBe(0);
  goodEntries = await readTar(good);
  const lockProject = w.project('trusted', { 'main.tf': CONFIG });
  const locked = await runCli(['lock', `-fs-mirror=${MIRROR}`, ...PLATS], { cwd: lockProject, env: w.env });
  expect(locked.code).toBe(0);
  trusted = join(lockProject, '.terraform.lock.hcl');
}, 60_000);
afterAll(() => w.remove());

let seq = 0;
/** A fresh directory under the workspace; `target` is a path in it that does not exist yet. */
function fresh(): { dir: string; target: string } {
  const dir = w.project(`case-${++seq}`);
  return { dir, target: join(dir, 'mirror') };
}

/** Nothing of a run left behind: no staging inside the target, nothing beside it, nothing in TMPDIR. */
function expectNoLeftovers(dir: string, target: string, besides: string[] = []): void {
  expect(readdirSync(dir).sort()).toEqual([...besides, ...(existsSync(target) ? ['mirror'] : [])].sort());
  if (existsSync(target)) expect(readdirSync(target).filter((n) => n.startsWith('.'))).toEqual([]);
  expect(w.tmpLeftovers()).toEqual([]);
}

const noStack = (stderr: string): void => {
  expect(stderr).not.toMatch(/^\s+at /m);
  expect(stderr).not.toMatch(/node:internal|Node\.js v/);
};

type Manifest = {
  providers: Array<{
    source: string;
    version: string;
    constraints: string;
    packages: Array<{ platform: string; path: string; zh: string; h1: string; h1Zip: string }>;
  }>;
  members: Array<{ name: string; size: number; sha256: string }>;
} & Record<string, unknown>;

const manifestOf = (entries: RawEntry[]): Manifest => JSON.parse((entries[0]!.data as Buffer).toString()) as Manifest;
const dataOf = (entries: RawEntry[], name: string): Buffer => entries.find((e) => e.name === name)!.data as Buffer;

/** Entries with `manifest` and the given members (name → bytes; others removed), the manifest's member list rebuilt. */
function rebuild(manifest: Manifest, members: Map<string, Buffer>): RawEntry[] {
  const names = [...members.keys()].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  manifest.members = names.map((name) => ({
    name,
    size: members.get(name)!.length,
    sha256: sha256(members.get(name)!),
  }));
  return [
    { name: 'manifest.json', data: JSON.stringify(manifest, null, 2) },
    ...names.map((name) => ({ name, data: members.get(name)! })),
  ];
}

const memberMap = (entries: RawEntry[]): Map<string, Buffer> =>
  new Map(entries.slice(1).map((e) => [e.name, e.data as Buffer]));

describe('a truncated bundle', () => {
  it('a tar that ends inside a member: a diagnostic naming it, exit 1, no staging left', async () => {
    const { dir, target } = fresh();
    // Cut in the middle of the demo linux_amd64 package.
    const bytes = readFileSync(good);
    const at = memberOffset(bytes, `${DEMO}/terraform-provider-demo_1.1.0_linux_amd64.zip`);
    const cut = join(dir, 'cut.tar');
    writeFileSync(cut, bytes.subarray(0, at + 1000));
    const r = await runCli(['bundle', 'import', cut, target], { cwd: dir, env: w.env });
    expect(r.code).toBe(1);
    expect(flat(r.stderr)).toContain(
      `cannot read bundle ${cut}: it ends inside member "${DEMO}/terraform-provider-demo_1.1.0_linux_amd64.zip"`,
    );
    noStack(r.stderr);
    expect(existsSync(target)).toBe(false);
    expectNoLeftovers(dir, target, ['cut.tar']);
  });
});

/** Where the data of `name` starts in a ustar archive. */
function memberOffset(tarBytes: Buffer, name: string): number {
  let off = 0;
  while (off + 512 <= tarBytes.length) {
    const header = tarBytes.subarray(off, off + 512);
    const n = header.subarray(0, 100).toString('utf8').replace(/\0.*$/s, '');
    const prefix = header.subarray(345, 500).toString('utf8').replace(/\0.*$/s, '');
    const size = parseInt(header.subarray(124, 136).toString('utf8').replace(/\0.*$/s, '').trim() || '0', 8);
    if ((prefix ? `${prefix}/${n}` : n) === name) return off + 512;
    off += 512 + Math.ceil(size / 512) * 512;
  }
  throw new Error(`${name} not in the tar`);
}

describe('an interrupted import', () => {
  /**
   * Starts an import reading the bundle from a FIFO that the test feeds up
   * to the middle of a package, and waits until the importer has staged the
   * members before it (so the interrupt finds a staging directory with files).
   */
  async function startBlockedImport(
    dir: string,
    target: string,
  ): Promise<{
    child: ReturnType<typeof spawn>;
    done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
    closeFeed: () => Promise<void>;
  }> {
    const fifo = join(dir, 'feed.tar');
    execFileSync('mkfifo', [fifo]);
    const child = spawn(process.execPath, [BIN, 'bundle', 'import', fifo, target], {
      cwd: dir,
      env: { PATH: process.env['PATH'] ?? '', ...w.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.resume();
    const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) =>
      child.on('close', (code, signal) => resolve({ code, signal, stderr })),
    );
    const feed = await open(fifo, 'w');
    const bytes = readFileSync(good);
    await feed.write(
      bytes.subarray(0, memberOffset(bytes, `${DEMO}/terraform-provider-demo_1.1.0_linux_amd64.zip`) + 1000),
    );
    // Staged: the lock entries are written before the packages.
    const deadline = Date.now() + 20_000;
    while (stagingDirs(dir).length === 0) {
      if (Date.now() > deadline) throw new Error(`the import did not stage anything: ${stderr}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    return { child, done, closeFeed: () => feed.close() };
  }

  /** Hidden directories holding staged lock entries, in the target or beside it (wherever an importer stages). */
  function stagingDirs(dir: string): string[] {
    const found: string[] = [];
    const walk = (d: string, depth: number): void => {
      for (const e of readdirSync(d, { withFileTypes: true })) {
        if (!e.isDirectory()) continue;
        const p = join(d, e.name);
        if (e.name.startsWith('.') && existsSync(join(p, '.terraform.lock.hcl'))) found.push(p);
        else if (depth < 1) walk(p, depth + 1);
      }
    };
    walk(dir, 0);
    return found;
  }

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`${signal}: exit ${signal === 'SIGINT' ? 130 : 143}, nothing imported, no staging left`, async () => {
      const { dir, target } = fresh();
      const run = await startBlockedImport(dir, target);
      run.child.kill(signal);
      // The input pipe stays open: the signal alone must end the run (a bound, not a speed test).
      const exitedOnSignal = await Promise.race([
        run.done.then(() => true),
        new Promise<boolean>((r) => setTimeout(() => r(false), 10_000)),
      ]);
      await run.closeFeed();
      const r = await run.done;
      expect(exitedOnSignal, 'the import exits on the signal while its input pipe is still open').toBe(true);
      expect(r.code).toBe(signal === 'SIGINT' ? 130 : 143);
      expect(flat(r.stderr)).toContain('provkit bundle import was interrupted');
      noStack(r.stderr);
      // The target did not exist: it is gone again, with its staging.
      expect(existsSync(target)).toBe(false);
      expectNoLeftovers(dir, target, ['feed.tar']);
    });
  }

  it('SIGKILL leaves staging behind; the next import removes it and completes', async () => {
    const { dir, target } = fresh();
    const run = await startBlockedImport(dir, target);
    run.child.kill('SIGKILL');
    const r = await run.done;
    await run.closeFeed();
    expect(r.signal).toBe('SIGKILL');
    // What a killed run leaves: its staging (with the staged members).
    expect(stagingDirs(dir)).toHaveLength(1);
    const again = await runCli(['bundle', 'import', good, target], { cwd: dir, env: w.env });
    expect(again.stderr).not.toMatch(/Error/);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('4 packages added');
    expectNoLeftovers(dir, target, ['feed.tar']);
    expect(JSON.parse(readFileSync(join(target, DEMO, 'index.json'), 'utf8'))).toEqual({ versions: { '1.1.0': {} } });
  });
});

describe('concurrent imports into one target', () => {
  let a: string;
  let b: string;
  beforeAll(async () => {
    a = join(work, 'demo-1.0.0.tar');
    b = join(work, 'demo-1.1.0.tar');
    for (const [out, version] of [
      [a, '1.0.0'],
      [b, '1.1.0'],
    ] as const) {
      const r = await runCli(
        ['bundle', 'create', `-fs-mirror=${MIRROR}`, '-platform=linux_amd64', `${DEMO}@${version}`, out],
        { cwd: work, env: w.env },
      );
      expect(r.code).toBe(0);
    }
  }, 60_000);

  it('20 pairs of imports at once: both exit 0 and index.json lists both versions every time', async () => {
    const lost: string[] = [];
    for (let i = 0; i < 20; i++) {
      const { dir, target } = fresh();
      const [ra, rb] = await Promise.all([
        runCli(['bundle', 'import', a, target], { cwd: dir, env: w.env }),
        runCli(['bundle', 'import', b, target], { cwd: dir, env: w.env }),
      ]);
      expect(ra.code, ra.stderr).toBe(0);
      expect(rb.code, rb.stderr).toBe(0);
      const index = JSON.parse(readFileSync(join(target, DEMO, 'index.json'), 'utf8')) as {
        versions: Record<string, unknown>;
      };
      if (Object.keys(index.versions).sort().join(',') !== '1.0.0,1.1.0')
        lost.push(`pair ${i}: ${Object.keys(index.versions).join(',')}`);
      for (const v of ['1.0.0', '1.1.0']) expect(existsSync(join(target, DEMO, `${v}.json`))).toBe(true);
      expectNoLeftovers(dir, target);
    }
    expect(lost).toEqual([]);
  }, 180_000);

  it('an import and a mirror at once: both exit 0 and index.json lists both versions', async () => {
    const project = w.project('mirror-1.0.0', {
      'main.tf':
        'terraform {\n  required_providers {\n    demo = {\n      source  = "registry.example.test/acme/demo"\n      version = "1.0.0"\n    }\n  }\n}\n',
    });
    for (let i = 0; i < 5; i++) {
      const { dir, target } = fresh();
      const [ri, rm_] = await Promise.all([
        runCli(['bundle', 'import', b, target], { cwd: dir, env: w.env }),
        runCli(['mirror', `-fs-mirror=${MIRROR}`, '-platform=linux_amd64', target], { cwd: project, env: w.env }),
      ]);
      expect(ri.code, ri.stderr).toBe(0);
      expect(rm_.code, rm_.stderr).toBe(0);
      const index = JSON.parse(readFileSync(join(target, DEMO, 'index.json'), 'utf8')) as {
        versions: Record<string, unknown>;
      };
      expect(Object.keys(index.versions).sort()).toEqual(['1.0.0', '1.1.0']);
      expectNoLeftovers(dir, target);
    }
  }, 120_000);
});

describe('a package is imported only as what it is', () => {
  const zip110 = `${DEMO}/terraform-provider-demo_1.1.0_linux_amd64.zip`;
  const zipArm = `${DEMO}/terraform-provider-demo_1.1.0_darwin_arm64.zip`;

  /** Imports `entries` with -trusted-lock into a fresh target already holding the good bundle; expects a refusal that changes nothing. */
  async function expectRefused(entries: RawEntry[], message: RegExp): Promise<string> {
    const { dir, target } = fresh();
    expect((await runCli(['bundle', 'import', good, target], { cwd: dir, env: w.env })).code).toBe(0);
    const before = await snapshot(target);
    const bad = join(dir, 'bad.tar');
    await writeTar(bad, entries);
    const r = await runCli(['bundle', 'import', `-trusted-lock=${trusted}`, bad, target], { cwd: dir, env: w.env });
    expect(flat(r.stderr)).toMatch(message);
    expect(r.code).toBe(1);
    noStack(r.stderr);
    expect(await snapshot(target)).toEqual(before);
    expectNoLeftovers(dir, target, ['bad.tar']);
    return target;
  }

  it('the good bundle passes -trusted-lock (the control case)', async () => {
    const { dir, target } = fresh();
    const r = await runCli(['bundle', 'import', `-trusted-lock=${trusted}`, good, target], { cwd: dir, env: w.env });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });

  it('version relabelled (1.1.0 bytes named and indexed as 9.9.9) is refused; a later lock -fs-mirror locks 1.1.0, not 9.9.9', async () => {
    const m = manifestOf(goodEntries);
    const members = memberMap(goodEntries);
    const relabelled = `${DEMO}/terraform-provider-demo_9.9.9_linux_amd64.zip`;
    members.set(relabelled, members.get(zip110)!);
    members.delete(zip110);
    members.delete(zipArm);
    members.set(
      `${DEMO}/9.9.9.json`,
      Buffer.from(
        dataOf(goodEntries, `${DEMO}/1.1.0.json`)
          .toString()
          .replace(/terraform-provider-demo_1\.1\.0_linux_amd64/g, 'terraform-provider-demo_9.9.9_linux_amd64')
          .replace(/"darwin_arm64": \{[^}]*\},?\s*/s, ''),
      ),
    );
    members.delete(`${DEMO}/1.1.0.json`);
    members.set(`${DEMO}/index.json`, Buffer.from(mirrorIndexJSON([parseVersion('9.9.9')])));
    const demo = m.providers.find((p) => p.source === DEMO)!;
    demo.packages = demo.packages.filter((k) => k.platform === 'linux_amd64').map((k) => ({ ...k, path: relabelled }));
    const target = await expectRefused(
      rebuild(m, members),
      /must be named "registry\.example\.test\/acme\/demo\/terraform-provider-demo_1\.1\.0_linux_amd64\.zip"/,
    );
    const project = w.project(`lock-after-${seq}`, {
      'main.tf':
        'terraform {\n  required_providers {\n    demo = {\n      source = "registry.example.test/acme/demo"\n    }\n  }\n}\n',
    });
    const locked = await runCli(['lock', `-fs-mirror=${target}`, '-platform=linux_amd64'], {
      cwd: project,
      env: w.env,
    });
    expect(locked.code, locked.stderr).toBe(0);
    expect(readFileSync(join(project, '.terraform.lock.hcl'), 'utf8')).toContain('version = "1.1.0"');
  });

  it('platform relabelled (linux_amd64 bytes as darwin_arm64, hashes updated everywhere) is refused', async () => {
    const m = manifestOf(goodEntries);
    const members = memberMap(goodEntries);
    members.set(zipArm, members.get(zip110)!);
    const demo = m.providers.find((p) => p.source === DEMO)!;
    const linux = demo.packages.find((k) => k.platform === 'linux_amd64')!;
    demo.packages = demo.packages.map((k) =>
      k.platform === 'darwin_arm64' ? { ...linux, platform: 'darwin_arm64', path: zipArm } : k,
    );
    const doc = JSON.parse(dataOf(goodEntries, `${DEMO}/1.1.0.json`).toString()) as {
      archives: Record<string, { hashes: string[]; url: string }>;
    };
    doc.archives['darwin_arm64'] = {
      hashes: doc.archives['linux_amd64']!.hashes,
      url: 'terraform-provider-demo_1.1.0_darwin_arm64.zip',
    };
    members.set(`${DEMO}/1.1.0.json`, Buffer.from(JSON.stringify(doc, null, 2)));
    // Checked in member order: the second name of the same bytes is refused, naming the first.
    await expectRefused(
      rebuild(m, members),
      /"registry\.example\.test\/acme\/demo\/terraform-provider-demo_1\.1\.0_linux_amd64\.zip": has the same bytes as "registry\.example\.test\/acme\/demo\/terraform-provider-demo_1\.1\.0_darwin_arm64\.zip"/,
    );
  });

  it('a package listed for another platform than its name says is refused', async () => {
    const m = manifestOf(goodEntries);
    const demo = m.providers.find((p) => p.source === DEMO)!;
    demo.packages = demo.packages.map((k) => (k.platform === 'linux_amd64' ? { ...k, platform: 'linux_arm64' } : k));
    await expectRefused(
      rebuild(m, memberMap(goodEntries)),
      /listed as registry\.example\.test\/acme\/demo 1\.1\.0 for linux_arm64, whose package must be named/,
    );
  });
});

describe('packages `provkit hash` refuses are refused, even with an empty h1 in the manifest', () => {
  /**
   * A bundle of one provider `acme/evil` 1.0.0 for linux_amd64 whose package
   * is `zip`: consistent in every other way (member SHA-256, zh:, lock entry,
   * VERSION.json), its manifest lists the empty h1 the old importer computed
   * for a package it could not hash, and the zip-form h1 where there is one.
   */
  function evilBundle(zip: Buffer, h1Zip: string): RawEntry[] {
    const source = 'registry.example.test/acme/evil';
    const addr = parseProviderSource(source, 'tofu');
    const zh = `zh:${sha256(zip)}`;
    const path = `${source}/terraform-provider-evil_1.0.0_linux_amd64.zip`;
    const lock = serializeLocks(
      new Locks([newProviderLock(addr, parseVersion('1.0.0'), parseConstraints('1.0.0'), [parseHash(zh)])]),
      'tofu',
    );
    const members = new Map<string, Buffer>([
      ['.terraform.lock.hcl', lock],
      [
        `${source}/1.0.0.json`,
        Buffer.from(
          mirrorVersionJSON([
            {
              platform: parsePlatform('linux_amd64'),
              hashes: [zh, ...(h1Zip ? [h1Zip] : [])],
              url: 'terraform-provider-evil_1.0.0_linux_amd64.zip',
            },
          ]),
        ),
      ],
      [`${source}/index.json`, Buffer.from(mirrorIndexJSON([parseVersion('1.0.0')]))],
      [path, zip],
    ]);
    const manifest: Manifest = {
      format: 'provkit-bundle/1',
      provkitVersion: '0.0.0-test',
      flavor: 'tofu',
      created: '1970-01-01T00:00:00Z',
      platforms: ['linux_amd64'],
      providers: [
        {
          source,
          version: '1.0.0',
          constraints: '1.0.0',
          packages: [{ platform: 'linux_amd64', path, zh, h1: '', h1Zip }],
        },
      ],
      members: [],
    };
    return rebuild(manifest, members);
  }

  const exe = { name: 'terraform-provider-evil_v1.0.0', data: '#!/bin/sh\n', unixMode: 0o100755 };
  const CASES: Array<[string, () => Promise<Buffer>]> = [
    ['an entry with ../ (path traversal)', () => buildZip([exe, { name: '../../evil.sh', data: 'x' }])],
    ['an absolute entry', () => buildZip([exe, { name: '/etc/cron.d/evil', data: 'x' }])],
    ['not a zip at all', () => Promise.resolve(Buffer.from('this is not a zip archive, only text\n'.repeat(20)))],
    // 80 MiB of zeros in about 80 KB: over the default ratio limit (200, checked above 64 MiB).
    [
      'a zip bomb (compression ratio over the limit)',
      () =>
        buildZip([
          exe,
          {
            name: 'bomb.bin',
            data: function* () {
              for (let i = 0; i < 80; i++) yield Buffer.alloc(1 << 20);
            },
          },
        ]),
    ],
  ];

  for (const [name, make] of CASES) {
    it(`${name}: refused with the reason \`hash\` gives`, async () => {
      const zip = await make();
      const { dir, target } = fresh();
      const file = join(dir, 'evil.zip');
      writeFileSync(file, zip);
      const hashed = await runCli(['hash', file], { cwd: dir, env: w.env });
      expect(hashed.code).toBe(1);
      const reason = /^Error: (.*)$/m.exec(hashed.stderr)![1]!.slice(`${file}: `.length);
      const json = packageHashes<{ h1_zip: string | null }>(
        (await runCli(['hash', '-json', file], { cwd: dir, env: w.env })).stdout,
      )[0]!;
      const bad = join(dir, 'bad.tar');
      await writeTar(bad, evilBundle(zip, json.h1_zip ?? ''));
      const r = await runCli(['bundle', 'import', bad, target], { cwd: dir, env: w.env });
      expect(r.code).toBe(1);
      expect(flat(r.stderr)).toContain(
        flat(
          `bundle member "registry.example.test/acme/evil/terraform-provider-evil_1.0.0_linux_amd64.zip": ${reason}`,
        ),
      );
      expect(r.stderr).not.toContain('.provkit-staging-');
      noStack(r.stderr);
      expect(existsSync(target)).toBe(false);
      expectNoLeftovers(dir, target, ['bad.tar', 'evil.zip']);
    });
  }
});

describe("bundle import writes only the mirror layout's JSON names", () => {
  /** The good bundle plus `name` (a JSON document that passes as a VERSION.json with no archives). */
  const planted = (name: string): RawEntry[] => {
    const members = memberMap(goodEntries);
    members.set(name, Buffer.from('{"archives": {}}'));
    return rebuild(manifestOf(goodEntries), members);
  };
  const NAMES = [
    '.provkit-mirror.lock/a/b/c.json',
    `${DEMO}/.hidden.json`,
    `${DEMO}/extra.json`,
    `${TOOLS}/1.1.0.json`,
    'registry.example.test/acme/other/index.json',
  ];

  for (const name of NAMES) {
    it(`${name} is refused; the target stays as it was and a later mirror into it works`, async () => {
      const { dir, target } = fresh();
      const bad = join(dir, 'bad.tar');
      await writeTar(bad, planted(name));
      const r = await runCli(['bundle', 'import', bad, target], { cwd: dir, env: w.env });
      expect(flat(r.stderr)).toContain(
        `bundle member ${JSON.stringify(name)}: is not a package, index.json or VERSION.json of a provider the manifest lists`,
      );
      expect(r.code).toBe(1);
      expect(existsSync(target)).toBe(false);
      expectNoLeftovers(dir, target, ['bad.tar']);
      const project = w.project(`mirror-after-${seq}`, { 'main.tf': CONFIG });
      const m = await runCli(['mirror', `-fs-mirror=${MIRROR}`, '-platform=linux_amd64', target], {
        cwd: project,
        env: w.env,
      });
      expect(m.stderr).toBe('');
      expect(m.code).toBe(0);
    });
  }
});
