/**
 * Authenticating a complete archive as its {@link PackageMeta.authentication}
 * demands (docs/reference.md §4.1 items 56 and 58, §4.3 item 69, §5.3):
 * - registry: the `packages` size (when given) and the archive's SHA-256
 *   against `shasum` (`archive has incorrect checksum zh:… (expected zh:…)`).
 *   The SHA256SUMS line and the signature were checked when the metadata was
 *   fetched (see `registry/`), before this runs (an archive downloaded ahead
 *   of them waits for them: archive.ts `authenticatedMeta`); the reference
 *   checks the signature last, after the archive, so when a package has
 *   *both* a bad signature and a bad archive, provkit reports the signature
 *   and the reference the archive.
 * - OCI blob: the layer's size and digest (`provider package does not match
 *   digest sha256:…`, OpenTofu `fetchOCIBlobToTemporaryFile`);
 * - network mirror: at least one listed `zh:` or `h1:` must match the archive;
 *   `h1:` is compared with the zip form (`dirhash.HashZip`, as the reference)
 *   and, as a deliberate extension, also with the extracted form (what a
 *   registry's `packages` h1 and lock files hold), so mirrors that copied
 *   those hashes work. Matching hashes become `verified-locally`.
 */
import { type Disposition, hashZipPackage, type Hash, type ZipPackageHashes } from '../../hashing/index.js';
import { redactURL } from '../../net/index.js';
import { ErrorCode } from '../../errors.js';
import { sourceError, type PackageMeta, type SourceErrorContext, type TrustedHash } from '../source.js';

/** What authentication verified: its hashes, and the zip's hashes when it needed them. */
export interface Verified {
  hashes: TrustedHash[];
  zipHashes?: ZipPackageHashes;
}

/**
 * Checks a complete archive against the metadata's authentication and returns
 * the hashes it verified. Exported for re-authenticating a cached archive.
 *
 * @throws {ProvkitError} `CHECKSUM_MISMATCH` naming provider, version, platform.
 */
export async function authenticateArchive(
  meta: PackageMeta,
  archivePath: string,
  got: { readonly zh: Hash; readonly size: number },
  hashZip: (path: string) => Promise<ZipPackageHashes> = hashZipPackage,
): Promise<Verified> {
  const auth = meta.authentication;
  const ctx = fetchContext(meta);
  const local: TrustedHash = { hash: got.zh, trust: localDisposition(meta), platform: meta.platform };
  if (auth === undefined) return { hashes: [] };
  if (auth.kind === 'registry') {
    if (auth.packageSize !== undefined && auth.packageSize !== got.size) {
      throw sourceError(
        ErrorCode.CHECKSUM_MISMATCH,
        `registry response indicates a package of size ${auth.packageSize}, but received a package of size ${got.size}`,
        { ...ctx, expected: String(auth.packageSize), found: String(got.size) },
      );
    }
    if (got.zh.value !== auth.sha256) {
      throw sourceError(
        ErrorCode.CHECKSUM_MISMATCH,
        `archive has incorrect checksum ${got.zh.text} (expected zh:${auth.sha256})`,
        {
          ...ctx,
          expected: `zh:${auth.sha256}`,
          found: got.zh.text,
        },
      );
    }
    return { hashes: [local] };
  }
  if (auth.kind === 'oci-blob') {
    if (got.size !== auth.size) {
      throw sourceError(
        ErrorCode.CHECKSUM_MISMATCH,
        `fetching provider package blob ${auth.digest}: incorrect response size: expected ${auth.size} bytes, but got ${got.size} bytes`,
        {
          ...ctx,
          expected: String(auth.size),
          found: String(got.size),
        },
      );
    }
    if (`sha256:${got.zh.value}` !== auth.digest) {
      throw sourceError(
        ErrorCode.CHECKSUM_MISMATCH,
        `fetching provider package blob ${auth.digest}: provider package does not match digest ${auth.digest}`,
        {
          ...ctx,
          expected: `zh:${auth.digest.slice('sha256:'.length)}`,
          found: got.zh.text,
        },
      );
    }
    return { hashes: [local] };
  }
  // Network mirror hashes.
  const matched: TrustedHash[] = [];
  let zipHashes: ZipPackageHashes | undefined;
  for (const h of auth.hashes) {
    if (h.scheme === 'zh:') {
      if (h.text === got.zh.text) matched.push({ hash: h, trust: localDisposition(meta), platform: meta.platform });
      continue;
    }
    // eslint-disable-next-line no-await-in-loop -- computed at most once, only when an h1 is listed
    zipHashes ??= await hashZip(archivePath);
    const forms = [zipHashes.h1Zip, zipHashes.h1].flatMap((f) => (f.ok ? [f.hash.text] : []));
    if (forms.includes(h.text)) matched.push({ hash: h, trust: localDisposition(meta), platform: meta.platform });
  }
  if (matched.length === 0) {
    const [only] = auth.hashes;
    const message =
      auth.hashes.length === 1 && only !== undefined
        ? `provider package doesn't match the expected checksum ${JSON.stringify(only.text)}`
        : "provider package doesn't match the any of the expected checksums";
    throw sourceError(ErrorCode.CHECKSUM_MISMATCH, message, {
      ...ctx,
      expected: auth.hashes.map((h) => h.text).join(', '),
      found: got.zh.text,
    });
  }
  return { hashes: matched, ...(zipHashes === undefined ? {} : { zipHashes }) };
}

/**
 * What a hash computed here from the package's bytes is (hashing/disposition.ts):
 * `verified-locally` when a verified signature covered the bytes' `zh:` (a
 * registry package whose SHA256SUMS signature verified), else
 * `computed-locally`; either way with where the bytes came from.
 */
export function localDisposition(meta: PackageMeta): Disposition {
  const loc = meta.location;
  const from = loc.kind === 'http' ? redactURL(loc.url) : loc.path;
  const auth = meta.authentication;
  return auth?.kind === 'registry' && auth.signature.kind === 'signed'
    ? { kind: 'verified-locally', from, keyId: auth.signature.keyId }
    : { kind: 'computed-locally', from };
}

/** The context every error about `meta`'s fetch carries: the package and where its bytes are. */
export function fetchContext(meta: PackageMeta): SourceErrorContext {
  return { provider: meta.provider, version: meta.version, platform: meta.platform, ...locationContext(meta) };
}

function locationContext(meta: PackageMeta): { url?: string; file?: string } {
  const loc = meta.location;
  // Never a password in output: a download URL may carry userinfo (net/url.ts `splitUserinfo`).
  return loc.kind === 'http' ? { url: redactURL(loc.url) } : { file: loc.path };
}
