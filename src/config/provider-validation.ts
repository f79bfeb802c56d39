/**
 * The static checks of provider configurations across a module tree, run
 * once the tree is built (`configs.BuildConfig`: `resolveProviderTypes`,
 * then `validateProviderConfigs`; hashicorp/terraform v1.11.4
 * internal/configs/config.go and provider_validation.go, ported as they are,
 * quirks included; opentofu/opentofu internal/configs/provider_validation.go
 * has the same rules in its product's words):
 *
 * - per module: a provider required twice under two local names, or a
 *   provider block or resource that implies a local name the module
 *   requires under another ("Duplicate required provider", warnings), and a
 *   resource type whose implied local name is not a provider name;
 * - per module call's `providers` map: a parent name the calling module
 *   does not declare ("Reference to undefined provider"), a child name the
 *   called module does not declare (a warning for a `hashicorp/` provider,
 *   else an error), a configuration of another provider type ("Provider
 *   type mismatch"), a configuration passed to a module that configures that
 *   provider itself ("Cannot override provider configuration");
 * - per child module: configurations of its own under a call with `count`,
 *   `for_each` or `depends_on`, `configuration_aliases` nobody passes
 *   ("Missing required provider configuration"), and empty "proxy" provider
 *   blocks ("Redundant empty provider block", one warning per provider).
 *
 * The reference walks Go maps, so where it picks "the first" of several
 * (the local name suggested in a mismatch, the source of a redundant block)
 * it may pick another each run; here it is the first in source order, one of
 * the reference's answers. Test files' run blocks are not checked
 * (`validateProviderConfigsForTests`).
 *
 * Pure: no I/O.
 */
import type { Diagnostic } from '../errors.js';
import { defaultRegistryHost, type Flavor, flavorInfo, goQuote, newProviderAddress } from '../addresses/index.js';
import type { ProviderAddress } from '../addresses/index.js';
import { impliedProviderForUnqualifiedType, tryParseProviderPart } from '../addresses/index.js';
import type { Range } from '../hcl/index.js';
import { rangeString } from '../hcl/index.js';
import { errorDiag, warningDiag } from './diagnostics.js';
import type { ModuleCallDecl, PassedProviderConfig, ProviderRef } from './model.js';
import type { Module } from './model.js';
import { impliedProviderLocalName } from './module.js';
import { moduleSourceDisplay } from './module-source.js';

/** A module of the tree, as the loader built it (src/config/load.ts `ModuleNode`). */
export interface ValidatedModule {
  /** The call path from the root (`[]` for the root). */
  readonly path: readonly string[];
  readonly module: Module;
  readonly children: readonly ValidatedModule[];
}

/**
 * The diagnostics of {@link ValidatedModule}'s provider configurations (see
 * the module comment). `resolveTypes` is false when loading the tree had
 * errors: the reference then skips `resolveProviderTypes`, and every
 * passed configuration is taken for its name's default provider.
 */
export function validateProviderConfigs(root: ValidatedModule, flavor: Flavor, resolveTypes: boolean): Diagnostic[] {
  return new Validator(flavor, resolveTypes).module(undefined, root, undefined, undefined);
}

/** `providerName`: `name` or `name.alias`. */
function providerName(ref: { readonly name: string; readonly alias?: string | undefined }): string {
  return ref.alias === undefined ? ref.name : `${ref.name}.${ref.alias}`;
}

class Validator {
  private readonly product: string;

  constructor(
    private readonly flavor: Flavor,
    private readonly resolveTypes: boolean,
  ) {
    this.product = flavorInfo(flavor).productName;
  }

  /** `addrs.NewDefaultProvider(name)`: `hashicorp/NAME` on the flavor's registry. */
  private defaultProvider(name: string): ProviderAddress {
    return newProviderAddress(defaultRegistryHost(this.flavor), 'hashicorp', name);
  }

  /** `addrs.IsDefaultProvider`: a `hashicorp/` provider of the flavor's registry. */
  private isDefault(p: ProviderAddress): boolean {
    return p.hostname === defaultRegistryHost(this.flavor) && p.namespace === 'hashicorp';
  }

  private display(p: ProviderAddress): string {
    return p.forDisplay(this.flavor);
  }

  /** `resolveProviderTypes`: the provider each local name of `module` stands for (required, else configured). */
  private types(module: Module): Map<string, ProviderAddress> {
    const out = new Map<string, ProviderAddress>();
    for (const [name, rp] of module.requiredProviders) out.set(name, rp.provider);
    for (const pc of module.providerConfigs.values()) {
      if (!out.has(pc.name)) out.set(pc.name, this.defaultProvider(pc.name));
    }
    return out;
  }

  /**
   * The type `resolveProviderTypes` gives the child side of a module call's
   * `providers` entry: as the reference, every child of the calling module
   * sets it on every call of its parent where it knows the name, so a
   * sibling's name can decide it; the last child (in name order; the
   * reference's map order varies) wins.
   */
  private childType(ref: ProviderRef, parent: ValidatedModule): ProviderAddress | undefined {
    if (!this.resolveTypes) return undefined;
    let found: ProviderAddress | undefined;
    for (const sibling of parent.children) found = this.types(sibling.module).get(ref.name) ?? found;
    return found;
  }

  /** The type `resolveProviderTypes` gives the parent side of an entry: the calling module's name for it, if it has one. */
  private parentType(ref: ProviderRef, parent: ValidatedModule): ProviderAddress | undefined {
    return this.resolveTypes ? this.types(parent.module).get(ref.name) : undefined;
  }

  module(
    parentCall: ModuleCallDecl | undefined,
    cfg: ValidatedModule,
    parent: ValidatedModule | undefined,
    noProviderConfigRange: Range | undefined,
  ): Diagnostic[] {
    const diags: Diagnostic[] = [];
    const mod = cfg.module;
    for (const child of cfg.children) {
      const mc = mod.moduleCalls.get(child.path[child.path.length - 1] ?? '');
      if (!mc) continue;
      const childRange = mc.countRange ?? mc.forEachRange ?? mc.dependsOnRange ?? noProviderConfigRange;
      diags.push(...this.module(mc, child, cfg, childRange));
    }

    const passedIn = new Map<string, PassedProviderConfig>();
    const emptyConfigs = new Map<string, Range>();
    const configured = new Map<string, Range>();
    const configAliases = new Map<string, ProviderAddress>();
    const localNames = new Map<string, ProviderAddress>();

    for (const pc of mod.providerConfigs.values()) {
      if (pc.aliasSet && pc.alias === undefined) continue;
      const name = providerName(pc);
      if (pc.hasConfig || pc.version !== undefined) configured.set(name, pc.declRange);
      else emptyConfigs.set(name, pc.declRange);
    }

    const localTypes = new Set<string>();
    for (const req of mod.requiredProviders.values()) {
      const type = req.provider.toString();
      if (localTypes.has(type)) {
        let prevDecl = '';
        for (const [localName, t] of localNames) if (t.equals(req.provider)) prevDecl = localName;
        diags.push(
          warningDiag(
            'Duplicate required provider',
            `Provider ${this.display(req.provider)} with the local name ${goQuote(req.name)} was previously required as ${goQuote(prevDecl)}. A provider can only be required once within required_providers.`,
            req.exprRange,
          ),
        );
      } else if (this.isDefault(req.provider)) {
        const implied = req.provider.type;
        for (const pc of mod.providerConfigs.values()) {
          if (pc.name === implied && req.name !== implied) {
            diags.push(
              warningDiag(
                'Duplicate required provider',
                `Provider ${this.display(req.provider)} with the local name ${goQuote(req.name)} was implicitly required via a configuration block as ${goQuote(implied)}. The provider configuration block name must match the name used in required_providers.`,
                req.exprRange,
              ),
            );
            break;
          }
        }
      }
      localTypes.add(type);
      localNames.set(req.name, req.provider);
      for (const alias of req.configurationAliases) configAliases.set(`${req.name}.${alias}`, req.provider);
    }

    // checkImpliedProviderNames, for managed and data resources (a check block's data sources are not the module's).
    for (const mode of ['managed', 'data'] as const) {
      for (const { decl: r } of mod.resources.values()) {
        if (r.mode !== mode || r.inCheck === true || r.providerRef) continue;
        const localName = impliedProviderLocalName(r.type);
        const part = tryParseProviderPart(localName);
        if (!part.ok) {
          diags.push(
            errorDiag(
              'Invalid provider local name',
              `${goQuote(localName)} is an invalid implied provider local name: ${part.error}`,
              r.declRange,
            ),
          );
          continue;
        }
        if (localNames.has(localName)) continue;
        const defAddr = impliedProviderForUnqualifiedType(part.value, this.flavor);
        const addr = `${mode === 'data' ? 'data.' : ''}${r.type}.${r.name}`;
        for (const [prevLocalName, p] of localNames) {
          if (!p.equals(defAddr)) continue;
          diags.push(
            warningDiag(
              'Duplicate required provider',
              `Provider ${goQuote(defAddr.toString())} was implicitly required via resource ${goQuote(addr)}, but listed in required_providers as ${goQuote(prevLocalName)}. Either the local name in required_providers must match the resource name, or the ${goQuote(prevLocalName)} provider must be assigned within the resource block.`,
              r.declRange,
            ),
          );
        }
      }
    }

    for (const passed of parentCall?.providers ?? []) passedIn.set(providerName(passed.inChild), passed);

    const isRoot = cfg.path.length === 0;
    const moduleText = isRoot ? 'the root module' : modulePathText(cfg.path);
    const parentModuleText = cfg.path.length > 1 ? modulePathText(cfg.path.slice(0, -1)) : 'the root module';

    for (const mc of mod.moduleCalls.values()) {
      for (const passed of mc.providers) {
        // Aliased configurations are never inherited: the child's checks cover them.
        if (passed.inParent.alias !== undefined) continue;
        const name = passed.inParent.name;
        const confOK = configured.has(name);
        const localOK = localNames.has(name);
        const passedOK = passedIn.has(name);
        const defAddr = this.defaultProvider(name);
        if (!(confOK || localOK)) {
          diags.push(
            warningDiag(
              'Reference to undefined provider',
              `There is no explicit declaration for local provider name ${goQuote(name)} in ${moduleText}, so ${this.product} is assuming you mean to pass a configuration for provider ${goQuote(this.display(defAddr))}.\n\nTo clarify your intent and silence this warning, add to ${parentModuleText} a required_providers entry named ${goQuote(name)} with source = ${goQuote(this.display(defAddr))}, or a different source address if appropriate.`,
              passed.inParent.nameRange,
            ),
          );
          continue;
        }
        if (!isRoot && parentCall && !(confOK || passedOK)) {
          diags.push(
            warningDiag(
              'Missing required provider configuration',
              `The configuration for ${moduleText} expects to inherit a configuration for provider ${this.display(defAddr)} with local name ${goQuote(name)}, but ${parentModuleText} doesn't pass a configuration under that name.\n\nTo satisfy this requirement, add an entry for ${goQuote(name)} to the "providers" argument in the module ${goQuote(parentCall.name)} block.`,
              parentCall.declRange,
            ),
          );
        }
      }
    }

    if (isRoot || !parentCall || !parent) return diags;

    if (configured.size > 0 && noProviderConfigRange) {
      diags.push(
        errorDiag(
          'Module is incompatible with count, for_each, and depends_on',
          `The module at ${modulePathText(cfg.path)} is a legacy module which contains its own local provider configurations, and so calls to it may not use the count, for_each, or depends_on arguments.\n\nIf you also control the module ${goQuote(parentCall.source ? moduleSourceDisplay(parentCall.source) : (parentCall.sourceRaw ?? ''))}, consider updating this module to instead expect provider configurations to be passed by its caller.`,
          noProviderConfigRange,
        ),
      );
    }

    for (const name of configured.keys()) {
      const passed = passedIn.get(name);
      if (!passed) continue;
      diags.push(
        errorDiag(
          'Cannot override provider configuration',
          `The configuration of ${moduleText} has its own local configuration for ${name}, and so it cannot accept an overridden configuration provided by ${parentModuleText}.`,
          passed.inChild.nameRange,
        ),
      );
    }

    for (const [name, provider] of configAliases) {
      if (configured.has(name) || passedIn.has(name)) continue;
      diags.push(
        errorDiag(
          'Missing required provider configuration',
          `The child module requires an additional configuration for provider ${this.display(provider)}, with the local name ${goQuote(name)}.\n\nRefer to the module's documentation to understand the intended purpose of this additional provider configuration, and then add an entry for ${name} in the "providers" meta-argument in the module block to choose which provider configuration the module should use for that purpose.`,
          parentCall.declRange,
        ),
      );
    }

    for (const [name, passed] of passedIn) {
      let providerAddr = this.childType(passed.inChild, parent) ?? this.defaultProvider(passed.inChild.name);
      const localAddr = localNames.get(name);
      if (localAddr) providerAddr = localAddr;
      const aliasAddr = configAliases.get(name);
      if (aliasAddr) providerAddr = aliasAddr;
      if (!(localAddr || aliasAddr || emptyConfigs.has(name))) {
        diags.push(
          this.isDefault(providerAddr)
            ? warningDiag(
                'Reference to undefined provider',
                `There is no explicit declaration for local provider name ${goQuote(name)} in ${moduleText}, so ${this.product} is assuming you mean to pass a configuration for ${goQuote(this.display(providerAddr))}.\n\nIf you also control the child module, add a required_providers entry named ${goQuote(name)} with the source address ${goQuote(this.display(providerAddr))}.`,
                passed.inChild.nameRange,
              )
            : errorDiag(
                'Reference to undefined provider',
                `The child module does not declare any provider requirement with the local name ${goQuote(name)}.\n\nIf you also control the child module, you can add a required_providers entry named ${goQuote(name)} with the source address ${goQuote(this.display(providerAddr))} to accept this provider configuration.`,
                passed.inChild.nameRange,
              ),
        );
      }

      // No type resolved: the default provider of the name, as an implied configuration.
      const pTy = this.parentType(passed.inParent, parent) ?? this.defaultProvider(passed.inParent.name);
      // As the reference: the parent's requirement is looked up by the child's name.
      const parentAddr = parent.module.requiredProviders.get(name)?.provider ?? pTy;
      if (providerAddr.equals(parentAddr)) continue;
      let otherLocalName: string | undefined;
      for (const [localName, p] of localNames) {
        if (p.equals(parentAddr)) {
          otherLocalName = localName;
          break;
        }
      }
      diags.push(
        otherLocalName !== undefined
          ? errorDiag(
              'Provider type mismatch',
              `The assigned configuration is for provider ${goQuote(this.display(parentAddr))}, but local name ${goQuote(passed.inChild.name)} in ${parentModuleText} represents ${goQuote(this.display(providerAddr))}.\n\nTo pass this configuration to the child module, use the local name ${goQuote(otherLocalName)} instead.`,
              passed.inChild.nameRange,
            )
          : errorDiag(
              'Provider type mismatch',
              `The local name ${goQuote(providerName(passed.inParent))} in ${parentModuleText} represents provider ${goQuote(this.display(parentAddr))}, but ${goQuote(providerName(passed.inChild))} in ${moduleText} represents ${goQuote(this.display(providerAddr))}.\n\nEach provider has its own distinct configuration schema and provider types, so this module's ${goQuote(providerName(passed.inChild))} can be assigned only a configuration for ${this.display(providerAddr)}, which is not required by ${moduleText}.`,
              passed.inParent.nameRange,
            ),
      );
    }

    diags.push(...this.redundantEmptyBlocks(emptyConfigs, localNames, moduleText));
    return diags;
  }

  /** One "Redundant empty provider block" warning per provider local name with empty blocks. */
  private redundantEmptyBlocks(
    emptyConfigs: ReadonlyMap<string, Range>,
    localNames: ReadonlyMap<string, ProviderAddress>,
    moduleText: string,
  ): Diagnostic[] {
    const groups = new Map<string, { names: string[]; ranges: Range[]; aliases: number }>();
    for (const [name, range] of emptyConfigs) {
      const dot = name.indexOf('.');
      const local = dot >= 0 ? name.slice(0, dot) : name;
      const g = groups.get(local) ?? { names: [], ranges: [], aliases: 0 };
      groups.set(local, g);
      if (local !== name) g.aliases++;
      g.names.push(name);
      g.ranges.push(range);
    }
    const out: Diagnostic[] = [];
    for (const [local, g] of groups) {
      // The reference takes the source of whichever block its map yields first: the unaliased block's, if any, here.
      const source = (g.names.includes(local) ? localNames.get(local) : undefined) ?? this.defaultProvider(local);
      let detail = `Earlier versions of ${this.product} used empty provider blocks ("proxy provider configurations") for child modules to declare their need to be passed a provider configuration by their callers. That approach was ambiguous and is now deprecated.\n\nIf you control this module, you can migrate to the new declaration syntax by removing all of the empty provider ${goQuote(local)} blocks and then adding or updating an entry like the following to the required_providers block of ${moduleText}:\n`;
      detail += `    ${local} = {\n      source = ${goQuote(this.display(source))}\n`;
      if (g.aliases > 0) {
        detail += '      configuration_aliases = [\n';
        for (const n of [...g.names].sort()) detail += `        ${n},\n`;
        detail += '      ]\n';
      }
      detail += '    }';
      // The range that sorts first as text (`hcl.Range.String`), as the reference picks it.
      const first = [...g.ranges].sort((a, b) => (rangeString(a) < rangeString(b) ? -1 : 1))[0]!;
      out.push(warningDiag('Redundant empty provider block', detail, first));
    }
    return out;
  }
}

/** `addrs.Module.String`: `module.a.module.b`. */
function modulePathText(path: readonly string[]): string {
  return path.map((p) => `module.${p}`).join('.');
}
