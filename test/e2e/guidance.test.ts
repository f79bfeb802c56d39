// Issue 14 (the reference's guidance where users get stuck): provkit runs as a
// child process against a fake registry in another process (remote host) or
// a filesystem mirror on disk, and says what terraform 1.11.4 says in the same
// place. terraform's own output is recorded in
// test/fixtures/guidance/terraform-1.11.4.txt (record-terraform.sh there, the
// commands written beside each output); these tests read it, never terraform.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { e2eWorkspace, runCli, type E2eWorkspace } from '../support/e2e.js';
import { startHost, type RemoteServer, type ServerHost } from '../support/remote/index.js';
import { makeProvider } from '../support/servers/packages.js';

const FS_HOST = 'registry.example.test';
const RECORDED = readFileSync(new URL('../fixtures/guidance/terraform-1.11.4.txt', import.meta.url), 'utf8');

/** The recorded output of one case of record-terraform.sh (`=== TITLE`): its stdout and stderr. */
function recorded(title: string): { stdout: string; stderr: string } {
  const start = RECORDED.indexOf(`=== ${title}\n`);
  if (start < 0) throw new Error(`no recorded case ${title}`);
  const end = RECORDED.indexOf('\n=== ', start + 1);
  const text = RECORDED.slice(start, end < 0 ? undefined : end + 1);
  const out = text.indexOf('--- stdout\n');
  const err = text.indexOf('--- stderr\n');
  return { stdout: text.slice(out + '--- stdout\n'.length, err), stderr: text.slice(err + '--- stderr\n'.length) };
}

/** Words only: no box drawing, no wrapping. */
const words = (s: string): string => s.replace(/[╷│╵]/g, ' ').replace(/\s+/g, ' ').trim();

let host: ServerHost;
let reg: RemoteServer;
let w: E2eWorkspace;
/** A filesystem mirror: acme/demo 1.0.0 and 1.1.0 packed for linux_amd64 and darwin_arm64, 1.1.0 also unpacked for freebsd_amd64. */
let fsm: string;
let unpackedH1: string;

beforeAll(async () => {
  host = await startHost();
  reg = await host.registry({
    providers: [await makeProvider('acme', 'demo', ['1.0.0', '1.1.0'], ['linux_amd64', 'darwin_arm64'])],
  });
  w = e2eWorkspace(reg.caPath);
  fsm = w.project('fs-mirror');
  const dir = join(fsm, FS_HOST, 'acme', 'demo');
  mkdirSync(dir, { recursive: true });
  const p = await makeProvider('acme', 'demo', ['1.0.0', '1.1.0'], ['linux_amd64', 'darwin_arm64']);
  for (const v of p.versions)
    for (const pkg of v.packages)
      writeFileSync(join(dir, `terraform-provider-demo_${v.version}_${pkg.platform}.zip`), pkg.zip);
  // An unpacked package (`VERSION/OS_ARCH/`), as `mirror -layout=unpacked` writes it.
  const unpacked = join(dir, '1.1.0', 'freebsd_amd64');
  mkdirSync(unpacked, { recursive: true });
  writeFileSync(join(unpacked, 'terraform-provider-demo_v1.1.0'), '#!/bin/sh\n# demo 1.1.0 freebsd_amd64\nexit 1\n', {
    mode: 0o755,
  });
  writeFileSync(join(unpacked, 'README.md'), 'fake demo 1.1.0 for freebsd_amd64\n');
  const h = await runCli(['hash', unpacked], { cwd: w.base, env: w.env });
  expect(h.code).toBe(0);
  unpackedH1 = h.stdout.trim();
});
afterAll(async () => {
  await host.close();
  w.remove();
});

const fsConfig = `terraform {\n  required_providers {\n    demo = { source = "${FS_HOST}/acme/demo" }\n  }\n}\n`;
const regConfig = (): string =>
  `terraform {\n  required_providers {\n    demo = {\n      source  = "${reg.host}/acme/demo"\n      version = "~> 1.0"\n    }\n  }\n}\n`;
/** A CLI configuration whose only installation method is the filesystem mirror (as `init` is used with one). */
function fsCliConfig(): string {
  const path = join(w.base, 'fsm.tfrc');
  writeFileSync(path, `provider_installation {\n  filesystem_mirror {\n    path = ${JSON.stringify(fsm)}\n  }\n}\n`);
  return path;
}
const hashesOf = (lock: string): string[] => [...lock.matchAll(/"(h1:[^"]+|zh:[^"]+)"/g)].map((m) => m[1]!);
const jsonLines = (stdout: string): Array<Record<string, unknown>> =>
  stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('issue 14: install warns "Incomplete lock file information for providers" as init does', () => {
  it(
    "terraform: after installing from a filesystem mirror, terraform 1.11.4's warning word for word; not again when nothing changed",
    { timeout: 60_000 },
    async () => {
      const p = w.project('incomplete-tf', { 'main.tf': fsConfig });
      const env = { ...w.env, TF_CLI_CONFIG_FILE: fsCliConfig() };
      const r = await runCli(['-flavor=terraform', 'install', '-platform=linux_amd64'], { cwd: p, env });
      expect(r.code).toBe(0);
      expect(r.stderr).toBe('');
      const tf = recorded('init from a filesystem mirror').stdout;
      const warning = (s: string): string =>
        s.slice(
          s.indexOf('Warning: Incomplete lock file information for providers'),
          s.indexOf('(where linux_amd64 is the platform to generate)'),
        );
      expect(warning(tf)).not.toBe('');
      expect(words(warning(r.stdout))).toBe(words(warning(tf)));
      // After the lock file message, as init prints it.
      expect(r.stdout.indexOf('Warning: Incomplete')).toBeGreaterThan(
        r.stdout.indexOf('Terraform has created a lock file'),
      );
      const again = await runCli(['-flavor=terraform', 'install', '-platform=linux_amd64'], { cwd: p, env });
      expect(again.code).toBe(0);
      expect(recorded('init again, nothing changed').stdout).not.toContain('Incomplete lock file');
      expect(again.stdout).not.toContain('Incomplete lock file');
      expect(w.tmpLeftovers()).toEqual([]);
    },
  );

  it(
    "tofu: OpenTofu's wording; -json: a warning diagnostic with code INCOMPLETE_LOCK_FILE",
    { timeout: 60_000 },
    async () => {
      const p = w.project('incomplete-tofu', { 'main.tf': fsConfig });
      const env = { ...w.env, TF_CLI_CONFIG_FILE: fsCliConfig() };
      const r = await runCli(['-flavor=tofu', 'install', '-platform=linux_amd64', '-json'], { cwd: p, env });
      expect(r.code).toBe(0);
      const d = jsonLines(r.stdout).find((m) => m['type'] === 'diagnostic')?.['diagnostic'] as
        Record<string, string> | undefined;
      expect(d).toMatchObject({
        severity: 'warning',
        summary: 'Incomplete lock file information for providers',
        code: 'INCOMPLETE_LOCK_FILE',
      });
      // opentofu/opentofu internal/command/init.go incompleteLockFileInformationBody.
      expect(d?.['detail']).toBe(
        'Due to your customized provider installation methods, OpenTofu was forced to calculate lock file checksums locally for the following providers:\n' +
          `  - ${FS_HOST}/acme/demo\n\n` +
          'The current .terraform.lock.hcl file only includes checksums for linux_amd64, so OpenTofu running on another platform will fail to install these providers.\n\n' +
          'To calculate additional checksums for another platform, run:\n  tofu providers lock -platform=linux_amd64\n(where linux_amd64 is the platform to generate)',
      );
    },
  );

  it(
    "no warning from a registry (signed checksums of every platform recorded), nor when the lock already has other platforms' hashes",
    { timeout: 60_000 },
    async () => {
      const p = w.project('incomplete-registry', { 'main.tf': regConfig() });
      const r = await runCli(['-flavor=terraform', 'install', '-platform=linux_amd64'], { cwd: p, env: w.env });
      expect(r.code).toBe(0);
      expect(recorded('init from the registry (self-signed)').stdout).not.toContain('Incomplete lock file');
      expect(r.stdout).not.toContain('Incomplete lock file');
      const q = w.project('incomplete-locked', { 'main.tf': fsConfig });
      const env = { ...w.env, TF_CLI_CONFIG_FILE: fsCliConfig() };
      expect(
        (
          await runCli(
            ['-flavor=terraform', 'lock', `-fs-mirror=${fsm}`, '-platform=linux_amd64', '-platform=darwin_arm64'],
            { cwd: q, env },
          )
        ).code,
      ).toBe(0);
      const i = await runCli(['-flavor=terraform', 'install', '-platform=linux_amd64'], { cwd: q, env });
      expect(i.code).toBe(0);
      expect(i.stdout).not.toContain('Incomplete lock file');
    },
  );
});

describe('issue 14: lock -all-platforms -fs-mirror locks every platform the mirror holds', () => {
  it(
    "packed *_OS_ARCH.zip and unpacked OS_ARCH/ entries alike, not only this machine's",
    { timeout: 60_000 },
    async () => {
      const p = w.project('all-platforms-fsm', { 'main.tf': fsConfig });
      const r = await runCli(['lock', '-all-platforms', `-fs-mirror=${fsm}`, '-platform=linux_amd64'], {
        cwd: p,
        env: w.env,
      });
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      for (const platform of ['linux_amd64', 'darwin_arm64', 'freebsd_amd64'])
        expect(r.stdout).toContain(`checksums for ${platform};`);
      const hashes = hashesOf(readFileSync(join(p, '.terraform.lock.hcl'), 'utf8'));
      expect(hashes).toHaveLength(3);
      expect(hashes).toContain(unpackedH1);
      // The same three as locking them by name.
      const q = w.project('all-platforms-named', { 'main.tf': fsConfig });
      const named = await runCli(
        ['lock', `-fs-mirror=${fsm}`, '-platform=linux_amd64', '-platform=darwin_arm64', '-platform=freebsd_amd64'],
        { cwd: q, env: w.env },
      );
      expect(named.code).toBe(0);
      expect(hashesOf(readFileSync(join(q, '.terraform.lock.hcl'), 'utf8'))).toEqual(hashes);
      expect(w.tmpLeftovers()).toEqual([]);
    },
  );
});

describe('issue 14: a platform the source does not have: the error lists the platforms it has', () => {
  it(
    "lock from a filesystem mirror, a platform it lacks: terraform's error, then the platforms of 1.1.0 there",
    { timeout: 60_000 },
    async () => {
      const p = w.project('typo-fsm', { 'main.tf': fsConfig });
      // terraform was recorded with the typo linux_amd46, which provkit refuses before any work
      // ("Did you mean linux_amd64?"); a real platform the mirror lacks takes its place.
      const r = await runCli(['-flavor=terraform', 'lock', `-fs-mirror=${fsm}`, '-platform=linux_riscv64'], {
        cwd: p,
        env: w.env,
      });
      expect(r.code).toBe(1);
      expect(words(recorded('lock from the filesystem mirror, platform typo').stderr)).toContain(
        'Error: Could not retrieve providers for locking',
      );
      expect(words(r.stderr)).toContain(
        `provider ${FS_HOST}/acme/demo 1.1.0 is not available for linux_riscv64 in the filesystem mirror at ${fsm} (available for: darwin_arm64, freebsd_amd64, linux_amd64).`,
      );
      expect(w.tmpLeftovers()).toEqual([]);
    },
  );

  it(
    'lock and mirror from a registry, install: the platforms the registry publishes for the version',
    { timeout: 60_000 },
    async () => {
      const p = w.project('typo-registry', { 'main.tf': regConfig() });
      // Recorded with the typo linux_amd46 (refused by provkit as a typo): linux_riscv64 stands for it.
      const lock = await runCli(['-flavor=terraform', 'lock', '-platform=linux_riscv64'], { cwd: p, env: w.env });
      expect(lock.code).toBe(1);
      const tf = words(recorded('lock for a platform typo').stderr)
        .replaceAll('HOST', reg.host)
        .replaceAll('linux_amd46', 'linux_riscv64');
      expect(tf).toContain(`provider ${reg.host}/acme/demo 1.1.0 is not available for linux_riscv64.`);
      expect(words(lock.stderr)).toContain(
        `provider ${reg.host}/acme/demo 1.1.0 is not available for linux_riscv64 (available for: darwin_arm64, linux_amd64).`,
      );
      const mirror = await runCli(['-flavor=terraform', 'mirror', '-platform=linux_riscv64', 'out'], {
        cwd: p,
        env: w.env,
      });
      expect(mirror.code).toBe(1);
      expect(words(mirror.stderr)).toContain('(available for: darwin_arm64, linux_amd64)');
      const install = await runCli(['-flavor=terraform', 'install', '-platform=freebsd_amd64'], { cwd: p, env: w.env });
      expect(install.code).toBe(1);
      expect(words(install.stderr)).toContain('Error: Incompatible provider version');
      expect(words(install.stderr)).toContain('This version is available for: darwin_arm64, linux_amd64.');
      expect(w.tmpLeftovers()).toEqual([]);
    },
  );
});

describe('issue 14: mirror says which version it chose and why, as providers mirror does', () => {
  it(
    '"Selected v1.1.0 to match dependency lock file" / "to meet constraints ~> 1.0" (terraform 1.11.4\'s lines); -json: the provider_selected message',
    { timeout: 60_000 },
    async () => {
      const p = w.project('selected', { 'main.tf': regConfig() });
      const unlocked = await runCli(['-flavor=terraform', 'mirror', '-platform=linux_amd64', 'out'], {
        cwd: p,
        env: w.env,
      });
      expect(unlocked.code).toBe(0);
      const tfUnlocked = recorded('mirror without a lock entry').stdout.replaceAll('HOST', reg.host);
      const firstTwo = (s: string): string => s.split('\n').slice(0, 2).join('\n');
      expect(firstTwo(tfUnlocked)).toBe(
        `- Mirroring ${reg.host}/acme/demo...\n  - Selected v1.1.0 to meet constraints ~> 1.0`,
      );
      expect(unlocked.stdout).toContain(firstTwo(tfUnlocked));
      expect((await runCli(['-flavor=terraform', 'lock', '-platform=linux_amd64'], { cwd: p, env: w.env })).code).toBe(
        0,
      );
      const locked = await runCli(['-flavor=terraform', 'mirror', '-platform=linux_amd64', 'out2'], {
        cwd: p,
        env: w.env,
      });
      expect(locked.code).toBe(0);
      const tfLocked = recorded('mirror with a lock entry').stdout.replaceAll('HOST', reg.host);
      expect(locked.stdout).toContain(firstTwo(tfLocked));
      const j = await runCli(['-flavor=terraform', 'mirror', '-platform=linux_amd64', '-json', 'out3'], {
        cwd: p,
        env: w.env,
      });
      expect(j.code).toBe(0);
      const sel = jsonLines(j.stdout).find((m) => m['type'] === 'provider_selected');
      expect(sel).toMatchObject({
        '@message': `${reg.host}/acme/demo: Selected v1.1.0 to match dependency lock file`,
        reason: 'lock',
        version: '1.1.0',
      });
      // lock and install do not print it (providers lock and init do not).
      expect(j.stdout.split('\n')[0]).toContain('"type":"version"');
    },
  );
});

describe('issue 14: signed and self-signed as the reference words them', () => {
  it(
    'terraform: "self-signed, key ID …" in install, lock and mirror, and init\'s note on partner and community providers',
    { timeout: 60_000 },
    async () => {
      const p = w.project('self-signed', { 'main.tf': regConfig() });
      const tfInit = recorded('init from the registry (self-signed)').stdout;
      const keyId = /key ID ([0-9A-F]{16})/.exec(tfInit)?.[1];
      expect(keyId).toBeDefined();
      const install = await runCli(['-flavor=terraform', 'install', '-platform=linux_amd64'], { cwd: p, env: w.env });
      expect(install.code).toBe(0);
      const installed = /^- Installed .*$/m.exec(tfInit)![0].replaceAll('HOST', reg.host);
      expect(install.stdout).toContain(installed);
      const note = tfInit.slice(
        tfInit.indexOf('Partner and community'),
        tfInit.indexOf('/signing') + '/signing'.length,
      );
      expect(note).toContain('https://');
      expect(install.stdout).toContain(note);
      const lock = await runCli(['-flavor=terraform', 'lock', '-platform=linux_amd64', '-platform=darwin_arm64'], {
        cwd: p,
        env: w.env,
      });
      expect(lock.code).toBe(0);
      expect(lock.stdout).toContain(
        `- Retrieved ${reg.host}/acme/demo 1.1.0 for darwin_arm64 (self-signed, key ID ${keyId!})`,
      );
      const mirror = await runCli(['-flavor=terraform', 'mirror', '-platform=linux_amd64', 'out'], {
        cwd: p,
        env: w.env,
      });
      expect(mirror.code).toBe(0);
      expect(mirror.stdout).toContain(`(self-signed, key ID ${keyId!})`);
      expect(install.stdout + lock.stdout + mirror.stdout).not.toMatch(/\(signed, key ID/);
    },
  );

  it('tofu: "signed, key ID …" and OpenTofu\'s note', { timeout: 60_000 }, async () => {
    const p = w.project('signed-tofu', { 'main.tf': regConfig() });
    const install = await runCli(['-flavor=tofu', 'install', '-platform=linux_amd64'], { cwd: p, env: w.env });
    expect(install.code).toBe(0);
    expect(install.stdout).toMatch(/- Installed \S+ v1\.1\.0 \(signed, key ID [0-9A-F]{16}\)/);
    // opentofu/opentofu internal/command/views/init.go ProvidersSignedInfo.
    expect(install.stdout).toContain(
      "Providers are signed by their developers.\nIf you'd like to know more about provider signing, you can read about it here:\nhttps://opentofu.org/docs/cli/plugins/signing/",
    );
    expect(install.stdout).not.toContain('self-signed');
  });
});

describe('issue 14: network_mirror { trust_all_hashes = true } (OpenTofu 1.12) through install', () => {
  // opentofu/opentofu v1.12 internal/getproviders/http_mirror_source.go: with
  // trust_all_hashes every platform's hashes in VERSION.json are handed to the
  // authentication (ReportedByTrustedMirror); internal/command/init.go records
  // those for registry.opentofu.org providers only (docs/reference.md §5.2 item 80).
  const PLATFORMS = ['linux_amd64', 'darwin_arm64', 'windows_amd64'];
  let mirror: RemoteServer;
  const cliConfigFor = (name: string, trust: boolean): string => {
    const path = join(w.base, `${name}.tfrc`);
    writeFileSync(
      path,
      `provider_installation {\n  network_mirror {\n    url = "${mirror.url}"\n${trust ? '    trust_all_hashes = true\n' : ''}  }\n}\n`,
    );
    return path;
  };
  const project = (name: string, source: string): string =>
    w.project(name, {
      'main.tf': `terraform {\n  required_providers {\n    demo = { source = "${source}" }\n  }\n}\n`,
    });

  beforeAll(async () => {
    mirror = await host.netMirror({
      providers: [
        await makeProvider('hashicorp', 'demo', ['1.0.0'], PLATFORMS, 'registry.opentofu.org'),
        await makeProvider('acme', 'demo', ['1.0.0'], PLATFORMS, 'registry.example.test'),
      ],
      hashes: 'both',
    });
  });

  it(
    "tofu, a registry.opentofu.org provider: every platform's zh: and h1: from the mirror are recorded; without it only this platform's",
    { timeout: 60_000 },
    async () => {
      const trusted = project('trust-all', 'hashicorp/demo');
      const r = await runCli(['-flavor=tofu', 'install', '-platform=linux_amd64'], {
        cwd: trusted,
        env: { ...w.env, TF_CLI_CONFIG_FILE: cliConfigFor('trust-all', true) },
      });
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const all = hashesOf(readFileSync(join(trusted, '.terraform.lock.hcl'), 'utf8'));
      expect(all.filter((h) => h.startsWith('zh:'))).toHaveLength(PLATFORMS.length);
      expect(all.filter((h) => h.startsWith('h1:'))).toHaveLength(PLATFORMS.length);
      const plain = project('trust-none', 'hashicorp/demo');
      const p = await runCli(['-flavor=tofu', 'install', '-platform=linux_amd64'], {
        cwd: plain,
        env: { ...w.env, TF_CLI_CONFIG_FILE: cliConfigFor('trust-none', false) },
      });
      expect(p.code).toBe(0);
      const one = hashesOf(readFileSync(join(plain, '.terraform.lock.hcl'), 'utf8'));
      expect(one.filter((h) => h.startsWith('zh:'))).toHaveLength(1);
      expect(one.filter((h) => h.startsWith('h1:'))).toHaveLength(1);
      expect(all).toEqual(expect.arrayContaining(one));
      expect(w.tmpLeftovers()).toEqual([]);
    },
  );

  it('another host than registry.opentofu.org: only the hashes verified here', { timeout: 60_000 }, async () => {
    const other = project('trust-other-host', 'registry.example.test/acme/demo');
    const r = await runCli(['-flavor=tofu', 'install', '-platform=linux_amd64'], {
      cwd: other,
      env: { ...w.env, TF_CLI_CONFIG_FILE: cliConfigFor('trust-other', true) },
    });
    expect(r.code).toBe(0);
    const without = project('trust-other-host-off', 'registry.example.test/acme/demo');
    expect(
      (
        await runCli(['-flavor=tofu', 'install', '-platform=linux_amd64'], {
          cwd: without,
          env: { ...w.env, TF_CLI_CONFIG_FILE: cliConfigFor('trust-other-off', false) },
        })
      ).code,
    ).toBe(0);
    const hashes = hashesOf(readFileSync(join(other, '.terraform.lock.hcl'), 'utf8'));
    expect(hashes).toEqual(hashesOf(readFileSync(join(without, '.terraform.lock.hcl'), 'utf8')));
    expect(hashes.filter((h) => h.startsWith('zh:'))).toHaveLength(1);
  });
});

describe("issue 14: mirror writes VERSION.json hashes as each flavor's reference does", () => {
  // opentofu/opentofu v1.12 internal/command/providers_mirror.go: the
  // authentication's hashes of the platform (the zh:, plus the registry's h1:
  // where it reports `packages`); terraform 1.11.4: one h1: (HashZip) per
  // archive (docs/reference.md §6.2 item 95).
  it(
    'tofu: the zh: of the archive verified against the signed SHA256SUMS; terraform: the zip-form h1:',
    { timeout: 60_000 },
    async () => {
      const p = w.project('version-json', { 'main.tf': regConfig() });
      const doc = (dir: string): Record<string, { hashes: string[]; url: string }> =>
        (
          JSON.parse(readFileSync(join(p, dir, reg.host, 'acme', 'demo', '1.1.0.json'), 'utf8')) as {
            archives: Record<string, { hashes: string[]; url: string }>;
          }
        ).archives;
      for (const flavor of ['tofu', 'terraform'] as const) {
        const r = await runCli([`-flavor=${flavor}`, 'mirror', '-platform=linux_amd64', `out-${flavor}`], {
          cwd: p,
          env: w.env,
        });
        expect(r.code).toBe(0);
      }
      const zip = join(p, 'out-tofu', reg.host, 'acme', 'demo', 'terraform-provider-demo_1.1.0_linux_amd64.zip');
      const h = await runCli(['hash', zip], { cwd: p, env: w.env });
      const [h1, zh] = h.stdout.trim().split('\n');
      expect(zh).toMatch(/^zh:[0-9a-f]{64}$/);
      expect(doc('out-tofu')['linux_amd64']).toEqual({
        hashes: [zh],
        url: 'terraform-provider-demo_1.1.0_linux_amd64.zip',
      });
      expect(doc('out-terraform')['linux_amd64']).toEqual({
        hashes: [h1],
        url: 'terraform-provider-demo_1.1.0_linux_amd64.zip',
      });
    },
  );
});
