/**
 * What a lock file says about the tool that wrote it: the flavor inferred
 * from a project's `.terraform.lock.hcl` (README "Global flags", src/cli/flavor.ts
 * applies it to a run and to each root module of `lock -recursive` and
 * `verify -recursive`). Pure: the text in, the inference out.
 *
 * - the header `terraform init` writes ({@link lockFileHeader}): terraform;
 * - the header `tofu init` writes: tofu;
 * - no header of either, and every provider of `registry.terraform.io`:
 *   terraform (a lock file written by terraform before its header, or by hand);
 * - anything else says nothing (undefined).
 */
import type { Flavor } from '../addresses/index.js';
import { LOCK_FILE_NAME } from './file.js';
import { lockFileHeader } from './serialize.js';

/** A flavor and, for one inferred as terraform, why (said to the user). */
export interface InferredFlavor {
  readonly flavor: Flavor;
  /** Set when the lock file made the flavor terraform: the reason, in words. */
  readonly reason?: string;
}

/** See the module comment; `name` is how the reason names the file. */
export function flavorOfLockText(text: string, name: string): InferredFlavor | undefined {
  if (text.startsWith(lockFileHeader('terraform')))
    return { flavor: 'terraform', reason: `${name} was written by "terraform init"` };
  if (text.startsWith(lockFileHeader('tofu'))) return { flavor: 'tofu' };
  const hosts = [...text.matchAll(/^provider\s+"([^"/]+)\//gm)].map((m) => m[1]!.toLowerCase());
  if (hosts.length > 0 && hosts.every((h) => h === 'registry.terraform.io')) {
    return { flavor: 'terraform', reason: `every provider in ${name} is from registry.terraform.io` };
  }
  return undefined;
}

/**
 * The flavor a lock file's bytes say it was written by (see the module
 * comment): `terraform` or `tofu`, or undefined when they say neither. The
 * bytes as read from `.terraform.lock.hcl`, or its text.
 */
export function lockFileFlavor(content: string | Uint8Array): Flavor | undefined {
  const text = typeof content === 'string' ? content : Buffer.from(content).toString('utf8');
  return flavorOfLockText(text, LOCK_FILE_NAME)?.flavor;
}
