/**
 * The mirror flags of `lock`, `mirror`, `install`, `bundle`, `verify` and
 * `serve -upstream` (`-fs-mirror`, `-net-mirror`, `-oci-mirror`, an `oci://`
 * target or store) checked before any work, in the reference's words: which
 * may be given together, the URL and URI template they must be, and the
 * directory a filesystem mirror must be.
 */
import { asSentence, type Diagnostic, diagnosticFromError, ErrorCode, isProvkitError } from '../errors.js';
import { checkDirectorySource } from '../fs/target.js';
import { nameSuggestion } from '../go/index.js';
import { templateVariables, validateLevel1 } from '../net/index.js';

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
