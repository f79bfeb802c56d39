// Remembered signature checks (src/sources/registry/signature.ts,
// openSignatureCache): a clean verification is kept and stands, without
// openpgp, until the first expiry it relied on; anything else is checked
// again; the cache key covers document, signature and keys.
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { parseProviderSource } from '../../src/addresses/index.js';
import {
  checkChecksumsSignature,
  openSignatureCache,
  signaturePolicy,
  type SignatureCache,
} from '../../src/sources/index.js';
import { signDetached, testKey } from '../support/servers/keys.js';

const provider = parseProviderSource('registry.example.test/acme/demo', 'terraform');
const document = Buffer.from('0123abcd  terraform-provider-demo_1.0.0_linux_amd64.zip\n');

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'provkit-sigcache-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** A cache that counts its traffic. */
function counted(inner: SignatureCache): SignatureCache & { hits: number; puts: number } {
  const c = {
    hits: 0,
    puts: 0,
    async get(key: string) {
      const v = await inner.get(key);
      if (v) c.hits += 1;
      return v;
    },
    async put(key: string, value: Parameters<SignatureCache['put']>[1]) {
      c.puts += 1;
      await inner.put(key, value);
    },
  };
  return c;
}

describe('signature cache', () => {
  it('keeps a clean verification and answers from it the next time', async () => {
    const key = await testKey('main');
    const signature = await signDetached(document, key);
    const cache = counted(openSignatureCache(join(dir, 'a')));
    const args = {
      document,
      signature,
      keys: [{ asciiArmor: key.publicArmored }],
      provider,
      policy: signaturePolicy('terraform'),
      cache,
    };
    expect(await checkChecksumsSignature(args)).toEqual({
      kind: 'signed',
      keyId: key.keyId,
      expired: false,
      keyExpires: null,
      fingerprint: key.privateKey.getFingerprint().toUpperCase(),
      warnings: [],
    });
    expect([cache.hits, cache.puts]).toEqual([0, 1]);
    expect(await checkChecksumsSignature(args)).toEqual({
      kind: 'signed',
      keyId: key.keyId,
      expired: false,
      keyExpires: null,
      fingerprint: key.privateKey.getFingerprint().toUpperCase(),
      warnings: [],
    });
    expect([cache.hits, cache.puts]).toEqual([1, 1]);
    expect((await readdir(join(dir, 'a'))).length).toBe(1);
  });

  it('an entry an earlier version wrote (no key expiry, no fingerprint) is checked again and rewritten', async () => {
    const key = await testKey('main');
    const signature = await signDetached(document, key);
    const cache = counted(openSignatureCache(join(dir, 'old')));
    const args = {
      document,
      signature,
      keys: [{ asciiArmor: key.publicArmored }],
      provider,
      policy: signaturePolicy('terraform'),
      cache,
    };
    await checkChecksumsSignature(args);
    const [file] = await readdir(join(dir, 'old'));
    await writeFile(join(dir, 'old', file!), JSON.stringify({ keyId: key.keyId, validUntil: null }));
    expect(await checkChecksumsSignature(args)).toMatchObject({ keyId: key.keyId, keyExpires: null });
    expect([cache.hits, cache.puts]).toEqual([0, 2]);
  });

  it('a changed document, signature or key list is a miss (and a bad signature still fails)', async () => {
    const key = await testKey('main');
    const other = await testKey('other');
    const signature = await signDetached(document, key);
    const cache = counted(openSignatureCache(join(dir, 'b')));
    const base = {
      document,
      signature,
      keys: [{ asciiArmor: key.publicArmored }],
      provider,
      policy: signaturePolicy('terraform'),
      cache,
    };
    await checkChecksumsSignature(base);
    await expect(
      checkChecksumsSignature({ ...base, document: Buffer.concat([document, Buffer.from('x')]) }),
    ).rejects.toMatchObject({ code: 'SIGNATURE_INVALID' });
    await expect(
      checkChecksumsSignature({ ...base, signature: await signDetached(document, other) }),
    ).rejects.toMatchObject({ code: 'SIGNATURE_INVALID' });
    // Another key listed first: checked again (and still signed by the main key).
    expect(
      await checkChecksumsSignature({
        ...base,
        keys: [{ asciiArmor: other.publicArmored }, { asciiArmor: key.publicArmored }],
      }),
    ).toMatchObject({ keyId: key.keyId });
    expect(cache.hits).toBe(0);
  });

  it('a remembered check lapses when the key expires; the expired key is then judged as without a cache', async () => {
    const key = await testKey('expired');
    const signature = await signDetached(document, key);
    const cache = counted(openSignatureCache(join(dir, 'c')));
    const during = { ...signaturePolicy('terraform'), now: () => key.signingDate };
    const args = { document, signature, keys: [{ asciiArmor: key.publicArmored }], provider, cache };
    expect(await checkChecksumsSignature({ ...args, policy: during })).toMatchObject({
      kind: 'signed',
      expired: false,
    });
    expect(await checkChecksumsSignature({ ...args, policy: during })).toMatchObject({
      kind: 'signed',
      expired: false,
    });
    expect(cache.hits).toBe(1);
    // A day later the key has expired: the entry no longer stands.
    const after = { ...signaturePolicy('terraform'), now: () => new Date(key.signingDate.getTime() + 3 * 86_400_000) };
    await expect(checkChecksumsSignature({ ...args, policy: after })).rejects.toMatchObject({
      code: 'SIGNATURE_INVALID',
      message: /expired/,
    });
    // OpenTofu tolerates it with a warning, and does not remember that.
    const tofu = { ...signaturePolicy('tofu'), now: after.now };
    const puts = cache.puts;
    expect(await checkChecksumsSignature({ ...args, policy: tofu })).toMatchObject({ kind: 'signed', expired: true });
    expect(cache.puts).toBe(puts);
  });

  it('unreadable entries are misses', async () => {
    const key = await testKey('main');
    const signature = await signDetached(document, key);
    const base = join(dir, 'd');
    const cache = counted(openSignatureCache(base));
    const args = {
      document,
      signature,
      keys: [{ asciiArmor: key.publicArmored }],
      provider,
      policy: signaturePolicy('terraform'),
      cache,
    };
    await checkChecksumsSignature(args);
    const [file] = await readdir(base);
    for (const bad of [
      '{',
      '{"keyId":"nothex","validUntil":null}',
      '{"keyId":"0123456789ABCDEF","validUntil":"soon"}',
    ]) {
      await writeFile(join(base, file!), bad);
      expect(await checkChecksumsSignature(args)).toMatchObject({ kind: 'signed', keyId: key.keyId });
    }
    expect(cache.hits).toBe(0);
  });
});
