// The zip format's numbers (src/hashing/zip-format.ts) against PKWARE's
// APPNOTE.TXT (4.3.7, 4.3.12, 4.3.14-16, 4.3.9) and against an archive built
// by the test's own, independent writer (test/support/zip-writer.ts).
import { describe, expect, it } from 'vitest';

import * as Z from '../../src/hashing/zip-format.js';
import { buildZipWithLayout } from '../support/zip-writer.js';

const le32 = (n: number): string => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b.toString('latin1');
};

describe('zip format constants', () => {
  it('spell the APPNOTE signatures', () => {
    expect(le32(Z.SIG_LOCAL)).toBe('PK\x03\x04');
    expect(le32(Z.SIG_CENTRAL)).toBe('PK\x01\x02');
    expect(le32(Z.SIG_END)).toBe('PK\x05\x06');
    expect(le32(Z.SIG_END64)).toBe('PK\x06\x06');
    expect(le32(Z.SIG_LOC64)).toBe('PK\x06\x07');
    expect(le32(Z.SIG_DESCRIPTOR)).toBe('PK\x07\x08');
    expect([Z.LEN_LOCAL, Z.LEN_CENTRAL, Z.LEN_END, Z.LEN_LOC64, Z.LEN_END64]).toEqual([30, 46, 22, 20, 56]);
    expect([Z.FLAG_DATA_DESCRIPTOR, Z.FLAG_UTF8, Z.METHOD_STORE, Z.METHOD_DEFLATE, Z.EXTRA_ZIP64]).toEqual([
      1 << 3,
      1 << 11,
      0,
      8,
      1,
    ]);
  });

  it('find the records where an independently written archive has them (zip64 included)', async () => {
    const { bytes: zip, layout } = await buildZipWithLayout(
      [
        { name: 'a.txt', data: 'hello' },
        { name: 'b/', dir: true },
      ],
      { zip64: true },
    );
    const e = layout.entries[1]!;
    expect(zip.readUInt32LE(layout.entries[0]!.localHeaderOffset)).toBe(Z.SIG_LOCAL);
    expect(e.dataOffset - e.localHeaderOffset).toBe(Z.LEN_LOCAL + e.name.length);
    expect(zip.readUInt32LE(e.centralHeaderOffset)).toBe(Z.SIG_CENTRAL);
    const end = layout.endOfCentralDirectoryOffset;
    expect(zip.readUInt32LE(end)).toBe(Z.SIG_END);
    expect(end + Z.LEN_END).toBe(layout.size);
    expect(zip.readUInt32LE(end - Z.LEN_LOC64)).toBe(Z.SIG_LOC64);
    expect(zip.readUInt32LE(end - Z.LEN_LOC64 - Z.LEN_END64)).toBe(Z.SIG_END64);
    expect(zip.readUInt16LE(end + 10)).toBe(Z.MAX16);
  });
});
