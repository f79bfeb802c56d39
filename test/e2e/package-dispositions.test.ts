// `lock` and `install` say who vouches for each hash of a package they fetch
// (docs/provenance.md, docs/json-ui.md): `-json`'s `package_fetch_complete`
// and `install_complete` carry every hash with its dispositions, and the
// human line adds "(N hashes for … reported by the registry, not verified)"
// for OpenTofu 1.12's `packages` hashes of platforms nobody downloaded,
// beside "(signed, key ID …)" as before.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { e2eWorkspace, requiresTf, runCli, type E2eWorkspace, jsonLines } from '../support/e2e.js';
import { startHost, type RemoteServer, type ServerHost } from '../support/remote/index.js';
import { makeProvider } from '../support/servers/packages.js';

const PLATFORMS = ['darwin_arm64', 'linux_amd64', 'windows_amd64'];

let host: ServerHost;
let reg: RemoteServer;
let w: E2eWorkspace;
let key: string;

beforeAll(async () => {
  host = await startHost();
  reg = await host.registry({
    providers: [await makeProvider('acme', 'demo', ['1.0.0'], PLATFORMS)],
    packagesExtension: true,
  });
  key = reg.keyIds[0]!;
  w = e2eWorkspace(reg.caPath);
}, 30_000);
afterAll(async () => {
  await host?.close();
  w?.remove();
});

type Json = Record<string, unknown>;

interface HashJson {
  hash: string;
  platform: string | null;
  dispositions: Json[];
}

/** `kind`s of each hash's dispositions, by `PLATFORM hash-scheme`. */
function kindsByPlatform(hashes: HashJson[]): Record<string, string[][]> {
  const out: Record<string, string[][]> = {};
  for (const h of hashes) {
    const k = `${h.platform ?? '?'} ${h.hash.slice(0, 3)}`;
    (out[k] ??= []).push(h.dispositions.map((d) => String(d['kind'])));
  }
  return out;
}

describe('lock and install report who vouches for every hash of a package', () => {
  it('lock -json: package_fetch_complete carries each hash with its dispositions; the human line names the registry-reported ones', async () => {
    const p = w.project('lock', { 'main.tf': requiresTf({ demo: `${reg.host}/acme/demo@1.0.0` }) });
    const r = await runCli(['-flavor=tofu', 'lock', '-platform=linux_amd64', '-json'], { cwd: p, env: w.env });
    expect(r.code).toBe(0);
    const complete = jsonLines(r.stdout).filter((m) => m['type'] === 'package_fetch_complete');
    expect(complete).toHaveLength(1);
    const hashes = complete[0]!['hashes'] as HashJson[];
    const kinds = kindsByPlatform(hashes);
    // The downloaded package: its zh: signed, re-derived here, and reported; its h1: computed here and reported.
    expect(kinds['linux_amd64 zh:']).toEqual([['signed', 'verified-locally', 'reported-by-registry']]);
    expect(kinds['linux_amd64 h1:']).toEqual([['verified-locally', 'reported-by-registry']]);
    // The others: zh: signed (SHA256SUMS), h1: only reported (OpenTofu 1.12 `packages`).
    for (const other of ['darwin_arm64', 'windows_amd64']) {
      expect(kinds[`${other} zh:`]).toEqual([['signed', 'reported-by-registry']]);
      expect(kinds[`${other} h1:`]).toEqual([['reported-by-registry']]);
    }
    const signed = hashes.find((h) => h.platform === 'linux_amd64' && h.hash.startsWith('zh:'))!.dispositions[0]!;
    expect(signed['key_id']).toBe(key);
    expect(String(signed['url'])).toMatch(/SHA256SUMS$/);

    const human = await runCli(['-flavor=tofu', 'lock', '-platform=linux_amd64'], {
      cwd: w.project('lock-human', { 'main.tf': requiresTf({ demo: `${reg.host}/acme/demo@1.0.0` }) }),
      env: w.env,
    });
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(
      `- Retrieved ${reg.host}/acme/demo 1.0.0 for linux_amd64 (signed, key ID ${key}) (2 hashes for darwin_arm64, windows_amd64 reported by the registry, not verified)\n`,
    );
  });

  it('install -json: install_complete carries them too', async () => {
    const lockDir = join(w.base, 'lock');
    const p = w.project('install', {
      'main.tf': requiresTf({ demo: `${reg.host}/acme/demo@1.0.0` }),
      '.terraform.lock.hcl': readFileSync(join(lockDir, '.terraform.lock.hcl'), 'utf8'),
    });
    const r = await runCli(['-flavor=tofu', 'install', '-platform=linux_amd64', '-json'], { cwd: p, env: w.env });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const done = jsonLines(r.stdout).filter((m) => m['type'] === 'install_complete');
    expect(done).toHaveLength(1);
    const kinds = kindsByPlatform(done[0]!['hashes'] as HashJson[]);
    expect(kinds['linux_amd64 zh:']).toEqual([['signed', 'verified-locally', 'reported-by-registry']]);
    expect(kinds['windows_amd64 h1:']).toEqual([['reported-by-registry']]);
  });
});
