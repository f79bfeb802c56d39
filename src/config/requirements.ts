/**
 * Provider requirements of a module and of a module tree
 * (`internal/configs/config.go` `ProviderRequirements` /
 * `addProviderRequirements`, `getproviders.Requirements.Merge`).
 *
 * For each module:
 * 1. every `required_providers` entry is a requirement; its `version` is
 *    parsed again with go-versions (`parseConstraints`), whose errors are
 *    "Invalid version constraint" / "Incorrect version constraint syntax: …."
 *    at the entry (confirmed with terraform 1.11.4);
 * 2. every resource, data source and ephemeral resource requires the
 *    provider it resolves to (its `provider` argument, else the first word
 *    of its type, through the module's local names, else
 *    `<default host>/hashicorp/<word>`);
 * 3. every `import` block requires its provider likewise;
 * 4. every `provider` block requires its provider, and its deprecated
 *    `version` argument joins the constraints.
 * Requirements of all modules are concatenated per provider; the canonical
 * string (`VersionConstraints.toString()`) removes duplicates.
 *
 * Pure: no I/O.
 */
import type { Diagnostic } from '../errors.js';
import type { Flavor, Requirement, VersionConstraints } from '../addresses/index.js';
import { NO_CONSTRAINTS, ProviderAddress, tryParseConstraints } from '../addresses/index.js';
import { errorDiag } from './diagnostics.js';
import type { DeclaredConstraint, Module, ProviderConfigDecl } from './model.js';
import { providerForLocalName } from './module.js';

/** One required provider and the intersection of every constraint on it (addresses/requirement.ts). */
export type ProviderRequirement = Requirement;

/**
 * Requirements keyed by the provider's fully-qualified display string
 * (`registry.terraform.io/hashicorp/aws`), in {@link ProviderAddress.compare}
 * order once {@link sortRequirements} has run.
 */
export type Requirements = Map<string, ProviderRequirement>;

function add(
  reqs: Requirements,
  provider: ProviderAddress | undefined,
  constraints: VersionConstraints = NO_CONSTRAINTS,
): void {
  if (!provider) return;
  const key = provider.toString();
  const existing = reqs.get(key);
  reqs.set(key, { provider, constraints: existing ? existing.constraints.merge(constraints) : constraints });
}

function parseDeclared(
  c: DeclaredConstraint | undefined,
  flavor: Flavor,
  diagnostics: Diagnostic[],
): VersionConstraints {
  if (!c) return NO_CONSTRAINTS;
  const r = tryParseConstraints(c.text, flavor);
  if (r.ok) return r.constraints;
  diagnostics.push(
    errorDiag('Invalid version constraint', `Incorrect version constraint syntax: ${r.error.message}.`, c.declRange),
  );
  return NO_CONSTRAINTS;
}

/** The requirements of one module (no children), in the reference's order of discovery. */
export function moduleRequirements(
  module: Module,
  flavor: Flavor,
): { requirements: Requirements; diagnostics: Diagnostic[] } {
  const requirements: Requirements = new Map();
  const diagnostics: Diagnostic[] = [];
  for (const rp of module.requiredProviders.values()) {
    add(requirements, rp.provider, parseDeclared(rp.version, flavor, diagnostics));
  }
  for (const mode of ['managed', 'data', 'ephemeral'] as const) {
    for (const r of module.resources.values()) if (r.decl.mode === mode) add(requirements, r.provider);
  }
  for (const i of module.imports) add(requirements, i.provider);
  for (const pc of module.providerConfigs.values()) {
    add(requirements, providerForLocalName(module, pc.name, flavor), parseDeclared(pc.version, flavor, diagnostics));
  }
  return { requirements, diagnostics };
}

/**
 * OpenTofu's requirements from test files' `provider` blocks
 * (`addProviderRequirements` with tests: `addProviderRequirementsFromProviderBlock`
 * on the root module): each block's provider, through the root module's local
 * names, with its deprecated `version` constraint. Terraform has none.
 */
export function testFileRequirements(
  root: Module,
  files: readonly { readonly providerConfigs: readonly ProviderConfigDecl[] }[],
  flavor: Flavor,
): { requirements: Requirements; diagnostics: Diagnostic[] } {
  const requirements: Requirements = new Map();
  const diagnostics: Diagnostic[] = [];
  for (const f of files) {
    for (const pc of f.providerConfigs)
      add(requirements, providerForLocalName(root, pc.name, flavor), parseDeclared(pc.version, flavor, diagnostics));
  }
  return { requirements, diagnostics };
}

/** Adds every requirement of `from` to `into` (`Requirements.Merge`: constraints are concatenated). */
export function mergeRequirements(into: Requirements, from: Requirements): void {
  for (const r of from.values()) add(into, r.provider, r.constraints);
}

/** A copy of `reqs` in provider order (hostname, namespace, type; docs/reference.md §1.1 item 10). */
export function sortRequirements(reqs: Requirements): Requirements {
  return new Map([...reqs.entries()].sort((a, b) => ProviderAddress.compare(a[1].provider, b[1].provider)));
}

/**
 * `reqs` without the providers the reference never locks
 * (`depsfile.ProviderIsLockable`): built-in providers
 * (`terraform.io/builtin/terraform`, and for OpenTofu `opentofu.org/builtin/*`),
 * which are part of the tool, and legacy `-` namespace providers
 * (docs/reference.md §10 item 138; `providers lock` silently leaves out `source = "-/foo"`,
 * confirmed with terraform 1.11.4).
 */
export function lockableRequirements(reqs: Requirements, flavor: Flavor): Requirements {
  return new Map([...reqs.entries()].filter(([, r]) => !r.provider.isBuiltIn(flavor) && !r.provider.isLegacy(flavor)));
}

/** A requirement set from plain data, for tests and callers that build requirements themselves. */
export function requirementsOf(entries: Iterable<ProviderRequirement>): Requirements {
  const reqs: Requirements = new Map();
  for (const e of entries) add(reqs, e.provider, e.constraints);
  return reqs;
}
