/**
 * Installing one module directory's providers: the one pipeline of
 * `provkit install` (the provider step of `init`, docs/reference.md §5 and
 * §3.3 item 42), as {@link lockModule} is `lock`'s.
 *
 * In order: the configuration (the root, its child modules, and as init's
 * `LoadConfigWithTests` the modules its test files' run blocks call) → the
 * lock file → the source, opened only now (a caller's opener may report
 * its own diagnostics) → {@link runInstall} → the lock-file decision
 * ({@link lockFileAction}) → with `write`, and unless the signal has fired,
 * the new locks written atomically. Each step that fails stops the run;
 * the outcome says which (its `status`).
 *
 * As OpenTofu's installer (internal/providercache/installer.go) the result
 * is data: the outcome and the events; nothing is printed here. The
 * presentation of init (its configuration-error preface, how often terraform
 * repeats a warning, the lock-file summaries and warnings) is the caller's.
 */
import { join, resolve } from 'node:path';

import { DEFAULT_TEST_DIRECTORY, loadConfig } from '../config/index.js';
import { type Diagnostic, ErrorCode, ProvkitError } from '../errors.js';
import { hasErrors } from '../hcl/index.js';
import { loadLockFile, LOCK_FILE_NAME, Locks, locksEqual, saveLockFile } from '../lockfile/index.js';
import type { Source } from '../sources/index.js';
import {
  type InstalledPackage,
  type InstallFailure,
  type InstallOptions,
  type LockFileAction,
  lockFileAction,
  runInstall,
} from './install.js';

/** How {@link installModule} installs a directory's providers. */
export interface InstallModuleOptions extends Omit<
  InstallOptions,
  'requirements' | 'oldLocks' | 'source' | 'targetDir'
> {
  /**
   * Where versions, metadata and packages come from, or a function that
   * opens it when it is first needed (after the configuration and the lock
   * file are read without errors; undefined when it could not be opened,
   * which the opener has reported).
   */
  readonly source: Source | (() => Promise<Source | undefined>);
  /** The data directory, relative to the module's directory or absolute (default `.terraform`, as `TF_DATA_DIR`). */
  readonly dataDir?: string;
  /** The providers directory (default `DATA_DIR/providers` in the module's directory). */
  readonly targetDir?: string;
  /** Where test files are, besides the root directory (default `tests`, as init's `-test-directory`). */
  readonly testDirectory?: string;
  /** `-lockfile=readonly`: never write the lock file; say whether it would change (see {@link LockFileAction}). */
  readonly readonly?: boolean;
}

/**
 * Where {@link installModule} stopped: `config-errors` and `lock-file-errors`
 * before anything was fetched, `no-source` when the source could not be
 * opened, `failed` when a provider could not be installed (the lock file as
 * it was), `installed` when every provider is in place (see
 * {@link ModuleInstallOutcome.lockFile} for the lock file).
 */
export type ModuleInstallStatus = 'config-errors' | 'lock-file-errors' | 'no-source' | 'failed' | 'installed';

/** What {@link installModule} did. */
export interface ModuleInstallOutcome {
  /** Where the run stopped (see {@link ModuleInstallStatus}). */
  readonly status: ModuleInstallStatus;
  /** The configuration's diagnostics, each once, in the loader's order. */
  readonly configDiagnostics: readonly Diagnostic[];
  /**
   * Those of {@link ModuleInstallOutcome.configDiagnostics} (the same
   * objects) that init reads first, on its own: the root module's and its
   * test files' (`LoadedConfig.rootDiagnostics` of `provkit/config`).
   */
  readonly rootDiagnostics: readonly Diagnostic[];
  /** The root module calls modules or has test files: init reads the whole tree once more (`LoadedConfig.installsModules`). */
  readonly installsModules: boolean;
  /** The lock file's diagnostics (empty when the configuration had errors: it was not read). */
  readonly lockFileDiagnostics: readonly Diagnostic[];
  /** The lock file's locks before the run (empty when it does not exist or was not read). */
  readonly previousLocks: Locks;
  /** The locks after the install (undefined unless it ran). */
  readonly locks: Locks | undefined;
  /** Every provider in place, in whichever way. */
  readonly installed: readonly InstalledPackage[];
  /** Providers that could not be installed. */
  readonly failures: readonly InstallFailure[];
  /** What the lock file needs (undefined unless every provider is in place): see {@link LockFileAction}. */
  readonly lockFile: LockFileAction | undefined;
  /** The lock file was written (only with `write`, and not once the signal had fired). */
  readonly wrote: boolean;
}

/**
 * Installs the providers of the module in `dir` for one platform as the
 * provider step of `init` run there would (`tofu` or `terraform` by
 * `flavor`): reads its configuration and `.terraform.lock.hcl`, installs
 * every provider into `DATA_DIR/providers` ({@link runInstall}), and updates
 * the lock file atomically when it changed and `readonly` is not set. See
 * the module comment for the order of the steps.
 *
 * Never throws for the module's own failures: configuration and lock-file
 * errors are in the outcome's diagnostics, providers that could not be
 * installed in `failures`; the lock file is written only after the whole
 * install succeeded, and not once `signal` has fired.
 *
 * @param dir - The root module's directory.
 * @param options - The flavor, platform, source, pool, event sink and signal; see {@link InstallModuleOptions}.
 * @throws {ProvkitError} `ABORTED` when `signal` aborts during the install
 *   (installer/abort.ts); `IO` when the lock file cannot be written.
 */
export async function installModule(dir: string, options: InstallModuleOptions): Promise<ModuleInstallOutcome> {
  const { flavor } = options;
  const dataDir = options.dataDir ?? '.terraform';
  const config = await loadConfig(dir, {
    flavor,
    dataDir,
    testDirectory: options.testDirectory ?? DEFAULT_TEST_DIRECTORY,
  });
  const stopped = {
    configDiagnostics: config.diagnostics,
    rootDiagnostics: config.rootDiagnostics,
    installsModules: config.installsModules,
    lockFileDiagnostics: [],
    locks: undefined,
    installed: [],
    failures: [],
    lockFile: undefined,
    wrote: false,
  };
  if (hasErrors(config.diagnostics)) return { ...stopped, status: 'config-errors', previousLocks: new Locks() };

  const lockPath = join(dir, LOCK_FILE_NAME);
  const old = await loadLockFile(lockPath, flavor, LOCK_FILE_NAME);
  const read = { ...stopped, lockFileDiagnostics: old.diagnostics, previousLocks: old.locks };
  if (hasErrors(old.diagnostics)) return { ...read, status: 'lock-file-errors' };

  const source = typeof options.source === 'function' ? await options.source() : options.source;
  if (source === undefined) return { ...read, status: 'no-source' };

  const { dataDir: _dataDir, testDirectory: _testDirectory, readonly, ...install } = options;
  const outcome = await runInstall({
    ...install,
    requirements: [...config.requirements.values()],
    oldLocks: old.locks,
    source,
    targetDir: options.targetDir ?? resolve(dir, dataDir, 'providers'),
  });
  const done = { ...read, locks: outcome.locks, installed: outcome.installed };
  if (outcome.failures.length > 0) return { ...done, status: 'failed', failures: outcome.failures };

  const action = lockFileAction(old.locks, outcome.locks, locksEqual(old.locks, outcome.locks), readonly === true);
  // Not after an interrupt: the lock file stays as it was, also when the interrupt comes while it is being
  // written (nothing is renamed into place, fs/atomic.ts), as lock's write (lock-module.ts). An interrupt
  // after the rename is too late to undo it: the outcome stands.
  let write = action === 'write' && options.signal?.aborted !== true;
  if (write) {
    try {
      await saveLockFile(lockPath, outcome.locks, flavor, options.signal);
    } catch (err) {
      if (!(err instanceof ProvkitError && err.code === ErrorCode.ABORTED && options.signal?.aborted === true))
        throw err;
      write = false;
    }
  }
  return { ...done, status: 'installed', lockFile: action, wrote: write };
}
