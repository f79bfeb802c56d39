/**
 * Which reference tool provkit imitates: OpenTofu (`tofu`) or Terraform.
 *
 * The flavor decides the default registry host of short provider addresses
 * (docs/reference.md §1.1 item 5), a few error texts (docs/reference.md §1.1 items 6–7), the lock-file header and
 * the documentation link of the checksum-mismatch error (docs/reference.md §3.4 item 48).
 *
 * Pure: no I/O. {@link resolveFlavor} takes the environment as an argument.
 */
import { ErrorCode, ProvkitError, errorText } from '../errors.js';

/** The reference tool provkit imitates. */
export type Flavor = 'tofu' | 'terraform';

/** Every flavor, in the order they are listed in messages. */
export const FLAVORS: readonly Flavor[] = ['tofu', 'terraform'];

/** The flavor used when neither a flag nor `PROVKIT_FLAVOR` names one. */
export const DEFAULT_FLAVOR: Flavor = 'tofu';

/** The environment variable {@link resolveFlavor} reads when no flag is given. */
export const FLAVOR_ENV_VAR = 'PROVKIT_FLAVOR';

/** Facts about a flavor that messages and file formats need. */
export interface FlavorInfo {
  /** The flavor these facts are about. */
  readonly flavor: Flavor;
  /** `OpenTofu` or `Terraform`, as the tools name themselves in messages. */
  readonly productName: 'OpenTofu' | 'Terraform';
  /** The CLI command: `tofu` or `terraform` (lock-file header, hints such as "run tofu init"). */
  readonly command: 'tofu' | 'terraform';
  /** The registry host of addresses written without a hostname (docs/reference.md §1.1 item 5). */
  readonly defaultHost: string;
  /** The link at the end of the lock-file checksum mismatch errors (docs/reference.md §3.4 items 48–49). */
  readonly docsChecksumURL: string;
}

const INFO: Readonly<Record<Flavor, FlavorInfo>> = {
  tofu: Object.freeze({
    flavor: 'tofu',
    productName: 'OpenTofu',
    command: 'tofu',
    defaultHost: 'registry.opentofu.org',
    docsChecksumURL: 'https://opentofu.org/docs/language/files/dependency-lock/#checksum-verification',
  }),
  terraform: Object.freeze({
    flavor: 'terraform',
    productName: 'Terraform',
    command: 'terraform',
    defaultHost: 'registry.terraform.io',
    docsChecksumURL: 'https://developer.hashicorp.com/terraform/language/files/dependency-lock#checksum-verification',
  }),
};

/** True when `s` is exactly one of {@link FLAVORS}. */
export function isFlavor(s: unknown): s is Flavor {
  return s === 'tofu' || s === 'terraform';
}

/**
 * Parses a flavor name. Only the exact lower-case names `tofu` and
 * `terraform` are accepted.
 *
 * @throws {ProvkitError} `INVALID_FLAVOR`, naming the bad value and the allowed ones.
 */
export function parseFlavor(s: string): Flavor {
  if (isFlavor(s)) return s;
  throw new ProvkitError(
    ErrorCode.INVALID_FLAVOR,
    `invalid flavor ${JSON.stringify(s)}: must be one of ${FLAVORS.map((f) => JSON.stringify(f)).join(', ')}`,
    { found: s, expected: FLAVORS.join(', ') },
  );
}

/** The default registry host: `registry.opentofu.org` or `registry.terraform.io`. */
export function defaultRegistryHost(flavor: Flavor): string {
  return INFO[flavor].defaultHost;
}

/**
 * Picks the flavor: the flag when given, else `PROVKIT_FLAVOR` from `env`,
 * else {@link DEFAULT_FLAVOR}. An empty `PROVKIT_FLAVOR` counts as unset; an
 * empty flag does not (it is an explicit, invalid value).
 *
 * @throws {ProvkitError} `INVALID_FLAVOR` when the chosen value is not a flavor.
 */
export function resolveFlavor(flag: string | undefined, env: Readonly<Record<string, string | undefined>>): Flavor {
  if (flag !== undefined) return parseFlavor(flag);
  const fromEnv = env[FLAVOR_ENV_VAR];
  if (fromEnv !== undefined && fromEnv !== '') {
    try {
      return parseFlavor(fromEnv);
    } catch (err) {
      throw new ProvkitError(ErrorCode.INVALID_FLAVOR, `${FLAVOR_ENV_VAR}: ${errorText(err)}`, {
        found: fromEnv,
        expected: FLAVORS.join(', '),
        hint: `unset ${FLAVOR_ENV_VAR} or set it to one of ${FLAVORS.join(', ')}`,
      });
    }
  }
  return DEFAULT_FLAVOR;
}

/** The facts about `flavor`; the returned object is frozen and shared. */
export function flavorInfo(flavor: Flavor): FlavorInfo {
  return INFO[flavor];
}
