import { describe, expect, it } from 'vitest';

import { newProviderAddress } from '../../src/addresses/index.js';
import { auditRuleFor, judgeHash, keyIdOf, parsePolicyFile } from '../../src/config/index.js';
import type { Disposition } from '../../src/hashing/index.js';
import { diagLines } from './helpers.js';

const MAIN = '34365D9472D7468F';
const OTHER = '0123456789ABCDEF';
const aws = newProviderAddress('registry.opentofu.org', 'hashicorp', 'aws');
const corp = newProviderAddress('corp.example.com', 'team', 'thing');

const POLICY = `audit {
  trusted_keys = ["${MAIN}"]
  provider "corp.example.com/*/*" {
    accept         = ["computed-locally"]
    allow_reported = true
  }
}
`;

describe('the audit block of provkit.hcl', () => {
  it('needs no platforms, keeps defaults and provider blocks, and normalises key IDs', () => {
    const r = parsePolicyFile(
      `audit {\n  trusted_keys = ["0x${MAIN.toLowerCase()}", "AAAA BBBB CCCC DDDD EEEE FFFF ${OTHER.slice(0, 4)} ${OTHER.slice(4, 8)} ${OTHER.slice(8, 12)} ${OTHER.slice(12)}"]\n}\n`,
      'provkit.hcl',
    );
    expect(r.diagnostics).toEqual([]);
    expect(r.policy).toBeUndefined();
    expect(r.audit?.defaults.trustedKeys).toEqual([MAIN, OTHER]);
  });

  it('sits beside platforms', () => {
    const r = parsePolicyFile(`platforms = ["linux_amd64"]\n${POLICY}`, 'provkit.hcl');
    expect(r.diagnostics).toEqual([]);
    expect(r.policy?.platforms.map(String)).toEqual(['linux_amd64']);
    expect(r.audit?.providers.map((p) => p.pattern)).toEqual(['corp.example.com/*/*']);
  });

  it.each([
    ['audit {\n  accept = ["signed", "trusted"]\n}\n', 'error provkit.hcl:2:23: Invalid disposition'],
    ['audit {\n  trusted_keys = ["ABC"]\n}\n', 'error provkit.hcl:2:19: Invalid key ID'],
    ['audit {\n  allow_reported = "yes"\n}\n', 'error provkit.hcl:2:20: Invalid value'],
    ['audit {\n  provider "*/aws" {\n  }\n}\n', 'error provkit.hcl:2:12: Invalid provider pattern'],
    ['audit {\n  keys = []\n}\n', 'error provkit.hcl:2:3: Unsupported argument'],
    ['audit {\n}\naudit {\n}\n', 'error provkit.hcl:3:1: Duplicate audit block'],
  ])('%j is refused where it goes wrong', (text, expected) => {
    const r = parsePolicyFile(text, 'provkit.hcl');
    expect(diagLines(r.diagnostics)[0]).toBe(expected);
    expect(r.audit).toBeUndefined();
  });
});

describe('judging a hash by its dispositions', () => {
  const policy = parsePolicyFile(POLICY, 'provkit.hcl').audit;
  const signed = (keyId: string, expired = false): Disposition => ({ kind: 'signed', keyId, expired });
  const reported: Disposition = { kind: 'reported-by-registry', url: 'https://r/x' };
  const local: Disposition = { kind: 'computed-locally', from: '/m/x.zip' };

  it('the default policy takes signed or verified-locally, and computed-locally for a mirror-only provider', () => {
    const rule = auditRuleFor(undefined, aws, 'tofu', false);
    expect(rule.from).toBe('the default policy');
    expect(judgeHash(rule, [signed(OTHER)]).pass).toBe(true);
    expect(judgeHash(rule, [{ kind: 'verified-locally', keyId: OTHER }]).pass).toBe(true);
    expect(judgeHash(rule, [local]).violations.map((v) => v.code)).toEqual(['HASH_NOT_ACCEPTED']);
    expect(judgeHash(auditRuleFor(undefined, aws, 'tofu', true), [local]).pass).toBe(true);
  });

  it('nothing vouching is HASH_UNVOUCHED; reported only is HASH_NOT_ACCEPTED', () => {
    const rule = auditRuleFor(policy, aws, 'tofu', false);
    expect(judgeHash(rule, []).violations.map((v) => v.code)).toEqual(['HASH_UNVOUCHED']);
    const r = judgeHash(rule, [reported]);
    expect(r.violations.map((v) => v.code)).toEqual(['HASH_NOT_ACCEPTED']);
    expect(r.violations[0]?.message).toBe('only reported-by-registry; provkit.hcl accepts signed, verified-locally');
  });

  it('a signature by a key outside trusted_keys does not count, even beside a reported hash', () => {
    const rule = auditRuleFor(policy, aws, 'tofu', false);
    expect(judgeHash(rule, [signed(MAIN)]).pass).toBe(true);
    const r = judgeHash(rule, [signed(OTHER), { kind: 'verified-locally', keyId: OTHER }, reported]);
    expect(r.pass).toBe(false);
    expect(r.violations).toEqual([
      {
        code: 'KEY_NOT_TRUSTED',
        message: `signed by key ${OTHER}, which is not one of the trusted_keys of provkit.hcl`,
      },
    ]);
  });

  it('an expired key counts only with allow_expired_keys', () => {
    const rule = auditRuleFor(undefined, aws, 'tofu', false);
    expect(judgeHash(rule, [signed(OTHER, true)]).violations.map((v) => v.code)).toEqual(['KEY_EXPIRED']);
    expect(judgeHash({ ...rule, allowExpiredKeys: true }, [signed(OTHER, true)]).pass).toBe(true);
    // verified-locally borrows the expiry of its key from the context.
    const ctx = { keyExpired: (k: string) => k === OTHER };
    expect(judgeHash(rule, [{ kind: 'verified-locally', keyId: OTHER }], ctx).pass).toBe(false);
  });

  it('the first matching provider block overrides what it sets; reported hashes pass there unless contradicted', () => {
    const rule = auditRuleFor(policy, corp, 'tofu', false);
    expect(rule.from).toBe('provkit.hcl provider "corp.example.com/*/*"');
    expect(rule.trustedKeys).toEqual([MAIN]);
    expect(judgeHash(rule, [local]).pass).toBe(true);
    expect(judgeHash(rule, [reported]).pass).toBe(true);
    const contradicted = judgeHash(rule, [reported], { contradictedBy: 'h1:abc=' });
    expect(contradicted.violations.map((v) => v.code)).toEqual(['HASH_CONTRADICTED']);
  });

  it('key IDs come from IDs or fingerprints', () => {
    expect(keyIdOf(`0x${MAIN.toLowerCase()}`)).toBe(MAIN);
    expect(keyIdOf(`${'A'.repeat(24)}${MAIN}`)).toBe(MAIN);
    expect(keyIdOf('34365D94')).toBeUndefined();
  });
});
