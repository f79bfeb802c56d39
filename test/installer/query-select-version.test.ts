/**
 * "Query the versions, select, report `provider_selected`" has one home
 * (installer/select-version.ts `querySelectVersion`), called by `lock`,
 * `install` and `bundle create`.
 */
import { describe, expect, it } from 'vitest';

import { parseConstraints, parsePlatform, parseProviderSource, parseVersion } from '../../src/addresses/index.js';
import { ErrorCode, ProvkitError } from '../../src/errors.js';
import type { InstallerEvent } from '../../src/installer/events.js';
import { querySelectVersion } from '../../src/installer/select-version.js';
import { MockSource } from '../../src/sources/testing.js';

const provider = parseProviderSource('acme/demo', 'tofu');
const pkg = (version: string) => ({ provider, version: parseVersion(version), platform: parsePlatform('linux_amd64') });

describe('querySelectVersion', () => {
  it('hands the warnings over, selects the newest acceptable version and reports exactly one provider_selected', async () => {
    const source = new MockSource([pkg('1.0.0'), pkg('1.2.0'), pkg('2.0.0')], {
      warnings: { [provider.toString()]: ['deprecated'] },
    });
    const events: InstallerEvent[] = [];
    const warned: (readonly string[])[] = [];
    const constraints = parseConstraints('~> 1.0');
    const version = await querySelectVersion(source, { provider, constraints }, undefined, {
      flavor: 'tofu',
      events: (e) => events.push(e),
      onWarnings: (w) => warned.push(w),
    });
    expect(version.toString()).toBe('1.2.0');
    expect(warned).toEqual([['deprecated']]);
    expect(events).toEqual([
      { type: 'provider_selected', provider, version, reason: 'constraints', constraints: '~> 1.0' },
    ]);
  });

  it('keeps a locked version that still matches, and reports nothing when selection fails', async () => {
    const source = new MockSource([pkg('1.0.0')]);
    const events: InstallerEvent[] = [];
    const locked = parseVersion('1.0.0');
    const version = await querySelectVersion(source, { provider, constraints: parseConstraints('') }, locked, {
      flavor: 'tofu',
      events: (e) => events.push(e),
    });
    expect(events).toEqual([{ type: 'provider_selected', provider, version, reason: 'lock', constraints: '' }]);
    events.length = 0;
    const err = await querySelectVersion(source, { provider, constraints: parseConstraints('>= 2.0') }, undefined, {
      flavor: 'tofu',
      events: (e) => events.push(e),
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProvkitError);
    expect(err).toMatchObject({ code: ErrorCode.NOT_FOUND });
    expect(events).toEqual([]);
  });
});
