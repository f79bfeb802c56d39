// Every command that downloads registry packages (lock, mirror, install,
// bundle create) opens the archive host's connections as soon as the
// registry's download metadata names the archive, while the package's
// SHA256SUMS and signature are still on their way (installer/archive-warmup.ts),
// not after the package was authenticated: the first download from a host
// that serves archives itself finds its connection ready.
//
// The registry (in another process) names archives on a second host (the
// "release site", which nothing else touches) and answers SHA256SUMS slowly
// (throttled, about half a second), so that the order of events is plain in
// the servers' logs: the release site's first connection is accepted before
// the first SHA256SUMS was answered, and the first archive request comes on
// such a connection. Without the warm-up that connection is opened by the
// first download, after its package's SHA256SUMS arrived and its signature
// was checked. No duration is asserted.
//
// For `lock` the row pins the outcome, not the warm-up alone: lock asks for a
// registry package's archive as soon as its download metadata names it
// (fetch-cache.ts, before the signature), so that download opens the release
// site's connection at the same moment the warm-up would, and the row passes
// with either. mirror, install and bundle create wait for the signature, so
// their rows fail without the warm-up.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { e2eWorkspace, requiresTf, runCli, type E2eWorkspace } from '../support/e2e.js';
import { startHost, type RemoteServer, type ServerHost } from '../support/remote/index.js';
import { makeProvider } from '../support/servers/index.js';

const PLATFORMS = ['linux_amd64', 'darwin_arm64'];

let host: ServerHost;
let reg: RemoteServer;
/** Serves the archives the registry's download metadata names (the same paths, the same zips). */
let site: RemoteServer;
let w: E2eWorkspace;

beforeAll(async () => {
  host = await startHost();
  const providers = [await makeProvider('acme', 'warm', ['1.0.0'], PLATFORMS)];
  site = await host.registry({ archiveHost: 'same', providers });
  reg = await host.registry({
    archiveHost: 'same',
    providers,
    downloadTransform: { $fn: 'downloadUrlReplace', arg: { from: '^https://[^/]+', to: site.origin } },
  });
  // About half a second per SHA256SUMS (a few hundred bytes, 50 every 100 ms).
  await reg.setFault(/_SHA256SUMS$/, { kind: 'throttle', bytesPerSecond: 500 });
  w = e2eWorkspace(reg.caPath, { PROVKIT_HASH_STORE: 'off' });
}, 120_000);

afterAll(async () => {
  await host?.close();
});

/** Each command: its words, then (after the `-platform` flags) its operand. */
const COMMANDS: Array<[string, string[], string[]]> = [
  ['lock', ['lock'], []],
  ['mirror', ['mirror'], ['out']],
  ['install', ['install'], []],
  ['bundle create', ['bundle', 'create'], ['out.tar']],
];

describe("the archive host's connections are opened while the package's metadata is authenticated", () => {
  it.each(COMMANDS)(
    '%s: the release site is connected before the first SHA256SUMS was answered, and the first archive comes on that connection',
    async (name, command, operand) => {
      const p = w.project(name.replace(' ', '-'), { 'main.tf': requiresTf({ warm: `${reg.host}/acme/warm` }) });
      await reg.mark();
      await site.mark();
      const platforms = name === 'install' ? ['-platform=linux_amd64'] : PLATFORMS.map((x) => `-platform=${x}`);
      const r = await runCli([...command, ...platforms, ...operand], { cwd: p, env: w.env, timeoutMs: 60_000 });
      expect(r.code, r.stderr).toBe(0);
      expect(w.tmpLeftovers()).toEqual([]);

      const sums = (await reg.log()).filter((q) => q.pathname.endsWith('_SHA256SUMS'));
      const archives = (await site.log()).filter((q) => q.pathname.endsWith('.zip')).sort((a, b) => a.at - b.at);
      const connections = await site.connections();
      expect(sums.length).toBeGreaterThan(0);
      expect(archives).toHaveLength(name === 'install' ? 1 : PLATFORMS.length);
      const firstSumsAnswered = Math.min(...sums.map((q) => q.finishedAt ?? Infinity));
      // Opened ahead: before the first package could have been authenticated.
      const early = connections.filter((c) => c.at < firstSumsAnswered);
      expect(early.length, JSON.stringify({ connections, firstSumsAnswered })).toBeGreaterThan(0);
      // And used: the first archive was asked on one of them, not on a connection of its own.
      expect(early.map((c) => c.remotePort)).toContain(archives[0]!.remotePort);
    },
    60_000,
  );
});
