/**
 * The module manifest `.terraform/modules/modules.json` that `init` / `get`
 * write (`internal/modsdir/manifest.go`): `{"Modules": [{"Key", "Source",
 * "Version", "Dir"}]}`, one record per installed module call, keyed by the
 * call path joined with `.` (`""` for the root, `vpc`, `vpc.subnets`).
 *
 * Rules from the reference (terraform 1.11.4 messages confirmed):
 * - a missing or empty file is an empty manifest;
 * - invalid JSON, two records with the same key, or a `Version` that is not
 *   a version fails the whole manifest (`failed to read module manifest: …`);
 * - field names match case-insensitively and unknown fields are ignored, as
 *   Go's `encoding/json` does.
 *
 * Pure: no I/O.
 */
import type { Diagnostic } from '../errors.js';
import { errorDiag, fileRange } from './diagnostics.js';
import type { GoVersion } from './goversion.js';
import { parseGoVersion } from './goversion.js';
import type { JsonValue } from '../hcl/index.js';
import { parseJSON } from '../hcl/index.js';

/** One installed module. */
export interface ManifestRecord {
  readonly key: string;
  /** The source address it was installed from, as recorded. */
  readonly source: string;
  /** The installed version (registry modules only). */
  readonly version?: GoVersion;
  /** `Version` as written. */
  readonly versionText?: string;
  /** The directory it was installed into, as recorded (relative to the working directory, normally with `/` separators). */
  readonly dir: string;
}

/** The result of {@link parseModuleManifest}. */
export interface ManifestResult {
  readonly records: Map<string, ManifestRecord>;
  readonly diagnostics: Diagnostic[];
}

const SUMMARY = 'failed to read module manifest';

function field(obj: JsonValue, name: string): JsonValue | undefined {
  if (obj.kind !== 'object') return undefined;
  let found: JsonValue | undefined;
  // encoding/json: an exact match wins, else the last case-insensitive match.
  for (const p of obj.props) {
    if (p.name === name) return p.value;
    if (p.name.toLowerCase() === name.toLowerCase()) found = p.value;
  }
  return found;
}

function stringField(obj: JsonValue, name: string): string | undefined | false {
  const v = field(obj, name);
  if (v === undefined || v.kind === 'null') return undefined;
  return v.kind === 'string' ? v.value : false;
}

/**
 * Parses a module manifest. On any failure the manifest is empty and there
 * is one error diagnostic whose summary starts with the reference's
 * `failed to read module manifest`.
 */
export function parseModuleManifest(source: Uint8Array | string, filename: string): ManifestResult {
  const records = new Map<string, ManifestRecord>();
  const bytes = typeof source === 'string' ? new TextEncoder().encode(source) : source;
  if (bytes.length === 0) return { records, diagnostics: [] };
  const fail = (detail: string, d?: Diagnostic): ManifestResult => ({
    records: new Map(),
    diagnostics: [errorDiag(`${SUMMARY}: ${detail}`, d ? d.detail : '', d?.range ?? fileRange(filename))],
  });
  const parsed = parseJSON(bytes, filename);
  if (!parsed.value) {
    const d = parsed.diagnostics[0];
    return fail(`error unmarshalling snapshot: ${d?.summary ?? 'invalid JSON'}`, d);
  }
  const root = parsed.value;
  if (root.kind === 'null') return { records, diagnostics: [] };
  if (root.kind !== 'object') return fail('error unmarshalling snapshot: the manifest must be a JSON object');
  const list = field(root, 'Modules');
  if (list === undefined || list.kind === 'null') return { records, diagnostics: [] };
  if (list.kind !== 'array') return fail('error unmarshalling snapshot: "Modules" must be a JSON array');
  for (const item of list.items) {
    if (item.kind === 'null') continue;
    if (item.kind !== 'object') return fail('error unmarshalling snapshot: each module record must be a JSON object');
    const key = stringField(item, 'Key');
    const src = stringField(item, 'Source');
    const versionText = stringField(item, 'Version');
    const dir = stringField(item, 'Dir');
    if (key === false || src === false || versionText === false || dir === false) {
      return fail('error unmarshalling snapshot: the fields of a module record must be strings');
    }
    const k = key ?? '';
    let version: GoVersion | undefined;
    if (versionText !== undefined && versionText !== '') {
      const v = parseGoVersion(versionText);
      if (!v.ok) return fail(`invalid version ${JSON.stringify(versionText)} for ${k}: ${v.error}`);
      version = v.version;
    }
    if (records.has(k)) return fail(`snapshot file contains two records for path ${k}`);
    records.set(k, {
      key: k,
      source: src ?? '',
      ...(version ? { version, versionText: versionText ?? '' } : {}),
      dir: dir ?? '',
    });
  }
  return { records, diagnostics: [] };
}
