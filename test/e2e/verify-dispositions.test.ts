// `provkit verify` says who vouches for every hash it checks, in the one
// vocabulary of lock, install and audit (docs/provenance.md, "What `verify`
// says"): a package whose `zh:` the hash store records as signed (it came
// from a registry whose SHA256SUMS signature verified) is `verified-locally`
// with the key; a package nobody signed is `computed-locally` from its path;
// what the mirror's VERSION.json lists is `reported-by-mirror`; a lock-file
// hash nothing vouches for is said, with no disposition.
import { cpSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { e2eWorkspace, requiresTf, runCli, type CliResult, type E2eWorkspace, jsonLines } from '../support/e2e.js';
import { startHost, type RemoteServer, type ServerHost } from '../support/remote/index.js';
import { makeProvider } from '../support/servers/packages.js';

const FIXTURES = fileURLToPath(new URL('../../mirror-fixtures/registry.example.test', import.meta.url));
const TOOLS = 'registry.example.test/acme/tools';
const PLATFORMS = ['darwin_arm64', 'linux_amd64'];
const FLAGS = PLATFORMS.map((p) => `-platform=${p}`);
/** A well-formed h1: no package has: a hash pasted into the lock file by hand. */
const PASTED = 'h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';

let host: ServerHost;
let reg: RemoteServer;
let w: E2eWorkspace;
let key: string;
let project: string;
let mirror: string;
let demo: string;
let tree: string;

type Json = Record<string, unknown>;
const ok = (r: CliResult): CliResult => {
  expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
  return r;
};

beforeAll(async () => {
  host = await startHost();
  reg = await host.registry({ providers: [await makeProvider('acme', 'demo', ['1.0.0'], PLATFORMS)] });
  key = reg.keyIds[0]!;
  w = e2eWorkspace(reg.caPath);
  w.env['PROVKIT_HASH_STORE'] = join(w.base, 'store');
  demo = `${reg.host}/acme/demo`;
  // The registry's packages, mirrored (their signed zh: recorded in the hash store), beside a provider only a
  // filesystem mirror has (the bundled demo mirror's tools).
  mirror = join(w.base, 'mirror');
  const seed = w.project('seed', { 'main.tf': requiresTf({ demo }) });
  ok(await runCli(['mirror', ...FLAGS, mirror], { cwd: seed, env: w.env }));
  cpSync(join(FIXTURES, 'acme/tools'), join(mirror, 'registry.example.test/acme/tools'), { recursive: true });
  project = w.project('project', { 'main.tf': requiresTf({ demo, tools: TOOLS }) });
  ok(await runCli(['lock', ...FLAGS, `-fs-mirror=${mirror}`], { cwd: project, env: w.env }));
  // One hash nobody vouches for, pasted into demo's list.
  const lockPath = join(project, '.terraform.lock.hcl');
  const text = readFileSync(lockPath, 'utf8');
  const pasted = text.replace(/(provider "[^"]*acme\/demo" \{[\s\S]*?hashes = \[\n)/, `$1    "${PASTED}",\n`);
  expect(pasted).not.toBe(text);
  writeFileSync(lockPath, pasted);
  // The same root module twice in a tree, for verify -recursive.
  tree = w.project('tree');
  for (const root of ['a', 'b'])
    w.project(`tree/${root}`, { 'main.tf': requiresTf({ demo, tools: TOOLS }), '.terraform.lock.hcl': pasted });
}, 60_000);
afterAll(async () => {
  await host?.close();
  w?.remove();
});

describe('verify reports the dispositions of every package it checks', () => {
  it('human: a line per package naming who vouches for it, and the lock hash nobody vouches for', async () => {
    const r = ok(await runCli(['verify', `-mirror=${mirror}`, ...FLAGS], { cwd: project, env: w.env }));
    const lines = r.stdout.split('\n');
    const signedBy = `signed by key ${key}, expires never; verified locally (key ${key}); reported by the mirror ${mirror}`;
    for (const p of PLATFORMS) expect(lines).toContain(`- Checked ${demo} 1.0.0 for ${p} (${signedBy})`);
    for (const p of ['darwin_amd64', 'darwin_arm64', 'linux_amd64', 'linux_arm64', 'windows_amd64'])
      expect(lines).toContain(`- Checked ${TOOLS} 0.3.0 for ${p} (computed locally)`);
    expect(lines).toContain(`- No source vouches for 1 hash of ${demo} 1.0.0 in the lock file: ${PASTED}`);
    // The summary stays what it was: a hash nobody vouches for is said, not a verify problem (audit judges it).
    expect(lines.at(-2)).toBe(
      '.terraform.lock.hcl verified: 2 providers checked against 7 packages for darwin_arm64, linux_amd64; no problems.',
    );
    expect(w.tmpLeftovers()).toEqual([]);
  });

  it('-json: verify_package with each hash and its dispositions, verify_unvouched with none', async () => {
    const r = ok(await runCli(['verify', '-json', `-mirror=${mirror}`, ...FLAGS], { cwd: project, env: w.env }));
    const messages = jsonLines(r.stdout);
    const packages = messages.filter((m) => m['type'] === 'verify_package');
    expect(packages.map((m) => `${String(m['provider'])} ${String(m['platform'])}`)).toEqual([
      ...PLATFORMS.map((p) => `${demo} ${p}`),
      ...['darwin_amd64', 'darwin_arm64', 'linux_amd64', 'linux_arm64', 'windows_amd64'].map((p) => `${TOOLS} ${p}`),
    ]);
    const linux = packages.find((m) => m['provider'] === demo && m['platform'] === 'linux_amd64')!;
    const file = join(mirror, reg.host, 'acme/demo/terraform-provider-demo_1.0.0_linux_amd64.zip');
    expect(linux['location']).toBe(file);
    const hashes = linux['hashes'] as Array<{ hash: string; platform: string; dispositions: Json[] }>;
    const zh = hashes.find((h) => h.hash.startsWith('zh:'))!;
    expect(zh.platform).toBe('linux_amd64');
    expect(zh.dispositions[0]).toMatchObject({ kind: 'signed', key_id: key, key_expires: null });
    expect(String(zh.dispositions[0]!['url'])).toMatch(/^https:\/\/.*SHA256SUMS$/);
    expect(zh.dispositions.slice(1)).toEqual([
      { kind: 'verified-locally', from: file, key_id: key },
      { kind: 'reported-by-mirror', mirror },
    ]);
    // Both h1: forms are computed here from bytes whose zh: was signed.
    const h1s = hashes.filter((h) => h.hash.startsWith('h1:'));
    expect(h1s.length).toBeGreaterThanOrEqual(1);
    for (const h of h1s) expect(h.dispositions[0]).toEqual({ kind: 'verified-locally', from: file, key_id: key });
    const tools = packages.find((m) => m['provider'] === TOOLS && m['platform'] === 'darwin_amd64')!;
    const toolsFile = join(mirror, 'registry.example.test/acme/tools/terraform-provider-tools_0.3.0_darwin_amd64.zip');
    for (const h of tools['hashes'] as Array<{ dispositions: Json[] }>)
      expect(h.dispositions).toEqual([{ kind: 'computed-locally', from: toolsFile }]);
    expect(messages.filter((m) => m['type'] === 'verify_unvouched')).toEqual([
      expect.objectContaining({
        '@level': 'warn',
        '@message': `No source vouches for 1 hash of ${demo} 1.0.0 in the lock file: ${PASTED}`,
        provider: demo,
        version: '1.0.0',
        hashes: [{ hash: PASTED, platform: null, dispositions: [] }],
      }),
    ]);
    expect(messages.at(-1)).toMatchObject({ type: 'summary', problems: 0 });
  });
});

describe("verify -recursive reports each root's dispositions as verify in that root does", () => {
  it("human: under each root's line, the lines verify run in the root prints, indented", async () => {
    const one = ok(await runCli(['verify', `-mirror=${mirror}`, ...FLAGS], { cwd: project, env: w.env }));
    const r = ok(await runCli(['verify', '-recursive', `-mirror=${mirror}`, ...FLAGS], { cwd: tree, env: w.env }));
    // The single root's lines before its blank line and summary: every one of them "- Checked …" or "- No source …".
    const lines = one.stdout.split('\n');
    const own = lines.slice(0, lines.indexOf(''));
    expect(own).toHaveLength(8);
    expect(own.every((l) => l.startsWith('- Checked ') || l.startsWith('- No source vouches for '))).toBe(true);
    const under = own.map((l) => `    ${l}\n`).join('');
    expect(r.stdout).toBe(`- a: ok\n${under}- b: ok\n${under}\n2 root modules verified: no problems.\n`);
    expect(r.stderr).toBe('');
    expect(w.tmpLeftovers()).toEqual([]);
  });

  it('-json: the same verify_package and verify_unvouched messages, with their root', async () => {
    const one = jsonLines(
      ok(await runCli(['verify', '-json', `-mirror=${mirror}`, ...FLAGS], { cwd: project, env: w.env })).stdout,
    );
    const r = ok(
      await runCli(['verify', '-recursive', '-json', `-mirror=${mirror}`, ...FLAGS], { cwd: tree, env: w.env }),
    );
    const provenance = (ms: Json[]): Json[] =>
      ms
        .filter((m) => m['type'] === 'verify_package' || m['type'] === 'verify_unvouched')
        .map(({ '@timestamp': _t, ...m }) => m);
    const single = provenance(one);
    expect(single).toHaveLength(8);
    const all = provenance(jsonLines(r.stdout));
    expect(all).toEqual([...single.map((m) => ({ ...m, root: 'a' })), ...single.map((m) => ({ ...m, root: 'b' }))]);
  });
});

describe('verify without -mirror reports the dispositions of the packages installed in .terraform/providers', () => {
  /** A root module whose lock has demo from the registry (every platform's signed zh:) and tools from the mirror. */
  let installed: string;
  /** This machine's platform: what install installs (the test's packages exist for linux_amd64). */
  const HOST = 'linux_amd64';
  /** The installed directory of `HOST/NS/TYPE/VERSION` for this machine. */
  const dirOf = (versionDir: string): string => realpathSync(join(installed, '.terraform/providers', versionDir, HOST));

  beforeAll(async () => {
    installed = w.project('installed', { 'main.tf': requiresTf({ demo }) });
    ok(await runCli(['lock', ...FLAGS], { cwd: installed, env: w.env }));
    writeFileSync(join(installed, 'main.tf'), requiresTf({ demo, tools: TOOLS }));
    ok(await runCli(['lock', ...FLAGS, `-fs-mirror=${mirror}`], { cwd: installed, env: w.env }));
    ok(await runCli(['install', `-fs-mirror=${mirror}`], { cwd: installed, env: w.env }));
  }, 60_000);

  it('human: a line per installed package, naming who vouches for it, and the lock hashes nothing vouches for', async () => {
    const r = ok(await runCli(['verify'], { cwd: installed, env: w.env }));
    const lines = r.stdout.split('\n');
    expect(lines.slice(0, 2)).toEqual([
      `- Checked ${demo} 1.0.0 for ${HOST} (signed by key ${key}, expires never; verified locally (key ${key}))`,
      `- Checked ${TOOLS} 0.3.0 for ${HOST} (computed locally)`,
    ]);
    // tools' darwin_arm64 h1: is not installed here, and the lock has no zh: for the hash store to vouch by.
    expect(lines[2]).toMatch(
      new RegExp(`^- No source vouches for 1 hash of ${TOOLS} 0\\.3\\.0 in the lock file: h1:\\S+$`),
    );
    expect(lines.slice(3)).toEqual([
      '',
      '.terraform.lock.hcl verified: 2 providers checked against the configuration; no problems.',
      '',
    ]);
    expect(w.tmpLeftovers()).toEqual([]);
  });

  it("-json: verify_package with the installed directory and each hash's dispositions", async () => {
    const r = ok(await runCli(['verify', '-json'], { cwd: installed, env: w.env }));
    const messages = jsonLines(r.stdout);
    const packages = messages.filter((m) => m['type'] === 'verify_package');
    expect(packages.map((m) => [m['provider'], m['platform'], m['location']])).toEqual([
      [demo, HOST, dirOf(`${reg.host}/acme/demo/1.0.0`)],
      [TOOLS, HOST, dirOf(`${TOOLS}/0.3.0`)],
    ]);
    const demoDir = packages[0]!['location'];
    const hashes = packages[0]!['hashes'] as Array<{ hash: string; dispositions: Json[] }>;
    const h1 = hashes.filter((h) => h.hash.startsWith('h1:'));
    expect(h1).toHaveLength(1);
    expect(h1[0]!.dispositions).toEqual([{ kind: 'verified-locally', from: demoDir, key_id: key }]);
    // The zh: of the archive whose files these are, as the hash store recorded its signature.
    const zh = hashes.filter((h) => h.hash.startsWith('zh:'));
    expect(zh).toHaveLength(1);
    expect(zh[0]!.dispositions).toEqual([expect.objectContaining({ kind: 'signed', key_id: key, key_expires: null })]);
    expect(readFileSync(join(installed, '.terraform.lock.hcl'), 'utf8')).toContain(zh[0]!.hash);
    for (const h of packages[1]!['hashes'] as Array<{ dispositions: Json[] }>)
      expect(h.dispositions).toEqual([{ kind: 'computed-locally', from: packages[1]!['location'] }]);
    expect(messages.filter((m) => m['type'] === 'verify_unvouched').map((m) => m['provider'])).toEqual([TOOLS]);
    expect(messages.at(-1)).toMatchObject({ type: 'summary', problems: 0, packages: 2 });
  });

  it("an unpacked mirror's directory is vouched for by the same rule", async () => {
    const unpacked = join(w.base, 'unpacked');
    const seed = w.project('seed-unpacked', { 'main.tf': requiresTf({ demo }) });
    ok(await runCli(['mirror', '-layout=unpacked', ...FLAGS, unpacked], { cwd: seed, env: w.env }));
    // tools is in no unpacked mirror: VERSION_NOT_IN_MIRROR, exit 1; demo's packages are checked all the same.
    const r = await runCli(['verify', `-mirror=${unpacked}`, ...FLAGS], { cwd: installed, env: w.env });
    expect(r.code).toBe(1);
    const signedBy = `signed by key ${key}, expires never; verified locally (key ${key})`;
    for (const p of PLATFORMS) expect(r.stdout.split('\n')).toContain(`- Checked ${demo} 1.0.0 for ${p} (${signedBy})`);
  });
});
