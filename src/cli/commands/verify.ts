/**
 * `provkit verify [options]`: offline checks of .terraform.lock.hcl for CI
 * (src/installer/verify.ts). Thin: flags → locks, requirements, mirror →
 * `runVerify` → one line per problem → exit 1 if any, else a summary and 0.
 */
import { join, resolve } from 'node:path';

import { loadModuleRequirements } from '../../config/index.js';
import { createHashPool } from '../../hashing/index.js';
import { runVerify, type VerifyOutcome } from '../../installer/verify.js';
import { runOciVerify } from '../../installer/oci-verify.js';
import type { Requirement } from '../../installer/lock.js';
import { type Platform, ProviderAddress } from '../../addresses/index.js';
import type { HashPool } from '../../hashing/index.js';
import type { Locks } from '../../lockfile/index.js';
import { validateLevel1 } from '../../net/index.js';
import { loadCliConfigFor, ociMirrorSourceFor } from '../wiring.js';
import { loadLockFile, LOCK_FILE_NAME } from '../../lockfile/index.js';
import type { Diagnostic } from '../../ui/human.js';
import { httpFor, ociTemplate, parsePlatformFlags, reportDiagnostics } from '../common.js';
import { ErrorCode, WarningCode } from '../../errors.js';
import { parseFlags } from '../flags.js';
import type { CliIO, GlobalOptions } from '../io.js';
import { createRenderer, type Renderer } from '../render.js';

export const VERIFY_HELP = `Usage: provkit [global options] verify [options]

  Checks .terraform.lock.hcl offline, for CI; fetches and writes nothing.
  Prints one line per problem ("PROVIDER VERSION PLATFORM: problem") and
  exits 1 if there is any, else prints a summary and exits 0.

  - The lock file selects a version, meeting the constraints, of every
    provider the configuration requires.
  - With -mirror: the lock file covers every platform (its h1: of each
    package is recorded, and its zh: when the lock has registry zh: hashes);
    every package in the mirror matches the mirror's index.json/VERSION.json
    and can be installed; archives whose zip-form and extracted-form h1:
    differ are flagged (H1_FORMS_DIFFER).

Options:
  -mirror=DIR           A filesystem mirror holding the packages (packed or unpacked).
  -mirror=oci://REGISTRY[:PORT]/TEMPLATE
                        A published OCI mirror (see docs/oci.md): its indexes,
                        manifests and blobs are read and every package of the
                        locked versions downloaded (to TMPDIR) and hashed.
  -platform=OS_ARCH     A platform the lock must cover (repeatable; needs -mirror;
                        default: every platform the mirror has).
  -json                 Machine-readable output (JSON lines; see docs/json-ui.md).
`;

export async function verifyCommand(args: readonly string[], io: CliIO, globals: GlobalOptions): Promise<number> {
  const flags = parseFlags(args, { platform: 'strings', mirror: 'string', json: 'bool' });
  const ui = createRenderer(io, globals, flags.bools.get('json') === true);
  const errors: Diagnostic[] = [];

  // None given: every platform the mirror has.
  const platforms = parsePlatformFlags(flags.lists.get('platform') ?? [], errors, false);
  const mirror = flags.strings.get('mirror');
  if (platforms.length > 0 && mirror === undefined) {
    errors.push({ severity: 'error', summary: 'A mirror is needed', detail: 'Checking that the lock file covers a platform needs the packages: give -mirror=DIR.', code: ErrorCode.USAGE });
  }
  if (flags.positionals.length > 0) errors.push({ severity: 'error', summary: 'Unexpected arguments', detail: `verify takes no arguments, not ${flags.positionals.join(' ')}.`, code: ErrorCode.USAGE });
  if (errors.length > 0) return ui.fail(errors);

  const dataDir = io.env['TF_DATA_DIR'] || '.terraform';
  const config = await loadModuleRequirements(globals.cwd, { flavor: globals.flavor, dataDir });
  if (reportDiagnostics(ui, config.diagnostics)) return ui.fail([]);

  const lockPath = join(globals.cwd, LOCK_FILE_NAME);
  const lock = await loadLockFile(lockPath, globals.flavor, LOCK_FILE_NAME);
  if (reportDiagnostics(ui, lock.diagnostics)) return ui.fail([]);

  const pool = createHashPool();
  try {
    const outcome = mirror?.startsWith('oci://') ? await verifyOci(io, globals, ui, { locks: lock.locks, requirements: [...config.requirements.values()], mirror, platforms, pool }) : await runVerify({
      locks: lock.locks,
      requirements: [...config.requirements.values()],
      ...(mirror === undefined ? {} : { mirrorDir: resolve(globals.cwd, mirror) }),
      ...(platforms.length > 0 ? { platforms } : {}),
      pool,
      flavor: globals.flavor,
    });
    if (outcome === undefined) return ui.fail([]);
    for (const p of outcome.problems) ui.event({ type: 'verify_problem', ...p });
    const fields = {
      problems: outcome.problems.length,
      providers: outcome.providers,
      packages: outcome.packages,
      platforms: outcome.platforms.map(String),
    };
    if (outcome.problems.length > 0) {
      ui.summary(`${outcome.problems.length} problem${outcome.problems.length === 1 ? '' : 's'} found.`, fields);
      return 1;
    }
    const scope = mirror === undefined ? 'against the configuration' : `against ${outcome.packages} package${outcome.packages === 1 ? '' : 's'} for ${outcome.platforms.map(String).join(', ') || 'no platform'}`;
    ui.summary(`${LOCK_FILE_NAME} verified: ${outcome.providers} provider${outcome.providers === 1 ? '' : 's'} checked ${scope}; no problems.`, fields);
    return 0;
  } finally {
    await pool.close();
  }
}

/**
 * `-mirror=oci://…`: the configuration checks of {@link runVerify}, then the
 * published mirror's (installer/oci-verify.ts). Undefined when the CLI
 * configuration or the template is unusable (already reported).
 */
async function verifyOci(
  io: CliIO,
  globals: GlobalOptions,
  ui: Renderer,
  o: { locks: Locks; requirements: Requirement[]; mirror: string; platforms: Platform[]; pool: HashPool },
): Promise<VerifyOutcome | undefined> {
  const template = ociTemplate(o.mirror);
  const problem = validateLevel1(template);
  if (problem !== undefined) {
    ui.diagnostic({ severity: 'error', summary: 'Invalid OCI mirror URI template', detail: `The mirror ${o.mirror} is not a valid URI template: ${problem}.`, code: ErrorCode.USAGE });
    return undefined;
  }
  const cli = await loadCliConfigFor(io, globals);
  for (const d of cli.diagnostics) ui.diagnostic({ severity: d.severity, summary: d.summary, detail: d.detail, code: d.severity === 'error' ? ErrorCode.INVALID_CLI_CONFIGURATION : WarningCode.CLI_CONFIGURATION_WARNING });
  if (cli.diagnostics.some((d) => d.severity === 'error')) return undefined;
  const { http, close } = httpFor(io);
  try {
    const configProblems = await runVerify({ locks: o.locks, requirements: o.requirements, pool: o.pool, flavor: globals.flavor });
    const published = await runOciVerify({
      locks: o.locks,
      source: ociMirrorSourceFor(template, io, http, cli),
      mirror: o.mirror,
      ...(o.platforms.length > 0 ? { platforms: o.platforms } : {}),
      pool: o.pool,
      http,
    });
    const problems = [...configProblems.problems, ...published.problems].sort(
      (a, b) =>
        ProviderAddress.compare(a.provider, b.provider) ||
        (a.version?.toString() ?? '').localeCompare(b.version?.toString() ?? '') ||
        (a.platform?.toString() ?? '').localeCompare(b.platform?.toString() ?? '') ||
        a.code.localeCompare(b.code),
    );
    return { ...published, problems };
  } finally {
    close();
  }
}
