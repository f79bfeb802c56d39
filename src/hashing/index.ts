/**
 * Hashing core: `zh:` and `h1:` of provider packages, exactly as the reference
 * computes them. Pure algorithm (h1.ts) with thin adapters for zips and
 * directories; a worker pool for parallel hashing. Does not fetch, extract or
 * decide trust: callers do.
 */
export * from './hash.js';
export * from './h1.js';
export * from './zh.js';
export {
  hashZipForms,
  hashZipPackage,
  zhOfPackage,
  containsDotDot,
  isAbsoluteName,
  cleanEntryPath,
} from './zip-package.js';
export type { FormResult, HashWarning, ZipForms, ZipPackageHashes, ZipHashOptions } from './zip-package.js';
export { hashPackageDir, listPackageFiles } from './dir-package.js';
export { DEFAULT_ZIP_LIMITS, type ZipLimits } from './zip-reader.js';
export { createHashPool, type HashPool, type HashPoolOptions, type ZipStream } from './pool.js';
export { hashPath, hashPaths, type PathHashResult } from './paths.js';
export { openHashStore, type HashStore, type HashStoreOptions, type StoredHashes } from './store.js';
export * from './disposition.js';
