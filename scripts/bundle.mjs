// Bundles the compiled CLI (dist/) into dist/bundle/ and records V8's code
// cache for it:
//
//   main.cjs         the CLI and the library code it runs, one CommonJS file
//                    (bin/load-cli.js compiles it with the cache)
//   main.cjs.cache   the code cache, recorded from training runs below
//   vendor-*.cjs     openpgp.js, node-fetch, https-proxy-agent: loaded by
//                    main.cjs with require() when a command first needs them,
//                    each with its own code cache (vendor-*.cjs.cache)
//   worker.js        the hash worker (an ES module; src/hashing/pool.ts finds
//                    it as ./worker.js beside the module it is in)
//
// Why: start-up. Node resolves, reads and compiles every ES module
// separately; a mirror run that finds everything in place loaded ~110 files
// and spent a third of its 0.4 s doing it (issue #5). Bundled as split ES
// modules the tiny fs-mirror lock still spent ~95 ms of its ~200 ms after
// Node's start loading and compiling ~390 KB of them; Node 20 gives no ES
// module a code cache, a classic script it does (issue 13, bench/PROFILE.md
// "Stop 22"). The vendor libraries stay out of main.cjs because every byte of
// it is read at each start (576 KB into a string: ~7 ms on the benchmark
// machine) and openpgp.js alone is 390 KB that only registry downloads use.
//
// esbuild is already in the tree (tsx and vite use it); it is a devDependency
// here so that `npm ci` keeps it.
import { randomUUID } from 'node:crypto';
import { cp, mkdtemp, readFile, rm, writeFile, rename } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';

import { build } from 'esbuild';

import { buildRecord, RECORD } from './build-inputs.mjs';

const requireHere = createRequire(import.meta.url);
/**
 * @typedef {{ main(argv: string[], io: object): Promise<number> }} Cli
 * @typedef {{ exports: Cli, script: unknown, id: string }} BundleRun
 * @type {{ runBundle: (file: string) => BundleRun, codeCacheOf: (run: BundleRun) => Buffer, wrapBundle: (id: string, code: string) => string, BUNDLE: string }}
 */
const { runBundle, codeCacheOf, wrapBundle, BUNDLE } = requireHere('../bin/load-cli.js');
const root = fileURLToPath(new URL('../', import.meta.url));
const outdir = join(root, 'dist', 'bundle');
const VENDOR = ['openpgp', 'node-fetch', 'https-proxy-agent'];

const common = {
  absWorkingDir: root,
  bundle: true,
  platform: 'node',
  target: 'node20',
  // Minified: fewer bytes to read and compile at every start. Names are not
  // kept: nothing prints a function's or class's name (ProvkitError sets its
  // own; stack traces are never shown).
  minify: true,
  // Licence comments go to *.LEGAL.txt beside each file: some hold non-ASCII
  // names, and one non-ASCII byte makes V8 hold the whole source as a
  // two-byte string (and bin/load-cli.js reads the bundle as latin1).
  legalComments: 'external',
  logLevel: 'warning',
  // A native addon (src/hashing/crc32.ts): required from node_modules at run
  // time, where npm put the binary for this platform.
  external: ['@node-rs/crc32'],
};
// A CommonJS file has no import.meta; its own URL stands in (src/hashing/pool.ts
// finds the worker from it, src/net uses it for createRequire), made when first
// read: node:url's pathToFileURL costs ~0.3 ms at start-up.
const cjs = {
  ...common,
  format: 'cjs',
  define: { 'import.meta.url': '__provkitMeta.url' },
  // Dynamic import() becomes require(): the bundle runs as a vm.Script, where
  // import() would need Node's experimental vm loader.
  supported: { 'dynamic-import': false },
};
const urlBanner = "const __provkitMeta={get url(){return require('node:url').pathToFileURL(__filename).href}};";

/**
 * Rewrites esbuild's CommonJS output `file` as bin/load-cli.js loads it: the
 * build id on the first line (the code cache must match it), then the code
 * wrapped as Node wraps a module (`wrapBundle`).
 * @param {string} file
 */
async function wrapFile(file) {
  await writeFile(file, wrapBundle(randomUUID(), await readFile(file, 'latin1')), 'latin1');
}

// What this build is made from (tsc has just compiled src/), read before the
// bundle is made; recorded in dist/build-inputs.json only once the build has
// finished (its absence says that a build stopped half-way), for the tests to
// refuse an old dist/ (scripts/build-inputs.mjs).
const record = buildRecord(root);
await rm(join(root, RECORD), { force: true });
await rm(outdir, { recursive: true, force: true });
// The vendor libraries first: main.cjs imports each through a shim that
// require()s the vendor file and re-exports its names, `default` included
// (esbuild's own interop would hand an ES-module importer the whole exports
// object as `default`, and node-fetch's default export is fetch itself).
const vendorShims = new Map();
for (const name of VENDOR) {
  const file = `vendor-${name}.cjs`;
  await build({ ...cjs, entryPoints: [name], outfile: join(outdir, file), banner: { js: urlBanner } });
  /** @type {Record<string, unknown>} */
  const exported = requireHere(join(outdir, file));
  const names = Object.keys(exported);
  await wrapFile(join(outdir, file));
  const lines = [`const m = require('./${file}');`];
  for (const n of names) lines.push(n === 'default' ? 'export default m.default;' : `export const ${n} = m.${n};`);
  vendorShims.set(name, lines.join('\n'));
}
await build({
  ...cjs,
  entryPoints: ['dist/cli/main.js'],
  outfile: BUNDLE,
  banner: { js: urlBanner },
  plugins: [
    {
      name: 'vendor',
      setup(b) {
        const filter = new RegExp(`^(${VENDOR.join('|')})$`);
        b.onResolve({ filter }, (a) => ({ path: a.path, namespace: 'vendor' }));
        b.onLoad({ filter: /.*/, namespace: 'vendor' }, (a) => ({ contents: vendorShims.get(a.path), loader: 'js' }));
        b.onResolve({ filter: /^\.\/vendor-/ }, (a) => ({ path: a.path, external: true }));
      },
    },
  ],
});
await wrapFile(BUNDLE);
await build({
  ...common,
  format: 'esm',
  entryPoints: ['dist/hashing/worker.js'],
  outfile: join(outdir, 'worker.js'),
  // Bundled CommonJS packages call require(); give the ES module one.
  banner: {
    js: "import { createRequire as __provkitCreateRequire } from 'node:module'; const require = __provkitCreateRequire(import.meta.url);",
  },
});

const vendorFiles = VENDOR.map((name) => join(outdir, `vendor-${name}.cjs`));
for (const file of [BUNDLE, ...vendorFiles]) {
  const source = await readFile(file);
  if (source.some((b) => b > 0x7f)) throw new Error(`${file} is not ASCII; bin/load-cli.js reads it as latin1`);
  // A vm.Script has no import() without Node's experimental vm loader.
  if (source.includes('import(')) throw new Error(`${file} calls import(); see \`supported\` above`);
}

/**
 * Writes `run`'s code cache beside its file, atomically.
 * @param {string} file
 * @param {BundleRun} run
 */
async function recordCache(file, run) {
  await writeFile(`${file}.cache.tmp`, codeCacheOf(run));
  await rename(`${file}.cache.tmp`, `${file}.cache`);
}

// Training: the code cache holds the functions compiled while these runs
// happened; anything else compiles lazily as without a cache. The runs are the
// README's demo lock (-fs-mirror, the fixtures in mirror-fixtures/): with a new
// hash store, the same store warm, and no store. They see only a scratch
// environment (no CLI configuration, cache or home of the person building).
// A failed training leaves the bundle without a cache, which is slower, not
// wrong; the build says so and goes on (test/e2e/code-cache.test.ts fails
// when the cache is missing).
const loaded = runBundle(BUNDLE);
const scratch = await mkdtemp(join(tmpdir(), 'provkit-bundle-'));
try {
  const config = join(scratch, 'config');
  await cp(join(root, 'mirror-fixtures', 'config'), config, { recursive: true });
  const cliConfig = join(scratch, 'terraformrc');
  await writeFile(cliConfig, '');
  const sink = () => new Writable({ write: (_chunk, _enc, done) => done() });
  const args = [
    'lock',
    `-fs-mirror=${join(root, 'mirror-fixtures')}`,
    '-platform=linux_amd64',
    '-platform=darwin_arm64',
  ];
  for (const store of [join(scratch, 'store'), join(scratch, 'store'), 'off']) {
    await rm(join(config, '.terraform.lock.hcl'), { force: true });
    const env = {
      PATH: process.env['PATH'] ?? '',
      HOME: scratch,
      TF_CLI_CONFIG_FILE: cliConfig,
      PROVKIT_CACHE_DIR: join(scratch, 'cache'),
      PROVKIT_HASH_STORE: store,
    };
    const code = await loaded.exports.main(args, { stdout: sink(), stderr: sink(), env, cwd: config });
    if (code !== 0) throw new Error(`the training lock (PROVKIT_HASH_STORE=${store}) ended with exit code ${code}`);
  }
  await recordCache(BUNDLE, loaded);
  // The vendor files: no training run reaches them (a lock from a filesystem
  // mirror verifies no signature), so their caches hold what their top-level
  // code compiles; the rest compiles lazily when a registry is used.
  for (const file of vendorFiles) await recordCache(file, runBundle(file));
} catch (err) {
  console.warn(`scripts/bundle.mjs: no code cache recorded (the CLI starts slower): ${String(err)}`);
} finally {
  await rm(scratch, { recursive: true, force: true });
}

await writeFile(`${join(root, RECORD)}.tmp`, `${JSON.stringify(record, null, 1)}\n`);
await rename(`${join(root, RECORD)}.tmp`, join(root, RECORD));
