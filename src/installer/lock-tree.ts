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
 * {@link FetchCache} (`cacheFor`; the source's rules are the flavor's: the
 * default registry host, the signature policy): each (provider, version,
 * platform) package is fetched and hashed at most once for those roots, and
 * the source's answers are memoised.
 *
 * Roots are worked on a bounded number at once (`rootConcurrency`), so what
 * a run holds is the cache (a few hashes per package) plus the roots in hand,
 * whatever the number of roots. Each root's lock file is written atomically
 * as soon as that root is done, and only when it succeeded; a failing root
 * does not stop the others. With `check`, nothing is written: each root is
 * compared, byte for byte, with what would be written.
 *
 * Results are reported through `onRoot` in the order of `roots` (sorted),
 * whatever order they finish in.
 */
import { join } from 'node:path';

import pLimit from 'p-limit';

import type { Flavor, Platform } from '../addresses/index.js';
import type { PolicyResult } from '../config/index.js';
import { asProvkitError } from '../errors.js';
import type { HashStore } from '../hashing/index.js';
import type { InferredFlavor } from '../lockfile/index.js';
import type { InstallerEvent } from './events.js';
import { lockModule, type ModuleLockOutcome, type ModuleLockStatus } from './lock-module.js';
import type { FetchCache } from './fetch-cache.js';
import { PlatformInference } from './platforms.js';

export interface TreeLockOptions {
  /** The directory the command runs in; roots and file names are relative to it. */
  readonly baseDir: string;
  /** Root module directories relative to `baseDir` (`.` for itself), in report order. */
  readonly roots: readonly string[];
  /** Each root's flavor (and why, when inferred from its lock file). */
  readonly flavorOf: (root: string) => InferredFlavor;
  /** The cache of the roots of a flavor, shared by them; its source is the run's source for that flavor. */
  readonly cacheFor: (flavor: Flavor) => FetchCache;
  /** `-platform` flags (empty: none given). */
  readonly platformFlags: readonly Platform[];
  /** Compare instead of writing. */
  readonly check: boolean;
  readonly allPlatforms?: boolean;
  readonly enforceSignatures?: boolean;
  /** For platform inference (the store the caches use). */
  readonly hashStore?: HashStore;
  readonly signal?: AbortSignal;
  /** Roots worked on at once (default 8). */
  readonly rootConcurrency?: number;
  /** Events of one root's run (`provider_selected`, `hashes_obtained`, `lock_platforms`, warnings). */
  readonly events: (root: string, e: InstallerEvent) => void;
  /** Each root's outcome, in the order of `roots`. */
  readonly onRoot: (outcome: RootOutcome) => void;
}

/** What became of a root's lock file (lock-module.ts). */
export type RootStatus = ModuleLockStatus;

/** A root's outcome: {@link lockModule}'s, with the root and the flavor it was locked in. */
export interface RootOutcome extends ModuleLockOutcome {
  readonly root: string;
  /** The flavor the root was locked in (and why, when its lock file said so). */
  readonly flavor: InferredFlavor;
}

export interface TreeLockResult {
  readonly roots: number;
  readonly byStatus: Readonly<Record<RootStatus, number>>;
  /** Distinct providers required across the roots. */
  readonly providers: number;
  /** The roots locked in each flavor (in the order of `roots`). */
  readonly flavors: Readonly<Record<Flavor, readonly string[]>>;
}

/** Locks every root; see the module comment. Never throws for one root's failure. */
export async function runTreeLock(options: TreeLockOptions): Promise<TreeLockResult> {
  const limit = pLimit(Math.max(1, options.rootConcurrency ?? 8));
  const policies = new Map<string, Promise<PolicyResult>>();
  // Platform inference asks the cache's source: one per cache.
  const inferences = new Map<FetchCache, PlatformInference>();
  const inferenceFor = (cache: FetchCache): PlatformInference => {
    let inference = inferences.get(cache);
    if (!inference) {
      inference = new PlatformInference({
        cache,
        ...(options.hashStore ? { hashStore: options.hashStore } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
      });
      inferences.set(cache, inference);
    }
    return inference;
  };
  const flavors: Record<Flavor, string[]> = { tofu: [], terraform: [] };
  const byStatus: Record<RootStatus, number> = { unchanged: 0, updated: 0, created: 0, 'would-change': 0, failed: 0 };
  const providers = new Set<string>();

  const lockRoot = async (root: string): Promise<RootOutcome> => {
    const flavor = options.flavorOf(root);
    const cache = options.cacheFor(flavor.flavor);
    const outcome = await lockModule(root === '.' ? options.baseDir : join(options.baseDir, root), {
      flavor: flavor.flavor,
      cache,
      label: root,
      resolveLocalModules: true,
      platforms: options.platformFlags,
      policyRoot: options.baseDir,
      policyCache: policies,
      inference: inferenceFor(cache),
      check: options.check,
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.allPlatforms ? { allPlatforms: true } : {}),
      ...(options.enforceSignatures ? { enforceSignatures: true } : {}),
      events: (e) => options.events(root, e),
    });
    for (const r of outcome.required) providers.add(r.provider.toComparisonString());
    return { root, flavor, ...outcome };
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
            required: [],
            diagnostics: [],
            selectionErrors: [],
            failures: [],
            changed: false,
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
