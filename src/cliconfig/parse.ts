/**
 * Reading one CLI configuration file (`.terraformrc`, `.tofurc`, `*.tfrc`,
 * `*.tfrc.json`; `cliconfig.go` `loadConfigFile`,
 * `provider_installation.go` `decodeProviderInstallationFromConfig`).
 *
 * The reference reads these with HCL 1, which differs from the configuration
 * language: values are literals only, a string's `${…}` is kept as written
 * (so `plugin_cache_dir = "${HOME}/x"` works with the later environment
 * expansion), attribute names may be quoted (`dev_overrides`), and unknown
 * settings are ignored silently. A file whose first non-blank character is
 * `{` is JSON (HCL 1 decides by content, not by name). This reader uses the
 * HCL 2 native parser in its HCL 1 mode and the JSON reader of `src/config`,
 * so syntax errors are worded as HCL 2's, with file, line and column.
 *
 * Recognised: `plugin_cache_dir`, `plugin_cache_may_break_dependency_lock_file`,
 * `host`, `credentials`, `credentials_helper`, `provider_installation`.
 * Accepted and ignored: everything else (`disable_checkpoint`,
 * `disable_checkpoint_signature`, `providers`, `provisioners`,
 * `registry_protocols`, OpenTofu's OCI settings, …).
 *
 * Pure: no I/O.
 */
import type { Flavor } from '../addresses/index.js';
import { flavorInfo, goQuote, tryParseProviderSource } from '../addresses/index.js';
import { goPathClean } from '../fs/paths.js';
import { parseJSON } from '../hcl/index.js';
import type { JsonValue } from '../hcl/index.js';

import type { Body, Expression, Range, SourceText } from '../hcl/index.js';
import { parseHCL, sourceText } from '../hcl/index.js';
import type { CliConfigDiagnostic, DevOverride, PlainValue } from './model.js';

/** An installation method as written, patterns not yet parsed. */
export interface RawMethod {
  readonly kind: 'direct' | 'filesystem_mirror' | 'network_mirror';
  readonly include: readonly string[];
  readonly exclude: readonly string[];
  readonly path?: string;
  readonly url?: string;
  readonly downloadRetryCount?: number;
  readonly trustAllHashes?: boolean;
  readonly range?: Range;
}

/** A `provider_installation` block as written. */
export interface RawProviderInstallation {
  readonly methods: RawMethod[];
  readonly devOverrides: DevOverride[];
  readonly range?: Range;
}

/** The settings of one CLI configuration file. */
export interface CliConfigFile {
  readonly filename: string;
  /** `plugin_cache_dir` as written (environment variables not yet expanded). */
  readonly pluginCacheDir?: string;
  readonly pluginCacheMayBreakDependencyLockFile: boolean;
  readonly hosts: { name: string; services: Record<string, PlainValue>; range?: Range }[];
  readonly credentials: { name: string; attributes: Record<string, PlainValue>; range?: Range }[];
  readonly credentialsHelpers: { type: string; args: string[]; range?: Range }[];
  readonly providerInstallations: RawProviderInstallation[];
}

/** The result of {@link parseCliConfigFile}. */
export interface CliConfigFileResult {
  readonly file: CliConfigFile;
  readonly diagnostics: CliConfigDiagnostic[];
}

type PlainObject = { [key: string]: PlainValue };

function isPlainObject(v: PlainValue | undefined): v is PlainObject {
  return v !== null && v !== undefined && typeof v === 'object' && !Array.isArray(v);
}

function err(summary: string, detail: string, range?: Range): CliConfigDiagnostic {
  return { severity: 'error', summary, detail, ...(range ? { range } : {}) };
}

/** HCL 1's `token.Pos.String()` of a position: `line:column`. */
function pos(r: Range): string {
  return `${r.start.line}:${r.start.column}`;
}

/** Whether HCL 1 would read `bytes` as JSON: the first non-blank byte is `{`. */
export function looksLikeJSON(bytes: Uint8Array): boolean {
  for (const b of bytes) {
    if (b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d) continue;
    if (b === 0xef || b === 0xbb || b === 0xbf) continue; // byte order mark
    return b === 0x7b;
  }
  return false;
}

/** Parses one CLI configuration file. Never throws; problems are diagnostics. */
export function parseCliConfigFile(source: Uint8Array | string, filename: string, flavor: Flavor): CliConfigFileResult {
  const bytes = typeof source === 'string' ? new TextEncoder().encode(source) : source;
  const r = new FileReader(filename, flavor);
  if (looksLikeJSON(bytes)) r.readJSON(bytes);
  else r.readNative(bytes);
  return { file: r.file, diagnostics: r.diags };
}

// ---------------------------------------------------------------------------

/** HCL escapes of a quoted string's raw text (`${…}` is left as written). */
function unescapeHCL1(raw: string): string {
  return raw.replace(/\\(?:u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})|(.))/gs, (m, u4: string | undefined, u8: string | undefined, c: string | undefined) => {
    if (u4 !== undefined) return String.fromCodePoint(parseInt(u4, 16));
    if (u8 !== undefined) return String.fromCodePoint(parseInt(u8, 16));
    switch (c) {
      case 'n':
        return '\n';
      case 'r':
        return '\r';
      case 't':
        return '\t';
      case '"':
        return '"';
      case '\\':
        return '\\';
      default:
        return m;
    }
  });
}

/** A plain value from a native-syntax expression, with HCL 1's meaning; `undefined` (and an error) otherwise. */
function plainFromExpr(expr: Expression, source: SourceText, diags: CliConfigDiagnostic[]): PlainValue | undefined {
  switch (expr.kind) {
    case 'Literal':
      return expr.value;
    case 'Template':
    case 'TemplateWrap': {
      if (expr.kind === 'Template' && expr.parts.every((p) => p.kind === 'Literal' && p.valueType === 'string')) {
        return expr.parts.map((p) => (p.kind === 'Literal' ? String(p.value) : '')).join('');
      }
      // An interpolation: HCL 1 keeps the text as written.
      const text = sourceText(source, expr.range);
      if (expr.form === 'quoted' && text.startsWith('"') && text.endsWith('"')) return unescapeHCL1(text.slice(1, -1));
      const lines = text.split('\n');
      return `${lines.slice(1, -1).join('\n')}\n`;
    }
    case 'Parentheses':
      return plainFromExpr(expr.expression, source, diags);
    case 'UnaryOp':
      if (expr.op === '-' && expr.operand.kind === 'Literal' && expr.operand.valueType === 'number') return -expr.operand.value;
      break;
    case 'TupleCons': {
      const out: PlainValue[] = [];
      for (const item of expr.items) {
        const v = plainFromExpr(item, source, diags);
        if (v === undefined) return undefined;
        out.push(v);
      }
      return out;
    }
    case 'ObjectCons': {
      const out: PlainObject = Object.create(null) as PlainObject;
      for (const { key, value } of expr.items) {
        const w = key.wrapped;
        let k: string | undefined;
        if (w.kind === 'ScopeTraversal' && w.traversal.length === 1 && w.traversal[0]?.type === 'root') k = w.traversal[0].name;
        else {
          const kv = plainFromExpr(w, source, diags);
          if (typeof kv === 'string' || typeof kv === 'number' || typeof kv === 'boolean') k = String(kv);
        }
        if (k === undefined) {
          diags.push(err('Invalid object key', 'An object key must be a name or a literal string.', key.range));
          return undefined;
        }
        const v = plainFromExpr(value, source, diags);
        if (v === undefined) return undefined;
        out[k] = v;
      }
      return out;
    }
    default:
      break;
  }
  diags.push(
    err(
      'Unsupported expression',
      'The CLI configuration accepts only literal values here: strings, numbers, booleans, lists and objects.',
      expr.range,
    ),
  );
  return undefined;
}

/** A native-syntax body as a plain object: attributes, and nested blocks as nested objects keyed by type and labels. */
function plainFromBody(body: Body, source: SourceText, diags: CliConfigDiagnostic[]): PlainObject {
  const out: PlainObject = Object.create(null) as PlainObject;
  for (const a of body.attributes) {
    const v = plainFromExpr(a.expr, source, diags);
    if (v !== undefined) out[a.name] = v;
  }
  for (const b of body.blocks) {
    const path = [b.type, ...b.labels];
    let target = out;
    for (const key of path.slice(0, -1)) {
      const next = target[key];
      if (isPlainObject(next)) target = next;
      else {
        const created: PlainObject = Object.create(null) as PlainObject;
        target[key] = created;
        target = created;
      }
    }
    const last = path[path.length - 1] ?? b.type;
    const inner = plainFromBody(b.body, source, diags);
    const existing = target[last];
    target[last] = isPlainObject(existing) ? Object.assign(existing, inner) : inner;
  }
  return out;
}

function plainFromJSON(v: JsonValue): PlainValue {
  switch (v.kind) {
    case 'object': {
      const out: PlainObject = Object.create(null) as PlainObject;
      for (const p of v.props) out[p.name] = plainFromJSON(p.value);
      return out;
    }
    case 'array':
      return v.items.map(plainFromJSON);
    case 'string':
      return v.value;
    case 'number':
      return v.value;
    case 'bool':
      return v.value;
    case 'null':
      return null;
  }
}

function stringList(v: PlainValue | undefined): string[] | undefined {
  if (v === undefined || v === null) return [];
  if (typeof v === 'string') return [v];
  if (!Array.isArray(v)) return undefined;
  const out: string[] = [];
  for (const item of v) {
    if (typeof item === 'string') out.push(item);
    else if (typeof item === 'number' || typeof item === 'boolean') out.push(String(item));
    else return undefined;
  }
  return out;
}

function optionalString(v: PlainValue | undefined): string | undefined | false {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return false;
}

function optionalInt(v: PlainValue | undefined): number | undefined | false {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  if (typeof v === 'string' && /^[+-]?[0-9]+$/.test(v)) return Number(v);
  return false;
}

function optionalBool(v: PlainValue | undefined): boolean | undefined | 'invalid' {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'boolean') return v;
  if (v === 'true' || v === 'false') return v === 'true';
  return 'invalid';
}

/** One method block, whichever syntax it came from. */
interface MethodItem {
  readonly type: string;
  readonly body: PlainObject;
  /** Where the method block starts (the reference's `methodBlock.Pos()`). */
  readonly range: Range;
}

class FileReader {
  readonly diags: CliConfigDiagnostic[] = [];
  readonly file: {
    filename: string;
    pluginCacheDir?: string;
    pluginCacheMayBreakDependencyLockFile: boolean;
    hosts: CliConfigFile['hosts'];
    credentials: CliConfigFile['credentials'];
    credentialsHelpers: CliConfigFile['credentialsHelpers'];
    providerInstallations: RawProviderInstallation[];
  };

  constructor(
    filename: string,
    private readonly flavor: Flavor,
  ) {
    this.file = { filename, pluginCacheMayBreakDependencyLockFile: false, hosts: [], credentials: [], credentialsHelpers: [], providerInstallations: [] };
  }

  // --- settings shared by both syntaxes -------------------------------------------

  private setting(name: string, value: PlainValue, range: Range): void {
    if (name === 'plugin_cache_dir') {
      const s = optionalString(value);
      if (s === false) this.diags.push(err('Invalid plugin_cache_dir', 'The plugin_cache_dir setting must be a string.', range));
      else if (s !== undefined) this.file.pluginCacheDir = s;
    } else if (name === 'plugin_cache_may_break_dependency_lock_file') {
      const b = optionalBool(value);
      if (b === 'invalid') {
        this.diags.push(
          err('Invalid plugin_cache_may_break_dependency_lock_file', 'The plugin_cache_may_break_dependency_lock_file setting must be a boolean.', range),
        );
      } else if (b === true) this.file.pluginCacheMayBreakDependencyLockFile = true;
    }
  }

  private host(name: string, body: PlainValue, range: Range): void {
    if (!isPlainObject(body)) {
      this.diags.push(err('Invalid host block', `The host ${goQuote(name)} block must contain settings, such as services.`, range));
      return;
    }
    const services = body.services;
    if (services !== undefined && !isPlainObject(services)) {
      this.diags.push(err('Invalid host block', `The services of the host ${goQuote(name)} block must be an object.`, range));
      return;
    }
    this.file.hosts.push({ name, services: services ?? (Object.create(null) as PlainObject), range });
  }

  private credentials(name: string, body: PlainValue, range: Range): void {
    if (!isPlainObject(body)) {
      this.diags.push(err('Invalid credentials block', `The credentials ${goQuote(name)} block must contain settings, such as token.`, range));
      return;
    }
    this.file.credentials.push({ name, attributes: body, range });
  }

  private credentialsHelper(type: string, body: PlainValue, range: Range): void {
    const args = isPlainObject(body) ? stringList(body.args) : undefined;
    if (!args) {
      this.diags.push(err('Invalid credentials_helper block', `The args of the credentials_helper ${goQuote(type)} block must be a list of strings.`, range));
      return;
    }
    this.file.credentialsHelpers.push({ type, args, range });
  }

  /** The methods of one provider_installation block (`decodeProviderInstallationFromConfig`). */
  private providerInstallation(methods: readonly MethodItem[], blockRange: Range): void {
    const product = flavorInfo(this.flavor).productName;
    const pi: { methods: RawMethod[]; devOverrides: DevOverride[]; range: Range } = { methods: [], devOverrides: [], range: blockRange };
    const invalid = (detail: string, at: Range): void => {
      this.diags.push(err('Invalid provider_installation method block', detail, at));
    };
    for (const m of methods) {
      const at = `${m.type} block at ${pos(blockRange)}`;
      const list = (name: 'include' | 'exclude'): string[] | undefined => {
        const v = stringList(m.body[name]);
        if (!v) invalid(`Invalid ${at}: ${name} must be a list of strings.`, m.range);
        return v;
      };
      switch (m.type) {
        case 'direct':
        case 'filesystem_mirror':
        case 'network_mirror': {
          const include = list('include');
          const exclude = include ? list('exclude') : undefined;
          if (!include || !exclude) continue;
          const retries = optionalInt(m.body.download_retry_count);
          if (retries === false) {
            invalid(`Invalid ${at}: download_retry_count must be a whole number.`, m.range);
            continue;
          }
          if (m.type === 'direct') {
            pi.methods.push({ kind: 'direct', include, exclude, ...(retries !== undefined ? { downloadRetryCount: retries } : {}), range: m.range });
            continue;
          }
          const key = m.type === 'filesystem_mirror' ? 'path' : 'url';
          const value = optionalString(m.body[key]);
          if (value === false) {
            invalid(`Invalid ${at}: ${key} must be a string.`, m.range);
            continue;
          }
          if (value === undefined || value === '') {
            invalid(`Invalid ${at}: "${key}" argument is required.`, m.range);
            continue;
          }
          if (m.type === 'filesystem_mirror') {
            pi.methods.push({ kind: 'filesystem_mirror', path: value, include, exclude, range: m.range });
            continue;
          }
          const trust = optionalBool(m.body.trust_all_hashes);
          if (trust === 'invalid') {
            invalid(`Invalid ${at}: trust_all_hashes must be a boolean.`, m.range);
            continue;
          }
          pi.methods.push({
            kind: 'network_mirror',
            url: value,
            include,
            exclude,
            ...(retries !== undefined ? { downloadRetryCount: retries } : {}),
            ...(trust === true && this.flavor === 'tofu' ? { trustAllHashes: true } : {}),
            range: m.range,
          });
          continue;
        }
        case 'dev_overrides': {
          if (pi.methods.length > 0) {
            // Sic: OpenTofu says "at at" (docs/reference.md §7 item 99); Terraform 1.11.4 says "at" (confirmed).
            invalid(
              `The dev_overrides block at ${this.flavor === 'tofu' ? 'at ' : ''}${pos(m.range)} must appear before all other installation methods, because development overrides always have the highest priority.`,
              m.range,
            );
            continue;
          }
          for (const [rawAddr, rawPath] of Object.entries(m.body)) {
            if (typeof rawPath !== 'string') {
              invalid(`Invalid ${at}: the value for ${goQuote(rawAddr)} must be a string.`, m.range);
              continue;
            }
            const addr = tryParseProviderSource(rawAddr, this.flavor);
            if (!addr.ok) {
              this.diags.push(
                err(
                  'Invalid provider installation dev overrides',
                  `The entry ${goQuote(rawAddr)} in ${pos(blockRange)} is not a valid provider source string.\n\n${addr.error.message}`,
                  m.range,
                ),
              );
              continue;
            }
            pi.devOverrides.push({ provider: addr.address, dir: goPathClean(rawPath) });
          }
          continue;
        }
        case 'oci_mirror':
          if (this.flavor === 'tofu') {
            this.diags.push(
              err(
                'Unsupported provider installation method',
                `provkit does not support ${product}'s oci_mirror installation method (at ${pos(m.range)}); remove it, or use ${product} itself for this configuration.`,
                m.range,
              ),
            );
            continue;
          }
          invalid(`Unknown provider installation method ${goQuote(m.type)} at ${pos(m.range)}.`, m.range);
          continue;
        default:
          invalid(`Unknown provider installation method ${goQuote(m.type)} at ${pos(m.range)}.`, m.range);
      }
    }
    this.file.providerInstallations.push(pi);
  }

  // --- native syntax -------------------------------------------------------

  readNative(bytes: Uint8Array): void {
    const parsed = parseHCL(bytes, this.file.filename, { quotedAttributeNames: true });
    this.diags.push(...parsed.diagnostics.map((d) => err(d.summary, d.detail, d.range)));
    if (parsed.diagnostics.some((d) => d.severity === 'error')) return;
    const source = parsed.source;
    for (const a of parsed.body.attributes) {
      if (a.name === 'provider_installation') {
        this.diags.push(
          err('Invalid provider_installation block', `The provider_installation block at ${pos(a.nameRange)} must not be introduced with an equals sign.`, a.nameRange),
        );
        continue;
      }
      if (a.name === 'host' || a.name === 'credentials' || a.name === 'credentials_helper') {
        // HCL 1 also accepts the map form: host = { "example.com" = { … } }.
        const v = plainFromExpr(a.expr, source, this.diags);
        if (isPlainObject(v)) for (const [name, body] of Object.entries(v)) this.namedBlock(a.name, name, body, a.range);
        continue;
      }
      if (a.name !== 'plugin_cache_dir' && a.name !== 'plugin_cache_may_break_dependency_lock_file') continue;
      const v = plainFromExpr(a.expr, source, this.diags);
      if (v !== undefined) this.setting(a.name, v, a.range);
    }
    for (const b of parsed.body.blocks) {
      if (b.type === 'host' || b.type === 'credentials' || b.type === 'credentials_helper') {
        if (b.labels.length !== 1) {
          this.diags.push(
            err(`Invalid ${b.type} block`, `A ${b.type} block must have exactly one label, the ${b.type === 'credentials_helper' ? 'helper type' : 'hostname'}.`, b.typeRange),
          );
          continue;
        }
        this.namedBlock(b.type, b.labels[0] ?? '', plainFromBody(b.body, source, this.diags), b.typeRange);
        continue;
      }
      if (b.type !== 'provider_installation') continue;
      if (b.labels.length > 0) {
        this.diags.push(err('Invalid provider_installation block', `The provider_installation block at ${pos(b.typeRange)} must not have any labels.`, b.typeRange));
      }
      for (const a of b.body.attributes) {
        this.diags.push(
          err('Invalid provider_installation method block', `The items inside the provider_installation block at ${pos(b.typeRange)} must all be blocks.`, a.nameRange),
        );
      }
      const methods: MethodItem[] = [];
      for (const m of b.body.blocks) {
        if (m.labels.length > 0) {
          this.diags.push(
            err(
              'Invalid provider_installation method block',
              `The blocks inside the provider_installation block at ${pos(b.typeRange)} may not have any labels.`,
              m.typeRange,
            ),
          );
        }
        methods.push({ type: m.type, body: plainFromBody(m.body, source, this.diags), range: m.typeRange });
      }
      this.providerInstallation(methods, b.typeRange);
    }
  }

  private namedBlock(type: 'host' | 'credentials' | 'credentials_helper', name: string, body: PlainValue, range: Range): void {
    if (type === 'host') this.host(name, body, range);
    else if (type === 'credentials') this.credentials(name, body, range);
    else this.credentialsHelper(name, body, range);
  }

  // --- JSON ------------------------------------------------------------------

  readJSON(bytes: Uint8Array): void {
    const parsed = parseJSON(bytes, this.file.filename, { hcl1: true });
    this.diags.push(...parsed.diagnostics.map((d) => err(d.summary, d.detail, d.range)));
    const root = parsed.value;
    if (!root) return;
    if (root.kind !== 'object') {
      this.diags.push(err('Invalid CLI configuration', 'A JSON CLI configuration file must contain a JSON object.', root.range));
      return;
    }
    for (const p of root.props) {
      const objects = p.value.kind === 'array' ? p.value.items : [p.value];
      if (p.name === 'provider_installation') {
        for (const o of objects) {
          if (o.kind !== 'object') {
            this.diags.push(
              err('Invalid provider_installation block', `The provider_installation block at ${pos(p.nameRange)} must not be introduced with an equals sign.`, o.range),
            );
            continue;
          }
          const methods: MethodItem[] = [];
          for (const mp of o.props) {
            const bodies = mp.value.kind === 'array' ? mp.value.items : [mp.value];
            for (const body of bodies) {
              if (body.kind !== 'object') {
                this.diags.push(
                  err(
                    'Invalid provider_installation method block',
                    `The items inside the provider_installation block at ${pos(p.nameRange)} must all be blocks.`,
                    body.range,
                  ),
                );
                continue;
              }
              methods.push({ type: mp.name, body: plainFromJSON(body) as PlainObject, range: mp.nameRange });
            }
          }
          this.providerInstallation(methods, p.nameRange);
        }
        continue;
      }
      if (p.name === 'host' || p.name === 'credentials' || p.name === 'credentials_helper') {
        for (const o of objects) {
          if (o.kind !== 'object') continue;
          for (const entry of o.props) this.namedBlock(p.name, entry.name, plainFromJSON(entry.value), entry.nameRange);
        }
        continue;
      }
      this.setting(p.name, plainFromJSON(p.value), p.nameRange);
    }
  }
}
