// The checked-in demo mirror must be exactly what its generator writes (so the
// zips are reviewable as code), and its hashes must stay the ones Terraform
// computed for it (mirror-fixtures/hashes.json), which other tests may pin.
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { hashPackage } from '../bench/baseline-yauzl.js';
import { MIRROR_HOST, fixturePackages, generateMirror } from '../mirror-fixtures/generate.js';

const FIXTURES = fileURLToPath(new URL('../mirror-fixtures/', import.meta.url));

interface HashesFile {
  packages: Record<string, { zh: string; h1: string }>;
}

/** Files under `root/MIRROR_HOST`, as sorted forward-slash paths relative to `root`. */
async function mirrorFiles(root: string): Promise<string[]> {
  const entries = await readdir(join(root, MIRROR_HOST), { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => relative(root, join(e.parentPath, e.name)).split(sep).join('/'))
    .sort();
}

describe('mirror-fixtures', () => {
  let regenerated: string;
  beforeAll(async () => {
    regenerated = await mkdtemp(join(tmpdir(), 'provkit-mirror-fixtures-'));
    await generateMirror(regenerated);
  });
  afterAll(async () => {
    await rm(regenerated, { recursive: true, force: true });
  });

  it('the generator rewrites the checked-in packages byte for byte (run `npx tsx mirror-fixtures/generate.ts` after changing it)', async () => {
    const checkedIn = await mirrorFiles(FIXTURES);
    expect(await mirrorFiles(regenerated)).toEqual(checkedIn);
    expect(checkedIn).toEqual(
      fixturePackages()
        .map((p) => p.path)
        .sort(),
    );
    for (const path of checkedIn) {
      const [want, got] = await Promise.all([readFile(join(FIXTURES, path)), readFile(join(regenerated, path))]);
      expect(got.equals(want), path).toBe(true);
    }
  });

  it('keeps the hashes Terraform computed for every package', async () => {
    const recorded = (JSON.parse(await readFile(join(FIXTURES, 'hashes.json'), 'utf8')) as HashesFile).packages;
    expect(Object.keys(recorded).sort()).toEqual(
      fixturePackages()
        .map((p) => p.path)
        .sort(),
    );
    for (const [path, want] of Object.entries(recorded)) {
      const bytes = await readFile(join(FIXTURES, path));
      expect(`zh:${createHash('sha256').update(bytes).digest('hex')}`, path).toBe(want.zh);
      expect(await hashPackage(join(FIXTURES, path)), path).toEqual(want);
    }
  });
});
