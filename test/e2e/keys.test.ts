// `provkit keys`: the keys the providers' releases are signed with, and what
// is flagged about them (docs/provenance.md "Signing keys"); and the tables
// of `keys` and `audit` in a terminal of 100 and of 40 columns (tmux,
// test/support/pty.ts), as a person sees them. provkit runs as a child
// process (bin/provkit.js) against a fake registry in another process whose
// releases are signed with the real OpenPGP keys of test/fixtures/keys:
// acme/demo 1.0.0 and 1.1.0 by `main`, 1.2.0 by `other`, 1.3.0 by `expired`
// (all three listed by the registry).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import * as openpgp from 'openpgp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { e2eWorkspace, requiresTf, runCli, type E2eWorkspace, jsonLines } from '../support/e2e.js';
import { runInTerminal } from '../support/pty.js';
import { startHost, type RemoteServer, type ServerHost } from '../support/remote/index.js';
import { makeProvider } from '../support/servers/packages.js';

const PLATFORMS = ['darwin_arm64', 'linux_amd64'];

let host: ServerHost;
let reg: RemoteServer;
let w: E2eWorkspace;
/** The key IDs and fingerprints of the fixture keys, as openpgp reads them. */
const ids: Record<string, string> = {};
const fingerprints: Record<string, string> = {};
/** A project locking acme/demo 1.1.0 (`>= 1.0.0` allowed), whose provkit.hcl pins `main`. */
let project: string;

beforeAll(async () => {
  host = await startHost();
  reg = await host.registry({
    providers: [await makeProvider('acme', 'demo', ['1.0.0', '1.1.0', '1.2.0', '1.3.0'], PLATFORMS)],
    listedKeys: ['main', 'other', 'expired'],
    signVersionWith: { 'acme/demo/1.2.0': 'other', 'acme/demo/1.3.0': 'expired' },
  });
  for (const name of ['main', 'other', 'expired']) {
    const key = await openpgp.readKey({
      armoredKey: readFileSync(new URL(`../fixtures/keys/${name}.asc`, import.meta.url), 'utf8'),
    });
    ids[name] = key.getKeyID().toHex().toUpperCase();
    fingerprints[name] = key.getFingerprint().toUpperCase();
  }
  w = e2eWorkspace(reg.caPath);
  project = await lockedProject('project', '1.1.0', `audit {\n  trusted_keys = ["${fingerprints['main']!}"]\n}\n`);
}, 60_000);
afterAll(async () => {
  await host.close();
  w.remove();
});

/** A root module requiring acme/demo `>= 1.0.0` with a lock file of `version` (and `policy` as provkit.hcl). */
async function lockedProject(name: string, version: string, policy?: string): Promise<string> {
  const dir = w.project(name, {
    'main.tf': requiresTf({ demo: `${reg.host}/acme/demo@${version}` }),
    ...(policy === undefined ? {} : { 'provkit.hcl': policy }),
  });
  const r = await runCli(['lock', ...PLATFORMS.map((p) => `-platform=${p}`)], { cwd: dir, env: w.env });
  expect(r.code, r.stderr).toBe(0);
  // Locked at `version`; the configuration allows every version from 1.0.0.
  w.project(name, { 'main.tf': requiresTf({ demo: `${reg.host}/acme/demo@>= 1.0.0` }) });
  return dir;
}

describe('provkit keys', () => {
  it('the locked version’s key, with its fingerprint and expiry; a pinned key passes, and no package is downloaded', async () => {
    await reg.mark();
    const r = await runCli(['keys'], { cwd: project, env: w.env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(
      [
        `${reg.host}/acme/demo: 1 version (1 locked), 1 key`,
        '  KEY ID            EXPIRES  VERSIONS',
        `  ${ids['main']!}  never    1.1.0 (locked)`,
        `    fingerprint ${fingerprints['main']!}`,
        '',
        'Keys: 1 signing key of 1 version of 1 provider; none flagged.',
        '',
      ].join('\n'),
    );
    // One SHA256SUMS and its signature for the version; no archive.
    const paths = (await reg.log()).map((q) => q.pathname);
    expect(paths.filter((p) => p.endsWith('.zip'))).toEqual([]);
    expect(paths.filter((p) => p.endsWith('_SHA256SUMS.sig'))).toHaveLength(1);
    expect(w.tmpLeftovers()).toEqual([]);
  });

  it('-available: a key that changed between versions, an expired key and keys outside the pins are flagged (exit 2), in -json', async () => {
    const r = await runCli(['keys', '-available', '-json'], { cwd: project, env: w.env });
    expect(r.code, r.stderr).toBe(2);
    const lines = jsonLines(r.stdout);
    const keys = lines.filter((l) => l['type'] === 'signing_key');
    const codes = (l: Record<string, unknown>): string[] =>
      (l['findings'] as Array<{ code: string; flagged: boolean }>).filter((f) => f.flagged).map((f) => f.code);
    expect(keys.map((k) => [k['key_id'], k['versions'], k['locked_versions'], k['trusted'], codes(k)])).toEqual([
      [ids['main'], ['1.0.0', '1.1.0'], ['1.1.0'], true, []],
      [ids['other'], ['1.2.0'], [], false, ['KEY_CHANGED', 'KEY_NOT_TRUSTED']],
      [ids['expired'], ['1.3.0'], [], false, ['KEY_CHANGED', 'KEY_EXPIRED', 'KEY_NOT_TRUSTED']],
    ]);
    expect(keys[0]).toMatchObject({
      '@level': 'info',
      provider: `${reg.host}/acme/demo`,
      fingerprint: fingerprints['main'],
      key_expires: null,
      expired: false,
    });
    expect(keys[2]).toMatchObject({ '@level': 'error', expired: true, key_expires: expect.stringMatching(/^2020-/) });
    const provider = lines.find((l) => l['type'] === 'keys_provider');
    expect(provider).toMatchObject({
      versions: [
        { version: '1.0.0', locked: false, key_id: ids['main'] },
        { version: '1.1.0', locked: true, key_id: ids['main'] },
        { version: '1.2.0', locked: false, key_id: ids['other'] },
        { version: '1.3.0', locked: false, key_id: ids['expired'] },
      ],
      policy: 'provkit.hcl',
    });
    expect(lines.at(-1)).toMatchObject({ type: 'keys_summary', keys: 3, versions: 4, flagged: 5, pass: false });
  });

  it('terraform refuses an expired key; keys still shows and flags it rather than failing', async () => {
    const r = await runCli(['-flavor=terraform', 'keys', '-available'], { cwd: project, env: w.env });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).toMatch(new RegExp(`^  ${ids['expired']!}  2020-\\d\\d-\\d\\d \\(expired\\)  1\\.3\\.0$`, 'm'));
    expect(r.stdout).toContain(`KEY_EXPIRED: key ${ids['expired']!} has expired (2020-`);
    expect(r.stdout).toContain(`KEY_CHANGED: 1.2.0 is signed by key ${ids['other']!}, 1.1.0 by key ${ids['main']!}`);
    expect(r.stdout).toMatch(/^Keys: 3 signing keys of 4 versions of 1 provider; 5 flagged\.$/m);
  });

  it('-recursive: the versions every root locks, one key for both', async () => {
    const tree = w.project('tree');
    await lockedProject('tree/a', '1.0.0');
    await lockedProject('tree/b', '1.1.0');
    const r = await runCli(['keys', '-recursive'], { cwd: tree, env: w.env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`  ${ids['main']!}  never    1.0.0 (locked), 1.1.0 (locked)\n`);
    expect(r.stdout).toMatch(/none flagged\.\n$/);
  });

  it('a signature that cannot be fetched is an error (exit 1), never a pass', async () => {
    await reg.setFault(await reg.path('signature', 'acme', 'demo', '1.1.0'), { kind: 'status', status: 404 });
    try {
      const r = await runCli(['keys'], { cwd: project, env: w.env });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('Error:');
      expect(r.stdout).not.toContain('Keys:');
    } finally {
      await reg.clearFaults();
    }
  });
});

/** An audit block pinning the fixture key `name`. */
const pins = (name: string): string => `audit {\n  trusted_keys = ["${fingerprints[name]!}"]\n}\n`;

describe('keys -recursive and audit -recursive judge each root by its own provkit.hcl', () => {
  let tree: string;
  beforeAll(async () => {
    // The working directory pins a third key: neither root may be judged by it.
    tree = w.project('policies', { 'provkit.hcl': pins('expired') });
    await lockedProject('policies/a', '1.1.0', pins('main'));
    await lockedProject('policies/b', '1.1.0', pins('other'));
  }, 60_000);

  it('keys: the root pinning the signing key passes, the root pinning another is flagged, each naming its policy file', async () => {
    const r = await runCli(['keys', '-recursive'], { cwd: tree, env: w.env });
    expect(r.code, r.stderr).toBe(2);
    const row = `  ${ids['main']!}  never    1.1.0 (locked)`;
    expect(r.stdout).toBe(
      [
        `${reg.host}/acme/demo: 1 version (1 locked), 1 key`,
        '  judged by a/provkit.hcl for root a',
        '  KEY ID            EXPIRES  VERSIONS',
        row,
        `    fingerprint ${fingerprints['main']!}`,
        '',
        `${reg.host}/acme/demo: 1 version (1 locked), 1 key`,
        '  judged by b/provkit.hcl for root b',
        '  KEY ID            EXPIRES  VERSIONS',
        row,
        `    fingerprint ${fingerprints['main']!}`,
        `    KEY_NOT_TRUSTED: key ${ids['main']!} is not one of the trusted_keys of b/provkit.hcl`,
        '',
        'Keys: 1 signing key of 1 version of 1 provider; 1 flagged.',
        '',
      ].join('\n'),
    );
    const json = await runCli(['keys', '-recursive', '-json'], { cwd: tree, env: w.env });
    expect(json.code, json.stderr).toBe(2);
    const judged = jsonLines(json.stdout)
      .filter((l) => l['type'] === 'keys_provider' || l['type'] === 'signing_key')
      .map((l) => [l['type'], l['roots'], l['policy_file'], l['@level']]);
    expect(judged).toEqual([
      ['signing_key', ['a'], 'a/provkit.hcl', 'info'],
      ['keys_provider', ['a'], 'a/provkit.hcl', 'info'],
      ['signing_key', ['b'], 'b/provkit.hcl', 'error'],
      ['keys_provider', ['b'], 'b/provkit.hcl', 'error'],
    ]);
    expect(jsonLines(json.stdout).at(-1)).toMatchObject({ type: 'keys_summary', providers: 1, keys: 1, flagged: 1 });
  });

  it('audit: each root’s hashes are judged by its own file, and -json names that file', async () => {
    const r = await runCli(['audit', '-recursive', '-json'], { cwd: tree, env: w.env });
    expect(r.code, r.stderr).toBe(2);
    const verdicts = new Set(
      jsonLines(r.stdout)
        .filter((l) => l['type'] === 'audit_hash')
        .map((l) =>
          JSON.stringify([
            l['lock_file'],
            l['policy'],
            l['pass'],
            (l['violations'] as Array<{ code: string }>).map((v) => v.code),
          ]),
        ),
    );
    expect([...verdicts].sort()).toEqual([
      JSON.stringify(['a/.terraform.lock.hcl', 'a/provkit.hcl', true, []]),
      JSON.stringify(['b/.terraform.lock.hcl', 'b/provkit.hcl', false, ['KEY_NOT_TRUSTED']]),
    ]);
    expect(w.tmpLeftovers()).toEqual([]);
  });
});

describe('keys against a mirror: a mirror vouches for no signing key', () => {
  it('-fs-mirror: every version is NOT_SIGNED, the reason being the mirror (exit 2)', async () => {
    const dir = join(w.base, 'fs-mirror');
    const m = await runCli(['mirror', '-platform=linux_amd64', dir], { cwd: project, env: w.env });
    expect(m.code, m.stderr).toBe(0);
    const r = await runCli(['keys', `-fs-mirror=${dir}`], { cwd: project, env: w.env });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).toBe(
      [
        `${reg.host}/acme/demo: 1 version (1 locked), 0 keys`,
        `  NOT_SIGNED: no key vouches for 1.1.0 (${dir} is a mirror: no SHA256SUMS, no signature)`,
        '',
        'Keys: 0 signing keys of 1 version of 1 provider; 1 flagged.',
        '',
      ].join('\n'),
    );
    const json = await runCli(['keys', `-fs-mirror=${dir}`, '-json'], { cwd: project, env: w.env });
    expect(json.code, json.stderr).toBe(2);
    expect(jsonLines(json.stdout).find((l) => l['type'] === 'keys_provider')).toMatchObject({
      versions: [{ version: '1.1.0', locked: true, key_id: null, not_signed_reason: 'mirror' }],
      findings: [{ code: 'NOT_SIGNED', flagged: true, versions: ['1.1.0'], reasons: ['mirror'] }],
    });
    expect(w.tmpLeftovers()).toEqual([]);
  });

  it('-net-mirror -available -json: the mirror’s versions not signed (mirror), a locked one it lacks not available; a mirror that cannot be asked is an error', async () => {
    const mirror = await host.netMirror({
      providers: [await makeProvider('acme', 'demo', ['1.0.0'], PLATFORMS, reg.host)],
    });
    const args = ['keys', `-net-mirror=${mirror.url}`, '-available', '-json'];
    const r = await runCli(args, { cwd: project, env: w.env });
    expect(r.code, r.stderr).toBe(2);
    const lines = jsonLines(r.stdout);
    expect(lines.filter((l) => l['type'] === 'signing_key')).toEqual([]);
    expect(lines.find((l) => l['type'] === 'keys_provider')).toMatchObject({
      '@level': 'error',
      versions: [
        { version: '1.0.0', locked: false, key_id: null, not_signed_reason: 'mirror' },
        { version: '1.1.0', locked: true, key_id: null, not_signed_reason: 'not-available' },
      ],
      findings: [{ code: 'NOT_SIGNED', versions: ['1.0.0', '1.1.0'], reasons: ['mirror', 'not-available'] }],
    });
    expect(lines.at(-1)).toMatchObject({ type: 'keys_summary', keys: 0, versions: 2, flagged: 1, pass: false });

    await mirror.setFault(await mirror.path('index', reg.host, 'acme', 'demo'), { kind: 'status', status: 500 });
    const down = await runCli(args, { cwd: project, env: w.env });
    expect(down.code).toBe(1);
    expect(down.stdout).not.toContain('keys_summary');
    expect(w.tmpLeftovers()).toEqual([]);
  });
});

/**
 * The lines of a screen (wrapped lines joined) wider than the terminal that
 * are not one unbreakable word: a table or a sentence the terminal folded
 * somewhere in the middle. A hash or a fingerprint longer than the line is
 * kept whole on a line of its own (the terminal folds it, a copy takes it
 * in one piece).
 */
function folded(screen: string, columns: number): string[] {
  return screen.split('\n').filter((l) => [...l].length >= columns && /\S\s+\S/.test(l.trim()));
}

describe('the keys and audit tables in a terminal', () => {
  const hashes = (): string[] =>
    [...readFileSync(join(project, '.terraform.lock.hcl'), 'utf8').matchAll(/"((?:h1|zh):[^"]+)"/g)].map((m) => m[1]!);

  for (const columns of [100, 40]) {
    it(`${columns} columns: every row readable, nothing folded but a hash longer than the line, every hash whole`, async () => {
      const env = { ...w.env, PROVKIT_HASH_STORE: join(w.base, 'terminal-store') };
      const audit = await runInTerminal(['audit'], { cwd: project, env, columns, rows: 60 });
      expect(audit.code, audit.after).toBe(0);
      expect(folded(audit.after, columns)).toEqual([]);
      for (const h of hashes()) expect(audit.after.split('\n').map((l) => l.trim())).toContain(h);
      expect(audit.after).toMatch(/^ {4}darwin_arm64 {2}ok$/m);
      expect(audit.after).toMatch(/^Audit passed: 4 hashes in 1 lock file\s+audited,/m);

      const keys = await runInTerminal(['keys', '-available'], { cwd: project, env, columns, rows: 60 });
      expect(keys.code, keys.after).toBe(2);
      expect(folded(keys.after, columns)).toEqual([]);
      for (const f of Object.values(fingerprints)) expect(keys.after).toContain(f);
      expect(keys.after).toMatch(new RegExp(`^ {2}${ids['expired']!} {2}2020-\\d\\d-\\d\\d\\s+\\(expired\\)`, 'm'));
      expect(keys.after).toMatch(/^Keys: 3 signing keys of 4 versions of 1\s+provider; 5 flagged\.$/m);
      expect(w.tmpLeftovers()).toEqual([]);
    });
  }
});
