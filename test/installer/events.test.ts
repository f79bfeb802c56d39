/**
 * `fetch_complete` has one builder (installer/events.ts `fetchCompleteEvent`):
 * every command that fetches or reuses a package reports it through it, so
 * the event's fields, their presence and their order are the same everywhere.
 */
import { describe, expect, it } from 'vitest';

import { newProviderAddress, parsePlatform, parseVersion } from '../../src/addresses/index.js';
import { parseHash } from '../../src/hashing/index.js';
import { fetchCompleteEvent, packageHashes } from '../../src/installer/events.js';

const provider = newProviderAddress('registry.terraform.io', 'hashicorp', 'null');
const version = parseVersion('3.2.1');
const platform = parsePlatform('linux_amd64');
const pkg = { provider, version, platform };

describe('the fetch_complete event builder', () => {
  it('reports a reused package as verified by checksum, with no key and no optional fields', () => {
    const e = fetchCompleteEvent(pkg, 'reused');
    expect(e).toStrictEqual({
      type: 'fetch_complete',
      provider,
      version,
      platform,
      auth: 'verified checksum',
      keyId: undefined,
      reused: true,
    });
    expect(Object.keys(e)).toEqual(['type', 'provider', 'version', 'platform', 'auth', 'keyId', 'reused']);
  });

  it("reports a fetched package with the fetch's label and key, reading nothing else of the fetch", () => {
    const fetched = { label: 'signed' as const, keyId: 'ABCD1234ABCD1234', path: '/tmp/x.zip', size: 3 };
    expect(fetchCompleteEvent(pkg, fetched)).toStrictEqual({
      type: 'fetch_complete',
      provider,
      version,
      platform,
      auth: 'signed',
      keyId: 'ABCD1234ABCD1234',
      reused: false,
    });
  });

  it('adds stored and hashes only when the caller collects them, after the common fields', () => {
    const zh = parseHash('zh:' + 'a'.repeat(64));
    const hashes = packageHashes([{ hash: zh, trust: { kind: 'reported-by-registry' as const }, platform }]);
    const e = fetchCompleteEvent(pkg, { label: 'verified checksum', keyId: undefined }, { stored: false, hashes });
    expect(e).toStrictEqual({
      type: 'fetch_complete',
      provider,
      version,
      platform,
      auth: 'verified checksum',
      keyId: undefined,
      reused: false,
      stored: false,
      hashes,
    });
    expect(Object.keys(e)).toEqual([
      'type',
      'provider',
      'version',
      'platform',
      'auth',
      'keyId',
      'reused',
      'stored',
      'hashes',
    ]);
  });
});
