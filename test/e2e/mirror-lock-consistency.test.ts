// Issue 11 #5: `provkit mirror` against a lock file, compared with what
// terraform 1.11.4 did on the same inputs (test/fixtures/terraform-mirror/,
// recorded by record.ts there). Before: a lock whose version still meets the
// configuration but whose recorded constraints differ (`>= 1.0` now,
// `1.0.0` recorded) failed with "Inconsistent dependency lock file", where
// terraform mirrors 1.0.0 and exits 0; and an inconsistent lock was reported
// while mirroring went on (exit 1 with the target changed), where terraform
// stops before fetching anything.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  CASES,
  caseConfig,
  caseLock,
  registryProviders,
  type CaseName,
  type RecordedResult,
} from '../fixtures/terraform-mirror/cases.js';
import { e2eWorkspace, runCli, type E2eWorkspace } from '../support/e2e.js';
import { startHost, type RemoteServer, type ServerHost } from '../support/remote/index.js';
import { treeSnapshot } from '../support/tree.js';

const RECORDED = JSON.parse(
  readFileSync(new URL('../fixtures/terraform-mirror/terraform-1.11.4.json', import.meta.url), 'utf8'),
) as {
  cases: Record<string, RecordedResult>;
};

let host: ServerHost;
let reg: RemoteServer;
let w: E2eWorkspace;

beforeAll(async () => {
  host = await startHost();
  reg = await host.registry({ providers: await registryProviders() });
  w = e2eWorkspace(reg.caPath);
});
afterAll(async () => {
  await host.close();
  w.remove();
});

/** A diagnostic's words, without the box drawing and the line wrapping (terraform wraps at 78 columns). */
const words = (s: string): string => s.replace(/[╷│╵]/g, ' ').replace(/\s+/g, ' ').trim();

/** Files under `dir` with the registry host written as terraform's fixture writes it. */
async function files(dir: string): Promise<string[]> {
  const t = await treeSnapshot(dir);
  if (t === 'absent') return [];
  return Object.entries(t)
    .filter(([, v]) => !v.endsWith(' dir'))
    .map(([k]) => `out/${k}`.split(reg.host).join('HOST'))
    .sort();
}

const LOCK_CASES: CaseName[] = [
  'lock-constraints-changed-version-fits',
  'lock-version-outside-changed-constraints',
  'lock-version-outside-same-constraints',
  'lock-has-a-provider-not-in-the-configuration',
  'lock-misses-a-provider-of-the-configuration',
];

describe('mirror follows the lock file as terraform 1.11 does', () => {
  for (const name of LOCK_CASES) {
    const recorded = RECORDED.cases[name]!;
    for (const flavor of ['terraform', 'tofu'] as const) {
      it(
        `${name} (${flavor}): exit ${recorded.exit}, the files terraform wrote${recorded.exit === 0 ? '' : ', its error'}`,
        { timeout: 60_000 },
        async () => {
          const c = CASES[name];
          const lock = caseLock(c, reg.host);
          const p = w.project(`${name}-${flavor}`, {
            'main.tf': caseConfig(c, reg.host),
            ...(lock === undefined ? {} : { '.terraform.lock.hcl': lock }),
          });
          const r = await runCli([`-flavor=${flavor}`, 'mirror', '-platform=linux_amd64', 'out'], {
            cwd: p,
            env: w.env,
          });
          expect(r.code).toBe(recorded.exit);
          expect(await files(join(p, 'out'))).toEqual(recorded.files);
          if (recorded.exit === 0) {
            expect(r.stderr).toBe('');
          } else {
            const expected = words(recorded.stderr.split('HOST').join(reg.host));
            expect(words(r.stderr)).toBe(
              flavor === 'terraform' ? expected : expected.replace('terraform init -upgrade', 'tofu init -upgrade'),
            );
            // Stopped before fetching anything.
            expect(r.stdout).toBe('');
          }
          // The lock file is read, never written.
          expect(readFileSync(join(p, '.terraform.lock.hcl'), 'utf8')).toBe(lock);
          expect(w.tmpLeftovers()).toEqual([]);
        },
      );
    }
  }
});
