/**
 * The straightforward way to hash provider packages in Node, as a benchmark
 * contender and a cross-check: one zip after another, yauzl with its defaults,
 * each entry's inflated stream into SHA-256, the zip file itself into SHA-256.
 *
 *   tsx bench/baseline-yauzl.ts ZIP...     prints "<zip> zh:<hex> h1:<base64>" per zip
 *
 * (the output format of the native floor `zhh1`). h1: is Go dirhash Hash1 over
 * the regular files: SHA-256 of the lines "<hex sha256>  <name>\n" sorted by
 * name bytes, base64. Directory entries are skipped, as they are once a package
 * is extracted. Names are used raw (no cleaning, duplicates not collapsed, CRCs
 * not checked): right for well-formed packages like the benchmark's and the
 * demo mirror's, not a reference for hostile ones (that is test/fixtures/conformance).
 *
 * Self-contained on purpose (node built-ins and yauzl only): bench/run.ts
 * transpiles this one file and runs it with plain `node`, so the contender
 * pays no TypeScript loader at start-up.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { pathToFileURL } from 'node:url';

import yauzl from 'yauzl';

export interface PackageHashes {
  /** `zh:` + hex SHA-256 of the zip file. */
  zh: string;
  /** `h1:` + base64 dirhash Hash1 of the files in the zip. */
  h1: string;
}

/** Hashes one package, reading it twice: once whole for zh:, once through yauzl for h1:. */
export async function hashPackage(path: string): Promise<PackageHashes> {
  const zh = createHash('sha256');
  await pipeline(createReadStream(path), zh);

  const zip = await yauzl.openPromise(path, { decodeStrings: false, validateEntrySizes: true, autoClose: false });
  const files: { name: Buffer; hex: string }[] = [];
  try {
    for await (const entry of zip.eachEntry()) {
      const name = entry.fileName as unknown as Buffer; // raw bytes with decodeStrings: false
      if (name.at(-1) === 0x2f) continue; // directory entry: '/'
      const sha = createHash('sha256');
      await pipeline(await zip.openReadStreamPromise(entry), sha);
      files.push({ name, hex: sha.digest('hex') });
    }
  } finally {
    zip.close();
  }

  files.sort((a, b) => Buffer.compare(a.name, b.name));
  const summary = createHash('sha256');
  for (const f of files) summary.update(Buffer.concat([Buffer.from(`${f.hex}  `), f.name, Buffer.from('\n')]));
  return { zh: `zh:${zh.digest('hex')}`, h1: `h1:${summary.digest('base64')}` };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const path of process.argv.slice(2)) {
    const { zh, h1 } = await hashPackage(path);
    process.stdout.write(`${path} ${zh} ${h1}\n`);
  }
}
