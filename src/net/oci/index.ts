/**
 * `src/net/oci`: the OCI Distribution protocol as far as provider mirrors
 * need it — repository names, URI templates, authentication, a registry
 * client (read and publish). Knows nothing of providers.
 */
export { OciAuth, parseChallenge, repositoryScope } from './auth.js';
export type { Challenge, OciCredentials, OciCredentialsLookup } from './auth.js';
export {
  ALL_MANIFEST_TYPES,
  DEFAULT_CHUNK_SIZE,
  MAX_MANIFEST_BYTES,
  MediaType,
  OciClient,
  OciRepository,
  ociErrors,
  TAG_LIST_LIMITS,
} from './client.js';
export type { ChunkReader, FetchedManifest, ManifestCondition, OciClientOptions } from './client.js';
export {
  InvalidReferenceError,
  isValidTag,
  matchesDigest,
  parseDigest,
  parseRepositoryAddress,
  sha256Digest,
  tagVersion,
  validateRegistry,
  validateRepository,
  versionTag,
} from './reference.js';
export type { Digest, RepositoryAddress } from './reference.js';
export { expandLevel1, templateVariables, validateLevel1 } from './uri-template.js';
