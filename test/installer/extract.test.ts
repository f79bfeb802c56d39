// Extraction of provider zips (src/installer/extract.ts): every accepted
// package of test/fixtures/conformance and test/fixtures/zip/accept extracts to a
// tree whose HashDir equals the extracted-form h1: the reference recorded,
// with the names and modes terraform 1.11.4 produced (`terraform init` from a
// packed filesystem mirror holding these zips, 2026-11-21; the trees are
// pasted below); every refused package is refused with its code and leaves
// nothing behind.
import { lstat, mkdir, mkdtemp, readdir, readFile, readlink, rm, stat, writeFile } from 'node:fs/promises';
import { readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { hashPackageDir, hashZipPackage } from '../../src/hashing/index.js';
import { extractPackage, planPackageExtraction, removeStaleTemps } from '../../src/installer/extract.js';
import { isProvkitError, type ProvkitError } from '../../src/errors.js';
import { writeZip } from '../support/zip-writer.js';

const corpusRoot = fileURLToPath(new URL('../fixtures/conformance/', import.meta.url));
const fixtureRoot = fileURLToPath(new URL('../fixtures/zip/', import.meta.url));

interface Expected {
  description: string;
  expect: 'accept' | 'refuse';
  zh: string;
  h1?: string;
  h1_zip: string | null;
}
const corpus = JSON.parse(readFileSync(`${corpusRoot}hashes.json`, 'utf8')) as { packages: Record<string, Expected> };
const accepted = Object.entries(corpus.packages).filter(([, v]) => v.expect === 'accept');
const refused = Object.entries(corpus.packages).filter(([, v]) => v.expect === 'refuse');

const umask = process.umask();
const DIR_MODE = (0o755 & ~umask).toString(8);

/**
 * The trees terraform 1.11.4 extracted (`stat -c %a`, names relative to the
 * package directory, directories with a trailing `/`, non-UTF-8 bytes as
 * `\xNN`). Directories are 0755 under umask 022.
 */
const TERRAFORM_TREES: Record<string, string[]> = {
  comment: ['644 LICENSE', '755 terraform-provider-comment_v1.0.0'],
  'data-descriptor': ['644 LICENSE', '644 stored.txt', '755 terraform-provider-data-descriptor_v1.0.0'],
  deflate9: ['644 LICENSE', '644 data.txt', '755 terraform-provider-deflate9_v1.0.0'],
  'dir-entries': [
    '755 docs/',
    '644 docs/index.md',
    '755 docs/sub/',
    '644 docs/sub/page.md',
    '755 terraform-provider-dir-entries_v1.0.0',
  ],
  'duplicate-names': ['644 dup.txt', '755 terraform-provider-duplicate-names_v1.0.0'],
  'empty-file': ['644 empty-deflated', '644 empty-stored', '755 terraform-provider-empty-file_v1.0.0'],
  'exec-bits': ['600 private', '444 readonly', '755 run.sh', '755 terraform-provider-exec-bits_v1.0.0', '777 world'],
  goreleaser: ['644 CHANGELOG.md', '644 LICENSE', '644 README.md', '755 terraform-provider-goreleaser_v1.0.0'],
  large: ['644 payload.bin', '755 terraform-provider-large_v1.0.0'],
  'mixed-methods': ['644 a.txt', '644 b.txt', '644 c.txt', '755 terraform-provider-mixed-methods_v1.0.0'],
  'nested-dirs': [
    '755 a/',
    '755 a/b/',
    '755 a/b/c/',
    '755 a/b/c/d/',
    '755 a/b/c/d/e/',
    '644 a/b/c/d/e/f.txt',
    '644 a/b/c/g.txt',
    '644 a/z.txt',
    '755 terraform-provider-nested-dirs_v1.0.0',
  ],
  'non-utf8-name': ['644 caf\\xe9.txt', '755 terraform-provider-non-utf8-name_v1.0.0'],
  'sort-bytes': [
    '644 A',
    '644 README',
    '644 Z',
    '644 _u',
    '755 a/',
    '644 a-b',
    '644 a.b',
    '644 a/b',
    '644 a0',
    '644 a_',
    '644 readme',
    '755 terraform-provider-sort-bytes_v1.0.0',
    '644 ~t',
  ],
  'sort-utf16': [
    '755 terraform-provider-sort-utf16_v1.0.0',
    '644 x-\ue000.txt',
    '644 x-\uff5e.txt',
    '644 x-\ud83d\ude00.txt',
  ],
  spaces: [
    '644  leading.txt',
    '755 dir with space/',
    '644 dir with space/file name.txt',
    '755 terraform-provider-spaces_v1.0.0',
    '644 trailing .txt',
    '644 with space.txt',
  ],
  stored: ['644 LICENSE', '644 README.md', '755 terraform-provider-stored_v1.0.0'],
  symlink: ['644 LICENSE', '777 LICENSE.link', '755 terraform-provider-symlink_v1.0.0'],
  'unicode-names': [
    '644 emoji-\ud83d\ude00.txt',
    '755 terraform-provider-unicode-names_v1.0.0',
    '644 \u00fcn\u00efc\u00f6d\u00e9.txt',
    '755 \u65e5\u672c\u8a9e/',
    '644 \u65e5\u672c\u8a9e/\u30d5\u30a1\u30a4\u30eb.txt',
  ],
  'zip64-entries': ['644 LICENSE', '644 s.txt', '755 terraform-provider-zip64-entries_v1.0.0'],
};

/** terraform's trees for test/fixtures/zip/accept (same run); every file there is 0644. */
const TERRAFORM_FIXTURE_TREES: Record<string, string[]> = {
  'backslash-is-a-byte.zip': ['644 docs\\a.txt', '644 terraform-provider-x'],
  'dir-by-fat-attrs.zip': ['755 DIR/', '644 terraform-provider-x'],
  'dir-by-unix-mode.zip': ['755 empty/', '644 terraform-provider-x'],
  'dot-slash-and-double-slash.zip': ['755 docs/', '644 docs/a.txt', '644 terraform-provider-x'],
  'junk-before-and-after.zip': ['644 LICENSE', '644 terraform-provider-x'],
  'stored-and-deflated-empty.zip': ['644 empty-deflated', '644 empty-stored', '644 terraform-provider-x'],
  'v2-directory-entry.zip': ['755 docs/', '644 docs/readme.txt', '644 terraform-provider-bar_v1.0.0'],
  'v3-duplicate-names.zip': ['644 terraform-provider-dup'],
  'zero-crc-not-checked.zip': ['644 terraform-provider-x'],
};

function showName(name: Buffer): string {
  const text = name.toString('utf8');
  if (Buffer.from(text, 'utf8').equals(name)) return text;
  return [...name]
    .map((b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, '0')}`))
    .join('');
}

/** `mode name` for every entry under `root` (directories with a trailing `/`), dir modes normalised to 755 for comparison. */
async function listTree(root: string, rel: Buffer = Buffer.alloc(0)): Promise<string[]> {
  const out: string[] = [];
  const abs = rel.length === 0 ? Buffer.from(root) : Buffer.concat([Buffer.from(root), Buffer.from('/'), rel]);
  for (const name of await readdir(abs, { encoding: 'buffer' })) {
    const childRel = rel.length === 0 ? name : Buffer.concat([rel, Buffer.from('/'), name]);
    const st = await lstat(Buffer.concat([Buffer.from(root), Buffer.from('/'), childRel]));
    const mode = (st.mode & 0o7777).toString(8);
    if (st.isDirectory()) {
      expect(mode, `directory ${showName(childRel)}`).toBe(DIR_MODE);
      out.push(`755 ${showName(childRel)}/`);
      out.push(...(await listTree(root, childRel)));
    } else {
      expect(st.isFile(), `${showName(childRel)} is a regular file`).toBe(true);
      out.push(`${mode} ${showName(childRel)}`);
    }
  }
  return out.sort();
}

let work: string;
beforeEach(async () => {
  work = await mkdtemp(join(tmpdir(), 'provkit-extract-'));
});
afterEach(() => rm(work, { recursive: true, force: true }));

async function expectRefused(zip: string, code: string | RegExp): Promise<ProvkitError> {
  const parent = join(work, 'pkg', '1.0.0');
  await mkdir(parent, { recursive: true });
  const err = await extractPackage(zip, join(parent, 'linux_amd64')).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isProvkitError(err), String(err)).toBe(true);
  const pe = err as ProvkitError;
  if (typeof code === 'string') expect(pe.code).toBe(code);
  else expect(pe.code).toMatch(code);
  expect(pe.file).toBe(zip);
  // Nothing left behind: no target, no temporary directory beside it.
  expect(await readdir(parent)).toEqual([]);
  return pe;
}

describe('conformance corpus', () => {
  it.each(accepted)('%s extracts to the tree terraform extracts, with the reference h1', async (name, want) => {
    const target = join(work, 'p', name);
    const zip = `${corpusRoot}packages/${name}.zip`;
    const result = await extractPackage(zip, target);
    expect(result.h1.text).toBe(want.h1);
    expect((await hashPackageDir(target)).text).toBe(want.h1);
    const tree = await listTree(target);
    if (name === 'many-entries') {
      expect(tree.filter((l) => l.endsWith('/'))).toHaveLength(40);
      expect(tree.filter((l) => l.startsWith('644 '))).toHaveLength(2000);
      expect(tree.filter((l) => l.startsWith('755 ') && !l.endsWith('/'))).toEqual([
        '755 terraform-provider-many-entries_v1.0.0',
      ]);
    } else {
      expect(tree).toEqual([...TERRAFORM_TREES[name]!].sort());
    }
    expect(await readdir(join(work, 'p'))).toEqual([name]);
  });

  it('writes a symlink entry as a regular file holding the link text, mode 0777', async () => {
    const target = join(work, 'symlink');
    await extractPackage(`${corpusRoot}packages/symlink.zip`, target);
    const st = await lstat(join(target, 'LICENSE.link'));
    expect(st.isSymbolicLink()).toBe(false);
    expect(await readFile(join(target, 'LICENSE.link'), 'utf8')).toBe('LICENSE');
    expect(st.mode & 0o777).toBe(0o777);
  });

  it.each(refused)('%s is refused and leaves nothing behind', async (name) => {
    await expectRefused(`${corpusRoot}packages/${name}.zip`, /^(ZIP_|HASH_)/);
  });

  it('refuses absolute (terraform extracts /tmp/oracle-evil.txt as tmp/oracle-evil.txt; provkit refuses on purpose)', async () => {
    const err = await expectRefused(`${corpusRoot}packages/absolute.zip`, 'ZIP_ABSOLUTE_PATH');
    expect(err.entry).toBe('/tmp/oracle-evil.txt');
  });

  it('refuses traversal before writing the two good entries that precede it (terraform leaves them behind)', async () => {
    const err = await expectRefused(`${corpusRoot}packages/traversal.zip`, 'ZIP_PATH_TRAVERSAL');
    expect(err.message).toContain("entry contains '..': ../evil.txt");
  });

  it('refuses bad-crc while streaming and removes what it wrote', async () => {
    await expectRefused(`${corpusRoot}packages/bad-crc.zip`, 'ZIP_CHECKSUM');
  });
});

describe('test/fixtures/zip', () => {
  const accept = readdirSync(join(fixtureRoot, 'accept')).sort();
  it.each(accept)('accept/%s extracts to its extracted-form h1 and terraform tree', async (file) => {
    const zip = join(fixtureRoot, 'accept', file);
    const target = join(work, 'x');
    const result = await extractPackage(zip, target);
    const hashed = await hashZipPackage(zip);
    expect(hashed.h1.ok).toBe(true);
    if (hashed.h1.ok) {
      expect(result.h1.text).toBe(hashed.h1.hash.text);
      expect((await hashPackageDir(target)).text).toBe(hashed.h1.hash.text);
    }
    expect(await listTree(target)).toEqual([...TERRAFORM_FIXTURE_TREES[file]!].sort());
  });

  const refuse = readdirSync(join(fixtureRoot, 'refuse')).sort();
  it.each(refuse)('refuse/%s is refused with the code in its name and leaves nothing behind', async (file) => {
    await expectRefused(join(fixtureRoot, 'refuse', file), file.replace(/(--.*)?\.zip$/, ''));
  });
});

describe('modes', () => {
  it('gives MS-DOS entries 0666, or 0444 when read-only, and drops setuid/setgid/sticky', async () => {
    const zip = join(work, 'modes.zip');
    await writeZip(zip, [
      { name: 'terraform-provider-m', data: '#!/bin/sh\n', creator: 'fat', externalAttrs: 0x20 },
      { name: 'ro.txt', data: 'ro\n', creator: 'fat', externalAttrs: 0x01 },
      // "Made by" 10 is NTFS in the APPNOTE, but Go's creatorNTFS is 11: Go gives these mode 0.
      { name: 'ntfs.txt', data: 'n\n', creator: 'ntfs', externalAttrs: 0x20 },
      { name: 'suid', data: 'x', unixMode: 0o104755 },
      { name: 'sticky', data: 'x', unixMode: 0o101644 },
      { name: 'locked-dir/', dir: true, unixMode: 0o040500 },
      { name: 'locked-dir/f', data: 'f' },
    ]);
    const target = join(work, 'm');
    await extractPackage(zip, target);
    const mode = async (p: string): Promise<number> => (await stat(join(target, p))).mode & 0o7777;
    expect(await mode('terraform-provider-m')).toBe(0o666);
    expect(await mode('ro.txt')).toBe(0o444);
    expect(await mode('ntfs.txt')).toBe(0);
    expect(await mode('suid')).toBe(0o755);
    expect(await mode('sticky')).toBe(0o644);
    expect(await mode('locked-dir')).toBe(0o755 & ~umask);
    expect(await mode('.')).toBe(0o755 & ~umask);
  });

  it('lets a later duplicate overwrite a read-only earlier one, taking its mode', async () => {
    const zip = join(work, 'dup.zip');
    await writeZip(zip, [
      { name: 'terraform-provider-d', data: 'first\n', unixMode: 0o100444 },
      { name: 'terraform-provider-d', data: 'second\n', unixMode: 0o100755 },
    ]);
    const target = join(work, 'd');
    await extractPackage(zip, target);
    expect(await readFile(join(target, 'terraform-provider-d'), 'utf8')).toBe('second\n');
    expect((await stat(join(target, 'terraform-provider-d'))).mode & 0o777).toBe(0o755);
  });
});

describe('commit and failure', () => {
  const small = async (): Promise<string> => {
    const zip = join(work, 'small.zip');
    await writeZip(zip, [{ name: 'terraform-provider-s', data: 'new\n', unixMode: 0o100755 }]);
    return zip;
  };

  it('installs into an empty target directory', async () => {
    const target = join(work, 't');
    await mkdir(target);
    await extractPackage(await small(), target);
    expect(await readdir(target)).toEqual(['terraform-provider-s']);
  });

  it('refuses a non-empty target by default, and replaces it (stale files gone) with existing: replace', async () => {
    const zip = await small();
    const target = join(work, 't');
    await mkdir(target);
    await writeFile(join(target, 'stale'), 'old');
    await expect(extractPackage(zip, target)).rejects.toMatchObject({ code: 'IO' });
    expect(await readdir(target)).toEqual(['stale']);
    await extractPackage(zip, target, { existing: 'replace' });
    expect(await readdir(target)).toEqual(['terraform-provider-s']);
    expect(await readdir(work)).toEqual(['small.zip', 't']);
  });

  it('replaces a symlink at the target', async () => {
    const zip = await small();
    const elsewhere = join(work, 'elsewhere');
    await mkdir(elsewhere);
    const target = join(work, 't');
    await import('node:fs/promises').then((fs) => fs.symlink(elsewhere, target));
    await extractPackage(zip, target, { existing: 'replace' });
    expect((await lstat(target)).isDirectory()).toBe(true);
    expect(await readdir(elsewhere)).toEqual([]);
  });

  it('aborts when beforeCommit rejects, leaving nothing', async () => {
    const target = join(work, 'pkg', 't');
    await expect(
      extractPackage(await small(), target, {
        beforeCommit: () => Promise.reject(new Error('no executable')),
      }),
    ).rejects.toThrow('no executable');
    expect(await readdir(join(work, 'pkg'))).toEqual([]);
  });

  it('stops on an abort signal and leaves nothing', async () => {
    const controller = new AbortController();
    controller.abort();
    const target = join(work, 'pkg', 't');
    await expect(
      extractPackage(`${corpusRoot}packages/large.zip`, target, { signal: controller.signal }),
    ).rejects.toMatchObject({ code: 'ABORTED' });
    expect(await readdir(join(work, 'pkg'))).toEqual([]);
  });

  it('aborts mid-stream when the signal fires during a large entry', async () => {
    const controller = new AbortController();
    const target = join(work, 'pkg', 't');
    const p = extractPackage(`${corpusRoot}packages/large.zip`, target, { signal: controller.signal });
    setTimeout(() => controller.abort(), 5);
    await expect(p).rejects.toMatchObject({ code: 'ABORTED' });
    expect(await readdir(join(work, 'pkg'))).toEqual([]);
  });

  it('enforces the limits before writing', async () => {
    const target = join(work, 'pkg', 't');
    await expect(
      extractPackage(`${corpusRoot}packages/large.zip`, target, { limits: { maxTotalBytes: 1_000_000 } }),
    ).rejects.toMatchObject({
      code: 'ZIP_LIMIT_EXCEEDED',
    });
    await expect(
      extractPackage(`${corpusRoot}packages/many-entries.zip`, target, { limits: { maxEntries: 100 } }),
    ).rejects.toMatchObject({
      code: 'ZIP_LIMIT_EXCEEDED',
    });
    expect(await readdir(work)).toEqual([]);
  });

  it('a missing zip is NOT_FOUND', async () => {
    await expect(extractPackage(join(work, 'nope.zip'), join(work, 't'))).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('removeStaleTemps removes what an interrupted extraction left beside the target, nothing else', async () => {
    const target = join(work, 'linux_amd64');
    await mkdir(join(work, '.linux_amd64.extract-0123456789ab.tmp'));
    await mkdir(join(work, '.linux_amd64.old-0123456789ab.tmp'));
    await writeFile(join(work, 'linux_amd64.lock'), '');
    await mkdir(target);
    await removeStaleTemps(target);
    expect((await readdir(work)).sort()).toEqual(['linux_amd64', 'linux_amd64.lock']);
  });
});

describe('planExtraction', () => {
  it('plans directories and files in archive order', async () => {
    const zip = join(work, 'plan.zip');
    await writeZip(zip, [
      { name: 'docs/', dir: true },
      { name: './docs//a.txt', data: 'a' },
    ]);
    const { open } = await import('node:fs/promises');
    const { readZipDirectory } = await import('../../src/hashing/zip-reader.js');
    const fh = await open(zip, 'r');
    try {
      const { entries } = await readZipDirectory(fh, zip);
      const steps = planPackageExtraction(zip, entries);
      expect(steps.map((s) => `${s.kind} ${s.rel.toString()}`)).toEqual(['dir docs', 'file docs/a.txt']);
    } finally {
      await fh.close();
    }
  });

  it('does not follow a symlink it did not make (none are ever made)', async () => {
    const target = join(work, 's');
    await extractPackage(`${corpusRoot}packages/symlink.zip`, target);
    await expect(readlink(join(target, 'LICENSE.link'))).rejects.toMatchObject({ code: 'EINVAL' });
  });
});
