/**
 * Reads `.terraform.lock.hcl` with every rule of the reference's loader
 * (`internal/depsfile/locks_file.go`, docs/reference.md §3.1 items 30–37).
 *
 * Contract: pure over bytes; never throws for bad content. Every problem is a
 * diagnostic with the file, line and column, worded as the reference words it
 * (per flavor where the text names the product). Locks are returned even when
 * there are errors (the valid blocks), but a caller must not act on a file
 * with errors. Hashes keep the file's order and duplicates (docs/reference.md §3.1 item 37).
 */
import {
  DEFAULT_FLAVOR,
  type Flavor,
  flavorInfo,
  parseFlavor,
  goQuote,
  tryParseConstraints,
  tryParseProviderSource,
  tryParseVersion,
  UNSPECIFIED_VERSION,
  type Version,
  VersionConstraints,
  type ProviderAddress,
} from '../addresses/index.js';
import { type Diagnostic, type DiagnosticCode, ErrorCode, ProvkitError, WarningCode, errorText } from '../errors.js';
import { nameSuggestion } from '../go/index.js';
import { parseHash, type Hash } from '../hashing/index.js';
import {
  type Attribute,
  type Block,
  type Expression,
  hasErrors,
  parseHCL,
  type Range,
  rangeString,
  evaluateStatic,
  formatNumber,
  staticList,
  startRange,
} from '../hcl/index.js';
import { Locks, ProviderLock } from './model.js';

export { hasErrors };

/** What {@link parseLockFile} read: the locks it could read, and a diagnostic per problem. */
export interface LockParseResult {
  /** The providers' locks (those whose blocks had errors are left out). */
  readonly locks: Locks;
  /**
   * Errors and warnings, each with the file, line and column, worded as the reference's; any error means the file
   * is not usable as it is. The one {@link Diagnostic} type, coded {@link ErrorCode.INVALID_LOCK_FILE} or
   * {@link WarningCode.LOCK_FILE_WARNING}.
   */
  readonly diagnostics: readonly Diagnostic[];
}

function diag(severity: Diagnostic['severity'], summary: string, detail: string, range: Range): Diagnostic {
  return { severity, summary, detail, range, code: lockCode(severity) };
}

/** The lock file's codes: a problem in `.terraform.lock.hcl`, whether HCL or the lock-file reader found it. */
function lockCode(severity: Diagnostic['severity']): DiagnosticCode {
  return severity === 'error' ? ErrorCode.INVALID_LOCK_FILE : WarningCode.LOCK_FILE_WARNING;
}

/**
 * `gohcl.DecodeExpression(expr, nil, &s)` into a Go `string`, or with
 * `nullable` a `*string` (null is then `null`): the evaluation's own errors
 * ("Variables not allowed", …), then "Unsuitable value type" at the
 * expression's StartRange when the value is unknown (any evaluation error
 * leaves it unknown), null (for a `string`), or not convertible to a string
 * (a tuple or an object). Numbers and bools convert, as cty does.
 */
function decodeString(
  expr: Expression,
  nullable: boolean,
): { value: string | null | undefined; diagnostics: Diagnostic[] } {
  const unsuitable = (why: string): Diagnostic =>
    diag('error', 'Unsuitable value type', `Unsuitable value: ${why}`, startRange(expr));
  const r = evaluateStatic(expr);
  if (r.value === undefined)
    return { value: undefined, diagnostics: [...r.diagnostics, unsuitable('value must be known')] };
  const v = r.value;
  if (v === null)
    return nullable
      ? { value: null, diagnostics: r.diagnostics }
      : { value: undefined, diagnostics: [...r.diagnostics, unsuitable('null value is not allowed')] };
  if (typeof v === 'string') return { value: v, diagnostics: r.diagnostics };
  if (typeof v === 'number') return { value: formatNumber(v), diagnostics: r.diagnostics };
  if (typeof v === 'boolean') return { value: v ? 'true' : 'false', diagnostics: r.diagnostics };
  return { value: undefined, diagnostics: [...r.diagnostics, unsuitable('string required')] };
}

/**
 * Parses `.terraform.lock.hcl` text into locks and diagnostics (never
 * throws for bad text: problems are diagnostics). `filename` names the file
 * in diagnostics (default `.terraform.lock.hcl`); `flavor` gives the default
 * registry host (default tofu, as the CLI's).
 *
 * @throws ProvkitError INVALID_FLAVOR for a `flavor` that is not one (a
 *   JavaScript caller), USAGE when `source` is neither
 *   text nor bytes.
 */
export function parseLockFile(
  source: Uint8Array | string,
  filename = '.terraform.lock.hcl',
  flavor: Flavor = DEFAULT_FLAVOR,
): LockParseResult {
  if (typeof source !== 'string' && !(source instanceof Uint8Array)) {
    throw new ProvkitError(
      ErrorCode.USAGE,
      `parseLockFile: the lock file must be given as a string or bytes, not ${source === null ? 'null' : typeof source}`,
    );
  }
  flavor = parseFlavor(flavor);
  const parsed = parseHCL(source, filename);
  const diagnostics: Diagnostic[] = [...parsed.diagnostics];
  // Decoded even after syntax errors, as the reference decodes the partial
  // body the parser gives (terraform internal/depsfile/locks_file.go
  // loadLocks: decodeLocksFromHCL runs whatever ParseHCL returned), so a
  // provider block cut short also reports "Missing required argument".
  const info = flavorInfo(flavor);

  for (const attr of parsed.body.attributes) {
    diagnostics.push(
      diag(
        'error',
        'Unsupported argument',
        `An argument named ${goQuote(attr.name)} is not expected here.${attributeSuggestion(attr.name, [], TOP_BLOCKS)}`,
        attr.nameRange,
      ),
    );
  }

  const locks: ProviderLock[] = [];
  const declared = new Map<string, Range>();
  let warnedModules = false;
  for (const block of parsed.body.blocks) {
    if (block.type === 'module') {
      if (!labelCountOk(block, diagnostics)) continue;
      if (!warnedModules) {
        warnedModules = true;
        diagnostics.push(
          diag(
            'warning',
            'Dependency locks for modules are not yet supported',
            `${info.productName} only supports dependency locks for providers, not for modules. This configuration may be intended for a later version of ${info.productName} that also supports dependency locks for modules.`,
            block.typeRange,
          ),
        );
      }
      continue;
    }
    if (block.type !== 'provider') {
      diagnostics.push(
        diag(
          'error',
          'Unsupported block type',
          `Blocks of type ${goQuote(block.type)} are not expected here.${blockSuggestion(block.type, TOP_BLOCKS, [])}`,
          block.typeRange,
        ),
      );
      continue;
    }
    if (!labelCountOk(block, diagnostics)) continue;
    const decoded = decodeProviderBlock(block, flavor, diagnostics);
    if (!decoded) continue;
    // As the reference: a block whose address is valid counts for duplicates even when its content has errors.
    const key = decoded.provider.toComparisonString();
    const prior = declared.get(key);
    if (prior) {
      diagnostics.push(
        diag(
          'error',
          'Duplicate provider lock',
          `This lockfile already declared a lock for provider ${decoded.provider.toString()} at ${rangeString(prior)}.`,
          block.typeRange,
        ),
      );
      continue;
    }
    declared.set(key, defRange(block));
    if (decoded.lock) locks.push(decoded.lock);
  }
  return { locks: new Locks(locks), diagnostics: diagnostics.map((d) => ({ ...d, code: lockCode(d.severity) })) };
}

/** The block types of the file (`decodeLocksFromHCL`'s schema). */
const TOP_BLOCKS = ['provider', 'module'] as const;
/** The arguments of a provider block. */
const PROVIDER_ATTRS = ['version', 'constraints', 'hashes'] as const;

/** hclsyntax `Body.Content`'s hint for an unexpected argument: a close unused argument name, else a block type of that name. */
function attributeSuggestion(name: string, unusedAttrs: readonly string[], blockTypes: readonly string[]): string {
  const close = nameSuggestion(name, unusedAttrs);
  if (close !== undefined) return ` Did you mean ${goQuote(close)}?`;
  return blockTypes.includes(name) ? ` Did you mean to define a block of type ${goQuote(name)}?` : '';
}

/** hclsyntax `Body.Content`'s hint for an unexpected block: a close block type, else an argument of that name. */
function blockSuggestion(type: string, blockTypes: readonly string[], attrs: readonly string[]): string {
  const close = nameSuggestion(type, blockTypes);
  if (close !== undefined) return ` Did you mean ${goQuote(close)}?`;
  return attrs.includes(type)
    ? ` Did you mean to define argument ${goQuote(type)}? If so, use the equals sign to assign it a value.`
    : '';
}

/** A block's `DefRange`: from its type to the end of its last label. */
function defRange(block: Block): Range {
  const last = block.labelRanges[block.labelRanges.length - 1];
  return { filename: block.typeRange.filename, start: block.typeRange.start, end: (last ?? block.typeRange).end };
}

function labelCountOk(block: Block, diagnostics: Diagnostic[]): boolean {
  const name = block.type === 'module' ? 'path' : 'source_addr';
  if (block.labels.length === 0) {
    diagnostics.push(
      diag(
        'error',
        `Missing ${name} for ${block.type}`,
        `All ${block.type} blocks must have 1 labels (${name}).`,
        block.openBraceRange,
      ),
    );
    return false;
  }
  if (block.labels.length > 1) {
    diagnostics.push(
      diag(
        'error',
        `Extraneous label for ${block.type}`,
        `Only 1 labels (${name}) are expected for ${block.type} blocks.`,
        block.labelRanges[1]!,
      ),
    );
    return false;
  }
  return true;
}

/**
 * `decodeProviderLockFromHCL`: undefined when the address is not valid;
 * otherwise the address, and the lock when the block's content has no errors.
 */
function decodeProviderBlock(
  block: Block,
  flavor: Flavor,
  diagnostics: Diagnostic[],
): { provider: ProviderAddress; lock: ProviderLock | undefined } | undefined {
  const label = block.labels[0]!;
  const labelRange = block.labelRanges[0]!;
  const info = flavorInfo(flavor);
  const parsed = tryParseProviderSource(label, flavor);
  if (!parsed.ok) {
    diagnostics.push(
      diag(
        'error',
        'Invalid provider source address',
        'The provider source address for a provider lock must be a valid, fully-qualified address of the form "hostname/namespace/type".',
        labelRange,
      ),
    );
    return undefined;
  }
  const addr = parsed.address;
  if (addr.isBuiltIn(flavor)) {
    diagnostics.push(
      diag(
        'error',
        'Invalid provider source address',
        `Cannot lock a version for built-in provider ${addr.toString()}. Built-in providers are bundled inside ${info.productName} itself, so you can't select a version for them independently of the ${info.productName} release you are currently running.`,
        labelRange,
      ),
    );
    return undefined;
  }
  if (addr.isLegacy(flavor)) {
    diagnostics.push(
      diag(
        'error',
        'Invalid provider source address',
        `Provider source address ${addr.toString()} is a special provider that is not eligible for dependency locking.`,
        labelRange,
      ),
    );
    return undefined;
  }
  if (addr.toString() !== label) {
    diagnostics.push(
      diag(
        'error',
        'Non-normalized provider source address',
        `The provider source address for this provider lock must be written as ${goQuote(addr.toString())}, the fully-qualified and normalized form.`,
        labelRange,
      ),
    );
    return undefined;
  }

  // hclsyntax `Body.Content`: the missing required argument first, then what the schema does not know.
  const attrs = new Map<string, Attribute>();
  for (const attr of block.body.attributes) {
    if ((PROVIDER_ATTRS as readonly string[]).includes(attr.name)) attrs.set(attr.name, attr);
  }
  if (!attrs.has('version')) {
    // At the body's `MissingItemRange`: zero width at its opening brace.
    const at = block.body.range.start;
    diagnostics.push(
      diag('error', 'Missing required argument', 'The argument "version" is required, but no definition was found.', {
        filename: block.body.range.filename,
        start: at,
        end: at,
      }),
    );
  }
  const unused = PROVIDER_ATTRS.filter((n) => !attrs.has(n));
  for (const attr of block.body.attributes) {
    if (attrs.get(attr.name) === attr) continue;
    diagnostics.push(
      diag(
        'error',
        'Unsupported argument',
        `An argument named ${goQuote(attr.name)} is not expected here.${attributeSuggestion(attr.name, unused, [])}`,
        attr.nameRange,
      ),
    );
  }
  for (const nested of block.body.blocks) {
    diagnostics.push(
      diag(
        'error',
        'Unsupported block type',
        `Blocks of type ${goQuote(nested.type)} are not expected here.${blockSuggestion(nested.type, [], PROVIDER_ATTRS)}`,
        nested.typeRange,
      ),
    );
  }
  // Unknown arguments and blocks do not stop the lock (the file is in error anyway); the rest does.
  const before = diagnostics.length;
  const versionAttr = attrs.get('version');
  const version = versionAttr ? decodeVersion(addr, versionAttr, diagnostics) : UNSPECIFIED_VERSION;
  const constraintsAttr = attrs.get('constraints');
  const constraints = constraintsAttr
    ? decodeConstraints(addr, constraintsAttr, diagnostics)
    : new VersionConstraints();
  const hashesAttr = attrs.get('hashes');
  const hashes = hashesAttr ? decodeHashes(hashesAttr, diagnostics) : [];
  if (!versionAttr || hasErrors(diagnostics.slice(before))) return { provider: addr, lock: undefined };
  return { provider: addr, lock: new ProviderLock(addr, version, constraints, hashes) };
}

function decodeVersion(addr: ProviderAddress, attr: Attribute, diagnostics: Diagnostic[]): Version {
  const { value, diagnostics: d } = decodeString(attr.expr, true);
  diagnostics.push(...d);
  if (value === undefined) return UNSPECIFIED_VERSION;
  if (value === null) {
    diagnostics.push(
      diag(
        'error',
        'Missing required argument',
        'A provider lock block must contain a "version" argument.',
        attr.expr.range,
      ),
    );
    return UNSPECIFIED_VERSION;
  }
  const parsed = tryParseVersion(value);
  const version = parsed.ok ? parsed.version : UNSPECIFIED_VERSION;
  if (!parsed.ok) {
    diagnostics.push(
      diag(
        'error',
        'Invalid provider version number',
        `The selected version number for provider ${addr.toString()} is invalid: ${parsed.error.message}.`,
        attr.expr.range,
      ),
    );
  }
  // Checked even after a parse error, against 0.0.0, as the reference does (docs/reference.md §3.1 item 34).
  if (version.toString() !== value) {
    diagnostics.push(
      diag(
        'error',
        'Invalid provider version number',
        `The selected version number for provider ${addr.toString()} must be written in normalized form: ${goQuote(version.toString())}.`,
        attr.expr.range,
      ),
    );
  }
  return version;
}

function decodeConstraints(addr: ProviderAddress, attr: Attribute, diagnostics: Diagnostic[]): VersionConstraints {
  const { value, diagnostics: d } = decodeString(attr.expr, false);
  diagnostics.push(...d);
  if (value === undefined || value === null) return new VersionConstraints();
  const parsed = tryParseConstraints(value);
  const constraints = parsed.ok ? parsed.constraints : new VersionConstraints();
  if (!parsed.ok) {
    diagnostics.push(
      diag(
        'error',
        'Invalid provider version constraints',
        `The recorded version constraints for provider ${addr.toString()} are invalid: ${parsed.error.message}.`,
        attr.expr.range,
      ),
    );
  }
  if (constraints.toString() !== value) {
    diagnostics.push(
      diag(
        'error',
        'Invalid provider version constraints',
        `The recorded version constraints for provider ${addr.toString()} must be written in normalized form: ${goQuote(constraints.toString())}.`,
        attr.expr.range,
      ),
    );
  }
  return constraints;
}

function decodeHashes(attr: Attribute, diagnostics: Diagnostic[]): Hash[] {
  const list = staticList(attr.expr);
  diagnostics.push(...list.diagnostics);
  if (!list.items) return [];
  if (list.items.length === 0) {
    diagnostics.push(
      diag(
        'error',
        'Invalid provider hash set',
        'The "hashes" argument must either be omitted or contain at least one hash value.',
        attr.expr.range,
      ),
    );
    return [];
  }
  const out: Hash[] = [];
  for (const item of list.items) {
    const r = decodeString(item, false);
    diagnostics.push(...r.diagnostics);
    if (r.value === undefined || r.value === null) continue;
    try {
      out.push(parseHash(r.value));
    } catch (err) {
      const why = errorText(err);
      // The reference reports the whole list's range (docs/reference.md §3.1 item 36).
      diagnostics.push(
        diag(
          'error',
          'Invalid provider hash string',
          `Cannot interpret ${goQuote(r.value)} as a provider hash: ${why}.`,
          attr.expr.range,
        ),
      );
    }
  }
  return out;
}
