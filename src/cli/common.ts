/**
 * What the commands share: the -platform and mirror flags with the
 * reference's diagnostics, the HTTP client, the source the flags or the CLI
 * configuration select, signal handling, and the archive limits.
 */
import { setMaxListeners } from 'node:events';
import { basename, resolve } from 'node:path';
import type { LookupFunction } from 'node:net';

import {
  currentPlatform,
  type Flavor,
  goQuote,
  parsePlatform,
  type Platform,
  tryParseProviderSource,
  type Requirement,
} from '../addresses/index.js';
import {
  asSentence,
  type Diagnostic,
  type DiagnosticCode,
  diagnosticFromError,
  ErrorCode,
  errorText,
  isProvkitError,
  ProvkitError,
  WarningCode,
} from '../errors.js';
import { checkDirectorySource } from '../fs/target.js';
import { nameSuggestion } from '../go/index.js';
import { type HashStore, openHashStore, type ZipLimits } from '../hashing/index.js';
import { parseZipLimits } from '../hashing/zip-reader.js';
import {
  createNodeFetch,
  type FetchLike,
  HttpClient,
  httpTuningFromEnv,
  templateVariables,
  validateLevel1,
} from '../net/index.js';
import { hashStoreDir } from '../sources/index.js';
import { findPolicy, type PlatformPolicy } from '../config/index.js';
import type { PublishOutcome } from '../installer/oci-publish.js';
import type { Diagnostic as HclDiagnostic } from '../hcl/index.js';
import { diagnosticSnippet, sortDiagnostics } from '../ui/diagnostic.js';
import { sortedDiagnostics } from '../ui/human.js';
import { LOCK_FILE_NAME } from '../lockfile/index.js';
import type { DirMutexOptions } from '../fs/dir-mutex.js';
import { type CliIO, EXIT_OUTPUT_CLOSED, type GlobalOptions } from './io.js';
import type { Renderer } from './render.js';
import { count } from '../ui/words.js';
import { terminalText } from '../ui/escape.js';
import { readRegularFileSync } from '../fs/read.js';

export { cacheBase } from '../sources/index.js';

/**
 * The platforms Go builds for (`go tool dist list`, Go 1.24), as `OS_ARCH`:
 * providers are Go programs, so a provider package is for one of these.
 */
const GO_PLATFORMS: readonly string[] = [
  'aix_ppc64',
  ...['386', 'amd64', 'arm', 'arm64'].map((a) => `android_${a}`),
  'darwin_amd64',
  'darwin_arm64',
  'dragonfly_amd64',
  ...['386', 'amd64', 'arm', 'arm64', 'riscv64'].map((a) => `freebsd_${a}`),
  'illumos_amd64',
  'ios_amd64',
  'ios_arm64',
  'js_wasm',
  ...['386', 'amd64', 'arm', 'arm64', 'loong64', 'mips', 'mips64', 'mips64le', 'mipsle', 'ppc64', 'ppc64le']
    .concat(['riscv64', 's390x'])
    .map((a) => `linux_${a}`),
  ...['386', 'amd64', 'arm', 'arm64'].map((a) => `netbsd_${a}`),
  ...['386', 'amd64', 'arm', 'arm64', 'ppc64', 'riscv64'].map((a) => `openbsd_${a}`),
  ...['386', 'amd64', 'arm'].map((a) => `plan9_${a}`),
  'solaris_amd64',
  'wasip1_wasm',
  ...['386', 'amd64', 'arm', 'arm64'].map((a) => `windows_${a}`),
];

/**
 * The platform a mistyped `-platform` value was meant to be: for a value Go
 * builds for nothing (`linux_amd46`), the one of {@link GO_PLATFORMS} it is
 * closest to, if one is close; undefined for a known platform or one
 * nothing is close to (a new Go port is taken as given, as the reference
 * takes any `OS_ARCH`).
 */
export function platformSuggestion(value: string): string | undefined {
  if (GO_PLATFORMS.includes(value)) return undefined;
  return nameSuggestion(value, GO_PLATFORMS, 'typed');
}

/**
 * The `-platform` values, de-duplicated in order; a bad one adds the
 * reference's "Invalid target platform" diagnostic, a mistyped one (see
 * {@link platformSuggestion}) the same with what it was probably meant to
 * be: one message, before any work, where the reference would fail every
 * provider on it. None given: this machine's, unless `orCurrent` is false.
 */
export function parsePlatformFlags(values: readonly string[], errors: Diagnostic[], orCurrent = true): Platform[] {
  const platforms: Platform[] = [];
  for (const s of values) {
    try {
      const p = parsePlatform(s);
      const meant = platformSuggestion(p.toString());
      if (meant !== undefined) {
        errors.push({
          severity: 'error',
          summary: 'Invalid target platform',
          detail: `The string ${JSON.stringify(s)} given in the -platform option is not a platform providers are built for. Did you mean ${JSON.stringify(meant)}?`,
          code: ErrorCode.INVALID_PLATFORM,
        });
        continue;
      }
      if (!platforms.some((x) => x.equals(p))) platforms.push(p);
    } catch (err) {
      errors.push({
        severity: 'error',
        summary: 'Invalid target platform',
        detail: `The string ${goQuote(s)} given in the -platform option is not a valid target platform: ${errorText(err)}.`,
        code: ErrorCode.INVALID_PLATFORM,
      });
    }
  }
  if (platforms.length === 0 && orCurrent) platforms.push(currentPlatform());
  return platforms;
}

/** The reference's "Invalid provider argument" diagnostic (`providers lock`/`mirror` arguments), from why the argument was refused. */
export function invalidProviderArgument(why: {
  readonly message: string;
  readonly detail?: string | undefined;
  readonly code: DiagnosticCode;
}): Diagnostic {
  return { severity: 'error', summary: 'Invalid provider argument', detail: why.detail ?? why.message, code: why.code };
}

/**
 * `lock`'s `PROVIDER...` arguments: the configuration's requirements they
 * name, in argument order, each once; an argument that does not parse, or
 * names a provider the configuration does not require, adds the
 * reference's "Invalid provider argument" diagnostic to `errors`.
 */
export function requiredProviderArguments(
  args: readonly string[],
  requirements: readonly Requirement[],
  flavor: Flavor,
  errors: Diagnostic[],
): Requirement[] {
  const wanted: Requirement[] = [];
  for (const arg of args) {
    const parsed = tryParseProviderSource(arg, flavor);
    if (!parsed.ok) {
      errors.push(invalidProviderArgument(parsed.error));
      continue;
    }
    const req = requirements.find((x) => x.provider.equals(parsed.address));
    if (!req) {
      errors.push(
        invalidProviderArgument({
          message: `The provider ${parsed.address.toString()} is not required by the current configuration.`,
          code: ErrorCode.USAGE,
        }),
      );
    } else if (!wanted.includes(req)) wanted.push(req);
  }
  return wanted;
}

/** The platforms a command runs for: `-platform` flags, else the policy (`provkit.hcl`), else a default. */
export interface CommandPlatforms {
  /** Empty when no flag was given and there is no policy (the caller picks its default). */
  readonly platforms: Platform[];
  readonly origin: 'flags' | 'policy' | 'none';
  readonly policy?: PlatformPolicy;
}

/**
 * `-platform` flags (a bad one adds its diagnostic to `errors`), or, when
 * none is given, the platform policy of the working directory
 * (`provkit.hcl`, config/policy.ts; its diagnostics are rendered). Undefined
 * when the policy file has errors (already rendered: fail).
 */
export async function platformsFor(
  globals: GlobalOptions,
  values: readonly string[],
  errors: Diagnostic[],
  ui: Renderer,
): Promise<CommandPlatforms | undefined> {
  const flags = parsePlatformFlags(values, errors, false);
  if (values.length > 0) return { platforms: flags, origin: 'flags' };
  const found = await findPolicy(globals.cwd, globals.cwd);
  if (reportDiagnostics(ui, found.diagnostics, globals.cwd)) return undefined;
  if (!found.policy) return { platforms: [], origin: 'none' };
  ui.event({
    type: 'platforms_chosen',
    platforms: found.policy.platforms,
    origin: 'policy',
    policyFile: found.policy.file,
  });
  return { platforms: [...found.policy.platforms], origin: 'policy', policy: found.policy };
}

export interface MirrorFlags {
  readonly fsMirror: string | undefined;
  readonly netMirror: string | undefined;
  /** `-oci-mirror=TEMPLATE` (OpenTofu 1.13 `providers lock`), without or with an `oci://` prefix. */
  readonly ociMirror?: string | undefined;
}

/**
 * `-fs-mirror`, `-net-mirror`, `-oci-mirror`: mutually exclusive (terraform's
 * and OpenTofu ≤ 1.12's message for the first two; OpenTofu 1.13's when
 * `-oci-mirror` is one of them), the URL must be https, the template a
 * level 1 URI template (the reference's messages).
 */
export function checkMirrorFlags(flags: MirrorFlags, errors: Diagnostic[]): void {
  const given = [flags.fsMirror, flags.netMirror, flags.ociMirror].filter((f) => f !== undefined).length;
  if (given > 1) {
    errors.push({
      severity: 'error',
      summary: 'Invalid installation method options',
      detail:
        flags.ociMirror === undefined
          ? 'The -fs-mirror and -net-mirror command line options are mutually-exclusive.'
          : 'The mirror command line options are mutually-exclusive.',
      code: ErrorCode.USAGE,
    });
  }
  if (flags.ociMirror !== undefined) {
    const problem = ociTemplateDiagnostic('The -oci-mirror argument', ociTemplate(flags.ociMirror));
    if (problem !== undefined) errors.push(problem);
  }
  // terraform 1.11.4 takes an empty -fs-mirror= as "no mirror" and quietly
  // consults the origin registries: a variable that expanded to nothing in a
  // CI script would leave the air gap. provkit refuses it.
  if (flags.fsMirror === '') {
    errors.push({
      severity: 'error',
      summary: 'Invalid -fs-mirror option',
      detail:
        'The -fs-mirror option requires a directory, and its value is empty. Give the filesystem mirror directory, or leave the option out to use the origin registries.',
      code: ErrorCode.USAGE,
    });
  }
  if (flags.netMirror !== undefined && !/^https:\/\/[^/]/.test(flags.netMirror)) {
    errors.push({
      severity: 'error',
      summary: 'Invalid network mirror URL',
      detail: 'The -net-mirror option requires a valid https: URL as the mirror base URL.',
      code: ErrorCode.USAGE,
    });
  }
}

/** The variables of an OCI repository template (OpenTofu's `-oci-mirror` and `oci://` targets). */
const OCI_TEMPLATE_VARIABLES = ['hostname', 'namespace', 'type'];

/**
 * Why an OCI repository template (`REGISTRY/PATH` with `{hostname}`,
 * `{namespace}`, `{type}`) cannot be used, as a diagnostic whose detail
 * starts with `what` (`The -oci-mirror argument`, `The target oci://…`):
 * not a level 1 URI template (OpenTofu's words), or a variable that is not
 * one of the three, with the one it was probably meant to be (OpenTofu
 * expands an unknown variable to nothing and then fails on the repository
 * name, `invalid repository "providers//widget"`, once per provider).
 */
export function ociTemplateDiagnostic(what: string, template: string): Diagnostic | undefined {
  const invalid = (detail: string): Diagnostic => ({
    severity: 'error',
    summary: 'Invalid OCI mirror URI template',
    detail,
    code: ErrorCode.USAGE,
  });
  const problem = validateLevel1(template);
  if (problem !== undefined) return invalid(`${what} is not a valid URI template: ${problem}.`);
  const unknown = templateVariables(template).find((v) => !OCI_TEMPLATE_VARIABLES.includes(v));
  if (unknown === undefined) return undefined;
  const close = nameSuggestion(unknown, OCI_TEMPLATE_VARIABLES, 'typed');
  return invalid(
    `${what} refers to {${unknown}}, which is not a template variable: the variables are {hostname}, {namespace} and {type}.${close === undefined ? '' : ` Did you mean {${close}}?`}`,
  );
}

/**
 * Why the filesystem mirror given with `flag` (`-fs-mirror`, verify's
 * `-mirror`) cannot be read, as one diagnostic before any work, or
 * undefined: a wrong directory is said once, not once per provider (the
 * reference's `cannot search DIR: lstat DIR: no such file or directory` for
 * each).
 */
export async function mirrorDirectoryDiagnostic(dir: string, flag: string): Promise<Diagnostic | undefined> {
  try {
    await checkDirectorySource(dir, `the ${flag} directory`);
    return undefined;
  } catch (err) {
    const d = diagnosticFromError(err);
    return {
      ...d,
      detail: asSentence(d.detail),
      summary: isProvkitError(err, ErrorCode.NOT_FOUND)
        ? 'Mirror directory not found'
        : 'Cannot read the mirror directory',
      hint: `Give ${flag} the directory of a filesystem mirror: the one that holds HOSTNAME/NAMESPACE/TYPE/ (as provkit mirror and terraform providers mirror write it).`,
    };
  }
}

/** The template of an `-oci-mirror` value or `oci://` target: an `oci://` prefix is dropped. */
export function ociTemplate(value: string): string {
  return value.startsWith('oci://') ? value.slice('oci://'.length) : value;
}

/**
 * A configuration or lock-file diagnostic (from src/hcl) as the one
 * {@link Diagnostic}: its file, start and byte offsets as the range, and the
 * code of the file it is about (the lock file's codes for `.terraform.lock.hcl`).
 * `wholeFile`: a diagnostic about a file as a whole keeps the file's path
 * (`lock -recursive`, `verify -recursive`: which root's file it is).
 */
export function fromHclDiagnostic(d: HclDiagnostic, wholeFile = false): Diagnostic {
  const lock = /(^|[\\/])\.terraform\.lock\.hcl$/.test(d.range.filename);
  const code =
    d.severity === 'error'
      ? lock
        ? ErrorCode.INVALID_LOCK_FILE
        : ErrorCode.INVALID_CONFIGURATION
      : lock
        ? WarningCode.LOCK_FILE_WARNING
        : WarningCode.CONFIGURATION_WARNING;
  const r = d.range;
  // Line 0: about the file as a whole ("Failed to read file"); the reference names no location, and
  // neither does provkit, except among many roots (`wholeFile`), where the file's path says which.
  const range =
    r.start.line === 0
      ? wholeFile
        ? { filename: r.filename }
        : undefined
      : { filename: r.filename, line: r.start.line, column: r.start.column, start: r.start.byte, end: r.end.byte };
  return { severity: d.severity, summary: d.summary, detail: d.detail, ...(range ? { range } : {}), code };
}

/**
 * Configuration or lock-file diagnostics as the one {@link Diagnostic}, in
 * the reference's order (`tfdiags.Diagnostics.Sort`), each with its file and
 * line and, for a configuration file read from `cwd`, the source lines with
 * the subject underlined (terraform shows the lock file's as "source code
 * not available": its sources are the configuration's files only,
 * `Meta.configSources`).
 */
export function configDiagnostics(
  diagnostics: readonly HclDiagnostic[],
  cwd?: string,
  wholeFile = false,
): Diagnostic[] {
  const sources = new Map<string, Uint8Array | undefined>();
  const source = (filename: string): Uint8Array | undefined => {
    if (cwd === undefined || basename(filename) === LOCK_FILE_NAME) return undefined;
    if (!sources.has(filename)) {
      let bytes: Uint8Array | undefined;
      try {
        bytes = readRegularFileSync(resolve(cwd, filename));
      } catch {
        bytes = undefined;
      }
      sources.set(filename, bytes);
    }
    return sources.get(filename);
  };
  const keyed = diagnostics.map((d) => ({
    d,
    severity: d.severity,
    subject:
      d.range.start.line === 0
        ? undefined
        : { filename: d.range.filename, start: d.range.start.byte, end: d.range.end.byte },
  }));
  return sortDiagnostics(keyed).map(({ d }) => {
    const r = d.range;
    const src = r.start.line === 0 ? undefined : source(r.filename);
    return {
      ...fromHclDiagnostic(d, wholeFile),
      ...(src === undefined ? {} : { snippet: diagnosticSnippet(src, r, d.context) }),
    };
  });
}

/**
 * Renders configuration or lock-file diagnostics ({@link configDiagnostics})
 * together; true when one is an error.
 */
export function reportDiagnostics(ui: Renderer, diagnostics: readonly HclDiagnostic[], cwd?: string): boolean {
  ui.diagnostics(configDiagnostics(diagnostics, cwd));
  return diagnostics.some((d) => d.severity === 'error');
}

/**
 * The diagnostics of a command that, as terraform's `providers lock`,
 * `providers mirror` and `init` do, shows its warnings at the end, all in one
 * sorted batch with whatever else it reports there (hashicorp/terraform
 * v1.11.4 internal/command/providers_lock.go: `c.showDiagnostics(diags)`
 * once, before "Success!"; test/fixtures/reference-runs/). Errors end the
 * run at once, with the warnings gathered so far.
 */
export class PendingDiagnostics {
  private readonly list: Diagnostic[] = [];

  constructor(
    private readonly ui: Renderer,
    private readonly cwd: string,
  ) {}

  /**
   * Adds configuration or lock-file diagnostics; when one is an error,
   * renders everything through the renderer's `fail` and returns true.
   */
  add(diagnostics: readonly HclDiagnostic[]): boolean {
    this.list.push(...configDiagnostics(diagnostics, this.cwd));
    if (!diagnostics.some((d) => d.severity === 'error')) return false;
    this.fail([]);
    return true;
  }

  /** Adds diagnostics of the command's own (an install's "Incomplete lock file information" warning). */
  push(...diagnostics: Diagnostic[]): void {
    this.list.push(...diagnostics);
  }

  /** Renders what is pending, in the reference's order, and forgets it. */
  flush(): void {
    if (this.list.length > 0) this.ui.diagnostics(sortedDiagnostics(this.list.splice(0)));
  }

  /** Fails with what is pending and `errors` (one batch, in the reference's order); returns 1. */
  fail(errors: readonly Diagnostic[]): number {
    return this.ui.fail(sortedDiagnostics([...this.list.splice(0), ...errors]));
  }
}

/** An HTTP client for one run (proxies, CAs and tuning from the environment); `close` frees its connections. */
export function httpFor(
  io: CliIO,
  guard?: { wrap(fetch: FetchLike): FetchLike; readonly lookup: LookupFunction },
): { http: HttpClient; close: () => void } {
  const nodeFetch = createNodeFetch({ env: io.env, ...(guard ? { lookup: guard.lookup } : {}) });
  return {
    http: new HttpClient({
      fetch: guard ? guard.wrap(nodeFetch.fetch) : nodeFetch.fetch,
      ...httpTuningFromEnv(io.env),
    }),
    close: () => nodeFetch.close(),
  };
}

/** A run that SIGINT or SIGTERM interrupts (see {@link interruptOnSignals}). */
export interface Interrupt {
  readonly signal: AbortSignal;
  /** 130 after SIGINT, 143 after SIGTERM, 129 after SIGHUP, 141 when the output was closed, undefined while nothing came. */
  readonly exitCode: number | undefined;
  /** Removes the handlers (bin/provkit.js keeps a process-wide one; see there). */
  dispose(): void;
}

/** The exit code after each signal a command treats as an interrupt (128 + its number). */
const SIGNAL_EXIT = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const;

/**
 * Turns SIGINT, SIGTERM and SIGHUP into an abort of the running command: the
 * first signal aborts `signal` (downloads stop, temporary files are removed,
 * the lock file and a mirror stay as they were) and the command then exits
 * 130, 143 or 129; a second signal exits at once with that code (registered
 * temporary paths are still removed, see src/fs/cleanup.ts). `outputClosed`
 * (the reader of stdout went away) aborts the same way, with
 * {@link EXIT_OUTPUT_CLOSED}. Shared by `lock`, `mirror`, `install` and `bundle`.
 */
export function interruptOnSignals(outputClosed?: AbortSignal): Interrupt {
  const controller = new AbortController();
  // The run's one signal is shared by design by every request and hash job
  // in flight (8 downloads and 16 metadata requests at once,
  // installer/download-queue.ts, fetch-cache.ts): Node's leak warning at 11
  // listeners would be printed on stderr in the middle of a healthy run.
  setMaxListeners(0, controller.signal);
  let exitCode: number | undefined;
  const handlers = (Object.keys(SIGNAL_EXIT) as Array<keyof typeof SIGNAL_EXIT>).map((name) => {
    const handler = (): void => {
      if (exitCode !== undefined) process.exit(exitCode);
      exitCode = SIGNAL_EXIT[name];
      controller.abort(new ProvkitError(ErrorCode.ABORTED, `interrupted by ${name}`));
    };
    process.on(name, handler);
    return [name, handler] as const;
  });
  const onClosed = (): void => {
    if (exitCode !== undefined) return;
    exitCode = EXIT_OUTPUT_CLOSED;
    controller.abort(outputClosed?.reason);
  };
  if (outputClosed?.aborted) onClosed();
  else outputClosed?.addEventListener('abort', onClosed, { once: true });
  return {
    signal: controller.signal,
    get exitCode() {
      return exitCode;
    },
    dispose() {
      // A signal after this point finds the command done (committed or
      // rolled back): it must not kill the process on its way out. One
      // listener that ignores it stays (bin/provkit.js leaves signals to any
      // other listener), added before the run's own go.
      for (const [name] of handlers) {
        if (!lateSignalGuards.has(name)) {
          lateSignalGuards.add(name);
          process.on(name, ignoreLateSignal);
        }
      }
      for (const [name, handler] of handlers) process.off(name, handler);
      outputClosed?.removeEventListener('abort', onClosed);
    },
  };
}

const lateSignalGuards = new Set<string>();
function ignoreLateSignal(): void {
  // See Interrupt.dispose: the command has finished; its exit code stands.
}

/**
 * Runs a command body under {@link interruptOnSignals}. An interrupted run
 * reports it and returns 130/143 (nothing was changed); a body that still
 * finished successfully had committed everything before the signal took
 * effect, so its 0 stands (the state is "fully updated", never mixed).
 */
export async function runInterruptible(
  io: CliIO,
  what: string,
  body: (signal: AbortSignal) => Promise<number>,
  /** What an interrupted run had already done (default: "nothing was changed"). */
  changed: () => string = () => 'nothing was changed',
): Promise<number> {
  const interrupt = interruptOnSignals(io.outputClosed);
  // Under -json (and -json-into) the interrupt is a diagnostic on the JSON
  // streams too; stderr keeps its line unless stdout is the JSON stream.
  const report = (d: Diagnostic, text: string): void => {
    for (const ui of io.output?.jsonUIs() ?? []) ui.diagnostic(d);
    if (io.output?.json !== true) io.stderr.write(terminalText(text));
  };
  try {
    const code = await body(interrupt.signal);
    if (interrupt.exitCode === undefined) return code;
    // Nobody reads the output any more: stop quietly, as terraform does (killed by SIGPIPE).
    if (interrupt.exitCode === EXIT_OUTPUT_CLOSED) return EXIT_OUTPUT_CLOSED;
    if (code === 0) {
      // The signal came after the last commit: everything was done, and is kept.
      const detail = `${what} was already complete when the interrupt arrived; all changes are in place.`;
      report(
        {
          severity: 'warning',
          summary: 'Interrupted after completion',
          detail,
          code: WarningCode.INTERRUPTED_AFTER_COMMIT,
        },
        `Warning: ${detail}\n`,
      );
      return 0;
    }
  } catch (err) {
    if (interrupt.exitCode === undefined) throw err;
    if (interrupt.exitCode === EXIT_OUTPUT_CLOSED) return EXIT_OUTPUT_CLOSED;
  } finally {
    interrupt.dispose();
  }
  // One line for the one cause: `provkit lock was interrupted by SIGINT; nothing was changed.`
  const reason = interrupt.signal.reason instanceof Error ? interrupt.signal.reason.message : 'interrupted';
  const detail = `${what} was ${reason.startsWith('interrupted') ? reason : `interrupted (${reason})`}; ${changed()}.`;
  report({ severity: 'error', summary: 'Interrupted', detail, code: ErrorCode.ABORTED }, `Error: ${detail}\n`);
  return interrupt.exitCode;
}

/**
 * The warnings of a target's directory mutex (fs/dir-mutex.ts) as a run
 * meets them: waiting for another run that holds it (`detail` is given the
 * holder's text, ` by process PID on HOST` or nothing), and a stale one
 * removed. Called a mutex, never a lock: a lock is the dependency lock file.
 */
export function targetMutexWarnings(
  ui: Renderer,
  waiting: { readonly summary: string; readonly detail: (holder: string) => string },
): Pick<DirMutexOptions, 'onWait' | 'onBreak'> {
  return {
    onWait: (w) =>
      ui.diagnostic({
        severity: 'warning',
        summary: waiting.summary,
        detail: waiting.detail(w.holder ? ` by process ${w.holder.pid} on ${w.holder.hostname}` : ''),
        code: WarningCode.LOCK_WAIT,
      }),
    onBreak: (b) =>
      ui.diagnostic({
        severity: 'warning',
        summary: 'Stale mirror mutex removed',
        detail: `${b.path} (${b.reason})`,
        code: WarningCode.STALE_LOCK_REMOVED,
      }),
  };
}

/** The counts of a publication into an OCI registry (`mirror oci://`, `bundle import … oci://`): their text and their `-json` fields. */
export function ociPublishCounts(o: Omit<PublishOutcome, 'failures'>): {
  text: string;
  fields: Record<string, number>;
} {
  return {
    text: `${count(o.uploaded, 'blob')} uploaded (${o.uploadedBytes} bytes), ${o.present} already present, ${o.mounted} mounted; ${count(o.tagsPushed, 'tag')} pushed, ${o.tagsUnchanged} unchanged`,
    fields: {
      uploaded: o.uploaded,
      uploaded_bytes: o.uploadedBytes,
      present: o.present,
      mounted: o.mounted,
      tags_pushed: o.tagsPushed,
      tags_unchanged: o.tagsUnchanged,
    },
  };
}

/**
 * The archive limits of `PROVKIT_ZIP_LIMITS` (`entries=N,bytes=N[K|M|G],ratio=N`;
 * see docs/reliability.md), or the defaults.
 *
 * @throws ProvkitError USAGE
 */
export function zipLimitsFromEnv(env: CliIO['env']): Required<ZipLimits> {
  return parseZipLimits(env['PROVKIT_ZIP_LIMITS'] ?? '');
}

/**
 * The hash store of `lock`, `mirror` and `install` (see {@link hashStoreDir}),
 * as an option (none when disabled; option objects have exact optional properties).
 */
export function hashStoreOption(env: CliIO['env'], cwd: string): { hashStore?: HashStore } {
  const dir = hashStoreDir(env, cwd);
  return dir === undefined ? {} : { hashStore: openHashStore(dir) };
}
