// Issue 11 (real data): lock files and configurations from public repositories
// (test/fixtures/real/, PROVENANCE.md), run through provkit as a child process
// exactly as terraform 1.11.4 was run through them by
// scripts/record-real-corpus.ts (recorded/*.json), and compared byte for byte:
// exit code, the lock file left behind, and the diagnostic where it fails.
// Inputs (configurations, fake filesystem mirrors) come from
// test/support/real-corpus.ts, shared with the recording script.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { parseLockFile, serializeLocks } from '../../src/lockfile/index.js';
import { e2eWorkspace, runCli, type CliResult, type E2eWorkspace } from '../support/e2e.js';
import {
  configItems,
  dedupeReleases,
  fsMirrorCliConfig,
  LOCK_PLATFORMS,
  lockConfig,
  lockItems,
  lockReleases,
  PROBE,
  RECORDED,
  withoutProbe,
  writeFakeMirror,
  type ConfigItem,
  type LockItem,
  type RecordedConfigItem,
  type RecordedLockItem,
  type RecordedRun,
} from '../support/real-corpus.js';

const LOCKS = lockItems();
const CONFIGS = configItems();
const recordedLock = (id: string): RecordedLockItem =>
  JSON.parse(readFileSync(join(RECORDED, 'lockfiles', `${id}.json`), 'utf8')) as RecordedLockItem;
const recordedConfig = (id: string): RecordedConfigItem =>
  JSON.parse(readFileSync(join(RECORDED, 'configs', `${id}.json`), 'utf8')) as RecordedConfigItem;

/**
 * The error diagnostics of a run, each as `SUMMARY @ FILE:LINE | DETAIL`, for
 * terraform's rendering without a terminal (`on FILE line N, in ...:` and a
 * source snippet, the detail wrapped at 78 columns) and provkit's (`on
 * PATH:LINE:COL:`): the box characters, the snippet and the wrapping are
 * presentation (see the "location" defect in the report); the summary, the
 * file's base name, the line and the words of the detail are compared.
 * Sorted: terraform's installer visits providers in Go map order.
 */
function errorTexts(stderr: string): string[] {
  const plain = stderr.replace(/\x1b\[[0-9;]*m/g, '').replace(/^[╷╵│] ?/gm, '');
  return plain
    .split(/^(?=Error: )/m)
    .map((chunk) => chunk.trim())
    .filter((chunk) => chunk.startsWith('Error: '))
    .map((chunk) => {
      const lines = chunk.split('\n');
      const summary = lines[0]!.slice('Error: '.length).trim();
      let where = '';
      const rest: string[] = [];
      for (const line of lines.slice(1)) {
        const on = /^\s*on (\S+?)(?: line (\d+)(?:, in [^:]*)?|:(\d+):\d+):$/.exec(line);
        if (on) {
          where = `${on[1]!.split('/').pop()!}:${on[2] ?? on[3]!}`;
          continue;
        }
        if (/^\s+\d+: /.test(line) || /^\s*\(source code not available\)\s*$/.test(line) || /^\s+[├│]/.test(line))
          continue;
        rest.push(line);
      }
      return `${summary} @ ${where} | ${rest.join(' ').replace(/\s+/g, ' ').trim()}`;
    })
    .sort();
}

/**
 * Where provkit differs from terraform on this corpus: `id: scenario` →
 * the defect. Those tests are `it.fails` (they pass while provkit differs).
 */
const KNOWN_DIFFERENCES: Record<string, string> = {};
function itUnless(key: string): (name: string, fn: () => Promise<void> | void) => void {
  return KNOWN_DIFFERENCES[key] === undefined
    ? (name, fn) => it(name, fn)
    : (name, fn) => it.fails(`${name} [known difference: ${KNOWN_DIFFERENCES[key]}]`, fn);
}

let w: E2eWorkspace;
let lockMirror: string;
let lockRc: string;

beforeAll(async () => {
  w = e2eWorkspace();
  lockMirror = join(w.base, 'lock-mirror');
  await writeFakeMirror(lockMirror, dedupeReleases(LOCKS.flatMap(lockReleases)));
  lockRc = join(w.base, 'lock-mirror.tfrc');
  writeFileSync(lockRc, fsMirrorCliConfig(lockMirror));
});
afterAll(() => w.remove());

function lockProject(item: LockItem, scenario: string): string {
  const dir = w.project(`lock/${item.id}/${scenario}`, { 'main.tf': lockConfig(item) });
  writeFileSync(join(dir, '.terraform.lock.hcl'), item.bytes);
  return dir;
}

/**
 * Runs provkit with the recorded command's arguments, mapped to provkit's
 * commands, with a TMPDIR of its own (the tests run concurrently).
 */
async function runLike(rec: RecordedRun, cwd: string, mirror: string, rc: string, tmp: string): Promise<CliResult> {
  const args = rec.args.map((a) => a.replaceAll('$MIRROR', mirror));
  const env = { ...w.env, TF_CLI_CONFIG_FILE: rc, TMPDIR: tmp };
  if (args[0] === 'providers' && args[1] === 'lock')
    return runCli(['-flavor=terraform', 'lock', ...args.slice(2)], { cwd, env });
  if (args[0] === 'init') return runCli(['-flavor=terraform', 'install'], { cwd, env });
  throw new Error(`no provkit command for ${args.join(' ')}`);
}

function lockAfter(dir: string): string | null {
  const p = join(dir, '.terraform.lock.hcl');
  return existsSync(p) ? readFileSync(p, 'latin1') : null;
}

/** Exit code and lock file compared (and TMPDIR left empty); the result, for the diagnostics. */
async function compareRun(rec: RecordedRun, cwd: string, mirror: string, rc: string): Promise<CliResult> {
  const tmp = mkdtempSync(join(w.base, 'tmp-'));
  const r = await runLike(rec, cwd, mirror, rc, tmp);
  expect(r.timedOut).toBe(false);
  expect({ code: r.code, lock: lockAfter(cwd) }).toEqual({ code: rec.code, lock: rec.lock });
  expect(readdirSync(tmp)).toEqual([]);
  return r;
}

describe('real corpus: lock files parse as terraform reads them', () => {
  for (const item of LOCKS) {
    itUnless(`${item.id}: rewrite`)(
      `${item.id}: terraform's diagnostics; serialised = terraform's rewrite of it`,
      () => {
        const rec = recordedLock(item.id);
        const { locks, diagnostics } = parseLockFile(item.bytes, '.terraform.lock.hcl', 'terraform');
        const errors = diagnostics
          .filter((d) => d.severity === 'error')
          .map(
            (d) =>
              `${d.summary} @ .terraform.lock.hcl:${d.range?.start?.line} | ${(d.detail ?? '').replace(/\s+/g, ' ').trim()}`,
          )
          .sort();
        expect(errors).toEqual(rec.rewrite.code === 0 ? [] : errorTexts(rec.rewrite.stderr));
        if (rec.rewrite.code === 0)
          expect(serializeLocks(locks, 'terraform').toString('latin1')).toBe(withoutProbe(rec.rewrite.lock!));
      },
    );
  }
});

describe.concurrent('real corpus: lock files through provkit, as terraform 1.11.4 ran them', () => {
  for (const item of LOCKS) {
    itUnless(`${item.id}: rewrite`)(`${item.id}: providers lock ${PROBE.address} (read and re-written)`, async () => {
      const rec = recordedLock(item.id).rewrite;
      const r = await compareRun(rec, lockProject(item, 'rewrite'), lockMirror, lockRc);
      if (rec.code !== 0) expect(errorTexts(r.stderr)).toEqual(errorTexts(rec.stderr));
    });
    itUnless(`${item.id}: lock`)(
      `${item.id}: providers lock ${LOCK_PLATFORMS.join(' ')} (fake packages merged)`,
      async () => {
        const rec = recordedLock(item.id).lock;
        const r = await compareRun(rec, lockProject(item, 'lock'), lockMirror, lockRc);
        if (rec.code !== 0) expect(errorTexts(r.stderr)).toEqual(errorTexts(rec.stderr));
      },
    );
    // One install run serves the two tests below.
    let install: Promise<CliResult> | undefined;
    const installOnce = (): Promise<CliResult> =>
      (install ??= compareRun(recordedLock(item.id).init, lockProject(item, 'init'), lockMirror, lockRc));
    it(`${item.id}: init / install from the mirror: exit code, lock file untouched`, async () => {
      await installOnce();
    });
    // One "Failed to install provider" diagnostic per provider, as terraform
    // prints them (issue 14; src/installer/install.ts installFailureDiagnostics).
    it(`${item.id}: init / install from the mirror: terraform's diagnostics`, async () => {
      const r = await installOnce();
      expect(errorTexts(r.stderr)).toEqual(errorTexts(recordedLock(item.id).init.stderr));
    });
  }
});

describe
  .runIf(CONFIGS.length > 0)
  .concurrent('real corpus: configurations through provkit, as terraform 1.11.4 ran them', () => {
    const mirrors = new Map<string, Promise<{ mirror: string; rc: string }>>();
    function mirrorFor(item: ConfigItem): Promise<{ mirror: string; rc: string }> {
      let m = mirrors.get(item.id);
      if (!m) {
        const mirror = join(w.base, 'config-mirrors', item.id);
        const rc = join(w.base, `${item.id}.tfrc`);
        writeFileSync(rc, fsMirrorCliConfig(mirror));
        m = writeFakeMirror(mirror, item.releases).then(() => ({ mirror, rc }));
        mirrors.set(item.id, m);
      }
      return m;
    }
    function project(item: ConfigItem, rec: RecordedConfigItem, scenario: string): string {
      const dir = join(w.base, 'config', item.id, scenario);
      rmSync(dir, { recursive: true, force: true });
      cpSync(join(item.dir, 'files'), dir, { recursive: true });
      if (rec.modulesJson !== null) {
        mkdirSync(join(dir, '.terraform/modules'), { recursive: true });
        writeFileSync(join(dir, '.terraform/modules/modules.json'), rec.modulesJson);
      }
      return dir;
    }
    for (const item of CONFIGS) {
      itUnless(`${item.id}: lock`)(
        `${item.id}: providers lock ${LOCK_PLATFORMS.join(' ')} with no lock file`,
        async () => {
          const rec = recordedConfig(item.id);
          const { mirror, rc } = await mirrorFor(item);
          const r = await compareRun(rec.lock, project(item, rec, 'lock'), mirror, rc);
          if (rec.lock.code !== 0) expect(errorTexts(r.stderr)).toEqual(errorTexts(rec.lock.stderr));
        },
      );
      itUnless(`${item.id}: init`)(
        `${item.id}: init / install twice (the second run reads the first one's lock file)`,
        async () => {
          const rec = recordedConfig(item.id);
          const { mirror, rc } = await mirrorFor(item);
          const dir = project(item, rec, 'init');
          const first = await compareRun(rec.init, dir, mirror, rc);
          if (rec.init.code !== 0) expect(errorTexts(first.stderr)).toEqual(errorTexts(rec.init.stderr));
          // An invalid configuration: byte for byte, init's preface and the snippets included (issue 14).
          if (rec.init.stderr.includes('encountered problems during initialisation'))
            expect(first.stderr).toBe(rec.init.stderr);
          const second = await compareRun(rec.reinit, dir, mirror, rc);
          if (rec.reinit.code !== 0) expect(errorTexts(second.stderr)).toEqual(errorTexts(rec.reinit.stderr));
        },
      );
    }
  });
