/**
 * "Query the versions, select, report `provider_selected`" has one home
 * (installer/select-version.ts `querySelectVersion`), called by `lock`,
 * `install` and `bundle create`; `mirror`'s own rule (installer/mirror.ts
 * `selectMirrorVersion` says why it differs) chooses with the same
 * `selectVersion` and reports with the same event builder.
 */
import { describe, expect, it } from 'vitest';

import { parseConstraints, parsePlatform, parseProviderSource, parseVersion } from '../../src/addresses/index.js';
import { ErrorCode, ProvkitError } from '../../src/errors.js';
import type { InstallerEvent } from '../../src/installer/events.js';
import { selectMirrorVersion } from '../../src/installer/mirror.js';
import { querySelectVersion } from '../../src/installer/select-version.js';
import { Locks, ProviderLock } from '../../src/lockfile/index.js';
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

describe("mirror's selection beside it", () => {
  const other = parseProviderSource('acme/other', 'tofu');
  const lockOf = (version: string): Locks =>
    new Locks([new ProviderLock(provider, parseVersion(version), parseConstraints(''), [])]);

  it('takes the lock file’s version and reports the same event as lock does, announced, without the warnings', async () => {
    const source = new MockSource([pkg('1.0.0'), pkg('1.2.0')], {
      warnings: { [provider.toString()]: ['deprecated'] },
    });
    const events: InstallerEvent[] = [];
    const req = { provider, constraints: parseConstraints('~> 1.0') };
    const mirrored = await selectMirrorVersion({ source, flavor: 'tofu', locks: lockOf('1.0.0') }, req, (e) =>
      events.push(e),
    );
    const locked: InstallerEvent[] = [];
    await querySelectVersion(source, req, parseVersion('1.0.0'), { flavor: 'tofu', events: (e) => locked.push(e) });
    expect(mirrored).toEqual({ version: parseVersion('1.0.0') });
    expect(events).toEqual(locked.map((e) => ({ ...e, announce: true })));
    expect(events).toEqual([
      {
        type: 'provider_selected',
        provider,
        version: parseVersion('1.0.0'),
        reason: 'lock',
        constraints: '~> 1.0',
        announce: true,
      },
    ]);
  });

  it('fails a provider the lock file lacks, without asking the source, where lock would select one', async () => {
    const source = new MockSource([{ ...pkg('1.0.0'), provider: other }]);
    const events: InstallerEvent[] = [];
    const result = await selectMirrorVersion(
      { source, flavor: 'tofu', locks: lockOf('1.0.0') },
      { provider: other, constraints: parseConstraints('') },
      (e) => events.push(e),
    );
    expect(result).toMatchObject({ failure: { provider: other, summary: 'Provider not found in lockfile' } });
    expect(source.calls).toEqual([]);
    expect(events).toEqual([]);
  });
});
