/**
 * Writes the fixed OpenPGP test keys the fake registry signs SHA256SUMS with:
 *
 *   npx tsx test/support/servers/gen-keys.ts [OUT_DIR]   (default: test/fixtures/keys/)
 *
 * - `main.asc`: RSA 3072, no expiry: the key a registry lists in
 *   `signing_keys` (RSA, like the HashiCorp and most provider keys).
 * - `other.asc`: Ed25519 (v4, "legacy" curve): signs when a test wants a key
 *   the registry does **not** list (`authentication signature from unknown issuer`).
 * - `expired.asc`: Ed25519 created 2020-01-01 and expiring a day later;
 *   signatures are dated within that day (OpenTofu's expired-key leniency,
 *   docs/reference.md §8.5 item 119).
 *
 * Private keys are stored unprotected: they are test fixtures with no value.
 * Key generation is slow (RSA), which is why the keys are checked in instead
 * of being made per test run. Re-running writes new keys (tests read the key
 * IDs from the files, so nothing else needs to change).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import * as openpgp from 'openpgp';

export const KEY_NAMES = ['main', 'other', 'expired'] as const;
export type TestKeyName = (typeof KEY_NAMES)[number];

/** When the expired key was made, and for how long it was valid. */
export const EXPIRED_KEY_CREATED = new Date('2020-01-01T00:00:00Z');
export const EXPIRED_KEY_LIFETIME_S = 86_400;

export async function generateKeys(outDir: string): Promise<void> {
  await mkdir(outDir, { recursive: true });
  const main = await openpgp.generateKey({
    type: 'rsa',
    rsaBits: 3072,
    userIDs: [{ name: 'provkit test registry', email: 'main@registry.example.test' }],
    format: 'armored',
  });
  const other = await openpgp.generateKey({
    type: 'ecc',
    curve: 'ed25519Legacy',
    userIDs: [{ name: 'provkit unlisted key', email: 'other@registry.example.test' }],
    format: 'armored',
  });
  const expired = await openpgp.generateKey({
    type: 'ecc',
    curve: 'ed25519Legacy',
    userIDs: [{ name: 'provkit expired key', email: 'expired@registry.example.test' }],
    date: EXPIRED_KEY_CREATED,
    keyExpirationTime: EXPIRED_KEY_LIFETIME_S,
    format: 'armored',
  });
  await writeFile(join(outDir, 'main.asc'), main.privateKey);
  await writeFile(join(outDir, 'other.asc'), other.privateKey);
  await writeFile(join(outDir, 'expired.asc'), expired.privateKey);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const out = process.argv[2] ?? fileURLToPath(new URL('../../fixtures/keys/', import.meta.url));
  await generateKeys(out);
  process.stdout.write(`wrote ${KEY_NAMES.map((k) => `${k}.asc`).join(', ')} to ${out}\n`);
}
