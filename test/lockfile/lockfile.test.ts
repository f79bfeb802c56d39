// .terraform.lock.hcl: parse, serialize byte-identically, merge rules and the
// trust-on-first-use verdict. Lock files in test/fixtures/lockfiles/valid were
// written by the reference (terraform 1.11.4, `providers lock -fs-mirror`
// over mirror-fixtures/) or taken from the spec; invalid ones carry the
// expected diagnostic on the offending line as `# ERROR: <summary>`.
import { mkdtemp, readFile, readdir, rm, writeFile, chmod, stat, mkdir } from 'node:fs/promises';
import { readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

import type { Diagnostic } from '../../src/errors.js';
import { parseConstraints, parseProviderSource, parseVersion } from '../../src/addresses/index.js';
import { hashZipPackage, parseHash } from '../../src/hashing/index.js';
import {
  allowedHashes,
  hasErrors,
  loadLockFile,
  Locks,
  locksEqual,
  mergeInit,
  mergeProvidersLock,
  newProviderLock,
  parseLockFile,
  saveLockFile,
  serializeLocks,
  verifyPackage,
} from '../../src/lockfile/index.js';

const FIX = fileURLToPath(new URL('../fixtures/lockfiles/', import.meta.url));
const MIRROR = fileURLToPath(new URL('../../mirror-fixtures/', import.meta.url));
const flavorOf = (text: string): 'tofu' | 'terraform' => (text.includes('"terraform init"') ? 'terraform' : 'tofu');

describe('round trip', () => {
  const files = readdirSync(join(FIX, 'valid')).sort();
  it.each(files)('%s parses without diagnostics and serializes to the same bytes', (file) => {
    const bytes = readFileSync(join(FIX, 'valid', file));
    const flavor = flavorOf(bytes.toString());
    const { locks, diagnostics } = parseLockFile(bytes, file, flavor);
    expect(diagnostics).toEqual([]);
    expect(serializeLocks(locks, flavor).toString()).toBe(bytes.toString());
  });

  it('writes a header-only file for no providers, per flavor', () => {
    expect(serializeLocks(new Locks(), 'terraform').length).toBe(107);
    expect(serializeLocks(new Locks(), 'tofu').toString()).toContain('"tofu init"');
  });

  it('keeps file order and duplicates on load, so an unsorted file is not equal to its normalized form', () => {
    const bytes = readFileSync(join(FIX, 'valid/unsorted-duplicated-before-merge.hcl'));
    const { locks } = parseLockFile(bytes, 'x', 'terraform');
    const demo = locks.all()[0]!;
    expect(demo.hashes.map((h) => h.text).slice(0, 3)).toEqual(['zz:unknown-scheme', 'h1:AAAA', 'h1:AAAA']);
    const normalized = new Locks(
      locks.all().map((l) => newProviderLock(l.provider, l.version, l.constraints, l.hashes)),
    );
    expect(locksEqual(locks, normalized)).toBe(false);
    expect(normalized.all()[0]!.hashes.map((h) => h.text)).toEqual([
      'h1:3yan4h7Lmmj7ZM7bImAjxwmtdroLswqyA6f6CEWiLRM=',
      'h1:AAAA',
      'h1:MqUhklRgQ94tJsCySf+PtIviV4lB/gSgPoVDcfG3FM8=',
      'zz:unknown-scheme',
    ]);
  });
});

describe('invalid lock files', () => {
  const files = readdirSync(join(FIX, 'invalid')).sort();
  it.each(files)('%s: each # ERROR line gets exactly that diagnostic', (file) => {
    const text = readFileSync(join(FIX, 'invalid', file), 'utf8');
    const expected = text
      .split('\n')
      .map((line, i) => ({ line: i + 1, m: /# ERROR: (.*)$/.exec(line) }))
      .filter((x) => x.m)
      .map((x) => `${x.line}: ${x.m![1]!}`);
    expect(expected.length).toBeGreaterThan(0);
    const { diagnostics } = parseLockFile(text, file, 'tofu');
    const got = diagnostics.filter((d) => d.severity === 'error').map((d) => `${d.range?.start?.line}: ${d.summary}`);
    // One line may carry the same diagnostic twice (a parse error and the normalized-form error, item 34).
    expect([...new Set(got)].sort()).toEqual(expected.sort());
    for (const d of diagnostics) {
      expect(d.range?.filename).toBe(file);
      expect(d.range?.start?.column).toBeGreaterThan(0);
    }
  });

  it('words details as the reference does', () => {
    const { diagnostics } = parseLockFile(readFileSync(join(FIX, 'invalid/versions.hcl')), 'versions.hcl', 'tofu');
    const details = diagnostics.map((d) => d.detail);
    expect(details).toContain(
      'The selected version number for provider registry.opentofu.org/test/a is invalid: a "v" prefix should not be used.',
    );
    expect(details).toContain(
      'The selected version number for provider registry.opentofu.org/test/a must be written in normalized form: "0.0.0".',
    );
    expect(details).toContain(
      'The selected version number for provider registry.opentofu.org/test/b must be written in normalized form: "1.0.0".',
    );
    expect(details).toContain(
      'The recorded version constraints for provider registry.opentofu.org/test/c must be written in normalized form: "~> 1.2".',
    );
    const labels = parseLockFile(readFileSync(join(FIX, 'invalid/labels.hcl')), 'labels.hcl', 'tofu').diagnostics.map(
      (d) => d.detail,
    );
    expect(labels).toContain(
      'The provider source address for this provider lock must be written as "registry.opentofu.org/hashicorp/aws", the fully-qualified and normalized form.',
    );
    expect(labels).toContain(
      'This lockfile already declared a lock for provider registry.opentofu.org/test/ok at labels.hcl:22,1-41.',
    );
    const hashes = parseLockFile(readFileSync(join(FIX, 'invalid/hashes.hcl')), 'h.hcl', 'tofu').diagnostics.map(
      (d) => d.detail,
    );
    expect(hashes).toContain(
      'Cannot interpret "nocolon" as a provider hash: hash string must start with a scheme keyword followed by a colon.',
    );
  });

  it('warns once about module blocks, naming the product of the flavor', () => {
    const text = 'module "a" {\n}\nmodule "b" {\n}\n';
    const d = parseLockFile(text, 'm.hcl', 'terraform').diagnostics;
    expect(d).toHaveLength(1);
    expect(d[0]).toMatchObject({ severity: 'warning', summary: 'Dependency locks for modules are not yet supported' });
    expect(d[0]!.detail).toMatch(/^Terraform only supports/);
  });

  it('reports HCL syntax errors with file, line and column', () => {
    const d = parseLockFile(
      'provider "registry.opentofu.org/a/b" {\n  version = "1.0.0\n}\n',
      'bad.hcl',
      'tofu',
    ).diagnostics;
    expect(hasErrors(d)).toBe(true);
    expect(d[0]!.range).toMatchObject({ filename: 'bad.hcl', start: { line: 2 } });
  });
});

describe('lock-file diagnostics as terraform 1.11.4 reports them', () => {
  // Recorded by test/fixtures/lockfiles/terraform/record.sh (see its README).
  const dir = join(FIX, 'terraform');
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.hcl'))
    .sort();
  /** A diagnostic as terraform's JSON view prints it: an empty range widened by one column and byte. */
  const asTerraformJson = (d: Diagnostic): string => {
    const start = d.range?.start as Pos | undefined;
    const end = d.range?.end as Pos | undefined;
    // A parser's diagnostics carry complete positions (line, column, byte).
    if (start?.byte === undefined || end?.byte === undefined) throw new Error(`no complete range: ${d.summary}`);
    const wide = start.byte === end.byte ? { line: end.line, column: end.column + 1, byte: end.byte + 1 } : end;
    return JSON.stringify({
      severity: d.severity,
      summary: d.summary,
      detail: d.detail,
      range: { filename: d.range?.filename, start, end: wide },
    });
  };
  interface Pos {
    line: number;
    column: number;
    byte: number;
  }

  it.each(files)('%s: the same diagnostics (summary, detail, range) as terraform', (file) => {
    const recorded = readFileSync(join(dir, file.replace(/\.hcl$/, '.terraform-1.11.4.json')), 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.stringify(JSON.parse(l) as unknown));
    expect(recorded.length).toBeGreaterThan(0);
    const { diagnostics } = parseLockFile(readFileSync(join(dir, file)), '.terraform.lock.hcl', 'terraform');
    // terraform's order follows Go map iteration in places; the set is what must agree.
    expect(diagnostics.map(asTerraformJson).sort()).toEqual(recorded.sort());
  });

  it('reports a duplicate block even when it has errors of its own, and keeps neither', () => {
    const { locks, diagnostics } = parseLockFile(
      readFileSync(join(dir, 'duplicates.hcl')),
      '.terraform.lock.hcl',
      'terraform',
    );
    expect(diagnostics.filter((d) => d.summary === 'Duplicate provider lock').map((d) => d.range?.start?.line)).toEqual(
      [4, 10, 15],
    );
    expect(locks.all().map((l) => l.provider.toString())).toEqual(['registry.terraform.io/test/a']);
  });
});

describe('merge rules', () => {
  it('providers lock: reproduces what terraform wrote when adding a platform to an unsorted lock', async () => {
    const before = readFileSync(join(FIX, 'valid/unsorted-duplicated-before-merge.hcl'));
    const after = readFileSync(join(FIX, 'valid/terraform-merged-unknown-scheme.hcl'), 'utf8');
    const old = parseLockFile(before, 'before', 'terraform').locks;
    const results = await Promise.all(
      [
        ['demo', '1.1.0', '~> 1.0'],
        ['tools', '0.3.0', '>= 0.3'],
      ].map(async ([type, version, constraints]) => {
        const zip = await hashZipPackage(
          join(MIRROR, `registry.example.test/acme/${type}/terraform-provider-${type}_${version}_linux_arm64.zip`),
        );
        if (!zip.h1.ok) throw zip.h1.error;
        return {
          provider: parseProviderSource(`registry.example.test/acme/${type!}`, 'terraform'),
          version: parseVersion(version!),
          constraints: parseConstraints(constraints!),
          hashes: [zip.h1.hash],
        };
      }),
    );
    expect(serializeLocks(mergeProvidersLock(old, results), 'terraform').toString()).toBe(after);
  });

  it('init: keeps prior hashes only for the same version, adds local and signed hashes, drops unused providers', () => {
    const a = parseProviderSource('example.com/acme/a', 'tofu');
    const b = parseProviderSource('example.com/acme/b', 'tofu');
    const old = new Locks([
      newProviderLock(a, parseVersion('1.0.0'), undefined, [parseHash('h1:old'), parseHash('zz:unknown')]),
      newProviderLock(b, parseVersion('1.0.0'), undefined, [parseHash('h1:bbb')]),
    ]);
    const merged = mergeInit(
      old,
      [
        {
          provider: a,
          version: parseVersion('1.0.0'),
          constraints: parseConstraints('~> 1.0'),
          localHash: parseHash('h1:new'),
          signedHashes: [parseHash('zh:abc')],
        },
      ],
      [a],
    );
    expect(merged.size).toBe(1);
    expect(merged.provider(a)!.hashes.map((h) => h.text)).toEqual(['h1:new', 'h1:old', 'zh:abc']);
    const upgraded = mergeInit(
      old,
      [
        {
          provider: a,
          version: parseVersion('1.1.0'),
          constraints: parseConstraints(''),
          localHash: parseHash('h1:new'),
          signedHashes: [],
        },
      ],
      [a, b],
    );
    expect(upgraded.provider(a)!.hashes.map((h) => h.text)).toEqual(['h1:new']);
    expect(upgraded.provider(b)).toBeDefined();
  });
});

describe('trust on first use', () => {
  const p = parseProviderSource('example.com/acme/a', 'tofu');
  const v = parseVersion('1.0.0');
  const lock = newProviderLock(p, v, undefined, [parseHash('h1:zipform'), parseHash('zh:aaa'), parseHash('x:other')]);

  it('verifies nothing without a lock for the selected version', () => {
    expect(allowedHashes(lock, parseVersion('2.0.0'))).toEqual([]);
    expect(verifyPackage([], { kind: 'dir', h1: parseHash('h1:x') }, p, v, 'tofu').kind).toBe('unverified');
  });

  it('accepts an archive matching a zh: or the zip-form h1:', () => {
    const allowed = allowedHashes(lock, v);
    expect(allowed.map((h) => h.text)).toEqual(['h1:zipform', 'zh:aaa']);
    expect(verifyPackage(allowed, { kind: 'archive', zh: parseHash('zh:aaa'), h1Zip: null }, p, v, 'tofu').kind).toBe(
      'match',
    );
    expect(
      verifyPackage(allowed, { kind: 'archive', zh: parseHash('zh:bbb'), h1Zip: parseHash('h1:zipform') }, p, v, 'tofu')
        .kind,
    ).toBe('match');
  });

  it('refuses a mismatching archive with the reference message, per flavor', () => {
    const r = verifyPackage(
      allowedHashes(lock, v),
      { kind: 'archive', zh: parseHash('zh:bbb'), h1Zip: parseHash('h1:other') },
      p,
      v,
      'terraform',
    );
    expect(r).toEqual({
      kind: 'mismatch',
      message:
        "the current package for example.com/acme/a 1.0.0 doesn't match any of the checksums previously recorded in the dependency lock file; for more information: https://developer.hashicorp.com/terraform/language/files/dependency-lock#checksum-verification",
    });
  });

  it('accepts any directory when the lock has only zh: hashes (the reference quirk)', () => {
    const zhOnly = [parseHash('zh:aaa')];
    expect(verifyPackage(zhOnly, { kind: 'dir', h1: parseHash('h1:anything') }, p, v, 'tofu')).toEqual({
      kind: 'unverified',
      reason: 'only-zh-for-directory',
    });
    const r = verifyPackage([parseHash('h1:zipform')], { kind: 'dir', h1: parseHash('h1:anything') }, p, v, 'tofu');
    expect(r.kind === 'mismatch' && r.message).toContain('the local package for example.com/acme/a 1.0.0');
  });
});

describe('file I/O', () => {
  it('loads a missing file as empty, saves atomically with mode 0644, and leaves nothing behind on failure', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'provkit-lock-'));
    try {
      const path = join(dir, '.terraform.lock.hcl');
      expect((await loadLockFile(path, 'tofu')).locks.size).toBe(0);
      const locks = new Locks([
        newProviderLock(parseProviderSource('example.com/a/b', 'tofu'), parseVersion('1.0.0'), undefined, []),
      ]);
      await saveLockFile(path, locks, 'tofu');
      expect((await stat(path)).mode & 0o777).toBe(0o644);
      expect((await loadLockFile(path, 'tofu')).locks.size).toBe(1);
      // A directory where the lock file should be: the save fails, naming the file, and no temp file stays.
      const blocked = join(dir, 'blocked');
      await mkdir(join(blocked, '.terraform.lock.hcl'), { recursive: true });
      await expect(saveLockFile(join(blocked, '.terraform.lock.hcl'), locks, 'tofu')).rejects.toThrow(
        /Error while writing new dependency lock information to .*blocked/,
      );
      expect(await readdir(blocked)).toEqual(['.terraform.lock.hcl']);
      // A read-only directory: the old file is untouched.
      const before = await readFile(path);
      await chmod(dir, 0o555);
      if (process.getuid?.() !== 0) {
        await expect(saveLockFile(path, new Locks(), 'tofu')).rejects.toThrow();
        expect((await readFile(path)).equals(before)).toBe(true);
      }
      await chmod(dir, 0o755);
      await writeFile(join(dir, 'x'), '');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a save whose signal has aborted (an interrupt during an install) rejects with ABORTED and leaves the old file and no temp file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'provkit-lock-'));
    try {
      const path = join(dir, '.terraform.lock.hcl');
      const locks = new Locks([
        newProviderLock(parseProviderSource('example.com/a/b', 'tofu'), parseVersion('1.0.0'), undefined, []),
      ]);
      await saveLockFile(path, new Locks(), 'tofu');
      const before = await readFile(path);
      const controller = new AbortController();
      controller.abort(new Error('SIGINT'));
      await expect(saveLockFile(path, locks, 'tofu', controller.signal)).rejects.toMatchObject({ code: 'ABORTED' });
      expect((await readFile(path)).equals(before)).toBe(true);
      expect(await readdir(dir)).toEqual(['.terraform.lock.hcl']);
      // Without a signal, or with one that has not aborted, the save is as before.
      await saveLockFile(path, locks, 'tofu', new AbortController().signal);
      expect((await loadLockFile(path, 'tofu')).locks.size).toBe(1);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
