/**
 * `lock -recursive`: every root module of a tree locked in one process
 * (docs/recursive-lock.md).
 *
 * Each root gets exactly what `lock` run in that root gives: its own
 * flavor (`flavorOf`: the command line's rule applied to the root's
 * directory, src/cli/flavor.ts, so a tree whose lock files terraform wrote
 * is locked as terraform, root by root), its own configuration (the root and its child modules: local calls read from
 * disk, as `get` would install them, others from the root's module
 * manifest), its own lock file to merge into, its own platforms
 * (installer/platforms.ts: flags, the nearest `provkit.hcl`, the platforms
 * its lock already covers, this machine's), and {@link runLock} for version
 * selection and the merge. What the roots of one flavor share is its
 * {@link PackagePlan} (`planFor`; the source's rules are the flavor's: the
 * default registry host, the signature policy): each (provider, version,
 * platform) package is fetched and hashed at most once for those roots, and
 * the source's answers are memoised.
 *
 * Roots are worked on a bounded number at once (`rootConcurrency`), so what
 * a run holds is the plan (a few hashes per package) plus the roots in hand,
 * whatever the number of roots. Each root's lock file is written atomically
 * as soon as that root is done, and only when it succeeded; a failing root
 * does not stop the others. With `check`, nothing is written: each root is
 * compared, byte for byte, with what would be written.
 *
 * Results are reported through `onRoot` in the order of `roots` (sorted),
 * whatever order they finish in.
 */
import { join, posix } from 'node:path';

import pLimit from 'p-limit';

import type { Flavor, Platform } from '../addresses/index.js';
import { findPolicy, loadConfig, type PolicyResult } from '../config/index.js';
import { asProvkitError, ErrorCode, ProvkitError, systemErrorCode, errorText } from '../errors.js';
import type { Diagnostic } from '../hcl/index.js';
import type { HashPool, HashStore } from '../hashing/index.js';
import {
  type InferredFlavor,
  LOCK_FILE_NAME,
  loadLockFile,
  type Locks,
  providersLockWrite,
  saveLockFile,
} from '../lockfile/index.js';
import type { InstallerEvent } from './events.js';
import { type ProviderFailure, type Requirement, runLock } from './lock.js';
import type { PackagePlan } from './lock-plan.js';
import { type ChosenPlatforms, choosePlatforms, PlatformInference } from './platforms.js';
import { readRegularFile } from '../fs/read.js';

export interface TreeLockOptions {
  /** The directory the command runs in; roots and file names are relative to it. */
  readonly baseDir: string;
  /** Root module directories relative to `baseDir` (`.` for itself), in report order. */
  readonly roots: readonly string[];
  /** Each root's flavor (and why, when inferred from its lock file). */
  readonly flavorOf: (root: string) => InferredFlavor;
  /** The plan of the roots of a flavor, shared by them; its source is the run's source for that flavor. */
  readonly planFor: (flavor: Flavor) => PackagePlan;
  readonly pool: HashPool;
  /** `-platform` flags (empty: none given). */
  readonly platformFlags: readonly Platform[];
  /** Compare instead of writing. */
  readonly check: boolean;
  readonly allPlatforms?: boolean;
  readonly enforceSignatures?: boolean;
  /** For platform inference (the store the plans use). */
  readonly hashStore?: HashStore;
  readonly signal?: AbortSignal;
  /** Roots worked on at once (default 8). */
  readonly rootConcurrency?: number;
  /** Events of one root's run (`provider_selected`, `hashes_obtained`, `lock_platforms`, warnings). */
  readonly events: (root: string, e: InstallerEvent) => void;
  /** Each root's outcome, in the order of `roots`. */
  readonly onRoot: (outcome: RootOutcome) => void;
}

/**
 * `unchanged`: the file already held exactly these bytes (it is rewritten
 * anyway, as the reference does), or is the other flavor's writing of these
 * very locks (kept as it is, as `lock` keeps it: lockfile/write-decision.ts);
 * `updated`/`created`: written with new bytes; `would-change` (check):
 * differs or is missing; `failed`.
 */
export type RootStatus = 'unchanged' | 'updated' | 'created' | 'would-change' | 'failed';

export interface RootOutcome {
  readonly root: string;
  readonly status: RootStatus;
  /** The flavor the root was locked in (and why, when its lock file said so). */
  readonly flavor: InferredFlavor;
  /** Undefined when the root failed before its platforms were chosen. */
  readonly platforms?: ChosenPlatforms;
  /** Providers the configuration requires. */
  readonly providers: number;
  /** Configuration, lock-file and policy diagnostics, file names relative to the base directory. */
  readonly diagnostics: readonly Diagnostic[];
  /** Providers that could not be locked. */
  readonly failures: readonly ProviderFailure[];
  /** Any other error (the lock file could not be read or written). */
  readonly error?: ProvkitError;
  /** What changed (or, with check, would change), one phrase each. */
  readonly changes: readonly string[];
}

export interface TreeLockResult {
  readonly roots: number;
  readonly byStatus: Readonly<Record<RootStatus, number>>;
  /** Distinct providers required across the roots. */
  readonly providers: number;
  /** The roots locked in each flavor (in the order of `roots`). */
  readonly flavors: Readonly<Record<Flavor, readonly string[]>>;
}

/** Diagnostics of a root's files, their names made relative to the base directory. */
function underRoot(root: string, diagnostics: readonly Diagnostic[]): Diagnostic[] {
  if (root === '.') return [...diagnostics];
  return diagnostics.map((d) => ({
    ...d,
    range: { ...d.range, filename: posix.join(root, d.range.filename) },
    ...(d.context ? { context: { ...d.context, filename: posix.join(root, d.context.filename) } } : {}),
  }));
}

/** What differs between the old locks and the new ones, one phrase each (sorted by provider). */
export function describeLockChanges(
  old: Locks,
  next: Locks,
  oldBytes: Buffer | undefined,
  added: ReadonlyMap<string, readonly Platform[]>,
): string[] {
  if (oldBytes === undefined)
    return [`no ${LOCK_FILE_NAME} yet: a new one with ${next.size} provider${next.size === 1 ? '' : 's'}`];
  const out: string[] = [];
  for (const l of next.all()) {
    const was = old.provider(l.provider);
    const name = l.provider.toString();
    if (!was) {
      out.push(`${name}: new, version ${l.version.toString()}`);
      continue;
    }
    if (!was.version.equals(l.version))
      out.push(`${name}: version ${was.version.toString()} → ${l.version.toString()}`);
    if (was.constraints.toString() !== l.constraints.toString()) {
      out.push(
        `${name}: constraints ${JSON.stringify(was.constraints.toString())} → ${JSON.stringify(l.constraints.toString())}`,
      );
    }
    const had = new Set(was.hashes.map((h) => h.text));
    const more = l.hashes.filter((h) => !had.has(h.text)).length;
    if (more > 0) {
      const platforms = added.get(l.provider.toComparisonString()) ?? [];
      // Sorted: the events that fill `added` arrive in whatever order packages finish.
      const named = [...new Set(platforms.map(String))].sort();
      out.push(
        `${name}: ${more} hash${more === 1 ? '' : 'es'} added${named.length > 0 ? ` (${named.join(', ')})` : ''}`,
      );
    }
  }
  if (out.length === 0)
    out.push(
      `${LOCK_FILE_NAME} differs in form only (same selections and hashes): it is rewritten as the reference writes it`,
    );
  return out;
}

/** A lock file's bytes, or undefined when there is none yet (other read errors are thrown). */
export async function readLockBytes(path: string): Promise<Buffer | undefined> {
  try {
    return await readRegularFile(path);
  } catch (err) {
    if (systemErrorCode(err) === 'ENOENT') return undefined;
    throw err;
  }
}

/** Locks every root; see the module comment. Never throws for one root's failure. */
export async function runTreeLock(options: TreeLockOptions): Promise<TreeLockResult> {
  const limit = pLimit(Math.max(1, options.rootConcurrency ?? 8));
  const policies = new Map<string, Promise<PolicyResult>>();
  // Platform inference asks the plan's source: one per plan.
  const inferences = new Map<PackagePlan, PlatformInference>();
  const inferenceFor = (plan: PackagePlan): PlatformInference => {
    let inference = inferences.get(plan);
    if (!inference) {
      inference = new PlatformInference({
        plan,
        ...(options.hashStore ? { hashStore: options.hashStore } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
      });
      inferences.set(plan, inference);
    }
    return inference;
  };
  const flavors: Record<Flavor, string[]> = { tofu: [], terraform: [] };
  const byStatus: Record<RootStatus, number> = { unchanged: 0, updated: 0, created: 0, 'would-change': 0, failed: 0 };
  const providers = new Set<string>();

  const lockRoot = async (root: string): Promise<RootOutcome> => {
    const dir = root === '.' ? options.baseDir : join(options.baseDir, root);
    const rootFlavor = options.flavorOf(root);
    const flavor = rootFlavor.flavor;
    const base = { root, flavor: rootFlavor, providers: 0, failures: [], changes: [] };
    const config = await loadConfig(dir, { flavor, resolveLocalModules: true });
    const diagnostics = underRoot(root, config.diagnostics);
    if (diagnostics.some((d) => d.severity === 'error')) return { ...base, status: 'failed', diagnostics };
    const requirements: Requirement[] = [...config.requirements.values()];
    for (const r of requirements) providers.add(r.provider.toComparisonString());

    const lockPath = join(dir, LOCK_FILE_NAME);
    const old = await loadLockFile(lockPath, flavor, root === '.' ? LOCK_FILE_NAME : posix.join(root, LOCK_FILE_NAME));
    diagnostics.push(...old.diagnostics);
    const policy =
      options.platformFlags.length > 0
        ? { diagnostics: [] }
        : await findPolicy(dir, options.baseDir, { cache: policies });
    diagnostics.push(...policy.diagnostics);
    if (diagnostics.some((d) => d.severity === 'error'))
      return { ...base, providers: requirements.length, status: 'failed', diagnostics };

    const plan = options.planFor(flavor);
    const platforms = await choosePlatforms({
      flags: options.platformFlags,
      policy: policy.policy,
      locks: old.locks,
      inference: inferenceFor(plan),
    });
    const events = (e: InstallerEvent): void => options.events(root, e);
    events({ type: 'platforms_chosen', ...platforms });
    const added = new Map<string, Platform[]>();
    const tracked: InstallerEvent[] = [];
    const outcome = await runLock({
      requirements,
      oldLocks: old.locks,
      platforms: platforms.platforms,
      source: plan.source,
      pool: options.pool,
      plan,
      flavor,
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.allPlatforms ? { allPlatforms: true } : {}),
      ...(options.enforceSignatures ? { enforceSignatures: true } : {}),
      events: (e) => {
        if (e.type === 'hashes_obtained' && e.change !== 'unchanged') {
          const key = e.provider.toComparisonString();
          added.set(key, [...(added.get(key) ?? []), e.platform]);
        }
        // "Now tracked in the lock file" once the file is written
        // (docs/json-ui.md `lock_hashes`); with -check nothing is.
        if (e.type === 'hashes_obtained') tracked.push(e);
        else events(e);
      },
    });
    const done = { ...base, providers: requirements.length, platforms, diagnostics };
    if (outcome.failures.length > 0) return { ...done, status: 'failed', failures: outcome.failures };
    if (options.signal?.aborted === true)
      return { ...done, status: 'failed', error: new ProvkitError(ErrorCode.ABORTED, 'interrupted') };
    let oldBytes: Buffer | undefined;
    try {
      oldBytes = await readLockBytes(lockPath);
    } catch (err) {
      return {
        ...done,
        status: 'failed',
        error: new ProvkitError(ErrorCode.IO, `${lockPath}: ${errorText(err)}`, {
          file: lockPath,
          cause: err,
        }),
      };
    }
    // Whether and what to write: the one decision of a single lock too (lockfile/write-decision.ts).
    const decision = providersLockWrite(old.locks, outcome.locks, oldBytes, flavor);
    if (options.check) {
      // As a single `lock -check`: up to date when a run would leave the file as it is.
      const same = decision.file === 'unchanged';
      return {
        ...done,
        status: same ? 'unchanged' : 'would-change',
        changes: same ? [] : describeLockChanges(old.locks, outcome.locks, oldBytes, added),
      };
    }
    try {
      // Rewritten even when unchanged, atomically (docs/reference.md §3.3 item 43), except the other flavor's writing of these very locks.
      if (decision.write) await saveLockFile(lockPath, outcome.locks, flavor);
    } catch (err) {
      return {
        ...done,
        status: 'failed',
        error: err instanceof ProvkitError ? err : new ProvkitError(ErrorCode.IO, String(err), { cause: err }),
      };
    }
    for (const e of tracked) events(e);
    return {
      ...done,
      status: decision.file,
      changes: decision.file === 'unchanged' ? [] : describeLockChanges(old.locks, outcome.locks, oldBytes, added),
    };
  };

  // Reported in the order of `roots`: finished roots wait for the ones before them.
  const finished = new Map<number, RootOutcome>();
  let next = 0;
  const report = (i: number, outcome: RootOutcome): void => {
    finished.set(i, outcome);
    for (let o = finished.get(next); o !== undefined; o = finished.get(next)) {
      finished.delete(next);
      next += 1;
      byStatus[o.status] += 1;
      flavors[o.flavor.flavor].push(o.root);
      options.onRoot(o);
    }
  };
  await Promise.all(
    options.roots.map((root, i) =>
      limit(async () => {
        let outcome: RootOutcome;
        try {
          outcome = await lockRoot(root);
        } catch (err) {
          outcome = {
            root,
            flavor: options.flavorOf(root),
            status: 'failed',
            providers: 0,
            diagnostics: [],
            failures: [],
            changes: [],
            error: asProvkitError(err),
          };
        }
        report(i, outcome);
      }),
    ),
  );
  return { roots: options.roots.length, byStatus, providers: providers.size, flavors };
}
