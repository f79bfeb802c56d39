/**
 * Small helpers the HTTP-based sources share: media types, JSON objects, URL
 * hosts in comparison form, path building, and the size limits of metadata
 * documents.
 */
import { domainToUnicode } from 'node:url';

import { tryHostnameForComparison, type Hostname } from '../addresses/index.js';
import { isProvkitError, ProvkitError, ErrorCode } from '../errors.js';
import { isRecord } from '../go/index.js';

/**
 * Go `mime.ParseMediaType`, reduced to what the sources need: the lower-case
 * media type, or undefined for a missing or malformed header.
 */
export function mediaType(header: string | null): string | undefined {
  if (header === null) return undefined;
  const type = (header.split(';')[0] ?? '').trim().toLowerCase();
  if (!/^[!#$%&'*+.^_`|~0-9a-z-]+\/[!#$%&'*+.^_`|~0-9a-z-]+$/.test(type)) return undefined;
  return type;
}

/** Parses a JSON object; undefined when the text is not JSON or not an object. */
export function jsonObject(body: Buffer | string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(typeof body === 'string' ? body : body.toString('utf8'));
    return isRecord(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/** The comparison-form hostname of a URL's host (`xn--…` labels decoded first), or undefined. */
export function urlHostname(url: URL): Hostname | undefined {
  const host = domainToUnicode(url.hostname) || url.hostname;
  const r = tryHostnameForComparison(url.port === '' ? host : `${host}:${url.port}`);
  return r.ok ? r.hostname : undefined;
}

/**
 * Joins path segments, percent-encoding what a path segment may not hold
 * (namespaces and types may be Unicode) but leaving RFC 3986 `pchar`
 * punctuation such as `:` and `@` as is, like Go's URL path escaping.
 */
export function encodePath(...segments: readonly string[]): string {
  return segments
    .map((s) =>
      encodeURIComponent(s).replace(/%(21|24|26|27|28|29|2A|2B|2C|3A|3B|3D|40)/gi, (m) => decodeURIComponent(m)),
    )
    .join('/');
}

/** `basename` of a URL's (decoded) path, as Go `path.Base(u.Path)`. */
export function urlBasename(url: URL): string {
  const path = url.pathname.replace(/\/+$/, '');
  const base = path.slice(path.lastIndexOf('/') + 1);
  try {
    return decodeURIComponent(base) || '/';
  } catch {
    return base || '/';
  }
}

/**
 * Headers of a JSON API request to a registry or network mirror: `Accept`,
 * and `X-Terraform-Version` when the caller names a version (docs/reference.md §4).
 */
export function jsonApiHeaders(terraformVersion: string | undefined): Record<string, string> {
  return {
    accept: 'application/json',
    ...(terraformVersion === undefined ? {} : { 'x-terraform-version': terraformVersion }),
  };
}

const MiB = 1024 * 1024;

/**
 * The most bytes read of each metadata document (pinned by test/e2e/metadata-limits.test.ts). The reference
 * reads all but discovery without a limit (`io.ReadAll`), so a response
 * without end grows the process until it dies. The limits are enforced while
 * the body streams (`RequestOptions.maxBytes`: a declared `Content-Length`
 * over the limit is refused before any byte is read, a body without one is
 * cut at the limit), so memory stays bounded whatever a server sends. They
 * are generous: the largest real documents (registry.terraform.io's
 * `hashicorp/aws` version list, one to two MB) are far below them.
 */
export const METADATA_LIMITS = {
  /** `/.well-known/terraform.json`: the reference's own limit (opentofu/svchost `disco/disco.go`, `maxDiscoDocBytes`). */
  discovery: 1 * MiB,
  /** A registry's `NS/TYPE/versions`. */
  versions: 16 * MiB,
  /** A registry's `NS/TYPE/VERSION/download/OS/ARCH` (signing keys, OpenTofu's `packages`). */
  download: 4 * MiB,
  /** A `SHA256SUMS` document (one line per file of a release). */
  checksums: 4 * MiB,
  /** A `SHA256SUMS.sig` detached signature (hundreds of bytes). */
  signature: 1 * MiB,
  /** A network mirror's `HOST/NS/TYPE/index.json` (the versions). */
  mirrorIndex: 16 * MiB,
  /** A network mirror's `HOST/NS/TYPE/VERSION.json` (archives per platform). */
  mirrorVersion: 4 * MiB,
} as const;

export type MetadataKind = keyof typeof METADATA_LIMITS;

const METADATA_NAMES: Record<MetadataKind, string> = {
  discovery: 'service discovery document',
  versions: 'provider version list',
  download: 'provider download metadata',
  checksums: 'SHA256SUMS document',
  signature: 'SHA256SUMS signature',
  mirrorIndex: 'provider mirror index',
  mirrorVersion: 'provider mirror version index',
};

/** `16 MiB (16777216 bytes)`. */
function formatLimit(bytes: number): string {
  return bytes % MiB === 0 ? `${bytes / MiB} MiB (${bytes} bytes)` : `${bytes} bytes`;
}

/**
 * The client's `NET_RESPONSE_TOO_LARGE` for a metadata document of `kind`,
 * restated for the user: what the document is, its URL, the limit (and the
 * declared size when known), and a hint. Other errors are returned as they are.
 */
export function metadataTooLarge(err: unknown, kind: MetadataKind): unknown {
  if (!isProvkitError(err, ErrorCode.NET_RESPONSE_TOO_LARGE)) return err;
  const limit = METADATA_LIMITS[kind];
  const name = METADATA_NAMES[kind];
  const size = err.found === undefined ? 'larger than' : `${err.found} bytes, more than`;
  return new ProvkitError(
    ErrorCode.NET_RESPONSE_TOO_LARGE,
    `the ${name} at ${err.url ?? 'an unknown URL'} is ${size} ${formatLimit(limit)}, the most provkit reads for one`,
    {
      ...(err.url === undefined ? {} : { url: err.url }),
      expected: `at most ${limit} bytes`,
      ...(err.found === undefined ? {} : { found: `${err.found} bytes` }),
      hint: `real ${name}s are far smaller; check that this host or URL serves a provider registry or mirror`,
      cause: err,
    },
  );
}
