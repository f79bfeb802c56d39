// npm's pack hooks (package.json "prepack" and "postpack"): the package ships
// the build of this checkout and a package.json without "scripts".
//
//   node scripts/prepack.mjs            prepack: dist/ built if it is not this checkout's build
//                                       (scripts/build.mjs --if-stale), then package.json saved
//                                       to .package.json.orig and written without "scripts"
//   node scripts/prepack.mjs --restore  postpack: package.json put back, byte for byte
//
// Why no scripts in the package: every one of them needs the clone (src/, the
// dev dependencies), and "prepare", which builds dist/ when a clone runs
// `npm ci` (README "Quick start"), would otherwise reach every consumer's
// package.json, where package managers and scanners take it for an install
// script. npm tars package.json as it is on disk after "prepack" (npm 11:
// `npm pack` re-reads the manifest after prepack; test/package/consumer.test.ts
// checks the packed file). The full manifest comes back in "postpack"; a pack
// that died in between leaves .package.json.orig, which the next pack (or
// `node scripts/prepack.mjs --restore`) puts back first.
//
// `npm publish` sends the registry the manifest it reads after postpack, so
// publish the tarball (`npm pack`, then `npm publish provkit-VERSION.tgz`),
// whose package.json is the stripped one (CONTRIBUTING.md "Releasing").
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { build, staleReason } from './build.mjs';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const MANIFEST = join(ROOT, 'package.json');
const SAVED = join(ROOT, '.package.json.orig');

function restore() {
  if (existsSync(SAVED)) renameSync(SAVED, MANIFEST);
}

if (process.argv[2] === '--restore') {
  restore();
} else if (process.argv[2] === undefined) {
  restore();
  const why = staleReason();
  if (why === undefined) console.error('prepack: dist/ is the build of this checkout');
  else {
    console.error(`prepack: ${why}; building`);
    build();
  }
  const text = readFileSync(MANIFEST, 'utf8');
  const manifest = JSON.parse(text);
  delete manifest.scripts;
  writeFileSync(SAVED, text);
  writeFileSync(MANIFEST, `${JSON.stringify(manifest, null, 2)}\n`);
} else {
  console.error('usage: node scripts/prepack.mjs [--restore]');
  process.exit(2);
}
