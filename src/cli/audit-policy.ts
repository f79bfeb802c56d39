/**
 * The audit policy of one root module, as `audit` and `keys` find it
 * (docs/provenance.md "The policy"): the nearest `provkit.hcl` in the root's
 * directory or above it, up to the working directory (config/policy.ts
 * `findPolicy`), so a root with its own file is judged by it and never by
 * the working directory's. Its file is named as the working directory sees
 * it (`svc/a/provkit.hcl`), which is how the outputs say which policy file
 * applied to which root.
 */
import { type AuditPolicy, findPolicy, type PolicyResult } from '../config/index.js';
import { placed } from './diagnostics.js';
import type { Renderer } from './render.js';

/** The policy files one run has read, by path: roots that share a file read it once. */
export type PolicyCache = Map<string, Promise<PolicyResult>>;

/**
 * The audit policy of the root module in `dir` (absolute), found from `cwd`:
 * `{}` when no policy file applies (the default policy), `failed` when the
 * file that applies has errors (its diagnostics rendered on `ui`).
 */
export async function rootAuditPolicy(
  dir: string,
  cwd: string,
  ui: Renderer,
  cache: PolicyCache,
): Promise<{ readonly policy?: AuditPolicy } | 'failed'> {
  const found = await findPolicy(dir, cwd, { cache });
  if (found.diagnostics.some((d) => d.severity === 'error')) {
    ui.diagnostics(found.diagnostics.map((d) => placed(d)));
    return 'failed';
  }
  return found.audit === undefined ? {} : { policy: found.audit };
}
