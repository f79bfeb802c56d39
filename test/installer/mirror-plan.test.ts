/**
 * Issue 12 #2: the decisions of `providers mirror` as a table (as OpenTofu's
 * internal/providercache/installer_test.go): requirements, a lock file, a mock
 * source and what the target already holds → which version of each provider
 * is mirrored and why, and per platform whether its package is fetched or an
 * archive already there is verified and kept. No I/O: the source is
 * src/sources/testing.ts's MockSource, asked exactly as the run asks it.
 */
import { describe, expect, it } from 'vitest';

import {
  parseConstraints,
  parsePlatform,
  parseProviderSource,
  parseVersion,
  VersionConstraints,
  type Requirement,
} from '../../src/addresses/index.js';
import { asProvkitError } from '../../src/errors.js';
import { mirrorArchivePath, mirrorNeedsVersions, planMirror } from '../../src/installer/mirror-plan.js';
import { Locks, parseLockFile } from '../../src/lockfile/index.js';
import { type MockPackage, MockSource } from '../../src/sources/testing.js';

const FLAVOR = 'tofu';
const addr = (s: string) => parseProviderSource(s, FLAVOR);
const LINUX = parsePlatform('linux_amd64');
const DARWIN = parsePlatform('darwin_arm64');

/** Every package of `versions` for both platforms. */
const published = (provider: string, versions: readonly string[], platforms = [LINUX, DARWIN]): MockPackage[] =>
  versions.flatMap((v) =>
    platforms.map((platform) => ({ provider: addr(provider), version: parseVersion(v), platform })),
  );

const req = (provider: string, constraints = ''): Requirement => ({
  provider: addr(provider),
  constraints: constraints === '' ? new VersionConstraints() : parseConstraints(constraints, FLAVOR),
});

/** A lock file with one entry per `provider@version`. */
const lockFile = (...entries: string[]): Locks => {
  if (entries.length === 0) return new Locks();
  const text = entries
    .map((e) => {
      const [p, v] = e.split('@') as [string, string];
      return `provider "${addr(p).toString()}" {\n  version = "${v}"\n}\n`;
    })
    .join('\n');
  const parsed = parseLockFile(text, '.terraform.lock.hcl', FLAVOR);
  expect(parsed.diagnostics).toEqual([]);
  return parsed.locks;
};

interface Case {
  readonly name: string;
  readonly packages: MockPackage[];
  readonly requirements: Requirement[];
  readonly locks?: Locks;
  readonly platforms?: readonly string[];
  /** Archives already in the target, as `provider@version@platform`. */
  readonly present?: readonly string[];
  /** One line per provider (`PROVIDER: VERSION (reason)` or `PROVIDER: failed: summary: message`), then its steps. */
  readonly want: readonly string[];
  /** The providers whose versions the run asks the source for. */
  readonly asked: readonly string[];
}

const cases: Case[] = [
  {
    name: 'no lock file: the newest version meeting the constraints, every platform fetched',
    packages: published('acme/demo', ['1.0.0', '1.2.0', '2.0.0']),
    requirements: [req('acme/demo', '~> 1.0')],
    want: ['acme/demo: 1.2.0 (constraints)', '  linux_amd64 fetch', '  darwin_arm64 fetch'],
    asked: ['acme/demo'],
  },
  {
    name: 'no constraints: the newest version, unconstrained',
    packages: published('acme/demo', ['1.0.0', '2.0.0']),
    requirements: [req('acme/demo')],
    platforms: ['linux_amd64'],
    want: ['acme/demo: 2.0.0 (unconstrained)', '  linux_amd64 fetch'],
    asked: ['acme/demo'],
  },
  {
    name: 'locked: the lock file wins over a newer version (no upgrade in mirror)',
    packages: published('acme/demo', ['1.0.0', '1.2.0']),
    requirements: [req('acme/demo', '~> 1.0')],
    locks: lockFile('acme/demo@1.0.0'),
    platforms: ['linux_amd64'],
    want: ['acme/demo: 1.0.0 (lock)', '  linux_amd64 fetch'],
    asked: ['acme/demo'],
  },
  {
    name: 'provider missing from a non-empty lock file: fails without asking the source',
    packages: [...published('acme/demo', ['1.0.0']), ...published('acme/other', ['1.0.0'])],
    requirements: [req('acme/demo'), req('acme/other')],
    locks: lockFile('acme/demo@1.0.0'),
    platforms: ['linux_amd64'],
    want: [
      'acme/demo: 1.0.0 (lock)',
      '  linux_amd64 fetch',
      'acme/other: failed: Provider not found in lockfile: Failed to find registry.opentofu.org/acme/other in the lock file',
    ],
    asked: ['acme/demo'],
  },
  {
    name: 'locked version no longer meets the constraints: not available, with the init -upgrade advice',
    packages: published('acme/demo', ['1.0.0', '2.0.0']),
    requirements: [req('acme/demo', '>= 2.0')],
    locks: lockFile('acme/demo@1.0.0'),
    want: [
      'acme/demo: failed: Provider not available: locked provider registry.opentofu.org/acme/demo 1.0.0 does not match configured version constraint >= 2.0.0; must use tofu init -upgrade to allow selection of new versions',
    ],
    asked: ['acme/demo'],
  },
  {
    name: 'locked version withdrawn from the source: not available',
    packages: published('acme/demo', ['1.1.0']),
    requirements: [req('acme/demo')],
    locks: lockFile('acme/demo@1.0.0'),
    want: ['acme/demo: failed: Provider not available: the previously-selected version 1.0.0 is no longer available'],
    asked: ['acme/demo'],
  },
  {
    name: 'no version meets the constraints',
    packages: published('acme/demo', ['1.0.0']),
    requirements: [req('acme/demo', '>= 3.0')],
    want: ['acme/demo: failed: Provider not available: no available releases match the given constraints >= 3.0.0'],
    asked: ['acme/demo'],
  },
  {
    name: 'provider unknown to the source: its error, as a provider not available',
    packages: [],
    requirements: [req('acme/ghost')],
    want: [
      'acme/ghost: failed: Provider not available: provider registry registry.opentofu.org does not have a provider named registry.opentofu.org/acme/ghost',
    ],
    asked: ['acme/ghost'],
  },
  {
    name: 'already present: verified (and kept when it authenticates); the missing platform fetched',
    packages: published('acme/demo', ['1.2.0']),
    requirements: [req('acme/demo')],
    present: ['acme/demo@1.2.0@darwin_arm64', 'acme/demo@1.0.0@linux_amd64'],
    want: ['acme/demo: 1.2.0 (unconstrained)', '  linux_amd64 fetch', '  darwin_arm64 verify-existing'],
    asked: ['acme/demo'],
  },
  {
    name: 'several providers: each decided on its own, in requirement order',
    packages: [...published('acme/b', ['0.1.0']), ...published('acme/a', ['3.0.0'])],
    requirements: [req('acme/b'), req('acme/a', '< 3.0')],
    platforms: ['linux_amd64'],
    want: [
      'acme/b: 0.1.0 (unconstrained)',
      '  linux_amd64 fetch',
      'acme/a: failed: Provider not available: no available releases match the given constraints < 3.0.0',
    ],
    asked: ['acme/b', 'acme/a'],
  },
];

describe('mirror plan', () => {
  it.each(cases)('$name', async (c) => {
    const locks = c.locks ?? new Locks();
    const platforms = (c.platforms ?? ['linux_amd64', 'darwin_arm64']).map(parsePlatform);
    const source = new MockSource(c.packages);
    // What the run asks the source before it plans (mirror.ts, selectMirrorVersion).
    const versions = new Map<
      string,
      Awaited<ReturnType<MockSource['availableVersions']>> | ReturnType<typeof asProvkitError>
    >();
    for (const r of c.requirements) {
      if (mirrorNeedsVersions(r, locks))
        versions.set(
          r.provider.toComparisonString(),
          await source.availableVersions(r.provider).catch((err: unknown) => asProvkitError(err)),
        );
    }
    const present = new Set(
      (c.present ?? []).map((p) => {
        const [provider, version, platform] = p.split('@') as [string, string, string];
        return mirrorArchivePath(addr(provider), parseVersion(version), parsePlatform(platform));
      }),
    );
    const plan = planMirror({ requirements: c.requirements, locks, platforms, flavor: FLAVOR, versions, present });
    const lines = plan.flatMap((p) => {
      const name = p.provider.forDisplay(FLAVOR);
      if (p.selection.kind === 'failed')
        return [`${name}: failed: ${p.selection.failure.summary}: ${p.selection.failure.error.message}`];
      return [
        `${name}: ${p.selection.version.toString()} (${p.selection.reason})`,
        ...p.steps.map((s) => `  ${s.platform.toString()} ${s.action}`),
      ];
    });
    expect(lines).toEqual(c.want);
    expect(source.calls.map((x) => addr(x.provider).forDisplay(FLAVOR))).toEqual(c.asked);
    // The steps name the packed archive each package is written to.
    for (const s of plan.flatMap((p) => p.steps))
      expect(s.rel).toBe(mirrorArchivePath(s.provider, s.version, s.platform));
  });
});
