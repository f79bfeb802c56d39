/**
 * Whether `providers lock` writes a lock file once the locks are merged: the
 * one decision of `lock` (a single root) and of every root of `lock
 * -recursive`, as a pure function.
 *
 * The reference always rewrites the file, even when nothing changed
 * (docs/reference.md §3.3 item 43), and so does provkit, with one
 * exception: when nothing changed (`Locks.Equal`) and the file holds exactly
 * what the other flavor writes for these locks (a terraform project run with
 * `-flavor=tofu`), it is kept as it is, not given this flavor's header while
 * the run says there was no need for changes (docs/api.md, flavor).
 */
import type { Flavor } from '../addresses/index.js';
import { type Locks, locksEqual } from './model.js';
import { serializeLocks } from './serialize.js';

export interface ProvidersLockWrite {
  /** What this flavor writes for the new locks. */
  readonly bytes: Buffer;
  /** The old file holds exactly {@link bytes}. */
  readonly sameBytes: boolean;
  /** Selections or hashes changed (`Locks.Equal`; constraints are not compared): the reference's success message. */
  readonly changed: boolean;
  /** Whether the file is written (atomically); false: it is kept byte for byte. */
  readonly write: boolean;
  /** The file after the run: `unchanged` (the same bytes rewritten, or kept), `created` or `updated`; `-check` is up to date exactly when `unchanged`. */
  readonly file: 'unchanged' | 'created' | 'updated';
}

/**
 * See the module comment. `oldBytes` is the file as it is on disk, undefined
 * when there is none; `old` the locks parsed from it.
 */
export function providersLockWrite(
  old: Locks,
  next: Locks,
  oldBytes: Buffer | undefined,
  flavor: Flavor,
): ProvidersLockWrite {
  const bytes = serializeLocks(next, flavor);
  const sameBytes = oldBytes?.equals(bytes) === true;
  const changed = !locksEqual(old, next);
  const other: Flavor = flavor === 'tofu' ? 'terraform' : 'tofu';
  const keep = !changed && oldBytes?.equals(serializeLocks(next, other)) === true;
  const file = sameBytes || keep ? 'unchanged' : oldBytes === undefined ? 'created' : 'updated';
  return { bytes, sameBytes, changed, write: !keep, file };
}
