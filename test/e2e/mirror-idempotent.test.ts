// Issue 11 #18: `provkit mirror` is idempotent. Before: a second run into a
// target that already held the packages rewrote VERSION.json with the `zh:`
// where the first run (default flavor, filesystem-mirror source) wrote the
// zip-form `h1:`, so a re-run, or two runs at once, did not give one run's
// output. Each combination below mirrors once into A, twice into B and twice
// at the same moment into C: the three targets must be byte-identical (file
// bytes and modes). provkit runs as child processes; the registry in another.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { caseConfig } from '../fixtures/terraform-mirror/cases.js';
import { e2eWorkspace, runCli, type E2eWorkspace } from '../support/e2e.js';
import { startHost, type RemoteServer, type ServerHost } from '../support/remote/index.js';
import { makeProvider } from '../support/servers/packages.js';
import { treeSnapshot } from '../support/tree.js';

const PLATFORMS = ['linux_amd64', 'darwin_arm64'];
const FS_HOST = 'registry.example.test';

let host: ServerHost;
let reg: RemoteServer;
let w: E2eWorkspace;
let fsm: string;

beforeAll(async () => {
  host = await startHost();
  const providers = [
    await makeProvider('acme', 'demo', ['1.1.0'], PLATFORMS),
    await makeProvider('acme', 'tools', ['0.3.0'], PLATFORMS),
  ];
  reg = await host.registry({ providers });
  w = e2eWorkspace(reg.caPath);
  fsm = w.project('fs-mirror');
  for (const p of providers) {
    for (const v of p.versions) {
      for (const pkg of v.packages) {
        const dir = join(fsm, FS_HOST, p.namespace, p.type);
        mkdirSync(dir, { recursive: true });
        writeFileSync(join(dir, `terraform-provider-${p.type}_${v.version}_${pkg.platform}.zip`), pkg.zip);
      }
    }
  }
});
afterAll(async () => {
  await host.close();
  w.remove();
});

describe('a re-run and two concurrent runs give one run’s target', () => {
  for (const source of ['fs-mirror', 'registry'] as const) {
    for (const flavor of ['tofu', 'terraform'] as const) {
      for (const hashes of ['reference', 'all'] as const) {
        it(`${source}, ${flavor}, -hashes=${hashes}`, { timeout: 120_000 }, async () => {
          const p = w.project(`${source}-${flavor}-${hashes}`, {
            'main.tf': caseConfig(
              { config: { demo: 'demo', tools: 'tools' }, command: 'mirror' },
              source === 'registry' ? reg.host : FS_HOST,
            ),
          });
          const args = (target: string): string[] => [
            `-flavor=${flavor}`,
            'mirror',
            ...PLATFORMS.map((x) => `-platform=${x}`),
            `-hashes=${hashes}`,
            ...(source === 'fs-mirror' ? [`-fs-mirror=${fsm}`] : []),
            target,
          ];
          const run = async (target: string): Promise<void> => {
            const r = await runCli(args(target), { cwd: p, env: w.env });
            // A run that waits long for the other one's target lock says so; nothing else.
            expect(r.stderr.replace(/╷\n│ Warning: Waiting for another mirror run\n(│.*\n)*╵\n/g, '')).toBe('');
            expect(r.code).toBe(0);
          };
          await run('a');
          const single = await treeSnapshot(join(p, 'a'));
          expect(Object.keys(single).length).toBeGreaterThan(4);

          await run('b');
          await run('b');
          expect(await treeSnapshot(join(p, 'b'))).toEqual(single);

          await Promise.all([run('c'), run('c')]);
          expect(await treeSnapshot(join(p, 'c'))).toEqual(single);
          expect(w.tmpLeftovers()).toEqual([]);
        });
      }
    }
  }
});
