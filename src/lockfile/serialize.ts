/**
 * Writes `.terraform.lock.hcl` byte-identical to the reference
 * (`SaveLocksToBytes` with hclwrite; docs/reference.md §3.2, §10 items 131–134):
 *
 * - two header lines naming `tofu init` or `terraform init` by flavor;
 * - per provider, sorted by address: a blank line, `provider "<display>" {`;
 * - `version`, then `constraints` when its canonical string is non-empty,
 *   then `hashes` when there is at least one; hclwrite aligns `=` across the
 *   consecutive single-line attributes only (so `version     =` beside
 *   `constraints =`, and always `hashes = [`);
 * - each hash on its own line, 4 spaces, trailing comma; `  ]`, `}`;
 * - strings escaped as HCL quoted literals (`escapeQuotedStringLit`).
 *
 * Hashes are written in the order the lock holds them: locks built by
 * `newProviderLock` are sorted; a lock loaded from a file and saved unchanged
 * keeps its order, as the reference's does.
 */
import type { Flavor } from '../addresses/index.js';
import { quoteStringLit } from '../hcl/index.js';
import type { Locks } from './model.js';

/**
 * The two comment lines that start a lock file, naming `tofu init` or `terraform init` by `flavor`, as the
 * reference writes them.
 */
export function lockFileHeader(flavor: Flavor): string {
  const command = flavor === 'terraform' ? 'terraform init' : 'tofu init';
  return `# This file is maintained automatically by "${command}".\n# Manual edits may be lost in future updates.\n`;
}

/**
 * The bytes of a lock file holding `locks`, exactly as the reference writes them (docs/reference.md §3): the
 * flavor's header, providers in address order, hashes in the order the locks hold them.
 */
export function serializeLocks(locks: Locks, flavor: Flavor): Buffer {
  let out = lockFileHeader(flavor);
  for (const lock of locks.all()) {
    out += `\nprovider ${quoteStringLit(lock.provider.toString())} {\n`;
    const constraints = lock.constraints.toString();
    if (constraints !== '') {
      out += `  version     = ${quoteStringLit(lock.version.toString())}\n`;
      out += `  constraints = ${quoteStringLit(constraints)}\n`;
    } else {
      out += `  version = ${quoteStringLit(lock.version.toString())}\n`;
    }
    if (lock.hashes.length > 0) {
      out += '  hashes = [\n';
      for (const h of lock.hashes) out += `    ${quoteStringLit(h.text)},\n`;
      out += '  ]\n';
    }
    out += '}\n';
  }
  return Buffer.from(out, 'utf8');
}
