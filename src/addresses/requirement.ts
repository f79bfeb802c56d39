/**
 * A provider requirement: one provider and the constraints on its version
 * (OpenTofu's `getproviders.Requirements`, one entry). The one definition:
 * the configuration produces them (src/config/requirements.ts), the lock
 * file is checked against them (src/lockfile/verdict.ts), the runs select
 * versions by them (src/installer/).
 */
import type { VersionConstraints } from './constraints.js';
import type { ProviderAddress } from './provider.js';

/** One provider a configuration requires, with the intersection of every constraint on it. */
export interface Requirement {
  /** The provider's fully qualified address. */
  readonly provider: ProviderAddress;
  /** Every constraint the configuration puts on it, intersected (empty: any version). */
  readonly constraints: VersionConstraints;
}
