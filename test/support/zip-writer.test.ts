// The zip writer is only useful if independent readers accept what it writes:
// every case is read back by Python's zipfile (an independent implementation
// that checks CRCs) and by yauzl (the library the benchmark baseline uses), and
// by Info-ZIP `unzip -t` where it is installed.
import { execFile, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import yauzl from 'yauzl';

import type { ZipEntrySpec } from './zip-writer.js';
import { DOS_DATE, DOS_TIME, buildZip, buildZipWithLayout, crc32, portableDeflate, writeZip } from './zip-writer.js';

const run = promisify(execFile);
const hasPython = spawnSync('python3', ['--version']).status === 0;
const hasUnzip = spawnSync('unzip', ['-v']).status === 0;

// Prints what zipfile sees: raw name bytes (re-encoded the way zipfile decoded
// them), header fields, the SHA-256 of the content as read (which checks the
// CRC) or the error, and testzip()'s verdict.
const PY_READER = `
import hashlib, json, sys, zipfile
out = {'entries': []}
with zipfile.ZipFile(sys.argv[1]) as z:
    out['comment'] = z.comment.hex()
    for i in z.infolist():
        raw = i.orig_filename.encode('utf-8' if i.flag_bits & 0x800 else 'cp437')
        e = {'name': raw.hex(), 'flags': i.flag_bits, 'method': i.compress_type, 'system': i.create_system,
             'extract': i.extract_version, 'attrs': i.external_attr, 'size': i.file_size,
             'csize': i.compress_size, 'crc': i.CRC, 'isDir': i.is_dir(), 'date': list(i.date_time)}
        try:
            h = hashlib.sha256()
            with z.open(i) as f:
                for chunk in iter(lambda: f.read(1 << 20), b''):
                    h.update(chunk)
            e['sha256'] = h.hexdigest()
        except Exception as ex:
            e['error'] = type(ex).__name__
        out['entries'].append(e)
    out['testzip'] = z.testzip()
print(json.dumps(out))
`;

interface PyEntry {
  name: string;
  flags: number;
  method: number;
  system: number;
  extract: number;
  attrs: number;
  size: number;
  csize: number;
  crc: number;
  isDir: boolean;
  date: number[];
  sha256?: string;
  error?: string;
}
interface PyResult {
  comment: string;
  entries: PyEntry[];
  testzip: string | null;
}

interface YauzlEntry {
  name: Buffer;
  flags: number;
  versionMadeBy: number;
  externalAttrs: number;
  crc32: number;
  size: number;
  sha256: string;
  computedCrc: number;
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'provkit-zip-writer-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

let counter = 0;
async function toFile(bytes: Buffer): Promise<string> {
  const path = join(dir, `z${counter++}.zip`);
  await writeFile(path, bytes);
  return path;
}

async function readWithPython(path: string): Promise<PyResult> {
  const { stdout } = await run('python3', ['-c', PY_READER, path], { maxBuffer: 64 << 20 });
  return JSON.parse(stdout) as PyResult;
}

async function readWithYauzl(path: string): Promise<YauzlEntry[]> {
  const zip = await yauzl.openPromise(path, { lazyEntries: false, decodeStrings: false, validateEntrySizes: true });
  try {
    const out: YauzlEntry[] = [];
    for await (const entry of zip.eachEntry()) {
      const hash = createHash('sha256');
      let computedCrc = 0;
      for await (const chunk of await zip.openReadStreamPromise(entry)) {
        hash.update(chunk as Buffer);
        computedCrc = crc32(chunk as Buffer, computedCrc);
      }
      out.push({
        name: entry.fileName as unknown as Buffer, // a Buffer with decodeStrings: false
        flags: entry.generalPurposeBitFlag,
        versionMadeBy: entry.versionMadeBy,
        externalAttrs: entry.externalFileAttributes,
        crc32: entry.crc32,
        size: entry.uncompressedSize,
        sha256: hash.digest('hex'),
        computedCrc,
      });
    }
    return out;
  } finally {
    zip.close();
  }
}

const sha256 = (b: Buffer | string): string => createHash('sha256').update(b).digest('hex');
const nameBytes = (n: string | Buffer): Buffer => (typeof n === 'string' ? Buffer.from(n, 'utf8') : n);
/** The content a spec describes (streamed data is collected; the tests keep it small). */
async function contentOf(spec: ZipEntrySpec): Promise<Buffer> {
  const data = spec.data ?? Buffer.alloc(0);
  if (typeof data === 'string') return Buffer.from(data);
  if (Buffer.isBuffer(data)) return data;
  const parts: Uint8Array[] = [];
  for await (const chunk of data()) parts.push(chunk);
  return Buffer.concat(parts);
}

/** Both readers list exactly the specs' names and contents, with matching CRCs. */
async function expectRoundTrip(
  path: string,
  specs: readonly ZipEntrySpec[],
): Promise<{ py: PyResult; yz: YauzlEntry[] }> {
  const want = await Promise.all(specs.map(async (s) => sha256(await contentOf(s))));
  const py = await readWithPython(path);
  expect(py.testzip).toBeNull();
  expect(py.entries.map((e) => e.name)).toEqual(specs.map((s) => nameBytes(s.name).toString('hex')));
  expect(py.entries.map((e) => e.sha256)).toEqual(want);

  const yz = await readWithYauzl(path);
  expect(yz.map((e) => e.name.toString('hex'))).toEqual(specs.map((s) => nameBytes(s.name).toString('hex')));
  expect(yz.map((e) => e.sha256)).toEqual(want);
  for (const e of yz) expect(e.computedCrc).toBe(e.crc32);
  if (hasUnzip) await run('unzip', ['-tq', path]);
  return { py, yz };
}

const text = Buffer.from('provider "demo" {\n  region = "eu-west-1"\n}\n'.repeat(200));

describe.skipIf(!hasPython)('zip-writer round trips (Python zipfile, yauzl, unzip -t)', () => {
  it('stored and deflated entries, with unix modes and a UTF-8 name', async () => {
    const specs: ZipEntrySpec[] = [
      { name: 'terraform-provider-demo_v1.0.0', data: randomBytes(5000), unixMode: 0o100755 },
      { name: 'stored.txt', data: 'stored as is\n', method: 0 },
      { name: 'deflate9.txt', data: text, level: 9 },
      { name: 'portable.txt', data: text, encoder: 'portable' },
      { name: 'empty', data: Buffer.alloc(0) },
      { name: 'link', data: 'stored.txt', unixMode: 0o120777 },
      { name: 'naïve.md', data: 'utf-8 name\n' },
    ];
    const { py, yz } = await expectRoundTrip(await toFile(await buildZip(specs, { comment: 'archive' })), specs);
    expect(py.comment).toBe(Buffer.from('archive').toString('hex'));
    expect(py.entries.map((e) => e.method)).toEqual([8, 0, 8, 8, 8, 8, 8]);
    expect(py.entries.map((e) => e.attrs >>> 16)).toEqual([
      0o100755, 0o100644, 0o100644, 0o100644, 0o100644, 0o120777, 0o100644,
    ]);
    expect(py.entries.every((e) => e.system === 3 && e.date.join() === '2024,1,2,12,0,0')).toBe(true);
    expect(py.entries.map((e) => e.flags)).toEqual([0, 0, 0, 0, 0, 0, 0x800]);
    expect(yz.every((e) => e.versionMadeBy === 0x0314)).toBe(true);
  });

  it('data descriptors with and without a signature', async () => {
    const specs: ZipEntrySpec[] = [
      { name: 'with-sig.txt', data: text, dataDescriptor: true },
      { name: 'no-sig.txt', data: text, dataDescriptor: 'nosig' },
      { name: 'stored-with-sig.txt', data: 'abc', method: 0, dataDescriptor: true },
      { name: 'streamed-no-sig.txt', data: chunksOf(text, 1000), dataDescriptor: 'nosig' },
    ];
    const { bytes, layout } = await buildZipWithLayout(specs);
    const { py } = await expectRoundTrip(await toFile(bytes), specs);
    expect(py.entries.every((e) => (e.flags & 0x08) !== 0)).toBe(true);
    layout.entries.forEach((e, i) => {
      // local header: CRC and both sizes zero
      expect(bytes.readUInt32LE(e.localHeaderOffset + 14)).toBe(0);
      expect(bytes.readBigUInt64LE(e.localHeaderOffset + 18)).toBe(0n);
      const after = e.dataOffset + e.compressedSize;
      const signed = specs[i]?.dataDescriptor === true;
      const d = signed ? after + 4 : after;
      if (signed) expect(bytes.readUInt32LE(after)).toBe(0x08074b50);
      expect([bytes.readUInt32LE(d), bytes.readUInt32LE(d + 4), bytes.readUInt32LE(d + 8)]).toEqual([
        e.crc32,
        e.compressedSize,
        e.uncompressedSize,
      ]);
    });
  });

  it('zip64 extras on entries and zip64 end records', async () => {
    const specs: ZipEntrySpec[] = [
      { name: 'z64.txt', data: text, zip64: true },
      { name: 'z64-dd.txt', data: text, zip64: true, dataDescriptor: true },
      { name: 'z64-streamed.txt', data: chunksOf(text, 4096), zip64: true, method: 0 },
      { name: 'plain.txt', data: 'plain' },
    ];
    const { bytes, layout } = await buildZipWithLayout(specs, { zip64: true });
    const { py, yz } = await expectRoundTrip(await toFile(bytes), specs);
    expect(py.entries.map((e) => e.extract)).toEqual([45, 45, 45, 20]);
    expect(yz.map((e) => e.size)).toEqual([text.length, text.length, text.length, 5]);
    // zip64 extra (0x0001) with the real sizes in the local header
    const first = layout.entries[0];
    if (!first) throw new Error('no entry');
    const extraAt = first.localHeaderOffset + 30 + first.name.length;
    expect(bytes.readUInt32LE(first.localHeaderOffset + 18)).toBe(0xffffffff);
    expect(bytes.readUInt16LE(extraAt)).toBe(0x0001);
    expect(bytes.readBigUInt64LE(extraAt + 4)).toBe(BigInt(text.length));
    // 24-byte descriptor (8-byte sizes) after the zip64 entry with a descriptor
    const second = layout.entries[1];
    if (!second) throw new Error('no entry');
    const d = second.dataOffset + second.compressedSize;
    expect(bytes.readUInt32LE(d)).toBe(0x08074b50);
    expect(bytes.readBigUInt64LE(d + 16)).toBe(BigInt(text.length));
    // classic record holds sentinels, the locator points at the zip64 record
    const eocd = layout.endOfCentralDirectoryOffset;
    expect(bytes.readUInt16LE(eocd + 10)).toBe(0xffff);
    expect(bytes.readUInt32LE(eocd + 16)).toBe(0xffffffff);
    expect(bytes.readUInt32LE(eocd - 20)).toBe(0x07064b50);
    const record = Number(bytes.readBigUInt64LE(eocd - 20 + 8));
    expect(bytes.readUInt32LE(record)).toBe(0x06064b50);
    expect(bytes.readBigUInt64LE(record + 32)).toBe(4n);
    expect(bytes.readBigUInt64LE(record + 48)).toBe(BigInt(layout.centralDirectoryOffset));
  });

  it('switches to zip64 end records by itself above 65534 entries', async () => {
    const specs: ZipEntrySpec[] = Array.from({ length: 65536 }, (_, i) => ({ name: `f${i}`, method: 0 }));
    const { bytes, layout } = await buildZipWithLayout(specs);
    expect(bytes.readUInt16LE(layout.endOfCentralDirectoryOffset + 10)).toBe(0xffff);
    const path = await toFile(bytes);
    const { stdout } = await run('python3', [
      '-c',
      'import sys,zipfile;print(len(zipfile.ZipFile(sys.argv[1]).infolist()))',
      path,
    ]);
    expect(stdout.trim()).toBe('65536');
    const zip = await yauzl.openPromise(path, { lazyEntries: true });
    expect(zip.entryCount).toBe(65536);
    zip.close();
  });

  it('directory entries, by name and by mode, for unix and FAT creators', async () => {
    const specs: ZipEntrySpec[] = [
      { name: 'a/', dir: true },
      { name: 'a/b/', dir: true, creator: 'fat' },
      { name: 'a/b/c.txt', data: 'c' },
      { name: 'd', externalAttrs: ((0o40755 << 16) | 0x10) >>> 0, method: 0 },
      { name: 'win.txt', data: 'w', creator: 'ntfs' },
    ];
    const { py } = await expectRoundTrip(await toFile(await buildZip(specs)), specs);
    expect(py.entries.map((e) => e.isDir)).toEqual([true, true, false, false, false]);
    expect(py.entries.map((e) => e.method)).toEqual([0, 0, 8, 0, 8]);
    expect(py.entries.map((e) => e.system)).toEqual([3, 0, 3, 3, 10]);
    expect(py.entries.map((e) => e.attrs.toString(16))).toEqual(['41ed0010', '10', '81a40000', '41ed0010', '20']);
  });

  it('raw non-UTF-8 names are stored byte for byte', async () => {
    const latin1 = Buffer.from('caf\xe9.txt', 'latin1');
    const invalid = Buffer.from([0x78, 0xff, 0xfe, 0x2f, 0x79]);
    const specs: ZipEntrySpec[] = [
      { name: latin1, data: 'latin-1' },
      { name: invalid, data: 'invalid utf-8' },
      { name: 'über.txt', data: 'utf-8 bytes, flag cleared', utf8Flag: false },
      { name: Buffer.from('größe.txt'), data: 'utf-8 bytes, flag set', utf8Flag: true },
    ];
    const { py, yz } = await expectRoundTrip(await toFile(await buildZip(specs)), specs);
    expect(py.entries.map((e) => e.flags)).toEqual([0, 0, 0, 0x800]);
    expect(yz[0]?.name.equals(latin1)).toBe(true);
    expect(yz[1]?.name.equals(invalid)).toBe(true);
  });

  it('streams a large entry to a file (deflate, stored, descriptor)', async () => {
    const mib = 1 << 20;
    const big = function* (): Generator<Buffer> {
      for (let i = 0; i < 64; i++) yield Buffer.alloc(mib, `chunk ${i} `); // fresh buffer each time
    };
    const path = join(dir, 'large.zip');
    const layout = await writeZip(path, [
      { name: 'big.bin', data: big },
      { name: 'big-stored.bin', data: big, method: 0 },
      { name: 'big-dd.bin', data: big, dataDescriptor: true, level: 1 },
    ]);
    const expected = createHash('sha256');
    for (const chunk of big()) expected.update(chunk);
    const want = expected.digest('hex');
    expect(layout.entries.map((e) => e.uncompressedSize)).toEqual([64 * mib, 64 * mib, 64 * mib]);
    const py = await readWithPython(path);
    expect(py.testzip).toBeNull();
    expect(py.entries.map((e) => [e.sha256, e.size])).toEqual([
      [want, 64 * mib],
      [want, 64 * mib],
      [want, 64 * mib],
    ]);
    const yz = await readWithYauzl(path);
    expect(yz.map((e) => e.sha256)).toEqual([want, want, want]);
    expect(yz.map((e) => e.computedCrc === e.crc32)).toEqual([true, true, true]);
  }, 60_000);
});

describe('zip-writer determinism', () => {
  const specs = (): ZipEntrySpec[] => [
    { name: 'a.txt', data: text },
    { name: 'b.txt', data: chunksOf(text, 777), dataDescriptor: true },
    { name: 'c.txt', data: text, encoder: 'portable', zip64: true },
  ];

  it('writes identical bytes every time, to memory and to a file', async () => {
    const once = await buildZip(specs(), { comment: 'c', prefixJunk: Buffer.from('#!/bin/sh\n') });
    const twice = await buildZip(specs(), { comment: 'c', prefixJunk: Buffer.from('#!/bin/sh\n') });
    const path = join(dir, 'same.zip');
    await writeZip(path, specs(), { comment: 'c', prefixJunk: Buffer.from('#!/bin/sh\n') });
    expect(twice.equals(once)).toBe(true);
    expect((await readFile(path)).equals(once)).toBe(true);
  });

  it('stamps the fixed DOS timestamp', async () => {
    const { bytes, layout } = await buildZipWithLayout([{ name: 'x', data: 'x' }]);
    const local = layout.entries[0]?.localHeaderOffset ?? -1;
    expect([bytes.readUInt16LE(local + 10), bytes.readUInt16LE(local + 12)]).toEqual([DOS_TIME, DOS_DATE]);
  });
});

describe('zip-writer forgeries', () => {
  it('writes a forged CRC everywhere it is stored', async () => {
    const { bytes, layout } = await buildZipWithLayout([{ name: 'bad', data: 'bad crc', crcOverride: 0x12345678 }]);
    const e = layout.entries[0];
    if (!e) throw new Error('no entry');
    expect(e.crc32).toBe(crc32(Buffer.from('bad crc')));
    expect(bytes.readUInt32LE(e.localHeaderOffset + 14)).toBe(0x12345678);
    expect(bytes.readUInt32LE(e.centralHeaderOffset + 16)).toBe(0x12345678);
    if (hasPython) {
      const py = await readWithPython(await toFile(bytes));
      expect(py.testzip).toBe('bad');
      expect(py.entries[0]?.error).toBe('BadZipFile');
    }
  });

  it('writes a wrong uncompressed size that size-checking readers refuse', async () => {
    const path = await toFile(await buildZip([{ name: 'short', data: 'twelve bytes', sizeOverride: 5 }]));
    await expect(readWithYauzl(path)).rejects.toThrow(/too many bytes/);
  });

  it('adds junk around the archive and lies about the entry count', async () => {
    const prefix = Buffer.from('MZ self-extractor stub');
    const suffix = Buffer.from('trailing junk');
    const { bytes, layout } = await buildZipWithLayout(
      [
        { name: 'x', data: 'x' },
        { name: 'y', data: 'y' },
      ],
      {
        prefixJunk: prefix,
        suffixJunk: suffix,
        entryCountOverride: 7,
      },
    );
    expect(bytes.subarray(0, prefix.length).equals(prefix)).toBe(true);
    expect(bytes.subarray(-suffix.length).equals(suffix)).toBe(true);
    expect(layout.entries[0]?.localHeaderOffset).toBe(prefix.length);
    expect(bytes.readUInt16LE(layout.endOfCentralDirectoryOffset + 8)).toBe(7);
    expect(bytes.readUInt16LE(layout.endOfCentralDirectoryOffset + 10)).toBe(7);
    expect(bytes.readUInt32LE(layout.endOfCentralDirectoryOffset + 16)).toBe(layout.centralDirectoryOffset);
  });

  it('refuses only what it cannot encode', async () => {
    await expect(buildZip([{ name: 'p', data: chunksOf(text, 10), encoder: 'portable' }])).rejects.toThrow(/portable/);
  });
});

describe('portableDeflate', () => {
  const cases: Record<string, Buffer> = {
    empty: Buffer.alloc(0),
    'one byte': Buffer.from('a'),
    'long run (matches of 258 at distance 1)': Buffer.alloc(100_000, 0x41),
    text,
    // repeats at the far edge of the 32 KiB window and just beyond it
    'window edge': (() => {
      const r = randomBytes(32_768);
      return Buffer.concat([r, r.subarray(0, 1000), randomBytes(1), r.subarray(0, 1000)]);
    })(),
    'random (stored blocks)': randomBytes(150_000),
    'every byte value': Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7) & 0xff)),
  };
  for (const [label, input] of Object.entries(cases)) {
    it(`round-trips through zlib: ${label}`, () => {
      const out = portableDeflate(input);
      expect(zlib.inflateRawSync(out).equals(input)).toBe(true);
      expect(portableDeflate(input).equals(out)).toBe(true);
    });
  }

  it('compresses text and never grows data by more than the stored-block overhead', () => {
    expect(portableDeflate(text).length).toBeLessThan(text.length / 10);
    const r = randomBytes(150_000);
    expect(portableDeflate(r).length).toBe(r.length + 5 * 3);
    expect(portableDeflate(Buffer.alloc(0))).toEqual(Buffer.from([0x03, 0x00])); // what zlib emits too
  });
});

/** A data function yielding `buf` in fresh slices of `size` bytes. */
function chunksOf(buf: Buffer, size: number): () => Generator<Buffer> {
  return function* () {
    for (let i = 0; i < buf.length; i += size) yield Buffer.from(buf.subarray(i, i + size));
  };
}
