/**
 * Which flavor a run has, the one rule for a single root and for each root
 * module of `lock -recursive` and `verify -recursive` (README "Global
 * flags"): `-flavor`, else `PROVKIT_FLAVOR`, else what the project's
 * `.terraform.lock.hcl` says (lockfile/flavor.ts: written by `terraform
 * init`, or listing `registry.terraform.io` providers only: terraform),
 * else the default, tofu. An inferred terraform flavor comes with the
 * reason, which the run reports ({@link noteFlavor}) where the flavor
 * changes something.
 */
import { join } from 'node:path';

import { DEFAULT_FLAVOR, FLAVOR_ENV_VAR, type Flavor, resolveFlavor } from '../addresses/index.js';
import { flavorOfLockText, LOCK_FILE_NAME } from '../lockfile/index.js';
import { readRegularFileSync } from '../fs/read.js';
import type { CliIO, GlobalOptions } from './io.js';

export interface FlavorChoice {
  readonly flavor: Flavor;
  /** Why, when the flavor was inferred from the project rather than the default. */
  readonly reason?: string;
}

/**
 * The flavor rule of a command line: a function of the directory a run (or
 * a root module) works in.
 *
 * @throws ProvkitError INVALID_FLAVOR for a bad `-flavor` or `PROVKIT_FLAVOR`.
 */
export function flavorRule(
  flag: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): (dir: string) => FlavorChoice {
  const fromEnv = env[FLAVOR_ENV_VAR];
  if (flag !== undefined || (fromEnv !== undefined && fromEnv !== '')) {
    const given = { flavor: resolveFlavor(flag, env) };
    return () => given;
  }
  return (dir) => {
    let text: string;
    try {
      // Regular files only, bounded (fs/read.ts): a FIFO here would stop the process before any signal handler runs.
      text = readRegularFileSync(join(dir, LOCK_FILE_NAME)).toString('utf8');
    } catch {
      return { flavor: DEFAULT_FLAVOR };
    }
    const inferred = flavorOfLockText(text, LOCK_FILE_NAME);
    return inferred?.reason !== undefined ? inferred : { flavor: inferred?.flavor ?? DEFAULT_FLAVOR };
  };
}

/**
 * Says once, before the command's own output, that the flavor was inferred
 * from the project and why: on stderr for people (stdout stays the
 * reference's), a `flavor` message on the `-json` streams. Called by the
 * commands whose work the flavor changes (default registry host, lock-file
 * header, messages), once their arguments are known to be valid; not by
 * `hash`, `bundle import`, `version`, nor on a usage error.
 */
export function noteFlavor(io: CliIO, globals: GlobalOptions): void {
  const reason = globals.flavorReason;
  if (reason === undefined) return;
  const { flavor } = globals;
  for (const ui of io.output?.jsonUIs() ?? [])
    ui.message('info', `Using the ${flavor} flavor: ${reason}`, 'flavor', { flavor, reason });
  if (io.output?.json !== true)
    io.stderr.write(`provkit: using the ${flavor} flavor: ${reason} (-flavor or ${FLAVOR_ENV_VAR} to choose).\n`);
}
