/**
 * The fixed OpenPGP test keys of `test/fixtures/keys/` (written by
 * `gen-keys.ts`), loaded once per process, and detached signing as the
 * registries publish it (`SHA256SUMS.sig`: a binary detached signature).
 */
import { readFile } from 'node:fs/promises';

import * as openpgp from 'openpgp';

import { EXPIRED_KEY_CREATED, type TestKeyName } from './gen-keys.js';

export type { TestKeyName } from './gen-keys.js';

export interface TestKey {
  readonly name: TestKeyName;
  readonly privateKey: openpgp.PrivateKey;
  /** The armored public key, as a registry lists it in `signing_keys.gpg_public_keys[].ascii_armor`. */
  readonly publicArmored: string;
  /** 16 upper-case hex digits of the primary key ID (what the reference reports). */
  readonly keyId: string;
  /** A date at which the key is valid (now, or within the expired key's one day). */
  readonly signingDate: Date;
}

const KEYS_DIR = new URL('../../fixtures/keys/', import.meta.url);
const cache = new Map<TestKeyName, Promise<TestKey>>();

export function testKey(name: TestKeyName): Promise<TestKey> {
  let p = cache.get(name);
  if (!p) {
    p = (async () => {
      const privateKey = await openpgp.readPrivateKey({
        armoredKey: await readFile(new URL(`${name}.asc`, KEYS_DIR), 'utf8'),
      });
      return {
        name,
        privateKey,
        publicArmored: privateKey.toPublic().armor(),
        keyId: privateKey.getKeyID().toHex().toUpperCase(),
        signingDate: name === 'expired' ? new Date(EXPIRED_KEY_CREATED.getTime() + 3_600_000) : new Date(),
      };
    })();
    cache.set(name, p);
  }
  return p;
}

/** A binary detached signature of `data` by `key`, dated when the key is valid. */
export async function signDetached(data: Uint8Array, key: TestKey): Promise<Buffer> {
  const sig = await openpgp.sign({
    message: await openpgp.createMessage({ binary: data }),
    signingKeys: key.privateKey,
    detached: true,
    format: 'binary',
    date: key.signingDate,
  });
  return Buffer.from(sig);
}
