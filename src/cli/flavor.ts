/**
 * Which flavor a run has: `-flavor`, else `PROVKIT_FLAVOR`, else the
 * project's: a directory whose `.terraform.lock.hcl` was written by
 * `terraform init` (its header), or lists providers of
 * `registry.terraform.io` only, is a terraform project (default registry
 * host, lock-file header, product name in messages); anything else gets the
 * default, tofu. An inferred terraform flavor comes with the reason, which
 * the run reports (src/cli/main.ts).
 */
import { join } from 'node:path';

import { DEFAULT_FLAVOR, FLAVOR_ENV_VAR, type Flavor, resolveFlavor } from '../addresses/index.js';
import { LOCK_FILE_NAME, lockFileHeader } from '../lockfile/index.js';
import { readRegularFileSync } from '../fs/read.js';

export interface FlavorChoice {
  readonly flavor: Flavor;
  /** Why, when the flavor was inferred from the project rather than the default. */
  readonly reason?: string;
}

/** @throws ProvkitError INVALID_FLAVOR for a bad `-flavor` or `PROVKIT_FLAVOR`. */
export function chooseFlavor(
  flag: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
  cwd: string,
): FlavorChoice {
  const fromEnv = env[FLAVOR_ENV_VAR];
  if (flag !== undefined || (fromEnv !== undefined && fromEnv !== '')) return { flavor: resolveFlavor(flag, env) };
  let text: string;
  try {
    // Regular files only, bounded (fs/read.ts): a FIFO here would stop the process before any signal handler runs.
    text = readRegularFileSync(join(cwd, LOCK_FILE_NAME)).toString('utf8');
  } catch {
    return { flavor: DEFAULT_FLAVOR };
  }
  if (text.startsWith(lockFileHeader('terraform'))) {
    return { flavor: 'terraform', reason: `${LOCK_FILE_NAME} was written by "terraform init"` };
  }
  if (text.startsWith(lockFileHeader('tofu'))) return { flavor: 'tofu' };
  const hosts = [...text.matchAll(/^provider\s+"([^"/]+)\//gm)].map((m) => m[1]!.toLowerCase());
  if (hosts.length > 0 && hosts.every((h) => h === 'registry.terraform.io')) {
    return { flavor: 'terraform', reason: `every provider in ${LOCK_FILE_NAME} is from registry.terraform.io` };
  }
  return { flavor: DEFAULT_FLAVOR };
}
