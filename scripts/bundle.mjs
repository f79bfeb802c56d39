// Bundles the compiled CLI (dist/) into dist/bundle/: one module for the CLI
// and one for the hash worker, plus chunks shared between them and chunks
// loaded on demand (openpgp.js, https-proxy-agent, each command).
//
// Why: start-up. Node resolves, reads and compiles every ES module
// separately; a mirror run that finds everything in place loaded ~110 files
// (dist/ and node_modules) and spent a third of its 0.4 s doing it. Bundled,
// the same run is ~75 ms faster (issue #5: the incremental mirror run must be
// 20 × faster than the first). bin/provkit.js uses the bundle when it exists
// and dist/cli/main.js otherwise; the library (dist/index.js) is not bundled.
//
// esbuild is already in the tree (tsx and vite use it); it is a devDependency
// here so that `npm ci` keeps it.
import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

import { build } from 'esbuild';

const root = fileURLToPath(new URL('../', import.meta.url));
const outdir = `${root}dist/bundle`;
await rm(outdir, { recursive: true, force: true });
await build({
  absWorkingDir: root,
  entryPoints: ['dist/cli/main.js', 'dist/hashing/worker.js'],
  // Flat names: the hash pool finds its worker as ./worker.js beside the module it is in.
  entryNames: '[name]',
  chunkNames: 'chunk-[hash]',
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // Bundled CommonJS packages call require(); give ES modules one.
  banner: {
    js: "import { createRequire as __provkitCreateRequire } from 'node:module'; const require = __provkitCreateRequire(import.meta.url);",
  },
  // Minified: fewer bytes for V8 to scan and compile at every start. The tiny
  // fs-mirror lock measured 237 ms against 252 ms unminified (medians of 9,
  // interleaved; `node -e 0` 120 ms; issue 13, bench/PROFILE.md "Start-up").
  // Names are not kept: nothing prints a function's or class's name
  // (ProvkitError sets its own; stack traces are never shown).
  minify: true,
  logLevel: 'warning',
});
