/**
 * `bundle import`: all or nothing, one run per target at a time.
 *
 * 0. Take the target's mirror mutex (`TARGET/.provkit-mirror.lock`, the one
 *    `mirror` takes, see ../mirror.ts): imports and mirror runs into one
 *    target serialize, so each reads the indexes the previous one wrote (two
 *    concurrent imports lost a version from index.json). Under the mutex, any
 *    staging directory in the target (`.provkit-staging-*`) is the leftover of
 *    a killed run, an import's or a mirror's, and is removed: nothing alive
 *    can own it.
 * 1. Check the manifest (the first member) before anything is written: each
 *    provider is a canonical `HOST/NS/TYPE` with a version; each package's
 *    member name is exactly `HOST/NS/TYPE/terraform-provider-TYPE_VERSION_OS_ARCH.zip`
 *    for its provider, version and platform; the other members can only be
 *    the lock entries, `HOST/NS/TYPE/index.json` and `HOST/NS/TYPE/VERSION.json`
 *    of a listed provider and version (no hidden or other names).
 * 2. Stream the tar into a staging directory inside the target (one file
 *    system, so step 5 is renames), refusing as it goes: every other member
 *    must be a regular file with a safe name, listed, present once, of the
 *    listed size (at most `maxMemberSize`) and SHA-256. A tar that ends inside
 *    a member is named as truncated.
 * 3. Verify every package as `provkit hash` does (same refusals and error
 *    codes: traversal and absolute entries, non-zips, archive limits), and
 *    against its identity: `zh:` and both `h1:` forms as the manifest lists
 *    them, its VERSION.json entry (platform, file name, hashes), the
 *    bundle's lock entry for its provider and version, and the caller's
 *    `trustedLocks` (the real trust anchor: a lock file that did not travel
 *    with the bundle). One package's bytes cannot be listed under two names.
 * 4. Plan the merge: a package already in the target must have the same
 *    bytes; existing `index.json`/`VERSION.json` must parse. Merged indexes
 *    are unions, rebuilt from the verified data.
 * 5. Only then touch the target: packages are renamed into place, then
 *    VERSION.json and index.json written atomically.
 *
 * Any refusal, failure or interrupt before step 5 leaves the target as it
 * was (a target the run created is removed again); the staging directory is
 * removed however the run ends (src/fs/cleanup.ts covers `process.exit`,
 * the next run under the mutex covers SIGKILL). Errors name the bundle and
 * the member, never a staging path.
 */
/* eslint-disable no-await-in-loop -- tar members are written and read one after another, in order; moves and index writes are ordered on purpose */
import { createHash } from 'node:crypto';
import { createReadStream, open as openFd } from 'node:fs';
import { lstat, mkdir, open, readFile, rename, rm, rmdir, stat } from 'node:fs/promises';
import { Socket } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { promisify } from 'node:util';

import tar from 'tar-stream';

import {
  type Flavor,
  parsePlatform,
  type ProviderAddress,
  tryParseProviderSource,
  tryParseVersion,
  type Version,
} from '../addresses/index.js';
import {
  ErrorCode,
  errorText,
  fileError,
  isProvkitError,
  ProvkitError,
  renameFileInError,
  systemErrorCode,
  writeError,
} from '../errors.js';
import { writeFileAtomic } from '../fs/atomic.js';
import { removeOnExit } from '../fs/cleanup.js';
import { acquireDirMutex, type DirMutex, type DirMutexOptions } from '../fs/dir-mutex.js';
import { makeDirectory } from '../fs/target.js';
import { compareBytewise, goMarshalIndent, type GoJSON, isRecord } from '../go/index.js';
import { removeTempsIn, tempPathIn } from '../fs/temp-name.js';
import { type HashPool, normalizeHashes, parseHash } from '../hashing/index.js';
import { packedFileName, providerDirPath } from '../layout/index.js';
import { hasErrors, type Locks, parseLockFile } from '../lockfile/index.js';
import { MIRROR_MUTEX_FILE, MIRROR_STAGING_PREFIX } from '../installer/mirror.js';
import { abortable, withSignal } from '../installer/abort.js';
import {
  BUNDLE_LOCK_NAME,
  type BundleManifest,
  MANIFEST_NAME,
  MAX_MANIFEST_SIZE,
  parseManifest,
  unsafeMemberName,
} from './manifest.js';
import { readRegularFile } from '../fs/read.js';

/** Default largest member: 2 GiB (provider packages are far smaller). */
export const DEFAULT_MAX_MEMBER_SIZE = 2 * 1024 ** 3;

/** How {@link importBundle} unpacks an air-gap bundle into a filesystem mirror (docs/bundles.md). */
export interface BundleImportOptions {
  /** The bundle's tar file, as `createBundle` wrote it. */
  readonly bundlePath: string;
  /**
   * The filesystem mirror to import into (created when missing); packages land in the packed layout with the
   * mirror's index files.
   */
  readonly targetDir: string;
  /** Hashes the packages; its archive limits apply (as for `provkit hash`). */
  readonly pool: HashPool;
  /** The flavor: lock-file rules and the words of messages. */
  readonly flavor: Flavor;
  /**
   * The largest member of the bundle accepted, in bytes (default {@link DEFAULT_MAX_MEMBER_SIZE}, 2 GiB): a larger
   * one refuses the bundle before anything is written.
   */
  readonly maxMemberSize?: number;
  /** A lock file every package must match (by `zh:` or `h1:`), for the provider and version it is bundled as. */
  readonly trustedLocks?: Locks;
  /** Stops the import (nothing is changed in the target; ABORTED is thrown). */
  readonly signal?: AbortSignal;
  /** Tuning of the target's mutex (the one `mirror` takes); `onWait` tells that another run holds it. */
  readonly targetMutex?: Omit<DirMutexOptions, 'signal'>;
}

/** What {@link importBundle} did (the target is changed all or nothing: every package and index in place, or none). */
export interface BundleImportOutcome {
  /** The bundle's manifest (what it holds, who made it and when). */
  readonly manifest: BundleManifest;
  /** Packages moved into the target. */
  readonly added: readonly string[];
  /** Packages the target already had, byte for byte. */
  readonly present: readonly string[];
  /** Index documents written (relative to the target). */
  readonly indexes: readonly string[];
  /**
   * Packages a delta bundle (`manifest.since`) leaves out, to come from the
   * bundle it was made against, that the target does not hold: import that
   * bundle too (sorted; empty when none is missing or for a full bundle).
   */
  readonly missingFromBase: readonly string[];
  /** The bundle's lock-file entries (`.terraform.lock.hcl` bytes). */
  readonly lockFile: Buffer;
}

function refuse(
  member: string,
  message: string,
  code: ErrorCode = ErrorCode.BUNDLE_MEMBER_REFUSED,
  extra: { expected?: string; found?: string } = {},
): ProvkitError {
  return new ProvkitError(code, `bundle member ${JSON.stringify(member)}: ${message}`, { entry: member, ...extra });
}

function aborted(): ProvkitError {
  return new ProvkitError(ErrorCode.ABORTED, 'bundle import was interrupted');
}

/**
 * The bytes of a bundle. A regular file is read as usual. A pipe
 * (`bundle import <(curl …) DIR`, /dev/stdin) is read through the event
 * loop: a file-stream read on a pipe waits in a thread that nothing can
 * stop, and an interrupted import would then not exit until the writer
 * closed it.
 *
 * @throws {ProvkitError} NOT_FOUND, IO naming the bundle
 */
async function openBundle(bundlePath: string): Promise<Readable> {
  const st = await stat(bundlePath).catch((err: unknown) =>
    Promise.reject(fileError(err, 'cannot read bundle', bundlePath)),
  );
  if (!st.isFIFO()) return createReadStream(bundlePath);
  const fd = await promisify(openFd)(bundlePath, 'r').catch((err: unknown) =>
    Promise.reject(fileError(err, 'cannot read bundle', bundlePath)),
  );
  // libuv makes the descriptor non-blocking and polls it.
  return new Socket({ fd, readable: true, writable: false });
}

/** Reads only the manifest of a bundle (for `-since` and inspection). */
export async function readBundleManifest(bundlePath: string): Promise<{ manifest: BundleManifest; sha256: string }> {
  const extract = tar.extract();
  const input = await openBundle(bundlePath);
  let inputError: unknown;
  input.on('error', (err) => {
    inputError = err;
    extract.destroy(err);
  });
  input.pipe(extract);
  try {
    for await (const entry of extract) {
      const { name, size = 0 } = entry.header;
      if (name !== MANIFEST_NAME) throw refuse(name, `the first member must be ${MANIFEST_NAME}`);
      if (size > MAX_MANIFEST_SIZE)
        throw refuse(name, `larger than ${MAX_MANIFEST_SIZE} bytes`, ErrorCode.ZIP_LIMIT_EXCEEDED);
      const chunks: Buffer[] = [];
      for await (const c of entry) chunks.push(c as Buffer);
      const bytes = Buffer.concat(chunks);
      return { manifest: parseManifest(bytes), sha256: createHash('sha256').update(bytes).digest('hex') };
    }
    throw refuse(MANIFEST_NAME, 'the bundle is empty');
  } catch (err) {
    if (err instanceof ProvkitError) throw err;
    if (inputError !== undefined) throw fileError(inputError, 'cannot read bundle', bundlePath);
    throw new ProvkitError(
      ErrorCode.BUNDLE_INVALID,
      `cannot read bundle ${bundlePath}: it is truncated or not a tar (${errorText(err)})`,
      { file: bundlePath, cause: err },
    );
  } finally {
    input.destroy();
    extract.destroy();
  }
}

/** What the manifest says one package is; checked against its name before anything is written. */
interface PackageIdentity {
  readonly provider: ProviderAddress;
  /** `HOST/NS/TYPE` (display form, as the manifest and the mirror write it). */
  readonly source: string;
  readonly version: Version;
  readonly platform: string;
  readonly path: string;
  readonly zh: string;
  readonly h1: string;
  readonly h1Zip: string;
}

/** One provider of the manifest, checked. */
interface ProviderIdentity {
  readonly provider: ProviderAddress;
  readonly source: string;
  readonly version: Version;
  /** Packages by platform (members of this bundle or of the `since` one). */
  readonly packages: Map<string, PackageIdentity>;
}

/** The manifest after step 1. */
interface CheckedManifest {
  readonly manifest: BundleManifest;
  readonly providers: Map<string, ProviderIdentity>;
  /** Every member other than the manifest, by name. */
  readonly members: Map<string, { size: number; sha256: string }>;
}

/** Step 1: identities and names; throws on the first problem. */
function checkManifest(manifest: BundleManifest, flavor: Flavor): CheckedManifest {
  const providers = new Map<string, ProviderIdentity>();
  const byPath = new Map<string, PackageIdentity>();
  manifest.providers.forEach((p, i) => {
    const where = `the manifest's provider ${JSON.stringify(p.source)}`;
    const parsed = tryParseProviderSource(p.source, flavor);
    if (!parsed.ok || providerDirPath(parsed.address) !== p.source) {
      throw new ProvkitError(
        ErrorCode.BUNDLE_INVALID,
        `invalid bundle manifest: providers[${i}]: ${JSON.stringify(p.source)} is not a provider address in the mirror's HOST/NS/TYPE form`,
        { file: MANIFEST_NAME },
      );
    }
    const v = tryParseVersion(p.version, flavor);
    if (!v.ok || v.version.toString() !== p.version) {
      throw new ProvkitError(
        ErrorCode.BUNDLE_INVALID,
        `invalid bundle manifest: ${where} has the invalid version ${JSON.stringify(p.version)}`,
        { file: MANIFEST_NAME, provider: p.source },
      );
    }
    if (providers.has(p.source))
      throw new ProvkitError(ErrorCode.BUNDLE_INVALID, `invalid bundle manifest: ${where} is listed twice`, {
        file: MANIFEST_NAME,
        provider: p.source,
      });
    const entry: ProviderIdentity = {
      provider: parsed.address,
      source: p.source,
      version: v.version,
      packages: new Map(),
    };
    providers.set(p.source, entry);
    for (const k of p.packages) {
      let platformText: string;
      try {
        platformText = parsePlatform(k.platform).toString();
      } catch {
        platformText = '';
      }
      if (platformText !== k.platform)
        throw refuse(k.path, `is listed for the invalid platform ${JSON.stringify(k.platform)}`);
      const platform = parsePlatform(k.platform);
      // The name is what a mirror reads the version and platform from: it must say what the manifest says.
      const expected = `${p.source}/${packedFileName(parsed.address, v.version, platform)}`;
      if (k.path !== expected) {
        throw refuse(
          k.path,
          `is listed as ${p.source} ${p.version} for ${k.platform}, whose package must be named ${JSON.stringify(expected)}`,
          ErrorCode.BUNDLE_MEMBER_REFUSED,
          {
            expected,
            found: k.path,
          },
        );
      }
      if (entry.packages.has(k.platform) || byPath.has(k.path)) throw refuse(k.path, 'is listed twice in the manifest');
      const pkg: PackageIdentity = {
        provider: parsed.address,
        source: p.source,
        version: v.version,
        platform: k.platform,
        path: k.path,
        zh: k.zh,
        h1: k.h1,
        h1Zip: k.h1Zip,
      };
      entry.packages.set(k.platform, pkg);
      byPath.set(k.path, pkg);
    }
  });

  const members = new Map<string, { size: number; sha256: string }>();
  for (const m of manifest.members) {
    const why = unsafeMemberName(m.name);
    if (why !== undefined)
      throw refuse(
        m.name,
        `is listed in the manifest with ${why}`,
        why.includes('absolute') ? ErrorCode.ZIP_ABSOLUTE_PATH : ErrorCode.ZIP_PATH_TRAVERSAL,
      );
    if (m.name === MANIFEST_NAME || members.has(m.name)) throw refuse(m.name, 'is listed twice in the manifest');
    members.set(m.name, m);
    if (m.name === BUNDLE_LOCK_NAME || byPath.has(m.name)) continue;
    // Only the mirror layout's documents of a listed provider and version: nothing hidden, nothing else.
    const slash = m.name.lastIndexOf('/');
    const dir = m.name.slice(0, slash);
    const file = m.name.slice(slash + 1);
    const p = providers.get(dir);
    if (p === undefined || (file !== 'index.json' && file !== `${p.version.toString()}.json`)) {
      throw refuse(
        m.name,
        `is not a package, index.json or VERSION.json of a provider the manifest lists (only ${BUNDLE_LOCK_NAME}, HOST/NS/TYPE/index.json, HOST/NS/TYPE/VERSION.json and the packages may be imported)`,
      );
    }
  }
  // A provider's packages in this bundle come with its two documents.
  for (const p of providers.values()) {
    const fresh = [...p.packages.values()].filter((k) => members.has(k.path));
    if (fresh.length === 0) continue;
    for (const doc of ['index.json', `${p.version.toString()}.json`]) {
      if (!members.has(`${p.source}/${doc}`))
        throw refuse(
          `${p.source}/${doc}`,
          `is missing: the bundle holds packages of ${p.source} ${p.version.toString()}`,
        );
    }
  }
  return { manifest, providers, members };
}

/** See the module comment. */
export async function importBundle(options: BundleImportOptions): Promise<BundleImportOutcome> {
  return abortable('bundle import', options.signal, (signal, committed) =>
    importWith(withSignal(options, signal), committed),
  );
}

async function importWith(options: BundleImportOptions, markCommitted: () => void): Promise<BundleImportOutcome> {
  const target = resolve(options.targetDir);
  const maxSize = options.maxMemberSize ?? DEFAULT_MAX_MEMBER_SIZE;
  const targetExisted = (await stat(target).catch(() => undefined)) !== undefined;
  try {
    await makeDirectory(target, 'cannot import into');
  } catch (err) {
    throw targetError(err, target);
  }
  const staging = tempPathIn(target, MIRROR_STAGING_PREFIX);
  let forgetStaging: (() => void) | undefined;
  let mutex: DirMutex | undefined;
  let committed = false;
  try {
    try {
      mutex = await acquireDirMutex(join(target, MIRROR_MUTEX_FILE), {
        ...options.targetMutex,
        ...(options.signal ? { signal: options.signal } : {}),
      });
      // Under the mutex, any staging directory is a killed run's leftover.
      await removeTempsIn(target, MIRROR_STAGING_PREFIX);
      forgetStaging = removeOnExit(staging);
      await mkdir(staging, 0o755);
    } catch (err) {
      throw targetError(err, target);
    }
    const checked = await unpackVerified(options, staging, target, maxSize);
    const lockFile = await verifyPackages(checked, staging, options);
    const plan = await planMerge(checked, target);
    if (options.signal?.aborted) throw aborted();
    // Step 5: nothing before this line writes into the target (but for the staging directory).
    try {
      for (const rel of plan.added) {
        await mkdir(dirname(join(target, rel)), { recursive: true, mode: 0o755 });
        await rename(join(staging, rel), join(target, rel));
      }
      for (const [rel, text] of plan.docs) {
        await mkdir(dirname(join(target, rel)), { recursive: true, mode: 0o755 });
        await writeFileAtomic(join(target, rel), Buffer.from(text));
      }
    } catch (err) {
      throw targetError(err, target);
    }
    committed = true;
    markCommitted();
    return {
      manifest: checked.manifest,
      added: plan.added,
      present: plan.present,
      indexes: plan.docs.map(([rel]) => rel),
      missingFromBase: plan.missingFromBase,
      lockFile,
    };
  } finally {
    if (forgetStaging) {
      await rm(staging, { recursive: true, force: true }).catch(() => undefined);
      forgetStaging();
    }
    await mutex?.release().catch(() => undefined);
    if (!committed && !targetExisted) await rmdir(target).catch(() => undefined);
  }
}

/**
 * Steps 1 to 3 only, into `staging` (an empty directory the caller owns and
 * removes): the bundle's members, checked and their packages verified, form a
 * packed filesystem mirror there. `bundle import … oci://…` publishes from it
 * (bundles/import-oci.ts). `place` is what errors writing `staging` name (a
 * place the user knows, never the staging path).
 */
export async function unpackAndVerifyBundle(
  options: Pick<BundleImportOptions, 'bundlePath' | 'pool' | 'flavor' | 'maxMemberSize' | 'trustedLocks' | 'signal'>,
  staging: string,
  place: string,
): Promise<{ manifest: BundleManifest; lockFile: Buffer }> {
  const full: BundleImportOptions = { ...options, targetDir: place };
  const checked = await unpackVerified(full, staging, place, options.maxMemberSize ?? DEFAULT_MAX_MEMBER_SIZE);
  const lockFile = await verifyPackages(checked, staging, full);
  return { manifest: checked.manifest, lockFile };
}

/**
 * A failure writing the target as the user reads it: `cannot import into
 * TARGET: read-only file system` (a system error behind a mutex-file error
 * too), with a hint, whatever staging or mutex file it happened to.
 */
function targetError(err: unknown, target: string): unknown {
  if (isProvkitError(err, ErrorCode.ABORTED) || isProvkitError(err, ErrorCode.MUTEX_TIMEOUT)) return err;
  const cause = err instanceof ProvkitError ? err.cause : err;
  if (systemErrorCode(cause) !== undefined)
    return writeError(cause, 'cannot import into', target, 'Cannot write into the import directory');
  return err;
}

/** Step 1 and 2. */
async function unpackVerified(
  options: BundleImportOptions,
  staging: string,
  target: string,
  maxSize: number,
): Promise<CheckedManifest> {
  const { bundlePath, signal } = options;
  const extract = tar.extract();
  const input = await openBundle(bundlePath);
  let inputError: unknown;
  input.on('error', (err) => {
    inputError = err;
    extract.destroy(err);
  });
  const onAbort = (): void => {
    extract.destroy(aborted());
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  input.pipe(extract);
  let checked: CheckedManifest | undefined;
  const seen = new Set<string>();
  /** The member being read, to name where a truncated tar ends. */
  let current: string | undefined;
  try {
    for await (const entry of extract) {
      const h = entry.header;
      const name = h.name;
      const size = h.size ?? 0;
      current = name;
      if (h.type !== 'file' && h.type !== 'contiguous-file') {
        throw refuse(
          name,
          `is a ${h.type ?? 'special entry'}${h.linkname ? ` to ${JSON.stringify(h.linkname)}` : ''}; a bundle holds only regular files`,
          ErrorCode.BUNDLE_TARGET_CONFLICT,
        );
      }
      if (checked === undefined) {
        if (name !== MANIFEST_NAME) throw refuse(name, `the first member must be ${MANIFEST_NAME}`);
        if (size > MAX_MANIFEST_SIZE)
          throw refuse(
            name,
            `is ${size} bytes, more than the limit of ${MAX_MANIFEST_SIZE}`,
            ErrorCode.ZIP_LIMIT_EXCEEDED,
          );
        const chunks: Buffer[] = [];
        for await (const c of entry) chunks.push(c as Buffer);
        checked = checkManifest(parseManifest(Buffer.concat(chunks)), options.flavor);
        seen.add(MANIFEST_NAME);
        current = undefined;
        continue;
      }
      const why = unsafeMemberName(name);
      if (why !== undefined)
        throw refuse(
          name,
          `has ${why}`,
          why.includes('absolute') ? ErrorCode.ZIP_ABSOLUTE_PATH : ErrorCode.ZIP_PATH_TRAVERSAL,
        );
      if (seen.has(name)) throw refuse(name, 'appears twice in the bundle');
      seen.add(name);
      const want = checked.members.get(name);
      if (!want) throw refuse(name, 'is not listed in the manifest');
      if (size > maxSize)
        throw refuse(name, `is ${size} bytes, more than the limit of ${maxSize}`, ErrorCode.ZIP_LIMIT_EXCEEDED);
      if (size !== want.size)
        throw refuse(name, `is ${size} bytes; the manifest says ${want.size}`, ErrorCode.CHECKSUM_MISMATCH, {
          expected: String(want.size),
          found: String(size),
        });
      const dest = join(staging, name);
      const sha = createHash('sha256');
      let count = 0;
      let fh;
      try {
        await mkdir(dirname(dest), { recursive: true, mode: 0o755 });
        fh = await open(dest, 'wx', 0o644);
      } catch (err) {
        throw fileError(err, 'cannot import into', target);
      }
      try {
        // The entry is read with for-await: a tar that ends inside it
        // throws here (a stream pipeline would wait for it forever).
        for await (const c of entry) {
          const chunk = c as Buffer;
          count += chunk.length;
          if (count > size) throw refuse(name, 'holds more bytes than its header says', ErrorCode.ZIP_SIZE);
          sha.update(chunk);
          try {
            await fh.write(chunk);
          } catch (err) {
            throw fileError(err, 'cannot import into', target);
          }
        }
      } finally {
        await fh.close();
      }
      const got = sha.digest('hex');
      if (got !== want.sha256)
        throw refuse(name, 'does not match the SHA-256 the manifest lists', ErrorCode.CHECKSUM_MISMATCH, {
          expected: want.sha256,
          found: got,
        });
      current = undefined;
    }
  } catch (err) {
    if (signal?.aborted) throw aborted();
    if (err instanceof ProvkitError) throw err;
    if (inputError !== undefined) throw fileError(inputError, 'cannot read bundle', bundlePath);
    const why = errorText(err);
    throw new ProvkitError(
      ErrorCode.BUNDLE_INVALID,
      current === undefined
        ? `cannot read bundle ${bundlePath}: it is truncated or not a tar (${why})`
        : `cannot read bundle ${bundlePath}: it ends inside member ${JSON.stringify(current)} (the file is truncated or damaged)`,
      { file: bundlePath, ...(current === undefined ? {} : { entry: current }), cause: err },
    );
  } finally {
    signal?.removeEventListener('abort', onAbort);
    input.destroy();
    extract.destroy();
  }
  if (checked === undefined) throw refuse(MANIFEST_NAME, 'is missing: the bundle is empty');
  for (const name of checked.members.keys())
    if (!seen.has(name)) throw refuse(name, 'is listed in the manifest but missing from the bundle');
  return checked;
}

/** Step 3; returns the bundle's lock-file bytes. */
async function verifyPackages(
  checked: CheckedManifest,
  staging: string,
  options: BundleImportOptions,
): Promise<Buffer> {
  const { members, providers } = checked;
  if (!members.has(BUNDLE_LOCK_NAME)) throw refuse(BUNDLE_LOCK_NAME, 'is missing: a bundle carries its lock entries');
  const lockFile = await readFile(join(staging, BUNDLE_LOCK_NAME));
  const lock = parseLockFile(lockFile, BUNDLE_LOCK_NAME, options.flavor);
  if (hasErrors(lock.diagnostics))
    throw refuse(BUNDLE_LOCK_NAME, `does not parse: ${lock.diagnostics.map((d) => d.summary).join('; ')}`);

  /** The verified hashes of each package member, by member name. */
  const verified = new Map<string, Set<string>>();
  const byZh = new Map<string, string>();
  const packages = [...providers.values()]
    .flatMap((p) => [...p.packages.values()])
    .filter((k) => members.has(k.path))
    .sort((a, b) => compareBytewise(a.path, b.path));
  // Hashed in parallel; checked one after another in member order, so the
  // same bundle always gets the same first refusal.
  const results = await Promise.all(
    packages.map(async (k) => {
      if (options.signal?.aborted) throw aborted();
      try {
        return { ok: true as const, z: await options.pool.hashZip(join(staging, k.path)) };
      } catch (err) {
        return { ok: false as const, err };
      }
    }),
  );
  for (const [i, k] of packages.entries()) {
    const result = results[i]!;
    const ctx = { provider: k.source, version: k.version.toString(), platform: k.platform };
    const staged = join(staging, k.path);
    const shown = `bundle member ${JSON.stringify(k.path)}`;
    // The same refusals as `provkit hash`, with the member named instead of the staged copy.
    if (!result.ok) throw renameFileInError(result.err, staged, shown, { ...ctx, file: options.bundlePath });
    const { z } = result;
    if (!z.h1.ok) throw renameFileInError(z.h1.error, staged, shown, { ...ctx, file: options.bundlePath });
    if (!z.h1Zip.ok) throw renameFileInError(z.h1Zip.error, staged, shown, { ...ctx, file: options.bundlePath });
    const got = { zh: z.zh.text, h1: z.h1.hash.text, h1Zip: z.h1Zip.hash.text };
    for (const form of ['zh', 'h1', 'h1Zip'] as const) {
      if (got[form] !== k[form]) {
        throw new ProvkitError(
          ErrorCode.CHECKSUM_MISMATCH,
          `${shown}: the package does not match its ${form} hash in the manifest`,
          { entry: k.path, ...ctx, expected: k[form], found: got[form] },
        );
      }
    }
    if (`zh:${members.get(k.path)!.sha256}` !== got.zh)
      throw refuse(k.path, 'its zh: hash differs from its member SHA-256', ErrorCode.CHECKSUM_MISMATCH);
    // One package has one identity: the same bytes under two names is a relabelling.
    const twin = byZh.get(got.zh);
    if (twin !== undefined)
      throw refuse(
        k.path,
        `has the same bytes as ${JSON.stringify(twin)}; a package cannot be two versions or platforms`,
      );
    byZh.set(got.zh, k.path);
    const mine = new Set([got.zh, got.h1, got.h1Zip]);
    verified.set(k.path, mine);
    const entry = lock.locks.provider(k.provider);
    if (!entry || !entry.version.equals(k.version) || !entry.hashes.some((h) => mine.has(h.text))) {
      throw refuse(
        k.path,
        `has no matching entry for ${k.source} ${k.version.toString()} in the bundle's lock file`,
        ErrorCode.LOCKFILE_CHECKSUM_MISMATCH,
      );
    }
    if (options.trustedLocks) {
      const t = options.trustedLocks.provider(k.provider);
      if (!t || !t.version.equals(k.version) || !t.hashes.some((h) => mine.has(h.text))) {
        throw new ProvkitError(
          ErrorCode.LOCKFILE_CHECKSUM_MISMATCH,
          `${shown}: ${k.source} ${k.version.toString()} for ${k.platform} does not match any checksum of the trusted lock file`,
          {
            entry: k.path,
            ...ctx,
          },
        );
      }
    }
  }

  // The documents: what they say must be what was verified.
  for (const p of providers.values()) {
    const indexName = `${p.source}/index.json`;
    if (members.has(indexName)) {
      const doc = await readDoc(join(staging, indexName), indexName);
      const versions = doc['versions'];
      if (!isRecord(versions)) throw refuse(indexName, 'has no "versions" object');
      const listed = Object.keys(versions);
      if (listed.length !== 1 || listed[0] !== p.version.toString()) {
        throw refuse(
          indexName,
          `lists ${listed.map((v) => JSON.stringify(v)).join(', ') || 'no version'}; the bundle holds ${p.source} ${p.version.toString()} only`,
        );
      }
    }
    const versionName = `${p.source}/${p.version.toString()}.json`;
    if (!members.has(versionName)) continue;
    const doc = await readDoc(join(staging, versionName), versionName);
    const archives = doc['archives'];
    if (!isRecord(archives)) throw refuse(versionName, 'has no "archives" object');
    for (const [platform, a] of Object.entries(archives)) {
      if (!isRecord(a) || typeof a['url'] !== 'string' || !Array.isArray(a['hashes']))
        throw refuse(versionName, `archive ${platform} needs "url" and "hashes"`);
      const k = p.packages.get(platform);
      const mine = k === undefined ? undefined : verified.get(k.path);
      if (k === undefined || mine === undefined)
        throw refuse(
          versionName,
          `lists the platform ${JSON.stringify(platform)}, which is not a package of this bundle`,
        );
      const file = k.path.slice(p.source.length + 1);
      if (a['url'] !== file)
        throw refuse(
          versionName,
          `archive ${platform} points at ${JSON.stringify(a['url'])}; its package is ${JSON.stringify(file)}`,
        );
      for (const h of a['hashes']) {
        if (typeof h !== 'string' || !mine.has(h))
          throw refuse(
            versionName,
            `lists ${JSON.stringify(h)} for ${platform}, which does not match the package`,
            ErrorCode.CHECKSUM_MISMATCH,
          );
      }
    }
    for (const k of p.packages.values()) {
      if (members.has(k.path) && !isRecord(archives[k.platform]))
        throw refuse(versionName, `does not list the package ${JSON.stringify(k.path)} of this bundle`);
    }
  }
  return lockFile;
}

async function readDoc(path: string, name: string): Promise<Record<string, GoJSON>> {
  let doc: unknown;
  try {
    doc = JSON.parse(await readFile(path, 'utf8'));
  } catch (err) {
    throw refuse(name, `is not JSON: ${errorText(err)}`);
  }
  if (!isRecord<GoJSON>(doc)) throw refuse(name, 'is not a JSON object');
  return doc;
}

interface MergePlan {
  readonly added: string[];
  readonly present: string[];
  /** See {@link BundleImportOutcome.missingFromBase}. */
  readonly missingFromBase: string[];
  /** Relative path → new contents; VERSION.json documents before index.json ones. */
  readonly docs: Array<[string, string]>;
}

async function sha256Of(path: string): Promise<string> {
  const sha = createHash('sha256');
  for await (const c of createReadStream(path)) sha.update(c as Buffer);
  return sha.digest('hex');
}

/** Step 4: reads the target (under its mutex), writes nothing. */
async function planMerge(checked: CheckedManifest, target: string): Promise<MergePlan> {
  const added: string[] = [];
  const present: string[] = [];
  const versionDocs: Array<[string, string]> = [];
  const indexDocs: Array<[string, string]> = [];
  const existing = async (rel: string): Promise<'file' | 'none' | 'dir' | 'other'> => {
    try {
      const st = await lstat(join(target, rel));
      return st.isFile() ? 'file' : st.isDirectory() ? 'dir' : 'other';
    } catch (err) {
      if (systemErrorCode(err) === 'ENOENT') return 'none';
      throw fileError(err, 'cannot read', join(target, rel));
    }
  };
  const checkedDirs = new Set<string>();
  for (const [name, m] of checked.members) {
    if (name === BUNDLE_LOCK_NAME) continue;
    // Nothing may be written through a symlink below the target (HOST, NS or TYPE directories).
    const parts = name.split('/');
    for (let i = 1; i < parts.length; i++) {
      const rel = parts.slice(0, i).join('/');
      if (checkedDirs.has(rel)) continue;
      checkedDirs.add(rel);
      const kind = await existing(rel);
      if (kind === 'other') {
        throw new ProvkitError(
          ErrorCode.BUNDLE_TARGET_CONFLICT,
          `${join(target, rel)} is not a directory (a symlink or special file); bundle member ${JSON.stringify(name)} cannot go there`,
          { file: join(target, rel), entry: name },
        );
      } else if (kind === 'file') {
        throw new ProvkitError(
          ErrorCode.BUNDLE_TARGET_CONFLICT,
          `${join(target, rel)} is a file where bundle member ${JSON.stringify(name)} needs a directory`,
          { file: join(target, rel), entry: name },
        );
      }
    }
    const kind = await existing(name);
    if (kind === 'other' || kind === 'dir')
      throw new ProvkitError(
        ErrorCode.BUNDLE_TARGET_CONFLICT,
        `${join(target, name)} exists and is not a regular file`,
        { file: join(target, name), entry: name },
      );
    if (name.endsWith('.json')) continue;
    if (kind === 'none') added.push(name);
    else if ((await sha256Of(join(target, name))) === m.sha256) present.push(name);
    else {
      throw new ProvkitError(
        ErrorCode.CHECKSUM_MISMATCH,
        `${join(target, name)} already exists with different bytes than bundle member ${JSON.stringify(name)}`,
        {
          file: join(target, name),
          entry: name,
          expected: m.sha256,
        },
      );
    }
  }
  // A delta bundle (`since`) leaves out the packages of the bundle it was made
  // against: those the target does not hold either are missing from the mirror.
  const missingFromBase: string[] = [];
  for (const p of checked.providers.values())
    for (const k of p.packages.values())
      if (!checked.members.has(k.path) && (await existing(k.path)) !== 'file') missingFromBase.push(k.path);
  // The documents, rebuilt from the verified packages and merged with the target's.
  for (const p of checked.providers.values()) {
    const fresh = [...p.packages.values()].filter((k) => checked.members.has(k.path));
    if (fresh.length === 0) continue;
    const versionRel = `${p.source}/${p.version.toString()}.json`;
    const theirVersion = (await existing(versionRel)) === 'file' ? await readTargetDoc(join(target, versionRel)) : {};
    const archives: Record<string, GoJSON> = {
      ...(isRecord(theirVersion['archives']) ? theirVersion['archives'] : {}),
    };
    for (const k of fresh) {
      const url = k.path.slice(p.source.length + 1);
      const hashes = [k.zh, k.h1, k.h1Zip];
      const old = archives[k.platform];
      if (isRecord(old) && old['url'] === url && Array.isArray(old['hashes']))
        hashes.push(...old['hashes'].filter((h): h is string => typeof h === 'string'));
      archives[k.platform] = { hashes: normalizeHashes(hashes.map(parseHash)).map((h) => h.text), url };
    }
    versionDocs.push([versionRel, goMarshalIndent({ ...theirVersion, archives })]);
    const indexRel = `${p.source}/index.json`;
    const theirIndex = (await existing(indexRel)) === 'file' ? await readTargetDoc(join(target, indexRel)) : {};
    const versions: Record<string, GoJSON> = {
      ...(isRecord(theirIndex['versions']) ? theirIndex['versions'] : {}),
      [p.version.toString()]: {},
    };
    indexDocs.push([indexRel, goMarshalIndent({ ...theirIndex, versions })]);
  }
  return { added, present, missingFromBase: missingFromBase.sort(), docs: [...versionDocs, ...indexDocs] };
}

async function readTargetDoc(path: string): Promise<Record<string, GoJSON>> {
  let doc: unknown;
  try {
    doc = JSON.parse((await readRegularFile(path)).toString('utf8'));
  } catch (err) {
    throw new ProvkitError(ErrorCode.INVALID_RESPONSE, `cannot merge into ${path}: ${errorText(err)}`, {
      file: path,
      cause: err,
    });
  }
  if (!isRecord<GoJSON>(doc))
    throw new ProvkitError(ErrorCode.INVALID_RESPONSE, `cannot merge into ${path}: not a JSON object`, { file: path });
  return doc;
}
