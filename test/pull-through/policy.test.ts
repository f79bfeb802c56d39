// The pull-through mirror's pure rules: who may be fetched (allow patterns,
// addresses, signatures), how failures become answers, and the metrics text.
import { describe, expect, it } from 'vitest';

import { hostnameForComparison, ProviderAddress } from '../../src/addresses/index.js';
import { parsePolicyFile } from '../../src/config/index.js';
import { ErrorCode, ProvkitError } from '../../src/errors.js';
import {
  addressList,
  addressRefusal,
  originPolicy,
  providerAllowed,
  signatureRefusal,
} from '../../src/pull-through/policy.js';
import { answerFor } from '../../src/pull-through/service.js';
import { MirrorMetrics } from '../../src/pull-through/metrics.js';

const provider = (h: string, ns: string, t: string): ProviderAddress =>
  new ProviderAddress(hostnameForComparison(h), ns, t);

describe('pull-through allow-list', () => {
  it("defaults to the flavor's public registry, every provider of it and nothing else", () => {
    const tofu = originPolicy({ flavor: 'tofu' });
    expect(providerAllowed(tofu, provider('registry.opentofu.org', 'hashicorp', 'aws'))).toBe(true);
    expect(providerAllowed(tofu, provider('registry.terraform.io', 'hashicorp', 'aws'))).toBe(false);
    const tf = originPolicy({ flavor: 'terraform' });
    expect(providerAllowed(tf, provider('registry.terraform.io', 'hashicorp', 'aws'))).toBe(true);
  });

  it('takes HOST, NS/TYPE, HOST/NS/TYPE and * for a namespace or type, never for the host', () => {
    const p = originPolicy({ flavor: 'terraform', allow: ['registry.example.test/acme/*', 'hashicorp/aws'] });
    expect(providerAllowed(p, provider('registry.example.test', 'acme', 'demo'))).toBe(true);
    expect(providerAllowed(p, provider('registry.example.test', 'other', 'demo'))).toBe(false);
    expect(providerAllowed(p, provider('registry.terraform.io', 'hashicorp', 'aws'))).toBe(true);
    expect(providerAllowed(p, provider('registry.terraform.io', 'hashicorp', 'google'))).toBe(false);
    expect(() => originPolicy({ flavor: 'tofu', allow: ['*/acme/demo'] })).toThrow(/invalid -allow pattern/);
    expect(() => originPolicy({ flavor: 'tofu', allow: ['a/b/c/d'] })).toThrow(ProvkitError);
  });

  it('refuses loopback, private, link-local and reserved addresses unless named, and any literal not named', () => {
    const p = originPolicy({ flavor: 'tofu', allowAddresses: ['127.0.0.1', '10.1.0.0/16'] });
    const named = addressList(p.allowAddresses);
    expect(addressRefusal(p, named, '140.82.112.3', false)).toBeUndefined();
    expect(addressRefusal(p, named, '127.0.0.1', false)).toBeUndefined();
    expect(addressRefusal(p, named, '10.1.2.3', false)).toBeUndefined();
    for (const ip of [
      '127.0.0.2',
      '10.2.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '::1',
      'fd00::1',
      'fe80::1',
    ])
      expect(addressRefusal(p, named, ip, false), ip).toMatch(/range/);
    // IPv6 forms of a private IPv4 address are judged by it.
    expect(addressRefusal(p, named, '::ffff:192.168.1.1', false)).toMatch(/stands for 192.168.1.1/);
    expect(addressRefusal(p, named, '::ffff:140.82.112.3', false)).toBeUndefined();
    expect(addressRefusal(p, named, '2606:50c0:8000::153', false)).toBeUndefined();
    expect(addressRefusal(p, named, '::ffff:10.1.2.3', false)).toBeUndefined();
    // A literal in a URL must be named, public or not.
    expect(addressRefusal(p, named, '140.82.112.3', true)).toMatch(/names the address/);
    expect(addressRefusal(p, named, '127.0.0.1', true)).toBeUndefined();
    expect(() => addressList(['10.0.0.0/33'])).toThrow(/invalid -allow-address/);
    expect(() => addressList(['example.com'])).toThrow(/invalid -allow-address/);
  });

  it('refuses unsigned packages unless allowed, and keys not trusted', () => {
    const demo = provider('registry.opentofu.org', 'acme', 'demo');
    const strict = originPolicy({ flavor: 'tofu', trustedKeys: ['0123456789abcdef'] });
    expect(signatureRefusal(strict, demo, { kind: 'skipped', reason: 'no keys' } as never)).toMatch(/not signed/);
    expect(signatureRefusal(strict, demo, { kind: 'signed', keyId: 'FEDCBA9876543210' } as never)).toMatch(
      /not one of the trusted keys/,
    );
    expect(signatureRefusal(strict, demo, { kind: 'signed', keyId: '0123456789ABCDEF' } as never)).toBeUndefined();
    const lax = originPolicy({ flavor: 'tofu', allowUnsigned: true });
    expect(signatureRefusal(lax, demo, { kind: 'skipped', reason: 'no keys' } as never)).toBeUndefined();
    expect(signatureRefusal(lax, demo, undefined)).toMatch(/no signed checksums/);
    expect(() => originPolicy({ flavor: 'tofu', trustedKeys: ['xyz'] })).toThrow(/invalid -trusted-key/);
  });

  it("applies the audit policy's trusted_keys for the provider: other keys and unsigned checksums are refused", () => {
    const { audit, diagnostics } = parsePolicyFile(
      [
        'audit {',
        '  trusted_keys = ["0123456789ABCDEF"]',
        '  provider "acme/other" {',
        '    trusted_keys = ["FEDCBA9876543210"]',
        '  }',
        '}',
        '',
      ].join('\n'),
      'provkit.hcl',
    );
    expect(diagnostics).toEqual([]);
    const policy = originPolicy({ flavor: 'tofu', allowUnsigned: true, ...(audit ? { audit } : {}) });
    const demo = provider('registry.opentofu.org', 'acme', 'demo');
    const other = provider('registry.opentofu.org', 'acme', 'other');
    const signed = (keyId: string): never => ({ kind: 'signed', keyId }) as never;
    expect(signatureRefusal(policy, demo, signed('0123456789abcdef'))).toBeUndefined();
    expect(signatureRefusal(policy, demo, signed('FEDCBA9876543210'))).toBe(
      'its checksums are signed with key FEDCBA9876543210, which is not one of the trusted_keys of provkit.hcl (0123456789ABCDEF)',
    );
    // A provider block's pins replace the block's for that provider.
    expect(signatureRefusal(policy, other, signed('FEDCBA9876543210'))).toBeUndefined();
    expect(signatureRefusal(policy, other, signed('0123456789ABCDEF'))).toMatch(
      /not one of the trusted_keys of provkit.hcl provider "acme\/other"/,
    );
    // Pinned keys: unsigned checksums are refused even with -allow-unsigned.
    expect(signatureRefusal(policy, demo, { kind: 'skipped', reason: 'no keys' } as never)).toMatch(
      /not signed .* the trusted_keys of provkit.hcl apply to it/,
    );
    // -trusted-key and the audit policy both apply.
    const both = originPolicy({ flavor: 'tofu', trustedKeys: ['FEDCBA9876543210'], ...(audit ? { audit } : {}) });
    expect(signatureRefusal(both, demo, signed('0123456789ABCDEF'))).toMatch(/not one of the trusted keys/);
    expect(signatureRefusal(both, demo, signed('FEDCBA9876543210'))).toMatch(/trusted_keys of provkit.hcl/);
  });
});

describe('pull-through answers and metrics', () => {
  it('turns each kind of failure into its status, with one line and the code', () => {
    const a = (code: ErrorCode): [number, string | undefined] => {
      const r = answerFor(new ProvkitError(code, 'line one\nline two'));
      expect(r.message).not.toContain('\n');
      return [r.status, r.headers?.['X-Provkit-Error']];
    };
    expect(a(ErrorCode.UPSTREAM_NOT_ALLOWED)).toEqual([403, 'UPSTREAM_NOT_ALLOWED']);
    expect(a(ErrorCode.NET_REFUSED)).toEqual([403, 'NET_REFUSED']);
    expect(a(ErrorCode.PLATFORM_NOT_SUPPORTED)[0]).toBe(404);
    expect(a(ErrorCode.NET_TIMEOUT)[0]).toBe(504);
    expect(a(ErrorCode.NET_HTTP_STATUS)[0]).toBe(502);
    expect(a(ErrorCode.CHECKSUM_MISMATCH)[0]).toBe(502);
    expect(a(ErrorCode.IO)[0]).toBe(503);
  });

  it('renders the Prometheus text format with HELP, TYPE, sorted series and escaped labels', () => {
    const m = new MirrorMetrics();
    m.add('provkit_mirror_requests_total', { result: 'miss', kind: 'archive' });
    m.add('provkit_mirror_requests_total', { kind: 'archive', result: 'hit' }, 2);
    m.add('provkit_mirror_errors_total', { source: 'a"b\\c\nd' });
    m.gauge('provkit_mirror_requests_in_flight', () => 3);
    const text = m.render();
    expect(text).toContain('# TYPE provkit_mirror_requests_total counter\n');
    expect(text).toContain(
      'provkit_mirror_requests_total{kind="archive",result="hit"} 2\nprovkit_mirror_requests_total{kind="archive",result="miss"} 1\n',
    );
    expect(text).toContain('provkit_mirror_errors_total{source="a\\"b\\\\c\\nd"} 1\n');
    expect(text).toContain('provkit_mirror_requests_in_flight 3\n');
    expect(text).toContain('provkit_mirror_upstream_bytes_total 0\n');
    expect(text.endsWith('\n')).toBe(true);
  });
});
