/**
 * The values of the flags and arguments that name platforms and providers,
 * as typed values with the reference's diagnostics: `-platform` (with what a
 * mistyped one was meant to be), the platform policy when no `-platform` is
 * given, and `lock`'s `PROVIDER...` arguments. A bad value adds its
 * diagnostic to the caller's list, so that a command says every usage error
 * at once, before any work.
 */
import {
  currentPlatform,
  type Flavor,
  goQuote,
  parsePlatform,
  type Platform,
  tryParseProviderSource,
  type Requirement,
} from '../addresses/index.js';
import { type Diagnostic, type DiagnosticCode, ErrorCode, errorText } from '../errors.js';
import { nameSuggestion } from '../go/index.js';
import { findPolicy, type PlatformPolicy } from '../config/index.js';
import { reportDiagnostics } from './diagnostics.js';
import type { GlobalOptions } from './io.js';
import type { Renderer } from './render.js';

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
