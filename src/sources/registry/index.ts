/**
 * The provider registry protocol v1: service discovery, the registry source,
 * SHA256SUMS reading and signature checking.
 */
export { acceptableHashes, findChecksum, goFields } from './checksums.js';
export type { AcceptableHashes, ChecksumLine } from './checksums.js';
export { DiscoveredHost, ServiceDiscovery } from './discovery.js';
export type { ServiceDiscoveryOptions, ServiceMap } from './discovery.js';
export { RegistrySource } from './registry-source.js';
export type { RegistrySourceOptions } from './registry-source.js';
export { checkChecksumsSignature, openSignatureCache, signaturePolicy, signatureSwitchesFromEnv } from './signature.js';
export type {
  CachedVerification,
  SignatureCache,
  SignatureCheck,
  SignaturePolicy,
  SignatureSwitches,
  SigningKey,
} from './signature.js';
