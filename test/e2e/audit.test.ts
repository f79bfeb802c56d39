// `provkit audit`: who vouches for every hash of a lock file, and what a
// lock-file change in a pull request adds (docs/provenance.md). provkit runs
// as a child process (bin/provkit.js) against a fake registry in another
// process; the lock files live in a real git repository whose base commit
// holds a real terraform-written lock file (test/fixtures/real/lockfiles,
// PROVENANCE.md there) with a provider of the fake registry beside it.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { e2eWorkspace, requiresTf, runCli, type CliResult, type E2eWorkspace } from '../support/e2e.js';
import { startHost, type RemoteServer, type ServerHost } from '../support/remote/index.js';
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
    providers: [await makeProvider('acme', 'demo', ['1.0.0', '1.1.0', '1.2.0'], PLATFORMS)],
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

const jsonLines = (r: CliResult): Array<Record<string, unknown>> =>
  r.stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

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

  /** Commits `lock` (the whole file) on a branch made from main and audits it against main. */
  async function auditChange(branch: string, lock: string, ...flags: string[]): Promise<CliResult> {
    git(repo, 'checkout', '-q', '-B', branch, 'main');
    writeFileSync(join(repo, '.terraform.lock.hcl'), lock);
    git(repo, 'commit', '-qam', branch, '--allow-empty');
    await reg.mark();
    return runCli(['audit', '-base=main', ...flags], { cwd: repo, env: w.env });
  }

  const replaceIn = (text: string, from: string, to: string): string => {
    expect(text).toContain(from);
    return text.replace(from, to);
  };
  const h1Lines = (block: string): string[] => [...block.matchAll(/"(h1:[^"]+)"/g)].map((m) => m[1]!);

  it('(f) a change that leaves the lock file alone passes without a request', async () => {
    git(repo, 'checkout', '-q', '-B', 'f', 'main');
    writeFileSync(join(repo, 'README.md'), 'infrastructure, documented\n');
    git(repo, 'commit', '-qam', 'docs');
    await reg.mark();
    const r = await runCli(['audit', '-base=main'], { cwd: repo, env: w.env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(
      'Audit passed: 0 hashes in 1 lock file audited, every one vouched for as the policy asks (nothing downloaded).\n',
    );
    expect(await reg.log()).toEqual([]);
  });

  it('(a) one h1: replaced with another package’s is vouched for by nobody, and the removed one is listed', async () => {
    const old = h1Lines(block100)[0]!;
    const sarifPath = join(w.base, 'a.sarif');
    const r = await auditChange('a', replaceIn(baseLock, old, otherH1), `-sarif=${sarifPath}`);
    expect(r.code, r.stderr).toBe(2);
    const out = r.stdout;
    expect(out).toContain(`${reg.host}/acme/demo 1.0.0: hash removed ${old}`);
    expect(out).toMatch(new RegExp(`\\? +${otherH1.replace(/[+/=]/g, '\\$&')} +FAIL +nobody`));
    expect(out).toContain('HASH_UNVOUCHED: no source vouches for this hash');
    expect(out).toMatch(
      /Audit failed: 1 hash in 1 lock file audited, 1 not vouched for as the policy asks \(3 packages downloaded\)\./,
    );
    // SARIF: valid 2.1.0, the one violation at the line of the hash.
    const sarif = JSON.parse(readFileSync(sarifPath, 'utf8')) as Record<string, unknown>;
    expect(checkSarif(sarif)).toEqual([]);
    const line =
      readFileSync(join(repo, '.terraform.lock.hcl'), 'utf8')
        .split('\n')
        .findIndex((l) => l.includes(otherH1)) + 1;
    const results = (sarif['runs'] as Array<{ results: Array<Record<string, unknown>> }>)[0]!.results;
    expect(results.map((x) => [x['ruleId'], JSON.stringify(x['locations'])])).toEqual([
      [
        'HASH_UNVOUCHED',
        JSON.stringify([
          {
            physicalLocation: {
              artifactLocation: { uri: '.terraform.lock.hcl', uriBaseId: '%SRCROOT%' },
              region: { startLine: line, startColumn: 5 },
            },
          },
        ]),
      ],
    ]);
  });

  it('(b) a zh: in no SHA256SUMS fails, in -json with its dispositions', async () => {
    const stray = `zh:${createHash('sha256').update('not a release').digest('hex')}`;
    const lock = replaceIn(
      baseLock,
      `    "${h1Lines(block100)[0]!}",\n`,
      `    "${h1Lines(block100)[0]!}",\n    "${stray}",\n`,
    );
    const r = await auditChange('b', lock, '-json');
    expect(r.code, r.stderr).toBe(2);
    const lines = jsonLines(r);
    const hashes = lines.filter((l) => l['type'] === 'audit_hash');
    expect(hashes).toHaveLength(1);
    expect(hashes[0]).toMatchObject({
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
    expect(lines.at(-1)).toMatchObject({ type: 'audit_summary', hashes: 1, failing: 1, pass: false });
  });

  it('(c) a bump with h1: hashes from a mirror: the package the registry signed is verified, a rebuilt one is not', async () => {
    const block110 = await lockBlock('1.1.0', ['linux_amd64', 'darwin_arm64']);
    // What `lock -fs-mirror` writes: h1: only; darwin's from a rebuilt package.
    const linuxH1 = h1Lines(block110);
    const fromMirror = block110.replace(/ +"zh:[0-9a-f]+",\n/g, '').replace(
      linuxH1.find((h) => h !== undefined)!,
      rebuiltDarwinH1,
    );
    const r = await auditChange('c', baseLock.replace(block100, fromMirror), '-json');
    expect(r.code, r.stderr).toBe(2);
    const lines = jsonLines(r);
    expect(lines.filter((l) => l['type'] === 'audit_change')).toMatchObject([
      { change: 'version-changed', from: '1.0.0', version: '1.1.0' },
    ]);
    const verdicts = lines
      .filter((l) => l['type'] === 'audit_hash')
      .map((l) => [l['hash'], l['pass'], (l['dispositions'] as Array<{ kind: string }>)[0]?.kind]);
    expect(verdicts).toEqual(
      expect.arrayContaining([
        [rebuiltDarwinH1, false, undefined],
        [expect.stringMatching(/^h1:/), true, 'verified-locally'],
      ]),
    );
    expect(lines.at(-1)).toMatchObject({ type: 'audit_summary', hashes: 2, failing: 1, downloads: 3 });
  });

  it('(d) registry-reported h1: for a platform nobody downloaded is checked against its package', async () => {
    // What OpenTofu 1.12 adds for windows_amd64 from the registry's `packages`: the signed zh: and the reported h1:.
    const windowsZh = `zh:${(await reg.call('sha256', 'acme', 'demo', '1.0.0', 'windows_amd64')) as string}`;
    const block = replaceIn(block100, '  hashes = [\n', `  hashes = [\n    "${wrongReportedH1}",\n`);
    const lock = baseLock.replace(block100, block);
    // The lock already has windows_amd64's zh: (a signed SHA256SUMS covers every platform).
    expect(block100).toContain(windowsZh);
    const r = await auditChange('d', lock);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).toMatch(
      new RegExp(`windows_amd64 +${wrongReportedH1.replace(/[+/=]/g, '\\$&')} +FAIL +reported by the registry`),
    );
    expect(r.stdout).toContain('HASH_CONTRADICTED: reported for a platform whose package hashed here to h1:');
    // Only the package the change is about was downloaded.
    const archives = (await reg.log()).filter((x) => x.path.endsWith('.zip')).map((x) => x.path);
    expect(archives).toEqual([expect.stringMatching(/windows_amd64\.zip$/)]);
  });

  it('(e) a release signed by a key outside trusted_keys fails though the registry vouches for the key', async () => {
    const block120 = await lockBlock('1.2.0', ['linux_amd64', 'darwin_arm64']);
    const r = await auditChange('e', baseLock.replace(block100, block120));
    expect(r.code, r.stderr).toBe(2);
    const otherKey = reg.keyIds[1]!;
    expect(r.stdout).toContain(`signed by key ${otherKey}, which is not one of the trusted_keys of provkit.hcl`);
    expect(r.stdout).not.toMatch(/ ok /);
  });

  it('a signature that cannot be fetched is an error, never a pass', async () => {
    await reg.setFault(await reg.path('signature', 'acme', 'demo', '1.1.0'), { kind: 'status', status: 404 });
    try {
      const r = await auditChange('fault', baseLock.replace('version     = "1.0.0"', 'version     = "1.1.0"'));
      expect(r.code).toBe(1);
      expect(r.stdout).not.toContain('Audit passed');
      expect(r.stderr).toContain('Error:');
    } finally {
      await reg.clearFaults();
    }
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
    expect(jsonLines(cold).at(-1)).toMatchObject({ type: 'audit_summary', lock_files: 100, hashes: 1, downloads: 1 });

    await reg.mark();
    const warm = await runCli(['audit', '-recursive', '-base=HEAD~1', '-json'], { cwd: tree, env });
    expect(warm.code, warm.stderr).toBe(0);
    expect((await reg.log()).filter((x) => x.path.endsWith('.zip'))).toEqual([]);
    expect(jsonLines(warm).at(-1)).toMatchObject({ type: 'audit_summary', downloads: 0 });
    // The figure docs/provenance.md gives.
    console.log(`audit -recursive -base, 100 roots, one changed: ${requests.length} requests (${requests.join(', ')})`);
  }, 120_000);
});
