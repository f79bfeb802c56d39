/**
 * Locking one module directory: the one pipeline of `providers lock`, which
 * `lock` runs for its working directory and `lock -recursive` for every root
 * module of a tree (installer/lock-tree.ts), so that the two cannot drift.
 *
 * In order: the configuration (the root and its child modules) → which of
 * its providers to lock → the lock file, read once (its locks and its
 * bytes) → the platforms (installer/platforms.ts: flags, the nearest
 * `provkit.hcl`, the platforms the lock file already covers, this
 * machine's; a `platforms_chosen` event) → {@link runLock} over the
 * fetch-and-hash cache (version selection, packages, the merge) → the write
 * decision (lockfile/write-decision.ts) → the bytes that decision made,
 * written once and atomically, or with `check` compared only. "Now tracked in
 * the lock file" (`hashes_obtained`, docs/json-ui.md `lock_hashes`) is said
 * once the file is written, never with `check` nor after a failure.
 *
 * As OpenTofu's installer (internal/providercache/installer.go) the result is
 * data: the outcome and the events; nothing is printed here.
 *
 * The CLI gives it a fetch-and-hash cache it shares between the roots of a
 * tree; a library caller can give just a `source` (or nothing: the flavor's
 * origin registries) and the call opens, and closes, its own hash pool and
 * cache (docs/api.md "Lock a directory, with progress").
 */
import { join, posix } from 'node:path';

import type { Flavor, Platform, Requirement } from '../addresses/index.js';
import { findPolicy, loadConfig, type PolicyResult } from '../config/index.js';
import { type Diagnostic, type ProvkitError, asProvkitError } from '../errors.js';
import { createHashPool, type HashPool, type HashStore } from '../hashing/index.js';
import { hasErrors } from '../hcl/index.js';
import { loadLockFile, LOCK_FILE_NAME, type Locks, providersLockWrite, saveLockBytes } from '../lockfile/index.js';
import { HttpClient } from '../net/index.js';
import { createRegistrySource, type Source } from '../sources/index.js';
import { abortable, throwIfAborted, withSignal } from './abort.js';
import { type EventSink, ignoreEvents, type InstallerEvent } from './events.js';
import { type ProviderFailure, runLock } from './lock.js';
import { FetchCache } from './fetch-cache.js';
import { type ChosenPlatforms, choosePlatforms, PlatformInference } from './platforms.js';

/**
 * What became of a module's lock file. `unchanged`: it already held exactly
 * these bytes (it is rewritten anyway, as the reference does), or is the
 * other flavor's writing of these very locks (kept as it is:
 * lockfile/write-decision.ts); `updated`/`created`: written with new bytes;
 * `would-change` (`check`): differs or is missing; `failed`.
 */
export type ModuleLockStatus = 'unchanged' | 'updated' | 'created' | 'would-change' | 'failed';

/** How {@link lockModule} locks a directory. */
export interface LockModuleOptions {
  /** The flavor whose rules apply: configuration files, lock-file header, signature and trust rules. */
  readonly flavor: Flavor;
  /**
   * The fetch-and-hash cache the packages come from (its source is where
   * versions and metadata come from too), or a function that opens it
   * when it is first needed (after the configuration and the lock file are
   * read; undefined when it could not be opened, which the opener has
   * reported). Shared between modules, each package is fetched and hashed
   * once for all of them. Owned by the caller: never closed here.
   *
   * Absent: the call opens its own when it first needs one, over
   * {@link LockModuleOptions.source} with {@link LockModuleOptions.pool} and
   * {@link LockModuleOptions.http}, reporting its package events
   * (`fetch_start`, `fetch_progress`, `fetch_complete`) to `events`, and
   * closes it (and a pool of its own) before it returns.
   */
  readonly cache?: FetchCache | (() => Promise<FetchCache | undefined>);
  /**
   * Without a `cache`: where versions, metadata and packages come from
   * (default: the flavor's origin registries, {@link createRegistrySource}
   * over `http`, credentials from `TF_TOKEN_…` variables).
   */
  readonly source?: Source;
  /** Without a `cache`: the hash pool (default: one of this call's own, closed before it returns). */
  readonly pool?: HashPool;
  /** Without a `cache`: the HTTP client of the downloads and of the default source (default `new HttpClient()`). */
  readonly http?: HttpClient;
  /** Platforms to lock; empty or absent: the module's policy (`provkit.hcl`), else those its lock covers, else this machine's. */
  readonly platforms?: readonly Platform[];
  /** Where the search for the nearest `provkit.hcl` stops, going up from the directory (default: the directory itself). */
  readonly policyRoot?: string;
  /** Policy files already read, shared between the modules of a tree (keyed by path). */
  readonly policyCache?: Map<string, Promise<PolicyResult>>;
  /** Platform inference for the `cache` (default: one of this call's own); shared between modules, it asks each question once. */
  readonly inference?: PlatformInference;
  /** The hash store (hashing/store.ts) platform inference consults (the one the `cache` uses). */
  readonly hashStore?: HashStore;
  /**
   * The directory as diagnostics name it, relative to the caller's working
   * directory: file names in diagnostics are prefixed with it (default `.`:
   * as they are, `.terraform.lock.hcl`).
   */
  readonly label?: string;
  /** Read the files of local module calls from disk (as `get` would install them) instead of the module manifest (`lock -recursive`). */
  readonly resolveLocalModules?: boolean;
  /**
   * Which of the configuration's providers to lock (default: all): the
   * command line's `PROVIDER...` arguments, each of which must be required
   * by the configuration. Errors stop the run before anything is fetched.
   */
  readonly selectProviders?: (required: readonly Requirement[]) => {
    readonly requirements: readonly Requirement[];
    readonly errors: readonly Diagnostic[];
  };
  /** Write nothing: compare the lock file with what would be written (`-check`). */
  readonly check?: boolean;
  /** `-all-platforms` (see {@link LockOptions.allPlatforms}). */
  readonly allPlatforms?: boolean;
  /** `OPENTOFU_ENFORCE_GPG_VALIDATION` in effect: read once by the caller from its environment. */
  readonly enforceSignatures?: boolean;
  /**
   * The run's events: `platforms_chosen`, `provider_selected`, `warning`,
   * and `hashes_obtained` once the lock file is written (never with `check`);
   * without a `cache`, the package events too (`fetch_queued`,
   * `fetch_start`, `fetch_progress`, `fetch_complete`).
   */
  readonly events?: EventSink;
  /**
   * Stops the run (installer/abort.ts): no source call after it, nothing
   * written, and the call rejects with a `ProvkitError` `ABORTED` whose
   * `cause` is the signal's reason; unless the lock file was already
   * renamed into place, when the call resolves with that outcome. One
   * listener is added to it while the call runs.
   */
  readonly signal?: AbortSignal;
}

/** What {@link lockModule} did. */
export interface ModuleLockOutcome {
  /** What became of the lock file (see {@link ModuleLockStatus}). */
  readonly status: ModuleLockStatus;
  /** Undefined when the run stopped before its platforms were chosen. */
  readonly platforms?: ChosenPlatforms;
  /** Providers the configuration requires. */
  readonly providers: number;
  /** What the configuration requires (empty when it could not be read). */
  readonly required: readonly Requirement[];
  /** Configuration, lock-file and policy diagnostics (file names prefixed with {@link LockModuleOptions.label}). */
  readonly diagnostics: readonly Diagnostic[];
  /** Errors of {@link LockModuleOptions.selectProviders}. */
  readonly selectionErrors: readonly Diagnostic[];
  /** Providers that could not be locked. */
  readonly failures: readonly ProviderFailure[];
  /** Any other error: the lock file could not be written (an interrupted run rejects instead: {@link LockModuleOptions.signal}). */
  readonly error?: ProvkitError;
  /** Selections or hashes changed (`Locks.Equal`): the reference's success message. */
  readonly changed: boolean;
  /** What changed (or, with `check`, would change), one phrase each. */
  readonly changes: readonly string[];
}

/** Diagnostics of a module's files, their names made relative to the caller's directory. */
function underLabel(label: string, diagnostics: readonly Diagnostic[]): Diagnostic[] {
  if (label === '.') return [...diagnostics];
  return diagnostics.map((d) => ({
    ...d,
    ...(d.range ? { range: { ...d.range, filename: posix.join(label, d.range.filename) } } : {}),
    ...(d.context ? { context: { ...d.context, filename: posix.join(label, d.context.filename) } } : {}),
  }));
}

/**
 * Locks the module in `dir` as `providers lock` run there would (`tofu
 * providers lock` or `terraform providers lock` by `flavor`): reads its
 * configuration and `.terraform.lock.hcl`, chooses the platforms (given,
 * else its `provkit.hcl` policy, else those its lock file covers, else this
 * machine's), fetches and hashes every package, and writes the lock file
 * atomically, byte for byte as the reference would (or, with `check`,
 * compares only). See the module comment for the order of the steps.
 *
 * Never throws for the module's own failures: configuration and lock-file
 * errors are in `diagnostics`, providers that could not be locked in
 * `failures`, a write error in `error`; nothing is written unless the whole
 * run succeeded. The one pipeline the CLI's `lock` and `lock -recursive` run.
 *
 * @param dir - The root module's directory.
 * @param options - The flavor, platforms, source or cache, event sink and signal; see {@link LockModuleOptions}.
 * @throws {ProvkitError} `ABORTED` when `signal` aborts before the lock file
 *   is in place, whatever the run was doing (installer/abort.ts; an abort
 *   after the rename is too late to undo it: the call resolves with what
 *   was written); without a `cache` or `http`, what `new HttpClient()` throws.
 */
export async function lockModule(dir: string, options: LockModuleOptions): Promise<ModuleLockOutcome> {
  let own: { cache: FetchCache; pool: HashPool | undefined } | undefined;
  try {
    // The operations' one cancellation contract (installer/abort.ts): one listener on the caller's
    // signal; once it aborts the call rejects with ABORTED and writes nothing, unless the lock file
    // was already renamed into place (`committed`): then its outcome stands.
    return await abortable('locking', options.signal, (signal, committed) => {
      const cache =
        options.cache ??
        ((): Promise<FetchCache> => {
          const http = options.http ?? new HttpClient();
          const pool = options.pool ?? createHashPool();
          own = {
            pool: options.pool === undefined ? pool : undefined,
            cache: new FetchCache({
              source: options.source ?? createRegistrySource({ flavor: options.flavor, http }),
              pool,
              http,
              ...(options.events ? { events: options.events } : {}),
              ...(signal ? { signal } : {}),
              ...(options.hashStore ? { hashStore: options.hashStore } : {}),
            }),
          };
          return Promise.resolve(own.cache);
        });
      return lockWith(dir, { ...withSignal(options, signal), cache }, committed);
    });
  } finally {
    await own?.cache.close();
    await own?.pool?.close();
  }
}

async function lockWith(
  dir: string,
  options: LockModuleOptions & { readonly cache: NonNullable<LockModuleOptions['cache']> },
  committed: () => void,
): Promise<ModuleLockOutcome> {
  const label = options.label ?? '.';
  const { flavor, signal } = options;
  const events = options.events ?? ignoreEvents;
  const stopped = {
    status: 'failed' as const,
    providers: 0,
    required: [],
    selectionErrors: [],
    failures: [],
    changed: false,
    changes: [],
  };
  const config = await loadConfig(dir, {
    flavor,
    ...(options.resolveLocalModules ? { resolveLocalModules: true } : {}),
  });
  const diagnostics = underLabel(label, config.diagnostics);
  if (hasErrors(diagnostics)) return { ...stopped, diagnostics };
  const required: Requirement[] = [...config.requirements.values()];
  const selected = options.selectProviders?.(required) ?? { requirements: required, errors: [] };
  const base = { ...stopped, providers: required.length, required };
  if (selected.errors.length > 0) return { ...base, diagnostics, selectionErrors: selected.errors };

  const lockPath = join(dir, LOCK_FILE_NAME);
  const old = await loadLockFile(lockPath, flavor, label === '.' ? LOCK_FILE_NAME : posix.join(label, LOCK_FILE_NAME));
  diagnostics.push(...old.diagnostics);
  const flags = options.platforms ?? [];
  const policy =
    flags.length > 0
      ? { diagnostics: [] }
      : await findPolicy(dir, options.policyRoot ?? dir, {
          ...(options.policyCache ? { cache: options.policyCache } : {}),
        });
  diagnostics.push(...policy.diagnostics);
  if (hasErrors(diagnostics)) return { ...base, diagnostics };

  const cache = typeof options.cache === 'function' ? await options.cache() : options.cache;
  if (cache === undefined) return { ...base, diagnostics };
  const platforms = await choosePlatforms({
    flags,
    policy: policy.policy,
    locks: old.locks,
    inference:
      options.inference ??
      new PlatformInference({
        cache,
        ...(options.hashStore ? { hashStore: options.hashStore } : {}),
        ...(signal ? { signal } : {}),
      }),
  });
  events({ type: 'platforms_chosen', ...platforms });
  // The platforms each provider gains hashes for (`changes` names them).
  const added = new Map<string, Platform[]>();
  // "Now tracked in the lock file": said once the file is written.
  const tracked: InstallerEvent[] = [];
  const outcome = await runLock({
    requirements: selected.requirements,
    oldLocks: old.locks,
    platforms: platforms.platforms,
    cache,
    flavor,
    ...(signal ? { signal } : {}),
    ...(options.allPlatforms ? { allPlatforms: true } : {}),
    ...(options.enforceSignatures ? { enforceSignatures: true } : {}),
    events: (e) => {
      if (e.type === 'hashes_obtained' && e.change !== 'unchanged') {
        const key = e.provider.toComparisonString();
        added.set(key, [...(added.get(key) ?? []), e.platform]);
      }
      if (e.type === 'hashes_obtained') tracked.push(e);
      else events(e);
    },
  });
  const done = { ...base, platforms, diagnostics };
  if (outcome.failures.length > 0) return { ...done, failures: outcome.failures };
  // Whether and what to write: the one decision (lockfile/write-decision.ts), over the bytes read above.
  const decision = providersLockWrite(old.locks, outcome.locks, old.bytes, flavor);
  const changes = (): string[] => describeLockChanges(old.locks, outcome.locks, old.bytes, added);
  if (options.check === true) {
    // Up to date: a run would leave the file as it is (the same bytes, or an unchanged other-flavor file kept).
    const same = decision.file === 'unchanged';
    return {
      ...done,
      status: same ? 'unchanged' : 'would-change',
      changed: decision.changed,
      changes: same ? [] : changes(),
    };
  }
  // An abort from here on: nothing is renamed into place (fs/atomic.ts), and abortable rejects.
  throwIfAborted('locking', signal);
  try {
    // Rewritten even when unchanged, atomically (docs/reference.md §3.3 item 43), except the other flavor's writing of these very locks.
    if (decision.write) await saveLockBytes(lockPath, decision.bytes, signal);
  } catch (err) {
    if (signal?.aborted === true) throw err;
    return { ...done, error: asProvkitError(err) };
  }
  // The file is in place: an abort after this point cannot undo it, and the outcome says what was written.
  committed();
  for (const e of tracked) events(e);
  return {
    ...done,
    status: decision.file,
    changed: decision.changed,
    changes: decision.file === 'unchanged' ? [] : changes(),
  };
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
