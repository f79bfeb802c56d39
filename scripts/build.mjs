// The build: dist/ made from nothing (tsc, then scripts/bundle.mjs), and a
// record of what it was made from, so that `npm pack` can tell whether dist/
// is the build of this checkout.
//
//   node scripts/build.mjs             remove dist/, build it, write dist/.build-inputs  (npm run build)
//   node scripts/build.mjs --if-stale  the same, unless dist/.build-inputs matches      (scripts/prepack.mjs)
//   node scripts/build.mjs --check     exit 0 when it matches, 1 saying why not         (the package test)
//
// Why from nothing: tsc writes over dist/ but never removes a file whose
// source is gone, and `files: ["dist"]` would ship it. Why the record: a
// package test that packs after `npm test` built dist/ must not build again
// (half a minute) or, worse, replace dist/ while other tests run it.
//
// The inputs are every file of src/, the build's configuration and scripts,
// the dependency versions (package-lock.json: the bundle includes them) and
// the Node and V8 versions (the bundle's code cache is recorded for them;
// bin/load-cli.js ignores a cache of another V8, so a mismatch costs start-up
// time, never correctness).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const DIST = join(ROOT, 'dist');
/** Written last by a complete build; `files` in package.json leaves it out of the package. */
export const RECORD = join(DIST, '.build-inputs');
const CONFIG = [
  'tsconfig.json',
  'tsconfig.build.json',
  'package-lock.json',
  'scripts/build.mjs',
  'scripts/bundle.mjs',
  'bin/load-cli.js',
];

/**
 * Files under `dir` (relative to the root, forward slashes, sorted).
 * @param {string} dir
 * @returns {string[]}
 */
function filesUnder(dir) {
  /** @type {string[]} */
  const out = [];
  for (const e of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) out.push(...filesUnder(rel));
    else if (e.isFile()) out.push(rel);
  }
  return out.sort();
}

/**
 * The record of this checkout's build inputs: one line per input, `sha256  path`, then the runtime.
 * @returns {string}
 */
export function buildInputs() {
  const lines = [...CONFIG, ...filesUnder('src')].map(
    (f) =>
      `${createHash('sha256')
        .update(readFileSync(join(ROOT, f)))
        .digest('hex')}  ${f}`,
  );
  lines.push(`node ${process.version} v8 ${process.versions.v8}`);
  return `${lines.join('\n')}\n`;
}

/**
 * Why dist/ is not the build of these inputs, or undefined when it is.
 * @returns {string | undefined}
 */
export function staleReason() {
  if (!existsSync(RECORD)) return 'dist/ was not made by scripts/build.mjs (no dist/.build-inputs)';
  const want = buildInputs().split('\n');
  const have = readFileSync(RECORD, 'utf8').split('\n');
  const changed = want.filter((l) => !have.includes(l)).map((l) => l.replace(/^[0-9a-f]{64} {2}/, ''));
  const gone = have.filter((l) => !want.includes(l)).map((l) => l.replace(/^[0-9a-f]{64} {2}/, ''));
  const names = [...new Set([...changed, ...gone])].filter((l) => l !== '');
  if (names.length === 0) return undefined;
  return `dist/ was built from other inputs (${names.slice(0, 5).join(', ')}${names.length > 5 ? ', …' : ''})`;
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

/** Removes dist/ and builds it; the record is written only when every step succeeded. */
export function build() {
  const inputs = buildInputs();
  rmSync(DIST, { recursive: true, force: true });
  run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json']);
  run(process.execPath, [join(ROOT, 'scripts/bundle.mjs')]);
  writeFileSync(RECORD, inputs);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const mode = process.argv[2];
  if (mode === '--check') {
    const why = staleReason();
    if (why !== undefined) {
      console.error(`${why}: run npm run build`);
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
