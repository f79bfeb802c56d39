import { describe, expect, it } from 'vitest';

import { newProviderAddress, parsePlatform, parseVersion } from '../../src/addresses/index.js';
import { parseHash, type Disposition, type ZipPackageHashes } from '../../src/hashing/index.js';
import { deriveDispositions, lockChanges } from '../../src/installer/audit.js';
import { Locks, newProviderLock } from '../../src/lockfile/index.js';
import type { TrustedHash } from '../../src/sources/index.js';

const aws = newProviderAddress('registry.opentofu.org', 'hashicorp', 'aws');
const nul = newProviderAddress('registry.opentofu.org', 'hashicorp', 'null');
const h = (t: string) => parseHash(t);
const ZH_A = `zh:${'a'.repeat(64)}`;
const ZH_B = `zh:${'b'.repeat(64)}`;
const H1 = (c: string): string => `h1:${c.repeat(43)}=`;
const lock = (p = aws, v = '1.0.0', hashes: string[] = []) =>
  newProviderLock(p, parseVersion(v), undefined, hashes.map(h));

describe('what a lock-file change asks an audit to derive', () => {
  it('without a base, every hash of every provider', () => {
    const d = lockChanges(new Locks([lock(aws, '1.0.0', [ZH_A, H1('a')])]));
    expect(d.changes).toEqual([]);
    expect(d.audit.map((a) => a.hashes.map((x) => x.text))).toEqual([[H1('a'), ZH_A]]);
  });

  it('with a base: added hashes only; removed ones, version changes, added and removed providers listed', () => {
    const base = new Locks([lock(aws, '1.0.0', [ZH_A, H1('a')]), lock(nul, '3.0.0', [H1('n')])]);
    const same = lockChanges(base, base);
    expect(same).toEqual({ changes: [], audit: [] });

    const added = lockChanges(new Locks([lock(aws, '1.0.0', [ZH_A, H1('b')]), lock(nul, '3.0.0', [H1('n')])]), base);
    expect(added.audit.map((a) => a.hashes.map((x) => x.text))).toEqual([[H1('b')]]);
    expect(added.changes.map((c) => [c.kind, c.kind === 'hash-removed' ? c.hash.text : ''])).toEqual([
      ['hash-removed', H1('a')],
    ]);

    const bumped = lockChanges(new Locks([lock(aws, '1.1.0', [ZH_B])]), base);
    expect(bumped.changes.map((c) => c.kind)).toEqual(['version-changed', 'provider-removed']);
    expect(bumped.audit.map((a) => a.hashes.map((x) => x.text))).toEqual([[ZH_B]]);

    const fresh = lockChanges(
      new Locks([lock(aws, '1.0.0', [ZH_A, H1('a')]), lock(nul, '3.0.0', [H1('n')])]),
      new Locks(),
    );
    expect(fresh.changes.map((c) => c.kind)).toEqual(['provider-added', 'provider-added']);
    expect(fresh.audit).toHaveLength(2);
  });
});

describe('who vouches for each hash, from what the sources said and what was hashed here', () => {
  const linux = parsePlatform('linux_amd64');
  const darwin = parsePlatform('darwin_arm64');
  const signed: Disposition = { kind: 'signed', keyId: '34365D9472D7468F', keyExpires: null, url: 'https://r/SUMS' };
  const reported: Disposition = { kind: 'reported-by-registry', url: 'https://r/download' };
  const verified: Disposition = { kind: 'verified-locally', from: 'https://r/x.zip', keyId: '34365D9472D7468F' };
  const sums: TrustedHash[] = [
    { hash: h(ZH_A), trust: signed, file: 'terraform-provider-aws_1.0.0_linux_amd64.zip' },
    { hash: h(ZH_B), trust: signed, file: 'terraform-provider-aws_1.0.0_darwin_arm64.zip' },
    { hash: h(H1('d')), trust: reported, platform: darwin },
  ];
  const pkg = (zh: string, h1: string, h1Zip: string): ZipPackageHashes => ({
    zh: h(zh),
    h1: { ok: true, hash: h(h1) },
    h1Zip: { ok: true, hash: h(h1Zip) },
    path: '/x.zip',
    warnings: [],
    entryCount: 1,
    uncompressedBytes: 1,
  });
  const hashedLinux = [{ platform: linux, hashes: pkg(ZH_A, H1('a'), H1('z')), disposition: verified }];
  const platformOfFile = (f: string) => [linux, darwin].find((p) => f.endsWith(`_${p.toString()}.zip`));

  it('a signed zh: is signed and, once hashed, verified locally; its h1: forms are verified locally', () => {
    const [zh, h1, h1Zip] = deriveDispositions([h(ZH_A), h(H1('a')), h(H1('z'))], sums, hashedLinux, platformOfFile);
    expect(zh).toEqual({ hash: h(ZH_A), platform: linux, dispositions: [signed, verified] });
    expect(h1).toEqual({ hash: h(H1('a')), platform: linux, dispositions: [verified] });
    expect(h1Zip?.dispositions).toEqual([verified]);
  });

  it('a hash nobody named has no disposition and no platform', () => {
    expect(deriveDispositions([h(H1('q'))], sums, hashedLinux, platformOfFile)).toEqual([
      { hash: h(H1('q')), dispositions: [] },
    ]);
  });

  it('a reported h1: is reported until its platform is hashed to another h1:, then contradicted', () => {
    expect(deriveDispositions([h(H1('d'))], sums, hashedLinux, platformOfFile)).toEqual([
      { hash: h(H1('d')), platform: darwin, dispositions: [reported] },
    ]);
    const hashedDarwin = [{ platform: darwin, hashes: pkg(ZH_B, H1('e'), H1('f')), disposition: verified }];
    expect(deriveDispositions([h(H1('d'))], sums, hashedDarwin, platformOfFile)).toEqual([
      { hash: h(H1('d')), platform: darwin, dispositions: [reported], contradictedBy: H1('e') },
    ]);
  });
});
