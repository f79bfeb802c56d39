/**
 * `bundle import`: all or nothing.
 *
 * 1. Stream the tar into a staging directory beside the target, refusing as
 *    it goes: the first member must be `manifest.json`; every other member
 *    must be a regular file (no links, directories, devices), have a safe
 *    relative name (no `..`, absolute, backslash or control characters), be
 *    listed in the manifest, appear once, have the listed size (and no more
 *    than `maxMemberSize`) and SHA-256; every listed member must be present.
 * 2. Verify every package against its hashes: `zh:` and both `h1:` forms as
 *    the manifest lists them, every hash its VERSION.json lists, the bundle's
 *    lock entries, and the caller's `trustedLocks` when given (the real trust
 *    anchor: a lock file that did not travel with the bundle).
 * 3. Plan the merge: a package already in the target must have the same
 *    bytes; existing `index.json`/`VERSION.json` must parse. Merged indexes
 *    are unions.
 * 4. Only then touch the target: packages are renamed into place (same file
 *    system), VERSION.json then index.json written atomically.
 *
 * Any refusal before step 4 leaves the target exactly as it was; the staging
 * directory is always removed.
 */
/* eslint-disable no-await-in-loop -- tar members are written and read one after another, in order; moves and index writes are ordered on purpose */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { lstat, mkdir, mkdtemp, readFile, rename, rm } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

import tar from 'tar-stream';

import { type Flavor } from '../../addresses/index.js';
import { ErrorCode, ProvkitError, systemErrorCode } from '../../errors.js';
import { writeFileAtomic } from '../../fs/atomic.js';
import { type HashPool, normalizeHashes, parseHash } from '../../hashing/index.js';
import { hasErrors, type Locks, parseLockFile } from '../../lockfile/index.js';
import { goMarshalIndent, type GoJSON } from '../../layout/index.js';
import { BUNDLE_LOCK_NAME, type BundleManifest, MANIFEST_NAME, MAX_MANIFEST_SIZE, parseManifest, unsafeMemberName } from './manifest.js';

/** Default largest member: 2 GiB (provider packages are far smaller). */
export const DEFAULT_MAX_MEMBER_SIZE = 2 * 1024 ** 3;

export interface BundleImportOptions {
  readonly bundlePath: string;
  readonly targetDir: string;
  readonly pool: HashPool;
  readonly flavor: Flavor;
  readonly maxMemberSize?: number;
  /** A lock file every package must match (by `zh:` or `h1:`), for the provider and version it is bundled as. */
  readonly trustedLocks?: Locks;
}

export interface BundleImportOutcome {
  readonly manifest: BundleManifest;
  /** Packages moved into the target. */
  readonly added: readonly string[];
  /** Packages the target already had, byte for byte. */
  readonly present: readonly string[];
  /** Index documents written (relative to the target). */
  readonly indexes: readonly string[];
  /** The bundle's lock-file entries (`.terraform.lock.hcl` bytes). */
  readonly lockFile: Buffer;
}

function refuse(member: string, message: string, code: ErrorCode = ErrorCode.BUNDLE_MEMBER_REFUSED, extra: { expected?: string; found?: string } = {}): ProvkitError {
  return new ProvkitError(code, `bundle member ${JSON.stringify(member)}: ${message}`, { entry: member, ...extra });
}

/** Reads only the manifest of a bundle (for `-since` and inspection). */
export async function readBundleManifest(bundlePath: string): Promise<{ manifest: BundleManifest; sha256: string }> {
  const extract = tar.extract();
  const input = createReadStream(bundlePath);
  input.on('error', (err) => extract.destroy(err));
  input.pipe(extract);
  try {
    for await (const entry of extract) {
      const { name, size = 0 } = entry.header;
      if (name !== MANIFEST_NAME) throw refuse(name, `the first member must be ${MANIFEST_NAME}`);
      if (size > MAX_MANIFEST_SIZE) throw refuse(name, `larger than ${MAX_MANIFEST_SIZE} bytes`, ErrorCode.ZIP_LIMIT_EXCEEDED);
      const chunks: Buffer[] = [];
      for await (const c of entry) chunks.push(c as Buffer);
      const bytes = Buffer.concat(chunks);
      return { manifest: parseManifest(bytes), sha256: createHash('sha256').update(bytes).digest('hex') };
    }
    throw refuse(MANIFEST_NAME, 'the bundle is empty');
  } catch (err) {
    if (err instanceof ProvkitError) throw err;
    throw new ProvkitError(ErrorCode.IO, `cannot read bundle ${bundlePath}: ${err instanceof Error ? err.message : String(err)}`, { file: bundlePath, cause: err });
  } finally {
    input.destroy();
    extract.destroy();
  }
}

/** See the module comment. */
export async function importBundle(options: BundleImportOptions): Promise<BundleImportOutcome> {
  const target = resolve(options.targetDir);
  const maxSize = options.maxMemberSize ?? DEFAULT_MAX_MEMBER_SIZE;
  await mkdir(dirname(target), { recursive: true });
  const staging = await mkdtemp(join(dirname(target), `.${basename(target)}.import-`));
  try {
    const manifest = await unpackVerified(options.bundlePath, staging, maxSize);
    const lockFile = await verifyPackages(manifest, staging, options);
    const plan = await planMerge(manifest, staging, target);
    // Step 4: nothing before this line writes into the target.
    for (const rel of plan.added) {
      await mkdir(dirname(join(target, rel)), { recursive: true });
      await rename(join(staging, rel), join(target, rel));
    }
    for (const [rel, text] of plan.docs) {
      await mkdir(dirname(join(target, rel)), { recursive: true });
      await writeFileAtomic(join(target, rel), Buffer.from(text));
    }
    return { manifest, added: plan.added, present: plan.present, indexes: plan.docs.map(([rel]) => rel), lockFile };
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/** Step 1. */
async function unpackVerified(bundlePath: string, staging: string, maxSize: number): Promise<BundleManifest> {
  const extract = tar.extract();
  const input = createReadStream(bundlePath);
  input.on('error', (err) => extract.destroy(err));
  input.pipe(extract);
  let manifest: BundleManifest | undefined;
  const listed = new Map<string, { size: number; sha256: string }>();
  const seen = new Set<string>();
  try {
    for await (const entry of extract) {
      const h = entry.header;
      const name = h.name;
      const size = h.size ?? 0;
      if (h.type !== 'file' && h.type !== 'contiguous-file') {
        throw refuse(name, `is a ${h.type ?? 'special entry'}${h.linkname ? ` to ${JSON.stringify(h.linkname)}` : ''}; a bundle holds only regular files`, ErrorCode.BUNDLE_TARGET_CONFLICT);
      }
      if (manifest === undefined) {
        if (name !== MANIFEST_NAME) throw refuse(name, `the first member must be ${MANIFEST_NAME}`);
        if (size > MAX_MANIFEST_SIZE) throw refuse(name, `is ${size} bytes, more than the limit of ${MAX_MANIFEST_SIZE}`, ErrorCode.ZIP_LIMIT_EXCEEDED);
        const chunks: Buffer[] = [];
        for await (const c of entry) chunks.push(c as Buffer);
        manifest = parseManifest(Buffer.concat(chunks));
        for (const m of manifest.members) {
          const why = unsafeMemberName(m.name);
          if (why !== undefined) throw refuse(m.name, `is listed in the manifest with ${why}`, why.includes('absolute') ? ErrorCode.ZIP_ABSOLUTE_PATH : ErrorCode.ZIP_PATH_TRAVERSAL);
          if (m.name === MANIFEST_NAME || listed.has(m.name)) throw refuse(m.name, 'is listed twice in the manifest');
          if (m.name !== BUNDLE_LOCK_NAME && m.name.split('/').length !== 4) throw refuse(m.name, 'is not a lock file or a HOST/NS/TYPE/FILE mirror member');
          listed.set(m.name, m);
        }
        seen.add(MANIFEST_NAME);
        continue;
      }
      const why = unsafeMemberName(name);
      if (why !== undefined) throw refuse(name, `has ${why}`, why.includes('absolute') ? ErrorCode.ZIP_ABSOLUTE_PATH : ErrorCode.ZIP_PATH_TRAVERSAL);
      if (seen.has(name)) throw refuse(name, 'appears twice in the bundle');
      seen.add(name);
      const want = listed.get(name);
      if (!want) throw refuse(name, 'is not listed in the manifest');
      if (size > maxSize) throw refuse(name, `is ${size} bytes, more than the limit of ${maxSize}`, ErrorCode.ZIP_LIMIT_EXCEEDED);
      if (size !== want.size) throw refuse(name, `is ${size} bytes; the manifest says ${want.size}`, ErrorCode.CHECKSUM_MISMATCH, { expected: String(want.size), found: String(size) });
      const dest = join(staging, name);
      await mkdir(dirname(dest), { recursive: true });
      const sha = createHash('sha256');
      let count = 0;
      await pipeline(
        entry,
        new Transform({
          transform(chunk: Buffer, _enc, cb) {
            count += chunk.length;
            if (count > size) return cb(refuse(name, 'holds more bytes than its header says', ErrorCode.ZIP_SIZE));
            sha.update(chunk);
            cb(null, chunk);
          },
        }),
        createWriteStream(dest, { flags: 'wx', mode: 0o644 }),
      );
      const got = sha.digest('hex');
      if (got !== want.sha256) throw refuse(name, 'does not match the SHA-256 the manifest lists', ErrorCode.CHECKSUM_MISMATCH, { expected: want.sha256, found: got });
    }
  } catch (err) {
    if (err instanceof ProvkitError) throw err;
    throw new ProvkitError(ErrorCode.IO, `cannot read bundle ${bundlePath}: ${err instanceof Error ? err.message : String(err)}`, { file: bundlePath, cause: err });
  } finally {
    input.destroy();
    extract.destroy();
  }
  if (manifest === undefined) throw refuse(MANIFEST_NAME, 'is missing: the bundle is empty');
  for (const name of listed.keys()) if (!seen.has(name)) throw refuse(name, 'is listed in the manifest but missing from the bundle');
  return manifest;
}

/** Step 2; returns the bundle's lock-file bytes. */
async function verifyPackages(manifest: BundleManifest, staging: string, options: BundleImportOptions): Promise<Buffer> {
  const members = new Map(manifest.members.map((m) => [m.name, m]));
  if (!members.has(BUNDLE_LOCK_NAME)) throw refuse(BUNDLE_LOCK_NAME, 'is missing: a bundle carries its lock entries');
  const lockFile = await readFile(join(staging, BUNDLE_LOCK_NAME));
  const lock = parseLockFile(lockFile, BUNDLE_LOCK_NAME, options.flavor);
  if (hasErrors(lock.diagnostics)) throw refuse(BUNDLE_LOCK_NAME, `does not parse: ${lock.diagnostics.map((d) => d.summary).join('; ')}`);

  /** The verified hashes of each package member, by member name. */
  const verified = new Map<string, Set<string>>();
  const packageMembers = new Set<string>();
  await Promise.all(
    manifest.providers.flatMap((p) =>
      p.packages.map(async (k) => {
        const m = members.get(k.path);
        if (!m) return; // held by the `since` bundle
        packageMembers.add(k.path);
        const ctx = { provider: p.source, version: p.version, platform: k.platform };
        if (dirname(k.path) !== p.source) {
          throw refuse(k.path, `is not in the directory of ${p.source}`);
        }
        const z = await options.pool.hashZip(join(staging, k.path));
        const got = { zh: z.zh.text, h1: z.h1.ok ? z.h1.hash.text : '', h1Zip: z.h1Zip.ok ? z.h1Zip.hash.text : '' };
        for (const form of ['zh', 'h1', 'h1Zip'] as const) {
          if (got[form] !== k[form]) {
            throw new ProvkitError(ErrorCode.CHECKSUM_MISMATCH, `bundle member ${JSON.stringify(k.path)}: the package does not match its ${form} hash in the manifest`, {
              entry: k.path,
              ...ctx,
              expected: k[form],
              found: got[form],
            });
          }
        }
        if (`zh:${m.sha256}` !== got.zh) throw refuse(k.path, 'its zh: hash differs from its member SHA-256', ErrorCode.CHECKSUM_MISMATCH);
        const mine = new Set([got.zh, got.h1, got.h1Zip]);
        verified.set(k.path, mine);
        const entry = lock.locks.all().find((l) => l.provider.toString() === p.source);
        if (!entry || entry.version.toString() !== p.version || !entry.hashes.some((h) => mine.has(h.text))) {
          throw refuse(k.path, `has no matching entry for ${p.source} ${p.version} in the bundle's lock file`, ErrorCode.LOCKFILE_CHECKSUM_MISMATCH);
        }
        if (options.trustedLocks) {
          const t = options.trustedLocks.all().find((l) => l.provider.toString() === p.source);
          if (!t || t.version.toString() !== p.version || !t.hashes.some((h) => mine.has(h.text))) {
            throw new ProvkitError(
              ErrorCode.LOCKFILE_CHECKSUM_MISMATCH,
              `bundle member ${JSON.stringify(k.path)}: ${p.source} ${p.version} for ${k.platform} does not match any checksum of the trusted lock file`,
              { entry: k.path, ...ctx },
            );
          }
        }
      }),
    ),
  );
  for (const m of manifest.members) {
    if (m.name === BUNDLE_LOCK_NAME || packageMembers.has(m.name)) continue;
    const file = basename(m.name);
    const dir = dirname(m.name);
    if (file === 'index.json') {
      const doc = await readDoc(join(staging, m.name), m.name);
      const versions = doc['versions'];
      if (!isObj(versions)) throw refuse(m.name, 'has no "versions" object');
      for (const v of Object.keys(versions)) if (!members.has(`${dir}/${v}.json`)) throw refuse(m.name, `lists version ${v}, whose ${v}.json is not in the bundle`);
    } else if (file.endsWith('.json')) {
      const doc = await readDoc(join(staging, m.name), m.name);
      const archives = doc['archives'];
      if (!isObj(archives)) throw refuse(m.name, 'has no "archives" object');
      for (const [platform, a] of Object.entries(archives)) {
        if (!isObj(a) || typeof a['url'] !== 'string' || !Array.isArray(a['hashes'])) throw refuse(m.name, `archive ${platform} needs "url" and "hashes"`);
        const pkg = `${dir}/${a['url']}`;
        const mine = verified.get(pkg);
        if (!mine) throw refuse(m.name, `archive ${platform} points at ${JSON.stringify(a['url'])}, which is not a package of this bundle`);
        for (const h of a['hashes']) {
          if (typeof h !== 'string' || !mine.has(h)) throw refuse(m.name, `lists ${JSON.stringify(h)} for ${platform}, which does not match the package`, ErrorCode.CHECKSUM_MISMATCH);
        }
      }
    } else {
      throw refuse(m.name, 'is not a package of the manifest, an index.json or a VERSION.json');
    }
  }
  return lockFile;
}

const isObj = (v: unknown): v is Record<string, GoJSON> => typeof v === 'object' && v !== null && !Array.isArray(v);

async function readDoc(path: string, name: string): Promise<Record<string, GoJSON>> {
  let doc: unknown;
  try {
    doc = JSON.parse(await readFile(path, 'utf8'));
  } catch (err) {
    throw refuse(name, `is not JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!isObj(doc)) throw refuse(name, 'is not a JSON object');
  return doc;
}

interface MergePlan {
  readonly added: string[];
  readonly present: string[];
  /** Relative path → new contents; VERSION.json documents before index.json ones. */
  readonly docs: Array<[string, string]>;
}

async function sha256Of(path: string): Promise<string> {
  const sha = createHash('sha256');
  for await (const c of createReadStream(path)) sha.update(c as Buffer);
  return sha.digest('hex');
}

/** Step 3: reads the target, writes nothing. */
async function planMerge(manifest: BundleManifest, staging: string, target: string): Promise<MergePlan> {
  const added: string[] = [];
  const present: string[] = [];
  const versionDocs: Array<[string, string]> = [];
  const indexDocs: Array<[string, string]> = [];
  const existing = async (rel: string): Promise<'file' | 'none' | 'other'> => {
    try {
      const st = await lstat(join(target, rel));
      return st.isFile() ? 'file' : 'other';
    } catch (err) {
      if (systemErrorCode(err) === 'ENOENT') return 'none';
      throw err;
    }
  };
  const checkedDirs = new Set<string>();
  for (const m of manifest.members) {
    if (m.name === BUNDLE_LOCK_NAME) continue;
    // Nothing may be written through a symlink below the target (HOST, NS or TYPE directories).
    const parts = m.name.split('/');
    for (let i = 1; i < parts.length; i++) {
      const rel = parts.slice(0, i).join('/');
      if (checkedDirs.has(rel)) continue;
      checkedDirs.add(rel);
      const kind = await existing(rel);
      if (kind === 'other') {
        const st = await lstat(join(target, rel));
        if (!st.isDirectory()) throw new ProvkitError(ErrorCode.BUNDLE_TARGET_CONFLICT, `${join(target, rel)} is not a directory (a symlink or special file); bundle member ${JSON.stringify(m.name)} cannot go there`, { file: join(target, rel), entry: m.name });
      } else if (kind === 'file') {
        throw new ProvkitError(ErrorCode.BUNDLE_TARGET_CONFLICT, `${join(target, rel)} is a file where bundle member ${JSON.stringify(m.name)} needs a directory`, { file: join(target, rel), entry: m.name });
      }
    }
    const kind = await existing(m.name);
    if (kind === 'other') throw new ProvkitError(ErrorCode.BUNDLE_TARGET_CONFLICT, `${join(target, m.name)} exists and is not a regular file`, { file: join(target, m.name), entry: m.name });
    const file = basename(m.name);
    if (!file.endsWith('.json')) {
      if (kind === 'none') added.push(m.name);
      else if ((await sha256Of(join(target, m.name))) === m.sha256) present.push(m.name);
      else {
        throw new ProvkitError(ErrorCode.CHECKSUM_MISMATCH, `${join(target, m.name)} already exists with different bytes than bundle member ${JSON.stringify(m.name)}`, {
          file: join(target, m.name),
          entry: m.name,
          expected: m.sha256,
        });
      }
      continue;
    }
    const mine = await readDoc(join(staging, m.name), m.name);
    const theirs = kind === 'file' ? await readTargetDoc(join(target, m.name)) : {};
    if (file === 'index.json') {
      const versions: Record<string, GoJSON> = { ...(isObj(theirs['versions']) ? theirs['versions'] : {}), ...(mine['versions'] as Record<string, GoJSON>) };
      indexDocs.push([m.name, goMarshalIndent({ ...theirs, versions })]);
    } else {
      const archives: Record<string, GoJSON> = { ...(isObj(theirs['archives']) ? theirs['archives'] : {}) };
      for (const [platform, a] of Object.entries(mine['archives'] as Record<string, Record<string, GoJSON>>)) {
        const old = archives[platform];
        const hashes = (a['hashes'] as string[]).slice();
        if (isObj(old) && old['url'] === a['url'] && Array.isArray(old['hashes'])) hashes.push(...old['hashes'].filter((h): h is string => typeof h === 'string'));
        archives[platform] = { hashes: normalizeHashes(hashes.map(parseHash)).map((h) => h.text), url: a['url']! };
      }
      versionDocs.push([m.name, goMarshalIndent({ ...theirs, archives })]);
    }
  }
  return { added, present, docs: [...versionDocs, ...indexDocs] };
}

async function readTargetDoc(path: string): Promise<Record<string, GoJSON>> {
  let doc: unknown;
  try {
    doc = JSON.parse(await readFile(path, 'utf8'));
  } catch (err) {
    throw new ProvkitError(ErrorCode.INVALID_RESPONSE, `cannot merge into ${path}: ${err instanceof Error ? err.message : String(err)}`, { file: path, cause: err });
  }
  if (!isObj(doc)) throw new ProvkitError(ErrorCode.INVALID_RESPONSE, `cannot merge into ${path}: not a JSON object`, { file: path });
  return doc;
}
