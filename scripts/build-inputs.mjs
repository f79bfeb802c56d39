// What dist/ was built from, the one record of it: the SHA-256 of every file
// the build reads (src/, the TypeScript configuration, the build and bundle
// scripts and the loader whose format it writes, the locked dependencies it
// bundles) and the Node and V8 versions the code cache was recorded with.
// scripts/bundle.mjs, the last step of every build (`npm run build`, which is
// scripts/build.mjs, and whatever install or pack script runs it), writes it
// to dist/build-inputs.json once the build has finished. Two readers:
// the tests' globalSetup (test/support/fresh-dist.ts), so that a test never
// runs an old dist/, and scripts/build.mjs `--check` / `--if-stale` (the
// package test, scripts/prepack.mjs), so that `npm pack` does not build again
// what is already built. Keyed on content, not modification times: a fresh
// clone, a checkout or `npm ci` changes the times of files whose content is
// what was built.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The record's path, relative to the repository root. */
export const RECORD = 'dist/build-inputs.json';

/** The build's inputs outside src/ (relative to the repository root). */
const FILES = [
  'tsconfig.json',
  'tsconfig.build.json',
  'scripts/build.mjs',
  'scripts/bundle.mjs',
  'bin/load-cli.js',
  'package-lock.json',
];

/**
 * The Node and V8 the build ran on: the bundle's code cache is recorded for
 * them (bin/load-cli.js ignores a cache of another V8, so a mismatch costs
 * start-up time, never correctness: the tests accept it, a pack builds again).
 * @returns {string}
 */
export function buildRuntime() {
  return `node ${process.version} v8 ${process.versions.v8}`;
}

/**
 * Files under `dir` (relative to `root`, forward slashes), sorted.
 * @param {string} root
 * @param {string} dir
 * @returns {string[]}
 */
function walk(root, dir) {
  /** @type {string[]} */
  const out = [];
  for (const e of readdirSync(join(root, dir), { withFileTypes: true })) {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) out.push(...walk(root, rel));
    else if (e.isFile()) out.push(rel);
  }
  return out.sort();
}

/**
 * The build's inputs as they are now under `root`: path (relative, forward
 * slashes) → SHA-256 (hex) of its bytes, in path order.
 * @param {string} root
 * @returns {Record<string, string>}
 */
export function buildInputs(root) {
  /** @type {Record<string, string>} */
  const inputs = {};
  for (const rel of [...walk(root, 'src'), ...FILES.filter((f) => existsSync(join(root, f)))].sort()) {
    inputs[rel] = createHash('sha256')
      .update(readFileSync(join(root, rel)))
      .digest('hex');
  }
  return inputs;
}

/**
 * The record of a build of `root` as it is now (what scripts/bundle.mjs writes at the end of a build).
 * @param {string} root
 * @returns {{ inputs: Record<string, string>, runtime: string }}
 */
export function buildRecord(root) {
  return { inputs: buildInputs(root), runtime: buildRuntime() };
}

/**
 * The record of the last build under `root`, or undefined when none finished
 * (no dist/, or a build that stopped before its end).
 * @param {string} root
 * @returns {{ inputs: Record<string, string>, runtime?: string } | undefined}
 */
export function recordedBuild(root) {
  try {
    const record = /** @type {{ inputs?: Record<string, string>, runtime?: string }} */ (
      JSON.parse(readFileSync(join(root, RECORD), 'utf8'))
    );
    return record.inputs === undefined ? undefined : { ...record, inputs: record.inputs };
  } catch {
    return undefined;
  }
}

/**
 * Paths whose content differs between two records (changed, added or
 * removed), sorted; only those `only` accepts when given.
 * @param {Record<string, string>} built
 * @param {Record<string, string>} now
 * @param {(path: string) => boolean} [only]
 * @returns {string[]}
 */
export function changedInputs(built, now, only = () => true) {
  const paths = new Set([...Object.keys(built), ...Object.keys(now)]);
  return [...paths].filter((p) => only(p) && built[p] !== now[p]).sort();
}

/**
 * Why dist/ under `root` is not the build of its files as they are now, or
 * undefined when it is: all of the inputs, or only those `only` accepts (the
 * unit tests mind the hash worker's modules only); `runtime`: also the Node
 * and V8 the code cache was recorded with (what a pack ships).
 * @param {string} root
 * @param {{ only?: (path: string) => boolean, runtime?: boolean }} [options]
 * @returns {string | undefined}
 */
export function staleDist(root, options = {}) {
  const built = recordedBuild(root);
  if (built === undefined) {
    return `dist/ is not a finished build of this tree (no ${RECORD}): run npm run build`;
  }
  const changed = changedInputs(built.inputs, buildInputs(root), options.only);
  if (changed.length > 0) {
    const named = changed.slice(0, 5).join(', ') + (changed.length > 5 ? ` and ${changed.length - 5} more` : '');
    return `dist/ is older than src/: run npm run build (changed since the last build: ${named})`;
  }
  if (options.runtime && built.runtime !== buildRuntime()) {
    return `dist/ was built with another Node (${built.runtime ?? 'unknown'}, now ${buildRuntime()}): run npm run build`;
  }
  return undefined;
}
