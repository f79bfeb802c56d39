// Issue 11 #3, #4, #7: `provkit mirror` with a bad source package. Before:
// a truncated zip (listed in the signed SHA256SUMS) or a byte-flipped zip in
// a filesystem mirror left the bad zip and index files in the target, with an
// error naming a temporary copy; packages with `../` or absolute entry names
// were mirrored with exit 0 although `hash`, `lock` and `install` refuse
// them; and the output claimed `Wrote …`, `Updated …` and `Mirrored: 2
// fetched` for work that did not happen (lock: `Obtained … now tracked in the
// lock file`). provkit runs as a child process; the registry runs in another.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  CASES,
  caseConfig,
  escapingZip,
  registryProviders,
  type RecordedResult,
} from '../fixtures/terraform-mirror/cases.js';
import { e2eWorkspace, runCli, type CliResult, type E2eWorkspace, packageHashes } from '../support/e2e.js';
import { startHost, type RemoteServer, type ServerHost } from '../support/remote/index.js';
import { makeProviderZip } from '../support/servers/packages.js';
import { treeSnapshot } from '../support/tree.js';
import { buildZipWithLayout } from '../support/zip-writer.js';

/** Diagnostics are wrapped to the width (issue 14): text compared with its line breaks as spaces. */
const flat = (s: string): string => s.replace(/\s+/g, ' ');

const RECORDED = JSON.parse(
  readFileSync(new URL('../fixtures/terraform-mirror/terraform-1.11.4.json', import.meta.url), 'utf8'),
) as {
  cases: Record<string, RecordedResult>;
};

let host: ServerHost;
let reg: RemoteServer;
let w: E2eWorkspace;
/** A filesystem mirror (packed layout) with a good `demo` and the bad `flipped`, `dotdot` and `absolute`. */
let fsm: string;
const FS_HOST = 'registry.example.test';

const fsZipPath = (type: string, version = '1.0.0'): string =>
  join(fsm, FS_HOST, 'acme', type, `terraform-provider-${type}_${version}_linux_amd64.zip`);

beforeAll(async () => {
  host = await startHost();
  reg = await host.registry({ providers: await registryProviders() });
  w = e2eWorkspace(reg.caPath);
  fsm = w.project('fs-mirror');
  const put = (path: string, bytes: Buffer): void => {
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, bytes);
  };
  put(fsZipPath('demo', '1.1.0'), await makeProviderZip('demo', '1.1.0', 'linux_amd64'));
  // One byte of the stored executable flipped: the CRC-32 no longer matches.
  const { bytes, layout } = await buildZipWithLayout([
    { name: 'terraform-provider-flipped_v1.0.0', data: '#!/bin/sh\nexit 1\n', method: 0, unixMode: 0o100755 },
  ]);
  bytes[layout.entries[0]!.dataOffset + 3]! ^= 0x20;
  put(fsZipPath('flipped'), bytes);
  put(fsZipPath('dotdot'), await escapingZip('dotdot', '../evil.txt'));
  put(fsZipPath('absolute'), await escapingZip('absolute', '/tmp/provkit-absolute-entry.txt'));
});
afterAll(async () => {
  await host.close();
  w.remove();
});

const archiveUrl = async (type: string): Promise<string> =>
  `${reg.archivesOrigin}${await reg.path('archive', 'acme', type, '1.0.0', 'linux_amd64')}`;

/** A project requiring `acme/demo` and `acme/<others>` from the registry (or the filesystem mirror's host). */
function project(name: string, others: string[], source: 'registry' | 'fs' = 'registry'): string {
  const config = Object.fromEntries([['demo', 'demo'], ...others.map((t) => [t, t])]) as Record<string, string>;
  return w.project(name, {
    'main.tf': caseConfig({ config, command: 'mirror' }, source === 'registry' ? reg.host : FS_HOST),
  });
}

function mirror(p: string, target: string, extra: string[] = [], flavor = 'tofu'): Promise<CliResult> {
  return runCli([`-flavor=${flavor}`, 'mirror', '-platform=linux_amd64', ...extra, target], { cwd: p, env: w.env });
}

/** The `diagnostic` messages of a `-json` run. */
function jsonDiagnostics(stdout: string): Array<{ severity: string; summary: string; detail: string; code?: string }> {
  return stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map(
      (l) =>
        JSON.parse(l) as {
          type: string;
          diagnostic?: { severity: string; summary: string; detail: string; code?: string };
        },
    )
    .flatMap((m) => (m.type === 'diagnostic' && m.diagnostic ? [m.diagnostic] : []));
}

function jsonTypes(stdout: string): string[] {
  return stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => (JSON.parse(l) as { type: string }).type);
}

/** Temporary or staging names anywhere in a message. */
function namesNoCopy(text: string): void {
  expect(text).not.toContain(w.tmp);
  expect(text).not.toMatch(/provkit-staging|\.partial|provkit-(lock|install)-/);
}

describe('mirror is all or nothing when a source package is bad', () => {
  for (const flavor of ['tofu', 'terraform']) {
    it(
      `${flavor}: a truncated zip listed in the signed SHA256SUMS → exit 1 naming its URL; an existing target is byte-identical, a new one is not created; TMPDIR clean`,
      { timeout: 120_000 },
      async () => {
        const p = project(`truncated-${flavor}`, []);
        const first = await mirror(p, 'out', [], flavor);
        expect(first.stderr).toBe('');
        expect(first.code).toBe(0);
        const before = await treeSnapshot(join(p, 'out'), { times: true });

        writeFileSync(join(p, 'main.tf'), caseConfig(CASES['truncated-zip-mirror'], reg.host));
        const r = await mirror(p, 'out', [], flavor);
        expect(r.code).toBe(1);
        expect(flat(r.stderr)).toContain(`${await archiveUrl('truncated')}: zip: not a valid zip file`);
        namesNoCopy(r.stderr);
        expect(r.stderr).not.toContain('Error: Failed to update indexes');
        expect(await treeSnapshot(join(p, 'out'), { times: true })).toEqual(before);

        const fresh = await mirror(p, 'new/nested/out', [], flavor);
        expect(fresh.code).toBe(1);
        expect(await treeSnapshot(join(p, 'new'))).toBe('absent');
        expect(w.tmpLeftovers()).toEqual([]);
      },
    );
  }

  it(
    'a failure while moving into place puts back what had moved: the target is byte-identical',
    { timeout: 120_000 },
    async () => {
      const p = w.project('commit-undo', {
        'main.tf': caseConfig({ config: { demo: 'demo@1.0.0' }, command: 'mirror' }, reg.host),
      });
      expect((await mirror(p, 'out')).code).toBe(0);
      // The last index document cannot be put in place (a directory holds its name).
      mkdirSync(join(p, 'out', reg.host, 'acme/tools/index.json'), { recursive: true });
      writeFileSync(join(p, 'out', reg.host, 'acme/tools/index.json/keep'), 'x');
      const before = await treeSnapshot(join(p, 'out'), { times: true });

      // demo 1.1.0 (a new zip, a new 1.1.0.json, a changed index.json) and tools 0.3.0 move in before tools/index.json fails.
      writeFileSync(
        join(p, 'main.tf'),
        caseConfig({ config: { demo: 'demo', tools: 'tools' }, command: 'mirror' }, reg.host),
      );
      const r = await mirror(p, 'out');
      expect(r.code).toBe(1);
      expect(await treeSnapshot(join(p, 'out'), { times: true })).toEqual(before);
      expect(flat(r.stderr)).toContain(`cannot put ${join(p, 'out', reg.host, 'acme/tools/index.json')} in place`);
      namesNoCopy(r.stderr);
      expect(r.stdout).not.toMatch(/Wrote|Updated|Mirrored/);
      expect(w.tmpLeftovers()).toEqual([]);
    },
  );

  it(
    'a byte-flipped zip in a filesystem mirror → exit 1 naming the mirror file, with the code `hash` gives; the target is byte-identical',
    { timeout: 120_000 },
    async () => {
      const p = project('flipped', [], 'fs');
      const first = await mirror(p, 'out', [`-fs-mirror=${fsm}`]);
      expect(first.stderr).toBe('');
      expect(first.code).toBe(0);
      const before = await treeSnapshot(join(p, 'out'), { times: true });

      writeFileSync(
        join(p, 'main.tf'),
        caseConfig({ config: { demo: 'demo', flipped: 'flipped' }, command: 'mirror' }, FS_HOST),
      );
      const r = await mirror(p, 'out', [`-fs-mirror=${fsm}`, '-json']);
      expect(r.code).toBe(1);
      const [d, ...more] = jsonDiagnostics(r.stdout);
      expect(more).toEqual([]);
      expect(d?.detail).toContain(`${fsZipPath('flipped')}: `);
      namesNoCopy(d?.detail ?? '');
      const hashed = await runCli(['hash', '-json', fsZipPath('flipped')], { cwd: p, env: w.env });
      expect(hashed.code).toBe(1);
      const code = packageHashes<{ error: { code: string } }>(hashed.stdout)[0]!.error.code;
      expect(code).toBe('ZIP_CHECKSUM');
      expect(d?.code).toBe(code);
      expect(await treeSnapshot(join(p, 'out'), { times: true })).toEqual(before);

      const fresh = await mirror(p, 'new', [`-fs-mirror=${fsm}`]);
      expect(fresh.code).toBe(1);
      expect(flat(fresh.stderr)).toContain(`${fsZipPath('flipped')}: `);
      expect(await treeSnapshot(join(p, 'new'))).toBe('absent');
      expect(w.tmpLeftovers()).toEqual([]);
    },
  );
});

describe('mirror refuses what no client can install, as hash, lock and install do', () => {
  const KINDS = [
    { type: 'dotdot', code: 'ZIP_PATH_TRAVERSAL', text: "entry contains '..': ../evil.txt" },
    {
      type: 'absolute',
      code: 'ZIP_ABSOLUTE_PATH',
      text: 'entry has an absolute name: /tmp/provkit-absolute-entry.txt',
    },
  ] as const;
  for (const { type, code, text } of KINDS) {
    for (const source of ['registry', 'fs'] as const) {
      it(
        `${type} entry from the ${source === 'fs' ? 'filesystem mirror' : 'registry'} → mirror, lock and install exit 1 with ${code}; nothing written`,
        { timeout: 120_000 },
        async () => {
          const p = project(`${type}-${source}`, [type], source);
          const viaFs = source === 'fs' ? [`-fs-mirror=${fsm}`] : [];
          const recorded = RECORDED.cases[`${type === 'dotdot' ? 'dotdot' : 'absolute'}-entry-mirror`]!;
          // The reference mirrors it (a deliberate difference: no client could install it).
          expect(recorded.exit).toBe(0);

          const r = await mirror(p, 'out', [...viaFs, '-json']);
          expect(r.code).toBe(1);
          const diags = jsonDiagnostics(r.stdout);
          expect(diags.map((d) => d.code)).toEqual([code]);
          expect(diags[0]?.detail).toContain(text);
          expect(diags[0]?.detail).toContain(source === 'fs' ? fsZipPath(type) : await archiveUrl(type));
          expect(jsonTypes(r.stdout)).not.toContain('mirror_package');
          expect(await treeSnapshot(join(p, 'out'))).toBe('absent');

          if (source === 'fs') {
            const hashed = await runCli(['hash', '-json', fsZipPath(type)], { cwd: p, env: w.env });
            expect(packageHashes<{ error: { code: string } }>(hashed.stdout)[0]!.error.code).toBe(code);
          }
          const lock = await runCli(['lock', '-platform=linux_amd64', ...viaFs], { cwd: p, env: w.env });
          expect(lock.code).toBe(1);
          expect(flat(lock.stderr)).toContain(text);
          namesNoCopy(lock.stderr);
          const install = await runCli(['install', '-platform=linux_amd64', ...viaFs], { cwd: p, env: w.env });
          expect(install.code).toBe(1);
          expect(flat(install.stderr)).toContain(text);
          namesNoCopy(install.stderr);
          expect(w.tmpLeftovers()).toEqual([]);
        },
      );
    }
  }
});

describe('lock, mirror and install say only what happened', () => {
  it(
    'mirror: on failure no Wrote/Updated lines and no "Mirrored:" summary (-json: no mirror_package, mirror_index or summary)',
    { timeout: 120_000 },
    async () => {
      const p = w.project('claims-mirror', { 'main.tf': caseConfig(CASES['truncated-zip-mirror'], reg.host) });
      const human = await mirror(p, 'out');
      expect(human.code).toBe(1);
      expect(human.stdout).not.toMatch(/Wrote|Updated|Mirrored/);
      expect(human.stdout).toContain(`- Retrieved ${reg.host}/acme/demo 1.1.0 for linux_amd64`);
      const json = await mirror(p, 'out', ['-json']);
      expect(json.code).toBe(1);
      const types = jsonTypes(json.stdout);
      for (const t of ['mirror_package', 'mirror_index', 'summary']) expect(types).not.toContain(t);
      expect(await treeSnapshot(join(p, 'out'))).toBe('absent');
    },
  );

  it(
    'mirror: a re-run that changes nothing says Kept, updates nothing and rewrites nothing',
    { timeout: 120_000 },
    async () => {
      const p = project('claims-rerun', []);
      const first = await mirror(p, 'out');
      expect(first.code).toBe(0);
      expect(first.stdout).toContain(`  - Wrote ${reg.host}/acme/demo/terraform-provider-demo_1.1.0_linux_amd64.zip`);
      expect(first.stdout).toContain(`  - Updated ${reg.host}/acme/demo/index.json`);
      const before = await treeSnapshot(join(p, 'out'), { times: true });
      const again = await mirror(p, 'out');
      expect(again.code).toBe(0);
      expect(again.stdout).toContain(`  - Kept ${reg.host}/acme/demo/terraform-provider-demo_1.1.0_linux_amd64.zip`);
      expect(again.stdout).not.toMatch(/Updated|Wrote/);
      expect(again.stdout).toContain('Mirrored: 0 fetched, 1 already present and verified.');
      expect(await treeSnapshot(join(p, 'out'), { times: true })).toEqual(before);
    },
  );

  it(
    'lock: no "Obtained … now tracked in the lock file" when the lock is not written (terraform prints none either)',
    { timeout: 120_000 },
    async () => {
      const recorded = RECORDED.cases['truncated-zip-lock']!;
      expect(recorded.exit).toBe(1);
      expect(recorded.stdout).not.toContain('Obtained');
      const p = w.project('claims-lock', { 'main.tf': caseConfig(CASES['truncated-zip-lock'], reg.host) });
      const r = await runCli(['lock', '-platform=linux_amd64', '-platform=darwin_arm64'], { cwd: p, env: w.env });
      expect(r.code).toBe(1);
      expect(r.stdout).not.toContain('Obtained');
      expect(r.stdout).not.toContain('Success');
      expect(flat(r.stderr)).toContain(`${await archiveUrl('truncated')}: zip: not a valid zip file`);
      namesNoCopy(r.stderr);
      expect(await treeSnapshot(join(p, '.terraform.lock.hcl'))).toBe('absent');
      const json = await runCli(['lock', '-platform=linux_amd64', '-json'], { cwd: p, env: w.env });
      expect(json.code).toBe(1);
      expect(jsonTypes(json.stdout)).not.toContain('lock_hashes');
      expect(w.tmpLeftovers()).toEqual([]);
    },
  );

  it(
    'install: "Installed" only for what is installed; no lock file, no success line; the bad package named by its URL',
    { timeout: 120_000 },
    async () => {
      const p = w.project('claims-install', { 'main.tf': caseConfig(CASES['truncated-zip-mirror'], reg.host) });
      const r = await runCli(['install', '-platform=linux_amd64'], { cwd: p, env: w.env });
      expect(r.code).toBe(1);
      expect(r.stdout).toContain(`- Installed ${reg.host}/acme/demo v1.1.0 (signed`);
      const installed = await treeSnapshot(join(p, '.terraform/providers', reg.host, 'acme/demo/1.1.0/linux_amd64'));
      expect(Object.keys(installed === 'absent' ? {} : installed)).toContain('terraform-provider-demo_v1.1.0');
      expect(r.stdout).not.toContain(`Installed ${reg.host}/acme/truncated`);
      expect(r.stdout).not.toMatch(/Success|lock file/);
      expect(flat(r.stderr)).toContain(`${await archiveUrl('truncated')}: zip: not a valid zip file`);
      namesNoCopy(r.stderr);
      expect(await treeSnapshot(join(p, '.terraform.lock.hcl'))).toBe('absent');
      expect(w.tmpLeftovers()).toEqual([]);
    },
  );
});
