// The Node floor of the tiny lock (issue 13: tiny lock ≤ 1.6 × `node -e 0`;
// bench/PROFILE.md "Stop 25"): the least a Node program does for the README's
// demo lock, so that bench/commands.ts can say whether the target is a limit
// of Node or provkit's own cost.
//
// What it does: loads what hashing needs (node:crypto, node:zlib,
// node:fs/promises), reads the configuration file, lists each package's
// directory, reads each archive whole and computes its zh: and h1: (each
// entry inflated and hashed, Go's dirhash Hash1 over the names in byte order),
// writes the lock lines to LOCK_FILE atomically (temporary file, fsync,
// rename), and prints one line per package to stdout. Each h1: and zh: is
// printed, so that test/bench/tiny-floor.test.ts can check them against the
// reference's (mirror-fixtures/hashes.json).
//
// What it leaves out (provkit does it): HCL parsing, version selection, the
// lock file's format, the checks of the zip's structure, events and the UI.
//
// CommonJS, as bin/provkit.js, so that Node's ES-module loader is not set up
// (8–10 ms here).
//
// Usage: node bench/tiny-floor.cjs CONFIG_FILE LOCK_FILE ZIP...
'use strict';

const { createHash } = require('node:crypto');
const { open, readdir, readFile, rename } = require('node:fs/promises');
const { basename, dirname } = require('node:path');
const { inflateRawSync } = require('node:zlib');

const EOCD = Buffer.from([0x50, 0x4b, 0x05, 0x06]);

/**
 * zh: and h1: of one archive read whole (no ZIP64, no encryption: the demo's).
 * @param {Buffer} zip
 */
function hashes(zip) {
  const zh = createHash('sha256').update(zip).digest('hex');
  const eocd = zip.lastIndexOf(EOCD);
  if (eocd < 0) throw new Error('not a zip');
  const count = zip.readUInt16LE(eocd + 10);
  /** @type {Array<[string, string]>} */
  const files = [];
  for (let i = 0, cd = zip.readUInt32LE(eocd + 16); i < count; i++) {
    const method = zip.readUInt16LE(cd + 10);
    const csize = zip.readUInt32LE(cd + 20);
    const nameLen = zip.readUInt16LE(cd + 28);
    const skip = nameLen + zip.readUInt16LE(cd + 30) + zip.readUInt16LE(cd + 32);
    const local = zip.readUInt32LE(cd + 42);
    const name = zip.toString('utf8', cd + 46, cd + 46 + nameLen);
    cd += 46 + skip;
    if (name.endsWith('/')) continue;
    const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    const data = zip.subarray(start, start + csize);
    const body = method === 8 ? inflateRawSync(data) : data;
    files.push([name, createHash('sha256').update(body).digest('hex')]);
  }
  files.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const summary = files.map(([name, sum]) => `${sum}  ${name}\n`).join('');
  return { zh: `zh:${zh}`, h1: `h1:${createHash('sha256').update(summary).digest('base64')}` };
}

async function main() {
  const [config, lockFile, ...zips] = process.argv.slice(2);
  if (!config || !lockFile || zips.length === 0) {
    process.stderr.write('usage: node bench/tiny-floor.cjs CONFIG_FILE LOCK_FILE ZIP...\n');
    return 2;
  }
  await readFile(config, 'utf8');
  const listed = new Set(zips.map((z) => dirname(z)));
  await Promise.all([...listed].map((d) => readdir(d)));
  const lines = await Promise.all(
    zips.map(async (z) => {
      const h = hashes(await readFile(z));
      process.stdout.write(`${basename(z)} ${h.h1} ${h.zh}\n`);
      return `${basename(z)} = ["${h.h1}", "${h.zh}"]`;
    }),
  );
  const tmp = `${lockFile}.${process.pid}.tmp`;
  const fh = await open(tmp, 'w');
  try {
    await fh.writeFile(`${lines.sort().join('\n')}\n`);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, lockFile);
  return 0;
}

main().then(
  (code) => (process.exitCode = code),
  (/** @type {unknown} */ err) => {
    process.stderr.write(`tiny-floor: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
