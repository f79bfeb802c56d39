/**
 * `provkit bundle create|import`: air-gap bundles (docs/bundles.md).
 * Thin: flags → requirements, locks, a source → `createBundleFile` /
 * `importBundle` → render.
 */
import { join, resolve } from 'node:path';

import {
  currentPlatform,
  parseConstraints,
  tryParseProviderSource,
  VersionConstraints,
  type Requirement,
} from '../../addresses/index.js';
import { loadModuleRequirements } from '../../config/index.js';
import { describeError, diagnosticFromError, ErrorCode, fileError, isProvkitError, WarningCode } from '../../errors.js';
import { writeFileAtomic } from '../../fs/atomic.js';
import { createBundleFile } from '../../bundles/create.js';
import { importBundle, readBundleManifest } from '../../bundles/import.js';
import { importBundleToOci } from '../../bundles/import-oci.js';
import type { Locks } from '../../lockfile/index.js';
import { ociClientFor, templateRepositoryMapping } from '../../sources/index.js';
import { bundleCreationTime } from '../../bundles/manifest.js';
import { loadLockFile, LOCK_FILE_NAME, parseLockFile } from '../../lockfile/index.js';
import type { Diagnostic } from '../../ui/human.js';
import { mirrorFailureDiagnostics } from '../../installer/mirror.js';
import { reportDiagnostics, targetMutexWarnings } from '../diagnostics.js';
import { invalidProviderArgument, parsePlatformFlags, platformsFor } from '../flag-values.js';
import { checkMirrorFlags, ociTemplate, ociTemplateDiagnostic } from '../mirror-flags.js';
import { ociPublishCounts } from '../oci-counts.js';
import { DOWNLOADS_FLAG, downloadsHelp, downloadsOption } from '../downloads.js';
import { parseFlags } from '../flags.js';
import { nameSuggestion } from '../../go/index.js';
import { noteFlavor } from '../flavor.js';
import type { CliIO, GlobalOptions } from '../io.js';
import { createRenderer, type Renderer } from '../render.js';
import { fitHelp } from '../../ui/help.js';
import { type RunResources, runInterruptibleWith } from '../resources.js';
import { VERSION } from '../version.js';
import { count } from '../../ui/words.js';
import { readRegularFile } from '../../fs/read.js';

export const BUNDLE_HELP = `Usage: provkit [global options] bundle create [options] [PROVIDER[@CONSTRAINT]...] OUT.tar
       provkit [global options] bundle import [options] BUNDLE.tar TARGET_DIR
       provkit [global options] bundle import [options] BUNDLE.tar oci://REGISTRY[:PORT]/TEMPLATE

  create: writes an air-gap bundle: a tar holding a packed mirror of the
  providers (index.json and VERSION.json with zh: and both h1: forms), their
  lock-file entries and a manifest with the size and SHA-256 of every member.
  Without PROVIDER arguments it takes the configuration's providers; versions
  follow the lock file, whose hashes the packages must match. The same inputs
  give the same bytes; the creation time is $SOURCE_DATE_EPOCH, else the Unix
  epoch (see docs/bundles.md).

  import: checks every member against the manifest and every package against
  its hashes, then merges the mirror into TARGET_DIR (indexes are unions,
  written atomically). A bundle that fails any check changes nothing. With
  an oci:// target the checked packages are published into an OCI registry
  as mirror oci://… publishes them (see docs/oci.md).

Options of create:
  -platform=OS_ARCH     A target platform (repeatable; default: the platforms of
                        provkit.hcl in the working directory, else this machine's).
  -since=OLD.tar        Leave out the packages OLD.tar already holds (a delta bundle).
  -fs-mirror=DIR        Take packages from a filesystem mirror, not the origin registries.
  -net-mirror=URL       Take packages from a network mirror, not the origin registries.
${downloadsHelp(24)}
  -json                 Machine-readable output (JSON lines).

Options of import:
  -trusted-lock=FILE    Also require every package to match this lock file.
  -lock-out=FILE        Write the bundle's lock-file entries to FILE.
  -max-member-size=N    Refuse members larger than N bytes (default 2 GiB).
  -json                 Machine-readable output (JSON lines).
`;

export async function bundleCommand(args: readonly string[], io: CliIO, globals: GlobalOptions): Promise<number> {
  const sub = args.find((a) => !a.startsWith('-'));
  const rest = args.filter((a) => a !== sub);
  if (sub === 'create') return runInterruptibleWith(io, globals, 'provkit bundle create', (r) => bundleCreate(rest, r));
  if (sub === 'import') return runInterruptibleWith(io, globals, 'provkit bundle import', (r) => bundleImport(rest, r));
  const json = args.includes('-json') || args.includes('--json');
  const ui = createRenderer(io, globals, json);
  const meant = sub === undefined ? undefined : nameSuggestion(sub, BUNDLE_SUBCOMMANDS, 'typed');
  ui.fail([
    {
      severity: 'error',
      summary: 'Missing or unknown bundle subcommand',
      detail: `Use "bundle create" or "bundle import" (got ${JSON.stringify(sub ?? '')}).`,
      ...(meant === undefined ? {} : { hint: `Did you mean "bundle ${meant}"?` }),
      code: ErrorCode.USAGE,
    },
  ]);
  // The usage after the error, fitted to 80 columns as -help prints it.
  if (!json) io.stderr.write(`${fitHelp(BUNDLE_HELP)}`);
  return 1;
}

/** The subcommands of `bundle`, for "did you mean". */
const BUNDLE_SUBCOMMANDS = ['create', 'import'] as const;

function errorDiagnostic(summary: string, err: unknown): Diagnostic {
  return { ...diagnosticFromError(err, summary), summary, detail: describeError(err) };
}

async function bundleCreate(args: readonly string[], r: RunResources): Promise<number> {
  const { io, globals, signal } = r;
  const flags = parseFlags(args, {
    platform: 'strings',
    since: 'string',
    'fs-mirror': 'string',
    'net-mirror': 'string',
    json: 'bool',
    ...DOWNLOADS_FLAG,
  });
  const downloads = downloadsOption(flags, io.env);
  const ui = createRenderer(io, globals, flags.values.json === true);
  const errors: Diagnostic[] = [];
  if (flags.positionals.length < 1)
    errors.push({
      severity: 'error',
      summary: 'Wrong number of arguments',
      detail: 'bundle create requires the output file (OUT.tar) as its last argument.',
      code: ErrorCode.USAGE,
    });
  const platformValues = flags.values.platform ?? [];
  parsePlatformFlags(platformValues, errors);
  const fsMirror = flags.values['fs-mirror'];
  const netMirror = flags.values['net-mirror'];
  checkMirrorFlags({ fsMirror, netMirror }, errors);
  let createdEpoch = 0;
  try {
    createdEpoch = bundleCreationTime(io.env);
  } catch (err) {
    errors.push(errorDiagnostic('Invalid SOURCE_DATE_EPOCH', err));
  }
  if (errors.length > 0) return ui.fail(errors);
  noteFlavor(io, globals);
  // -platform, else the policy file (provkit.hcl), else this machine's.
  const chosen = await platformsFor(globals, platformValues, errors, ui);
  if (!chosen) return ui.fail([]);
  const platforms = chosen.platforms.length > 0 ? chosen.platforms : [currentPlatform()];

  const config = await loadModuleRequirements(globals.cwd, { flavor: globals.flavor });
  if (reportDiagnostics(ui, config.diagnostics, globals.cwd)) return ui.fail([]);
  let requirements: Requirement[] = [...config.requirements.values()];
  const providerArgs = flags.positionals.slice(0, -1);
  if (providerArgs.length > 0) {
    const wanted: Requirement[] = [];
    for (const arg of providerArgs) {
      const at = arg.indexOf('@');
      const parsed = tryParseProviderSource(at < 0 ? arg : arg.slice(0, at), globals.flavor);
      if (!parsed.ok) {
        errors.push(invalidProviderArgument(parsed.error));
        continue;
      }
      let constraints: VersionConstraints =
        requirements.find((r) => r.provider.equals(parsed.address))?.constraints ?? new VersionConstraints();
      if (at >= 0) {
        try {
          constraints = parseConstraints(arg.slice(at + 1), globals.flavor);
        } catch (err) {
          errors.push(errorDiagnostic('Invalid version constraint', err));
          continue;
        }
      }
      if (!wanted.some((w) => w.provider.equals(parsed.address)))
        wanted.push({ provider: parsed.address, constraints });
    }
    requirements = wanted;
  }
  if (requirements.length === 0)
    errors.push({
      severity: 'error',
      summary: 'No providers to bundle',
      detail: 'Name providers as arguments, or run in a directory whose configuration requires some.',
      code: ErrorCode.USAGE,
    });
  if (errors.length > 0) return ui.fail(errors);

  const lock = await loadLockFile(join(globals.cwd, LOCK_FILE_NAME), globals.flavor, LOCK_FILE_NAME);
  if (reportDiagnostics(ui, lock.diagnostics, globals.cwd)) return ui.fail([]);

  let since: Awaited<ReturnType<typeof readBundleManifest>> | undefined;
  const sinceFlag = flags.values.since;
  if (sinceFlag !== undefined) {
    try {
      since = await readBundleManifest(resolve(globals.cwd, sinceFlag));
    } catch (err) {
      return ui.fail([errorDiagnostic('Cannot read the -since bundle', err)]);
    }
  }

  const out = resolve(globals.cwd, flags.positionals[flags.positionals.length - 1]!);
  const pool = r.pool({ limits: r.zipLimits() });
  try {
    const source = await r.source({ fsMirror, netMirror }, 'registry', ui);
    if (!source) return ui.fail([]);
    const outcome = await createBundleFile({
      requirements,
      locks: lock.locks,
      platforms,
      source,
      pool,
      http: r.http(),
      ...downloads,
      flavor: globals.flavor,
      provkitVersion: VERSION,
      createdEpoch,
      outPath: out,
      signal,
      ...(since ? { since } : {}),
      events: (e) => ui.event(e),
    });
    if (outcome.failures.length > 0) {
      return ui.fail(
        outcome.failures.map((f) => ({
          severity: 'error' as const,
          summary: f.summary,
          detail: `${f.provider.toString()}${f.platform ? ` (${f.platform.toString()})` : ''}: ${f.error.message}`,
          code: f.error.code,
          ...(f.error.hint === undefined ? {} : { hint: f.error.hint }),
        })),
      );
    }
    ui.summary(
      `Bundle written to ${out}: ${count(outcome.packages, 'package')}${since ? ` (${outcome.skipped} left out, already in the -since bundle)` : ''}, ${outcome.bytes} bytes.`,
      {
        path: out,
        packages: outcome.packages,
        skipped: outcome.skipped,
        bytes: outcome.bytes,
      },
    );
    return 0;
  } catch (err) {
    // An interrupt is reported by runInterruptible.
    if (isProvkitError(err, ErrorCode.ABORTED)) throw err;
    return ui.fail([errorDiagnostic('Cannot write the bundle', err)]);
  }
}

async function bundleImport(args: readonly string[], r: RunResources): Promise<number> {
  const { io, globals, signal } = r;
  const flags = parseFlags(args, {
    'trusted-lock': 'string',
    'lock-out': 'string',
    'max-member-size': 'int',
    json: 'bool',
  });
  const ui: Renderer = createRenderer(io, globals, flags.values.json === true);
  if (flags.positionals.length !== 2) {
    return ui.fail([
      {
        severity: 'error',
        summary: 'Wrong number of arguments',
        detail: 'bundle import requires the bundle file and the target mirror directory.',
        code: ErrorCode.USAGE,
      },
    ]);
  }
  const trusted = flags.values['trusted-lock'];
  let trustedLocks;
  if (trusted !== undefined) {
    const path = resolve(globals.cwd, trusted);
    let bytes: Buffer;
    try {
      bytes = await readRegularFile(path);
    } catch (err) {
      return ui.fail([errorDiagnostic('Cannot read the trusted lock file', fileError(err, 'cannot read', path))]);
    }
    const parsed = parseLockFile(bytes, path, globals.flavor);
    if (reportDiagnostics(ui, parsed.diagnostics, globals.cwd)) return ui.fail([]);
    trustedLocks = parsed.locks;
  }
  const maxMemberSize = flags.values['max-member-size'];
  const bundlePath = resolve(globals.cwd, flags.positionals[0]!);
  if (flags.positionals[1]!.startsWith('oci://')) {
    return bundleImportOci(r, ui, {
      bundlePath,
      target: flags.positionals[1]!,
      ...(maxMemberSize === undefined ? {} : { maxMemberSize }),
      ...(trustedLocks ? { trustedLocks } : {}),
      lockOut: flags.values['lock-out'],
    });
  }
  const target = resolve(globals.cwd, flags.positionals[1]!);
  let outcome;
  try {
    outcome = await importBundle({
      bundlePath,
      targetDir: target,
      pool: r.pool({ limits: r.zipLimits() }),
      flavor: globals.flavor,
      signal,
      targetMutex: targetMutexWarnings(ui, {
        summary: 'Waiting for another run',
        detail: (holder) => `${target} is in use${holder} (an import or mirror run); waiting for it to finish.`,
      }),
      ...(maxMemberSize === undefined ? {} : { maxMemberSize }),
      ...(trustedLocks ? { trustedLocks } : {}),
    });
  } catch (err) {
    return importFailed(ui, err);
  }
  if (outcome.missingFromBase.length > 0) {
    // A delta bundle into a directory without its base: the import stands, but the mirror lacks those packages.
    const n = outcome.missingFromBase.length;
    ui.diagnostic({
      severity: 'warning',
      summary: "The delta bundle's base is missing",
      detail: `${bundlePath} is a delta bundle: it leaves out the packages of the bundle it was made against (manifest sha256 ${outcome.manifest.since ?? ''}). ${target} does not hold ${n === 1 ? 'this one' : `these ${n}`}:\n${outcome.missingFromBase.map((p) => `  - ${p}`).join('\n')}\n\nLocking or installing ${n === 1 ? 'it' : 'them'} from ${target} fails until ${n === 1 ? 'it is' : 'they are'} there.`,
      hint: `Import the bundle it was made against (the -since bundle of bundle create) into ${target} too.`,
      code: WarningCode.BUNDLE_BASE_MISSING,
    });
  }
  const lockOut = flags.values['lock-out'];
  if (lockOut !== undefined && !(await writeLockOut(ui, resolve(globals.cwd, lockOut), outcome.lockFile, target)))
    return 1;
  ui.summary(
    `Imported into ${target}: ${count(outcome.added.length, 'package')} added, ${outcome.present.length} already present, ${count(outcome.indexes.length, 'index file')} written.`,
    {
      path: target,
      added: outcome.added.length,
      present: outcome.present.length,
      indexes: outcome.indexes.length,
    },
  );
  return 0;
}

/** An import that threw: an interrupt goes on to runInterruptible, which reports it; anything else is this run's diagnostic. */
function importFailed(ui: Renderer, err: unknown): number {
  if (isProvkitError(err, ErrorCode.ABORTED)) throw err;
  const ioFailure =
    isProvkitError(err, ErrorCode.IO) ||
    isProvkitError(err, ErrorCode.NOT_FOUND) ||
    isProvkitError(err, ErrorCode.NOT_A_DIRECTORY);
  return ui.fail([errorDiagnostic(ioFailure ? 'Cannot import the bundle' : 'Bundle refused', err)]);
}

/** `-lock-out=FILE`: the bundle's lock entries, written atomically; false (reported) when that failed. */
async function writeLockOut(ui: Renderer, path: string, lockFile: Uint8Array, target: string): Promise<boolean> {
  try {
    await writeFileAtomic(path, lockFile);
    return true;
  } catch (err) {
    ui.fail([
      errorDiagnostic(
        `Imported into ${target}, but the lock entries were not written`,
        fileError(err, 'cannot write', path),
      ),
    ]);
    return false;
  }
}

/** `bundle import BUNDLE.tar oci://…` (bundles/import-oci.ts). */
async function bundleImportOci(
  r: RunResources,
  ui: Renderer,
  o: { bundlePath: string; target: string; maxMemberSize?: number; trustedLocks?: Locks; lockOut: string | undefined },
): Promise<number> {
  const { globals } = r;
  const template = ociTemplate(o.target);
  const problem = ociTemplateDiagnostic(`The target ${o.target}`, template);
  if (problem !== undefined) return ui.fail([problem]);
  const cli = await r.cliConfig(ui);
  if (!cli) return ui.fail([]);
  const client = ociClientFor(r.sourceContext(), cli);
  const pool = r.pool({ limits: r.zipLimits() });
  let outcome;
  try {
    outcome = await importBundleToOci({
      bundlePath: o.bundlePath,
      pool,
      flavor: globals.flavor,
      client,
      target: { display: o.target, repositoryFor: templateRepositoryMapping(template) },
      signal: r.signal,
      ...(o.maxMemberSize === undefined ? {} : { maxMemberSize: o.maxMemberSize }),
      ...(o.trustedLocks ? { trustedLocks: o.trustedLocks } : {}),
      events: (e) => ui.event(e),
    });
  } catch (err) {
    return importFailed(ui, err);
  }
  // No tag moved (installer/oci-publish.ts): no summary, no lock entries written.
  if (outcome.failures.length > 0) return ui.fail(mirrorFailureDiagnostics(outcome.failures, { hints: false }));
  if (o.lockOut !== undefined && !(await writeLockOut(ui, resolve(globals.cwd, o.lockOut), outcome.lockFile, o.target)))
    return 1;
  const counts = ociPublishCounts(outcome);
  ui.summary(`Imported into ${o.target}: ${count(outcome.packages, 'package')}; ${counts.text}.`, {
    target: o.target,
    packages: outcome.packages,
    ...counts.fields,
  });
  return 0;
}
