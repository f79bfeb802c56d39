// Issue 12 #1: the one rule for which hashes a run records in the lock file
// (src/lockfile/record.ts), used by `lock` (installer/lock.ts) and `install`
// (installer/install.ts). The expected results are written out, one row per
// flavor × operation × reported-hashes-trusted × trust kind, from the
// references: terraform 1.11.4 records only what a verified signature covers
// (observed: a -net-mirror lock holds only the h1:, even when the mirror lists
// zh:); OpenTofu also what it verified locally, and, on its default registry
// without OPENTOFU_ENFORCE_GPG_VALIDATION, what the registry or a mirror
// reported (opentofu/opentofu internal/providercache/installer.go). Both
// commands run the same installer in both references, so the operation
// changes nothing.
import { describe, expect, it } from 'vitest';

import { type Flavor, parseProviderSource } from '../../src/addresses/index.js';
import { parseHash } from '../../src/hashing/index.js';
import {
  hashesToRecord,
  type HashTrustKind,
  type LockOperation,
  reportedHashesTrusted,
} from '../../src/lockfile/index.js';

type Row = readonly [
  flavor: Flavor,
  operation: LockOperation,
  reportedTrusted: boolean,
  kind: HashTrustKind,
  recorded: boolean,
];

// prettier-ignore
const TABLE: readonly Row[] = [
  // flavor       operation         reported trusted  trust kind               recorded
  ['terraform', 'providers-lock', false, 'signed',               true ],
  ['terraform', 'providers-lock', false, 'verified-locally',     false],
  ['terraform', 'providers-lock', false, 'reported-by-registry', false],
  ['terraform', 'providers-lock', false, 'reported-by-mirror',   false],
  ['terraform', 'providers-lock', true,  'signed',               true ],
  ['terraform', 'providers-lock', true,  'verified-locally',     false],
  ['terraform', 'providers-lock', true,  'reported-by-registry', false],
  ['terraform', 'providers-lock', true,  'reported-by-mirror',   false],
  ['terraform', 'init',           false, 'signed',               true ],
  ['terraform', 'init',           false, 'verified-locally',     false],
  ['terraform', 'init',           false, 'reported-by-registry', false],
  ['terraform', 'init',           false, 'reported-by-mirror',   false],
  ['terraform', 'init',           true,  'signed',               true ],
  ['terraform', 'init',           true,  'verified-locally',     false],
  ['terraform', 'init',           true,  'reported-by-registry', false],
  ['terraform', 'init',           true,  'reported-by-mirror',   false],
  ['tofu',      'providers-lock', false, 'signed',               true ],
  ['tofu',      'providers-lock', false, 'verified-locally',     true ],
  ['tofu',      'providers-lock', false, 'reported-by-registry', false],
  ['tofu',      'providers-lock', false, 'reported-by-mirror',   false],
  ['tofu',      'providers-lock', true,  'signed',               true ],
  ['tofu',      'providers-lock', true,  'verified-locally',     true ],
  ['tofu',      'providers-lock', true,  'reported-by-registry', true ],
  ['tofu',      'providers-lock', true,  'reported-by-mirror',   true ],
  ['tofu',      'init',           false, 'signed',               true ],
  ['tofu',      'init',           false, 'verified-locally',     true ],
  ['tofu',      'init',           false, 'reported-by-registry', false],
  ['tofu',      'init',           false, 'reported-by-mirror',   false],
  ['tofu',      'init',           true,  'signed',               true ],
  ['tofu',      'init',           true,  'verified-locally',     true ],
  ['tofu',      'init',           true,  'reported-by-registry', true ],
  ['tofu',      'init',           true,  'reported-by-mirror',   true ],
];

const h = parseHash;

describe('one rule for the hashes a lock records', () => {
  it('the table covers every flavor × operation × reported-trusted × trust kind once', () => {
    const keys = new Set(TABLE.map(([f, o, t, k]) => `${f} ${o} ${t} ${k}`));
    expect(keys.size).toBe(2 * 2 * 2 * 4);
    expect(TABLE.length).toBe(keys.size);
  });

  it.each(TABLE)(
    '%s %s, reported trusted %s: a %s hash is recorded: %s',
    (flavor, operation, reportedTrusted, kind, recorded) => {
      const hash = h('zh:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef');
      expect(
        hashesToRecord({ flavor, operation, reportedTrusted, hashes: [{ hash, trust: { kind } }] }).map((x) => x.text),
      ).toEqual(recorded ? [hash.text] : []);
    },
  );

  it('returns the recorded hashes sorted (byte order) and de-duplicated, whatever the input order and trust', () => {
    const hashes = [
      { hash: h('zh:signed'), trust: { kind: 'signed' as const } },
      { hash: h('zh:local'), trust: { kind: 'verified-locally' as const } },
      { hash: h('h1:reported'), trust: { kind: 'reported-by-registry' as const } },
      // The same hash twice, for two reasons (a mirror's zh: the archive also matched).
      { hash: h('zh:local'), trust: { kind: 'reported-by-mirror' as const } },
      { hash: h('zh:signed'), trust: { kind: 'signed' as const } },
      { hash: h('h1:mirror'), trust: { kind: 'reported-by-mirror' as const } },
    ];
    const text = (flavor: Flavor, reportedTrusted: boolean, operation: LockOperation): string[] =>
      hashesToRecord({ flavor, operation, reportedTrusted, hashes }).map((x) => x.text);
    for (const operation of ['providers-lock', 'init'] as const) {
      expect(text('terraform', true, operation)).toEqual(['zh:signed']);
      expect(text('tofu', false, operation)).toEqual(['zh:local', 'zh:signed']);
      expect(text('tofu', true, operation)).toEqual(['h1:mirror', 'h1:reported', 'zh:local', 'zh:signed']);
    }
  });

  it('reported hashes are trusted only on registry.opentofu.org, and not with signatures enforced', () => {
    const at = (source: string): ReturnType<typeof parseProviderSource> => parseProviderSource(source, 'tofu');
    expect(reportedHashesTrusted(at('registry.opentofu.org/acme/demo'), false)).toBe(true);
    expect(reportedHashesTrusted(at('registry.opentofu.org/acme/demo'), true)).toBe(false);
    expect(reportedHashesTrusted(at('registry.terraform.io/hashicorp/demo'), false)).toBe(false);
    expect(reportedHashesTrusted(at('registry.example.test/acme/demo'), false)).toBe(false);
  });
});
