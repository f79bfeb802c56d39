// SHA256SUMS readers (docs/reference.md §10 item 139) and TF_TOKEN_ decoding.
import { describe, expect, it } from 'vitest';

import { hostnameForComparison } from '../../src/addresses/index.js';
import {
  acceptableHashes,
  chainCredentials,
  credentialsFromEnv,
  findChecksum,
  goFields,
  staticCredentials,
} from '../../src/sources/index.js';

const A = 'a'.repeat(64);
const B = 'B'.repeat(64);

describe('findChecksum', () => {
  const doc = `${A}  x.zip\n${B}\ty.zip\r\n${A}  *z.zip\n`;
  it('finds the first line naming the file, lowering the hex', () => {
    expect(findChecksum(doc, 'x.zip', A)).toEqual({ ok: true, sha256: A });
    expect(findChecksum(doc, 'y.zip', 'b'.repeat(64))).toEqual({ ok: true, sha256: 'b'.repeat(64) });
  });
  it('does not match a binary-mode *name, and reports the reference texts', () => {
    expect(findChecksum(doc, 'z.zip', A)).toEqual({
      ok: false,
      error: 'checksum list has no SHA-256 hash for "z.zip"',
    });
    expect(findChecksum(doc, 'x.zip', 'c'.repeat(64))).toEqual({
      ok: false,
      error: `checksum list has unexpected SHA-256 hash ${A} (expected ${'c'.repeat(64)})`,
    });
    expect(findChecksum('abc  x.zip', 'x.zip', A)).toEqual({
      ok: false,
      error: 'checksum list has invalid SHA256 hash "abc": encoding/hex: odd length hex string',
    });
  });
});

describe('acceptableHashes', () => {
  it('takes every line, any white space, upper case lowered', () => {
    const r = acceptableHashes(`${A}  x.zip\r\n${B}\t \ty_manifest.json\n${A} z`);
    expect(r.hashes.map((h) => h.text)).toEqual([`zh:${A}`, `zh:${'b'.repeat(64)}`, `zh:${A}`]);
    expect(r.malformed).toBeUndefined();
  });
  it('gives nothing for a one-field line or a non-hash first field', () => {
    expect(acceptableHashes(`${A}  x.zip\n${A}\n`)).toMatchObject({
      hashes: [],
      malformed: 'line 2 has only one field',
    });
    expect(acceptableHashes(`${A}  x.zip\nxyz  y.zip\n`)).toMatchObject({
      hashes: [],
      malformed: 'line 2 does not start with a SHA-256 hash',
    });
  });
  it('skips blank lines instead of crashing, and says where they were', () => {
    const r = acceptableHashes(`${A}  x.zip\n\n   \n${A}  y.zip\n\n`);
    expect(r.hashes).toHaveLength(2);
    expect(r.blankLines).toEqual([2, 3, 5]);
  });
  it('splits like Go bytes.Fields', () => {
    expect(goFields(' a\u00a0b\u0085c\u3000d  ')).toEqual(['a', 'b', 'c', 'd']);
    expect(goFields('a\ufeffb')).toEqual(['a\ufeffb']);
  });
});

describe('credentials', () => {
  it('decodes TF_TOKEN_ names as the reference (__ → -, _ → ., Unicode or punycode)', () => {
    const lookup = credentialsFromEnv({
      TF_TOKEN_app_terraform_io: 't1',
      TF_TOKEN_my__registry_example_com: 't2',
      TF_TOKEN_xn____caf__dma_example: 't3',
      'TF_TOKEN_localhost:8443': 't4',
      TF_TOKEN_localhost_8443: 'not a port',
      TF_TOKEN_empty_example: '',
      OTHER: 'x',
    });
    expect(lookup(hostnameForComparison('app.terraform.io'))).toBe('t1');
    expect(lookup(hostnameForComparison('my-registry.example.com'))).toBe('t2');
    expect(lookup(hostnameForComparison('café.example'))).toBe('t3');
    expect(lookup(hostnameForComparison('localhost:8443'))).toBe('t4');
    expect(lookup(hostnameForComparison('empty.example'))).toBeUndefined();
  });
  it('chains lookups, first wins', () => {
    const host = hostnameForComparison('Registry.Example.COM');
    const chain = chainCredentials(
      credentialsFromEnv({ TF_TOKEN_registry_example_com: 'env' }),
      staticCredentials({ 'registry.example.com': 'config' }),
    );
    expect(chain(host)).toBe('env');
    expect(chainCredentials(staticCredentials({ 'registry.example.com:443': 'config' }))(host)).toBe('config');
  });
});
