// Issue 11 #2: one HTTP 500 (or a dropped body) on any registry URL, then a
// retry after a backoff. With the backoff timer unref'd, nothing kept the
// provkit process alive while it waited, and Node exited 13 with no message,
// leaving provkit-lock-* in TMPDIR. The servers run in another process, so the
// provkit child's event loop is its own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { e2eWorkspace, requiresTf, runCli, type E2eWorkspace } from '../support/e2e.js';
import { startHost, type RemoteFault, type RemoteServer, type ServerHost } from '../support/remote/index.js';
import { makeProvider } from '../support/servers/packages.js';

let host: ServerHost;
let reg: RemoteServer;
let w: E2eWorkspace;

beforeAll(async () => {
  host = await startHost();
  reg = await host.registry({ providers: [await makeProvider('acme', 'demo', ['1.0.0', '1.1.0'], ['linux_amd64'])] });
  w = e2eWorkspace(reg.caPath, { PROVKIT_HTTP_TUNING: 'connect=3000,idle=1000,backoff=200' });
});
afterAll(async () => {
  await host.close();
  w.remove();
});

const URLS = {
  versions: () => reg.path('versions', 'acme', 'demo'),
  download: () => reg.path('download', 'acme', 'demo', '1.1.0', 'linux_amd64'),
  archive: () => reg.path('archive', 'acme', 'demo', '1.1.0', 'linux_amd64'),
} as const;
const FAULTS: Record<string, RemoteFault> = {
  'HTTP 500 once': { kind: 'status', status: 500, times: 1 },
  'a body dropped once': { kind: 'drop', times: 1 },
};

describe('a retry after a backoff keeps the process alive', () => {
  for (const [url, path] of Object.entries(URLS)) {
    for (const [fault, f] of Object.entries(FAULTS)) {
      for (const command of ['lock', 'mirror'] as const) {
        it(`${command}: ${fault} on the ${url} URL → retried, exit 0, TMPDIR clean`, async () => {
          const p = w.project(`${command}-${url}-${fault.replace(/\W/g, '')}`, {
            'main.tf': requiresTf({ demo: `${reg.host}/acme/demo` }),
          });
          await reg.clearFaults();
          await reg.setFault(await path(), f);
          await reg.mark();
          const args =
            command === 'lock' ? ['lock', '-platform=linux_amd64'] : ['mirror', '-platform=linux_amd64', 'out'];
          const r = await runCli(args, { cwd: p, env: w.env });
          expect(r.stderr).toBe('');
          expect(r.code).toBe(0);
          const log = await reg.log();
          // The fault really happened and the request was repeated.
          expect(log.filter((q) => q.fault !== undefined).length).toBe(1);
          expect(w.tmpLeftovers()).toEqual([]);
        });
      }
    }
  }
});
