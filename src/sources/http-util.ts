/**
 * Small helpers the HTTP-based sources share: media types, JSON objects, URL
 * hosts in comparison form, and path building.
 */
import { domainToUnicode } from 'node:url';

import { tryHostnameForComparison, type Hostname } from '../addresses/index.js';

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
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
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
  return segments.map((s) => encodeURIComponent(s).replace(/%(21|24|26|27|28|29|2A|2B|2C|3A|3B|3D|40)/gi, (m) => decodeURIComponent(m))).join('/');
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
 * and `X-Terraform-Version` when the caller names a version (spec §4).
 */
export function jsonApiHeaders(terraformVersion: string | undefined): Record<string, string> {
  return { accept: 'application/json', ...(terraformVersion === undefined ? {} : { 'x-terraform-version': terraformVersion }) };
}
