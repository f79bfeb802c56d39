// Issue 13: a filesystem mirror's packages go through the hash store too
// (installer/fetch-cache.ts `hashLocal`): the archive's zh: is computed from
// its bytes and looked up, so a warm lock -fs-mirror inflates nothing. The
// hits are observed from outside: with an archive size limit no package
// fits in (PROVKIT_ZIP_LIMITS=bytes=1), hashing fails, while hashes found in
// the store by the zh: of the very same bytes need no hashing at all.
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { FIXTURE_MIRROR } from '../fixtures/recursive/cases.js';
import { e2eWorkspace, requiresTf, runCli, type E2eWorkspace } from '../support/e2e.js';

const PLATFORMS = ['-platform=linux_amd64', '-platform=darwin_arm64'];
const ARCHIVE = 'registry.example.test/acme/tools/terraform-provider-tools_0.3.0_linux_amd64.zip';

describe('lock -fs-mirror with a warm hash store', () => {
  let w: E2eWorkspace;
  let mirror: string;
  beforeAll(() => {
    w = e2eWorkspace(undefined, {});
    mirror = join(w.base, 'mirror');
    cpSync(FIXTURE_MIRROR, mirror, { recursive: true });
  });
  afterAll(() => w.remove());

  const lock = (dir: string, env: Record<string, string>) =>
    runCli(['-flavor=terraform', 'lock', `-fs-mirror=${mirror}`, ...PLATFORMS], {
      cwd: dir,
      env: { ...w.env, ...env },
    });

  it('a second lock takes both packages from the store (no hashing): the same lock file', async () => {
    const store = { PROVKIT_HASH_STORE: join(w.base, 'store') };
    const tiny = { PROVKIT_ZIP_LIMITS: 'bytes=1' };
    // The control: without the store, the limit refuses the packages.
    const control = await lock(
      w.project('control', { 'main.tf': requiresTf({ tools: 'registry.example.test/acme/tools' }) }),
      tiny,
    );
    expect(control.code).toBe(1);
    expect(control.stderr).toMatch(/limit/i);

    const first = w.project('first', { 'main.tf': requiresTf({ tools: 'registry.example.test/acme/tools' }) });
    expect((await lock(first, store)).code).toBe(0);
    const second = w.project('second', { 'main.tf': requiresTf({ tools: 'registry.example.test/acme/tools' }) });
    const r = await lock(second, { ...store, ...tiny });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(readFileSync(join(second, '.terraform.lock.hcl'), 'utf8')).toBe(
      readFileSync(join(first, '.terraform.lock.hcl'), 'utf8'),
    );
    expect(w.tmpLeftovers()).toEqual([]);
  });

  it('an archive whose bytes changed is not served from the store: hashed again (and refused under the limit)', async () => {
    const store = { PROVKIT_HASH_STORE: join(w.base, 'store-2') };
    const first = w.project('changed-1', { 'main.tf': requiresTf({ tools: 'registry.example.test/acme/tools' }) });
    expect((await lock(first, store)).code).toBe(0);
    // Same name, other bytes (a zip comment appended: still a valid zip, another zh:).
    const path = join(mirror, ARCHIVE);
    const bytes = readFileSync(path);
    const withComment = Buffer.from(bytes);
    // The end-of-central-directory record's comment length is its last 2 bytes (empty comment).
    withComment.writeUInt16LE(4, withComment.length - 2);
    writeFileSync(path, Buffer.concat([withComment, Buffer.from('edit')]));
    try {
      const second = w.project('changed-2', { 'main.tf': requiresTf({ tools: 'registry.example.test/acme/tools' }) });
      const r = await lock(second, { ...store, PROVKIT_ZIP_LIMITS: 'bytes=1' });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('linux_amd64');
      // Without the limit the changed archive is hashed again: a comment changes the zh:, not the
      // h1: (the contents), so the lock file (h1: only, as terraform's) is the same.
      const third = w.project('changed-3', { 'main.tf': requiresTf({ tools: 'registry.example.test/acme/tools' }) });
      expect((await lock(third, store)).code).toBe(0);
      expect(readFileSync(join(third, '.terraform.lock.hcl'), 'utf8')).toBe(
        readFileSync(join(first, '.terraform.lock.hcl'), 'utf8'),
      );
    } finally {
      writeFileSync(path, bytes);
    }
    expect(w.tmpLeftovers()).toEqual([]);
  });
});
