/**
 * Module source addresses (`module "x" { source = "…" }`), parsed as far as
 * the configuration loader needs: to report the reference's syntax errors
 * and to compare a call's source with the one recorded in
 * `.terraform/modules/modules.json` ("Module source has changed").
 *
 * Follows `internal/addrs/module_source.go` / `getmodules/moduleaddrs` and
 * `terraform-registry-address`:
 * - `./…`, `../…` (and the backslash forms) are local paths, cleaned like Go's
 *   `path.Clean` with a leading `./` kept;
 * - otherwise, anything that parses as `[host/]namespace/name/system[//subdir]`
 *   is a registry address (errors are only reported when `version` is set);
 * - anything else is a remote (go-getter) address. A scheme-less address that
 *   no go-getter detector claims (`modules/foo`, `example.com/foo`) is the
 *   reference's "failed to determine your intended installation method"
 *   error (confirmed with terraform 1.11.4).
 *
 * Known gap: go-getter's normalisation of remote addresses is only
 * reproduced for `github.com/…` and `git@host:path`; other remote addresses
 * are compared as written, and only when they name their getter explicitly.
 *
 * Pure: no I/O.
 */
import type { Flavor } from '../addresses/index.js';
import { defaultRegistryHost, tryHostnameForComparison } from '../addresses/index.js';
import { goPathClean } from '../go/index.js';

/** A parsed module source address. */
export type ModuleSource =
  | { kind: 'local'; path: string }
  | { kind: 'registry'; host: string; namespace: string; name: string; system: string; subdir: string }
  | { kind: 'remote'; raw: string; normalized: string | undefined };

/** Why a source did not parse; `maybeRelative` is go-getter's "maybe a relative path" case. */
export interface ModuleSourceError {
  kind: 'error';
  /** `maybeRelative`: no installation method claims the address; `registry`: not a valid registry address. */
  reason: 'maybeRelative' | 'registry';
  /** The registry parser's message (for `registry`), or the address (for `maybeRelative`). */
  message: string;
}

/** Whether `raw` is a local path (`./`, `../`, `.\`, `..\`). */
export function isLocalModuleSource(raw: string): boolean {
  return raw.startsWith('./') || raw.startsWith('../') || raw.startsWith('.\\') || raw.startsWith('..\\');
}

function parseLocal(raw: string): ModuleSource {
  const clean = goPathClean(raw.replaceAll('\\', '/'));
  return { kind: 'local', path: clean.startsWith('../') || clean === '..' ? clean : `./${clean}` };
}

/** go-getter `SourceDirSubdir`: splits `addr//subdir` (a `://` does not count), keeping any query on the address. */
function splitSubdir(raw: string): [string, string] {
  let offset = 0;
  const scheme = raw.indexOf('://');
  if (scheme !== -1) offset = scheme + 3;
  const idx = raw.indexOf('//', offset);
  if (idx === -1) return [raw, ''];
  let subdir = raw.slice(idx + 2);
  let addr = raw.slice(0, idx);
  const q = subdir.indexOf('?');
  if (q !== -1) {
    addr += subdir.slice(q);
    subdir = subdir.slice(0, q);
  }
  return [addr, subdir];
}

const NAME_RE = /^[0-9A-Za-z](?:[0-9A-Za-z_-]{0,62}[0-9A-Za-z])?$/;
const NAME_ERR =
  'must be between one and 64 characters, including ASCII letters, digits, dashes, and underscores, where dashes and underscores may not be the prefix or suffix';
const SYSTEM_RE = /^[0-9a-z]{1,64}$/;

/**
 * `ParseModuleSourceRegistry`: `[host/]namespace/name/system[//subdir]`.
 * The default host is the flavor's module registry (the same host as for
 * providers).
 */
export function parseRegistryModuleSource(raw: string, flavor: Flavor): ModuleSource | ModuleSourceError {
  if (isLocalModuleSource(raw))
    return {
      kind: 'error',
      reason: 'registry',
      message: `can't use local directory ${JSON.stringify(raw)} as a module registry address`,
    };
  const [addr, subdirRaw] = splitSubdir(raw);
  const subdir = subdirRaw === '' ? '' : goPathClean(subdirRaw);
  if (subdir.startsWith('../'))
    return {
      kind: 'error',
      reason: 'registry',
      message: `subdirectory path ${JSON.stringify(subdir)} leads outside of the module package`,
    };
  let parts = addr.split('/');
  if (parts.length !== 3 && parts.length !== 4) {
    return {
      kind: 'error',
      reason: 'registry',
      message: 'a module registry source address must have either three or four slash-separated components',
    };
  }
  let host: string = defaultRegistryHost(flavor);
  if (parts.length === 4) {
    const given = parts[0] ?? '';
    const hn = tryHostnameForComparison(given);
    if (!hn.ok) {
      return {
        kind: 'error',
        reason: 'registry',
        message: `invalid module registry hostname ${JSON.stringify(given)}; internationalized domain names must be given as direct unicode characters, not in punycode`,
      };
    }
    if (hn.hostname === 'github.com' || hn.hostname === 'bitbucket.org') {
      return {
        kind: 'error',
        reason: 'registry',
        message: `can't use ${JSON.stringify(hn.hostname)} as a module registry host, because it's reserved for installing directly from version control repositories`,
      };
    }
    host = hn.hostname;
    parts = parts.slice(1);
  }
  const [namespace = '', name = '', system = ''] = parts;
  if (!NAME_RE.test(namespace)) {
    if (namespace.includes('.')) {
      return {
        kind: 'error',
        reason: 'registry',
        message:
          'source address must have three more components after the hostname: the namespace, the name, and the target system',
      };
    }
    return {
      kind: 'error',
      reason: 'registry',
      message: `invalid namespace ${JSON.stringify(namespace)}: ${NAME_ERR}`,
    };
  }
  if (!NAME_RE.test(name))
    return { kind: 'error', reason: 'registry', message: `invalid module name ${JSON.stringify(name)}: ${NAME_ERR}` };
  if (!SYSTEM_RE.test(system)) {
    return {
      kind: 'error',
      reason: 'registry',
      message: `invalid target system ${JSON.stringify(system)}: must be between one and 64 ASCII letters or digits`,
    };
  }
  return {
    kind: 'registry',
    host,
    namespace: namespace.toLowerCase(),
    name: name.toLowerCase(),
    system: system.toLowerCase(),
    subdir,
  };
}

function parseRemote(raw: string): ModuleSource | ModuleSourceError {
  if (/^[A-Za-z0-9+.-]+::/.test(raw) || /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(raw))
    return { kind: 'remote', raw, normalized: raw };
  const [addr, subdir] = splitSubdir(raw);
  const sub = subdir === '' ? '' : `//${subdir}`;
  let m = /^github\.com\/([^/?]+)\/([^/?]+)(.*)$/.exec(addr);
  if (m) {
    const repo = (m[2] ?? '').replace(/\.git$/, '');
    const rest = m[3] ?? '';
    const q = rest.indexOf('?');
    const [path, query] = q === -1 ? [rest, ''] : [rest.slice(0, q), rest.slice(q)];
    const inner = path === '' ? '' : `//${path.replace(/^\//, '')}`;
    return {
      kind: 'remote',
      raw,
      normalized: `git::https://github.com/${m[1] ?? ''}/${repo}.git${inner || sub}${query}`,
    };
  }
  m = /^git@([^:]+):(.+)$/.exec(addr);
  if (m) return { kind: 'remote', raw, normalized: `git::ssh://git@${m[1] ?? ''}/${m[2] ?? ''}${sub}` };
  // Detectors that need the network or whose normal form is involved: accepted, not compared.
  if (
    addr.startsWith('bitbucket.org/') ||
    /amazonaws\.com/.test(addr) ||
    /googleapis\.com/.test(addr) ||
    addr.startsWith('/')
  ) {
    return { kind: 'remote', raw, normalized: undefined };
  }
  if (/^[A-Za-z]:[\\/]/.test(addr)) return { kind: 'remote', raw, normalized: undefined };
  return { kind: 'error', reason: 'maybeRelative', message: raw };
}

/**
 * `ParseModuleSource` (no `version` argument) or, when `withVersion`,
 * `ParseModuleSourceRegistry`.
 */
export function parseModuleSource(raw: string, flavor: Flavor, withVersion: boolean): ModuleSource | ModuleSourceError {
  if (withVersion) return parseRegistryModuleSource(raw, flavor);
  if (isLocalModuleSource(raw)) return parseLocal(raw);
  // Whether an address is a registry address is decided only by whether it
  // parses as one; its errors are never reported here (as in the reference).
  const reg = parseRegistryModuleSource(raw, flavor);
  return reg.kind === 'registry' ? reg : parseRemote(raw);
}

/** Whether the result of {@link parseModuleSource} is an error. */
export function isModuleSourceError(s: ModuleSource | ModuleSourceError): s is ModuleSourceError {
  return s.kind === 'error';
}

/**
 * The comparison key of a source, or `undefined` when it cannot be compared
 * reliably (see the module comment).
 */
export function moduleSourceKey(s: ModuleSource): string | undefined {
  return s.kind === 'remote' ? s.normalized : moduleSourceDisplay(s);
}

/**
 * Whether the source recorded in the module manifest denotes the same module
 * as the call's source. Unknown or incomparable forms count as the same.
 */
export function sameModuleSource(call: ModuleSource, recorded: string, flavor: Flavor): boolean {
  const callKey = moduleSourceKey(call);
  if (callKey === undefined) return true;
  let rec: ModuleSource | ModuleSourceError;
  if (call.kind === 'registry') {
    // The manifest may spell a registry address with or without its host.
    rec = parseRegistryModuleSource(recorded, flavor);
  } else {
    rec = parseModuleSource(recorded, flavor, false);
  }
  if (isModuleSourceError(rec)) return recorded === callKey;
  const recKey = moduleSourceKey(rec);
  return recKey === undefined || recKey === callKey;
}

/**
 * A source as the reference prints it (`addrs.ModuleSource.String`): a local
 * path as written, a registry address with its host, a remote address as
 * go-getter normalised it.
 */
export function moduleSourceDisplay(s: ModuleSource): string {
  switch (s.kind) {
    case 'local':
      return s.path;
    case 'registry':
      return `${s.host}/${s.namespace}/${s.name}/${s.system}${s.subdir === '' ? '' : `//${s.subdir}`}`;
    case 'remote':
      return s.normalized ?? s.raw;
  }
}
