/**
 * OCI Distribution names, as OpenTofu reads them: repository addresses
 * (`registry[:port]/path`), tags and digests.
 *
 * - {@link parseRepositoryAddress} is OpenTofu's
 *   `ociauthconfig.ParseRepositoryAddressPrefix`
 *   (opentofu/opentofu internal/command/cliconfig/ociauthconfig/repository_addr.go),
 *   which uses ORAS-Go's reference parser (oras-project/oras-go
 *   registry/reference.go `ParseReference`, `ValidateRegistry`,
 *   `ValidateRepository`): the same checks and the same error texts
 *   (`invalid reference: invalid repository "…"`).
 * - Tags: OCI's `[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}`; a provider version is
 *   the tag with `_` for `+` (opentofu/opentofu
 *   internal/getproviders/oci_registry_mirror_source.go).
 * - Digests: `ALGORITHM:HEX` (opencontainers/go-digest), sha256 and sha512.
 *
 * Pure; no I/O.
 */
import { createHash } from 'node:crypto';

import { goQuote } from '../../go/index.js';

/** ORAS-Go `repositoryRegexp` (from distribution's reference grammar). */
const REPOSITORY = /^[a-z0-9]+(?:(?:[._]|__|[-]*)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:[._]|__|[-]*)[a-z0-9]+)*)*$/;
/** ORAS-Go `tagRegexp` (OCI distribution spec). */
const TAG = /^\w[\w.-]{0,127}$/;
/** A host as Go's `url.ParseRequestURI("dummy://" + host)` keeps it whole: no userinfo, path, query; digits for a port. */
const REGISTRY = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9\-._~!$&'()*+,;=%"<>]+)(?::[0-9]*)?$/;

/** A repository in a registry: `registry` is `host[:port]`, `repository` the path (may be empty for a registry-wide prefix). */
export interface RepositoryAddress {
  /** `host[:port]`, as written in the reference. */
  readonly registry: string;
  /** The repository path within the registry (`providers/hashicorp/aws`); may be empty for a registry-wide prefix. */
  readonly repository: string;
}

/** An invalid reference, worded as ORAS-Go's `errdef.ErrInvalidReference` errors. */
export class InvalidReferenceError extends Error {}

function invalid(what: string): InvalidReferenceError {
  return new InvalidReferenceError(`invalid reference: ${what}`);
}

/** ORAS-Go `Reference.ValidateRegistry` (an empty registry is refused too: it names no host). */
export function validateRegistry(registry: string): void {
  if (registry === '' || !REGISTRY.test(registry)) throw invalid(`invalid registry ${goQuote(registry)}`);
}

/** ORAS-Go `Reference.ValidateRepository`. */
export function validateRepository(repository: string): void {
  if (!REPOSITORY.test(repository)) throw invalid(`invalid repository ${goQuote(repository)}`);
}

/**
 * `registry[/repository]` split and checked; a tag or digest is refused
 * (OpenTofu's `ParseRepositoryAddressPrefix`).
 *
 * @throws {InvalidReferenceError} with ORAS-Go's text.
 */
export function parseRepositoryAddress(addr: string): RepositoryAddress {
  const slash = addr.indexOf('/');
  if (slash < 0) {
    validateRegistry(addr);
    return { registry: addr, repository: '' };
  }
  const registry = addr.slice(0, slash);
  const path = addr.slice(slash + 1);
  let repository = path;
  let reference = '';
  const at = path.indexOf('@');
  if (at >= 0) {
    repository = path.slice(0, at);
    reference = path.slice(at + 1);
    const colon = repository.indexOf(':');
    if (colon >= 0) repository = repository.slice(0, colon);
  } else {
    const colon = path.indexOf(':');
    if (colon >= 0) {
      repository = path.slice(0, colon);
      reference = path.slice(colon + 1);
    }
  }
  validateRegistry(registry);
  validateRepository(repository);
  if (reference !== '') {
    if (at >= 0 ? parseDigest(reference) === undefined : !TAG.test(reference)) {
      throw invalid(at >= 0 ? `invalid digest ${goQuote(reference)}` : `invalid tag ${goQuote(reference)}`);
    }
    throw invalid('artifact tag or digest not allowed');
  }
  return { registry, repository };
}

/** Whether `tag` is a valid OCI tag. */
export function isValidTag(tag: string): boolean {
  return TAG.test(tag);
}

/** The tag of a provider version: `+` (build metadata) written as `_`. */
export function versionTag(version: string): string {
  return version.replaceAll('+', '_');
}

/** The version a tag may stand for (`_` read as `+`); the caller parses it. */
export function tagVersion(tag: string): string {
  return tag.replaceAll('_', '+');
}

const DIGEST_HEX: Record<string, number> = { sha256: 64, sha512: 128 };

/** A parsed digest. */
export interface Digest {
  readonly algorithm: 'sha256' | 'sha512';
  readonly hex: string;
  /** `algorithm:hex`. */
  readonly text: string;
}

/** go-digest `Parse` + `Validate` for the algorithms provkit can compute; undefined when invalid or unsupported. */
export function parseDigest(text: string): Digest | undefined {
  const m = /^([a-z0-9]+(?:[.+_-][a-z0-9]+)*):([a-f0-9]+)$/.exec(text);
  if (!m) return undefined;
  const algorithm = m[1]!;
  const hex = m[2]!;
  if (DIGEST_HEX[algorithm] !== hex.length) return undefined;
  return { algorithm: algorithm as Digest['algorithm'], hex, text };
}

/** `sha256:…` of some bytes. */
export function sha256Digest(bytes: Uint8Array): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

/** Whether `bytes` have digest `d`. */
export function matchesDigest(bytes: Uint8Array, d: Digest): boolean {
  return createHash(d.algorithm).update(bytes).digest('hex') === d.hex;
}
