/**
 * Provider source addresses (`hostname/namespace/type`), parsed, normalised,
 * printed and sorted as the reference tools do (docs/reference.md §1.1 items 1–10;
 * `opentofu/registry-address` `provider.go`, `internal/addrs/provider.go`).
 *
 * Pure: no I/O.
 */
import { ErrorCode, ProvkitError } from '../errors.js';
import { compareBytewise, goQuote } from '../go/index.js';
import { defaultRegistryHost, FLAVORS } from './flavor.js';
import type { Flavor } from './flavor.js';
import { hostnameForDisplay, idnaLookup, tryHostnameForComparison } from './hostname.js';
import type { Hostname } from './hostname.js';

/** The namespace of built-in providers (`terraform.io/builtin/terraform`). */
export const BUILTIN_NAMESPACE = 'builtin';
/** The legacy namespace `-`, allowed only with the flavor's default host (docs/reference.md §1.1 item 7). */
export const LEGACY_NAMESPACE = '-';
/** The namespace implied for one-part sources such as `aws` (docs/reference.md §1.1 item 5). */
export const DEFAULT_NAMESPACE = 'hashicorp';
/** Built-in host of Terraform-lineage built-in providers (`terraform.io`). */
export const TRANSITIONAL_BUILTIN_HOST = 'terraform.io' as Hostname;
/** OpenTofu's own built-in host (`opentofu.org`), built-in only for the tofu flavor. */
export const BUILTIN_HOST = 'opentofu.org' as Hostname;

/**
 * A fully-qualified provider address. Immutable; instances made by
 * {@link parseProviderSource} or {@link newProviderAddress} are normalised, so
 * {@link ProviderAddress.equals} is plain field equality.
 *
 * - {@link hostname} is the **comparison form** (punycode, for the network
 *   and for sorting); {@link displayHostname} is the Unicode form (for
 *   messages, lock files and mirror paths).
 * - {@link toString} is `display-host/namespace/type`, the form lock files use
 *   (Go `Provider.String`, docs/reference.md §1.1 item 4).
 */
export class ProviderAddress {
  /** Hostname in comparison form: lower case, punycode, port normalised. */
  readonly hostname: Hostname;
  /** Normalised namespace (Unicode, lower case), or `-` for a legacy address. */
  readonly namespace: string;
  /** Normalised type (Unicode, lower case). */
  readonly type: string;
  /** The hostname in display (Unicode) form, with its port if any: for messages, lock files, mirror paths. */
  readonly displayHostname: string;

  /**
   * Builds an address from parts that are **already normalised**. No check is
   * made; use {@link newProviderAddress} or {@link parseProviderSource} for
   * user input.
   */
  constructor(hostname: Hostname, namespace: string, type: string) {
    this.hostname = hostname;
    this.namespace = namespace;
    this.type = type;
    this.displayHostname = hostnameForDisplay(hostname);
    Object.freeze(this);
  }

  /** `display-host/namespace/type` (Go `Provider.String`): lock-file labels, messages. */
  toString(): string {
    return `${this.displayHostname}/${this.namespace}/${this.type}`;
  }

  /**
   * Go's `Provider.ForDisplay` (OpenTofu `internal/addrs/provider.go`): like
   * {@link toString} but without the host when it is `flavor`'s default
   * registry host (`hashicorp/aws`). The reference uses it in human messages
   * and in the "Did you mean" suggestion (docs/reference.md §1.1 item 6).
   * The Go code has one default host; provkit has one per flavor, hence the
   * argument. For the full address use {@link toString} (Go `Provider.String`).
   */
  forDisplay(flavor: Flavor): string {
    if (this.hostname === defaultRegistryHost(flavor)) return `${this.namespace}/${this.type}`;
    return this.toString();
  }

  /**
   * The old name of {@link forDisplay}.
   *
   * @deprecated Use {@link forDisplay} (the same short form, named as in Go).
   * Before this rename `forDisplay()` without an argument returned the full
   * address; callers that want the full address use {@link toString}.
   */
  toShortString(flavor: Flavor): string {
    return this.forDisplay(flavor);
  }

  /** `comparison-host/namespace/type`: the host in punycode, for URLs and keys. */
  toComparisonString(): string {
    return `${this.hostname}/${this.namespace}/${this.type}`;
  }

  /**
   * Whether this is a built-in provider (docs/reference.md §1.1 item 9): namespace `builtin`
   * and host `terraform.io`, or (tofu only) `opentofu.org`. Without a flavor,
   * either host counts.
   */
  isBuiltIn(flavor?: Flavor): boolean {
    if (this.namespace !== BUILTIN_NAMESPACE) return false;
    if (this.hostname === TRANSITIONAL_BUILTIN_HOST) return true;
    return this.hostname === BUILTIN_HOST && flavor !== 'terraform';
  }

  /**
   * Whether this is a legacy address (`-` namespace on the default registry
   * host of `flavor`, or of either flavor when none is given).
   */
  isLegacy(flavor?: Flavor): boolean {
    if (this.namespace !== LEGACY_NAMESPACE) return false;
    const hosts = flavor === undefined ? FLAVORS.map(defaultRegistryHost) : [defaultRegistryHost(flavor)];
    return hosts.includes(this.hostname);
  }

  /** Field equality (the parts are normalised, so this is address equality). */
  equals(other: ProviderAddress): boolean {
    return this.hostname === other.hostname && this.namespace === other.namespace && this.type === other.type;
  }

  /**
   * Sort order of lock files and error lists (docs/reference.md §1.1 item 10, §10 item 133):
   * hostname (comparison form), then namespace, then type, each compared by
   * bytes. Component by component, so `acme/gamma` sorts before
   * `acme-labs/beta` although `-` < `/`.
   */
  static compare(a: ProviderAddress, b: ProviderAddress): number {
    return (
      compareBytewise(a.hostname, b.hostname) ||
      compareBytewise(a.namespace, b.namespace) ||
      compareBytewise(a.type, b.type)
    );
  }
}

// ---------------------------------------------------------------------------

type PartResult = { ok: true; value: string } | { ok: false; error: string };

const PART_IDNA_ERROR = 'must contain only letters, digits, and dashes, and may not use leading or trailing dashes';

/** {@link parseProviderPart} without throwing: the normalised part or the reference's error text. */
export function tryParseProviderPart(given: string): PartResult {
  if (given.length === 0) return { ok: false, error: 'must have at least one character' };
  if (given.includes('.')) return { ok: false, error: 'dots are not allowed' };
  if (given.includes('--')) return { ok: false, error: 'cannot use multiple consecutive dashes' };
  const r = idnaLookup(given, false);
  if (!r.ok) return { ok: false, error: PART_IDNA_ERROR };
  return { ok: true, value: r.value };
}

/**
 * Normalises a namespace or type (Go `ParseProviderPart`, docs/reference.md §1.1 item 2): no
 * empty string, no `.`, no `--` (which also blocks `xn--`), then
 * `idna.Lookup.ToUnicode`: letters (any script), digits and `-` only, no
 * leading or trailing `-`, lower-cased and NFC. The result is Unicode
 * (`Ñame` → `ñame`). Idempotent.
 *
 * Quirk kept from Go: only ASCII `.` is refused up front, so a part written
 * with an ideographic full stop (U+3002) maps to a `.` and passes.
 *
 * @throws {ProvkitError} `INVALID_PROVIDER_SOURCE` with the reference's text
 *   (for example `dots are not allowed`) as the message.
 */
export function parseProviderPart(given: string): string {
  const r = tryParseProviderPart(given);
  if (r.ok) return r.value;
  throw new ProvkitError(ErrorCode.INVALID_PROVIDER_SOURCE, r.error, { found: given });
}

function sourceError(summary: string, detail: string, source: string): ProvkitError {
  // The detail's lines are the reference's; the source string in it is quoted (goQuote).
  return new ProvkitError(ErrorCode.INVALID_PROVIDER_SOURCE, `${summary}: ${detail}`.split('\n'), {
    summary,
    detail,
    provider: source,
  });
}

const FORMAT_DETAIL = 'The "source" attribute must be in the format "[hostname/][namespace/]name"';

/** Prefix checks (docs/reference.md §1.1 item 6), per flavor: `[redundant, userError, product]`. */
const PREFIX_RULES: Readonly<Record<Flavor, readonly (readonly [string, string, 'Terraform' | 'OpenTofu'])[]>> = {
  terraform: [['terraform-', 'terraform-provider-', 'Terraform']],
  tofu: [
    ['terraform-', 'terraform-provider-', 'Terraform'],
    ['opentofu-', 'opentofu-provider-', 'OpenTofu'],
  ],
};

/**
 * Parses a `source` string of a `required_providers` entry or a lock-file
 * label (Go `addrs.ParseProviderSourceString`), docs/reference.md §1.1 items 1–9:
 *
 * - `name`, `namespace/name` or `hostname/namespace/name`; no empty part,
 *   at most three parts.
 * - The default host is the flavor's (`registry.opentofu.org` or
 *   `registry.terraform.io`); a one-part source gets namespace `hashicorp`
 *   (`HashiCorp/AWS` → `registry.opentofu.org/hashicorp/aws`).
 * - A one-part source skips the type-prefix checks, as in the reference
 *   (`terraform-provider-aws` is accepted), and `terraform` is *not* mapped
 *   to the built-in provider here (terraform v1.11.4 gives
 *   `registry.terraform.io/hashicorp/terraform` for `source = "terraform"`);
 *   see {@link impliedProviderForUnqualifiedType} for providers with no source.
 * - The legacy namespace `-` is kept, but only with the default host.
 *
 * Errors reproduce the reference's Summary/Detail (in `summary`/`detail`),
 * including its quirks (docs/reference.md §1.1 item 8): namespace and hostname errors print the
 * normalised (always empty) value, the hostname error says "hostname
 * namespace", and those Details end with a stray `"`. The message is
 * `Summary: Detail`.
 *
 * @throws {ProvkitError} `INVALID_PROVIDER_SOURCE`.
 */
export function parseProviderSource(source: string, flavor: Flavor): ProviderAddress {
  const parts = source.split('/');
  if (parts.length > 3 || parts.some((p) => p === '')) {
    throw sourceError('Invalid provider source string', FORMAT_DETAIL, source);
  }
  const givenType = parts[parts.length - 1] ?? '';
  const type = tryParseProviderPart(givenType);
  if (!type.ok) {
    throw sourceError(
      'Invalid provider type',
      `Invalid provider type ${goQuote(givenType)} in source ${goQuote(source)}: ${type.error}"`,
      source,
    );
  }
  const defaultHost = defaultRegistryHost(flavor) as Hostname;
  if (parts.length === 1) return new ProviderAddress(defaultHost, DEFAULT_NAMESPACE, type.value);

  const givenNamespace = parts[parts.length - 2] ?? '';
  let namespace: string;
  if (givenNamespace === LEGACY_NAMESPACE) {
    namespace = LEGACY_NAMESPACE;
  } else {
    const ns = tryParseProviderPart(givenNamespace);
    if (!ns.ok) {
      throw sourceError(
        'Invalid provider namespace',
        `Invalid provider namespace "" in source ${goQuote(source)}: ${ns.error}"`,
        source,
      );
    }
    namespace = ns.value;
  }

  let hostname = defaultHost;
  if (parts.length === 3) {
    const hn = tryHostnameForComparison(parts[0] ?? '');
    if (!hn.ok) {
      throw sourceError(
        'Invalid provider source hostname',
        `Invalid provider source hostname namespace "" in source ${goQuote(source)}: ${hn.error}"`,
        source,
      );
    }
    hostname = hn.hostname;
  }

  if (namespace === LEGACY_NAMESPACE && hostname !== defaultHost) {
    throw sourceError(
      'Invalid provider namespace',
      `The legacy provider namespace "-" can be used only with hostname ${defaultRegistryHost(flavor)}.`,
      source,
    );
  }

  const addr = new ProviderAddress(hostname, namespace, type.value);
  for (const [redundant, userError, product] of PREFIX_RULES[flavor]) {
    if (!addr.type.startsWith(redundant)) continue;
    if (addr.type.startsWith(userError)) {
      const suggested = addr.type.slice(userError.length);
      if (tryParseProviderPart(suggested).ok) {
        const suggestedAddr = new ProviderAddress(hostname, namespace, suggested);
        const often = product === 'Terraform' ? 'often' : 'sometimes';
        throw sourceError(
          'Invalid provider type',
          `Provider source ${goQuote(addr.forDisplay(flavor))} has a type with the prefix ${goQuote(userError)}, which isn't valid. ` +
            `Although that prefix is ${often} used in the names of version control repositories for ${product} providers, ` +
            `provider source strings should not include it.\n\nDid you mean ${goQuote(suggestedAddr.forDisplay(flavor))}?`,
          source,
        );
      }
    }
    const article = product === 'Terraform' ? 'a' : 'an';
    throw sourceError(
      'Invalid provider type',
      `Provider source ${goQuote(addr.toString())} has a type with the prefix ${goQuote(redundant)}, which isn't allowed ` +
        `because it would be redundant to name ${article} ${product} provider with that prefix. ` +
        'If you are the author of this provider, rename it to not include the prefix.',
      source,
    );
  }
  return addr;
}

/** {@link parseProviderSource} without throwing: the address, or the error. */
export function tryParseProviderSource(
  source: string,
  flavor: Flavor,
): { ok: true; address: ProviderAddress } | { ok: false; error: ProvkitError } {
  try {
    return { ok: true, address: parseProviderSource(source, flavor) };
  } catch (err) {
    if (err instanceof ProvkitError) return { ok: false, error: err };
    throw err;
  }
}

/**
 * The provider a bare type name implies when no `source` is written (Go
 * `ImpliedProviderForUnqualifiedType`, docs/reference.md §1.1 item 9): `terraform` is the
 * built-in `terraform.io/builtin/terraform`; anything else is
 * `<default host>/hashicorp/<type>`.
 *
 * @throws {ProvkitError} `INVALID_PROVIDER_SOURCE` when `type` is not a valid part.
 */
export function impliedProviderForUnqualifiedType(type: string, flavor: Flavor): ProviderAddress {
  const t = parseProviderPart(type);
  if (t === 'terraform') return new ProviderAddress(TRANSITIONAL_BUILTIN_HOST, BUILTIN_NAMESPACE, t);
  return new ProviderAddress(defaultRegistryHost(flavor) as Hostname, DEFAULT_NAMESPACE, t);
}

/**
 * Builds a normalised address from separately given parts, as a filesystem
 * mirror scan does with directory names: the hostname through svchost
 * `ForComparison`, namespace and type through {@link parseProviderPart}.
 * The legacy namespace `-` is refused here (Go `NewProvider` panics on it).
 *
 * @throws {ProvkitError} `INVALID_PROVIDER_SOURCE` with the reference's text.
 */
export function newProviderAddress(hostname: string, namespace: string, type: string): ProviderAddress {
  const hn = tryHostnameForComparison(hostname);
  if (!hn.ok) throw new ProvkitError(ErrorCode.INVALID_PROVIDER_SOURCE, hn.error, { found: hostname });
  if (namespace === LEGACY_NAMESPACE) {
    throw new ProvkitError(ErrorCode.INVALID_PROVIDER_SOURCE, 'the legacy provider namespace "-" is not allowed here', {
      found: namespace,
    });
  }
  return new ProviderAddress(hn.hostname, parseProviderPart(namespace), parseProviderPart(type));
}

/** A sorted copy of `addresses`, in {@link ProviderAddress.compare} order. */
export function sortProviders(addresses: Iterable<ProviderAddress>): ProviderAddress[] {
  return [...addresses].sort((a, b) => ProviderAddress.compare(a, b));
}
