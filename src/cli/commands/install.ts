/**
 * `provkit install [options]`: the provider step of `init` (docs/reference.md §5, §3.3
 * item 42). Thin: flags → a source, a cache → `installModule` (installer/install-module.ts:
 * configuration, lock file, `runInstall`, the lock-file decision and write) → render → exit code.
 */
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';

import { currentPlatform, flavorInfo } from '../../addresses/index.js';
import { DEFAULT_TEST_DIRECTORY } from '../../config/index.js';
import { incompleteLockProviders, installFailureDiagnostics } from '../../installer/install.js';
import { installModule, type ModuleInstallOutcome } from '../../installer/install-module.js';
import { LOCK_FILE_NAME } from '../../lockfile/index.js';
import { authenticationText, type Diagnostic } from '../../ui/human.js';
import { PendingDiagnostics } from '../diagnostics.js';
import { parsePlatformFlags } from '../flag-values.js';
import { checkMirrorFlags } from '../mirror-flags.js';
import { ErrorCode, WarningCode, errorText } from '../../errors.js';
import { DOWNLOADS_FLAG, downloadsHelp, downloadsOption } from '../downloads.js';
import { parseFlags } from '../flags.js';
import { noteFlavor } from '../flavor.js';
import type { CliIO, GlobalOptions } from '../io.js';
import { createRenderer } from '../render.js';
import { type RunResources, runInterruptibleCounting } from '../resources.js';
import { count } from '../../ui/words.js';
import { hasErrors } from '../../hcl/index.js';

export const INSTALL_HELP = `Usage: provkit [global options] install [options]

  Installs the configuration's providers into .terraform/providers for this
  platform, as "init" does: the locked versions (or the newest allowed ones),
  each checked against .terraform.lock.hcl, which is then updated. An
  installed package that still matches the lock file is reused.

Options:
  -platform=OS_ARCH       Install for another platform (default: this machine's).
  -fs-mirror=DIR          Use a filesystem mirror instead of the origin registries.
  -net-mirror=URL         Use a network mirror (https) instead of the origin registries.
  -upgrade                Ignore the locked versions; choose the newest allowed ones.
  -lockfile=readonly      Do not change .terraform.lock.hcl: warn if it would
                          change, fail if the set of providers would.
  -test-directory=DIR     Where test files are, besides the root directory
                          (default: tests). The providers of the modules their
                          run blocks call are installed too, as init does.
  -plugin-cache-dir=DIR   A shared plugin cache (default: $TF_PLUGIN_CACHE_DIR).
                          Packages are installed there and linked into
                          .terraform/providers; several installs may share it.
${downloadsHelp(26)}
  -json                   Machine-readable output (JSON lines; see docs/json-ui.md).
  -input=false            Accepted for init's command lines (provkit never prompts).

Environment: TF_DATA_DIR (default .terraform), TF_PLUGIN_CACHE_DIR,
TF_PLUGIN_CACHE_MAY_BREAK_DEPENDENCY_LOCK_FILE.
`;

export function installCommand(args: readonly string[], io: CliIO, globals: GlobalOptions): Promise<number> {
  // Each package is put in place whole as soon as it is installed (installer/install.ts); the lock file is
  // written last. An interrupt before that write leaves the packages installed before it, and the lock file
  // as it was.
  return runInterruptibleCounting(
    io,
    globals,
    'provkit install',
    (n) =>
      `${count(n, 'provider package')} installed before it ${n === 1 ? 'is' : 'are'} in place (each whole); the lock file was not changed`,
    (r, packageInstalled) => installRun(args, r, packageInstalled),
  );
}

async function installRun(args: readonly string[], r: RunResources, packageInstalled: () => void): Promise<number> {
  const { io, globals, signal } = r;
  const flags = parseFlags(args, {
    platform: 'string',
    'fs-mirror': 'string',
    'net-mirror': 'string',
    upgrade: 'bool',
    lockfile: 'string',
    'plugin-cache-dir': 'string',
    'test-directory': 'string',
    json: 'bool',
    // Accepted and ignored, as init's (provkit never prompts).
    input: 'bool',
    ...DOWNLOADS_FLAG,
  });
  const downloads = downloadsOption(flags, io.env);
  // Diagnostics as init's view prints them (errors to stderr, warnings to stdout).
  const ui = createRenderer(io, globals, flags.values.json === true, { frame: 'view' });
  const errors: Diagnostic[] = [];
  const info = flavorInfo(globals.flavor);

  const platformFlag = flags.values.platform;
  const [platform = currentPlatform()] = parsePlatformFlags(platformFlag === undefined ? [] : [platformFlag], errors);
  const fsMirror = flags.values['fs-mirror'];
  const netMirror = flags.values['net-mirror'];
  checkMirrorFlags({ fsMirror, netMirror }, errors);
  const lockfileMode = flags.values.lockfile;
  if (lockfileMode !== undefined && lockfileMode !== 'readonly') {
    errors.push({
      severity: 'error',
      summary: 'Invalid -lockfile option',
      detail: `The only valid value of -lockfile is "readonly", not ${JSON.stringify(lockfileMode)}.`,
      code: ErrorCode.USAGE,
    });
  }
  const readonly = lockfileMode === 'readonly';
  const upgrade = flags.values.upgrade === true;
  if (readonly && upgrade)
    errors.push({
      severity: 'error',
      summary: 'The -upgrade flag conflicts with -lockfile=readonly.',
      detail: '',
      code: ErrorCode.USAGE,
    });

  const dataDir = io.env['TF_DATA_DIR'] || '.terraform';
  const targetDir = resolve(globals.cwd, dataDir, 'providers');
  const cacheFlag = flags.values['plugin-cache-dir'] ?? (io.env['TF_PLUGIN_CACHE_DIR'] || undefined);
  const cacheDir = cacheFlag === undefined ? undefined : resolve(globals.cwd, cacheFlag);
  if (cacheDir !== undefined) {
    try {
      if (!(await stat(cacheDir)).isDirectory()) throw new Error('not a directory');
      if (cacheDir === targetDir) throw new Error(`it is the providers directory ${targetDir}`);
    } catch (err) {
      errors.push({
        severity: 'error',
        summary: 'Invalid plugin cache directory',
        detail: `The specified plugin cache dir ${cacheDir} cannot be opened: ${errorText(err)}`,
        code: ErrorCode.USAGE,
      });
    }
  }
  if (errors.length > 0) return ui.fail(errors);
  noteFlavor(io, globals);

  const zipLimits = r.zipLimits();
  const mayBreak = io.env['TF_PLUGIN_CACHE_MAY_BREAK_DEPENDENCY_LOCK_FILE'];
  const signedKeys: (string | undefined)[] = [];
  const outcome = await installModule(globals.cwd, {
    flavor: globals.flavor,
    dataDir,
    // As init (`LoadConfigWithTests`): the modules of test files' run blocks count too.
    testDirectory: flags.values['test-directory'] ?? DEFAULT_TEST_DIRECTORY,
    readonly,
    signal,
    zipLimits,
    extractLimits: { maxEntries: zipLimits.maxEntries, maxTotalBytes: zipLimits.maxTotalBytes },
    platform,
    // Without mirror flags: the CLI configuration's provider_installation (or the implied local mirrors and the registries), as init.
    source: () => r.source({ fsMirror, netMirror }, 'installation', ui),
    pool: r.pool({ limits: zipLimits }),
    ...r.hashStore(),
    http: r.http(),
    targetDir,
    ...(cacheDir === undefined ? {} : { cacheDir }),
    cacheMayBreakLockFile: mayBreak !== undefined && mayBreak !== '' && mayBreak !== '0',
    upgrade,
    ...downloads,
    events: (e) => {
      if (e.type === 'install_complete' && e.mode !== 'previously-installed') packageInstalled();
      if (e.type === 'install_complete' && e.auth === 'signed') signedKeys.push(e.keyId);
      ui.event(e);
    },
    enforceSignatures: r.signatures().enforceValidation === true,
  });

  if (outcome.status === 'config-errors') {
    // init's preface to an invalid configuration, an error diagnostic of its
    // own before the configuration's (`views.InitConfigError`, reported with
    // the loader's diagnostics in internal/command/init.go, terraform v1.11.4;
    // OpenTofu's `InitHuman.ConfigError` words it as below).
    ui.diagnostic({
      severity: 'error',
      summary: configErrorPreface(globals.flavor),
      detail: '',
      code: ErrorCode.INVALID_CONFIGURATION,
    });
  }
  // As init: warnings are shown at the end, with the others reported there.
  const pending = new PendingDiagnostics(ui, globals.cwd);
  if (pending.add(globals.flavor === 'terraform' ? initDiagnostics(outcome) : outcome.configDiagnostics)) return 1;
  if (pending.add(outcome.lockFileDiagnostics)) return 1;
  if (outcome.status === 'no-source') return pending.fail([]);
  if (outcome.failures.length > 0) {
    return pending.fail(installFailureDiagnostics(outcome.failures, globals.flavor));
  }
  const locks = outcome.locks ?? outcome.previousLocks;

  const signingNote = signingInfo(signedKeys, globals.flavor);
  if (signingNote !== undefined) ui.summary(signingNote, { event: 'providers_signed' });

  const action = outcome.lockFile ?? 'unchanged';
  const fields = { platform: platform.toString(), installed: outcome.installed.length, lock_file: action };
  if (action === 'readonly-providers-changed') {
    return pending.fail([
      {
        severity: 'error',
        summary: 'Provider dependency changes detected',
        detail: `Changes to the required provider dependencies were detected, but the lock file is read-only. To use and record these requirements, run "${info.command} init" without the "-lockfile=readonly" flag.`,
        code: ErrorCode.LOCK_FILE_READONLY,
      },
    ]);
  }
  if (action === 'readonly-changed') {
    pending.push({
      severity: 'warning',
      summary: 'Provider lock file not updated',
      detail: `Changes to the provider selections were detected, but not saved in the ${LOCK_FILE_NAME} file. To record these selections, run "${info.command} init" without the "-lockfile=readonly" flag.`,
      code: WarningCode.LOCK_FILE_NOT_UPDATED,
    });
  }
  if (action === 'write') {
    // Not written after an interrupt: the lock file stays as it was (runInterruptible names the packages
    // installed). An interrupt after the write is too late to undo it: the outcome stands (exit 0).
    if (!outcome.wrote) return 1;
    ui.summary(
      outcome.previousLocks.size === 0
        ? `${info.productName} has created a lock file ${LOCK_FILE_NAME} to record the provider selections it made above. Include this file in your version control repository so that ${info.productName} can guarantee to make the same selections by default when you run "${info.command} init" in the future.`
        : `${info.productName} has made some changes to the provider dependency selections recorded in the ${LOCK_FILE_NAME} file. Review those changes and commit them to your version control system if they represent changes you intended to make.`,
      { ...fields, event: 'lock_file_written' },
    );
    const incomplete = incompleteLockProviders(outcome.installed, locks, (p) => p.forDisplay(globals.flavor));
    if (incomplete.length > 0) pending.push(incompleteLockWarning(incomplete, platform.toString(), globals.flavor));
  }
  pending.flush();
  ui.summary(
    `Success! ${count(outcome.installed.length, 'provider')} installed for ${platform.toString()} in ${targetDir}.`,
    fields,
  );
  return 0;
}

/**
 * The configuration's diagnostics as terraform 1.11.4's init reports them:
 * it reads the root module on its own first (`loadSingleModuleWithTests`),
 * then, when the root calls modules or has test files, the whole tree to
 * install modules, then the whole tree again, and reports the warnings of
 * each reading: the root module's warnings two or three times, the others
 * (child modules', the checks across modules') once or twice, which its
 * consolidation then shows as one warning "(and N more similar warnings
 * elsewhere)" (test/fixtures/reference-runs/ `undefined-provider`,
 * `provider-version-deprecated`). With an error, each diagnostic once.
 * OpenTofu's init is not observed here: `install -flavor=tofu` reports each once.
 */
function initDiagnostics(config: ModuleInstallOutcome): readonly Diagnostic[] {
  if (hasErrors(config.configDiagnostics)) return config.configDiagnostics;
  const root = new Set(config.rootDiagnostics);
  const extra = config.installsModules ? 1 : 0;
  return config.configDiagnostics.flatMap((d) => Array<Diagnostic>(1 + extra + (root.has(d) ? 1 : 0)).fill(d));
}

/**
 * The text init puts before an invalid configuration's diagnostics
 * (hashicorp/terraform v1.11.4 internal/command/views/init.go
 * `errInitConfigError`; opentofu/opentofu internal/command/views/init.go
 * `InitHuman.ConfigError`), its colour codes removed and trimmed.
 */
function configErrorPreface(flavor: GlobalOptions['flavor']): string {
  const [product, word] = flavor === 'terraform' ? ['Terraform', 'initialisation'] : ['OpenTofu', 'initialization'];
  return `${product} encountered problems during ${word}, including problems\nwith the configuration, described below.\n\nThe ${product} configuration must be valid before initialization so that\n${product} can determine which modules and providers need to be installed.`;
}

/**
 * init's warning when the lock file records checksums of this platform only
 * (hashicorp/terraform v1.11.4 internal/command/init.go
 * `incompleteLockFileInformationBody`; opentofu/opentofu
 * internal/command/init.go words it for OpenTofu and tofu). init names the
 * machine's platform; provkit names the platform it installed for
 * (`-platform`, by default the machine's).
 */
function incompleteLockWarning(
  providers: readonly string[],
  platform: string,
  flavor: GlobalOptions['flavor'],
): Diagnostic {
  const { productName, command } = flavorInfo(flavor);
  return {
    severity: 'warning',
    summary: 'Incomplete lock file information for providers',
    detail:
      `Due to your customized provider installation methods, ${productName} was forced to calculate lock file checksums locally for the following providers:\n  - ${providers.join('\n  - ')}\n\n` +
      `The current ${LOCK_FILE_NAME} file only includes checksums for ${platform}, so ${productName} running on another platform will fail to install these providers.\n\n` +
      `To calculate additional checksums for another platform, run:\n  ${command} providers lock -platform=linux_amd64\n(where linux_amd64 is the platform to generate)`,
    code: WarningCode.INCOMPLETE_LOCK_FILE,
  };
}

/**
 * init's note after installing signed packages: OpenTofu's for any signed
 * package (opentofu/opentofu internal/command/views/init.go
 * `ProvidersSignedInfo`), terraform's for a partner or community package,
 * one not signed by HashiCorp (hashicorp/terraform v1.11.4
 * internal/command/init.go `ProvidersFetched`; its link as terraform 1.11.4
 * prints it, test/fixtures/guidance/terraform-1.11.4.txt).
 */
function signingInfo(keys: readonly (string | undefined)[], flavor: GlobalOptions['flavor']): string | undefined {
  if (flavor === 'terraform') {
    if (!keys.some((k) => authenticationText('signed', k, flavor) !== 'signed by HashiCorp')) return undefined;
    return "Partner and community providers are signed by their developers.\nIf you'd like to know more about provider signing, you can read about it here:\nhttps://developer.hashicorp.com/terraform/cli/plugins/signing";
  }
  if (keys.length === 0) return undefined;
  return "Providers are signed by their developers.\nIf you'd like to know more about provider signing, you can read about it here:\nhttps://opentofu.org/docs/cli/plugins/signing/";
}
