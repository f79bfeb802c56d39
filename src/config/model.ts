/**
 * What the configuration loader keeps of a file and of a module: only what
 * decides provider requirements, plus the names and ranges that the
 * reference's module-level checks (duplicates, overrides) need.
 *
 * Plain data; no I/O.
 */
import type { ProviderAddress } from '../addresses/index.js';
import type { Range } from '../hcl/index.js';
import type { ModuleSource } from './module-source.js';

/**
 * A version constraint as the configuration decoder holds it
 * (`configs.VersionConstraint`): the string as written, already accepted by
 * go-version's syntax, and the range reported when go-versions later
 * refuses it (the whole attribute: `name = {…}` or `version = "…"`).
 */
export interface DeclaredConstraint {
  readonly text: string;
  readonly declRange: Range;
}

/** One entry of a `required_providers` block. */
export interface RequiredProviderEntry {
  /** The local name (the attribute name). */
  readonly name: string;
  /** The provider: the `source`, or implied from the local name. */
  readonly provider: ProviderAddress;
  /** `source` as written, when given. */
  readonly source?: string;
  /** The `version` constraint, when given and valid for go-version. */
  readonly version?: DeclaredConstraint;
  /** `configuration_aliases`, as alias names. */
  readonly configurationAliases: readonly string[];
  /** The value expression's range (`RequiredProvider.DeclRange`). */
  readonly exprRange: Range;
}

/** One `required_providers` block. */
export interface RequiredProvidersBlock {
  readonly entries: readonly RequiredProviderEntry[];
  /** The block's definition range (`required_providers`), used in "previously configured at". */
  readonly declRange: Range;
}

/** A reference to a provider configuration: `aws` or `aws.west`. */
export interface ProviderRef {
  readonly name: string;
  readonly alias?: string;
  readonly range: Range;
  /** The local name's own range (`ProviderConfigRef.NameRange`: the first step of the traversal). */
  readonly nameRange: Range;
}

/** One entry of a module call's `providers` map (`PassedProviderConfig`): `in_child = in_parent`. */
export interface PassedProviderConfig {
  readonly inChild: ProviderRef;
  readonly inParent: ProviderRef;
}

/** A `provider "name" { … }` block. */
export interface ProviderConfigDecl {
  readonly name: string;
  /** The alias, when it is set and static (an unknown alias is `undefined` with `aliasSet`). */
  readonly alias?: string;
  readonly aliasSet: boolean;
  /** The deprecated `version` argument. */
  readonly version?: DeclaredConstraint;
  /**
   * The body has arguments or blocks besides `alias` and `version` (the
   * reference's `pc.Config.Content(&hcl.BodySchema{})` fails): a real
   * configuration, not an empty "proxy" block.
   */
  readonly hasConfig: boolean;
  readonly declRange: Range;
}

/** A `resource`, `data` or `ephemeral` block (data blocks nested in `check` blocks included). */
export interface ResourceDecl {
  readonly mode: 'managed' | 'data' | 'ephemeral';
  readonly type: string;
  readonly name: string;
  readonly providerRef?: ProviderRef;
  /** A data block nested in a `check` block (override files do not merge these). */
  readonly inCheck?: boolean;
  readonly declRange: Range;
}

/** An `import` block: the provider of its target resource type, or its `provider` argument. */
export interface ImportDecl {
  /** The target's resource type, when `to` is a static reference. */
  readonly resourceType?: string;
  readonly providerRef?: ProviderRef;
  readonly declRange: Range;
}

/** A `module "name" { … }` call. */
export interface ModuleCallDecl {
  readonly name: string;
  /** The parsed `source`, when it is a static string that parses. */
  readonly source?: ModuleSource;
  /** `source` as written (static strings only). */
  readonly sourceRaw?: string;
  /** Whether `source` was written at all (override files may omit it). */
  readonly sourceSet: boolean;
  readonly sourceRange?: Range;
  /** The `version` constraint (registry modules), as go-version accepted it. */
  readonly version?: DeclaredConstraint;
  /** An error was reported for `source` or `version`: the reference does not load this call. */
  readonly invalid?: boolean;
  /** The `providers` map, in source order (entries that did not decode left out). */
  readonly providers: readonly PassedProviderConfig[];
  /** The `count` expression's range, when set. */
  readonly countRange?: Range;
  /** The `for_each` expression's range, when set. */
  readonly forEachRange?: Range;
  /** The range of the first `depends_on` reference, when there is one. */
  readonly dependsOnRange?: Range;
  readonly declRange: Range;
}

/** A named declaration, kept for duplicate and override checks. */
export interface NamedDecl {
  readonly name: string;
  readonly declRange: Range;
}

/** The decoded content of one configuration file. */
export interface ConfigFile {
  readonly filename: string;
  readonly override: boolean;
  readonly requiredProviders: RequiredProvidersBlock[];
  readonly providerConfigs: ProviderConfigDecl[];
  readonly moduleCalls: ModuleCallDecl[];
  readonly resources: ResourceDecl[];
  readonly imports: ImportDecl[];
  readonly variables: NamedDecl[];
  readonly locals: NamedDecl[];
  readonly outputs: NamedDecl[];
  readonly checks: NamedDecl[];
  readonly moved: Range[];
  readonly removed: Range[];
  readonly backends: Range[];
  readonly clouds: Range[];
}

/** A module: its files combined, overrides applied (`configs.Module`). */
export interface Module {
  /** Required providers by local name (primary block, then override entries replacing per provider). */
  readonly requiredProviders: Map<string, RequiredProviderEntry>;
  /** Provider configurations by `name` or `name.alias`. */
  readonly providerConfigs: Map<string, ProviderConfigDecl>;
  /** Module calls by name. */
  readonly moduleCalls: Map<string, ModuleCallDecl>;
  /** Resources by `mode.type.name`, each with the provider it resolves to (unset when its type is not a valid provider name). */
  readonly resources: Map<string, { decl: ResourceDecl; provider?: ProviderAddress }>;
  readonly imports: { decl: ImportDecl; provider?: ProviderAddress }[];
  /** The definition range of the module's backend block, if any (after overrides). */
  readonly backend?: Range;
  /** The definition range of the module's cloud block, if any (after overrides). */
  readonly cloud?: Range;
}
