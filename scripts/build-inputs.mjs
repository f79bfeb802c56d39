// What dist/ was built from: the SHA-256 of every file the build reads
// (src/, the TypeScript configuration, the bundler and the loader whose
// format it writes, the locked dependencies it bundles). scripts/bundle.mjs,
// the last step of every build (`npm run build`, and whatever install or pack
// script runs it), records them in dist/build-inputs.json; the tests'
// globalSetup (test/support/fresh-dist.ts) compares them with the files as they
// are now, so that a test never runs an old dist/. Keyed on content, not
// modification times: a fresh clone, a checkout or `npm ci` changes the times
// of files whose content is what was built.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The record's path, relative to the repository root. */
export const RECORD = 'dist/build-inputs.json';

/** The build's inputs outside src/ (relative to the repository root). */
const FILES = ['tsconfig.json', 'tsconfig.build.json', 'scripts/bundle.mjs', 'bin/load-cli.js', 'package-lock.json'];

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
 * The inputs recorded by the last build under `root`, or undefined when none
 * finished (no dist/, or a build that stopped before its end).
 * @param {string} root
 * @returns {Record<string, string> | undefined}
 */
export function recordedInputs(root) {
  try {
    const record = /** @type {{ inputs?: Record<string, string> }} */ (
      JSON.parse(readFileSync(join(root, RECORD), 'utf8'))
    );
    return record.inputs;
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
