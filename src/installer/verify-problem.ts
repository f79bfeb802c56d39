/**
 * What `provkit verify` reports (installer/verify.ts, oci-verify.ts): one
 * {@link VerifyProblem} per problem, with a stable code. Kept apart from the
 * run so that the events (installer/events.ts) can name them while the run
 * emits events.
 */
import type { Platform, ProviderAddress, Version } from '../addresses/index.js';

/**
 * What a {@link VerifyProblem} is, stable across releases: each code's meaning is listed in the module comment of
 * src/installer/verify.ts (configuration vs lock, mirror coverage, hashes the lock lacks, index files, packages
 * that cannot be hashed).
 */
export type VerifyProblemCode =
  | 'CONFIG_NOT_LOCKED'
  | 'CONFIG_CONSTRAINTS_CHANGED'
  | 'CONFIG_LOCK_MISMATCH'
  | 'VERSION_NOT_IN_MIRROR'
  | 'PLATFORM_NOT_IN_MIRROR'
  | 'LOCK_MISSING_H1'
  | 'LOCK_MISSING_ZH'
  | 'INDEX_MISMATCH'
  | 'INDEX_MISSING_VERSION'
  | 'INDEX_MISSING_PACKAGE'
  | 'INDEX_MISSING_ARCHIVE'
  | 'INDEX_INVALID'
  | 'H1_FORMS_DIFFER'
  | 'PACKAGE_REFUSED'
  | 'LOCK_MISSING_PLATFORM';

/** One problem; rendered as `PROVIDER [VERSION [PLATFORM]]: MESSAGE`. */
export interface VerifyProblem {
  /** The provider the problem is about. */
  readonly provider: ProviderAddress;
  /**
   * The locked version it is about; undefined for a problem about the provider as a whole (a requirement the lock
   * lacks).
   */
  readonly version: Version | undefined;
  /** The platform it is about; undefined when it is about no single package. */
  readonly platform: Platform | undefined;
  /** What is wrong (see {@link VerifyProblemCode}). */
  readonly code: VerifyProblemCode;
  /**
   * One line saying it, naming the file or hash where one is involved (not escaped: the caller escapes it for a
   * terminal).
   */
  readonly message: string;
}
