/**
 * The air-gap bundle format (docs/bundles.md): a plain ustar archive whose
 * first member is `manifest.json`, followed by the other members sorted by
 * name (byte order):
 *
 * - `.terraform.lock.hcl`: lock-file entries for every bundled provider
 *   (version, constraints, `zh:` and `h1:` of every bundled platform);
 * - `HOST/NS/TYPE/index.json`, `HOST/NS/TYPE/VERSION.json` and
 *   `HOST/NS/TYPE/terraform-provider-TYPE_VERSION_OS_ARCH.zip`: a packed
 *   mirror (HOST in display form, as `providers mirror` writes it), with
 *   `zh:` and both `h1:` forms in every VERSION.json.
 *
 * The manifest lists size and SHA-256 of every other member, and the hashes
 * of every package. Pure: data in, data out; no I/O here.
 */
import { unsafeNameKind } from '../addresses/index.js';
import { ErrorCode, ProvkitError, errorText } from '../errors.js';
import { isRecord } from '../go/index.js';

/** The manifest's `format`: the bundle layout this provkit writes and the only one it reads (docs/bundles.md). */
export const BUNDLE_FORMAT = 'provkit-bundle/1';
export const MANIFEST_NAME = 'manifest.json';
export const BUNDLE_LOCK_NAME = '.terraform.lock.hcl';
/** The manifest is read into memory: it may not be larger than this. */
export const MAX_MANIFEST_SIZE = 16 << 20;

/** One member of the tar besides `manifest.json`, as the manifest lists it; the importer checks each against it. */
export interface BundleMember {
  /** Its name in the tar: a relative `/`-separated path, every segment a plain name ({@link unsafeMemberName}). */
  readonly name: string;
  /** Its length in bytes. */
  readonly size: number;
  /** Lower-case hex SHA-256 of the member's bytes. */
  readonly sha256: string;
}

/** One package of a bundled provider: a platform's zip and the hashes it must have. */
export interface BundlePackage {
  /** `OS_ARCH`, as in the zip's name. */
  readonly platform: string;
  /** The member holding the zip. */
  readonly path: string;
  /** The `zh:` of the zip (the SHA-256 of its bytes), as a lock file writes it. */
  readonly zh: string;
  /** The lock-file `h1:` (extracted form). */
  readonly h1: string;
  /** The `h1:` of the entries as stored (what `providers mirror` lists). */
  readonly h1Zip: string;
}

/** One provider of a bundle: the version selected and its packages. */
export interface BundleProvider {
  /** `HOST/NS/TYPE` in display form. */
  readonly source: string;
  /** The selected version, as the lock file writes it (`1.1.0`). */
  readonly version: string;
  /** The configuration's constraints as the lock file's `constraints` writes them (`~> 1.0`); empty when it has none. */
  readonly constraints: string;
  /** Every platform of the selection; packages already in the `since` bundle are not members of this one. */
  readonly packages: readonly BundlePackage[];
}

/** `manifest.json`, the first member of a bundle (docs/bundles.md): what the bundle holds and the hashes it must have. */
export interface BundleManifest {
  /** Which layout: {@link BUNDLE_FORMAT}; a manifest of another format is refused. */
  readonly format: typeof BUNDLE_FORMAT;
  /** The version of the provkit that wrote the bundle (informational: nothing checks it). */
  readonly provkitVersion: string;
  /** The flavor the bundle was made for: its lock file's header and default registry host. */
  readonly flavor: 'tofu' | 'terraform';
  /** RFC 3339, UTC, whole seconds (see docs/bundles.md for where it comes from). */
  readonly created: string;
  /** Set for a delta bundle (`-since`): the SHA-256 of the older bundle's manifest. */
  readonly since?: string;
  /** The platforms (`OS_ARCH`) the bundle was made for, sorted. */
  readonly platforms: readonly string[];
  /** Every provider of the bundle, with every package of the selection (those a delta leaves out too). */
  readonly providers: readonly BundleProvider[];
  /** Exactly the other members of this tar, sorted by name (byte order). */
  readonly members: readonly BundleMember[];
}

/** Deterministic bytes of a manifest: keys in a fixed order, two-space indent, final newline. */
export function serializeManifest(m: BundleManifest): Buffer {
  const ordered = {
    format: m.format,
    provkitVersion: m.provkitVersion,
    flavor: m.flavor,
    created: m.created,
    ...(m.since === undefined ? {} : { since: m.since }),
    platforms: m.platforms,
    providers: m.providers.map((p) => ({
      source: p.source,
      version: p.version,
      constraints: p.constraints,
      packages: p.packages.map((k) => ({ platform: k.platform, path: k.path, zh: k.zh, h1: k.h1, h1Zip: k.h1Zip })),
    })),
    members: m.members.map((x) => ({ name: x.name, size: x.size, sha256: x.sha256 })),
  };
  return Buffer.from(`${JSON.stringify(ordered, null, 2)}\n`);
}

function bad(message: string): ProvkitError {
  return new ProvkitError(ErrorCode.BUNDLE_INVALID, `invalid bundle manifest: ${message}`, { file: MANIFEST_NAME });
}

const str = (o: Record<string, unknown>, k: string, where: string): string => {
  const v = o[k];
  if (typeof v !== 'string') throw bad(`${where}: "${k}" must be a string`);
  return v;
};
const HEX64 = /^[0-9a-f]{64}$/;

/**
 * Parses and checks the shape of a manifest (not its claims: the importer
 * checks those against the members).
 *
 * @throws {ProvkitError} `INVALID_RESPONSE` naming the field.
 */
export function parseManifest(bytes: Buffer): BundleManifest {
  let doc: unknown;
  try {
    doc = JSON.parse(bytes.toString('utf8'));
  } catch (err) {
    throw bad(`not JSON: ${errorText(err)}`);
  }
  if (!isRecord(doc)) throw bad('not an object');
  if (doc['format'] !== BUNDLE_FORMAT)
    throw bad(`unknown format ${JSON.stringify(doc['format'])} (this provkit reads ${BUNDLE_FORMAT})`);
  const flavor = doc['flavor'];
  if (flavor !== 'tofu' && flavor !== 'terraform') throw bad('"flavor" must be "tofu" or "terraform"');
  const platforms = doc['platforms'];
  if (!Array.isArray(platforms) || platforms.some((p) => typeof p !== 'string'))
    throw bad('"platforms" must be a list of strings');
  const members = doc['members'];
  if (!Array.isArray(members)) throw bad('"members" must be a list');
  const providers = doc['providers'];
  if (!Array.isArray(providers)) throw bad('"providers" must be a list');
  const since = doc['since'];
  if (since !== undefined && (typeof since !== 'string' || !HEX64.test(since))) throw bad('"since" must be a SHA-256');
  return {
    format: BUNDLE_FORMAT,
    provkitVersion: str(doc, 'provkitVersion', 'manifest'),
    flavor,
    created: str(doc, 'created', 'manifest'),
    ...(since === undefined ? {} : { since }),
    platforms: platforms as string[],
    members: members.map((m, i) => {
      if (!isRecord(m)) throw bad(`members[${i}] must be an object`);
      const size = m['size'];
      if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0)
        throw bad(`members[${i}]: "size" must be a non-negative integer`);
      const sha256 = str(m, 'sha256', `members[${i}]`);
      if (!HEX64.test(sha256)) throw bad(`members[${i}]: "sha256" must be 64 lower-case hex digits`);
      return { name: str(m, 'name', `members[${i}]`), size, sha256 };
    }),
    providers: providers.map((p, i) => {
      if (!isRecord(p)) throw bad(`providers[${i}] must be an object`);
      const pk = p['packages'];
      if (!Array.isArray(pk)) throw bad(`providers[${i}]: "packages" must be a list`);
      return {
        source: str(p, 'source', `providers[${i}]`),
        version: str(p, 'version', `providers[${i}]`),
        constraints: str(p, 'constraints', `providers[${i}]`),
        packages: pk.map((k, j) => {
          const where = `providers[${i}].packages[${j}]`;
          if (!isRecord(k)) throw bad(`${where} must be an object`);
          return {
            platform: str(k, 'platform', where),
            path: str(k, 'path', where),
            zh: str(k, 'zh', where),
            h1: str(k, 'h1', where),
            h1Zip: str(k, 'h1Zip', where),
          };
        }),
      };
    }),
  };
}

/**
 * Why a member name may not be used, or undefined when it is safe: relative,
 * `/`-separated, no empty, `.` or `..` segment, no backslash, colon at the
 * start, NUL or control character.
 */
export function unsafeMemberName(name: string): string | undefined {
  if (name.length === 0) return 'an empty name';
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name)) return 'an absolute name';
  if (name.includes('\\')) return 'a backslash in the name';
  const parts = name.split('/');
  if (parts.some((p) => p === '..')) return 'a ".." segment (path traversal)';
  // Each segment a plain name (addresses/names.ts, the rule of every path builder).
  const kinds = parts.map(unsafeNameKind);
  if (kinds.includes('control')) return 'a control character in the name';
  if (kinds.includes('empty') || kinds.includes('dot')) return 'an empty or "." segment';
  if (kinds.includes('long')) return 'a segment longer than 255 bytes';
  return undefined;
}

/** RFC 3339 UTC with whole seconds, from Unix seconds. */
export function createdFromEpoch(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * The creation time of a bundle: `SOURCE_DATE_EPOCH` (reproducible-builds.org)
 * when set, else the Unix epoch, so that the same inputs give the same bytes.
 *
 * @throws {ProvkitError} `USAGE` when `SOURCE_DATE_EPOCH` is not a non-negative integer.
 */
export function bundleCreationTime(env: Readonly<Record<string, string | undefined>>): number {
  const raw = env['SOURCE_DATE_EPOCH'];
  if (raw === undefined || raw === '') return 0;
  if (!/^\d{1,12}$/.test(raw))
    throw new ProvkitError(
      ErrorCode.USAGE,
      `SOURCE_DATE_EPOCH must be a number of seconds, not ${JSON.stringify(raw)}`,
    );
  return Number(raw);
}
