/**
 * `provkit lock [options] [PROVIDER...]`: `providers lock` (docs/reference.md §6.1), and
 * with `-recursive` every root module of the tree below (docs/recursive-lock.md).
 * Thin: flags → requirements, old locks, a source, platforms → `runLock` /
 * `runTreeLock` → render → save (or compare, with `-check`).
 */
import { join } from 'node:path';

import { tryParseProviderSource, type Platform } from '../../addresses/index.js';
import { discoverRoots, findPolicy, loadModuleRequirements, loadPolicyFile } from '../../config/index.js';
import { ErrorCode } from '../../errors.js';
import { createHashPool, type HashStore } from '../../hashing/index.js';
import type { InstallerEvent } from '../../installer/events.js';
import { defaultNetworkConcurrency, type ProviderFailure, runLock, type Requirement } from '../../installer/lock.js';
import { PackagePlan } from '../../installer/lock-plan.js';
import { describeLockChanges, readLockBytes, type RootOutcome, runTreeLock } from '../../installer/lock-tree.js';
import { choosePlatforms, PlatformInference } from '../../installer/platforms.js';
import { loadLockFile, LOCK_FILE_NAME, providersLockWrite, saveLockFile } from '../../lockfile/index.js';
import type { HttpClient } from '../../net/index.js';
import { MemoizeSource, type Source } from '../../sources/index.js';
import { type Diagnostic, platformsText, renderDiagnostic } from '../../ui/human.js';
import { JsonUI } from '../../ui/json.js';
import { checkMirrorFlags, fromHclDiagnostic, hashStoreOption, httpFor, parsePlatformFlags, reportDiagnostics, runInterruptible, sourceFor, zipLimitsFromEnv } from '../common.js';
import { parseFlags } from '../flags.js';
import type { CliIO, GlobalOptions } from '../io.js';
import { createRenderer, type Renderer } from '../render.js';

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
                        lock would write, 2 when one would change (named), 1 on error.
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
  -json                 Machine-readable output (JSON lines; see docs/json-ui.md).
`;

export function lockCommand(args: readonly string[], io: CliIO, globals: GlobalOptions): Promise<number> {
  // -recursive writes each root's lock file when that root is done: an
  // interrupt leaves those written, and every other one as it was.
  const written = { roots: 0 };
  return runInterruptible(
    io,
    'provkit lock',
    (signal) => lockRun(args, io, globals, signal, written),
    () =>
      written.roots === 0
        ? 'nothing was changed'
        : `the lock files of ${written.roots} root module${written.roots === 1 ? '' : 's'} were written before it (each whole); no other file was changed`,
  );
}

/** A run's source, memoised so that every question is asked once (the registry's already is). */
function memoised(source: Source): Source {
  return source instanceof MemoizeSource ? source : new MemoizeSource(source);
}

/** The reference's "Could not retrieve providers for locking" diagnostics, one per platform. */
function failureDiagnostics(failures: readonly ProviderFailure[], platforms: readonly Platform[], globals: GlobalOptions, location?: string): Diagnostic[] {
  const product = globals.flavor === 'terraform' ? 'Terraform' : 'OpenTofu';
  const byPlatform = new Map<string, string[]>();
  // The code of the first failure for the platform (in provider order) is the diagnostic's code.
  const codes = new Map<string, ErrorCode>();
  const hints = new Map<string, string>();
  for (const f of failures) {
    const key = f.platform?.toString() ?? platforms.map(String).join(', ');
    byPlatform.set(key, [...(byPlatform.get(key) ?? []), `- ${f.provider.toString()}: ${f.error.message}`]);
    if (!codes.has(key)) codes.set(key, f.error.code);
    if (!hints.has(key) && f.error.hint !== undefined) hints.set(key, f.error.hint);
  }
  return [...byPlatform.entries()].sort().map(([plat, lines]) => ({
    severity: 'error' as const,
    code: codes.get(plat) ?? ErrorCode.INTERNAL,
    ...(hints.has(plat) ? { hint: hints.get(plat)! } : {}),
    summary: 'Could not retrieve providers for locking',
    detail: `${product} failed to fetch the requested providers for ${plat} in order to calculate their checksums: some providers could not be installed:\n${[...new Set(lines)].sort().join('\n')}.`,
    ...(location === undefined ? {} : { range: { filename: location } }),
  }));
}

async function lockRun(args: readonly string[], io: CliIO, globals: GlobalOptions, signal: AbortSignal, written: { roots: number }): Promise<number> {
  const flags = parseFlags(args, {
    platform: 'strings',
    'fs-mirror': 'string',
    'net-mirror': 'string',
    'oci-mirror': 'string',
    'enable-plugin-cache': 'bool',
    'all-platforms': 'bool',
    recursive: 'bool',
    check: 'bool',
    json: 'bool',
  });
  const json = flags.bools.get('json') === true;
  const ui = createRenderer(io, globals, json);
  const errors: Diagnostic[] = [];

  const platformValues = flags.lists.get('platform') ?? [];
  const platformFlags = parsePlatformFlags(platformValues, errors, false);
  const fsMirror = flags.strings.get('fs-mirror');
  const netMirror = flags.strings.get('net-mirror');
  const ociMirror = flags.strings.get('oci-mirror');
  checkMirrorFlags({ fsMirror, netMirror, ociMirror }, errors);
  const recursive = flags.bools.get('recursive') === true;
  const check = flags.bools.get('check') === true;
  if (recursive && flags.positionals.length > 0) {
    errors.push({ severity: 'error', summary: 'Invalid provider argument', detail: 'Provider arguments cannot be combined with -recursive: each root module locks the providers its configuration requires.', code: ErrorCode.USAGE });
  }
  if (errors.length > 0) return ui.fail(errors);
  const common = { io, globals, ui, signal, platformFlags, fsMirror, netMirror, ociMirror, check, allPlatforms: flags.bools.get('all-platforms') === true };
  return recursive ? lockTree({ ...common, json, written }) : lockOne({ ...common, positionals: flags.positionals });
}

interface RunArgs {
  readonly io: CliIO;
  readonly globals: GlobalOptions;
  readonly ui: Renderer;
  readonly signal: AbortSignal;
  readonly platformFlags: Platform[];
  readonly fsMirror: string | undefined;
  readonly netMirror: string | undefined;
  readonly ociMirror: string | undefined;
  readonly check: boolean;
  readonly allPlatforms: boolean;
}

/** The source, hash pool, hash store and plan of a run; `close` frees them. */
async function runParts(
  a: RunArgs,
  events: (e: InstallerEvent) => void,
): Promise<{ source: Source; plan: PackagePlan; pool: ReturnType<typeof createHashPool>; http: HttpClient; hashStore?: HashStore; close: () => Promise<void> } | undefined> {
  const { http, close } = httpFor(a.io);
  const found = await sourceFor(a.io, a.globals, http, { fsMirror: a.fsMirror, netMirror: a.netMirror, ociMirror: a.ociMirror }, 'registry', a.ui);
  if (!found) {
    close();
    return undefined;
  }
  const source = memoised(found);
  // Small archives (up to 4 MiB) are hashed in this thread: a worker's
  // start costs ~30-60 ms of CPU, hashing 1 MiB of zip ~5 ms (bench/PROFILE.md).
  const pool = createHashPool({ limits: zipLimitsFromEnv(a.io.env), inThreadBytes: 4 * 1024 * 1024 });
  const { hashStore } = hashStoreOption(a.io.env, a.globals.cwd);
  const plan = new PackagePlan({
    source,
    pool,
    http,
    events,
    signal: a.signal,
    networkConcurrency: defaultNetworkConcurrency(),
    ...(hashStore ? { hashStore } : {}),
  });
  try {
    await plan.open();
  } catch (err) {
    await pool.close();
    close();
    throw err;
  }
  return {
    source,
    plan,
    pool,
    http,
    ...(hashStore ? { hashStore } : {}),
    close: async () => {
      await plan.close();
      await pool.close();
      close();
    },
  };
}

/** `lock` in the working directory. */
async function lockOne(a: RunArgs & { positionals: readonly string[] }): Promise<number> {
  const { io, globals, ui, signal } = a;
  const errors: Diagnostic[] = [];
  const config = await loadModuleRequirements(globals.cwd, { flavor: globals.flavor });
  if (reportDiagnostics(ui, config.diagnostics, globals.cwd)) return ui.fail([]);

  let requirements: Requirement[] = [...config.requirements.values()];
  if (a.positionals.length > 0) {
    const wanted: Requirement[] = [];
    for (const arg of a.positionals) {
      const parsed = tryParseProviderSource(arg, globals.flavor);
      if (!parsed.ok) {
        errors.push({ severity: 'error', summary: 'Invalid provider argument', detail: parsed.error.detail ?? parsed.error.message, code: parsed.error.code });
        continue;
      }
      const req = requirements.find((r) => r.provider.equals(parsed.address));
      if (!req) {
        errors.push({ severity: 'error', summary: 'Invalid provider argument', detail: `The provider ${parsed.address.toString()} is not required by the current configuration.`, code: ErrorCode.USAGE });
      } else if (!wanted.includes(req)) wanted.push(req);
    }
    requirements = wanted;
  }
  if (errors.length > 0) return ui.fail(errors);

  const lockPath = join(globals.cwd, LOCK_FILE_NAME);
  const old = await loadLockFile(lockPath, globals.flavor, LOCK_FILE_NAME);
  if (reportDiagnostics(ui, old.diagnostics, globals.cwd)) return ui.fail([]);
  const policy = a.platformFlags.length > 0 ? { diagnostics: [] } : await findPolicy(globals.cwd, globals.cwd);
  if (reportDiagnostics(ui, policy.diagnostics, globals.cwd)) return ui.fail([]);

  const parts = await runParts(a, (e) => ui.event(e));
  if (!parts) return ui.fail([]);
  try {
    const chosen = await choosePlatforms({
      flags: a.platformFlags,
      policy: policy.policy,
      locks: old.locks,
      inference: new PlatformInference({ plan: parts.plan, ...(parts.hashStore ? { hashStore: parts.hashStore } : {}), signal }),
    });
    ui.event({ type: 'platforms_chosen', ...chosen });
    // The platforms each provider gains hashes for (-check names them, as lock -recursive does).
    const added = new Map<string, Platform[]>();
    const outcome = await runLock({
      signal,
      requirements,
      oldLocks: old.locks,
      platforms: chosen.platforms,
      source: parts.source,
      pool: parts.pool,
      http: parts.http,
      plan: parts.plan,
      flavor: globals.flavor,
      // With -check nothing becomes "tracked in the lock file".
      events: (e) => {
        if (e.type === 'hashes_obtained' && e.change !== 'unchanged') {
          const key = e.provider.toComparisonString();
          added.set(key, [...(added.get(key) ?? []), e.platform]);
        }
        if (!(a.check && e.type === 'hashes_obtained')) ui.event(e);
      },
      enforceSignatures: io.env['OPENTOFU_ENFORCE_GPG_VALIDATION'] === 'true',
      allPlatforms: a.allPlatforms,
    });
    if (outcome.failures.length > 0) return ui.fail(failureDiagnostics(outcome.failures, chosen.platforms, globals));
    // The reference always rewrites the file (docs/reference.md §3.3 item 43), atomically; not after an interrupt.
    if (signal.aborted) return 1;
    // Read once: -check compares with it, and an unchanged other-flavor file is kept as it is.
    const oldBytes = await readLockBytes(lockPath);
    // Whether and what to write: the one decision of lock -recursive too (lockfile/write-decision.ts).
    const decision = providersLockWrite(old.locks, outcome.locks, oldBytes, globals.flavor);
    if (a.check) {
      // Up to date: a run would leave the file as it is (the same bytes, or an unchanged other-flavor file kept).
      if (decision.file === 'unchanged') {
        ui.summary(`${LOCK_FILE_NAME} is up to date.`, { changed: false });
        return 0;
      }
      const changes = describeLockChanges(old.locks, outcome.locks, oldBytes, added);
      ui.summary(`${LOCK_FILE_NAME} would change:\n${changes.map((c) => `  ${c}`).join('\n')}`, { changed: true, changes });
      return 2;
    }
    // Rewritten even when unchanged, except the other flavor's writing of these very locks.
    if (decision.write) await saveLockFile(lockPath, outcome.locks, globals.flavor);
    ui.lockSuccess(decision.changed);
    return 0;
  } finally {
    await parts.close();
  }
}

/** How a root's outcome reads on its line. */
function statusText(o: RootOutcome): string {
  switch (o.status) {
    case 'unchanged':
      return 'no changes';
    case 'updated':
      return 'lock file updated';
    case 'created':
      return 'lock file created';
    case 'would-change':
      return 'lock file would change';
    case 'failed':
      return 'failed';
  }
}

/** `lock -recursive`: every root module below the working directory. */
async function lockTree(a: RunArgs & { json: boolean; written: { roots: number } }): Promise<number> {
  const { io, globals, ui, signal } = a;
  const started = Date.now();
  const json = a.json ? new JsonUI(io.stdout) : undefined;

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
    if (reportDiagnostics(ui, policies.flatMap((p) => p.diagnostics), globals.cwd)) return ui.fail([]);
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
    // Package progress is for machines; a person gets one line per root.
    if (json) ui.event(e);
  };
  const parts = await runParts(a, packageEvent);
  if (!parts) return ui.fail([]);
  if (!json) io.stdout.write(`${a.check ? 'Checking' : 'Locking'} ${tree.roots.length} root module${tree.roots.length === 1 ? '' : 's'}...\n`);
  let failed = false;
  try {
    const result = await runTreeLock({
      baseDir: globals.cwd,
      roots: tree.roots,
      flavor: globals.flavor,
      plan: parts.plan,
      pool: parts.pool,
      platformFlags: a.platformFlags,
      check: a.check,
      signal,
      allPlatforms: a.allPlatforms,
      enforceSignatures: io.env['OPENTOFU_ENFORCE_GPG_VALIDATION'] === 'true',
      ...(parts.hashStore ? { hashStore: parts.hashStore } : {}),
      events: (root, e) => {
        if (json) {
          json.scoped({ root }).event(e);
          return;
        }
        if (e.type === 'warning') packageEvent(e);
      },
      onRoot: (o) => {
        const diagnostics: Diagnostic[] = [
          ...o.diagnostics.map(fromHclDiagnostic),
          ...failureDiagnostics(o.failures, o.platforms?.platforms ?? [], globals, o.root),
          ...(o.error ? [{ severity: 'error' as const, summary: o.error.summary ?? 'Failed to lock the root module', detail: o.error.message, range: { filename: o.root }, code: o.error.code }] : []),
        ];
        if (o.status === 'failed') failed = true;
        if (!a.check && o.status !== 'failed') a.written.roots += 1;
        const platforms = o.platforms ? platformsText({ type: 'platforms_chosen', ...o.platforms }) : undefined;
        if (json) {
          const scoped = json.scoped({ root: o.root });
          for (const d of diagnostics) scoped.diagnostic(d);
          scoped.message(o.status === 'failed' ? 'error' : 'info', `${o.root}: ${statusText(o)}`, 'lock_root', {
            status: o.status.replace('-', '_'),
            providers: o.providers,
            platforms: o.platforms?.platforms.map(String) ?? [],
            platforms_origin: o.platforms?.origin ?? null,
            ...(o.platforms?.policyFile === undefined ? {} : { policy_file: o.platforms.policyFile }),
            ...(o.platforms?.via === undefined ? {} : { platforms_via: o.platforms.via }),
            changes: o.changes,
          });
          return;
        }
        const what = `${o.providers} provider${o.providers === 1 ? '' : 's'}${platforms === undefined ? '' : `; ${platforms}`}`;
        io.stdout.write(`- ${o.root}: ${statusText(o)} (${what})\n`);
        if (o.status === 'would-change' || o.status === 'updated') for (const c of o.changes) io.stdout.write(`    ${c}\n`);
        for (const d of diagnostics) renderDiagnostic(d, io.stderr);
      },
    });
    const stats = parts.plan.stats();
    const seconds = (Date.now() - started) / 1000;
    const s = result.byStatus;
    const counts = [
      s.unchanged > 0 ? `${s.unchanged} unchanged` : '',
      s.updated > 0 ? `${s.updated} updated` : '',
      s.created > 0 ? `${s.created} created` : '',
      s['would-change'] > 0 ? `${s['would-change']} would change` : '',
      s.failed > 0 ? `${s.failed} failed` : '',
    ].filter((x) => x !== '');
    const fetched = [`${stats.downloaded} downloaded`, ...(stats.local > 0 ? [`${stats.local} from the mirror`] : []), `${stats.fromStore} from the hash store`];
    const message =
      `${a.check ? 'Checked' : 'Locked'} ${result.roots} root module${result.roots === 1 ? '' : 's'} (${counts.join(', ')}): ` +
      `${result.providers} provider${result.providers === 1 ? '' : 's'}, ${stats.packages} unique package${stats.packages === 1 ? '' : 's'} (${fetched.join(', ')}) in ${seconds.toFixed(1)} s.`;
    ui.summary(message, {
      roots: result.roots,
      unchanged: s.unchanged,
      updated: s.updated,
      created: s.created,
      would_change: s['would-change'],
      failed: s.failed,
      providers: result.providers,
      packages: stats.packages,
      downloaded: stats.downloaded,
      local: stats.local,
      hash_store: stats.fromStore,
      seconds,
    });
    if (signal.aborted) return 1;
    if (failed) return 1;
    return a.check && s['would-change'] > 0 ? 2 : 0;
  } finally {
    await parts.close();
  }
}
