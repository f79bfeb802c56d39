/**
 * vitest globalSetup: refuse to test an old build. `bin/provkit.js` runs
 * dist/, and the hash pool started from TypeScript (the unit tests) runs the
 * compiled worker, dist/hashing/worker.js (src/hashing/pool.ts `workerURL`).
 * A change to src/ without `npm run build` would test the code as it was.
 *
 * The build records what it was made from (dist/build-inputs.json,
 * scripts/build-inputs.mjs, the one record, written by scripts/bundle.mjs at
 * the end of `npm run build`); this compares that with the files now, by
 * content: hashing src/ takes a few milliseconds. The end-to-end project
 * needs every input unchanged; the unit project only the worker's own modules
 * (the files src/hashing/worker.ts imports, transitively), so that a change to
 * a command does not make the pure tests wait for a build.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';

import type { TestProject } from 'vitest/node';

import { staleDist as staleBuild } from '../../scripts/build-inputs.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The compiled hash worker's entry, as src/hashing/pool.ts starts it from TypeScript. */
export const WORKER_ENTRY = 'src/hashing/worker.ts';

/**
 * `entry` and the src/ modules it imports, transitively (relative specifiers;
 * `x.js` is `x.ts` in src/), as paths relative to `root`.
 */
export function importClosure(root: string, entry: string): Set<string> {
  const seen = new Set<string>();
  const visit = (rel: string): void => {
    if (seen.has(rel)) return;
    seen.add(rel);
    const text = readFileSync(join(root, rel), 'utf8');
    for (const m of text.matchAll(/\b(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g)) {
      const target = posix.join(posix.dirname(rel), m[1]!).replace(/\.js$/, '.ts');
      if (existsSync(join(root, target))) visit(target);
    }
  };
  visit(entry);
  return seen;
}

/**
 * Why dist/ under `root` cannot be tested, or undefined when it was built from
 * the inputs as they are now (all of them, or only those `only` accepts).
 */
export function staleDist(root: string, only?: (path: string) => boolean): string | undefined {
  return staleBuild(root, only === undefined ? {} : { only });
}

export function setup(project: TestProject): void {
  let only: ((path: string) => boolean) | undefined;
  if (project.name === 'unit') {
    if (!existsSync(join(ROOT, WORKER_ENTRY))) {
      throw new Error(
        `test/support/fresh-dist.ts: ${WORKER_ENTRY} does not exist; name the hash worker's source there`,
      );
    }
    const worker = importClosure(ROOT, WORKER_ENTRY);
    only = (path) => worker.has(path);
  }
  const problem = staleDist(ROOT, only);
  if (problem !== undefined) throw new Error(problem);
}
