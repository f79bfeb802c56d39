/**
 * Finding the root modules of a directory tree (`lock -recursive`): every
 * directory below the base holding configuration files (`.tf`, `.tf.json`;
 * for OpenTofu also `.tofu`, `.tofu.json`; {@link configFileNames}) that no
 * other directory of the tree calls as a local module.
 *
 * - `.terraform/` directories (installed modules and providers) and hidden
 *   directories (names starting with `.`: `.git`, `.terragrunt-cache`, …) are
 *   not entered; symbolic links to directories are not followed (a link can
 *   make the walk a loop, and a linked tree is usually another copy).
 * - A directory is "used as a local module" when a module of the tree (a
 *   root or not) calls it with `source = "./…"` or `"../…"` (after override
 *   files are applied, as the loader applies them), or when a `run` block of
 *   a test file (in the directory or its `tests/` directory) does: such
 *   directories are modules, not roots, whoever uses them.
 * - Directories are read in parallel, a bounded number at once; the result
 *   is sorted (byte order of the slash-separated relative paths, `.` for the
 *   base itself).
 *
 * It also lists the platform policy files (`provkit.hcl`, policy.ts) of the
 * directories it walks, so a run can check them all before it starts.
 *
 * Files are only parsed here for their module calls; their diagnostics are
 * left to the loader that reads each root (load.ts).
 */
import { asError, type Diagnostic } from '../errors.js';
import { posix } from 'node:path';

import type { Flavor } from '../addresses/index.js';
import { compareBytewise } from '../addresses/index.js';
import { fileRange, warningDiag } from './diagnostics.js';
import { parseConfigFile } from './file.js';
import type { DirEntry } from './files.js';
import { configFileNames } from './files.js';
import type { ConfigFs } from './load.js';
import { nodeConfigFs } from './load.js';
import type { ConfigFile } from './model.js';
import { buildModule } from './module.js';
import { POLICY_FILE_NAME } from './policy.js';
import { DEFAULT_TEST_DIRECTORY, parseTestFile, testFileNames } from './test-file.js';

/** Options of {@link discoverRoots}. */
export interface DiscoverOptions {
  readonly flavor: Flavor;
  readonly fs?: ConfigFs;
  /** Directories read at once (default 16). */
  readonly concurrency?: number;
}

/** The result of {@link discoverRoots}. */
export interface DiscoveredTree {
  /** Root module directories, relative to the base (`.` for the base itself), sorted. */
  readonly roots: string[];
  /** Every directory of the walk with configuration files (roots and modules), sorted. */
  readonly moduleDirs: string[];
  /** The `provkit.hcl` files found (relative paths), sorted. */
  readonly policyFiles: string[];
  /** Directories that could not be read (warnings). */
  readonly diagnostics: Diagnostic[];
}

/** Whether the walk enters a directory named `name`. */
export function isWalkedDirectory(name: string): boolean {
  return !name.startsWith('.');
}

/** Finds the root modules below `baseDir`; see the module comment. */
export async function discoverRoots(baseDir: string, options: DiscoverOptions): Promise<DiscoveredTree> {
  const fs = options.fs ?? nodeConfigFs;
  const flavor = options.flavor;
  const limit = Math.max(1, options.concurrency ?? 16);
  const onDisk = (rel: string): string => (rel === '.' ? baseDir : posix.join(baseDir.replaceAll('\\', '/'), rel));
  const diagnostics: Diagnostic[] = [];
  const moduleDirs: string[] = [];
  const policyFiles: string[] = [];
  const used = new Set<string>();

  const readFile = async (rel: string): Promise<Uint8Array | undefined> => {
    try {
      return await fs.readFile(onDisk(rel));
    } catch {
      return undefined;
    }
  };
  const readDir = async (rel: string): Promise<DirEntry[] | undefined> => {
    try {
      return await fs.readDir(onDisk(rel));
    } catch {
      return undefined;
    }
  };

  /** Marks the directory a local `source` of a module in `from` names (inside the tree only). */
  const use = (from: string, source: string): void => {
    const target = posix.normalize(posix.join(from, source));
    if (target === '..' || target.startsWith('../')) return;
    used.add(target === '' ? '.' : target.replace(/\/$/, ''));
  };

  /** The local module calls of the module in `dir` and of its test files. */
  const scanModule = async (dir: string, entries: readonly DirEntry[]): Promise<void> => {
    const names = configFileNames(entries, flavor);
    const prefix = (name: string): string => (dir === '.' ? name : posix.join(dir, name));
    const parse = async (list: readonly string[], override: boolean): Promise<ConfigFile[]> =>
      (
        await Promise.all(
          list.map(async (name) => {
            const bytes = await readFile(prefix(name));
            return bytes === undefined ? undefined : parseConfigFile(bytes, prefix(name), { flavor, override }).file;
          }),
        )
      ).filter((f): f is ConfigFile => f !== undefined);
    const [primary, override] = await Promise.all([parse(names.primary, false), parse(names.override, true)]);
    const module = buildModule(primary, override, flavor).module;
    for (const call of module.moduleCalls.values()) {
      if (call.invalid !== true && call.source?.kind === 'local') use(dir, call.source.path);
    }
    // Test files of the directory and of its default test directory: their
    // run blocks' module sources are relative to this directory.
    const testEntries = await readDir(prefix(DEFAULT_TEST_DIRECTORY));
    const tests = [
      ...testFileNames(entries, flavor).map(prefix),
      ...(testEntries === undefined
        ? []
        : testFileNames(testEntries, flavor).map((n) => prefix(posix.join(DEFAULT_TEST_DIRECTORY, n)))),
    ];
    await Promise.all(
      tests.map(async (rel) => {
        const bytes = await readFile(rel);
        if (bytes === undefined) return;
        const parsed = parseTestFile(bytes, rel, flavor);
        for (const run of parsed.file?.runs ?? []) {
          if (run.module?.source?.kind === 'local') use(dir, run.module.source.path);
        }
      }),
    );
  };

  // A breadth-first walk with at most `limit` directories in hand at once.
  const queue: string[] = ['.'];
  let active = 0;
  await new Promise<void>((resolve, reject) => {
    const pump = (): void => {
      if (queue.length === 0 && active === 0) {
        resolve();
        return;
      }
      while (active < limit && queue.length > 0) {
        const dir = queue.shift()!;
        active += 1;
        visit(dir).then(
          () => {
            active -= 1;
            pump();
          },
          (err: unknown) => reject(asError(err)),
        );
      }
    };
    const visit = async (dir: string): Promise<void> => {
      const entries = await readDir(dir);
      if (entries === undefined) {
        diagnostics.push(
          warningDiag(
            'Failed to read directory',
            `The directory ${dir} could not be read; no root modules were looked for in it.`,
            fileRange(dir),
          ),
        );
        return;
      }
      for (const e of entries) {
        if (e.isDirectory && isWalkedDirectory(e.name)) queue.push(dir === '.' ? e.name : posix.join(dir, e.name));
        if (!e.isDirectory && e.name === POLICY_FILE_NAME)
          policyFiles.push(dir === '.' ? e.name : posix.join(dir, e.name));
      }
      const names = configFileNames(entries, flavor);
      if (names.primary.length + names.override.length === 0) return;
      moduleDirs.push(dir);
      await scanModule(dir, entries);
    };
    pump();
  });

  const sort = (xs: string[]): string[] => xs.sort(compareBytewise);
  return {
    roots: sort(moduleDirs.filter((d) => !used.has(d))),
    moduleDirs: sort(moduleDirs),
    policyFiles: sort(policyFiles),
    diagnostics: diagnostics.sort((a, b) => compareBytewise(a.range?.filename ?? '', b.range?.filename ?? '')),
  };
}
