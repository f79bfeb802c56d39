/**
 * Fetching a package any source described, and authenticating it (fetch.ts
 * says how the steps divide the work).
 */
export { authenticateArchive, localDisposition } from './authenticate.js';
export type { Verified } from './authenticate.js';
export { checkFetchedFor, expectedZh, storedArchive } from './fetched.js';
export type {
  FetchedArchive,
  FetchedBytes,
  FetchedDirectory,
  FetchedForms,
  FetchedPackage,
  PackageIdentity,
} from './fetched.js';
export { fetchPackage, fetchPackageAhead } from './fetch.js';
export type { FetchOptions, PackageAhead } from './fetch.js';
export { poolHashing } from './strategy.js';
export type {
  ArchiveHashing,
  FetchedWith,
  FormsWhenUnauthenticatedStrategy,
  ZhOnlyStrategy,
  ZipHasher,
  ZipHashesStrategy,
} from './strategy.js';
