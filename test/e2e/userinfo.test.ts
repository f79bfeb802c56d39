// Issue 11 #13: a registry `download_url` with userinfo
// (`https://user:pass@host/…`) ended the run with exit 13 and nothing said
// (later: exit 1 after three useless attempts, with node-fetch's "is an url
// with embedded credentials" and the password in the message), leaving
// temporary files. OpenTofu and terraform fetch such a URL with Go's client,
// which sends the userinfo as `Authorization: Basic` (net/http `client.go`
// `send`); terraform 1.11.4, run against the same fake registry, downloaded it
// with `Authorization: Basic dXNlcjpwQHNz` (`user:p@ss`) and locked it.
// provkit now does the same, and never shows the password (`user:xxxxx@`,
// as Go's `URL.Redacted`).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { e2eWorkspace, requiresTf, runCli, type CliResult, type E2eWorkspace, flat } from '../support/e2e.js';
import { startHost, type RemoteServer, type ServerHost } from '../support/remote/index.js';
import { makeProvider } from '../support/servers/packages.js';

let host: ServerHost;
let reg: RemoteServer;
let w: E2eWorkspace;

const V = '1.0.0';
const PLATFORM = 'linux_amd64';
/** `user:p@ss`, as terraform sent it for `user:p%40ss@`. */
const BASIC = `Basic ${Buffer.from('user:p@ss').toString('base64')}`;

beforeAll(async () => {
  host = await startHost();
  reg = await host.registry({
    providers: [await makeProvider('acme', 'demo', [V], [PLATFORM])],
    downloadTransform: { $fn: 'downloadUrlReplace', arg: { from: '^https://', to: 'https://user:p%40ss@' } },
  });
});
beforeEach(async () => {
  w = e2eWorkspace(reg.caPath, { PROVKIT_HTTP_TUNING: 'connect=5000,idle=5000,backoff=50' });
  await reg.clearFaults();
  await reg.mark();
});
afterEach(() => {
  w.remove();
});
afterAll(async () => {
  await host.close();
});

const RUN = { timeoutMs: 30_000 };

function expectNoSecret(r: CliResult): void {
  expect(r.stdout + r.stderr).not.toContain('p%40ss');
  expect(r.stdout + r.stderr).not.toContain('p@ss');
}

async function archiveRequests(): Promise<Array<{ path: string; authorization: unknown }>> {
  const archive = await reg.path('archive', 'acme', 'demo', V, PLATFORM);
  return (await reg.log())
    .filter((q) => q.pathname === archive)
    .map((q) => ({ path: q.path, authorization: q.headers['authorization'] }));
}

describe('a download_url with userinfo is fetched with Basic authentication, as the reference does', () => {
  it('lock: exit 0, the archive fetched with Authorization: Basic, the zh: and h1: locked, nothing left', async () => {
    const p = w.project('p', { 'main.tf': requiresTf({ demo: `${reg.host}/acme/demo` }) });
    const r = await runCli(['lock', `-platform=${PLATFORM}`], { cwd: p, env: w.env, ...RUN });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expectNoSecret(r);
    const sent = await archiveRequests();
    expect(sent.length).toBeGreaterThan(0);
    for (const q of sent) expect(q.authorization).toBe(BASIC);
    // The API requests carried no credentials of the download URL.
    expect(
      (await reg.log())
        .filter((q) => q.pathname.startsWith('/v1/'))
        .every((q) => q.headers['authorization'] === undefined),
    ).toBe(true);
    const lock = readFileSync(join(p, '.terraform.lock.hcl'), 'utf8');
    expect(lock).toContain(`"zh:${String(await reg.call('sha256', 'acme', 'demo', V, PLATFORM))}"`);
    expect(lock).toMatch(/"h1:[A-Za-z0-9+/]{43}="/);
    expect(w.tmpLeftovers()).toEqual([]);
    expect(w.leftovers()).toEqual([]);
  });

  it('install: exit 0, the package installed, nothing left', async () => {
    const p = w.project('p', { 'main.tf': requiresTf({ demo: `${reg.host}/acme/demo` }) });
    const r = await runCli(['install', `-platform=${PLATFORM}`], { cwd: p, env: w.env, ...RUN });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expectNoSecret(r);
    for (const q of await archiveRequests()) expect(q.authorization).toBe(BASIC);
    const dir = join(p, '.terraform', 'providers', reg.host, 'acme', 'demo', V, PLATFORM);
    expect(readFileSync(join(dir, `terraform-provider-demo_v${V}`), 'utf8')).toContain('demo 1.0.0');
    expect(w.tmpLeftovers()).toEqual([]);
    expect(w.leftovers()).toEqual([]);
  });

  for (const command of ['lock', 'install'] as const) {
    it(`${command}: the server refuses the credentials (401) → exit 1, the URL shown as user:xxxxx@, nothing left`, async () => {
      await reg.setFault(await reg.path('archive', 'acme', 'demo', V, PLATFORM), { kind: 'status', status: 401 });
      const p = w.project('p', { 'main.tf': requiresTf({ demo: `${reg.host}/acme/demo` }) });
      const r = await runCli([command, `-platform=${PLATFORM}`], { cwd: p, env: w.env, ...RUN });
      expect(r.timedOut).toBe(false);
      expect(r.code).toBe(1);
      expect(flat(r.stderr)).toContain(`unsuccessful request to https://user:xxxxx@${reg.host}/files/acme/demo/${V}/`);
      expect(flat(r.stderr)).toContain('401 Unauthorized');
      expect(r.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
      expectNoSecret(r);
      // Not retried: a 401 is final.
      expect(await archiveRequests()).toHaveLength(1);
      expect(w.tmpLeftovers()).toEqual([]);
      expect(w.leftovers()).toEqual([]);
    });
  }
});
