/**
 * `provkit lock [options] [PROVIDER...]`: `providers lock` (docs/reference.md §6.1), and
 * with `-recursive` every root module of the tree below (docs/recursive-lock.md).
 * Thin: flags → a source → `lockModule` (installer/lock-module.ts: the one
 * pipeline, which `runTreeLock` runs for every root of `-recursive`) → render.
 */
import { join } from 'node:path';

import type { Flavor, Platform } from '../../addresses/index.js';
import { discoverRoots, loadPolicyFile } from '../../config/index.js';
import { ErrorCode } from '../../errors.js';
import type { InstallerEvent } from '../../installer/events.js';
import { lockFailureDiagnostics } from '../../installer/lock.js';
import { lockModule } from '../../installer/lock-module.js';
import { FetchCache, sumFetchCacheStats } from '../../installer/fetch-cache.js';
import { runTreeLock } from '../../installer/lock-tree.js';
import { LOCK_FILE_NAME } from '../../lockfile/index.js';
import { MemoizeSource, type Source } from '../../sources/index.js';
import type { Diagnostic } from '../../ui/human.js';
import { lockTreeSummary, renderLockRoot } from '../../ui/lock-tree.js';
import { configDiagnostics, PendingDiagnostics, reportDiagnostics } from '../diagnostics.js';
import { parsePlatformFlags, requiredProviderArguments } from '../flag-values.js';
import { checkMirrorFlags } from '../mirror-flags.js';
import { DOWNLOADS_FLAG, downloadsHelp, downloadsOption } from '../downloads.js';
import { parseFlags } from '../flags.js';
import { noteFlavor } from '../flavor.js';
import { createRenderer, humanStyle, type Renderer } from '../render.js';
import { type RunResources, runInterruptibleCounting } from '../resources.js';
import type { CliIO, GlobalOptions } from '../io.js';
import { count } from '../../ui/words.js';

export const LOCK_HELP = `Usage: provkit [global options] lock [options] [PROVIDER...]

  Writes the hashes of the configuration's providers into
  .terraform.lock.hcl for each platform given (providers lock). All
  platforms are fetched and hashed in parallel; no package is fetched twice.

  With -recursive, locks every root module below the working directory in
  one run (each as "lock" run in it would), fetching and hashing each
  package once for the whole tree.

  Platforms: -platform flags; else the nearest provkit.hcl (platforms = [...],
  in the root module's directory or above it, up to the working directory);
  else the platforms the existing lock file already covers (inferred from its
  h1: hashes through the hash store, the registry or the mirror); else this
  machine's.

Options:
  -platform=OS_ARCH     A target platform (repeatable).
  -recursive            Lock every root module of the tree: every directory with
                        .tf, .tf.json or .tofu files that no other directory uses
                        as a local module (.terraform/ and hidden directories are
                        skipped).
  -check                Write nothing: exit 0 when every lock file is already what
                        lock would write, 2 when one would change (named, with
                        what would change), 1 on error. Prints that summary, not
                        a line per package.
  -verbose              With -check (or -recursive): also a line per package, as lock prints them.
  -fs-mirror=DIR        Use a filesystem mirror instead of the origin registries.
  -net-mirror=URL       Use a network mirror (https) instead of the origin registries.
  -oci-mirror=TEMPLATE  Use repositories of an OCI registry instead of the origin
                        registries: REGISTRY[:PORT]/PATH, an RFC 6570 level 1
                        template over {hostname}, {namespace} and {type}, as
                        tofu providers lock -oci-mirror (see docs/oci.md).
  -enable-plugin-cache  Accepted for compatibility (the cache is not needed to lock).
  -all-platforms        Also lock every platform the source has for the
                        selected version: those the registry publishes, or the
                        packages a filesystem mirror holds (each fetched and hashed).
${downloadsHelp(24)}
  -json                 Machine-readable output (JSON lines; see docs/json-ui.md).
`;

export function lockCommand(args: readonly string[], io: CliIO, globals: GlobalOptions): Promise<number> {
  // -recursive writes each root's lock file when that root is done: an
  // interrupt leaves those written, and every other one as it was.
  return runInterruptibleCounting(
    io,
    globals,
    'provkit lock',
    (n) =>
      `the lock files of ${count(n, 'root module')} were written before it (each whole); no other file was changed`,
    (r, rootWritten) => lockRun(args, r, rootWritten),
  );
}

async function lockRun(args: readonly string[], r: RunResources, rootWritten: () => void): Promise<number> {
  const { io, globals } = r;
  const flags = parseFlags(args, {
    platform: 'strings',
    'fs-mirror': 'string',
    'net-mirror': 'string',
    'oci-mirror': 'string',
    'enable-plugin-cache': 'bool',
    'all-platforms': 'bool',
    recursive: 'bool',
    check: 'bool',
    verbose: 'bool',
    json: 'bool',
    ...DOWNLOADS_FLAG,
  });
  const downloads = downloadsOption(flags, io.env);
  const json = flags.values.json === true;
  const check = flags.values.check === true;
  const verbose = flags.values.verbose === true;
  // providers lock's warnings go to stdout (Meta.showDiagnostics; test/fixtures/reference-runs/).
  // -check is for hooks and CI: what would change, not a line per package (unless -verbose).
  const ui = createRenderer(io, globals, json, { packageLines: !check || verbose, warningsToStdout: true });
  // An interrupt takes the live display away before its one line (src/cli/interrupt.ts runInterruptible).
  r.defer(() => ui.stop());
  const errors: Diagnostic[] = [];

  const platformValues = flags.values.platform ?? [];
  const platformFlags = parsePlatformFlags(platformValues, errors, false);
  const fsMirror = flags.values['fs-mirror'];
  const netMirror = flags.values['net-mirror'];
  const ociMirror = flags.values['oci-mirror'];
  checkMirrorFlags({ fsMirror, netMirror, ociMirror }, errors);
  const recursive = flags.values.recursive === true;
  if (recursive && flags.positionals.length > 0) {
    errors.push({
      severity: 'error',
      summary: 'Invalid provider argument',
      detail:
        'Provider arguments cannot be combined with -recursive: each root module locks the providers its configuration requires.',
      code: ErrorCode.USAGE,
    });
  }
  if (errors.length > 0) return ui.fail(errors);
  // lock -recursive says each root's flavor in its summary instead.
  if (!recursive) noteFlavor(io, globals);
  const common = {
    r,
    ui,
    platformFlags,
    fsMirror,
    netMirror,
    ociMirror,
    check,
    allPlatforms: flags.values['all-platforms'] === true,
    enforceSignatures: r.signatures().enforceValidation === true,
    downloads,
  };
  return recursive
    ? lockTree({ ...common, verbose, rootWritten })
    : lockOne({ ...common, positionals: flags.positionals });
}

interface RunArgs {
  readonly r: RunResources;
  readonly ui: Renderer;
  readonly platformFlags: Platform[];
  readonly fsMirror: string | undefined;
  readonly netMirror: string | undefined;
  readonly ociMirror: string | undefined;
  readonly check: boolean;
  readonly allPlatforms: boolean;
  /** `OPENTOFU_ENFORCE_GPG_VALIDATION=true` (RunResources.signatures: read once, at the CLI's edge). */
  readonly enforceSignatures: boolean;
  /** Archives downloaded at once (downloads.ts). */
  readonly downloads: { readonly networkConcurrency?: number };
}

/**
 * The run's package cache over its source (memoised, so that every question
 * is asked once; the registry's already is), closed with the run's
 * resources; undefined when the CLI configuration has errors (rendered).
 */
async function openCache(
  a: RunArgs,
  events: (e: InstallerEvent) => void,
  flavor: Flavor = a.r.globals.flavor,
): Promise<FetchCache | undefined> {
  const { r } = a;
  const found = await r.source(
    { fsMirror: a.fsMirror, netMirror: a.netMirror, ociMirror: a.ociMirror },
    'registry',
    a.ui,
    flavor,
  );
  if (!found) return undefined;
  const source: Source = found instanceof MemoizeSource ? found : new MemoizeSource(found);
  const cache = new FetchCache({
    source,
    // Small archives (up to 4 MiB) are hashed in this thread: a worker's
    // start costs ~30-60 ms of CPU, hashing 1 MiB of zip ~5 ms (bench/PROFILE.md).
    pool: r.pool({ limits: r.zipLimits(), inThreadBytes: 4 * 1024 * 1024 }),
    http: r.http(),
    events,
    signal: r.signal,
    ...a.downloads,
    ...r.hashStore(),
  });
  r.defer(() => cache.close());
  return cache;
}

/** `lock` in the working directory: {@link lockModule}, rendered. */
async function lockOne(a: RunArgs & { positionals: readonly string[] }): Promise<number> {
  const { r, ui } = a;
  const { globals, signal } = r;
  const flavor = globals.flavor;
  // As providers lock: warnings are shown at the end, with whatever else is reported there.
  const pending = new PendingDiagnostics(ui, globals.cwd);
  const outcome = await lockModule(globals.cwd, {
    flavor,
    cache: () => openCache(a, (e) => ui.event(e)),
    platforms: a.platformFlags,
    ...r.hashStore(),
    ...(a.positionals.length > 0
      ? {
          selectProviders: (all) => {
            const errors: Diagnostic[] = [];
            return { requirements: requiredProviderArguments(a.positionals, all, flavor, errors), errors };
          },
        }
      : {}),
    check: a.check,
    allPlatforms: a.allPlatforms,
    enforceSignatures: a.enforceSignatures,
    events: (e) => ui.event(e),
    signal,
  });
  if (pending.add(outcome.diagnostics)) return 1;
  if (outcome.selectionErrors.length > 0) return pending.fail(outcome.selectionErrors);
  // Interrupted before the run finished: the packages failed for that one reason, said once by
  // runInterruptible. An interrupt after the lock file was written is too late to undo it: the outcome
  // stands, rendered below, and runInterruptible says the interrupt came after completion.
  const finished = outcome.failures.length === 0 && outcome.error === undefined && outcome.status !== 'failed';
  if (signal.aborted && !finished) return 1;
  if (outcome.failures.length > 0)
    return pending.fail(lockFailureDiagnostics(outcome.failures, outcome.platforms?.platforms ?? [], flavor));
  // The lock file could not be written: said as any run's error is (runInterruptible).
  if (outcome.error) throw outcome.error;
  // The source could not be opened (its CLI configuration's diagnostics are rendered).
  if (outcome.status === 'failed') return pending.fail([]);
  if (a.check) {
    pending.flush();
    if (outcome.status === 'unchanged') {
      ui.summary(`${LOCK_FILE_NAME} is up to date.`, { changed: false });
      return 0;
    }
    ui.summary(`${LOCK_FILE_NAME} would change:\n${outcome.changes.map((c) => `  ${c}`).join('\n')}`, {
      changed: true,
      changes: outcome.changes,
    });
    return 2;
  }
  // As providers lock: the warnings after the checksums lines, before "Success!".
  pending.flush();
  ui.lockSuccess(outcome.changed);
  return 0;
}

/** `lock -recursive`: every root module below the working directory. */
async function lockTree(a: RunArgs & { verbose: boolean; rootWritten: () => void }): Promise<number> {
  const { r, ui } = a;
  const { io, globals, signal } = r;
  const started = Date.now();
  const json = ui.json;

  const tree = await discoverRoots(globals.cwd, { flavor: globals.flavor });
  if (reportDiagnostics(ui, tree.diagnostics, globals.cwd)) return ui.fail([]);
  if (tree.roots.length === 0) {
    return ui.fail([
      {
        severity: 'error',
        summary: 'No root modules',
        code: ErrorCode.INVALID_CONFIGURATION,
        detail: `No directory under ${globals.cwd} holds configuration files (${globals.flavor === 'tofu' ? '.tf, .tf.json, .tofu or .tofu.json' : '.tf or .tf.json'}) other than modules other directories call.`,
      },
    ]);
  }
  // Every policy file of the tree is checked before anything is fetched.
  if (a.platformFlags.length === 0) {
    const policies = await Promise.all(tree.policyFiles.map((f) => loadPolicyFile(join(globals.cwd, f), f)));
    if (
      reportDiagnostics(
        ui,
        policies.flatMap((p) => p.diagnostics),
        globals.cwd,
      )
    )
      return ui.fail([]);
  }

  // Warnings are the same for every root that meets them: each is shown once.
  const warned = new Set<string>();
  const packageEvent = (e: InstallerEvent): void => {
    if (e.type === 'warning') {
      const key = `${e.summary}\n${e.detail}`;
      if (warned.has(key)) return;
      warned.add(key);
      ui.event(e);
      return;
    }
    // Package progress is for machines; a person gets one line per root (and -verbose the package lines).
    if (json || a.verbose) ui.event(e);
  };
  // Each root in its own flavor, as lock run in it would choose (src/cli/flavor.ts), each
  // flavor's roots sharing one cache over that flavor's source.
  const rootFlavors = new Map(tree.roots.map((root) => [root, globals.flavorIn(join(globals.cwd, root))]));
  const caches = new Map<Flavor, FetchCache>();
  for (const flavor of new Set([...rootFlavors.values()].map((f) => f.flavor))) {
    // eslint-disable-next-line no-await-in-loop -- one or two, each rendering its CLI configuration's diagnostics in order
    const cache = await openCache(a, packageEvent, flavor);
    if (!cache) return ui.fail([]);
    caches.set(flavor, cache);
  }
  // Each root's diagnostics as a single lock's: boxed on a terminal, warnings on stdout.
  const treeStyle = humanStyle(io, globals.color, { warningsToStdout: true });
  if (!json) io.stdout.write(`${a.check ? 'Checking' : 'Locking'} ${count(tree.roots.length, 'root module')}...\n`);
  let failed = false;
  const result = await runTreeLock({
    baseDir: globals.cwd,
    roots: tree.roots,
    flavorOf: (root) => rootFlavors.get(root) ?? { flavor: globals.flavor },
    cacheFor: (flavor) => caches.get(flavor)!,
    platformFlags: a.platformFlags,
    check: a.check,
    signal,
    allPlatforms: a.allPlatforms,
    enforceSignatures: a.enforceSignatures,
    ...r.hashStore(),
    events: (root, e) => {
      if (json) {
        json.scoped({ root }).event(e);
        return;
      }
      if (e.type === 'warning') packageEvent(e);
    },
    onRoot: (o) => {
      const diagnostics: Diagnostic[] = [
        // With their source lines, as a single root's (file names are relative to the working directory).
        ...configDiagnostics(o.diagnostics, globals.cwd, true),
        ...lockFailureDiagnostics(o.failures, o.platforms?.platforms ?? [], o.flavor.flavor, o.root),
        ...(o.error
          ? [
              {
                severity: 'error' as const,
                summary: o.error.summary ?? 'Failed to lock the root module',
                detail: o.error.message,
                range: { filename: o.root },
                code: o.error.code,
              },
            ]
          : []),
      ];
      if (o.status === 'failed') failed = true;
      if (!a.check && o.status !== 'failed') a.rootWritten();
      // Interrupted: the roots in progress failed for that one reason, said once by runInterruptible.
      renderLockRoot(o, signal.aborted ? [] : diagnostics, {
        stdout: io.stdout,
        stderr: io.stderr,
        json,
        style: treeStyle,
      });
    },
  });
  const summary = lockTreeSummary(
    result,
    sumFetchCacheStats([...caches.values()].map((p) => p.stats())),
    (Date.now() - started) / 1000,
    a.check,
    [...rootFlavors.values()].some((f) => f.reason !== undefined),
  );
  ui.summary(summary.message, summary.fields);
  // Interrupted before every root was done: the roots in progress failed for that one reason, said once
  // by runInterruptible with the lock files written before it. An interrupt after every root's lock file
  // was written is too late to undo them: the outcome stands, and runInterruptible says the interrupt
  // came after completion (as for a single root, lockOne).
  if (failed) return 1;
  return a.check && result.byStatus['would-change'] > 0 ? 2 : 0;
}
