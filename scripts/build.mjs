// The build: dist/ made from nothing (tsc, then scripts/bundle.mjs, which
// records what it was made from in dist/build-inputs.json, the one record:
// scripts/build-inputs.mjs), so that `npm pack` can tell whether dist/ is the
// build of this checkout.
//
//   node scripts/build.mjs             remove dist/, build it                       (npm run build)
//   node scripts/build.mjs --if-stale  the same, unless the record matches          (scripts/prepack.mjs)
//   node scripts/build.mjs --check     exit 0 when it matches, 1 saying why not     (the package test)
//
// Why from nothing: tsc writes over dist/ but never removes a file whose
// source is gone, and `files: ["dist"]` would ship it. Why the record: a
// package test that packs after `npm test` built dist/ must not build again
// (half a minute) or, worse, replace dist/ while other tests run it. A pack
// also minds the Node and V8 versions (the shipped code cache is recorded for
// them); the tests do not (a mismatch costs start-up time, never correctness).
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

import { staleDist } from './build-inputs.mjs';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const DIST = join(ROOT, 'dist');

/**
 * Why dist/ is not the build of this checkout (its inputs and runtime), or undefined when it is.
 * @returns {string | undefined}
 */
export function staleReason() {
  return staleDist(ROOT, { runtime: true });
}

/**
 * @param {string} cmd
 * @param {string[]} args
 */
function run(cmd, args) {
  const r = spawnSync(cmd, args, { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) {
    console.error(`build: ${relative(ROOT, args[0] ?? cmd)} failed`);
    process.exit(r.status ?? 1);
  }
}

/** Removes dist/ and builds it; the record is written (by scripts/bundle.mjs) only when every step succeeded. */
export function build() {
  rmSync(DIST, { recursive: true, force: true });
  run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json']);
  run(process.execPath, [join(ROOT, 'scripts/bundle.mjs')]);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const mode = process.argv[2];
  if (mode === '--check') {
    const why = staleReason();
    if (why !== undefined) {
      console.error(why);
      process.exit(1);
    }
  } else if (mode === '--if-stale') {
    const why = staleReason();
    if (why === undefined) console.error('build: dist/ is the build of this checkout; not rebuilt');
    else {
      console.error(`build: ${why}; building`);
      build();
    }
  } else if (mode === undefined) {
    build();
  } else {
    console.error(`usage: node scripts/build.mjs [--if-stale | --check]`);
    process.exit(2);
  }
}
