// bench/node-floor.mjs, the Node floor the commands benchmark measures a cold
// registry lock against: run as a user runs it (plain node, a child process)
// against a registry in this process, it must hash every archive it was asked
// for, report each zh: (equal to the archive's SHA-256), and fail with exit 1
// and a message when an archive cannot be had. A floor that silently did
// less work would make the benchmark's ratios meaningless.
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { makeProviderZip } from '../support/servers/packages.js';
import { runNode } from '../support/e2e.js';
import { startFakeRegistry, type FakeRegistry } from '../support/servers/registry.js';

const FLOOR = fileURLToPath(new URL('../../bench/node-floor.mjs', import.meta.url));
const PLATFORMS = ['linux_amd64', 'linux_arm64', 'darwin_amd64', 'darwin_arm64', 'windows_amd64'];

let reg: FakeRegistry;
const zips = new Map<string, Buffer>();
beforeAll(async () => {
  for (const p of PLATFORMS) zips.set(p, await makeProviderZip('heavy', '1.0.0', p));
  reg = await startFakeRegistry({
    providers: [
      {
        namespace: 'acme',
        type: 'heavy',
        versions: [
          { version: '1.0.0', packages: PLATFORMS.map((platform) => ({ platform, zip: zips.get(platform)! })) },
        ],
      },
    ],
  });
});
afterAll(() => reg.close());

function runFloor(platforms: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return runNode([FLOOR, reg.host, reg.caPath, 'acme/heavy', '1.0.0', ...platforms], {
    env: process.env,
    timeoutMs: 60_000,
  });
}

describe('bench/node-floor.mjs', () => {
  it("hashes every archive as it arrives and reports each one's zh:", async () => {
    const r = await runFloor(PLATFORMS);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as {
      seconds: number;
      cpuSeconds: number;
      archives: Array<{ platform: string; zh: string; entries: number }>;
    };
    expect(out.seconds).toBeGreaterThan(0);
    expect(out.cpuSeconds).toBeGreaterThan(0);
    const byPlatform = new Map(out.archives.map((a) => [a.platform, a]));
    expect([...byPlatform.keys()].sort()).toEqual([...PLATFORMS].sort());
    for (const p of PLATFORMS) {
      const zip = zips.get(p)!;
      // Every entry followed by the stream digester (2 in these archives), and the zh: of the bytes.
      expect(byPlatform.get(p)).toEqual({
        platform: p,
        zh: `zh:${createHash('sha256').update(zip).digest('hex')}`,
        entries: 2,
      });
    }
  });

  it('fails with exit 1 and names the platform when an archive is not there', async () => {
    const r = await runFloor(['linux_amd64', 'plan9_amd64']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^node-floor: plan9_amd64: https:\/\/\S+\/download\/plan9\/amd64: 404$/m);
  });
});
