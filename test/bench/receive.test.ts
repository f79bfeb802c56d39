// bench/receive.mjs, which measures what receiving the registry lock's
// archives costs each HTTP client: run as a user runs it (plain node, a child
// process) against a registry in this process, every client must receive
// every archive whole (the byte count is checked across clients), and a
// missing archive must fail the run with exit 1 and the URL, not be counted
// as an error page's bytes.
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { makeProviderZip } from '../support/servers/packages.js';
import { runNode } from '../support/e2e.js';
import { startFakeRegistry, type FakeRegistry } from '../support/servers/registry.js';

const RECEIVE = fileURLToPath(new URL('../../bench/receive.mjs', import.meta.url));
const PLATFORMS = ['linux_amd64', 'linux_arm64', 'darwin_amd64', 'darwin_arm64', 'windows_amd64'];

let whole: FakeRegistry;
let partial: FakeRegistry;
let bytes = 0;
beforeAll(async () => {
  const packages: Array<{ platform: string; zip: Buffer }> = [];
  for (const platform of PLATFORMS) {
    const zip = await makeProviderZip('heavy', '1.0.0', platform);
    bytes += zip.length;
    packages.push({ platform, zip });
  }
  const serve = (ps: typeof packages): Promise<FakeRegistry> =>
    startFakeRegistry({
      providers: [{ namespace: 'acme', type: 'heavy', versions: [{ version: '1.0.0', packages: ps }] }],
    });
  whole = await serve(packages);
  partial = await serve(packages.filter((p) => p.platform !== 'darwin_arm64'));
});
afterAll(async () => {
  await whole.close();
  await partial.close();
});

function receive(reg: FakeRegistry): Promise<{ code: number; stdout: string; stderr: string }> {
  return runNode([RECEIVE, reg.host, reg.caPath, '1'], { env: process.env, timeoutMs: 60_000 });
}

describe('bench/receive.mjs', () => {
  it("receives every archive whole with node:https and node-fetch, and reports each one's CPU", async () => {
    const r = await receive(whole);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`received ${bytes} bytes per client`);
    for (const client of ['node:https', 'node-fetch']) {
      const line = r.stdout.split('\n').find((l) => l.startsWith(`${client} `));
      expect(line, client).toMatch(/^\S+\s+\d+\.\d\d {2}\(\d+\.\d\d\)$/);
    }
    // Clients provkit does not depend on are skipped by name when absent, never silently.
    for (const optional of ['undici', 'impit', 'wreq-js']) {
      const measured = r.stdout.split('\n').some((l) => l.startsWith(`${optional} `));
      if (!measured) expect(r.stderr).toContain(`${optional}: not measured (not installed)`);
    }
  });

  it('fails with exit 1 and the URL when an archive is not there', async () => {
    const r = await receive(partial);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /receive: node:https failed \(exit 1\):\nError: https:\/\/\S+_darwin_arm64\.zip: HTTP 404/,
    );
  });
});
