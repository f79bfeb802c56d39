// Issue 12 #3: the one decision whether `lock` (a single root, or each root of
// `lock -recursive`) writes a lock file (src/lockfile/write-decision.ts).
// The end-to-end guard is test/e2e/lock-write.test.ts.
import { describe, expect, it } from 'vitest';

import { parseConstraints, parseProviderSource, parseVersion } from '../../src/addresses/index.js';
import { parseHash } from '../../src/hashing/index.js';
import { Locks, newProviderLock, providersLockWrite, serializeLocks } from '../../src/lockfile/index.js';

const demo = parseProviderSource('registry.terraform.io/hashicorp/demo', 'tofu');
const locksWith = (hashes: string[], constraints = ''): Locks =>
  new Locks([
    newProviderLock(
      demo,
      parseVersion('1.0.0'),
      parseConstraints(constraints),
      hashes.map((t) => parseHash(t)),
    ),
  ]);

describe('providersLockWrite', () => {
  const old = locksWith(['h1:a']);
  const more = locksWith(['h1:a', 'h1:b']);

  it('no file yet: written, created, changed', () => {
    expect(providersLockWrite(new Locks(), old, undefined, 'tofu')).toMatchObject({
      write: true,
      file: 'created',
      changed: true,
      sameBytes: false,
    });
  });

  it('the same bytes: rewritten anyway (the reference always rewrites), unchanged', () => {
    const d = providersLockWrite(old, old, serializeLocks(old, 'tofu'), 'tofu');
    expect(d).toMatchObject({ write: true, file: 'unchanged', changed: false, sameBytes: true });
    expect(d.bytes.equals(serializeLocks(old, 'tofu'))).toBe(true);
  });

  it('nothing changed, the other flavor’s bytes: kept as they are, in both directions', () => {
    expect(providersLockWrite(old, old, serializeLocks(old, 'terraform'), 'tofu')).toMatchObject({
      write: false,
      file: 'unchanged',
      changed: false,
      sameBytes: false,
    });
    expect(providersLockWrite(old, old, serializeLocks(old, 'tofu'), 'terraform')).toMatchObject({
      write: false,
      file: 'unchanged',
      changed: false,
      sameBytes: false,
    });
  });

  it('new hashes in the other flavor’s file: written with this flavor’s bytes, updated', () => {
    const d = providersLockWrite(old, more, serializeLocks(old, 'terraform'), 'tofu');
    expect(d).toMatchObject({ write: true, file: 'updated', changed: true, sameBytes: false });
    expect(d.bytes.equals(serializeLocks(more, 'tofu'))).toBe(true);
  });

  it('only the constraints changed: not a change (Locks.Equal), but the other flavor’s file no longer matches, so it is written', () => {
    const constrained = locksWith(['h1:a'], '>= 1.0.0');
    expect(providersLockWrite(old, constrained, serializeLocks(old, 'terraform'), 'tofu')).toMatchObject({
      write: true,
      file: 'updated',
      changed: false,
    });
  });

  it('a file in another form (not what either flavor writes): rewritten, updated', () => {
    const bytes = Buffer.from(`${serializeLocks(old, 'tofu').toString()}\n`);
    expect(providersLockWrite(old, old, bytes, 'tofu')).toMatchObject({
      write: true,
      file: 'updated',
      changed: false,
      sameBytes: false,
    });
  });
});
