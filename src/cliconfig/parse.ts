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
 * `host`, `credentials`, `credentials_helper`, `provider_installation` (with
 * OpenTofu's `oci_mirror` method), and OpenTofu's `oci_credentials` and
 * `oci_default_credentials` blocks (opentofu/opentofu
 * internal/command/cliconfig/oci_credentials.go; docs/oci.md).
 * Accepted and ignored: everything else (`disable_checkpoint`,
 * `disable_checkpoint_signature`, `providers`, `provisioners`,
 * `registry_protocols`, …).
 *
 * Pure: no I/O.
 */
import type { Flavor } from '../addresses/index.js';
import { goQuote, tryParseProviderSource } from '../addresses/index.js';
import { dirname, isAbsolute, join, resolve } from 'node:path';

import { goPathClean, isRecord } from '../go/index.js';
import { parseJSON } from '../hcl/index.js';
import type { JsonValue } from '../hcl/index.js';

import type { Body, Expression, Range, SourceText } from '../hcl/index.js';
import { hasErrors, parseHCL, sourceText } from '../hcl/index.js';
import type {
  CliConfigDiagnostic,
  DevOverride,
  OciCredentialsBlock,
  OciDefaultCredentials,
  PlainValue,
} from './model.js';
import { parseRepositoryAddress } from '../net/oci/reference.js';
import { prepareRepositoryMapping, type RepositoryMapping } from './oci-template.js';
import { type DiagnosticRange, ErrorCode, errorText } from '../errors.js';

/** An installation method as written, patterns not yet parsed. */
export interface RawMethod {
  readonly kind: 'direct' | 'filesystem_mirror' | 'network_mirror' | 'oci_mirror';
  readonly include: readonly string[];
  readonly exclude: readonly string[];
  readonly path?: string;
  readonly url?: string;
  readonly downloadRetryCount?: number;
  readonly trustAllHashes?: boolean;
  /** `oci_mirror`: the template as written, and the checked mapping it defines. */
  readonly repositoryTemplate?: string;
  readonly repositoryMapping?: RepositoryMapping;
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
  readonly ociCredentials: OciCredentialsBlock[];
  readonly ociDefaultCredentials: OciDefaultCredentials[];
}

/** The result of {@link parseCliConfigFile}. */
export interface CliConfigFileResult {
  readonly file: CliConfigFile;
  readonly diagnostics: CliConfigDiagnostic[];
}

type PlainObject = { [key: string]: PlainValue };

const isPlainObject = (v: PlainValue | undefined): v is PlainObject => isRecord<PlainValue>(v);

function err(summary: string, detail: string, range?: DiagnosticRange): CliConfigDiagnostic {
  return { severity: 'error', code: ErrorCode.INVALID_CLI_CONFIGURATION, summary, detail, ...(range ? { range } : {}) };
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
  return raw.replace(
    /\\(?:u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})|(.))/gs,
    (m, u4: string | undefined, u8: string | undefined, c: string | undefined) => {
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
    },
  );
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
      if (expr.op === '-' && expr.operand.kind === 'Literal' && expr.operand.valueType === 'number')
        return -expr.operand.value;
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
        if (w.kind === 'ScopeTraversal' && w.traversal.length === 1 && w.traversal[0]?.type === 'root')
          k = w.traversal[0].name;
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
  /** Where its body starts, the `{` (the reference's `methodBody.Pos()`, used by `oci_mirror`). */
  readonly bodyRange: Range;
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
    ociCredentials: OciCredentialsBlock[];
    ociDefaultCredentials: OciDefaultCredentials[];
  };

  constructor(
    filename: string,
    private readonly flavor: Flavor,
  ) {
    this.file = {
      filename,
      pluginCacheMayBreakDependencyLockFile: false,
      hosts: [],
      credentials: [],
      credentialsHelpers: [],
      providerInstallations: [],
      ociCredentials: [],
      ociDefaultCredentials: [],
    };
  }

  // --- OpenTofu's OCI credentials (oci_credentials.go) -----------------------------

  /** `oci_credentials "PREFIX" { … }` (`decodeOCICredentialsBlockBody`); `at` is the body's `{`. */
  private ociCredentials(label: string, body: PlainValue, at: Range): void {
    const summary = 'Invalid oci_credentials block';
    const where = `The oci_credentials block at ${pos(at)}`;
    if (!isPlainObject(body)) {
      this.diags.push(err(summary, `${where} must be represented by a JSON object.`, at));
      return;
    }
    let repositoryPath: string;
    try {
      repositoryPath = parseRepositoryAddress(label).repository;
    } catch (e) {
      this.diags.push(err(summary, `${where} has an invalid block label: ${errorText(e)}.`, at));
      return;
    }
    const fields: Record<string, string | undefined> = {};
    for (const name of ['username', 'password', 'access_token', 'refresh_token', 'docker_credentials_helper']) {
      const v = optionalString(body[name]);
      if (v === false) {
        this.diags.push(err(summary, `Invalid oci_credentials block at ${pos(at)}: ${name} must be a string.`, at));
        return;
      }
      fields[name] = v;
    }
    const basic = fields['username'] !== undefined || fields['password'] !== undefined;
    const oauth = fields['access_token'] !== undefined || fields['refresh_token'] !== undefined;
    const helper = fields['docker_credentials_helper'] !== undefined;
    const styles = [basic, oauth, helper].filter(Boolean).length;
    if (styles === 0) {
      this.diags.push(
        err(
          summary,
          `${where} must set either username+password, access_token+refresh_token, or docker_credentials_helper.`,
          at,
        ),
      );
      return;
    }
    if (styles > 1) {
      this.diags.push(
        err(
          summary,
          `${where} must set only one group out of username+password, access_token+refresh_token, or docker_credentials_helper.`,
          at,
        ),
      );
      return;
    }
    if (basic) {
      if (fields['username'] === undefined || fields['password'] === undefined) {
        this.diags.push(
          err(summary, `${where} must set both username and password together when using static credentials.`, at),
        );
        return;
      }
      this.file.ociCredentials.push({
        prefix: label,
        kind: 'basic',
        username: fields['username'],
        password: fields['password'],
        range: at,
      });
      return;
    }
    if (oauth) {
      if (fields['access_token'] === undefined || fields['refresh_token'] === undefined) {
        this.diags.push(
          err(
            summary,
            `${where} must set both access_token and refresh_token together when using OAuth-style credentials.`,
            at,
          ),
        );
        return;
      }
      this.file.ociCredentials.push({
        prefix: label,
        kind: 'oauth',
        accessToken: fields['access_token'],
        refreshToken: fields['refresh_token'],
        range: at,
      });
      return;
    }
    const name = fields['docker_credentials_helper'] ?? '';
    let ok = true;
    if (repositoryPath !== '') {
      ok = false;
      this.diags.push(
        err(
          summary,
          `${where} cannot set docker_credentials_helper with a repository path: credential helpers only support credentials for whole domains.`,
          at,
        ),
      );
    }
    if (!validHelperName(name)) {
      ok = false;
      this.diags.push(
        err(
          summary,
          `${where} specifies the invalid Docker credential helper name ${goQuote(name)}. Must be a non-empty string that could be used as part of an executable filename.`,
          at,
        ),
      );
    }
    if (ok) this.file.ociCredentials.push({ prefix: label, kind: 'helper', helper: name, range: at });
  }

  /** `oci_default_credentials { … }` (`decodeOCIDefaultCredentialsBlockBody`); `at` is the body's `{`. */
  private ociDefaultCredentials(body: PlainValue, at: Range): void {
    const summary = 'Invalid oci_default_credentials block';
    const where = `The oci_default_credentials block at ${pos(at)}`;
    if (!isPlainObject(body)) {
      this.diags.push(err(summary, `${where} must be represented by a JSON object.`, at));
      return;
    }
    const discover = optionalBool(body.discover_ambient_credentials);
    if (discover === 'invalid') {
      this.diags.push(
        err(
          summary,
          `Invalid oci_default_credentials block at ${pos(at)}: discover_ambient_credentials must be a boolean.`,
          at,
        ),
      );
      return;
    }
    let files: string[] | undefined;
    if (body.docker_style_config_files !== undefined && body.docker_style_config_files !== null) {
      const list = stringList(body.docker_style_config_files);
      if (!list) {
        this.diags.push(
          err(
            summary,
            `Invalid oci_default_credentials block at ${pos(at)}: docker_style_config_files must be a list of strings.`,
            at,
          ),
        );
        return;
      }
      // Relative to the directory of the file that says so, made absolute.
      const base = dirname(this.file.filename);
      files = list.map((f) => resolve(isAbsolute(f) ? f : join(base, f)));
    }
    const helper = optionalString(body.docker_credentials_helper);
    if (helper === false) {
      this.diags.push(
        err(
          summary,
          `Invalid oci_default_credentials block at ${pos(at)}: docker_credentials_helper must be a string.`,
          at,
        ),
      );
      return;
    }
    let ok = true;
    if (helper !== undefined && !validHelperName(helper)) {
      ok = false;
      this.diags.push(
        err(
          summary,
          `${where} specifies the invalid Docker credential helper name ${goQuote(helper)}. Must be a non-empty string that could be used as part of an executable filename.`,
          at,
        ),
      );
    }
    const discoverAmbient = discover ?? true;
    if (!discoverAmbient && files !== undefined) {
      ok = false;
      this.diags.push(
        err(
          summary,
          `${where} disables discovery of ambient credentials, but also sets docker_style_config_files which is relevant only when ambient credentials discovery is enabled.`,
          at,
        ),
      );
    }
    if (ok) {
      this.file.ociDefaultCredentials.push({
        discoverAmbientCredentials: discoverAmbient,
        ...(files === undefined ? {} : { dockerStyleConfigFiles: files }),
        ...(helper === undefined ? {} : { dockerCredentialsHelper: helper }),
        range: at,
      });
    }
  }

  // --- settings shared by both syntaxes -------------------------------------------

  private setting(name: string, value: PlainValue, range: Range): void {
    if (name === 'plugin_cache_dir') {
      const s = optionalString(value);
      if (s === false)
        this.diags.push(err('Invalid plugin_cache_dir', 'The plugin_cache_dir setting must be a string.', range));
      else if (s !== undefined) this.file.pluginCacheDir = s;
    } else if (name === 'plugin_cache_may_break_dependency_lock_file') {
      const b = optionalBool(value);
      if (b === 'invalid') {
        this.diags.push(
          err(
            'Invalid plugin_cache_may_break_dependency_lock_file',
            'The plugin_cache_may_break_dependency_lock_file setting must be a boolean.',
            range,
          ),
        );
      } else if (b === true) this.file.pluginCacheMayBreakDependencyLockFile = true;
    }
  }

  private host(name: string, body: PlainValue, range: Range): void {
    if (!isPlainObject(body)) {
      this.diags.push(
        err('Invalid host block', `The host ${goQuote(name)} block must contain settings, such as services.`, range),
      );
      return;
    }
    const services = body.services;
    if (services !== undefined && !isPlainObject(services)) {
      this.diags.push(
        err('Invalid host block', `The services of the host ${goQuote(name)} block must be an object.`, range),
      );
      return;
    }
    this.file.hosts.push({ name, services: services ?? (Object.create(null) as PlainObject), range });
  }

  private credentials(name: string, body: PlainValue, range: Range): void {
    if (!isPlainObject(body)) {
      this.diags.push(
        err(
          'Invalid credentials block',
          `The credentials ${goQuote(name)} block must contain settings, such as token.`,
          range,
        ),
      );
      return;
    }
    this.file.credentials.push({ name, attributes: body, range });
  }

  private credentialsHelper(type: string, body: PlainValue, range: Range): void {
    const args = isPlainObject(body) ? stringList(body.args) : undefined;
    if (!args) {
      this.diags.push(
        err(
          'Invalid credentials_helper block',
          `The args of the credentials_helper ${goQuote(type)} block must be a list of strings.`,
          range,
        ),
      );
      return;
    }
    this.file.credentialsHelpers.push({ type, args, range });
  }

  /** The methods of one provider_installation block (`decodeProviderInstallationFromConfig`). */
  private providerInstallation(methods: readonly MethodItem[], blockRange: Range): void {
    const pi: { methods: RawMethod[]; devOverrides: DevOverride[]; range: Range } = {
      methods: [],
      devOverrides: [],
      range: blockRange,
    };
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
            pi.methods.push({
              kind: 'direct',
              include,
              exclude,
              ...(retries !== undefined ? { downloadRetryCount: retries } : {}),
              range: m.range,
            });
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
        case 'oci_mirror': {
          if (this.flavor !== 'tofu') {
            invalid(`Unknown provider installation method ${goQuote(m.type)} at ${pos(m.range)}.`, m.range);
            continue;
          }
          // OpenTofu 1.10+ (decodeOCIMirrorInstallationMethodBlock): positions are the body's `{`.
          const bodyAt = pos(m.bodyRange);
          const ociList = (name: 'include' | 'exclude'): string[] | undefined => {
            const v = stringList(m.body[name]);
            if (!v) invalid(`Invalid oci_mirror block at ${bodyAt}: ${name} must be a list of strings.`, m.range);
            return v;
          };
          const include = ociList('include');
          const exclude = include ? ociList('exclude') : undefined;
          if (!include || !exclude) continue;
          const template = optionalString(m.body.repository_template);
          if (template === false) {
            invalid(`Invalid oci_mirror block at ${bodyAt}: repository_template must be a string.`, m.range);
            continue;
          }
          if (template === undefined || template === '') {
            invalid(`Invalid oci_mirror block at ${bodyAt}: "repository_template" argument is required.`, m.range);
            continue;
          }
          const prepared = prepareRepositoryMapping(template, include, bodyAt, this.flavor);
          this.diags.push(...prepared.diags.map((d) => ({ ...d, range: m.range })));
          if (prepared.mapping === undefined || hasErrors(prepared.diags)) continue;
          pi.methods.push({
            kind: 'oci_mirror',
            include,
            exclude,
            repositoryTemplate: template,
            repositoryMapping: prepared.mapping,
            range: m.range,
          });
          continue;
        }
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
    if (hasErrors(parsed.diagnostics)) return;
    const source = parsed.source;
    for (const a of parsed.body.attributes) {
      if (a.name === 'provider_installation') {
        this.diags.push(
          err(
            'Invalid provider_installation block',
            `The provider_installation block at ${pos(a.nameRange)} must not be introduced with an equals sign.`,
            a.nameRange,
          ),
        );
        continue;
      }
      if (a.name === 'oci_credentials' || a.name === 'oci_default_credentials') {
        this.diags.push(
          err(
            `Invalid ${a.name} block`,
            `The ${a.name} block at ${pos(a.nameRange)} must not be introduced with an equals sign.`,
            a.nameRange,
          ),
        );
        continue;
      }
      if (a.name === 'host' || a.name === 'credentials' || a.name === 'credentials_helper') {
        // HCL 1 also accepts the map form: host = { "example.com" = { … } }.
        const v = plainFromExpr(a.expr, source, this.diags);
        if (isPlainObject(v))
          for (const [name, body] of Object.entries(v)) this.namedBlock(a.name, name, body, a.range);
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
            err(
              `Invalid ${b.type} block`,
              `A ${b.type} block must have exactly one label, the ${b.type === 'credentials_helper' ? 'helper type' : 'hostname'}.`,
              b.typeRange,
            ),
          );
          continue;
        }
        this.namedBlock(b.type, b.labels[0] ?? '', plainFromBody(b.body, source, this.diags), b.typeRange);
        continue;
      }
      if (b.type === 'oci_credentials') {
        if (b.labels.length !== 1) {
          this.diags.push(
            err(
              'Invalid oci_credentials block',
              `The oci_credentials block at ${pos(b.typeRange)} must have one label, giving an OCI repository address prefix.`,
              b.typeRange,
            ),
          );
          continue;
        }
        this.ociCredentials(b.labels[0] ?? '', plainFromBody(b.body, source, this.diags), b.openBraceRange);
        continue;
      }
      if (b.type === 'oci_default_credentials') {
        if (b.labels.length > 0) {
          this.diags.push(
            err(
              'Invalid oci_default_credentials block',
              `The oci_default_credentials block at ${pos(b.typeRange)} must not have any labels.`,
              b.typeRange,
            ),
          );
          continue;
        }
        this.ociDefaultCredentials(plainFromBody(b.body, source, this.diags), b.openBraceRange);
        continue;
      }
      if (b.type !== 'provider_installation') continue;
      if (b.labels.length > 0) {
        this.diags.push(
          err(
            'Invalid provider_installation block',
            `The provider_installation block at ${pos(b.typeRange)} must not have any labels.`,
            b.typeRange,
          ),
        );
      }
      for (const a of b.body.attributes) {
        this.diags.push(
          err(
            'Invalid provider_installation method block',
            `The items inside the provider_installation block at ${pos(b.typeRange)} must all be blocks.`,
            a.nameRange,
          ),
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
        methods.push({
          type: m.type,
          body: plainFromBody(m.body, source, this.diags),
          range: m.typeRange,
          bodyRange: m.openBraceRange,
        });
      }
      this.providerInstallation(methods, b.typeRange);
    }
  }

  private namedBlock(
    type: 'host' | 'credentials' | 'credentials_helper',
    name: string,
    body: PlainValue,
    range: Range,
  ): void {
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
      this.diags.push(
        err('Invalid CLI configuration', 'A JSON CLI configuration file must contain a JSON object.', root.range),
      );
      return;
    }
    for (const p of root.props) {
      const objects = p.value.kind === 'array' ? p.value.items : [p.value];
      if (p.name === 'provider_installation') {
        for (const o of objects) {
          if (o.kind !== 'object') {
            this.diags.push(
              err(
                'Invalid provider_installation block',
                `The provider_installation block at ${pos(p.nameRange)} must not be introduced with an equals sign.`,
                o.range,
              ),
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
              methods.push({
                type: mp.name,
                body: plainFromJSON(body) as PlainObject,
                range: mp.nameRange,
                bodyRange: body.range,
              });
            }
          }
          this.providerInstallation(methods, p.nameRange);
        }
        continue;
      }
      if (p.name === 'oci_credentials') {
        for (const o of objects) {
          if (o.kind !== 'object') {
            this.diags.push(
              err(
                'Invalid oci_credentials block',
                `The oci_credentials block at ${pos(p.nameRange)} must have one label, giving an OCI repository address prefix.`,
                o.range,
              ),
            );
            continue;
          }
          for (const entry of o.props) this.ociCredentials(entry.name, plainFromJSON(entry.value), entry.value.range);
        }
        continue;
      }
      if (p.name === 'oci_default_credentials') {
        for (const o of objects) this.ociDefaultCredentials(plainFromJSON(o), o.range);
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

/** OpenTofu's `validDockerCredentialHelperName`: non-empty, no path separator. */
function validHelperName(n: string): boolean {
  return n !== '' && !n.includes('/') && !(process.platform === 'win32' && n.includes('\\'));
}
