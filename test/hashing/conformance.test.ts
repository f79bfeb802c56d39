// Every package of test/fixtures/conformance with the hashes the reference
// computed (terraform 1.11.4): h1 (extracted form), h1_zip (zip form), zh,
// and refusal where it says refuse. Run in-process and through the worker pool.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { afterAll, describe, expect, it } from 'vitest';

import { createHashPool, hashZipPackage, type ZipForms, type ZipPackageHashes } from '../../src/hashing/index.js';
import { zipFormsFileOnce } from '../../src/hashing/zip-stream.js';

const root = fileURLToPath(new URL('../fixtures/conformance/', import.meta.url));

interface Expected {
  description: string;
  expect: 'accept' | 'refuse';
  zh: string;
  h1?: string;
  h1_zip: string | null;
}
const corpus = JSON.parse(readFileSync(`${root}hashes.json`, 'utf8')) as { packages: Record<string, Expected> };
const cases = Object.entries(corpus.packages);

function check(name: string, want: Expected, got: ZipPackageHashes | ZipForms): void {
  // The forms alone (hashZipForms, a lock without a hash store) carry no zh:.
  if ('zh' in got) expect(got.zh.text, 'zh').toBe(want.zh);
  else expect(Object.keys(got)).not.toContain('zh');
  if (want.h1_zip === null) expect(got.h1Zip.ok, 'zip form refused').toBe(false);
  else expect(got.h1Zip.ok ? got.h1Zip.hash.text : got.h1Zip.error.message, 'h1_zip').toBe(want.h1_zip);
  if (want.expect === 'accept') {
    expect(got.h1.ok ? got.h1.hash.text : got.h1.error.message, 'h1').toBe(want.h1);
    // The warning is given exactly when the two forms differ.
    expect(
      got.warnings.some((w) => w.code === 'H1_FORMS_DIFFER'),
      'forms-differ warning',
    ).toBe(want.h1 !== want.h1_zip);
  } else {
    expect(got.h1.ok, `${name} must be refused`).toBe(false);
    if (!got.h1.ok) {
      expect(got.h1.error.code).toMatch(/^(ZIP_|HASH_)/);
      expect(got.h1.error.message).toContain(`${name}.zip`);
    }
  }
}

describe('conformance corpus', () => {
  it('has packages', () => expect(cases.length).toBeGreaterThan(20));

  describe.each(cases)('%s', (name, want) => {
    it(`${want.expect}s with the reference's hashes (${want.description})`, async () => {
      check(name, want, await hashZipPackage(`${root}packages/${name}.zip`));
    });
  });

  const pool = createHashPool({ concurrency: 2 });
  afterAll(() => pool.close());
  it('gives the same results through the worker pool, in parallel', async () => {
    const results = await Promise.all(cases.map(([name]) => pool.hashZip(`${root}packages/${name}.zip`)));
    results.forEach((got, i) => check(cases[i]![0], cases[i]![1], got));
  });

  it("gives the same h1: forms without the zh: (hashZipForms): in this thread, in the workers, in the pool's own thread", async () => {
    const inThread = createHashPool({ concurrency: 2, inThreadBytes: 1 << 30 });
    try {
      for (const hash of [
        (p: string) => zipFormsFileOnce(p),
        (p: string) => pool.hashZipForms(p),
        (p: string) => inThread.hashZipForms(p),
      ]) {
        const results = await Promise.all(cases.map(([name]) => hash(`${root}packages/${name}.zip`)));
        results.forEach((got, i) => check(cases[i]![0], cases[i]![1], got));
      }
    } finally {
      await inThread.close();
    }
  });

  it('names the entries responsible when the forms differ', async () => {
    const got = await hashZipPackage(`${root}packages/dir-entries.zip`);
    const w = got.warnings.find((x) => x.code === 'H1_FORMS_DIFFER');
    expect(w?.entries.length).toBeGreaterThan(0);
    expect(w?.entries.every((e) => e.endsWith('/'))).toBe(true);
    const dup = await hashZipPackage(`${root}packages/duplicate-names.zip`);
    expect(dup.warnings.find((x) => x.code === 'H1_FORMS_DIFFER')?.message).toContain('duplicate names');
  });
});
