/**
 * Combining the files of one module directory into a module
 * (`internal/configs/module.go` `NewModule`, `appendFile`, `mergeFile`,
 * `module_merge.go`), with the reference's diagnostics.
 *
 * Order of work, as in the reference:
 * 1. the `required_providers` block of the primary files (only one is
 *    allowed: "Duplicate required providers configuration");
 * 2. `required_providers` entries of override files replace the primary
 *    ones **per provider** (seed document 002, "合并 terraform 块");
 * 3. primary files are appended (duplicates are errors), resolving each
 *    resource's provider through the module's local names;
 * 4. override files are merged in (each overridden object must exist in a
 *    primary file): a provider block's `version` replaces the original,
 *    a resource's `provider` argument replaces the original (and so its
 *    provider), a module call's `source` and `version` replace the originals.
 *
 * Pure: no I/O.
 */
import type { Diagnostic } from '../errors.js';
import type { Flavor, ProviderAddress } from '../addresses/index.js';
import { goQuote, impliedProviderForUnqualifiedType, tryParseProviderPart } from '../addresses/index.js';
import type { Range } from '../hcl/index.js';
import { errorDiag, formatRange } from './diagnostics.js';
import type {
  ConfigFile,
  ImportDecl,
  Module,
  ModuleCallDecl,
  NamedDecl,
  ProviderConfigDecl,
  RequiredProviderEntry,
  ResourceDecl,
} from './model.js';

/** The result of {@link buildModule}. */
export interface ModuleResult {
  readonly module: Module;
  readonly diagnostics: Diagnostic[];
}

/**
 * Combines the primary files and then the override files of a module, each
 * list in the order the files are loaded (lexical by name).
 */
export function buildModule(
  primary: readonly ConfigFile[],
  override: readonly ConfigFile[],
  flavor: Flavor,
): ModuleResult {
  const b = new ModuleBuilder(flavor);
  b.requiredProviders(primary, override);
  for (const f of primary) b.appendFile(f);
  for (const f of override) b.mergeFile(f);
  return { module: b.finish(), diagnostics: b.diags };
}

/** `moduleUniqueKey` of a provider configuration; an alias that is not static gets a key of its own. */
function providerKey(p: ProviderConfigDecl, serial: number): string {
  if (p.alias !== undefined) return `${p.name}.${p.alias}`;
  return p.aliasSet ? `${p.name}.<unknown ${serial}>` : p.name;
}

function resourceKey(r: ResourceDecl): string {
  return `${r.mode}.${r.type}.${r.name}`;
}

/**
 * `Module.ImpliedProviderForUnqualifiedType` (and `ProviderForLocalConfig`):
 * the provider a local name stands for in `module`: its `required_providers`
 * entry, else `<default host>/hashicorp/<name>` (`terraform` is the built-in
 * provider). `undefined` when `name` is not a valid provider name.
 */
export function providerForLocalName(module: Module, name: string, flavor: Flavor): ProviderAddress | undefined {
  const rp: RequiredProviderEntry | undefined = module.requiredProviders.get(name);
  if (rp) return rp.provider;
  const part = tryParseProviderPart(name);
  return part.ok ? impliedProviderForUnqualifiedType(part.value, flavor) : undefined;
}

/** `Resource.ImpliedProvider`: the type name up to its first underscore. */
export function impliedProviderLocalName(resourceType: string): string {
  const under = resourceType.indexOf('_');
  return under === -1 ? resourceType : resourceType.slice(0, under);
}

class ModuleBuilder {
  readonly diags: Diagnostic[] = [];
  readonly module: Module = {
    requiredProviders: new Map(),
    providerConfigs: new Map(),
    moduleCalls: new Map(),
    resources: new Map(),
    imports: [],
  };
  private backend: Range | undefined;
  private cloud: Range | undefined;
  private readonly variables = new Map<string, NamedDecl>();
  private readonly locals = new Map<string, NamedDecl>();
  private readonly outputs = new Map<string, NamedDecl>();
  private readonly checks = new Map<string, NamedDecl>();
  private serial = 0;

  constructor(private readonly flavor: Flavor) {}

  finish(): Module {
    return {
      ...this.module,
      ...(this.backend ? { backend: this.backend } : {}),
      ...(this.cloud ? { cloud: this.cloud } : {}),
    };
  }

  requiredProviders(primary: readonly ConfigFile[], override: readonly ConfigFile[]): void {
    let first: { declRange: Range } | undefined;
    for (const f of primary) {
      for (const block of f.requiredProviders) {
        if (first) {
          this.diags.push(
            errorDiag(
              'Duplicate required providers configuration',
              `A module may have only one required providers configuration. The required providers were previously configured at ${formatRange(first.declRange)}.`,
              block.declRange,
            ),
          );
          continue;
        }
        first = block;
        for (const e of block.entries) this.module.requiredProviders.set(e.name, e);
      }
    }
    for (const f of override) {
      for (const block of f.requiredProviders) {
        for (const e of block.entries) this.module.requiredProviders.set(e.name, e);
      }
    }
  }

  providerForLocalName(name: string): ProviderAddress | undefined {
    return providerForLocalName(this.module, name, this.flavor);
  }

  private resourceProvider(r: ResourceDecl): ProviderAddress | undefined {
    if (r.providerRef) return this.providerForLocalName(r.providerRef.name);
    // An invalid type (e.g. "null resource") implies no provider; the reference reports it elsewhere.
    const part = tryParseProviderPart(impliedProviderLocalName(r.type));
    return part.ok ? this.providerForLocalName(part.value) : undefined;
  }

  private importProvider(i: ImportDecl): ProviderAddress | undefined {
    if (i.providerRef) return this.providerForLocalName(i.providerRef.name);
    if (i.resourceType === undefined) return undefined;
    const part = tryParseProviderPart(impliedProviderLocalName(i.resourceType));
    return part.ok ? this.providerForLocalName(part.value) : undefined;
  }

  private named(
    map: Map<string, NamedDecl>,
    items: readonly NamedDecl[],
    summary: string,
    detail: (n: NamedDecl, at: string) => string,
  ): void {
    for (const item of items) {
      const existing = map.get(item.name);
      if (existing)
        this.diags.push(errorDiag(summary, detail(existing, formatRange(existing.declRange)), item.declRange));
      map.set(item.name, item);
    }
  }

  appendFile(f: ConfigFile): void {
    for (const b of f.backends) {
      if (this.backend) {
        this.diags.push(
          errorDiag(
            'Duplicate backend configuration',
            `A module may have only one backend configuration. The backend was previously configured at ${formatRange(this.backend)}.`,
            b,
          ),
        );
        continue;
      }
      this.backend = b;
    }
    for (const c of f.clouds) {
      if (this.cloud) {
        this.diags.push(
          errorDiag(
            'Duplicate cloud configurations',
            `A module may have only one 'cloud' block configuring a cloud backend. A cloud backend was previously configured at ${formatRange(this.cloud)}.`,
            c,
          ),
        );
        continue;
      }
      this.cloud = c;
    }
    if (this.backend && this.cloud) {
      this.diags.push(
        errorDiag(
          'Both a backend and a cloud configuration are present',
          `A module may declare either one 'cloud' block configuring a cloud backend OR one 'backend' block configuring a state backend. A cloud backend is configured at ${formatRange(this.cloud)}; a backend is configured at ${formatRange(this.backend)}. Remove the backend block to configure a cloud backend.`,
          this.backend,
        ),
      );
    }

    for (const pc of f.providerConfigs) {
      const key = providerKey(pc, this.serial++);
      const existing = this.module.providerConfigs.get(key);
      if (existing) {
        this.diags.push(
          errorDiag(
            'Duplicate provider configuration',
            existing.alias === undefined
              ? `A default (non-aliased) provider configuration for ${goQuote(existing.name)} was already given at ${formatRange(existing.declRange)}. If multiple configurations are required, set the "alias" argument for alternative configurations.`
              : `A provider configuration for ${goQuote(existing.name)} with alias ${goQuote(existing.alias)} was already given at ${formatRange(existing.declRange)}. Each configuration for the same provider must have a distinct alias.`,
            pc.declRange,
          ),
        );
        continue;
      }
      this.module.providerConfigs.set(key, pc);
    }

    this.named(
      this.variables,
      f.variables,
      'Duplicate variable declaration',
      (e, at) =>
        `A variable named ${goQuote(e.name)} was already declared at ${at}. Variable names must be unique within a module.`,
    );
    this.named(
      this.locals,
      f.locals,
      'Duplicate local value definition',
      (e, at) =>
        `A local value named ${goQuote(e.name)} was already defined at ${at}. Local value names must be unique within a module.`,
    );
    this.named(
      this.outputs,
      f.outputs,
      'Duplicate output definition',
      (e, at) =>
        `An output named ${goQuote(e.name)} was already defined at ${at}. Output names must be unique within a module.`,
    );

    for (const mc of f.moduleCalls) {
      const existing = this.module.moduleCalls.get(mc.name);
      if (existing) {
        this.diags.push(
          errorDiag(
            'Duplicate module call',
            `A module call named ${goQuote(existing.name)} was already defined at ${formatRange(existing.declRange)}. Module calls must have unique names within a module.`,
            mc.declRange,
          ),
        );
      }
      this.module.moduleCalls.set(mc.name, mc);
    }

    for (const r of f.resources) {
      const key = resourceKey(r);
      const existing = this.module.resources.get(key)?.decl;
      if (existing) {
        const [summary, what] =
          r.mode === 'managed'
            ? [`Duplicate resource ${goQuote(existing.type)} configuration`, 'resource']
            : r.mode === 'data'
              ? [`Duplicate data ${goQuote(existing.type)} configuration`, 'data resource']
              : [`Duplicate ephemeral resource ${goQuote(existing.type)} configuration`, 'ephemeral resource'];
        const suffix = r.inCheck === true ? ', including within check blocks' : '';
        this.diags.push(
          errorDiag(
            summary,
            `A ${existing.type} ${what} named ${goQuote(existing.name)} was already declared at ${formatRange(existing.declRange)}. Resource names must be unique per type in each module${suffix}.`,
            r.declRange,
          ),
        );
        continue;
      }
      const provider = this.resourceProvider(r);
      this.module.resources.set(key, { decl: r, ...(provider ? { provider } : {}) });
    }

    for (const c of f.checks) {
      const existing = this.checks.get(c.name);
      if (existing) {
        this.diags.push(
          errorDiag(
            `Duplicate check ${goQuote(existing.name)} configuration`,
            `A check block named ${goQuote(existing.name)} was already declared at ${formatRange(existing.declRange)}. Check blocks must be unique within each module.`,
            c.declRange,
          ),
        );
        continue;
      }
      this.checks.set(c.name, c);
    }

    for (const i of f.imports) {
      const provider = this.importProvider(i);
      this.module.imports.push({ decl: i, ...(provider ? { provider } : {}) });
    }
  }

  mergeFile(f: ConfigFile): void {
    if (f.backends.length > 1) {
      this.diags.push(
        errorDiag(
          'Duplicate backend configuration',
          `Each override file may have only one backend configuration. A backend was previously configured at ${formatRange(f.backends[0] as Range)}.`,
          f.backends[1] as Range,
        ),
      );
    } else if (f.backends.length === 1) {
      this.cloud = undefined;
      this.backend = f.backends[0];
    }
    if (f.clouds.length > 1) {
      this.diags.push(
        errorDiag(
          'Duplicate cloud configurations',
          `A module may have only one 'cloud' block configuring a cloud backend. A cloud backend was previously configured at ${formatRange(f.clouds[0] as Range)}.`,
          f.clouds[1] as Range,
        ),
      );
    } else if (f.clouds.length === 1) {
      this.backend = undefined;
      this.cloud = f.clouds[0];
    }

    for (const pc of f.providerConfigs) {
      const key = providerKey(pc, this.serial++);
      const existing = this.module.providerConfigs.get(key);
      if (pc.alias === undefined && !pc.aliasSet) {
        // Overriding an absent default configuration is allowed: it is implied, and empty.
        if (existing) this.module.providerConfigs.set(key, mergeProvider(existing, pc));
        else this.module.providerConfigs.set(key, pc);
        continue;
      }
      if (!existing) {
        this.diags.push(
          errorDiag(
            'Missing base provider configuration for override',
            `There is no ${pc.name} provider configuration with the alias ${goQuote(pc.alias ?? '')}. An override file can only override an aliased provider configuration that was already defined in a primary configuration file.`,
            pc.declRange,
          ),
        );
        continue;
      }
      this.module.providerConfigs.set(key, mergeProvider(existing, pc));
    }

    const missing = (
      map: Map<string, NamedDecl>,
      items: readonly NamedDecl[],
      summary: string,
      detail: (name: string) => string,
    ): void => {
      for (const item of items) {
        if (!map.has(item.name)) this.diags.push(errorDiag(summary, detail(goQuote(item.name)), item.declRange));
      }
    };
    missing(
      this.variables,
      f.variables,
      'Missing base variable declaration to override',
      (n) =>
        `There is no variable named ${n}. An override file can only override a variable that was already declared in a primary configuration file.`,
    );
    missing(
      this.locals,
      f.locals,
      'Missing base local value definition to override',
      (n) =>
        `There is no local value named ${n}. An override file can only override a local value that was already defined in a primary configuration file.`,
    );
    missing(
      this.outputs,
      f.outputs,
      'Missing base output definition to override',
      (n) =>
        `There is no output named ${n}. An override file can only override an output that was already defined in a primary configuration file.`,
    );

    for (const mc of f.moduleCalls) {
      const existing = this.module.moduleCalls.get(mc.name);
      if (!existing) {
        this.diags.push(
          errorDiag(
            'Missing module call to override',
            `There is no module call named ${goQuote(mc.name)}. An override file can only override a module call that was defined in a primary configuration file.`,
            mc.declRange,
          ),
        );
        continue;
      }
      this.module.moduleCalls.set(mc.name, mergeModuleCall(existing, mc));
    }

    for (const r of f.resources) {
      if (r.inCheck === true) continue;
      const key = resourceKey(r);
      const existing = this.module.resources.get(key);
      if (!existing) {
        const [summary, what, block] =
          r.mode === 'managed'
            ? ['Missing resource to override', 'resource', 'a resource block']
            : r.mode === 'data'
              ? ['Missing data resource to override', 'data resource', 'a data block']
              : ['Missing ephemeral resource to override', 'ephemeral resource', 'an ephemeral block'];
        this.diags.push(
          errorDiag(
            summary,
            `There is no ${r.type} ${what} named ${goQuote(r.name)}. An override file can only override ${block} defined in a primary configuration file.`,
            r.declRange,
          ),
        );
        continue;
      }
      if (r.providerRef) {
        // module_merge.go: the new reference replaces the old one, and with it the provider.
        const rp = this.module.requiredProviders.get(r.providerRef.name);
        const provider = rp ? rp.provider : this.providerForLocalName(r.providerRef.name);
        this.module.resources.set(key, {
          decl: { ...existing.decl, providerRef: r.providerRef },
          ...(provider ? { provider } : {}),
        });
      }
    }

    for (const m of f.moved) {
      this.diags.push(
        errorDiag(
          "Cannot override 'moved' blocks",
          'Records of moved objects can appear only in normal files, not in override files.',
          m,
        ),
      );
    }
    for (const i of f.imports) {
      this.diags.push(
        errorDiag(
          "Cannot override 'import' blocks",
          'Import blocks can appear only in normal files, not in override files.',
          i.declRange,
        ),
      );
    }
    // OpenTofu refuses removed blocks in override files; Terraform 1.11.4 accepts them (confirmed).
    if (this.flavor === 'tofu') {
      for (const r of f.removed) {
        this.diags.push(
          errorDiag(
            "Cannot override 'Removed' blocks",
            'Removed blocks can appear only in normal files, not in override files.',
            r,
          ),
        );
      }
    }
  }
}

/** `Provider.merge`: a `version` in the override replaces the original; the bodies are merged. */
function mergeProvider(base: ProviderConfigDecl, over: ProviderConfigDecl): ProviderConfigDecl {
  const merged = over.hasConfig && !base.hasConfig ? { ...base, hasConfig: true } : base;
  if (!over.version) return merged;
  return { ...merged, version: over.version };
}

/**
 * `ModuleCall.merge`: `source`, `version`, `count`, `for_each` and a
 * non-empty `providers` map in the override replace the originals.
 */
function mergeModuleCall(base: ModuleCallDecl, over: ModuleCallDecl): ModuleCallDecl {
  let out: ModuleCallDecl = base;
  if (over.sourceSet) {
    const { source: _s, sourceRaw: _r, sourceRange: _g, ...rest } = out;
    out = {
      ...rest,
      sourceSet: true,
      ...(over.source ? { source: over.source } : {}),
      ...(over.sourceRaw !== undefined ? { sourceRaw: over.sourceRaw } : {}),
      ...(over.sourceRange ? { sourceRange: over.sourceRange } : {}),
    };
  }
  if (over.version) out = { ...out, version: over.version };
  if (over.countRange) out = { ...out, countRange: over.countRange };
  if (over.forEachRange) out = { ...out, forEachRange: over.forEachRange };
  if (over.providers.length > 0) out = { ...out, providers: over.providers };
  if (over.invalid === true) out = { ...out, invalid: true };
  return out;
}
