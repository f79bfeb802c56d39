// Hostile archives: entry-count, total-size and compression-ratio limits
// (checked on the central directory, before anything is inflated), their
// configuration through PROVKIT_ZIP_LIMITS, and zip slip and symlink entries
// on install. Every refusal is a typed ZIP_* error; nothing lands outside the
// package directory.
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { ProvkitError } from '../../src/errors.js';
import { hashZipPackage } from '../../src/hashing/index.js';
import { DEFAULT_ZIP_LIMITS, parseZipLimits } from '../../src/hashing/zip-reader.js';
import { makeProvider } from '../support/servers/packages.js';
import { startFakeRegistry, type FakeRegistry } from '../support/servers/registry.js';
import { buildZip } from '../support/zip-writer.js';
import { recordFault } from './report.js';
import { leftovers, mainTf, runInProcess } from './support.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'provkit-faults-zip-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** The archive's refusal: hashing reports it as the failure of both h1: forms (the zh: of the bytes stays computable). */
async function refusal(p: ReturnType<typeof hashZipPackage>): Promise<ProvkitError> {
  const r = await p;
  if (r.h1.ok || r.h1Zip.ok) throw new Error('expected a refusal');
  expect(r.h1Zip.error).toBe(r.h1.error);
  return r.h1.error;
}

const exe = { name: 'terraform-provider-demo_v1.0.0', data: '#!/bin/sh\nexit 1\n', unixMode: 0o100755 };

describe('archive limits', () => {
  it('refuses entries that claim more than 8 GiB in total, before inflating anything', async () => {
    const zip = join(dir, 'claims.zip');
    // Three entries of a few bytes each that claim 4 GiB - 2 each.
    await writeFile(
      zip,
      await buildZip([
        exe,
        ...[1, 2, 3].map((i) => ({ name: `big${i}`, data: 'x', method: 0 as const, sizeOverride: 0xfffffffe })),
      ]),
    );
    const started = Date.now();
    const err = await refusal(hashZipPackage(zip));
    expect(err).toMatchObject({
      code: 'ZIP_LIMIT_EXCEEDED',
      file: zip,
      expected: `at most ${DEFAULT_ZIP_LIMITS.maxTotalBytes} bytes`,
    });
    expect(err.message).toMatch(/would unpack to more than 8589934592 bytes/);
    recordFault({
      group: 'archive',
      fault: 'entries claiming 12 GiB in total (default limit 8 GiB)',
      command: 'hash (zip reader)',
      outcome: `ZIP_LIMIT_EXCEEDED in ${Date.now() - started} ms, nothing inflated`,
      state: '-',
      rerun: '-',
    });
  });

  it('refuses a high compression ratio (a deflate bomb) and accepts it with a raised limit', async () => {
    const zip = join(dir, 'zeros.zip');
    await writeFile(
      zip,
      await buildZip([exe, { name: 'zeros', data: Buffer.alloc(80 * 1024 * 1024), method: 8, level: 9 }]),
    );
    const err = await refusal(hashZipPackage(zip));
    expect(err).toMatchObject({ code: 'ZIP_LIMIT_EXCEEDED', file: zip, expected: 'a ratio of at most 200' });
    const ok = await hashZipPackage(zip, { limits: parseZipLimits('ratio=5000') });
    expect(ok.h1.ok && ok.h1Zip.ok).toBe(true);
    recordFault({
      group: 'archive',
      fault: `80 MiB of zeros deflated to a ${Math.round((80 * 1024 * 1024) / (await readFile(zip)).length)}:1 archive`,
      command: 'hash (zip reader)',
      outcome: 'ZIP_LIMIT_EXCEEDED (ratio > 200); accepted with PROVKIT_ZIP_LIMITS=ratio=5000',
      state: '-',
      rerun: '-',
    });
  });

  it('applies a configured entry limit', async () => {
    const zip = join(dir, 'three.zip');
    await writeFile(zip, await buildZip([exe, { name: 'a', data: 'a' }, { name: 'b', data: 'b' }]));
    const err = await refusal(hashZipPackage(zip, { limits: parseZipLimits('entries=2') }));
    expect(err).toMatchObject({ code: 'ZIP_LIMIT_EXCEEDED', expected: 'at most 2 entries' });
    recordFault({
      group: 'archive',
      fault: '3 entries with PROVKIT_ZIP_LIMITS=entries=2',
      command: 'hash (zip reader)',
      outcome: 'ZIP_LIMIT_EXCEEDED',
      state: '-',
      rerun: '-',
    });
  });

  it('parses PROVKIT_ZIP_LIMITS and refuses nonsense', () => {
    expect(parseZipLimits('entries=10, bytes=2GiB ,ratio=50')).toEqual({
      maxEntries: 10,
      maxTotalBytes: 2 * 1024 ** 3,
      maxRatio: 50,
    });
    expect(parseZipLimits('')).toEqual(DEFAULT_ZIP_LIMITS);
    expect(() => parseZipLimits('ratio=5G')).toThrow(/invalid zip limit "ratio=5G"/);
    expect(() => parseZipLimits('size=1')).toThrow(/invalid zip limit/);
  });
});

describe('hostile packages through the CLI', () => {
  let reg: FakeRegistry;
  let env: Record<string, string>;
  const PLAT = 'linux_amd64';
  beforeAll(async () => {
    const slip = await makeProvider('acme', 'slip', ['1.0.0'], [PLAT]);
    slip.versions[0]!.packages[0]!.zip = await buildZip([
      { ...exe, name: 'terraform-provider-slip_v1.0.0' },
      { name: '../../escaped.txt', data: 'gotcha\n' },
    ]);
    const link = await makeProvider('acme', 'link', ['1.0.0'], [PLAT]);
    link.versions[0]!.packages[0]!.zip = await buildZip([
      { ...exe, name: 'terraform-provider-link_v1.0.0' },
      { name: 'escape', data: '../../../../../../tmp', unixMode: 0o120777 },
      { name: 'passwd', data: '/etc/passwd', unixMode: 0o120777 },
    ]);
    const plain = await makeProvider('acme', 'plain', ['1.0.0'], [PLAT]);
    reg = await startFakeRegistry({ providers: [slip, link, plain] });
    await writeFile(join(dir, 'empty.tfrc'), '');
    env = {
      SSL_CERT_FILE: reg.caPath,
      TF_CLI_CONFIG_FILE: join(dir, 'empty.tfrc'),
      PROVKIT_FLAVOR: '',
      HOME: dir,
      TF_DATA_DIR: '',
      TF_PLUGIN_CACHE_DIR: '',
      PROVKIT_CACHE_DIR: join(dir, 'cache'),
      PROVKIT_HASH_STORE: 'off',
    };
  });
  afterAll(() => reg.close());

  async function project(name: string, type: string): Promise<string> {
    const p = join(dir, name, 'work');
    await mkdir(p, { recursive: true });
    await writeFile(join(p, 'main.tf'), mainTf(reg.host).replaceAll('demo', type));
    return p;
  }

  it('refuses zip slip on install with ZIP_PATH_TRAVERSAL and writes nothing outside', async () => {
    if (process.platform !== 'linux') return;
    const p = await project('slip', 'slip');
    const r = await runInProcess(['install', `-platform=${PLAT}`], p, env);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/contains '\.\.'|ZIP_PATH_TRAVERSAL/);
    expect(await readdir(join(dir, 'slip'))).toEqual(['work']);
    await expect(lstat(join(p, '.terraform.lock.hcl'))).rejects.toThrow();
    expect(await leftovers(p)).toEqual([]);
    recordFault({
      group: 'archive',
      fault: 'zip slip entry ../../escaped.txt',
      command: 'provkit install',
      outcome: `exit 1: ZIP_PATH_TRAVERSAL (${r.stderr.includes("contains '..'") ? "entry contains '..'" : 'refused'})`,
      state: 'nothing written, no lock file',
      rerun: '-',
    });
  });

  it('installs symlink entries as plain files holding the link text (no escape)', async () => {
    if (process.platform !== 'linux') return;
    const p = await project('link', 'link');
    const r = await runInProcess(['install', `-platform=${PLAT}`], p, env);
    // A warning, which install prints to stdout as init's view does (src/ui/human.ts, the `view` frame), wrapped at 78 columns.
    expect(r.stdout.replace(/\s+/g, ' ')).toMatch(/symlink entries: the reference installs each as a regular file/);
    expect(r.code).toBe(0);
    const pkg = join(p, '.terraform', 'providers', reg.host, 'acme', 'link', '1.0.0', PLAT);
    for (const name of ['escape', 'passwd']) {
      const st = await lstat(join(pkg, name));
      expect(st.isSymbolicLink()).toBe(false);
      expect(st.isFile()).toBe(true);
    }
    expect(await readFile(join(pkg, 'passwd'), 'utf8')).toBe('/etc/passwd');
    recordFault({
      group: 'archive',
      fault: 'symlink entries pointing to ../../../tmp and /etc/passwd',
      command: 'provkit install',
      outcome: 'exit 0; links written as regular files holding the link text',
      state: 'package directory only',
      rerun: '-',
    });
  });

  it('refuses a package beyond PROVKIT_ZIP_LIMITS with a typed error and an untouched lock file', async () => {
    const p = await project('limit', 'plain');
    await writeFile(join(p, '.terraform.lock.hcl'), '# before\n');
    const r = await runInProcess(['lock', `-platform=${PLAT}`], p, { ...env, PROVKIT_ZIP_LIMITS: 'entries=1' });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/more than 1 entries/);
    expect(await readFile(join(p, '.terraform.lock.hcl'), 'utf8')).toBe('# before\n');
    const bad = await runInProcess(['lock', `-platform=${PLAT}`], p, { ...env, PROVKIT_ZIP_LIMITS: 'entries=lots' });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/invalid zip limit/);
    recordFault({
      group: 'archive',
      fault: 'package with 2 entries, PROVKIT_ZIP_LIMITS=entries=1',
      command: 'provkit lock',
      outcome: 'exit 1: ZIP_LIMIT_EXCEEDED',
      state: 'unchanged',
      rerun: '-',
    });
  });
});
