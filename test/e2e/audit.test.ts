// `provkit audit`: who vouches for every hash of a lock file, and what a
// lock-file change in a pull request adds (docs/provenance.md). provkit runs
// as a child process (bin/provkit.js) against a fake registry in another
// process; the lock files live in a real git repository whose base commit
// holds a real terraform-written lock file (test/fixtures/real/lockfiles,
// PROVENANCE.md there) with a provider of the fake registry beside it.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { e2eWorkspace, requiresTf, runCli, type CliResult, type E2eWorkspace, jsonLines } from '../support/e2e.js';
import { type RemoteFault, startHost, type RemoteServer, type ServerHost } from '../support/remote/index.js';
import { makeProvider, makeProviderZip } from '../support/servers/packages.js';
import { checkSarif } from '../support/sarif.js';
import { hashZipPackage } from '../../src/hashing/index.js';

const REAL_LOCK = readFileSync(new URL('../fixtures/real/lockfiles/001-swibrow-pitower.hcl', import.meta.url), 'utf8');
const PLATFORMS = ['darwin_arm64', 'linux_amd64', 'windows_amd64'];

let host: ServerHost;
let reg: RemoteServer;
let w: E2eWorkspace;
/** A zip's hashes (written to the workspace to be hashed). */
let otherH1: string;
let wrongReportedH1: string;
let rebuiltDarwinH1: string;
let mainKey: string;

async function h1Of(zip: Buffer, name: string): Promise<string> {
  const p = join(w.base, name);
  writeFileSync(p, zip);
  const h = await hashZipPackage(p);
  if (!h.h1.ok) throw new Error('unhashable');
  return h.h1.hash.text;
}

beforeAll(async () => {
  host = await startHost();
  w = e2eWorkspace();
  otherH1 = await h1Of(await makeProviderZip('other', '1.0.0', 'linux_amd64'), 'other.zip');
  wrongReportedH1 = await h1Of(await makeProviderZip('impostor', '1.0.0', 'windows_amd64'), 'impostor.zip');
  rebuiltDarwinH1 = await h1Of(await makeProviderZip('demo', '1.1.0-rebuilt', 'darwin_arm64'), 'rebuilt.zip');
  reg = await host.registry({
    // 1.3.0: the release the registry re-signs while a lock file holds it (no other scenario uses it).
    providers: [await makeProvider('acme', 'demo', ['1.0.0', '1.1.0', '1.2.0', '1.3.0'], PLATFORMS)],
    packagesExtension: true,
    listedKeys: ['main', 'other'],
    // A release re-signed with another key the registry lists: it vouches for it, the pins do not.
    signVersionWith: { 'acme/demo/1.2.0': 'other' },
    // OpenTofu 1.12's `packages` hashes are not signed: this registry reports a wrong one.
    reportedH1: { 'acme/demo/1.0.0/windows_amd64': wrongReportedH1 },
  });
  mainKey = reg.keyIds[0]!;
  w = { ...w, env: { ...w.env, SSL_CERT_FILE: reg.caPath } };
}, 60_000);
afterAll(async () => {
  await host.close();
  w.remove();
});

const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.test', '-c', 'commit.gpgsign=false', ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' },
  });

/** The acme/demo block a `lock` for `platforms` writes at `version`, as lines. */
async function lockBlock(version: string, platforms: readonly string[]): Promise<string> {
  const dir = w.project(`lock-${version}-${platforms.join('-')}`, {
    'main.tf': requiresTf({ demo: `${reg.host}/acme/demo@${version}` }),
  });
  const r = await runCli(['lock', ...platforms.map((p) => `-platform=${p}`)], { cwd: dir, env: w.env });
  expect(r.code, r.stderr).toBe(0);
  const text = readFileSync(join(dir, '.terraform.lock.hcl'), 'utf8');
  return text.slice(text.indexOf('provider "'));
}

/**
 * Checks a SARIF log against the SARIF 2.1.0 JSON schema and against the
 * same run's `-json`: one result per violation of an `audit_hash`, with its
 * rule, at the line and column of the hash's opening quote in `lockText`.
 */
function expectSarifAgrees(sarifPath: string, json: ReadonlyArray<Record<string, unknown>>, lockText: string): void {
  const sarif = JSON.parse(readFileSync(sarifPath, 'utf8')) as Record<string, unknown>;
  expect(checkSarif(sarif)).toEqual([]);
  const lines = lockText.split('\n');
  const at = (hash: string): [number, number] => {
    const i = lines.findIndex((l) => l.includes(`"${hash}"`));
    return [i + 1, lines[i]!.indexOf('"') + 1];
  };
  const expected = json
    .filter((l) => l['type'] === 'audit_hash')
    .flatMap((h) =>
      (h['violations'] as Array<{ code: string }>).map((v) => [v.code, h['lock_file'], ...at(h['hash'] as string)]),
    );
  const results = (sarif['runs'] as Array<{ results: Array<Record<string, unknown>> }>)[0]!.results.map((x) => {
    const loc = (x['locations'] as Array<{ physicalLocation: Record<string, Record<string, unknown>> }>)[0]!
      .physicalLocation;
    return [x['ruleId'], loc['artifactLocation']!['uri'], loc['region']!['startLine'], loc['region']!['startColumn']];
  });
  expect(results).toEqual(expected);
}

describe('provkit audit -base in a git repository', () => {
  let repo: string;
  let baseLock: string;
  let block100: string;

  beforeAll(async () => {
    block100 = await lockBlock('1.0.0', ['linux_amd64', 'darwin_arm64']);
    baseLock = `${REAL_LOCK}\n${block100}`;
    repo = w.project('repo', {
      '.terraform.lock.hcl': baseLock,
      'provkit.hcl': `audit {\n  trusted_keys = ["${mainKey}"]\n}\n`,
      'README.md': 'infrastructure\n',
    });
    git(repo, 'init', '-q', '-b', 'main');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-qm', 'base');
  }, 60_000);

  /** A scenario's audit against main: the table (with `-sarif`), its requests, and the same audit's `-json`. */
  interface Audited {
    readonly human: CliResult;
    readonly requests: string[];
    readonly json: Array<Record<string, unknown>>;
    readonly jsonCode: number | null;
  }

  /**
   * Commits `lock` (the whole file; undefined: a change beside it) on a branch
   * made from main and audits it against main: once for people with
   * `-sarif`, checked against the SARIF 2.1.0 schema and against the `-json`
   * run that follows.
   */
  async function auditChange(branch: string, lock: string | undefined): Promise<Audited> {
    git(repo, 'checkout', '-q', '-B', branch, 'main');
    if (lock === undefined) writeFileSync(join(repo, 'README.md'), `infrastructure, ${branch}\n`);
    else writeFileSync(join(repo, '.terraform.lock.hcl'), lock);
    git(repo, 'commit', '-qam', branch, '--allow-empty');
    const sarifPath = join(w.base, `${branch}.sarif`);
    await reg.mark();
    const human = await runCli(['audit', '-base=main', `-sarif=${sarifPath}`], { cwd: repo, env: w.env });
    const requests = (await reg.log()).map((x) => x.path);
    const j = await runCli(['audit', '-base=main', '-json'], { cwd: repo, env: w.env });
    const json = jsonLines(j.stdout);
    expect(j.code, j.stderr).toBe(human.code);
    expectSarifAgrees(sarifPath, json, readFileSync(join(repo, '.terraform.lock.hcl'), 'utf8'));
    expect(w.tmpLeftovers()).toEqual([]);
    return { human, requests, json, jsonCode: j.code };
  }

  const replaceIn = (text: string, from: string, to: string): string => {
    expect(text).toContain(from);
    return text.replace(from, to);
  };
  const h1Lines = (block: string): string[] => [...block.matchAll(/"(h1:[^"]+)"/g)].map((m) => m[1]!);
  const hashes = (json: ReadonlyArray<Record<string, unknown>>): Array<Record<string, unknown>> =>
    json.filter((l) => l['type'] === 'audit_hash');
  const escaped = (hash: string): string => hash.replace(/[+/=]/g, '\\$&');

  it('(f) a change that leaves the lock file alone passes without a request', async () => {
    const { human, requests, json } = await auditChange('f', undefined);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toBe(
      'Audit passed: 0 hashes in 1 lock file audited, every one vouched for as the policy asks (nothing downloaded).\n',
    );
    expect(requests).toEqual([]);
    expect(json.filter((l) => l['type'] !== 'version')).toMatchObject([
      { type: 'audit_summary', lock_files: 1, hashes: 0, failing: 0, downloads: 0, pass: true },
    ]);
  });

  it('(a) one h1: replaced with another package’s is vouched for by nobody, and the removed one is listed', async () => {
    const old = h1Lines(block100)[0]!;
    const { human, json } = await auditChange('a', replaceIn(baseLock, old, otherH1));
    expect(human.code, human.stderr).toBe(2);
    const out = human.stdout;
    expect(out).toContain(`${reg.host}/acme/demo 1.0.0: hash removed ${old}`);
    expect(out).toMatch(new RegExp(`\\? +${escaped(otherH1)} +FAIL +nobody`));
    expect(out).toContain('HASH_UNVOUCHED: no source vouches for this hash');
    expect(out).toMatch(
      /Audit failed: 1 hash in 1 lock file audited, 1 not vouched for as the policy asks \(3 packages downloaded\)\./,
    );
    expect(json.filter((l) => l['type'] === 'audit_change')).toMatchObject([
      { change: 'hash-removed', provider: `${reg.host}/acme/demo`, version: '1.0.0', hash: old },
    ]);
    expect(hashes(json)).toMatchObject([
      {
        '@level': 'error',
        hash: otherH1,
        platform: null,
        dispositions: [],
        pass: false,
        violations: [{ code: 'HASH_UNVOUCHED' }],
      },
    ]);
    expect(json.at(-1)).toMatchObject({ type: 'audit_summary', hashes: 1, failing: 1, downloads: 3, pass: false });
  });

  it('(b) a zh: in no SHA256SUMS fails, in -json with its dispositions', async () => {
    const stray = `zh:${createHash('sha256').update('not a release').digest('hex')}`;
    const lock = replaceIn(
      baseLock,
      `    "${h1Lines(block100)[0]!}",\n`,
      `    "${h1Lines(block100)[0]!}",\n    "${stray}",\n`,
    );
    const { human, json } = await auditChange('b', lock);
    expect(human.code, human.stderr).toBe(2);
    expect(human.stdout).toMatch(new RegExp(`^ {4}\\? +${stray} +FAIL +nobody$`, 'm'));
    expect(human.stdout).toContain('HASH_UNVOUCHED: no source vouches for this hash');
    expect(human.stdout).toMatch(/^Audit failed: 1 hash in 1 lock file audited, 1 not vouched for/m);
    expect(hashes(json)).toHaveLength(1);
    expect(hashes(json)[0]).toMatchObject({
      '@level': 'error',
      lock_file: '.terraform.lock.hcl',
      provider: `${reg.host}/acme/demo`,
      version: '1.0.0',
      platform: null,
      hash: stray,
      dispositions: [],
      pass: false,
      violations: [{ code: 'HASH_UNVOUCHED', message: 'no source vouches for this hash' }],
      policy: 'provkit.hcl',
    });
    expect(json.at(-1)).toMatchObject({ type: 'audit_summary', hashes: 1, failing: 1, pass: false });
  });

  it('(c) a bump with h1: hashes from a mirror: the package the registry signed is verified, a rebuilt one is not', async () => {
    const block110 = await lockBlock('1.1.0', ['linux_amd64', 'darwin_arm64']);
    // What `lock -fs-mirror` writes: h1: only; darwin's from a rebuilt package.
    const linuxH1 = h1Lines(block110);
    const fromMirror = block110.replace(/ +"zh:[0-9a-f]+",\n/g, '').replace(
      linuxH1.find((h) => h !== undefined)!,
      rebuiltDarwinH1,
    );
    const { human, json } = await auditChange('c', baseLock.replace(block100, fromMirror));
    expect(human.code, human.stderr).toBe(2);
    expect(human.stdout).toContain(`${reg.host}/acme/demo: version changed from 1.0.0 to 1.1.0`);
    expect(human.stdout).toMatch(new RegExp(`^ {4}\\? +${escaped(rebuiltDarwinH1)} +FAIL +nobody$`, 'm'));
    expect(human.stdout).toMatch(/^ {4}\S+ +h1:\S+ +ok +verified locally \(key /m);
    expect(json.filter((l) => l['type'] === 'audit_change')).toMatchObject([
      { change: 'version-changed', from: '1.0.0', version: '1.1.0' },
    ]);
    const verdicts = hashes(json).map((l) => [
      l['hash'],
      l['pass'],
      (l['dispositions'] as Array<{ kind: string }>)[0]?.kind,
    ]);
    expect(verdicts).toEqual(
      expect.arrayContaining([
        [rebuiltDarwinH1, false, undefined],
        [expect.stringMatching(/^h1:/), true, 'verified-locally'],
      ]),
    );
    expect(json.at(-1)).toMatchObject({ type: 'audit_summary', hashes: 2, failing: 1, downloads: 3 });
  });

  it('(d) registry-reported h1: for a platform nobody downloaded is checked against its package', async () => {
    // What OpenTofu 1.12 adds for windows_amd64 from the registry's `packages`: the signed zh: and the reported h1:.
    const windowsZh = `zh:${(await reg.call('sha256', 'acme', 'demo', '1.0.0', 'windows_amd64')) as string}`;
    const block = replaceIn(block100, '  hashes = [\n', `  hashes = [\n    "${wrongReportedH1}",\n`);
    // The lock already has windows_amd64's zh: (a signed SHA256SUMS covers every platform).
    expect(block100).toContain(windowsZh);
    const { human, requests, json } = await auditChange('d', baseLock.replace(block100, block));
    expect(human.code, human.stderr).toBe(2);
    expect(human.stdout).toMatch(
      new RegExp(`windows_amd64 +${escaped(wrongReportedH1)} +FAIL +reported by the registry`),
    );
    expect(human.stdout).toContain('HASH_CONTRADICTED: reported for a platform whose package hashed here to h1:');
    // Only the package the change is about was downloaded.
    expect(requests.filter((x) => x.endsWith('.zip'))).toEqual([expect.stringMatching(/windows_amd64\.zip$/)]);
    expect(hashes(json)).toMatchObject([
      {
        hash: wrongReportedH1,
        platform: 'windows_amd64',
        dispositions: [{ kind: 'reported-by-registry' }],
        pass: false,
        violations: [{ code: 'HASH_CONTRADICTED' }],
      },
    ]);
    expect(json.at(-1)).toMatchObject({ type: 'audit_summary', hashes: 1, failing: 1, downloads: 1 });
  });

  it('(e) a release signed by a key outside trusted_keys fails though the registry vouches for the key', async () => {
    const block120 = await lockBlock('1.2.0', ['linux_amd64', 'darwin_arm64']);
    const { human, json } = await auditChange('e', baseLock.replace(block100, block120));
    expect(human.code, human.stderr).toBe(2);
    const otherKey = reg.keyIds[1]!;
    expect(human.stdout).toContain(`signed by key ${otherKey}, which is not one of the trusted_keys of provkit.hcl`);
    expect(human.stdout).not.toMatch(/ ok /);
    const audited = hashes(json);
    expect(audited.length).toBeGreaterThan(0);
    for (const h of audited) {
      expect(h['pass']).toBe(false);
      expect((h['violations'] as Array<{ code: string }>).map((v) => v.code)).toContain('KEY_NOT_TRUSTED');
    }
    expect(json.at(-1)).toMatchObject({ type: 'audit_summary', failing: audited.length, pass: false });
  });

  it('faults while auditing are errors (exit 1), never a pass: a signature that cannot be fetched, a registry that is down', async () => {
    git(repo, 'checkout', '-q', '-B', 'fault', 'main');
    writeFileSync(
      join(repo, '.terraform.lock.hcl'),
      baseLock.replace('version     = "1.0.0"', 'version     = "1.1.0"'),
    );
    git(repo, 'commit', '-qam', 'fault');
    const faults: Array<[string | RegExp, RemoteFault]> = [
      [await reg.path('signature', 'acme', 'demo', '1.1.0'), { kind: 'status', status: 404 }],
      // Every connection reset: the registry is down (no retry, to be quick).
      [/./, { kind: 'reset' }],
    ];
    for (const [path, fault] of faults) {
      await reg.setFault(path, fault);
      try {
        const env = { ...w.env, PROVKIT_HTTP_TUNING: 'retries=0' };
        const r = await runCli(['audit', '-base=main', `-sarif=${join(w.base, 'fault.sarif')}`], { cwd: repo, env });
        expect(r.code, `${fault.kind}: ${r.stderr}`).toBe(1);
        expect(r.stdout).not.toContain('Audit passed');
        expect(r.stderr).toMatch(/^Error: /m);
        expect(existsSync(join(w.base, 'fault.sarif'))).toBe(false);
        const j = await runCli(['audit', '-base=main', '-json'], { cwd: repo, env });
        expect(j.code).toBe(1);
        expect(jsonLines(j.stdout).filter((l) => l['type'] === 'audit_summary')).toEqual([]);
        expect(jsonLines(j.stdout).some((l) => l['type'] === 'diagnostic' && l['@level'] === 'error')).toBe(true);
      } finally {
        await reg.clearFaults();
      }
    }
    expect(w.tmpLeftovers()).toEqual([]);
  });
});

describe('provkit audit of a whole lock file', () => {
  it('tables every hash of every platform with who vouches for it', async () => {
    const block = await lockBlock('1.0.0', ['linux_amd64', 'darwin_arm64']);
    const dir = w.project('whole', {
      '.terraform.lock.hcl': `# This file is maintained automatically by "tofu init".\n# Manual edits may be lost in future updates.\n\n${block}`,
    });
    const r = await runCli(['audit'], { cwd: dir, env: w.env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      new RegExp(`^  ${reg.host}/acme/demo 1\\.0\\.0\n {4}PLATFORM +HASH +VERDICT +WHO VOUCHES\n`, 'm'),
    );
    expect(r.stdout.match(/^ {4}(darwin_arm64|linux_amd64) +(h1|zh):\S+ +ok +/gm)).toHaveLength(4);
    expect(r.stdout).toContain(`signed by key ${mainKey}, expires never`);
    expect(r.stdout).toContain('verified locally (key');
    expect(r.stdout).toMatch(/^ {4}windows_amd64 +zh:\S+ +ok +signed by key/m);
    expect(r.stdout).toMatch(/Audit passed: 5 hashes in 1 lock file audited/);
  });
});

describe('a release re-signed by a key outside trusted_keys, the lock file unchanged', () => {
  it('audit fails with KEY_NOT_TRUSTED though the hash store remembers the pinned signature', async () => {
    const block = await lockBlock('1.3.0', ['linux_amd64', 'darwin_arm64']);
    const lock = `# This file is maintained automatically by "tofu init".\n# Manual edits may be lost in future updates.\n\n${block}`;
    const dir = w.project('resigned', {
      '.terraform.lock.hcl': lock,
      'provkit.hcl': `audit {\n  trusted_keys = ["${mainKey}"]\n}\n`,
    });
    // The store remembers the packages and their signature by the pinned key.
    const env = { ...w.env, PROVKIT_HASH_STORE: join(w.base, 'store-resigned') };
    const before = await runCli(['audit'], { cwd: dir, env });
    expect(before.code, before.stderr).toBe(0);
    expect(before.stdout).toMatch(/Audit passed: 5 hashes in 1 lock file audited/);

    // The same SHA256SUMS bytes, now signed by another key, which the download metadata lists.
    const shasums = (await reg.call('shasums', 'acme', 'demo', '1.3.0')) as string;
    const otherKey = (await reg.call('resign', 'acme', 'demo', '1.3.0', 'other')) as string;
    expect(otherKey).not.toBe(mainKey);
    expect(await reg.call('shasums', 'acme', 'demo', '1.3.0')).toBe(shasums);

    const sarifPath = join(w.base, 'resigned.sarif');
    const human = await runCli(['audit', `-sarif=${sarifPath}`], { cwd: dir, env });
    expect(human.code, human.stderr).toBe(2);
    expect(readFileSync(join(dir, '.terraform.lock.hcl'), 'utf8')).toBe(lock);
    expect(human.stdout).toContain(`signed by key ${otherKey}, which is not one of the trusted_keys of provkit.hcl`);
    expect(human.stdout).toContain('KEY_NOT_TRUSTED');
    expect(human.stdout).not.toMatch(/ ok /);
    expect(human.stdout).not.toContain(`signed by key ${mainKey}`);
    expect(human.stdout).toMatch(/^Audit failed: 5 hashes in 1 lock file audited, 5 not vouched for/m);

    const j = await runCli(['audit', '-json'], { cwd: dir, env });
    expect(j.code, j.stderr).toBe(2);
    const json = jsonLines(j.stdout);
    const audited = json.filter((l) => l['type'] === 'audit_hash');
    expect(audited).toHaveLength(5);
    for (const h of audited) {
      expect(h['pass']).toBe(false);
      expect((h['violations'] as Array<{ code: string }>).map((v) => v.code)).toContain('KEY_NOT_TRUSTED');
      const keys = (h['dispositions'] as Array<{ key_id?: string }>).flatMap((d) => d.key_id ?? []);
      expect(keys.length).toBeGreaterThan(0);
      expect(new Set(keys)).toEqual(new Set([otherKey]));
    }
    expect(json.at(-1)).toMatchObject({ type: 'audit_summary', hashes: 5, failing: 5, pass: false });
    expectSarifAgrees(sarifPath, json, lock);
    expect(w.tmpLeftovers()).toEqual([]);
  });
});

describe('audit -recursive -base on a tree of 100 root modules', () => {
  it('derives only the changed root’s changed packages, and from a warm hash store nothing', async () => {
    const block = await lockBlock('1.1.0', ['linux_amd64', 'darwin_arm64']);
    const wide = await lockBlock('1.1.0', ['linux_amd64', 'darwin_arm64', 'windows_amd64']);
    const tree = w.project('tree');
    const header =
      '# This file is maintained automatically by "tofu init".\n# Manual edits may be lost in future updates.\n\n';
    for (let i = 0; i < 100; i += 1) {
      const root = join(tree, `svc${String(i).padStart(3, '0')}`);
      mkdirSync(root, { recursive: true });
      writeFileSync(join(root, 'main.tf'), requiresTf({ demo: `${reg.host}/acme/demo@1.1.0` }));
      writeFileSync(join(root, '.terraform.lock.hcl'), `${header}${block}`);
    }
    git(tree, 'init', '-q', '-b', 'main');
    git(tree, 'add', '-A');
    git(tree, 'commit', '-qm', 'base');
    writeFileSync(join(tree, 'svc042', '.terraform.lock.hcl'), `${header}${wide}`);
    git(tree, 'commit', '-qam', 'svc042: lock windows_amd64 too');

    const store = join(w.base, 'store');
    const env = { ...w.env, PROVKIT_HASH_STORE: store };
    await reg.mark();
    const cold = await runCli(['audit', '-recursive', '-base=HEAD~1', '-json'], { cwd: tree, env });
    expect(cold.code, cold.stderr).toBe(0);
    const requests = (await reg.log()).map((x) => x.path);
    // The one changed root's new hash (windows_amd64's h1:): the version list, the download documents
    // asked (one carries the SHA256SUMS and OpenTofu's packages), SHA256SUMS, signature, one archive.
    expect(requests.filter((p) => p.endsWith('.zip'))).toEqual([expect.stringMatching(/windows_amd64\.zip$/)]);
    expect(requests).toHaveLength(7);
    expect(jsonLines(cold.stdout).at(-1)).toMatchObject({
      type: 'audit_summary',
      lock_files: 100,
      hashes: 1,
      downloads: 1,
    });

    await reg.mark();
    const warm = await runCli(['audit', '-recursive', '-base=HEAD~1', '-json'], { cwd: tree, env });
    expect(warm.code, warm.stderr).toBe(0);
    expect((await reg.log()).filter((x) => x.path.endsWith('.zip'))).toEqual([]);
    expect(jsonLines(warm.stdout).at(-1)).toMatchObject({ type: 'audit_summary', downloads: 0 });
    // The figure docs/provenance.md gives.
    console.log(`audit -recursive -base, 100 roots, one changed: ${requests.length} requests (${requests.join(', ')})`);
  }, 120_000);
});
