// Issue 11 #17: what `install` (with and without a plugin cache) and
// `mirror -layout=unpacked` write, and where. provkit runs as a child process
// on real provider zips in a packed filesystem mirror (packages.ts); what
// terraform 1.11.4 does with the same zips is recorded in
// test/fixtures/install-safety/terraform-1.11.4.json (record-terraform.sh).
import { lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { HOST, NAMESPACE, PLATFORM, writePackedMirror } from '../fixtures/install-safety/packages.js';
import { e2eWorkspace, requiresTf, runCli, type E2eWorkspace } from '../support/e2e.js';

/** Diagnostics are wrapped to the width (issue 14): text compared with its line breaks as spaces. */
const flat = (s: string): string => s.replace(/\s+/g, ' ');

interface TerraformObserved {
  modes: { targetPackage: string[]; cachePackage: string[] };
  controlCharacters: Record<string, { exit: number; packageNames: string[]; error?: string }>;
  hostSymlink: {
    target: { exit: number; writtenOutside: string[] };
    cache: { exit: number; writtenOutside: string[] };
  };
}
const TF = JSON.parse(
  readFileSync(new URL('../fixtures/install-safety/terraform-1.11.4.json', import.meta.url), 'utf8'),
) as TerraformObserved;

let w: E2eWorkspace;
let mirror: string;
beforeAll(async () => {
  w = e2eWorkspace();
  mirror = join(w.base, 'mirror');
  await writePackedMirror(mirror);
});
afterAll(() => w.remove());

let n = 0;
function project(type: string): string {
  n += 1;
  return w.project(`p${n}-${type}`, { 'main.tf': requiresTf({ p: `${HOST}/${NAMESPACE}/${type}` }) });
}
function install(cwd: string, ...extra: string[]): ReturnType<typeof runCli> {
  return runCli(['install', `-platform=${PLATFORM}`, `-fs-mirror=${mirror}`, ...extra], { cwd, env: w.env });
}
/** `MODE KIND NAME` of every entry below `dir` (lstat), sorted by name, like record-terraform.sh's `tree`. */
function tree(dir: string, prefix = ''): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(dir, prefix))) {
    const rel = prefix === '' ? name : `${prefix}/${name}`;
    const st = lstatSync(join(dir, rel));
    out.push(`${(st.mode & 0o7777).toString(8)} ${st.isSymbolicLink() ? 'l' : st.isDirectory() ? 'd' : 'f'} ${rel}`);
    if (st.isDirectory()) out.push(...tree(dir, rel));
  }
  return out.sort((a, b) => a.split(' ')[2]!.localeCompare(b.split(' ')[2]!));
}
const files = (lines: string[]): string[] => lines.filter((l) => l.split(' ')[1] === 'f');
/** Every path below `dir`, recursively (empty when `dir` does not exist). */
function everything(dir: string): string[] {
  try {
    return readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort();
  } catch {
    return [];
  }
}
function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}
const pkgRel = (type: string): string => `${HOST}/${NAMESPACE}/${type}/1.0.0/${PLATFORM}`;
/** Sharing strips group and world write bits: 0777 → 0755, 0666 → 0644, 0602 → 0600. */
const shared = (lines: string[]): string[] =>
  lines.map((l) => {
    const [mode, ...rest] = l.split(' ');
    return [(parseInt(mode!, 8) & ~0o022).toString(8), ...rest].join(' ');
  });

describe('symlinked directories of the provider tree are never followed', () => {
  for (const level of ['HOST', 'NS', 'TYPE', 'VERSION'] as const) {
    it(`.terraform/providers: a pre-planted ${level} symlink → refused, nothing written through it (terraform writes through it)`, async () => {
      const p = project('plain');
      const outside = w.project(`outside-${n}`);
      const parts = [HOST, NAMESPACE, 'plain', '1.0.0'];
      const depth = ['HOST', 'NS', 'TYPE', 'VERSION'].indexOf(level) + 1;
      const link = join(p, '.terraform/providers', ...parts.slice(0, depth));
      mkdirSync(join(link, '..'), { recursive: true });
      symlinkSync(outside, link);
      const r = await install(p);
      expect(r.code).toBe(1);
      expect(flat(r.stderr)).toContain(`${HOST}/${NAMESPACE}/plain`);
      expect(flat(r.stderr)).toContain(`${link} is a symbolic link`);
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(everything(outside)).toEqual([]);
      expect(readlinkSync(link)).toBe(outside);
      expect(w.tmpLeftovers()).toEqual([]);
    });
  }
  it('terraform 1.11.4 follows a HOST symlink in .terraform/providers and in the plugin cache (recorded)', () => {
    expect(TF.hostSymlink.target.writtenOutside).toContain(`755 d acme/plain/1.0.0/${PLATFORM}`);
    expect(TF.hostSymlink.cache.writtenOutside).toContain(`755 d acme/plain/1.0.0/${PLATFORM}`);
  });

  it('plugin cache: a pre-planted HOST symlink → refused, nothing written through it', async () => {
    const p = project('plain');
    const cache = w.project(`cache-${n}`);
    const outside = w.project(`outside-${n}`);
    symlinkSync(outside, join(cache, HOST));
    const r = await install(p, `-plugin-cache-dir=${cache}`);
    expect(r.code).toBe(1);
    expect(flat(r.stderr)).toContain(`${join(cache, HOST)} is a symbolic link`);
    expect(everything(outside)).toEqual([]);
    expect(exists(join(p, '.terraform/providers', HOST))).toBe(false);
    expect(w.tmpLeftovers()).toEqual([]);
  });

  it('mirror -layout=unpacked: a pre-planted NS symlink → refused, nothing written through it', async () => {
    const p = project('plain');
    const outside = w.project(`outside-${n}`);
    mkdirSync(join(p, 'out', HOST), { recursive: true });
    symlinkSync(outside, join(p, 'out', HOST, NAMESPACE));
    const r = await runCli(['mirror', '-layout=unpacked', `-platform=${PLATFORM}`, `-fs-mirror=${mirror}`, 'out'], {
      cwd: p,
      env: w.env,
    });
    expect(r.code).toBe(1);
    expect(flat(r.stderr)).toContain(`${join(p, 'out', HOST, NAMESPACE)} is a symbolic link`);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(everything(outside)).toEqual([]);
    expect(w.tmpLeftovers()).toEqual([]);
  });

  it('a symlinked base directory (.terraform/providers itself) is the user’s choice and is used', async () => {
    const p = project('plain');
    const elsewhere = w.project(`providers-${n}`);
    mkdirSync(join(p, '.terraform'));
    symlinkSync(elsewhere, join(p, '.terraform/providers'));
    const r = await install(p);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(everything(elsewhere)).toContain(join(pkgRel('plain'), 'terraform-provider-plain_v1.0.0'));
  });
});

describe('names with control characters are refused, naming the package and the entry', () => {
  const cases = {
    escname: 'evil\\u001b[31mred.txt',
    crname: 'evil\\rname.txt',
    nulname: 'evil\\u0000name.txt',
  } as const;
  for (const [type, shown] of Object.entries(cases)) {
    it(`${type}: refused before anything is written; no raw Node error (terraform: exit ${TF.controlCharacters[type]!.exit})`, async () => {
      const p = project(type);
      const r = await install(p);
      expect(r.code).toBe(1);
      expect(flat(r.stderr)).toContain(`Error while installing ${HOST}/${NAMESPACE}/${type} v`);
      expect(flat(r.stderr)).toContain(`entry "${shown}": the name has a control character`);
      expect(r.stderr).not.toContain('Received <Buffer');
      // No raw control character reaches the terminal.
      expect(r.stderr).not.toMatch(/[\u0000\u001b\r]/);
      expect(everything(join(p, '.terraform'))).toEqual([]);
      expect(exists(join(p, '.terraform'))).toBe(false);
      expect(w.tmpLeftovers()).toEqual([]);
    });
  }
  it('mirror -layout=unpacked refuses them too', async () => {
    const p = project('escname');
    const r = await runCli(['mirror', '-layout=unpacked', `-platform=${PLATFORM}`, `-fs-mirror=${mirror}`, 'out'], {
      cwd: p,
      env: w.env,
    });
    expect(r.code).toBe(1);
    expect(flat(r.stderr)).toContain(`entry "${cases.escname}": the name has a control character`);
    expect(everything(join(p, 'out'))).toEqual([]);
    expect(w.tmpLeftovers()).toEqual([]);
  });
});

describe('a failed install leaves no empty directories behind', () => {
  it('no executable: no HOST/NS/TYPE/VERSION left, and no .terraform this run created', async () => {
    const p = project('noexec');
    const r = await install(p);
    expect(r.code).toBe(1);
    expect(flat(r.stderr)).toContain('provider binary not found');
    expect(exists(join(p, '.terraform'))).toBe(false);
    expect(w.tmpLeftovers()).toEqual([]);
  });
  it('directories that were there before stay; a cache keeps only what it had', async () => {
    const p = project('noexec');
    const cache = w.project(`cache-${n}`);
    mkdirSync(join(p, '.terraform/providers', HOST), { recursive: true });
    mkdirSync(join(cache, HOST, NAMESPACE), { recursive: true });
    const r = await install(p, `-plugin-cache-dir=${cache}`);
    expect(r.code).toBe(1);
    expect(everything(join(p, '.terraform'))).toEqual(['providers', `providers/${HOST}`]);
    expect(everything(cache)).toEqual([HOST, `${HOST}/${NAMESPACE}`]);
    expect(w.tmpLeftovers()).toEqual([]);
  });
  it('one provider failing next to one succeeding removes only the failed one’s directories', async () => {
    const p = w.project(`p-mixed`, {
      'main.tf': requiresTf({ a: `${HOST}/${NAMESPACE}/plain`, b: `${HOST}/${NAMESPACE}/noexec` }),
    });
    const r = await install(p);
    expect(r.code).toBe(1);
    const left = everything(join(p, '.terraform/providers'));
    expect(left).toContain(join(pkgRel('plain'), 'terraform-provider-plain_v1.0.0'));
    expect(left.filter((x) => x.includes('noexec'))).toEqual([]);
    expect(w.tmpLeftovers()).toEqual([]);
  });
});

describe('file modes (lstat after a real install)', () => {
  // The one symlink entry (link.txt) draws a warning: extracted as a regular file, as the reference does.
  it('.terraform/providers keeps exactly the modes terraform 1.11.4 gives (0777, 0666, 0602 included)', async () => {
    const p = project('modes');
    const r = await install(p);
    expect(r.stderr).not.toContain('Error');
    expect(r.code).toBe(0);
    const got = tree(join(p, '.terraform/providers', pkgRel('modes')));
    expect(files(got)).toEqual(files(TF.modes.targetPackage));
  });
  it('the plugin cache: no group- or world-writable file; .terraform/providers links to it', async () => {
    const p = project('modes');
    const cache = w.project(`cache-${n}`);
    const r = await install(p, `-plugin-cache-dir=${cache}`);
    expect(r.stderr).not.toContain('Error');
    expect(r.code).toBe(0);
    const got = files(tree(join(cache, pkgRel('modes'))));
    expect(got).toEqual(shared(files(TF.modes.cachePackage)));
    expect(got.filter((l) => parseInt(l, 8) & 0o022)).toEqual([]);
    expect(lstatSync(join(p, '.terraform/providers', pkgRel('modes'))).isSymbolicLink()).toBe(true);
  });
  it('mirror -layout=unpacked: no group- or world-writable file', async () => {
    const p = project('modes');
    const r = await runCli(['mirror', '-layout=unpacked', `-platform=${PLATFORM}`, `-fs-mirror=${mirror}`, 'out'], {
      cwd: p,
      env: w.env,
    });
    expect(r.stderr).not.toContain('Error');
    expect(r.code).toBe(0);
    const got = files(tree(join(p, 'out', pkgRel('modes'))));
    expect(got).toEqual(shared(files(TF.modes.targetPackage)));
    expect(got.filter((l) => parseInt(l, 8) & 0o022)).toEqual([]);
  });
});
