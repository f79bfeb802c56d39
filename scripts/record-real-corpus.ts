// Records what terraform does with the real corpus (test/fixtures/real/):
// `npx tsx scripts/record-real-corpus.ts` (needs `terraform` on PATH, no
// network: everything comes from a filesystem mirror of fake packages built by
// test/support/real-corpus.ts). Writes test/fixtures/real/recorded/**/*.json,
// which test/e2e/real-corpus.test.ts compares provkit with. The commands are
// listed in test/fixtures/real/README.md.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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
  writeFakeMirror,
  type RecordedConfigItem,
  type RecordedLockItem,
  type RecordedRun,
} from '../test/support/real-corpus.js';

const version = spawnSync('terraform', ['version'], { encoding: 'utf8' });
if (version.status !== 0 || !version.stdout.startsWith('Terraform v1.11.4')) {
  process.stderr.write(
    `terraform 1.11.4 is needed on PATH (found: ${version.stdout.split('\n')[0] ?? version.error?.message ?? '?'})\n`,
  );
  process.exit(1);
}

const base = mkdtempSync(join(tmpdir(), 'record-real-corpus-'));
const emptyRc = join(base, 'empty.tfrc');
writeFileSync(emptyRc, '');

function terraform(args: string[], cwd: string, mirror: string, cliConfig = emptyRc): Omit<RecordedRun, 'lock'> {
  const r = spawnSync('terraform', args, {
    cwd,
    encoding: 'utf8',
    env: {
      PATH: process.env['PATH'] ?? '',
      HOME: base,
      TF_CLI_CONFIG_FILE: cliConfig,
      CHECKPOINT_DISABLE: '1',
      TMPDIR: base,
    },
  });
  const clean = (s: string): string => s.replaceAll(mirror, '$MIRROR').replaceAll(cwd, '$WORK');
  return { args: args.map((a) => a.replaceAll(mirror, '$MIRROR')), code: r.status ?? 128, stderr: clean(r.stderr) };
}

function lockOf(dir: string): string | null {
  const p = join(dir, '.terraform.lock.hcl');
  return existsSync(p) ? readFileSync(p, 'utf8') : null;
}

const platformFlags = LOCK_PLATFORMS.map((p) => `-platform=${p}`);

// Lock files: one mirror with every locked release.
const items = lockItems();
const lockMirror = join(base, 'lock-mirror');
await writeFakeMirror(lockMirror, dedupeReleases(items.flatMap(lockReleases)));
const mirrorRc = join(base, 'mirror.tfrc');
writeFileSync(mirrorRc, fsMirrorCliConfig(lockMirror));

mkdirSync(join(RECORDED, 'lockfiles'), { recursive: true });
for (const item of items) {
  const fresh = (name: string): string => {
    const dir = join(base, 'lock', item.id, name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'main.tf'), lockConfig(item));
    writeFileSync(join(dir, '.terraform.lock.hcl'), item.bytes);
    return dir;
  };
  let dir = fresh('rewrite');
  const rewrite = {
    ...terraform(
      ['providers', 'lock', `-fs-mirror=${lockMirror}`, '-platform=linux_amd64', PROBE.address],
      dir,
      lockMirror,
    ),
    lock: lockOf(dir),
  };
  dir = fresh('lock');
  const lock = {
    ...terraform(['providers', 'lock', `-fs-mirror=${lockMirror}`, ...platformFlags], dir, lockMirror),
    lock: lockOf(dir),
  };
  dir = fresh('init');
  const init = {
    ...terraform(['init', '-backend=false', '-no-color', '-input=false'], dir, lockMirror, mirrorRc),
    lock: lockOf(dir),
  };
  const rec: RecordedLockItem = { id: item.id, providers: item.providers, rewrite, lock, init };
  writeFileSync(join(RECORDED, 'lockfiles', `${item.id}.json`), `${JSON.stringify(rec, null, 2)}\n`);
  process.stdout.write(`${item.id}: rewrite ${rewrite.code}, lock ${lock.code}, init ${init.code}\n`);
}

// Configurations: each with its own mirror (its mirror.json), no lock file to start with.
mkdirSync(join(RECORDED, 'configs'), { recursive: true });
for (const item of configItems()) {
  const mirror = join(base, 'config-mirrors', item.id);
  await writeFakeMirror(mirror, item.releases);
  const rc = join(base, `${item.id}.tfrc`);
  writeFileSync(rc, fsMirrorCliConfig(mirror));
  const fresh = (name: string): string => {
    const dir = join(base, 'config', item.id, name);
    cpSync(join(item.dir, 'files'), dir, { recursive: true });
    return dir;
  };
  let dir = fresh('get');
  const get = terraform(['get', '-no-color'], dir, mirror);
  if (get.code !== 0) process.stderr.write(`${item.id}: terraform get failed:\n${get.stderr}\n`);
  const modulesPath = join(dir, '.terraform/modules/modules.json');
  const modulesJson = existsSync(modulesPath) ? readFileSync(modulesPath, 'utf8') : null;
  const withModules = (d: string): string => {
    if (modulesJson !== null) {
      mkdirSync(join(d, '.terraform/modules'), { recursive: true });
      writeFileSync(join(d, '.terraform/modules/modules.json'), modulesJson);
    }
    return d;
  };
  dir = withModules(fresh('lock'));
  const lock = {
    ...terraform(['providers', 'lock', `-fs-mirror=${mirror}`, ...platformFlags], dir, mirror),
    lock: lockOf(dir),
  };
  dir = withModules(fresh('init'));
  const init = {
    ...terraform(['init', '-backend=false', '-no-color', '-input=false'], dir, mirror, rc),
    lock: lockOf(dir),
  };
  // The same directory again: the lock file init wrote is now read and verified.
  const reinit = {
    ...terraform(['init', '-backend=false', '-no-color', '-input=false'], dir, mirror, rc),
    lock: lockOf(dir),
  };
  const rec: RecordedConfigItem = { id: item.id, modulesJson, lock, init, reinit };
  writeFileSync(join(RECORDED, 'configs', `${item.id}.json`), `${JSON.stringify(rec, null, 2)}\n`);
  process.stdout.write(`${item.id}: lock ${lock.code}, init ${init.code}, reinit ${reinit.code}\n`);
}

rmSync(base, { recursive: true, force: true });
