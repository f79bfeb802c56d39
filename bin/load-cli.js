// Loads the CLI for bin/provkit.js: the bundle dist/bundle/main.cjs, compiled
// from V8's code cache beside it when the cache fits, or the plain build
// dist/cli/main.js when there is no bundle.
//
// Why a code cache (issue 13, tiny lock ≤ 1.6 × `node -e 0`; bench/PROFILE.md
// "Stop 22"): a tiny lock spent ~40 % of its time after Node's start reading,
// resolving and compiling ES modules. Node 20 cannot give an ES module a code
// cache, a classic script can (`vm.Script` with `cachedData`), so the CLI is
// bundled as one CommonJS file and compiled here with the cache
// scripts/bundle.mjs recorded from a training run.
//
// The vendor files (openpgp.js, node-fetch, https-proxy-agent) get the same
// treatment when main.cjs first requires them: openpgp.js compiles in ~31 ms
// without its cache, ~8 ms with it.
//
// When the cache does not fit it is only slower, never wrong: V8 refuses data
// made by another V8, with other flags or for a source of another length
// (`script.cachedDataRejected`), and compiles the source as usual. A source of
// the same length but other content is the one case V8 cannot see, so the
// cache also starts with the build's id, which the bundle's first line carries;
// a cache whose id differs is not used.
//
// CommonJS (bin/package.json) so that nothing of Node's ES-module loader is
// set up for the bundle. No dependencies, no TypeScript: this file runs before
// anything of provkit is loaded.
'use strict';

const { closeSync, existsSync, fstatSync, openSync, readSync } = require('node:fs');
const { createRequire } = require('node:module');
const { dirname, join } = require('node:path');
const vm = require('node:vm');

const BUNDLE_DIR = join(__dirname, '..', 'dist', 'bundle');
const BUNDLE = join(BUNDLE_DIR, 'main.cjs');

// The function Node wraps a CommonJS module in. The build writes each bundle
// file already wrapped ({@link wrapBundle}), so the file's text is the script
// V8 compiles and its cache was made for: no 576 KB string concatenated and
// flattened again at every start.
const WRAP_HEAD = '(function (exports, require, module, __filename, __dirname) {';
const WRAP_TAIL = '\n})';

/** The first line of a bundle of the build `id` (scripts/bundle.mjs puts it there). */
function bundleIdLine(id) {
  return `//provkit-bundle ${id}\n`;
}

/**
 * The text of a bundle file for the build `id` from esbuild's CommonJS output
 * `code`: the id line, then `code` as the function Node would wrap it in. As a
 * script it evaluates to that function ({@link runBundle} calls it).
 */
function wrapBundle(id, code) {
  return bundleIdLine(id) + WRAP_HEAD + code + WRAP_TAIL;
}

/** The build id in the bundle's first line ({@link bundleIdLine}), or '' when there is none. */
function bundleId(source) {
  const m = /^\/\/provkit-bundle ([0-9a-f-]+)\n/.exec(source.slice(0, 64));
  return m ? m[1] : '';
}

/** What a code cache file starts with: the id of the build it was made for. */
function cacheHeader(id) {
  return `provkit-code-cache ${id}\n`;
}

/**
 * The whole of `file`, read into `spare` when it fits (else into a new buffer).
 * Reusing memory matters at start-up: on the benchmark machine every fresh
 * page costs a fault of ~20 µs, ~3 ms for a 576 KB file (bench/PROFILE.md "Stop 23").
 */
function readWhole(file, spare) {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    const buffer = spare && spare.length >= size ? spare : Buffer.allocUnsafeSlow(size);
    let at = 0;
    while (at < size) {
      const n = readSync(fd, buffer, at, size - at, at);
      if (n === 0) break;
      at += n;
    }
    return buffer.subarray(0, at);
  } finally {
    closeSync(fd);
  }
}

/**
 * The cached data beside `file` (`<file>.cache`) when it was made for the build
 * `id`, or undefined. `spare` is memory it may read into (V8 is done with it
 * once the script is compiled).
 */
function cacheBeside(file, id, spare) {
  let data;
  try {
    data = readWhole(`${file}.cache`, spare);
  } catch {
    return undefined;
  }
  const header = cacheHeader(id);
  if (id === '' || data.length <= header.length || data.toString('latin1', 0, header.length) !== header)
    return undefined;
  return data.subarray(header.length);
}

// The vendor files main.cjs requires (scripts/bundle.mjs): loaded like the
// bundle, with their own code caches, once per process.
const VENDOR_FILE = /^\.\/(vendor-[a-z-]+\.cjs)$/;

/**
 * Compiles and runs a bundle file ({@link wrapBundle}), with the cached data
 * `cacheFor(file, id, spare)` gives for its build id; the vendor files it requires are loaded the same
 * way (and recorded in `vendors`). Returns its exports, the script (whose
 * createCachedData() records a cache), its id and whether cached data was given.
 * The bundle is ASCII (scripts/bundle.mjs checks it), so latin1 reads it as
 * it is, without UTF-8 decoding; the cache is read into the memory the source
 * was read into.
 */
function runBundle(file, cacheFor = () => undefined, vendors = new Map()) {
  const bytes = readWhole(file);
  const source = bytes.toString('latin1');
  const id = bundleId(source);
  // A file of an older build (before bundles were wrapped: a stale dist/) must not run as a script.
  if (id === '' || !source.startsWith(WRAP_HEAD, bundleIdLine(id).length))
    throw new Error(`${file} is not a bundle of this version; run \`npm run build\``);
  const cachedData = cacheFor(file, id, bytes);
  const script = new vm.Script(source, { filename: file, cachedData });
  const dir = dirname(file);
  const nodeRequire = createRequire(file);
  const bundleRequire = (name) => {
    const vendor = VENDOR_FILE.exec(name);
    if (!vendor) return nodeRequire(name);
    const vendorFile = join(dir, vendor[1]);
    let run = vendors.get(vendorFile);
    if (!run) {
      run = runBundle(vendorFile, cacheFor, vendors);
      vendors.set(vendorFile, run);
    }
    return run.exports;
  };
  const module = { exports: {} };
  script.runInThisContext()(module.exports, bundleRequire, module, file, dir);
  return { exports: module.exports, script, id, withCache: cachedData !== undefined, vendors };
}

/** How a bundle's code cache fared: 'used', 'rejected' (V8 refused it) or 'none' (absent, of another build, or off). */
function cacheState(run) {
  return !run.withCache ? 'none' : run.script.cachedDataRejected ? 'rejected' : 'used';
}

/**
 * The CLI module's exports (`main`, `describeError`, …) and how its code cache
 * fared ({@link cacheState}; 'unbundled' without a bundle; PROVKIT_CODE_CACHE=off
 * uses none). `bundleDir` is for tests.
 */
async function loadCli(env = process.env, bundleDir = BUNDLE_DIR) {
  const bundle = join(bundleDir, 'main.cjs');
  if (!existsSync(bundle)) return { cli: await import('../dist/cli/main.js'), cache: 'unbundled' };
  const run = runBundle(bundle, env.PROVKIT_CODE_CACHE === 'off' ? undefined : cacheBeside);
  return { cli: run.exports, cache: cacheState(run), vendors: run.vendors };
}

/** Records the code cache of a bundle that `runBundle` ran (scripts/bundle.mjs, after training). */
function codeCacheOf(run) {
  return Buffer.concat([Buffer.from(cacheHeader(run.id), 'latin1'), run.script.createCachedData()]);
}

module.exports = { loadCli, runBundle, cacheBeside, cacheState, codeCacheOf, wrapBundle, BUNDLE };
