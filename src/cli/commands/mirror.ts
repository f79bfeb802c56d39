/**
 * `provkit mirror [options] TARGET_DIR`: `providers mirror` (docs/reference.md §6.2).
 * Thin: flags → requirements, lock selections, a source → `runMirror` → render.
 */
import { createHash } from 'node:crypto';
import { join, resolve } from 'node:path';

import { currentPlatform, flavorInfo } from '../../addresses/index.js';
import { loadModuleRequirements } from '../../config/index.js';
import { describeError, diagnosticFromError, ErrorCode, isProvkitError, ProvkitError } from '../../errors.js';
import { checkDirectoryTarget } from '../../fs/target.js';
import type { InstallerEvent } from '../../installer/events.js';
import { mirrorFailureDiagnostics, type MirrorOptions, runMirror } from '../../installer/mirror.js';
import { runUnpackedMirror } from '../../installer/mirror-unpacked.js';
import { runOciMirror } from '../../installer/oci-publish.js';
import { loadLockFile, LOCK_FILE_NAME, Locks, verifyDependencySelections } from '../../lockfile/index.js';
import { cacheBase, ociClientFor, templateRepositoryMapping } from '../../sources/index.js';
import type { Diagnostic } from '../../ui/human.js';
import { reportDiagnostics, targetMutexWarnings } from '../diagnostics.js';
import { parsePlatformFlags, platformsFor } from '../flag-values.js';
import { checkMirrorFlags, ociTemplate, ociTemplateDiagnostic } from '../mirror-flags.js';
import { ociPublishCounts } from '../oci-counts.js';
import { DOWNLOADS_FLAG, downloadsHelp, downloadsOption } from '../downloads.js';
import { parseFlags } from '../flags.js';
import { noteFlavor } from '../flavor.js';
import type { CliIO, GlobalOptions } from '../io.js';
import { createRenderer, type Renderer } from '../render.js';
import { type RunResources, runInterruptibleWith } from '../resources.js';

export const MIRROR_HELP = `Usage: provkit [global options] mirror [options] TARGET_DIR
       provkit [global options] mirror [options] oci://REGISTRY[:PORT]/TEMPLATE

  Copies the configuration's providers for each platform into TARGET_DIR as
  a packed filesystem mirror with index.json and VERSION.json files that a
  network mirror can serve (providers mirror). Versions follow the lock file
  when there is one. Packages already in TARGET_DIR that verify are kept,
  not fetched again.

  With an oci:// target, publishes them into an OCI registry as OpenTofu's
  oci_mirror reads them: TEMPLATE names each provider's repository with
  {hostname}, {namespace} and {type} (RFC 6570 level 1, as tofu providers
  lock -oci-mirror), e.g. oci://registry.internal:5000/providers/{namespace}/{type}.
  Credentials: oci_credentials blocks of the CLI configuration and
  Docker-style config files (see docs/oci.md).

Options:
  -platform=OS_ARCH   A target platform (repeatable; default: the platforms of
                      provkit.hcl in the working directory, else this machine's).
  -hashes=all         List zh: and both h1: forms in VERSION.json (default:
                      what the reference writes for the flavor).
  -layout=unpacked    Write HOST/NS/TYPE/VERSION/OS_ARCH/ directories (each package
                      extracted as the reference extracts it) instead of zips with
                      index files; packed copies are kept in provkit's cache
                      directory so re-runs stay incremental.
  -fs-mirror=DIR      Take packages from a filesystem mirror, not the origin registries.
  -net-mirror=URL     Take packages from a network mirror, not the origin registries.
  -lock-file=false    Ignore the dependency lock file: mirror the newest versions
                      the configuration allows (terraform 1.10+).
  -ignore-lock-hashes Mirror packages that match none of the lock file's hashes
                      for their version (each is warned about). Without it such
                      a package fails the run and nothing is written.
${downloadsHelp(22)}
  -json               Machine-readable output (JSON lines; see docs/json-ui.md).
`;

export function mirrorCommand(args: readonly string[], io: CliIO, globals: GlobalOptions): Promise<number> {
  return runInterruptibleWith(io, globals, 'provkit mirror', (r) => mirrorRun(args, r));
}

async function mirrorRun(args: readonly string[], r: RunResources): Promise<number> {
  const { io, globals } = r;
  const flags = parseFlags(args, {
    platform: 'strings',
    hashes: 'string',
    layout: 'string',
    'fs-mirror': 'string',
    'net-mirror': 'string',
    json: 'bool',
    'lock-file': 'bool',
    'ignore-lock-hashes': 'bool',
    ...DOWNLOADS_FLAG,
  });
  const downloads = downloadsOption(flags, io.env);
  const ui = createRenderer(io, globals, flags.values.json === true);
  const errors: Diagnostic[] = [];
  if (flags.positionals.length !== 1) {
    errors.push({
      severity: 'error',
      summary: 'Wrong number of arguments',
      detail: 'The providers mirror command requires an output directory as a command-line argument.',
      code: ErrorCode.USAGE,
    });
  }
  const platformValues = flags.values.platform ?? [];
  parsePlatformFlags(platformValues, errors);
  const hashesFlag = flags.values.hashes ?? 'reference';
  const hashes = hashesFlag === 'all' ? 'all' : 'reference';
  if (hashesFlag !== 'reference' && hashesFlag !== 'all') {
    errors.push({
      severity: 'error',
      summary: 'Invalid -hashes option',
      detail: `The -hashes option must be "reference" or "all", not ${JSON.stringify(hashesFlag)}.`,
      code: ErrorCode.USAGE,
    });
  }
  const layout = flags.values.layout ?? 'packed';
  if (layout !== 'packed' && layout !== 'unpacked') {
    errors.push({
      severity: 'error',
      summary: 'Invalid -layout option',
      detail: `The -layout option must be "packed" or "unpacked", not ${JSON.stringify(layout)}.`,
      code: ErrorCode.USAGE,
    });
  }
  const fsMirror = flags.values['fs-mirror'];
  const netMirror = flags.values['net-mirror'];
  checkMirrorFlags({ fsMirror, netMirror }, errors);
  const oci =
    flags.positionals.length === 1 && flags.positionals[0]!.startsWith('oci://')
      ? ociTemplate(flags.positionals[0]!)
      : undefined;
  if (oci !== undefined) {
    const problem = ociTemplateDiagnostic(`The target ${flags.positionals[0]!}`, oci);
    if (problem !== undefined) errors.push(problem);
    if (flags.values.layout !== undefined || flags.values.hashes !== undefined) {
      errors.push({
        severity: 'error',
        summary: 'Invalid options for an OCI mirror',
        detail: 'The -layout and -hashes options apply to directory targets, not to an oci:// target.',
        code: ErrorCode.USAGE,
      });
    }
  }
  if (errors.length > 0) return ui.fail(errors);
  noteFlavor(io, globals);
  const targetDir = resolve(globals.cwd, flags.positionals[0]!);
  if (oci === undefined) {
    // A file where the target (or a directory above it) must go: said before any work.
    const badTarget = await checkDirectoryTarget(targetDir, 'cannot mirror into').then(
      () => undefined,
      (err: unknown) => err,
    );
    if (badTarget !== undefined)
      return ui.fail([
        {
          severity: 'error',
          summary: 'Invalid mirror directory',
          detail: describeError(badTarget),
          code: badTarget instanceof ProvkitError ? badTarget.code : ErrorCode.IO,
        },
      ]);
  }
  // -platform, else the policy file (provkit.hcl), else this machine's.
  const chosen = await platformsFor(globals, platformValues, errors, ui);
  if (!chosen) return ui.fail([]);
  const platforms = chosen.platforms.length > 0 ? chosen.platforms : [currentPlatform()];

  const config = await loadModuleRequirements(globals.cwd, { flavor: globals.flavor });
  if (reportDiagnostics(ui, config.diagnostics, globals.cwd)) return ui.fail([]);
  const requirements = [...config.requirements.values()];

  // -lock-file=false: the lock file is not read at all (terraform 1.10+
  // internal/command/providers_mirror.go: `if c.Meta.lockFileEnabled`).
  const useLock = flags.values['lock-file'] !== false;
  const ignoreLockHashes = flags.values['ignore-lock-hashes'] === true;
  const lock = useLock
    ? await loadLockFile(join(globals.cwd, LOCK_FILE_NAME), globals.flavor, LOCK_FILE_NAME)
    : { locks: new Locks(), diagnostics: [] };
  if (reportDiagnostics(ui, lock.diagnostics, globals.cwd)) return ui.fail([]);
  // A lock that does not cover the configuration stops the run before anything
  // is fetched, as terraform 1.11 does (OpenTofu reports it and mirrors anyway,
  // exiting 1; provkit's mirror is all or nothing). A locked version that still
  // meets the constraints is fine whatever constraints the lock recorded
  // (`Config.VerifyDependencySelections`, hashicorp/terraform
  // internal/configs/config.go); the reference prints the problems as Go's `%v`
  // of the error list.
  if (lock.locks.size > 0) {
    const problems = verifyDependencySelections(lock.locks, requirements);
    if (problems.length > 0) {
      return ui.fail([
        {
          severity: 'error',
          summary: 'Inconsistent dependency lock file',
          detail: `To update the locked dependency selections to match a changed configuration, run:\n  ${flavorInfo(globals.flavor).command} init -upgrade\n got:[${problems.join(' ')}]`,
          code: ErrorCode.INCONSISTENT_LOCK_FILE,
        },
      ]);
    }
  }

  const source = await r.source({ fsMirror, netMirror }, 'registry', ui);
  if (!source) return ui.fail([]);
  if (oci !== undefined)
    return ociMirrorRun(r, ui, {
      requirements,
      locks: lock.locks,
      platforms,
      source,
      template: oci,
      target: flags.positionals[0]!,
      downloads,
      ignoreLockHashes,
    });

  const options = {
    signal: r.signal,
    targetMutex: targetMutexWarnings(ui, {
      summary: 'Waiting for another mirror run',
      detail: (holder) => `${targetDir} is in use${holder}; waiting for it to finish.`,
    }),
    requirements,
    locks: lock.locks,
    ignoreLockHashes,
    platforms,
    source,
    pool: r.pool({ limits: r.zipLimits() }),
    http: r.http(),
    targetDir,
    cacheFile: mirrorCacheFile(io.env, targetDir),
    ...r.hashStore(),
    flavor: globals.flavor,
    hashes,
    ...downloads,
    events: (e: InstallerEvent) => ui.event(e),
  } satisfies MirrorOptions;
  let outcome;
  try {
    outcome =
      layout === 'unpacked'
        ? await runUnpackedMirror({ ...options, packedDir: mirrorPackedCacheDir(io.env, targetDir) })
        : await runMirror(options);
  } catch (err) {
    // A target that cannot be written (the run's first write is its mutex file): one diagnostic, with its hint.
    if (isProvkitError(err, ErrorCode.ABORTED)) throw err;
    return ui.fail([diagnosticFromError(err, 'Cannot write the mirror')]);
  }
  // Nothing changed in the target: no summary of work that did not happen.
  if (outcome.failures.length > 0) return ui.fail(mirrorFailureDiagnostics(outcome.failures, { hints: true }));
  ui.summary(`Mirrored: ${outcome.written} fetched, ${outcome.reused} already present and verified.`, {
    fetched: outcome.written,
    reused: outcome.reused,
    failed: 0,
  });
  return 0;
}

/**
 * The fingerprint cache of one mirror target, kept out of the mirror
 * (`$XDG_CACHE_HOME/provkit/mirror/<sha256 of the target path>.json`,
 * `~/.cache` by default; `PROVKIT_CACHE_DIR` overrides the base).
 */
function mirrorCacheFile(env: CliIO['env'], targetDir: string): string {
  const base = cacheBase(env);
  return join(base, 'mirror', `${createHash('sha256').update(targetDir).digest('hex').slice(0, 32)}.json`);
}

/** The packed copies behind an unpacked mirror target (`-layout=unpacked`). */
function mirrorPackedCacheDir(env: CliIO['env'], targetDir: string): string {
  return join(cacheBase(env), 'mirror-packed', createHash('sha256').update(targetDir).digest('hex').slice(0, 32));
}

/** `mirror oci://…`: publish into an OCI registry (installer/oci-publish.ts). */
async function ociMirrorRun(
  r: RunResources,
  ui: Renderer,
  o: Pick<MirrorOptions, 'requirements' | 'locks' | 'platforms' | 'source' | 'ignoreLockHashes'> & {
    template: string;
    target: string;
    downloads: { readonly networkConcurrency?: number };
  },
): Promise<number> {
  const { globals } = r;
  const cli = await r.cliConfig(ui);
  if (!cli) return ui.fail([]);
  const outcome = await runOciMirror({
    requirements: o.requirements,
    locks: o.locks,
    ...(o.ignoreLockHashes === undefined ? {} : { ignoreLockHashes: o.ignoreLockHashes }),
    platforms: o.platforms,
    source: o.source,
    http: r.http(),
    signal: r.signal,
    flavor: globals.flavor,
    client: ociClientFor(r.sourceContext(), cli),
    target: { display: o.target, repositoryFor: templateRepositoryMapping(o.template) },
    ...o.downloads,
    events: (e: InstallerEvent) => ui.event(e),
  });
  if (outcome.failures.length > 0) {
    // A failed package moves no tag (installer/oci-publish.ts); a tag that fails is named here, the tags pushed before it were reported as events. No summary.
    return ui.fail(mirrorFailureDiagnostics(outcome.failures, { hints: false }));
  }
  const counts = ociPublishCounts(outcome);
  ui.summary(`Published to ${o.target}: ${counts.text}.`, { ...counts.fields, failed: 0 });
  return 0;
}
