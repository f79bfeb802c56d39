/**
 * Issue 12 #2: the decisions of `provkit install` (init's provider step) as
 * a table (as OpenTofu's internal/providercache/installer_test.go): a
 * requirement, its lock entry, -upgrade, a mock source's versions and what the
 * target and the plugin cache hold → the version, where the package comes
 * from, and whether the source is asked at all; then what happens to the
 * lock file (-lockfile=readonly). No I/O: src/sources/testing.ts's MockSource
 * reports the versions.
 */
import { describe, expect, it } from 'vitest';

import {
  parseConstraints,
  parsePlatform,
  parseProviderSource,
  parseVersion,
  VersionConstraints,
  type Flavor,
} from '../../src/addresses/index.js';
import { parseHash } from '../../src/hashing/hash.js';
import { lockFileAction } from '../../src/installer/install.js';
import { planInstall } from '../../src/installer/install-plan.js';
import { Locks, locksEqual, parseLockFile } from '../../src/lockfile/index.js';
import { MockSource } from '../../src/sources/testing.js';

const addr = (s: string) => parseProviderSource(s, 'tofu');
const DEMO = addr('acme/demo');
const H1_INSTALLED = `h1:${'A'.repeat(43)}=`;
const H1_OTHER = `h1:${'B'.repeat(43)}=`;

/** Locks parsed from lock-file entries `provider@version[#hash,hash]`. */
function locks(...entries: string[]): Locks {
  if (entries.length === 0) return new Locks();
  const text = entries
    .map((e) => {
      const [pv, hashes = ''] = e.split('#') as [string, string?];
      const [p, v] = pv.split('@') as [string, string];
      const list =
        hashes === ''
          ? ''
          : `  hashes = [\n${hashes
              .split(',')
              .map((h) => `    "${h}",\n`)
              .join('')}  ]\n`;
      return `provider "${addr(p).toString()}" {\n  version = "${v}"\n${list}}\n`;
    })
    .join('\n');
  const parsed = parseLockFile(text, '.terraform.lock.hcl', 'tofu');
  expect(parsed.diagnostics).toEqual([]);
  return parsed.locks;
}

interface Case {
  readonly name: string;
  readonly published: readonly string[];
  readonly constraints?: string;
  /** The old lock entry of acme/demo, `version[#hashes]`. */
  readonly locked?: string;
  readonly upgrade?: boolean;
  readonly flavor?: Flavor;
  readonly installed?: string;
  readonly cached?: string;
  readonly cacheMayBreakLockFile?: boolean;
  /** `VERSION (reason) ACTION, asks WHEN`, or `error: message`. */
  readonly want: string;
}

const cases: Case[] = [
  {
    name: 'no lock: the newest version meeting the constraints, fetched',
    published: ['1.0.0', '1.1.0', '2.0.0'],
    constraints: '~> 1.0',
    want: '1.1.0 (constraints) fetch, asks to-select',
  },
  {
    name: 'no lock, no constraints: the newest version',
    published: ['1.0.0', '2.0.0'],
    want: '2.0.0 (unconstrained) fetch, asks to-select',
  },
  {
    name: 'locked: the locked version, not the newest',
    published: ['1.0.0', '1.1.0'],
    locked: '1.0.0',
    want: '1.0.0 (lock) fetch, asks before-fetch',
  },
  {
    name: 'upgrade vs locked: -upgrade ignores the lock',
    published: ['1.0.0', '1.1.0'],
    locked: '1.0.0',
    upgrade: true,
    want: '1.1.0 (unconstrained) fetch, asks to-select',
  },
  {
    name: 'already present and verified: kept in place, the source never asked (offline)',
    published: [],
    locked: `1.0.0#${H1_INSTALLED}`,
    installed: H1_INSTALLED,
    want: '1.0.0 (lock) previously-installed, asks never',
  },
  {
    name: 'present but not matching the lock: fetched again',
    published: ['1.0.0'],
    locked: `1.0.0#${H1_OTHER}`,
    installed: H1_INSTALLED,
    want: '1.0.0 (lock) fetch, asks before-fetch',
  },
  {
    name: 'present without lock hashes: fetched (nothing to verify it against)',
    published: ['1.0.0'],
    locked: '1.0.0',
    installed: H1_INSTALLED,
    want: '1.0.0 (lock) fetch, asks before-fetch',
  },
  {
    name: 'plugin cache matching the lock: linked, offline',
    published: [],
    locked: `1.0.0#${H1_INSTALLED}`,
    cached: H1_INSTALLED,
    want: '1.0.0 (lock) cache, asks never',
  },
  {
    name: 'plugin cache not matching the lock: fetched',
    published: ['1.0.0'],
    locked: `1.0.0#${H1_OTHER}`,
    cached: H1_INSTALLED,
    want: '1.0.0 (lock) fetch, asks before-fetch',
  },
  {
    name: 'plugin cache, no lock hashes: fetched unless the cache may break the lock file',
    published: ['1.0.0'],
    cached: H1_INSTALLED,
    want: '1.0.0 (unconstrained) fetch, asks to-select',
  },
  {
    name: 'plugin cache, no lock hashes, plugin_cache_may_break_dependency_lock_file: linked',
    published: ['1.0.0'],
    cached: H1_INSTALLED,
    cacheMayBreakLockFile: true,
    want: '1.0.0 (unconstrained) cache, asks to-select',
  },
  {
    name: 'upgrade: the installed package of the old version does not count',
    published: ['1.0.0', '1.1.0'],
    locked: `1.0.0#${H1_INSTALLED}`,
    upgrade: true,
    installed: H1_INSTALLED,
    want: '1.1.0 (unconstrained) fetch, asks to-select',
  },
  {
    name: 'locked version no longer meets the constraints',
    published: ['1.0.0', '2.0.0'],
    constraints: '>= 2.0',
    locked: '1.0.0',
    want: 'error: locked provider registry.opentofu.org/acme/demo 1.0.0 does not match configured version constraint >= 2.0.0; must use tofu init -upgrade to allow selection of new versions',
  },
  {
    name: 'locked version withdrawn, to be fetched',
    published: ['1.1.0'],
    locked: '1.0.0',
    want: 'error: the previously-selected version 1.0.0 is no longer available',
  },
  {
    name: 'locked version withdrawn, still installed: kept (offline)',
    published: ['1.1.0'],
    locked: `1.0.0#${H1_INSTALLED}`,
    installed: H1_INSTALLED,
    want: '1.0.0 (lock) previously-installed, asks never',
  },
  {
    name: 'OpenTofu: 0.0.0 locked is refused',
    published: ['0.0.0'],
    locked: '0.0.0',
    want: 'error: 0.0.0 is not a valid provider version. ',
  },
  {
    name: 'no version meets the constraints',
    published: ['1.0.0'],
    constraints: '>= 3.0',
    want: 'error: no available releases match the given constraints >= 3.0.0',
  },
];

describe('install plan', () => {
  it.each(cases)('$name', async (c) => {
    const flavor = c.flavor ?? 'tofu';
    const source = new MockSource(
      c.published.map((v) => ({ provider: DEMO, version: parseVersion(v), platform: parsePlatform('linux_amd64') })),
      { unknown: 'not-found' },
    );
    const available = await source.availableVersions(DEMO).then(
      (a) => a.versions,
      () => [],
    );
    const old = c.locked === undefined ? new Locks() : locks(`acme/demo@${c.locked}`);
    let got: string;
    try {
      const plan = planInstall({
        requirement: {
          provider: DEMO,
          constraints: c.constraints === undefined ? new VersionConstraints() : parseConstraints(c.constraints, flavor),
        },
        lock: old.provider(DEMO),
        upgrade: c.upgrade === true,
        flavor,
        available,
        ...(c.installed === undefined ? {} : { installed: parseHash(c.installed) }),
        ...(c.cached === undefined ? {} : { cached: parseHash(c.cached) }),
        cacheMayBreakLockFile: c.cacheMayBreakLockFile === true,
      });
      got = `${plan.version.toString()} (${plan.reason}) ${plan.action}, asks ${plan.asks}`;
    } catch (err) {
      got = `error: ${(err as Error).message.split('\n')[0]}`;
    }
    expect(got).toBe(c.want);
  });
});

describe('install lock file action', () => {
  const cases: Array<{
    name: string;
    old: string[];
    next: string[];
    readonly: boolean;
    want: ReturnType<typeof lockFileAction>;
  }> = [
    {
      name: 'unchanged: nothing to write',
      old: ['acme/demo@1.0.0'],
      next: ['acme/demo@1.0.0'],
      readonly: false,
      want: 'unchanged',
    },
    { name: 'changed: written', old: ['acme/demo@1.0.0'], next: ['acme/demo@1.1.0'], readonly: false, want: 'write' },
    { name: 'new lock file: written', old: [], next: ['acme/demo@1.0.0'], readonly: false, want: 'write' },
    {
      name: 'readonly lockfile, same providers changed: a warning',
      old: ['acme/demo@1.0.0'],
      next: ['acme/demo@1.1.0'],
      readonly: true,
      want: 'readonly-changed',
    },
    {
      name: 'readonly lockfile, a provider added: an error',
      old: ['acme/demo@1.0.0'],
      next: ['acme/demo@1.0.0', 'acme/other@2.0.0'],
      readonly: true,
      want: 'readonly-providers-changed',
    },
    {
      name: 'readonly lockfile, unchanged: nothing',
      old: ['acme/demo@1.0.0'],
      next: ['acme/demo@1.0.0'],
      readonly: true,
      want: 'unchanged',
    },
  ];
  it.each(cases)('$name', (c) => {
    const old = locks(...c.old);
    const next = locks(...c.next);
    expect(lockFileAction(old, next, locksEqual(old, next), c.readonly)).toBe(c.want);
  });
});
