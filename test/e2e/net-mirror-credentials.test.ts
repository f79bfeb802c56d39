// Issue 11 #19: credentials for a `-net-mirror=URL`, and CLI-configuration
// `host`/`credentials` blocks for a non-ASCII hostname. provkit runs as a
// child process; the mirror and the registry run in another process. What
// terraform 1.11.4 does is recorded in
// test/fixtures/install-safety/terraform-1.11.4.json (record-terraform.sh):
// `providers lock -net-mirror` sends the token of a `credentials` block or a
// `TF_TOKEN_…` variable for the mirror's host (internal/command/providers_lock.go
// passes `c.Services.CredentialsSource()` to `getproviders.NewHTTPMirrorSource`),
// accepts blocks for `éxample.com`, and refuses blocks written in punycode
// (svchost `ForComparison`).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { e2eWorkspace, requiresTf, runCli, type E2eWorkspace, flat } from '../support/e2e.js';
import { startHost, type RemoteServer, type ServerHost } from '../support/remote/index.js';
import { makeProvider } from '../support/servers/packages.js';

interface TerraformObserved {
  netMirrorCredentials: {
    noCredentials: { exit: number; error: string };
    credentialsBlock: { exit: number };
    tokenEnv: { exit: number };
  };
  nonAsciiHostBlocks: { unicode: string; punycode: string };
}
const TF = JSON.parse(
  readFileSync(new URL('../fixtures/install-safety/terraform-1.11.4.json', import.meta.url), 'utf8'),
) as TerraformObserved;

const TOKEN = 'sekrit-mirror-token';
let host: ServerHost;
let mirror: RemoteServer;
let reg: RemoteServer;
let w: E2eWorkspace;

beforeAll(async () => {
  host = await startHost();
  mirror = await host.netMirror({
    providers: [await makeProvider('acme', 'demo', ['1.0.0'], ['linux_amd64'], 'registry.example.test')],
    requireToken: TOKEN,
  });
  reg = await host.registry({
    providers: [await makeProvider('acme', 'demo', ['1.0.0'], ['linux_amd64'])],
    requireToken: TOKEN,
  });
  // Both servers use the host process's one test CA.
  w = e2eWorkspace(mirror.caPath);
});
afterAll(async () => {
  await host.close();
  w.remove();
});

let n = 0;
/** A project and a CLI configuration file holding `tfrc`. */
function setup(source: string, tfrc: string): { cwd: string; env: Record<string, string> } {
  n += 1;
  const cwd = w.project(`p${n}`, { 'main.tf': requiresTf({ demo: source }) });
  const cfg = join(w.base, `cli-${n}.tfrc`);
  writeFileSync(cfg, tfrc);
  return { cwd, env: { ...w.env, TF_CLI_CONFIG_FILE: cfg } };
}
const credentialsBlock = (hostname: string, token = TOKEN): string =>
  `credentials "${hostname}" {\n  token = "${token}"\n}\n`;
const args = {
  lock: () => ['lock', '-platform=linux_amd64', `-net-mirror=${mirror.url}`],
  mirror: () => ['mirror', '-platform=linux_amd64', `-net-mirror=${mirror.url}`, 'out'],
  install: () => ['install', '-platform=linux_amd64', `-net-mirror=${mirror.url}`],
};

describe('-net-mirror sends the CLI configuration’s credentials for the mirror host', () => {
  it(`terraform 1.11.4 (recorded): no credentials → exit ${TF.netMirrorCredentials.noCredentials.exit}; a credentials block or TF_TOKEN_ → exit 0`, () => {
    expect(TF.netMirrorCredentials.noCredentials).toEqual({
      exit: 1,
      error: 'rejected the given authentication credentials',
    });
    expect(TF.netMirrorCredentials.credentialsBlock.exit).toBe(0);
    expect(TF.netMirrorCredentials.tokenEnv.exit).toBe(0);
  });

  for (const [command, argv] of Object.entries(args)) {
    it(`${command}: without credentials → refused by the mirror, as terraform`, async () => {
      const p = setup('registry.example.test/acme/demo', '');
      const r = await runCli(argv(), { cwd: p.cwd, env: p.env });
      expect(r.code).toBe(1);
      expect(flat(r.stderr)).toContain(`host ${mirror.host} rejected the given authentication credentials`);
      expect(w.tmpLeftovers()).toEqual([]);
    });
    it(`${command}: a credentials block for the mirror host → the token is sent, exit 0`, async () => {
      const p = setup('registry.example.test/acme/demo', credentialsBlock(mirror.host));
      await mirror.mark();
      const r = await runCli(argv(), { cwd: p.cwd, env: p.env });
      expect(flat(r.stderr)).not.toContain('Error');
      expect(r.code).toBe(0);
      const log = await mirror.log();
      const json = log.filter((q) => q.path.endsWith('.json'));
      expect(json.length).toBeGreaterThan(0);
      expect(json.every((q) => q.headers['authorization'] === `Bearer ${TOKEN}`)).toBe(true);
      // Archives never carry the token (docs/reference.md §4.3 item 68; sources/net-mirror.ts).
      expect(log.filter((q) => q.path.endsWith('.zip')).every((q) => q.headers['authorization'] === undefined)).toBe(
        true,
      );
      expect(w.tmpLeftovers()).toEqual([]);
    });
  }
  it('lock: a TF_TOKEN_ variable for HOST:PORT → exit 0', async () => {
    const p = setup('registry.example.test/acme/demo', '');
    const r = await runCli(args.lock(), {
      cwd: p.cwd,
      env: { ...p.env, [`TF_TOKEN_127_0_0_1:${mirror.port}`]: TOKEN },
    });
    expect(flat(r.stderr)).not.toContain('Error');
    expect(r.code).toBe(0);
    expect(readFileSync(join(p.cwd, '.terraform.lock.hcl'), 'utf8')).toContain(
      'provider "registry.example.test/acme/demo"',
    );
  });
  it('lock: a wrong token → refused', async () => {
    const p = setup('registry.example.test/acme/demo', credentialsBlock(mirror.host, 'wrong'));
    const r = await runCli(args.lock(), { cwd: p.cwd, env: p.env });
    expect(r.code).toBe(1);
    expect(flat(r.stderr)).toContain('rejected the given authentication credentials');
  });
});

describe('host and credentials blocks for a non-ASCII hostname', () => {
  const hostBlock = (name: string): string =>
    `host "${name}" {\n  services = {\n    "providers.v1" = "${reg.providersUrl}"\n  }\n}\n`;

  it('terraform 1.11.4 (recorded): accepts éxample.com, refuses xn--xample-9ua.com with svchost’s message', () => {
    expect(TF.nonAsciiHostBlocks.unicode).toBe('');
    expect(TF.nonAsciiHostBlocks.punycode).toContain(
      'Error: The host "xn--xample-9ua.com" block has an invalid hostname',
    );
    expect(TF.nonAsciiHostBlocks.punycode).toContain(
      'Error: The credentials "xn--xample-9ua.com" block has an invalid hostname',
    );
  });

  for (const [label, credentialsFor] of [
    ['the same spelling', 'éxample.com'],
    ['another Unicode spelling (upper case)', 'ÉXAMPLE.COM'],
  ] as const) {
    it(`host "éxample.com" + credentials in ${label}: discovery is replaced and the token reaches the registry`, async () => {
      const p = setup('éxample.com/acme/demo', hostBlock('éxample.com') + credentialsBlock(credentialsFor));
      await reg.mark();
      const r = await runCli(['lock', '-platform=linux_amd64'], { cwd: p.cwd, env: p.env });
      expect(flat(r.stderr)).not.toContain('Error');
      expect(r.code).toBe(0);
      expect(readFileSync(join(p.cwd, '.terraform.lock.hcl'), 'utf8')).toContain('provider "éxample.com/acme/demo"');
      const api = (await reg.log()).filter((q) => q.path.startsWith('/v1/providers/'));
      expect(api.length).toBeGreaterThan(0);
      expect(api.every((q) => q.headers['authorization'] === `Bearer ${TOKEN}`)).toBe(true);
    });
  }
  it('a TF_TOKEN_ variable in punycode matches the Unicode host block', async () => {
    const p = setup('éxample.com/acme/demo', hostBlock('éxample.com'));
    const r = await runCli(['lock', '-platform=linux_amd64'], {
      cwd: p.cwd,
      env: { ...p.env, TF_TOKEN_xn____xample__9ua_com: TOKEN },
    });
    expect(flat(r.stderr)).not.toContain('Error');
    expect(r.code).toBe(0);
  });
  it('blocks written in punycode are refused with the reference’s message', async () => {
    const p = setup('éxample.com/acme/demo', hostBlock('xn--xample-9ua.com') + credentialsBlock('xn--xample-9ua.com'));
    const r = await runCli(['lock', '-platform=linux_amd64'], { cwd: p.cwd, env: p.env });
    expect(r.code).toBe(1);
    for (const line of TF.nonAsciiHostBlocks.punycode.split('|').filter(Boolean))
      expect(flat(r.stderr)).toContain(line);
  });
});
