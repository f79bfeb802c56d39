// The dispositions `verify` gives the hashes it checks (installer/verify-provenance.ts,
// docs/provenance.md "What `verify` says"): pure rules, values in and out.
import { describe, expect, it } from 'vitest';

import { parsePlatform } from '../../src/addresses/index.js';
import { parseHash, type StoredDisposition, type StoredHashes } from '../../src/hashing/index.js';
import {
  storedEntryOfDirectory,
  unvouchedLockHashes,
  verifiedPackageHashes,
} from '../../src/installer/verify-provenance.js';

const linux = parsePlatform('linux_amd64');
const zh = parseHash(`zh:${'a'.repeat(64)}`);
const h1 = parseHash(`h1:${'B'.repeat(43)}=`);
const h1Zip = parseHash(`h1:${'C'.repeat(43)}=`);
const PATH = '/m/terraform-provider-demo_1.0.0_linux_amd64.zip';
const SIGNED: StoredDisposition = {
  kind: 'signed',
  keyId: '369B4E05EAAB5FA6',
  keyExpires: null,
  url: 'https://r/SHA256SUMS',
  at: '2026-11-28T10:00:00.000Z',
};

const kinds = (hs: ReturnType<typeof verifiedPackageHashes>): Record<string, string[]> =>
  Object.fromEntries(hs.map((h) => [h.hash.text, h.dispositions.map((d) => d.kind)]));

describe('the dispositions of a package verify hashed', () => {
  it('bytes nobody signed: every computed hash is computed-locally from the path', () => {
    const hs = verifiedPackageHashes({ platform: linux, from: PATH, computed: [zh, h1, h1Zip], zh });
    expect(hs.map((h) => h.platform)).toEqual([linux, linux, linux]);
    for (const h of hs) expect(h.dispositions).toEqual([{ kind: 'computed-locally', from: PATH }]);
  });

  it('a zh: the hash store records as signed: the zh: is signed as recorded, every computed hash verified-locally with the key', () => {
    const hs = verifiedPackageHashes({ platform: linux, from: PATH, computed: [zh, h1], zh, stored: [SIGNED] });
    const local = { kind: 'verified-locally', from: PATH, keyId: '369B4E05EAAB5FA6' };
    expect(hs.find((h) => h.hash.text === zh.text)!.dispositions).toEqual([
      { kind: 'signed', keyId: '369B4E05EAAB5FA6', keyExpires: null, url: 'https://r/SHA256SUMS' },
      local,
    ]);
    expect(hs.find((h) => h.hash.text === h1.text)!.dispositions).toEqual([local]);
  });

  it('a store entry that records no signature (computed here before) does not make the bytes verified', () => {
    const computed: StoredDisposition = { kind: 'computed-locally', from: '/elsewhere', at: SIGNED.at };
    const hs = verifiedPackageHashes({ platform: linux, from: PATH, computed: [zh], zh, stored: [computed] });
    expect(kinds(hs)).toEqual({ [zh.text]: ['computed-locally'] });
  });

  it("the mirror's listed hashes are reported-by-mirror, beside what the bytes say of the same hash", () => {
    const other = parseHash('sha512:xyz');
    const hs = verifiedPackageHashes({
      platform: linux,
      from: PATH,
      computed: [zh, h1],
      zh,
      reported: [zh, other].map((hash) => ({ hash, trust: { kind: 'reported-by-mirror' as const, mirror: '/m' } })),
    });
    expect(kinds(hs)).toEqual({
      [h1.text]: ['computed-locally'],
      [other.text]: ['reported-by-mirror'],
      [zh.text]: ['computed-locally', 'reported-by-mirror'],
    });
  });
});

describe('lock hashes nobody vouches for', () => {
  const pasted = parseHash(`h1:${'D'.repeat(43)}=`);
  const otherZh = parseHash(`zh:${'e'.repeat(64)}`);
  const checked = [verifiedPackageHashes({ platform: linux, from: PATH, computed: [zh, h1], zh })];

  it('a hash no checked package has and the store does not know is listed, sorted, once', () => {
    expect(
      unvouchedLockHashes(
        [pasted, h1, otherZh, pasted],
        checked.map((hashes) => ({ hashes })),
      ).map((h) => h.text),
    ).toEqual([pasted.text, otherZh.text].sort());
  });

  it('a store entry that records who vouched for a lock zh: vouches for it and its h1: forms', () => {
    const entry: StoredHashes = {
      hashes: {
        path: '/store',
        zh: otherZh,
        h1: { ok: true, hash: pasted },
        h1Zip: { ok: true, hash: pasted },
        warnings: [],
        entryCount: 1,
        uncompressedBytes: 1,
      },
      dispositions: [SIGNED],
    };
    expect(unvouchedLockHashes([pasted, otherZh], [], [entry])).toEqual([]);
    // An entry written before dispositions were kept vouches for nothing.
    expect(unvouchedLockHashes([pasted, otherZh], [], [{ ...entry, dispositions: [] }])).toHaveLength(2);
  });
});

describe("a directory's files, known to the hash store by an archive of the lock", () => {
  const entry = (zhHex: string, extracted: string, zipForm: string): StoredHashes => ({
    hashes: {
      path: '/store',
      zh: parseHash(`zh:${zhHex.repeat(64)}`),
      h1: { ok: true, hash: parseHash(`h1:${extracted.repeat(43)}=`) },
      h1Zip: { ok: true, hash: parseHash(`h1:${zipForm.repeat(43)}=`) },
      warnings: [],
      entryCount: 1,
      uncompressedBytes: 1,
    },
    dispositions: [SIGNED],
  });
  const darwin = entry('d', 'E', 'F');
  const linuxEntry = entry('a', 'B', 'C');

  it("is the entry one of whose h1: forms is the directory's, whichever form", () => {
    expect(storedEntryOfDirectory(h1, [darwin, undefined, linuxEntry])).toBe(linuxEntry);
    expect(storedEntryOfDirectory(h1Zip, [darwin, linuxEntry])).toBe(linuxEntry);
  });

  it('is none when no entry has its h1: (the zh: of another package proves nothing about it)', () => {
    expect(storedEntryOfDirectory(parseHash(`h1:${'Z'.repeat(43)}=`), [darwin, linuxEntry])).toBeUndefined();
    expect(storedEntryOfDirectory(h1, [])).toBeUndefined();
  });

  it("then vouches for the directory: its h1: verified-locally with the key, the entry's zh: signed as recorded", () => {
    const found = storedEntryOfDirectory(h1, [linuxEntry])!;
    const hs = verifiedPackageHashes({
      platform: linux,
      from: '/p/.terraform/providers/h/acme/demo/1.0.0/linux_amd64',
      computed: [h1],
      zh: found.hashes.zh,
      stored: found.dispositions,
    });
    expect(kinds(hs)).toEqual({ [h1.text]: ['verified-locally'], [zh.text]: ['signed'] });
  });
});
