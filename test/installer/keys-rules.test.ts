import { describe, expect, it } from 'vitest';

import { parseVersion } from '../../src/addresses/index.js';
import { keyFindings, type KeyVersion } from '../../src/installer/keys.js';

const A = 'AAAAAAAAAAAAAAAA';
const B = 'BBBBBBBBBBBBBBBB';
const signed = (v: string, keyId: string, expired = false, locked = false): KeyVersion => ({
  version: parseVersion(v),
  locked,
  signature: { kind: 'signed', keyId, fingerprint: `${'F'.repeat(24)}${keyId}`, keyExpires: null, expired },
});
const rule = (trustedKeys?: string[], allowExpiredKeys = false) => ({
  trustedKeys,
  allowExpiredKeys,
  from: 'provkit.hcl',
});
const flagged = (r: ReturnType<typeof keyFindings>): string[] =>
  r.findings.filter((f) => f.flagged).map((f) => `${f.code} ${f.versions.join(',')}`);

describe('which signing keys are flagged', () => {
  it('one key for every version, none pinned: nothing', () => {
    const r = keyFindings([signed('1.0.0', A), signed('1.1.0', A, false, true)], rule());
    expect(r.keys.map((k) => [k.keyId, k.versions.map(String), k.trusted])).toEqual([
      [A, ['1.0.0', '1.1.0'], undefined],
    ]);
    expect(r.findings).toEqual([]);
  });

  it('a key change between consecutive versions is flagged each time it happens, at the version that changed', () => {
    const r = keyFindings([signed('1.0.0', A), signed('1.1.0', B), signed('1.2.0', A)], rule());
    expect(flagged(r)).toEqual(['KEY_CHANGED 1.0.0,1.1.0', 'KEY_CHANGED 1.1.0,1.2.0']);
    expect(r.findings[0]!.message).toBe(`1.1.0 is signed by key ${B}, 1.0.0 by key ${A}`);
  });

  it('a rotation between two pinned keys is noted, not flagged; an unpinned key is flagged', () => {
    const both = keyFindings([signed('1.0.0', A), signed('1.1.0', B)], rule([A, B]));
    expect(both.findings.map((f) => [f.code, f.flagged])).toEqual([['KEY_CHANGED', false]]);
    const one = keyFindings([signed('1.0.0', A), signed('1.1.0', B)], rule([A]));
    expect(flagged(one)).toEqual(['KEY_CHANGED 1.0.0,1.1.0', 'KEY_NOT_TRUSTED 1.1.0']);
    expect(one.keys.map((k) => k.trusted)).toEqual([true, false]);
  });

  it('an expired key is flagged unless the policy allows expired keys', () => {
    expect(flagged(keyFindings([signed('1.0.0', A, true)], rule()))).toEqual(['KEY_EXPIRED 1.0.0']);
    expect(flagged(keyFindings([signed('1.0.0', A, true)], rule(undefined, true)))).toEqual([]);
  });

  it('a version no key vouches for is flagged with the reason; the key change is judged across it', () => {
    const r = keyFindings(
      [
        signed('1.0.0', A),
        {
          version: parseVersion('1.1.0'),
          locked: true,
          signature: { kind: 'not-signed', reason: 'signature-skipped', detail: 'signature check skipped: no keys' },
        },
        signed('1.2.0', A),
      ],
      rule(),
    );
    expect(flagged(r)).toEqual(['NOT_SIGNED 1.1.0']);
    expect(r.findings[0]!.message).toBe('no key vouches for 1.1.0 (signature check skipped: no keys)');
    expect(r.findings[0]!.reasons).toEqual(['signature-skipped']);
  });
});
