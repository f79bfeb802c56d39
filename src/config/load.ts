/**
 * Loading a configuration from disk: the root module directory, then its
 * module calls, recursively, from the module manifest
 * (`internal/configs/configload/loader_load.go`, `config_build.go`), and
 * the combined provider requirements.
 *
 * As in the reference:
 * - every module call must have a record in `.terraform/modules/modules.json`
 *   (written by `init` / `get`), **local `./…` calls included**; otherwise
 *   "Module not installed" (docs/reference.md §10 item 138; confirmed with terraform
 *   1.11.4). {@link LoadOptions.resolveLocalModules} relaxes this for local
 *   calls only;
 * - a record whose source differs from the call's is "Module source has
 *   changed"; a registry module whose installed version no longer meets the
 *   call's `version` is "Module version requirements have changed";
 * - when the root module has errors, its module calls are not loaded;
 * - calls are loaded in name order; a child's backend or cloud block is
 *   only a warning.
 *
 * With {@link LoadOptions.testDirectory} (as `init`, `LoadConfigWithTests`),
 * the root directory's and the test directory's test files are read too
 * (`test-file.ts`), and the modules their `run` blocks call are loaded like
 * module calls of the root (manifest key `test.…`, see `testModulePath`);
 * their requirements count. Without it test files are ignored, as
 * `providers lock` ignores them (confirmed with terraform 1.11.4).
 *
 * The only I/O is through {@link ConfigFs} (directory listings and file
 * reads); the default uses `node:fs/promises`.
 */
import { readdir } from 'node:fs/promises';
import { isAbsolute, join, posix } from 'node:path';

import type { Flavor } from '../addresses/index.js';
import { compareBytewise, flavorInfo, goQuote } from '../addresses/index.js';
import { type Diagnostic, systemErrorCode, errorText } from '../errors.js';
import { readRegularFile } from '../fs/read.js';
import { errorDiag, fileRange, fileReadFailed, hasErrors, warningDiag } from './diagnostics.js';
import { parseConfigFile } from './file.js';
import type { DirEntry } from './files.js';
import { configFileNames } from './files.js';
import { goVersionConstraintCheck, goVersionString } from './goversion.js';
import type { ManifestRecord } from './manifest.js';
import { parseModuleManifest } from './manifest.js';
import type { ConfigFile, Module, ModuleCallDecl } from './model.js';
import { sameModuleSource } from './module-source.js';
import { buildModule } from './module.js';
import { validateProviderConfigs } from './provider-validation.js';
import type { Requirements } from './requirements.js';
import {
  mergeRequirements,
  moduleRequirements,
  sortRequirements,
  lockableRequirements,
  testFileRequirements,
} from './requirements.js';
import type { TestFileDecl } from './test-file.js';
import { DEFAULT_TEST_DIRECTORY, parseTestFile, testFileNames, testModulePath } from './test-file.js';

/** File-system access of the loader (injected in tests). Paths are joined with `node:path`. */
export interface ConfigFs {
  /** The entries of a directory; rejects when it cannot be read. */
  readDir(path: string): Promise<DirEntry[]>;
  /** A file's bytes; rejects when it cannot be read (a `code` of `ENOENT` means it does not exist). */
  readFile(path: string): Promise<Uint8Array>;
}

/** The default {@link ConfigFs}: `node:fs/promises`. */
export const nodeConfigFs: ConfigFs = {
  async readDir(path: string): Promise<DirEntry[]> {
    const entries = await readdir(path, { withFileTypes: true });
    return entries.map((e) => ({ name: e.name, isDirectory: e.isDirectory() }));
  },
  /** Regular files only, bounded (fs/read.ts): a FIFO or `/dev/zero` planted in a tree cannot stop a run. */
  readFile(path: string): Promise<Uint8Array> {
    return readRegularFile(path);
  },
};

/** Options of {@link loadModuleRequirements} and {@link loadConfig}. */
export interface LoadOptions {
  readonly flavor: Flavor;
  /**
   * The data directory, relative to the root module directory unless
   * absolute (the reference's `TF_DATA_DIR`, default `.terraform`). The
   * manifest is `<dataDir>/modules/modules.json`.
   */
  readonly dataDir?: string;
  /**
   * Load local module calls (`./…`, `../…`) that the manifest does not list
   * from the directory they name, as `init` / `get` would install them.
   * Off by default, which is the reference's behaviour ("Module not installed").
   */
  readonly resolveLocalModules?: boolean;
  /**
   * Also read test files, from the root directory and from this directory
   * (relative to the root; `init`'s `-test-directory`, default `tests`), and
   * load the modules their `run` blocks call. Unset: test files are ignored.
   */
  readonly testDirectory?: string;
  /** File-system access; {@link nodeConfigFs} by default. */
  readonly fs?: ConfigFs;
}

/** One module of the loaded tree. */
export interface ModuleNode {
  /** The call path from the root: `[]` for the root, `['vpc', 'subnets']` for `module.vpc.module.subnets`. */
  readonly path: readonly string[];
  /** The module's directory, relative to the root module directory (`.` for the root). */
  readonly dir: string;
  readonly module: Module;
  /** This module's own requirements (children excluded, built-in providers included). */
  readonly requirements: Requirements;
  /** Loaded child modules, in name order. */
  readonly children: ModuleNode[];
}

/** The result of {@link loadConfig}. */
export interface LoadedConfig {
  /** The root module; `undefined` when its directory cannot be read. */
  readonly root: ModuleNode | undefined;
  /**
   * The requirements of the whole tree, merged per provider and sorted, the
   * providers that are never locked (built-in, legacy) left out. Computed even when there are errors, from what loaded;
   * do not act on them when {@link diagnostics} has an error.
   */
  readonly requirements: Requirements;
  /** Every diagnostic, in load order; file names are relative to the root directory. */
  readonly diagnostics: Diagnostic[];
  /**
   * With {@link LoadOptions.testDirectory}: the modules that test files' `run`
   * blocks call, each the root of its own tree (path `['test', …, run]`), in
   * file and run order. Their requirements are part of {@link requirements}.
   */
  readonly tests: ModuleNode[];
  /**
   * The diagnostics of the root module's own files and of its test files, a
   * part of {@link diagnostics} (the same objects): what `init` reads first,
   * on its own, before anything else (`loadSingleModuleWithTests`).
   */
  readonly rootDiagnostics: readonly Diagnostic[];
  /** The root module calls modules or has test files: `init` installs modules, reading the whole tree once more. */
  readonly installsModules: boolean;
}

/** The result of {@link loadModuleRequirements}. */
export interface RequirementsResult {
  readonly requirements: Requirements;
  readonly diagnostics: Diagnostic[];
}

/** Nesting limit for local module resolution, which could otherwise loop (`source = "./"`). */
const MAX_MODULE_DEPTH = 100;

/**
 * The provider requirements of the configuration rooted at `dir`: every
 * module's requirements merged per provider (canonical string via
 * `constraints.toString()`), built-in and legacy providers left out (see
 * `lockableRequirements`), with the reference's diagnostics. See {@link loadConfig}.
 */
export async function loadModuleRequirements(dir: string, options: LoadOptions): Promise<RequirementsResult> {
  const cfg = await loadConfig(dir, options);
  return { requirements: cfg.requirements, diagnostics: cfg.diagnostics };
}

/** Loads the configuration rooted at `dir`: the module tree and its requirements. */
export async function loadConfig(dir: string, options: LoadOptions): Promise<LoadedConfig> {
  const loader = new Loader(dir, options);
  return loader.run();
}

class Loader {
  private readonly fs: ConfigFs;
  private readonly flavor: Flavor;
  private readonly command: string;
  private readonly product: string;
  readonly diags: Diagnostic[] = [];
  private manifest = new Map<string, ManifestRecord>();

  constructor(
    private readonly rootDir: string,
    private readonly options: LoadOptions,
  ) {
    this.fs = options.fs ?? nodeConfigFs;
    this.flavor = options.flavor;
    this.command = flavorInfo(options.flavor).command;
    this.product = flavorInfo(options.flavor).productName;
  }

  /** A root-relative directory (as the reference shows it) on disk. */
  private onDisk(rel: string): string {
    return isAbsolute(rel) ? rel : join(this.rootDir, rel);
  }

  async run(): Promise<LoadedConfig> {
    const none = (): LoadedConfig => ({
      root: undefined,
      requirements: new Map(),
      diagnostics: this.diags,
      tests: [],
      rootDiagnostics: [],
      installsModules: false,
    });
    await this.readManifest();
    // `dirFiles` reads the test directory first; failing to read it (other than its absence) stops everything.
    const testLoad =
      this.options.testDirectory === undefined ? undefined : await this.loadTestFiles(this.options.testDirectory);
    if (testLoad === 'failed') return none();
    const rootLoad = await this.loadModuleDir('.');
    if (!rootLoad) return none();
    this.diags.push(...rootLoad.diagnostics);
    const testFiles = testLoad?.files ?? [];
    if (testLoad) this.diags.push(...testLoad.diagnostics);
    const root = this.node([], '.', rootLoad.module);
    const tests: ModuleNode[] = [];
    // As the reference: a root module with errors (its test files' included) is not walked any further.
    if (!hasErrors(rootLoad.diagnostics) && !hasErrors(testLoad?.diagnostics ?? [])) {
      const built = [...(await this.children(root, 0)), ...(await this.testModules(root, testFiles, tests))];
      this.diags.push(...built);
      // BuildConfig: provider types are resolved only when the tree loaded without errors.
      this.diags.push(...validateProviderConfigs(root, this.flavor, !hasErrors(built)));
    }

    // Requirements come last, as `ProviderRequirements` runs on the loaded tree.
    const all: Requirements = new Map();
    const visit = (n: ModuleNode): void => {
      const r = moduleRequirements(n.module, this.flavor);
      this.diags.push(...r.diagnostics);
      n.requirements.clear();
      mergeRequirements(n.requirements, r.requirements);
      mergeRequirements(all, r.requirements);
      n.children.forEach(visit);
    };
    visit(root);
    if (this.flavor === 'tofu') {
      // OpenTofu also requires the providers of the test files' provider blocks (`addProviderRequirements`).
      const r = testFileRequirements(root.module, testFiles, this.flavor);
      this.diags.push(...r.diagnostics);
      mergeRequirements(all, r.requirements);
    }
    tests.forEach(visit);
    return {
      root,
      requirements: sortRequirements(lockableRequirements(all, this.flavor)),
      diagnostics: this.diags,
      tests,
      rootDiagnostics: [...rootLoad.diagnostics, ...(testLoad?.diagnostics ?? [])],
      installsModules: root.module.moduleCalls.size > 0 || testFiles.length > 0,
    };
  }

  /**
   * The test files of the root directory and of `testDir` (`dirFiles`,
   * `loadTestFiles`), in name order, root directory first; `'failed'` when
   * the test directory exists but cannot be read (the error is recorded).
   */
  private async loadTestFiles(
    testDir: string,
  ): Promise<{ files: TestFileDecl[]; diagnostics: Diagnostic[] } | 'failed'> {
    const diagnostics: Diagnostic[] = [];
    const testPath = posix.join('.', testDir.replaceAll('\\', '/'));
    const names: string[] = [];
    try {
      names.push(
        ...testFileNames(await this.fs.readDir(this.onDisk(testPath)), this.flavor).map((n) => posix.join(testPath, n)),
      );
    } catch (err) {
      const code = systemErrorCode(err);
      if (code !== 'ENOENT') {
        const why = errorText(err);
        this.diags.push(
          errorDiag(
            'Failed to read test directory',
            `Test directory ${testPath} could not be read: ${why}.`,
            fileRange(testPath),
          ),
        );
        return 'failed';
      }
      // Only a directory other than the default is expected to exist.
      if (testDir !== DEFAULT_TEST_DIRECTORY) {
        diagnostics.push(
          warningDiag(
            'Test directory does not exist',
            `Requested test directory ${testPath} does not exist.`,
            fileRange(testPath),
          ),
        );
      }
    }
    try {
      names.push(...testFileNames(await this.fs.readDir(this.onDisk('.')), this.flavor));
    } catch {
      // loadModuleDir reports an unreadable root directory.
    }
    // Keyed by name, as the reference's map (`-test-directory=.` lists the root's files twice).
    const unique = [...new Set(names)].sort(compareBytewise);
    const files = await Promise.all(
      unique.map(async (rel) => {
        let bytes: Uint8Array;
        try {
          bytes = await this.fs.readFile(this.onDisk(rel));
        } catch (err) {
          return { diagnostics: [fileReadFailed(rel, err)] };
        }
        return parseTestFile(bytes, rel, this.flavor);
      }),
    );
    for (const f of files) diagnostics.push(...f.diagnostics);
    return { files: files.flatMap((f) => ('file' in f && f.file ? [f.file] : [])), diagnostics };
  }

  /**
   * `buildTestModules`: the module of each run block, loaded as a call of
   * the root module under its test path, then its own calls.
   */
  private async testModules(
    root: ModuleNode,
    files: readonly TestFileDecl[],
    into: ModuleNode[],
  ): Promise<Diagnostic[]> {
    const runs = files.flatMap((f) =>
      f.runs.flatMap((run) => (run.module ? [{ call: run.module, path: testModulePath(f.filename, run.name) }] : [])),
    );
    const results = await Promise.all(
      runs.map(async ({ call, path }) => {
        const r = await this.loadChild(root, call, path, 0);
        if (!r.node) return r;
        const below = await this.children(r.node, 1);
        return { node: r.node, diagnostics: [...r.diagnostics, ...below, ...r.after] };
      }),
    );
    for (const r of results) if (r.node) into.push(r.node);
    return results.flatMap((r) => r.diagnostics);
  }

  private node(path: readonly string[], dir: string, module: Module): ModuleNode {
    return { path, dir, module, requirements: new Map(), children: [] };
  }

  private async readManifest(): Promise<void> {
    const dataDir = this.options.dataDir ?? '.terraform';
    const rel = posix.join(dataDir.replaceAll('\\', '/'), 'modules', 'modules.json');
    let bytes: Uint8Array;
    try {
      bytes = await this.fs.readFile(this.onDisk(rel));
    } catch (err) {
      if (systemErrorCode(err) === 'ENOENT' || systemErrorCode(err) === 'ENOTDIR') return;
      this.diags.push(errorDiag(`failed to read module manifest: ${errorText(err)}`, '', fileRange(rel)));
      return;
    }
    const m = parseModuleManifest(bytes, rel);
    this.diags.push(...m.diagnostics);
    this.manifest = m.records;
  }

  /**
   * `LoadConfigDir`: the module in `dir` (root-relative), or `undefined`
   * when the directory cannot be read (with "Failed to read module
   * directory" in the diagnostics, which the caller may replace).
   */
  private async loadModuleDir(dir: string): Promise<{ module: Module; diagnostics: Diagnostic[] } | undefined> {
    let entries: DirEntry[];
    try {
      entries = await this.fs.readDir(this.onDisk(dir));
    } catch {
      if (dir === '.') {
        this.diags.push(
          errorDiag(
            'Failed to read module directory',
            `Module directory ${this.rootDir} does not exist or cannot be read.`,
            fileRange(this.rootDir),
          ),
        );
      }
      return undefined;
    }
    const names = configFileNames(entries, this.flavor);
    const prefix = dir === '.' ? '' : dir.replaceAll('\\', '/');
    // Files are read in parallel; their diagnostics are kept in file order.
    const read = (list: string[], override: boolean): Promise<{ file?: ConfigFile; diagnostics: Diagnostic[] }[]> =>
      Promise.all(
        list.map(async (name) => {
          const rel = prefix === '' ? name : posix.join(prefix, name);
          let bytes: Uint8Array;
          try {
            bytes = await this.fs.readFile(this.onDisk(rel));
          } catch (err) {
            return { diagnostics: [fileReadFailed(rel, err)] };
          }
          return parseConfigFile(bytes, rel, { flavor: this.flavor, override });
        }),
      );
    const [primary, override] = await Promise.all([read(names.primary, false), read(names.override, true)]);
    const diagnostics = [...primary, ...override].flatMap((r) => r.diagnostics);
    const files = (rs: { file?: ConfigFile }[]): ConfigFile[] => rs.flatMap((r) => (r.file ? [r.file] : []));
    const built = buildModule(files(primary), files(override), this.flavor);
    diagnostics.push(...built.diagnostics);
    return { module: built.module, diagnostics };
  }

  /**
   * `buildChildModules`: the calls of `parent`, in name order, each followed
   * by its own calls. Modules load in parallel; diagnostics keep that order.
   */
  private async children(parent: ModuleNode, depth: number): Promise<Diagnostic[]> {
    const calls = [...parent.module.moduleCalls.values()]
      .filter((c) => c.invalid !== true && c.sourceSet)
      .sort((a, b) => compareBytewise(a.name, b.name));
    const results = await Promise.all(
      calls.map(async (call) => {
        const r = await this.loadChild(parent, call, [...parent.path, call.name], depth);
        if (!r.node) return r;
        const below = await this.children(r.node, depth + 1);
        return { node: r.node, diagnostics: [...r.diagnostics, ...below, ...r.after] };
      }),
    );
    for (const r of results) if (r.node) parent.children.push(r.node);
    return results.flatMap((r) => r.diagnostics);
  }

  /** `moduleWalkerLoad` (plus optional local resolution). */
  private async loadChild(
    parent: ModuleNode,
    call: ModuleCallDecl,
    path: string[],
    depth: number,
  ): Promise<{ node?: ModuleNode; diagnostics: Diagnostic[]; after: Diagnostic[] }> {
    const initHint = `Run "${this.command} init" to install all modules required by this configuration.`;
    const notInstalled = (detail: string): { diagnostics: Diagnostic[]; after: Diagnostic[] } => ({
      diagnostics: [errorDiag('Module not installed', detail, call.declRange)],
      after: [],
    });
    const record = this.manifest.get(path.join('.'));
    let dir: string;
    const checks: Diagnostic[] = [];
    if (record) {
      const sourceRange = call.sourceRange ?? call.declRange;
      if (call.source && !sameModuleSource(call.source, record.source, this.flavor)) {
        checks.push(
          errorDiag(
            'Module source has changed',
            `The source address was changed since this module was installed. ${initHint}`,
            sourceRange,
          ),
        );
      }
      if (call.version && !record.version) {
        checks.push(
          errorDiag(
            'Module version requirements have changed',
            `The version requirements have changed since this module was installed and the installed version is no longer acceptable. ${initHint}`,
            sourceRange,
          ),
        );
      }
      if (record.version && call.version && !goVersionConstraintCheck(call.version.text, record.version)) {
        checks.push(
          errorDiag(
            'Module version requirements have changed',
            `The version requirements have changed since this module was installed and the installed version (${goVersionString(record.version)}) is no longer acceptable. ${initHint}`,
            sourceRange,
          ),
        );
      }
      dir = record.dir;
    } else if (this.options.resolveLocalModules === true && call.source?.kind === 'local') {
      if (depth >= MAX_MODULE_DEPTH) {
        return {
          diagnostics: [
            errorDiag(
              'Module nesting too deep',
              `Module calls are nested more than ${MAX_MODULE_DEPTH} levels deep; is a local module calling itself?`,
              call.declRange,
            ),
          ],
          after: [],
        };
      }
      dir = posix.normalize(posix.join(parent.dir.replaceAll('\\', '/'), call.source.path));
    } else {
      return notInstalled(`This module is not yet installed. ${initHint}`);
    }

    const loaded = await this.loadModuleDir(dir);
    // The reference replaces every other diagnostic of this call with this one.
    if (!loaded) return notInstalled(`This module's local cache directory ${dir} could not be read. ${initHint}`);
    const mod = loaded.module;
    const after: Diagnostic[] = [];
    if (mod.backend) {
      after.push(
        warningDiag(
          'Backend configuration ignored',
          `Any selected backend applies to the entire configuration, so ${this.product} expects backend configurations only in the root module.\n\nThis is a warning rather than an error because it's sometimes convenient to temporarily call a root module as a child module for testing purposes, but this backend configuration block will have no effect.`,
          mod.backend,
        ),
      );
    }
    if (mod.imports.length > 0) {
      after.push(
        errorDiag(
          'Invalid import configuration',
          `An import block was detected in ${goQuote(path.map((p) => `module.${p}`).join('.'))}. Import blocks are only allowed in the root module.`,
          mod.imports[0]!.decl.declRange,
        ),
      );
    }
    if (mod.cloud) {
      after.push(
        warningDiag(
          'Cloud configuration ignored',
          `A cloud configuration block applies to the entire configuration, so ${this.product} expects 'cloud' blocks to only be in the root module.\n\nThis is a warning rather than an error because it's sometimes convenient to temporarily call a root module as a child module for testing purposes, but this cloud configuration block will have no effect.`,
          mod.cloud,
        ),
      );
    }
    return { node: this.node(path, dir, mod), diagnostics: [...checks, ...loaded.diagnostics], after };
  }
}
