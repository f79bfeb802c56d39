// The tests refuse an old dist/ (test/support/fresh-dist.ts, the globalSetup
// of both vitest projects): a tree built, then changed, in a temporary copy.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { buildInputs, buildRecord, RECORD, staleDist as staleBuild } from '../../scripts/build-inputs.mjs';
import { importClosure, staleDist } from './fresh-dist.js';

let root = '';
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** A tree with `files` (path → text) and, when `built`, the record a finished `npm run build` leaves. */
function tree(files: Record<string, string>, built: boolean): string {
  root = mkdtempSync(join(tmpdir(), 'provkit-fresh-dist-'));
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(join(root, rel, '..'), { recursive: true });
    writeFileSync(join(root, rel), text);
  }
  if (built) {
    mkdirSync(join(root, 'dist'));
    writeFileSync(join(root, RECORD), JSON.stringify({ inputs: buildInputs(root) }));
  }
  return root;
}

const SRC = {
  'src/hashing/worker.ts': "import { h } from './h1.js';\n",
  'src/hashing/h1.ts': "import { z } from '../zip/read.js';\nexport const h = z;\n",
  'src/zip/read.ts': 'export const z = 1;\n',
  'src/cli/main.ts': "import { h } from '../hashing/h1.js';\n",
  'tsconfig.json': '{}\n',
};

describe('a stale dist/ is refused with "run npm run build"', () => {
  it('accepts dist/ built from the files as they are', () => {
    expect(staleDist(tree(SRC, true))).toBeUndefined();
  });

  it('refuses dist/ once a source file changed, is added or removed, naming them', () => {
    const r = tree(SRC, true);
    writeFileSync(join(r, 'src/zip/read.ts'), 'export const z = 2;\n');
    writeFileSync(join(r, 'src/new.ts'), '\n');
    rmSync(join(r, 'src/cli/main.ts'));
    expect(staleDist(r)).toBe(
      'dist/ is older than src/: run npm run build (changed since the last build: src/cli/main.ts, src/new.ts, src/zip/read.ts)',
    );
  });

  it('refuses dist/ once the build configuration changed', () => {
    const r = tree(SRC, true);
    writeFileSync(join(r, 'tsconfig.json'), '{ "compilerOptions": {} }\n');
    expect(staleDist(r)).toMatch(/run npm run build \(changed since the last build: tsconfig\.json\)$/);
  });

  it('refuses a tree never built, or whose build stopped before its end', () => {
    expect(staleDist(tree(SRC, false))).toBe(
      'dist/ is not a finished build of this tree (no dist/build-inputs.json): run npm run build',
    );
  });

  it('for the unit project, minds only the hash worker and the modules it imports', () => {
    const r = tree(SRC, true);
    const worker = importClosure(r, 'src/hashing/worker.ts');
    expect([...worker].sort()).toEqual(['src/hashing/h1.ts', 'src/hashing/worker.ts', 'src/zip/read.ts']);
    writeFileSync(join(r, 'src/cli/main.ts'), '\n');
    expect(staleDist(r, (p) => worker.has(p))).toBeUndefined();
    writeFileSync(join(r, 'src/zip/read.ts'), 'export const z = 3;\n');
    expect(staleDist(r, (p) => worker.has(p))).toMatch(
      /run npm run build \(changed since the last build: src\/zip\/read\.ts\)$/,
    );
  });

  it('is the one record: a pack (scripts/build.mjs --check) reads it too, and also minds the Node the code cache is for', () => {
    const r = tree(SRC, false);
    mkdirSync(join(r, 'dist'));
    writeFileSync(join(r, RECORD), JSON.stringify(buildRecord(r)));
    expect(staleBuild(r, { runtime: true })).toBeUndefined();
    writeFileSync(join(r, RECORD), JSON.stringify({ ...buildRecord(r), runtime: 'node v0.0.1 v8 1.0' }));
    expect(staleDist(r)).toBeUndefined();
    expect(staleBuild(r, { runtime: true })).toMatch(
      /^dist\/ was built with another Node \(node v0\.0\.1 v8 1\.0, now node v\S+ v8 \S+\): run npm run build$/,
    );
  });
});
