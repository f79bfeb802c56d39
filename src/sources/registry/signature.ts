/**
 * Checking the detached OpenPGP signature of a registry's SHA256SUMS (spec
 * docs/reference.md §8.5 items 116–119, §9 item 124; OpenTofu `package_authentication.go`
 * `signatureAuthentication`), with openpgp.js in place of ProtonMail go-crypto.
 *
 * - Each listed key (`signing_keys.gpg_public_keys[].ascii_armor`) is tried in
 *   turn: an armor that does not parse fails at once (`error decoding signing
 *   key: …`); a signature by another key ("unknown issuer") moves on to the
 *   next key; any other failure is final (`error checking signature: …`).
 * - Keys are not pinned: the registry decides which keys count.
 * - The signature must be a binary detached signature.
 * - Expiry is judged at the current time, as go-crypto does (openpgp.js
 *   alone judges a key at the signature's creation time): an expired key or
 *   signature is tolerated with a warning by OpenTofu unless
 *   `OPENTOFU_ENFORCE_GPG_EXPIRATION=true`, and refused by Terraform.
 * - When the check applies (docs/reference.md §8.5 item 117): Terraform always; OpenTofu when
 *   the registry listed at least one key, or the provider is not on
 *   `registry.opentofu.org`, or `OPENTOFU_ENFORCE_GPG_VALIDATION=true`.
 *   Otherwise OpenTofu skips it (docs/reference.md §8.5 item 118) and the caller records the
 *   SHA256SUMS hashes as registry-reported.
 * - Error texts: Terraform's are the bare reason (`authentication signature
 *   from unknown issuer`); OpenTofu wraps it as `the provider is not signed
 *   with a valid signing key; please contact the provider author (REASON)`.
 *   The reasons from openpgp.js differ from go-crypto's (`Signature
 *   verification failed` where Go says `openpgp: invalid signature: RSA
 *   verification failure`).
 */
import type * as openpgp from 'openpgp';

/** openpgp.js is large (~60 ms to load): loaded on the first signature check only. */
let openpgpModule: Promise<typeof openpgp> | undefined;
const loadOpenpgp = (): Promise<typeof openpgp> => (openpgpModule ??= import('openpgp'));

/**
 * Loads openpgp.js now, in a later turn of the event loop, so that the first
 * signature check does not wait for it: called by a registry source that
 * will check signatures and keeps no {@link SignatureCache} (nothing could
 * spare the load), when its first network exchange (service discovery) has
 * been sent: loading takes the main thread for ~60–100 ms, which then
 * overlaps round trips instead of standing between the first SHA256SUMS
 * and the first download (bench/results-wan.md, the head of the run).
 */
export function preloadSignatureVerifier(): void {
  if (openpgpModule !== undefined) return;
  setImmediate(() => {
    loadOpenpgp().catch(() => {
      // A failed load fails the check that needs it, with its own error.
      openpgpModule = undefined;
    });
  });
}

import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';

import { defaultRegistryHost, flavorInfo, type Flavor, type ProviderAddress } from '../../addresses/index.js';
import { writeFileAtomic } from '../../fs/atomic.js';
import { makeCacheDirectory } from '../../fs/cache-dir.js';
import { readRegularFile } from '../../fs/read.js';
import { ProvkitError, errorText, ErrorCode } from '../../errors.js';

/** One entry of a registry's `signing_keys.gpg_public_keys`. */
export interface SigningKey {
  readonly asciiArmor: string;
  readonly trustSignature?: string;
}

/** How strictly signatures are judged; see {@link signaturePolicy}. */
export interface SignaturePolicy {
  /**
   * The flavor whose rules apply: `terraform` always checks the signature; `tofu` skips it, with a warning, for
   * a package of its default registry that lists no keys (unless `enforceValidation`), and words failures its way.
   */
  readonly flavor: Flavor;
  /** `OPENTOFU_ENFORCE_GPG_VALIDATION=true`: never skip (OpenTofu; Terraform never skips anyway). */
  readonly enforceValidation: boolean;
  /** Refuse expired keys and signatures (Terraform always; OpenTofu with `OPENTOFU_ENFORCE_GPG_EXPIRATION=true`). */
  readonly enforceExpiration: boolean;
  /** The current time (injectable for tests). */
  readonly now?: () => Date;
}

/**
 * OpenTofu's two signature switches, as data: what a caller read from its
 * environment once ({@link signatureSwitchesFromEnv}; the CLI does it at its
 * edge, src/cli/resources.ts) and passes down.
 */
export interface SignatureSwitches {
  /** `OPENTOFU_ENFORCE_GPG_VALIDATION=true`: never skip the check. */
  readonly enforceValidation?: boolean;
  /** `OPENTOFU_ENFORCE_GPG_EXPIRATION=true`: refuse expired keys and signatures. */
  readonly enforceExpiration?: boolean;
}

/**
 * The switches an environment sets (`OPENTOFU_ENFORCE_GPG_VALIDATION`,
 * `OPENTOFU_ENFORCE_GPG_EXPIRATION`; exactly the string `true` counts, as
 * OpenTofu's `os.Getenv(...) == "true"`): the one place their names are read.
 */
export function signatureSwitchesFromEnv(env: Readonly<Record<string, string | undefined>>): SignatureSwitches {
  return {
    enforceValidation: env['OPENTOFU_ENFORCE_GPG_VALIDATION'] === 'true',
    enforceExpiration: env['OPENTOFU_ENFORCE_GPG_EXPIRATION'] === 'true',
  };
}

/** The policy of `flavor` with OpenTofu's switches (Terraform enforces both always). */
export function signaturePolicy(flavor: Flavor, switches: SignatureSwitches = {}): SignaturePolicy {
  return {
    flavor,
    enforceValidation: flavor === 'terraform' || switches.enforceValidation === true,
    enforceExpiration: flavor === 'terraform' || switches.enforceExpiration === true,
  };
}

/**
 * Remembered verifications (see {@link openSignatureCache}): a signature that
 * verified over the same document with the same keys verifies again, until
 * the first expiry of the key, subkey or signature involved.
 */
export interface SignatureCache {
  /** The verification remembered under `key`, if any (an implementation may drop entries at any time). */
  get(key: string): Promise<CachedVerification | undefined>;
  /** Remembers a clean verification under `key`. */
  put(key: string, value: CachedVerification): Promise<void>;
}

/** One remembered verification of a {@link SignatureCache}. */
export interface CachedVerification {
  /** The ID of the key that made the signature. */
  readonly keyId: string;
  /** Milliseconds since the epoch from which the result no longer holds (an expiry), or null. */
  readonly validUntil: number | null;
  /** The key's expiry ({@link SignatureCheck}); an entry without it is checked again. */
  readonly keyExpires?: string | null;
  /** The key's fingerprint (40 upper-case hex digits); an entry without it is checked again. */
  readonly fingerprint?: string;
}

/**
 * A {@link SignatureCache} in `dir`, one atomic JSON file per verification,
 * named by the SHA-256 of the document, the signature and the keys (so any
 * change to any of them is a miss). Only clean successes are kept (valid,
 * nothing expired); failures and expired keys are always checked again. It
 * spares the second run of a command loading openpgp.js (~60 ms) and
 * verifying. Unreadable entries are misses; write failures are ignored.
 */
export function openSignatureCache(dir: string): SignatureCache {
  return {
    async get(key) {
      try {
        const bytes = await readRegularFile(join(dir, `${key}.json`), { maxBytes: 64 * 1024 });
        const v = JSON.parse(bytes.toString('utf8')) as Partial<CachedVerification> | null;
        if (
          v &&
          typeof v.keyId === 'string' &&
          /^[0-9A-F]{16}$/.test(v.keyId) &&
          (v.validUntil === null || typeof v.validUntil === 'number') &&
          (v.keyExpires === null || typeof v.keyExpires === 'string') &&
          typeof v.fingerprint === 'string'
        ) {
          return { keyId: v.keyId, validUntil: v.validUntil, keyExpires: v.keyExpires, fingerprint: v.fingerprint };
        }
      } catch {
        // A miss.
      }
      return undefined;
    },
    async put(key, value) {
      try {
        await makeCacheDirectory(dir, dirname(dir));
        await writeFileAtomic(join(dir, `${key}.json`), Buffer.from(`${JSON.stringify(value)}\n`));
      } catch {
        // Only costs speed.
      }
    },
  };
}

/** What identifies a check's inputs: the document, the signature and the keys, length-prefixed, hashed. */
export function cacheKeyOf(document: Uint8Array, signature: Uint8Array, keys: readonly SigningKey[]): string {
  const h = createHash('sha256').update('provkit signature check v1\0');
  for (const part of [document, signature, ...keys.map((k) => Buffer.from(k.asciiArmor, 'utf8'))]) {
    const len = Buffer.alloc(8);
    len.writeBigUInt64BE(BigInt(part.length));
    h.update(len).update(part);
  }
  return h.digest('hex');
}

/**
 * The outcome: signed by a key (its primary key ID, 16 upper-case hex
 * digits; its fingerprint, 40; when the key expires, ISO 8601, or null for
 * never), or skipped.
 */
export type SignatureCheck =
  | {
      readonly kind: 'signed';
      readonly keyId: string;
      readonly expired: boolean;
      readonly keyExpires: string | null;
      readonly fingerprint: string;
      readonly warnings: readonly string[];
    }
  | { readonly kind: 'skipped'; readonly reason: string; readonly warnings: readonly string[] };

const UNKNOWN_ISSUER = 'authentication signature from unknown issuer';

class Reason extends Error {}

function keyIdOf(key: openpgp.Key): string {
  return key.getKeyID().toHex().toUpperCase();
}

/** The primary key's expiry as ISO 8601, or null when it never expires (`getExpirationTime` gives Infinity or null). */
async function keyExpiresOf(key: openpgp.Key): Promise<string | null> {
  const t = await key.getExpirationTime();
  return t instanceof Date ? t.toISOString() : null;
}

function expiredAt(t: Date | number | null, now: Date): boolean {
  return t instanceof Date && t.getTime() <= now.getTime();
}

/** Whether the (verified) signature's key or the signature itself has expired at `now`, as go-crypto judges it. */
async function expiry(
  key: openpgp.Key,
  signature: openpgp.Signature,
  issuer: openpgp.KeyID,
  now: Date,
): Promise<string | undefined> {
  if (expiredAt(await key.getExpirationTime(), now)) return 'openpgp: key expired';
  if (!key.getKeyID().equals(issuer)) {
    const times = await Promise.all(key.getSubkeys(issuer).map((sub) => sub.getExpirationTime()));
    if (times.some((t) => expiredAt(t, now))) return 'openpgp: key expired';
  }
  for (const pkt of signature.packets) {
    if (!pkt.signatureNeverExpires && pkt.created !== null && pkt.signatureExpirationTime !== null) {
      if (pkt.created.getTime() + pkt.signatureExpirationTime * 1000 <= now.getTime())
        return 'openpgp: signature expired';
    }
  }
  return undefined;
}

/** The first instant the verified key, subkey or signature expires (null: never). */
async function validUntil(
  key: openpgp.Key,
  signature: openpgp.Signature,
  issuer: openpgp.KeyID,
): Promise<number | null> {
  const times: number[] = [];
  const add = (t: Date | number | null): void => {
    if (t instanceof Date) times.push(t.getTime());
  };
  add(await key.getExpirationTime());
  if (!key.getKeyID().equals(issuer))
    (await Promise.all(key.getSubkeys(issuer).map((sub) => sub.getExpirationTime()))).forEach(add);
  for (const pkt of signature.packets) {
    if (!pkt.signatureNeverExpires && pkt.created !== null && pkt.signatureExpirationTime !== null)
      times.push(pkt.created.getTime() + pkt.signatureExpirationTime * 1000);
  }
  return times.length === 0 ? null : Math.min(...times);
}

/**
 * Checks `signature` over `document` with the registry's keys under `policy`
 * (with `cache`, a verification remembered from an earlier run stands while
 * nothing it relied on has expired).
 *
 * @throws {ProvkitError} `SIGNATURE_INVALID`, with the flavor's text, naming
 *   the provider.
 */
export async function checkChecksumsSignature(args: {
  readonly document: Uint8Array;
  readonly signature: Uint8Array;
  readonly keys: readonly SigningKey[];
  readonly provider: ProviderAddress;
  readonly policy: SignaturePolicy;
  readonly signatureUrl?: string;
  readonly cache?: SignatureCache;
}): Promise<SignatureCheck> {
  const { provider, policy } = args;
  const enforce =
    policy.flavor === 'terraform' ||
    args.keys.length > 0 ||
    provider.hostname !== defaultRegistryHost('tofu') ||
    policy.enforceValidation;
  if (!enforce) {
    return {
      kind: 'skipped',
      reason: 'no keys were provided by the registry',
      warnings: [
        `Signature validation was skipped for ${provider.toString()} because the registry provided no GPG keys for it (see https://github.com/opentofu/opentofu/pull/309)`,
      ],
    };
  }
  const cacheKey = args.cache ? cacheKeyOf(args.document, args.signature, args.keys) : undefined;
  const now = (policy.now?.() ?? new Date()).getTime();
  if (args.cache && cacheKey) {
    const hit = await args.cache.get(cacheKey);
    if (
      hit &&
      (hit.validUntil === null || now < hit.validUntil) &&
      hit.keyExpires !== undefined &&
      hit.fingerprint !== undefined
    )
      return {
        kind: 'signed',
        keyId: hit.keyId,
        expired: false,
        keyExpires: hit.keyExpires,
        fingerprint: hit.fingerprint,
        warnings: [],
      };
  }
  try {
    const { check, until } = await findSigningKey(args);
    if (args.cache && cacheKey && check.kind === 'signed' && !check.expired && until !== undefined)
      await args.cache.put(cacheKey, {
        keyId: check.keyId,
        validUntil: until,
        keyExpires: check.keyExpires,
        fingerprint: check.fingerprint,
      });
    return check;
  } catch (err) {
    if (!(err instanceof Reason)) throw err;
    const message =
      policy.flavor === 'tofu'
        ? `the provider is not signed with a valid signing key; please contact the provider author (${err.message})`
        : err.message;
    throw new ProvkitError(ErrorCode.SIGNATURE_INVALID, message, {
      provider: provider.toString(),
      ...(args.signatureUrl === undefined ? {} : { url: args.signatureUrl }),
      cause: err,
    });
  }
}

async function findSigningKey(args: {
  readonly document: Uint8Array;
  readonly signature: Uint8Array;
  readonly keys: readonly SigningKey[];
  readonly provider: ProviderAddress;
  readonly policy: SignaturePolicy;
}): Promise<{ check: SignatureCheck; until?: number | null }> {
  const now = args.policy.now?.() ?? new Date();
  const openpgp = await loadOpenpgp();
  let signature: openpgp.Signature | undefined;
  for (const k of args.keys) {
    let ring: openpgp.Key[];
    try {
      // eslint-disable-next-line no-await-in-loop -- keys are tried in order; the first that verifies wins
      ring = await openpgp.readKeys({ armoredKeys: k.asciiArmor });
    } catch (err) {
      throw new Reason(`error decoding signing key: ${errorText(err)}`);
    }
    try {
      // eslint-disable-next-line no-await-in-loop -- parsed once, on the first key
      signature ??= await openpgp.readSignature({ binarySignature: args.signature });
    } catch (err) {
      throw new Reason(`error checking signature: ${errorText(err)}`);
    }
    const issuers = signature.getSigningKeyIDs();
    const key = ring.find((candidate) =>
      candidate.getKeyIDs().some((id) => issuers.some((issuer) => issuer.equals(id))),
    );
    if (key === undefined) continue;
    const issuer = issuers.find((i) => key.getKeyIDs().some((id) => id.equals(i))) ?? issuers[0];
    try {
      // eslint-disable-next-line no-await-in-loop -- see above
      const message = await openpgp.createMessage({ binary: args.document });
      // eslint-disable-next-line no-await-in-loop -- see above
      const result = await openpgp.verify({
        message,
        signature,
        verificationKeys: key,
        expectSigned: true,
        format: 'binary',
      });
      // eslint-disable-next-line no-await-in-loop -- see above
      await result.signatures[0]?.verified;
    } catch (err) {
      throw new Reason(`error checking signature: ${errorText(err)}`);
    }
    // eslint-disable-next-line no-await-in-loop -- see above
    const expired = issuer === undefined ? undefined : await expiry(key, signature, issuer, now);
    const keyId = keyIdOf(key);
    // eslint-disable-next-line no-await-in-loop -- see above
    const keyExpires = await keyExpiresOf(key);
    const fingerprint = key.getFingerprint().toUpperCase();
    if (expired === undefined) {
      // eslint-disable-next-line no-await-in-loop -- see above
      const until = issuer === undefined ? undefined : await validUntil(key, signature, issuer);
      return {
        check: { kind: 'signed', keyId, expired: false, keyExpires, fingerprint, warnings: [] },
        ...(until === undefined ? {} : { until }),
      };
    }
    if (args.policy.enforceExpiration) throw new Reason(`error checking signature: ${expired}`);
    return {
      check: {
        kind: 'signed',
        keyId,
        expired: true,
        keyExpires,
        fingerprint,
        warnings: [
          `Provider ${args.provider.namespace}/${args.provider.type} (${args.provider.displayHostname}) gpg key expired, this will fail in future versions of ${flavorInfo(args.policy.flavor).productName}`,
        ],
      },
    };
  }
  throw new Reason(UNKNOWN_ISSUER);
}
