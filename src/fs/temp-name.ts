/**
 * The one way provkit names a temporary file or directory: a fixed shape
 * (so that a later run can recognise and sweep what a killed run left) with
 * a random part (so that two writers, in one process or in several, never
 * pick the same name). Every temporary path beside a target or inside a
 * staging area comes from here; the caller still creates it exclusively
 * (`wx`, `mkdir`), so even a collision would fail rather than share a file.
 *
 * Shapes:
 * - beside a target: `DIR/.NAME.[TAG-]RANDOM.EXT` ({@link tempPathBeside}),
 *   in the target's own directory so that the final `rename` is atomic;
 * - inside a directory: `DIR/PREFIXRANDOM` ({@link tempPathIn}), e.g. a
 *   mirror's `.provkit-staging-*` directory.
 *
 * RANDOM is {@link uniqueSuffix}: 12 lowercase hex digits (48 bits from the
 * CSPRNG).
 */
import { randomBytes } from 'node:crypto';
import { readdir, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

import { systemErrorCode } from '../errors.js';

/** Length of {@link uniqueSuffix}'s result. */
const SUFFIX_HEX = 12;

/** 12 random lowercase hex digits: the unique part of every temporary name. */
export function uniqueSuffix(): string {
  return randomBytes(SUFFIX_HEX / 2).toString('hex');
}

export interface TempBesideOptions {
  /** What the temporary is for (`extract`, `old`, `link`); becomes `TAG-` before the random part. */
  readonly tag?: string;
  /** The ending, dot included (default `.tmp`; a download's is `.partial`). */
  readonly ext?: string;
}

/**
 * A unique temporary path beside `target` (same directory, so a rename onto
 * `target` is atomic): `.NAME.[TAG-]RANDOM.EXT`, hidden from directory
 * listings that skip dotfiles.
 */
export function tempPathBeside(target: string, options: TempBesideOptions = {}): string {
  const tag = options.tag === undefined ? '' : `${options.tag}-`;
  return join(dirname(target), `.${basename(target)}.${tag}${uniqueSuffix()}${options.ext ?? '.tmp'}`);
}

/** A unique path inside `dir`: `PREFIXRANDOM`. */
export function tempPathIn(dir: string, prefix: string): string {
  return join(dir, `${prefix}${uniqueSuffix()}`);
}

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Whether `name` (a base name in `target`'s directory) is one that
 * {@link tempPathBeside} makes for `target` with one of `tags` and `ext`.
 */
export function isTempNameBeside(target: string, name: string, tags: readonly string[], ext = '.tmp'): boolean {
  const tagPart = tags.length === 0 ? '' : `(?:${tags.map(escapeRegExp).join('|')})-`;
  return new RegExp(
    `^\\.${escapeRegExp(basename(target))}\\.${tagPart}[0-9a-f]{${SUFFIX_HEX}}${escapeRegExp(ext)}$`,
  ).test(name);
}

/**
 * Removes what {@link tempPathBeside} made for `target` with one of `tags`
 * (leftovers of a killed run). Call it only while holding the mutex that
 * guards `target`, so that no live temporary is removed.
 */
export async function removeTempsBeside(target: string, tags: readonly string[], ext = '.tmp'): Promise<void> {
  await removeMatching(dirname(target), (n) => isTempNameBeside(target, n, tags, ext));
}

/**
 * Removes every entry of `dir` whose name starts with `prefix` (the
 * leftovers of {@link tempPathIn}); a missing `dir` has none. Call it only
 * while holding the mutex that guards `dir`.
 */
export async function removeTempsIn(dir: string, prefix: string): Promise<void> {
  await removeMatching(dir, (n) => n.startsWith(prefix));
}

/** Removes the entries of `dir` whose names match (recursively); a missing `dir` has none. */
async function removeMatching(dir: string, match: (name: string) => boolean): Promise<void> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    if (systemErrorCode(err) === 'ENOENT') return;
    throw err;
  }
  await Promise.all(names.filter(match).map((n) => rm(join(dir, n), { recursive: true, force: true })));
}
