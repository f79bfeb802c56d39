/**
 * Decoding of one configuration file (`internal/configs/parser_config.go`
 * and the block decoders it calls), reduced to what provider requirements
 * need, with the reference's diagnostics:
 *
 * - the top-level schema (unknown blocks and arguments are errors, so every
 *   file of a configuration must be valid at this level, as in the reference);
 * - `terraform { required_providers { … } }`, both the object form and the
 *   legacy string form, with both of the reference's constraint parsers (see
 *   `goversion.ts`);
 * - `provider "x" { version = … }` (deprecated; a warning), `alias`;
 * - `resource` / `data` / `ephemeral` (and `data` inside `check`) with their
 *   `provider` argument, `import` blocks, `module` calls (`source`, `version`);
 * - names of variables, locals, outputs and checks, and the ranges of
 *   `moved` / `removed` / backend blocks, for the module-level checks.
 *
 * The content of other blocks (resource arguments, expressions, lifecycle,
 * validation rules) is not validated: syntax errors in it are reported by the
 * parser, semantic ones are out of scope.
 *
 * Pure: no I/O, never throws.
 */
import type { Diagnostic } from '../errors.js';
import type { Flavor } from '../addresses/index.js';
import {
  flavorInfo,
  goQuote,
  tryParseProviderPart,
  tryParseProviderSource,
  impliedProviderForUnqualifiedType,
} from '../addresses/index.js';
import type { Expression, Range, StaticValue, Traverser } from '../hcl/index.js';
import {
  evaluateStatic,
  exprMap,
  formatNumber,
  isValidIdentifier,
  parseHCL,
  staticList,
  staticMap,
  staticString,
  staticTraversal,
} from '../hcl/index.js';
import type { AttributeView, BlockView, BodySchema, BodyView } from './body.js';
import { jsonBody, nativeBody } from './body.js';
import { between, errorDiag, formatRange, hasErrors, warningDiag } from './diagnostics.js';
import { isGoVersionConstraint } from './goversion.js';
import { parseJSONFile, parseTraversalString } from '../hcl/index.js';
import type { ModuleSource } from './module-source.js';
import { isModuleSourceError, parseModuleSource } from './module-source.js';
import type {
  ConfigFile,
  DeclaredConstraint,
  ImportDecl,
  ModuleCallDecl,
  PassedProviderConfig,
  ProviderConfigDecl,
  ProviderRef,
  RequiredProviderEntry,
  RequiredProvidersBlock,
  ResourceDecl,
} from './model.js';

/** hclsyntax's `badIdentifierDetail`. */
export const BAD_IDENTIFIER_DETAIL =
  'A name must start with a letter or underscore and may contain only letters, digits, underscores, and dashes.';

/** Options of {@link parseConfigFile} and {@link decodeConfigFile}. */
export interface DecodeOptions {
  readonly flavor: Flavor;
  /** An override file (`override.tf`, `*_override.tf`, …): `source` of a module call is then optional. */
  readonly override?: boolean;
}

/** The result of decoding one file. */
export interface FileResult {
  readonly file: ConfigFile;
  readonly diagnostics: Diagnostic[];
}

/** Whether `filename` uses the JSON syntax (`.tf.json`, `.tofu.json`, or any `.json`). */
export function isJSONConfigFilename(filename: string): boolean {
  return filename.endsWith('.json');
}

/**
 * Parses and decodes one configuration file: the JSON syntax when the name
 * ends in `.json`, the native syntax otherwise. When the syntax is invalid
 * the file is still returned, empty or partial, with the errors.
 */
export function parseConfigFile(source: Uint8Array | string, filename: string, options: DecodeOptions): FileResult {
  if (isJSONConfigFilename(filename)) {
    const parsed = parseJSONFile(source, filename);
    if (!parsed.value) return { file: emptyFile(filename, options.override === true), diagnostics: parsed.diagnostics };
    const r = decodeConfigFile(jsonBody(parsed.value), filename, options);
    return { file: r.file, diagnostics: [...parsed.diagnostics, ...r.diagnostics] };
  }
  const parsed = parseHCL(source, filename);
  // Like the reference, decode even a body with syntax errors: it is structurally sound.
  const r = decodeConfigFile(nativeBody(parsed.body), filename, options);
  return { file: r.file, diagnostics: [...parsed.diagnostics, ...r.diagnostics] };
}

function emptyFile(filename: string, override: boolean): ConfigFile {
  return {
    filename,
    override,
    requiredProviders: [],
    providerConfigs: [],
    moduleCalls: [],
    resources: [],
    imports: [],
    variables: [],
    locals: [],
    outputs: [],
    checks: [],
    moved: [],
    removed: [],
    backends: [],
    clouds: [],
  };
}

/** The top-level schema (`configFileSchema`), the same for both flavors. */
const FILE_SCHEMA: BodySchema = {
  attributes: [],
  blocks: [
    { type: 'terraform', labels: [] },
    { type: 'required_providers', labels: [] },
    { type: 'provider', labels: ['name'] },
    { type: 'variable', labels: ['name'] },
    { type: 'locals', labels: [] },
    { type: 'output', labels: ['name'] },
    { type: 'module', labels: ['name'] },
    { type: 'resource', labels: ['type', 'name'] },
    { type: 'data', labels: ['type', 'name'] },
    { type: 'ephemeral', labels: ['type', 'name'] },
    { type: 'moved', labels: [] },
    { type: 'import', labels: [] },
    { type: 'check', labels: ['name'] },
    { type: 'removed', labels: [] },
  ],
};

/**
 * The `terraform` block schema per flavor: Terraform v1.11 refuses
 * `encryption` (confirmed with terraform 1.11.4); OpenTofu has it, and
 * `access_safety`.
 */
function terraformBlockSchema(flavor: Flavor): BodySchema {
  const attributes = [{ name: 'required_version' }, { name: 'experiments' }, { name: 'language' }];
  const blocks = [
    { type: 'backend', labels: ['type'] },
    { type: 'cloud', labels: [] },
    { type: 'required_providers', labels: [] },
    { type: 'provider_meta', labels: ['provider'] },
  ];
  if (flavor === 'tofu') {
    attributes.push({ name: 'access_safety' });
    blocks.push({ type: 'encryption', labels: [] });
  }
  return { attributes, blocks };
}

/**
 * Decodes a file's body (either syntax) into a {@link ConfigFile}. See the
 * module comment for what is checked.
 */
export function decodeConfigFile(body: BodyView, filename: string, options: DecodeOptions): FileResult {
  const d = new Decoder(options.flavor, options.override === true);
  const file = emptyFile(filename, options.override === true);
  const content = body.content(FILE_SCHEMA);
  d.diags.push(...content.diagnostics);
  for (const block of content.blocks) {
    switch (block.type) {
      case 'terraform':
        d.terraformBlock(block, file);
        break;
      case 'required_providers':
        d.diags.push(
          errorDiag(
            'Invalid required_providers block',
            'A "required_providers" block must be nested inside a "terraform" block.',
            block.typeRange,
          ),
        );
        break;
      case 'provider': {
        const p = d.providerBlock(block);
        if (p) file.providerConfigs.push(p);
        break;
      }
      case 'variable':
        file.variables.push({ name: block.labels[0] ?? '', declRange: block.defRange });
        break;
      case 'locals': {
        const attrs = block.body.justAttributes();
        d.diags.push(...attrs.diagnostics);
        for (const a of attrs.attributes) file.locals.push({ name: a.name, declRange: a.range });
        break;
      }
      case 'output':
        file.outputs.push({ name: block.labels[0] ?? '', declRange: block.defRange });
        break;
      case 'module':
        file.moduleCalls.push(d.moduleBlock(block));
        break;
      case 'resource':
      case 'data':
      case 'ephemeral':
        file.resources.push(d.resourceBlock(block, block.type === 'resource' ? 'managed' : block.type));
        break;
      case 'moved':
        file.moved.push(block.defRange);
        break;
      case 'removed':
        file.removed.push(block.defRange);
        break;
      case 'import':
        file.imports.push(d.importBlock(block));
        break;
      case 'check':
        file.checks.push({ name: block.labels[0] ?? '', declRange: block.defRange });
        d.checkBlock(block, file);
        break;
      default:
        break;
    }
  }
  return { file, diagnostics: d.diags };
}

/**
 * `decodeProviderBlock` of a test file's `provider` block (`test-file.ts`);
 * see `Decoder.providerBlock`.
 */
export function decodeTestProviderBlock(
  block: BlockView,
  flavor: Flavor,
): { provider: ProviderConfigDecl | undefined; diagnostics: Diagnostic[] } {
  const d = new Decoder(flavor, false);
  const provider = d.providerBlock(block, true);
  return { provider, diagnostics: d.diags };
}

/** `decodeVersionConstraint` of a `version` argument, as for a module call (`test-file.ts`). */
export function decodeVersionConstraint(
  attr: AttributeView,
  flavor: Flavor,
): { version: DeclaredConstraint | undefined; diagnostics: Diagnostic[] } {
  const d = new Decoder(flavor, false);
  const version = d.versionArgument(attr);
  return { version, diagnostics: d.diags };
}

type StaticOutcome = { ok: true; value: StaticValue } | { ok: false; diagnostics: Diagnostic[] };

function staticValue(expr: Expression): StaticOutcome {
  const r = evaluateStatic(expr);
  if (r.value === undefined || r.diagnostics.length > 0) return { ok: false, diagnostics: r.diagnostics };
  return { ok: true, value: r.value };
}

/** A native-syntax quoted string with no interpolation: its value. */
function nativeQuotedLiteral(expr: Expression): string | undefined {
  if (expr.kind !== 'Template' || expr.form !== 'quoted') return undefined;
  let s = '';
  for (const p of expr.parts) {
    if (p.kind !== 'Literal' || p.valueType !== 'string') return undefined;
    s += p.value;
  }
  return s;
}

class Decoder {
  readonly diags: Diagnostic[] = [];
  private readonly product: string;

  constructor(
    private readonly flavor: Flavor,
    private readonly override: boolean,
  ) {
    this.product = flavorInfo(flavor).productName;
  }

  // --- terraform { … } ------------------------------------------------------

  terraformBlock(block: BlockView, file: ConfigFile): void {
    const content = block.body.content(terraformBlockSchema(this.flavor));
    this.diags.push(...content.diagnostics);
    for (const inner of content.blocks) {
      switch (inner.type) {
        case 'required_providers':
          file.requiredProviders.push(this.requiredProvidersBlock(inner));
          break;
        case 'backend':
          file.backends.push(inner.defRange);
          break;
        case 'cloud':
          file.clouds.push(inner.defRange);
          break;
        default:
          break;
      }
    }
  }

  /**
   * `decodeRequiredProvidersBlock`. One deliberate difference: an entry with
   * an error is left out on its own; the reference leaves out every object
   * entry after the first error of the block (in Go map order, so which ones
   * is random). Either way the configuration is in error.
   */
  requiredProvidersBlock(block: BlockView): RequiredProvidersBlock {
    const entries: RequiredProviderEntry[] = [];
    const attrs = block.body.justAttributes();
    this.diags.push(...attrs.diagnostics);
    for (const attr of attrs.attributes) {
      const entry = this.requiredProvider(attr, block.body.json);
      if (entry) entries.push(entry);
    }
    return { entries, declRange: block.defRange };
  }

  private requiredProvider(attr: AttributeView, json: boolean): RequiredProviderEntry | undefined {
    const name = attr.name;
    const exprRange = attr.expr.range;

    // The legacy form: a single static primitive, the version constraint.
    const whole = staticValue(attr.expr);
    if (
      whole.ok &&
      (typeof whole.value === 'string' || typeof whole.value === 'number' || typeof whole.value === 'boolean')
    ) {
      const version = this.legacyConstraint(whole.value, attr);
      const part = tryParseProviderPart(name);
      if (!part.ok) {
        this.diags.push(errorDiag('Invalid provider name', part.error, exprRange));
        return undefined;
      }
      return {
        name,
        provider: impliedProviderForUnqualifiedType(part.value, this.flavor),
        ...(version ? { version } : {}),
        configurationAliases: [],
        exprRange,
      };
    }

    if (!this.checkNameNormalized(name, exprRange)) return undefined;
    const map = staticMap(attr.expr);
    if (!map.pairs) {
      this.diags.push(
        errorDiag(
          'Invalid required_providers object',
          'required_providers entries must be strings or objects.',
          exprRange,
        ),
      );
      return undefined;
    }
    this.diags.push(...map.diagnostics);
    let failed = hasErrors(map.diagnostics);
    let source: string | undefined;
    let provider: RequiredProviderEntry['provider'] | undefined;
    let version: DeclaredConstraint | undefined;
    const aliases: string[] = [];
    for (const pair of map.pairs) {
      if (pair.key === undefined) continue;
      const valueRange = pair.value.range;
      if (pair.key === 'version') {
        const v = staticValue(pair.value);
        if (!v.ok || typeof v.value !== 'string') {
          this.diags.push(
            errorDiag('Invalid version constraint', 'Version must be specified as a string.', valueRange),
          );
          failed = true;
          continue;
        }
        if (!isGoVersionConstraint(v.value)) {
          this.diags.push(
            errorDiag(
              'Invalid version constraint',
              'This string does not use correct version constraint syntax.',
              valueRange,
            ),
          );
          failed = true;
          continue;
        }
        version = { text: v.value, declRange: attr.range };
      } else if (pair.key === 'source') {
        const v = staticValue(pair.value);
        if (!v.ok || typeof v.value !== 'string') {
          this.diags.push(errorDiag('Invalid source', 'Source must be specified as a string.', valueRange));
          failed = true;
          continue;
        }
        const parsed = tryParseProviderSource(v.value, this.flavor);
        if (!parsed.ok) {
          this.diags.push(
            errorDiag(
              parsed.error.summary ?? 'Invalid provider source string',
              parsed.error.detail ?? parsed.error.message,
              valueRange,
            ),
          );
          failed = true;
          continue;
        }
        source = v.value;
        provider = parsed.address;
      } else if (pair.key === 'configuration_aliases') {
        const list = staticList(pair.value);
        if (!list.items) {
          this.diags.push(...list.diagnostics);
          failed = true;
          continue;
        }
        for (const item of list.items) {
          const trav = this.traversal(item, json);
          if (!trav) {
            failed = true;
            continue;
          }
          const [root, second, ...rest] = trav;
          if (root?.type !== 'root' || (second !== undefined && second.type !== 'attr') || rest.length > 0) {
            this.diags.push(
              errorDiag(
                'Invalid configuration_aliases value',
                'Configuration aliases can only contain references to local provider configuration names in the format of provider.alias',
                valueRange,
              ),
            );
            failed = true;
            continue;
          }
          if (root.name !== name) {
            this.diags.push(
              errorDiag(
                'Invalid configuration_aliases value',
                `Configuration aliases must be prefixed with the provider name. Expected ${goQuote(name)}, but found ${goQuote(root.name)}.`,
                valueRange,
              ),
            );
            failed = true;
            continue;
          }
          if (second?.type === 'attr') aliases.push(second.name);
        }
      } else {
        this.diags.push(
          errorDiag(
            'Invalid required_providers object',
            'required_providers objects can only contain "version", "source" and "configuration_aliases" attributes. To configure a provider, use a "provider" block.',
            pair.keyExpr.range,
          ),
        );
        failed = true;
        break;
      }
    }
    if (failed) return undefined;
    if (!provider) {
      const part = tryParseProviderPart(name);
      if (!part.ok) {
        this.diags.push(errorDiag('Invalid provider name', part.error, exprRange));
        return undefined;
      }
      provider = impliedProviderForUnqualifiedType(part.value, this.flavor);
    }
    return {
      name,
      provider,
      ...(source !== undefined ? { source } : {}),
      ...(version ? { version } : {}),
      configurationAliases: aliases,
      exprRange,
    };
  }

  /** `decodeVersionConstraint` of the legacy string form: the value converted to a string. */
  private legacyConstraint(value: string | number | boolean, attr: AttributeView): DeclaredConstraint | undefined {
    const text =
      typeof value === 'string' ? value : typeof value === 'number' ? formatNumber(value) : value ? 'true' : 'false';
    if (!isGoVersionConstraint(text)) {
      this.diags.push(
        errorDiag(
          'Invalid version constraint',
          'This string does not use correct version constraint syntax.',
          attr.expr.range,
        ),
      );
      return undefined;
    }
    return { text, declRange: attr.range };
  }

  /**
   * `decodeVersionConstraint` of a `version` argument (provider and module
   * blocks). With `staticEval`, an expression that is not a constant is left
   * alone: OpenTofu evaluates a module's `version` with variables and locals.
   */
  versionArgument(attr: AttributeView, staticEval = false): DeclaredConstraint | undefined {
    const r = evaluateStatic(attr.expr);
    if (r.value === undefined) {
      if (!staticEval) this.diags.push(...r.diagnostics);
      return undefined;
    }
    const v = r.value;
    if (v === null) return undefined; // a null constraint is an empty set
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') {
      this.diags.push(
        errorDiag('Invalid version constraint', `A string value is required for ${attr.name}.`, attr.expr.range),
      );
      return undefined;
    }
    const text = typeof v === 'string' ? v : typeof v === 'number' ? formatNumber(v) : v ? 'true' : 'false';
    if (!isGoVersionConstraint(text)) {
      this.diags.push(
        errorDiag(
          'Invalid version constraint',
          'This string does not use correct version constraint syntax.',
          attr.expr.range,
        ),
      );
      return undefined;
    }
    return { text, declRange: attr.range };
  }

  /** `checkProviderNameNormalized`. */
  private checkNameNormalized(name: string, range: Range): boolean {
    const part = tryParseProviderPart(name);
    if (!part.ok) {
      this.diags.push(
        errorDiag('Invalid provider local name', `${name} is an invalid provider local name: ${part.error}`, range),
      );
      return false;
    }
    if (part.value !== name) {
      this.diags.push(
        errorDiag(
          'Invalid provider local name',
          `Provider names must be normalized. Replace ${goQuote(name)} with ${goQuote(part.value)} to fix this error.`,
          range,
        ),
      );
      return false;
    }
    return true;
  }

  /**
   * The traversal an expression stands for (`hcl.AbsTraversalForExpr`); in
   * the JSON syntax a string is parsed as one.
   */
  private traversal(expr: Expression, json: boolean): Traverser[] | undefined {
    const literal = nativeQuotedLiteral(expr);
    if (literal !== undefined && json) {
      const t = parseTraversalString(literal, expr.range);
      if (t) return t;
    }
    const t = staticTraversal(expr);
    if (!t.traversal) {
      this.diags.push(...t.diagnostics);
      return undefined;
    }
    return t.traversal;
  }

  // --- provider "x" { … } ---------------------------------------------------

  /**
   * `decodeProviderBlock`. In a test file (`testFile`) Terraform refuses a
   * `version` argument ("Version constraints are not allowed in test files");
   * OpenTofu treats it as in a module (deprecated, a warning).
   */
  providerBlock(block: BlockView, testFile = false): ProviderConfigDecl | undefined {
    // OpenTofu 1.9 gave provider blocks for_each; Terraform still reserves it.
    const reserved = ['count', 'depends_on', 'for_each', 'source'].filter(
      (n) => n !== 'for_each' || this.flavor === 'terraform',
    );
    const schema = {
      attributes: [
        { name: 'alias' },
        { name: 'version' },
        { name: 'count' },
        { name: 'depends_on' },
        { name: 'for_each' },
        { name: 'source' },
      ],
      blocks: [
        { type: '_', labels: [] },
        { type: 'lifecycle', labels: [] },
        { type: 'locals', labels: [] },
      ],
    };
    const content = block.body.partialContent(schema);
    this.diags.push(...content.diagnostics);
    // The remaining body is not empty (`pc.Config.Content(&hcl.BodySchema{})` fails): a real configuration.
    const hasConfig = block.body.content(schema).diagnostics.length > content.diagnostics.length;
    const name = block.labels[0] ?? '';
    if (!this.checkNameNormalized(name, block.defRange)) return undefined;

    let alias: string | undefined;
    let aliasSet = false;
    const aliasAttr = content.attributes.get('alias');
    if (aliasAttr) {
      aliasSet = true;
      const r = staticString(aliasAttr.expr);
      if (r.value !== undefined) {
        alias = r.value;
      } else if (this.flavor === 'terraform') {
        // OpenTofu evaluates the alias with variables and locals; Terraform does not.
        this.diags.push(...r.diagnostics);
      }
      if ((r.value !== undefined || this.flavor === 'terraform') && !isValidIdentifier(alias ?? '')) {
        this.diags.push(
          errorDiag(
            'Invalid provider configuration alias',
            `An alias must be a valid name. ${BAD_IDENTIFIER_DETAIL}`,
            aliasAttr.expr.range,
          ),
        );
      }
    }

    let version: DeclaredConstraint | undefined;
    const versionAttr = content.attributes.get('version');
    if (versionAttr && testFile && this.flavor === 'terraform') {
      this.diags.push(
        errorDiag(
          'Version constraints are not allowed in test files',
          'Version constraints inside provider configuration blocks are not allowed in test files. To silence this error, move the provider version constraint into the required_providers block of the configuration that uses this provider.',
          versionAttr.expr.range,
        ),
      );
    } else if (versionAttr) {
      this.diags.push(
        warningDiag(
          'Version constraints inside provider configuration blocks are deprecated',
          `${this.product} 0.13 and earlier allowed provider version constraints inside the provider configuration block, but that is now deprecated and will be removed in a future version of ${this.product}. To silence this warning, move the provider version constraint into the required_providers block.`,
          versionAttr.expr.range,
        ),
      );
      version = this.versionArgument(versionAttr);
    }

    for (const r of reserved) {
      const a = content.attributes.get(r);
      if (a) {
        this.diags.push(
          errorDiag(
            'Reserved argument name in provider block',
            `The provider argument name ${goQuote(r)} is reserved for use by ${this.product} in a future version.`,
            a.nameRange,
          ),
        );
      }
    }
    for (const b of content.blocks) {
      if (b.type === '_') continue;
      this.diags.push(
        errorDiag(
          'Reserved block type name in provider block',
          `The block type name ${goQuote(b.type)} is reserved for use by ${this.product} in a future version.`,
          b.typeRange,
        ),
      );
    }
    return {
      name,
      ...(alias !== undefined ? { alias } : {}),
      aliasSet,
      ...(version ? { version } : {}),
      hasConfig,
      declRange: block.defRange,
    };
  }

  // --- module "x" { … } -----------------------------------------------------

  moduleBlock(block: BlockView): ModuleCallDecl {
    const name = block.labels[0] ?? '';
    const content = block.body.partialContent({
      attributes: [
        { name: 'source', required: !this.override },
        { name: 'version' },
        { name: 'count' },
        { name: 'for_each' },
        { name: 'depends_on' },
        { name: 'providers' },
      ],
      blocks: [
        { type: '_', labels: [] },
        { type: 'lifecycle', labels: [] },
        { type: 'locals', labels: [] },
        { type: 'provider', labels: ['type'] },
      ],
    });
    this.diags.push(...content.diagnostics);
    if (!isValidIdentifier(name)) {
      this.diags.push(
        errorDiag('Invalid module instance name', BAD_IDENTIFIER_DETAIL, block.labelRanges[0] ?? block.defRange),
      );
    }

    const errorsBefore = this.diags.length;
    const versionAttr = content.attributes.get('version');
    const version = versionAttr ? this.versionArgument(versionAttr, this.flavor === 'tofu') : undefined;
    let invalid = this.diags.length > errorsBefore;

    const sourceAttr = content.attributes.get('source');
    let source: ModuleSource | undefined;
    let sourceRaw: string | undefined;
    if (sourceAttr) {
      const r = staticString(sourceAttr.expr);
      if (r.value === undefined) {
        // OpenTofu resolves variables and locals here (static evaluation);
        // this loader does not, and then relies on the module manifest.
        if (this.flavor === 'terraform') {
          this.diags.push(...r.diagnostics);
          invalid = true;
        }
      } else {
        sourceRaw = r.value;
        const parsed = parseModuleSource(r.value, this.flavor, versionAttr !== undefined);
        if (isModuleSourceError(parsed)) {
          invalid = true;
          if (parsed.reason === 'maybeRelative') {
            this.diags.push(
              errorDiag(
                'Invalid module source address',
                `${this.product} failed to determine your intended installation method for remote module package ${goQuote(parsed.message)}.\n\nIf you intended this as a path relative to the current module, use "./${parsed.message}" instead. The "./" prefix indicates that the address is a relative filesystem path.`,
                sourceAttr.expr.range,
              ),
            );
          } else {
            this.diags.push(
              errorDiag(
                'Invalid registry module source address',
                `Failed to parse module registry address: ${parsed.message}.\n\n${this.product} assumed that you intended a module registry source address because you also set the argument "version", which applies only to registry modules.`,
                sourceAttr.expr.range,
              ),
            );
          }
        } else {
          source = parsed;
        }
      }
    }

    const providers = this.passedProviders(content.attributes.get('providers'), block.body.json);
    const countAttr = content.attributes.get('count');
    const forEachAttr = content.attributes.get('for_each');
    const dependsOn = content.attributes.get('depends_on');
    const dependsOnRange = dependsOn ? firstListItemRange(dependsOn.expr) : undefined;

    for (const b of content.blocks) {
      if (b.type === '_') continue;
      this.diags.push(
        errorDiag(
          'Reserved block type name in module block',
          `The block type name ${goQuote(b.type)} is reserved for use by ${this.product} in a future version.`,
          b.typeRange,
        ),
      );
    }
    return {
      name,
      ...(source ? { source } : {}),
      ...(sourceRaw !== undefined ? { sourceRaw } : {}),
      sourceSet: sourceAttr !== undefined,
      ...(sourceAttr ? { sourceRange: sourceAttr.expr.range } : {}),
      ...(version ? { version } : {}),
      ...(invalid ? { invalid } : {}),
      providers,
      ...(countAttr ? { countRange: countAttr.expr.range } : {}),
      ...(forEachAttr ? { forEachRange: forEachAttr.expr.range } : {}),
      ...(dependsOnRange ? { dependsOnRange } : {}),
      declRange: block.defRange,
    };
  }

  /**
   * A module call's `providers` map (`decodeModuleBlock`): `hcl.ExprMap`,
   * each key and value through `decodeProviderConfigRef`, each child name
   * assigned once ("Duplicate provider address"). OpenTofu also takes a
   * keyed value (`aws.by_region[each.key]`, its provider `for_each`): the
   * key is left out here, it names no other provider.
   */
  private passedProviders(attr: AttributeView | undefined, json: boolean): PassedProviderConfig[] {
    if (!attr) return [];
    const map = exprMap(attr.expr);
    this.diags.push(...map.diagnostics);
    const out: PassedProviderConfig[] = [];
    const seen = new Map<string, Range>();
    for (const pair of map.pairs ?? []) {
      const inChild = this.providerConfigRef(pair.keyExpr.wrapped, 'providers', json);
      const inParent = this.providerConfigRef(this.withoutInstanceKey(pair.value), 'providers', json);
      if (!inChild || !inParent) continue;
      const key = inChild.alias === undefined ? inChild.name : `${inChild.name}.${inChild.alias}`;
      const prev = seen.get(key);
      if (prev) {
        this.diags.push(
          errorDiag(
            'Duplicate provider address',
            `A provider configuration was already passed to ${key} at ${formatRange(prev)}. Each child provider configuration can be assigned only once.`,
            pair.value.range,
          ),
        );
        continue;
      }
      seen.set(key, between(pair.keyExpr.range, pair.value.range));
      out.push({ inChild, inParent });
    }
    return out;
  }

  /** OpenTofu's `aws.alias[KEY]` in a `providers` map as `aws.alias`; anything else as it is. */
  private withoutInstanceKey(expr: Expression): Expression {
    if (this.flavor !== 'tofu') return expr;
    if (expr.kind === 'Index' && expr.collection.kind === 'ScopeTraversal') return expr.collection;
    if (expr.kind === 'ScopeTraversal' && expr.traversal.length === 3 && expr.traversal[2]?.type === 'index') {
      return { ...expr, traversal: expr.traversal.slice(0, 2) };
    }
    return expr;
  }

  // --- resource / data / ephemeral / check / import -----------------------------

  resourceBlock(block: BlockView, mode: ResourceDecl['mode']): ResourceDecl {
    const content = block.body.partialContent({ attributes: [{ name: 'provider' }], blocks: [] });
    this.diags.push(...content.diagnostics);
    const providerAttr = content.attributes.get('provider');
    const providerRef = providerAttr
      ? this.providerConfigRef(providerAttr.expr, 'provider', block.body.json)
      : undefined;
    return {
      mode,
      type: block.labels[0] ?? '',
      name: block.labels[1] ?? '',
      ...(providerRef ? { providerRef } : {}),
      declRange: block.defRange,
    };
  }

  checkBlock(block: BlockView, file: ConfigFile): void {
    const content = block.body.partialContent({ attributes: [], blocks: [{ type: 'data', labels: ['type', 'name'] }] });
    this.diags.push(...content.diagnostics);
    for (const b of content.blocks) file.resources.push({ ...this.resourceBlock(b, 'data'), inCheck: true });
  }

  importBlock(block: BlockView): ImportDecl {
    const content = block.body.partialContent({ attributes: [{ name: 'to' }, { name: 'provider' }], blocks: [] });
    this.diags.push(...content.diagnostics);
    const providerAttr = content.attributes.get('provider');
    const providerRef = providerAttr
      ? this.providerConfigRef(providerAttr.expr, 'provider', block.body.json)
      : undefined;
    const toAttr = content.attributes.get('to');
    const resourceType = toAttr ? importTargetType(toAttr.expr, block.body.json) : undefined;
    return {
      ...(resourceType !== undefined ? { resourceType } : {}),
      ...(providerRef ? { providerRef } : {}),
      declRange: block.defRange,
    };
  }

  /** `decodeProviderConfigRef`, with the quoted-reference shim (`shimTraversalInString`). */
  private providerConfigRef(expr: Expression, argName: string, json: boolean): ProviderRef | undefined {
    let traversal: Traverser[] | undefined;
    const quoted = nativeQuotedLiteral(expr);
    if (quoted !== undefined) {
      traversal = parseTraversalString(quoted, expr.range);
      if (traversal && !json) {
        // Read from OpenTofu's compat_shim.go, whose wording once said "OpenTF"; Terraform's confirmed.
        this.diags.push(
          warningDiag(
            'Quoted references are deprecated',
            `In this context, references are expected literally rather than in quotes. ${this.product} 0.11 and earlier required quotes, but quoted references are now deprecated and will be removed in a future version of ${this.product}. Remove the quotes surrounding this reference to silence this warning.`,
            expr.range,
          ),
        );
      }
    } else {
      traversal = staticTraversal(expr).traversal;
    }
    if (!traversal || traversal.length < 1 || traversal.length > 2) {
      this.diags.push(
        errorDiag(
          'Invalid provider configuration reference',
          quoted !== undefined && !traversal && !json
            ? 'A provider configuration reference must not be given in quotes.'
            : `The ${argName} argument requires a provider type name, optionally followed by a period and then a configuration alias.`,
          expr.range,
        ),
      );
      return undefined;
    }
    const [root, aliasStep] = traversal;
    if (root?.type !== 'root') return undefined;
    if (!this.checkNameNormalized(root.name, root.range)) return undefined;
    if (aliasStep === undefined) return { name: root.name, range: expr.range, nameRange: root.range };
    if (aliasStep.type !== 'attr') {
      this.diags.push(
        errorDiag(
          'Invalid provider configuration reference',
          'Provider name must either stand alone or be followed by a period and then a configuration alias.',
          aliasStep.range,
        ),
      );
      return { name: root.name, range: expr.range, nameRange: root.range };
    }
    return { name: root.name, alias: aliasStep.name, range: expr.range, nameRange: root.range };
  }
}

/**
 * The resource type an import's `to` names: `aws_instance.x`,
 * `module.m.aws_instance.x["k"]` (module steps skipped), with any index,
 * static or not. `undefined` when it is not such a reference.
 */
function importTargetType(expr: Expression, json: boolean): string | undefined {
  let e = expr;
  while (e.kind === 'Index' || e.kind === 'Parentheses') e = e.kind === 'Index' ? e.collection : e.expression;
  let steps: Traverser[] | undefined;
  const quoted = nativeQuotedLiteral(e);
  if (json && quoted !== undefined) steps = parseTraversalString(quoted, e.range);
  else if (e.kind === 'ScopeTraversal') steps = e.traversal;
  if (!steps) return undefined;
  const names = steps.flatMap((s) => (s.type === 'index' ? [] : [s.name]));
  let i = 0;
  while (names[i] === 'module' && names.length - i > 2) i += 2;
  const type = names[i];
  if (type === undefined || type === 'data') return undefined;
  return type;
}

/**
 * The range of the first reference of a `depends_on` list (`mc.DependsOn[0].SourceRange()`),
 * or `undefined` when the list is empty or not a static list.
 */
function firstListItemRange(expr: Expression): Range | undefined {
  return staticList(expr).items?.[0]?.range;
}
