/**
 * Provider package directories: the `.terraform/providers` target and the
 * global plugin cache share one layout, `BASE/HOST/NS/TYPE/VERSION/OS_ARCH`
 * (docs/reference.md §5.1 item 74). This module holds what both need:
 *
 * - {@link acquirePackageLock}: a per-package lock file
 *   `BASE/HOST/NS/TYPE/VERSION/OS_ARCH.lock`, held while the package is
 *   installed (docs/reference.md §5.5 item 86, OpenTofu's `dir_modify.go`), so several
 *   `provkit install` processes can share one cache;
 * - {@link findExecutable}: the provider executable (docs/reference.md §5.1 item 75);
 * - {@link linkPackageDir}: install an unpacked package by linking to it
 *   (docs/reference.md §5.3 item 83: an absolute symlink, a copy when links are not possible);
 * - {@link TreeDirs}: the `HOST/NS/TYPE/VERSION` directories below a base,
 *   made one at a time and never through a symbolic link, and removed again
 *   when the run put nothing in them (docs/file-modes.md).
 *
 * The lock. Node has no `flock`, so the lock is the file's existence:
 * created exclusively (written to a temporary file, then `link`ed into
 * place, so it never exists without its content) holding the owner's PID,
 * host name, creation time and a random token. The owner touches it every
 * `heartbeatMs`. A waiter breaks a lock that is stale: its PID is dead on
 * this host, or it has not been touched for `staleMs` (a crashed owner on
 * another host, a hung process, or a lock file of unknown content). Breaking
 * is itself serialised by a short-lived `.lock.break` file, and re-checks
 * under it that the lock still holds the content judged stale, so two waiters
 * never both break it and never break a fresh one.
 *
 * Limits, by design: the protocol is provkit's own. OpenTofu 1.12 `flock`s a
 * persistent, empty `.lock` file at the same path, which provkit sees as a
 * lock of unknown content and breaks once it is `staleMs` old; do not run
 * provkit and OpenTofu on one cache at the same moment. Terraform 1.11 takes
 * no lock at all.
 */
import { randomBytes } from 'node:crypto';
import { cp, link, lstat, mkdir, readdir, readFile, realpath, rm, rmdir, stat, symlink, unlink, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname, join, resolve } from 'node:path';

import type { Platform, ProviderAddress, Version } from '../addresses/index.js';
import { ErrorCode as Codes, ProvkitError, systemErrorCode } from '../errors.js';
import { providerDirPath, unpackedDirPath } from '../layout/index.js';
import { commitDir, siblingTempPath } from './extract.js';

/** The installer's error codes, by short name (the values are {@link ErrorCode}s). */
export const InstallErrorCode = {
  /** The package does not match any checksum of the lock file (docs/reference.md §3.4 items 48–49). */
  LOCKFILE_CHECKSUM_MISMATCH: Codes.LOCKFILE_CHECKSUM_MISMATCH,
  /** The installed package has no `terraform-provider-TYPE` executable (docs/reference.md §5.1 item 75). */
  PROVIDER_BINARY_NOT_FOUND: Codes.PROVIDER_BINARY_NOT_FOUND,
  /** The locked version no longer meets the constraints, or 0.0.0 was requested (docs/reference.md items 46, 87). */
  VERSION_SELECTION: Codes.VERSION_SELECTION,
  /** The lock of a package directory could not be taken (timed out waiting). */
  PACKAGE_LOCK_TIMEOUT: Codes.PACKAGE_LOCK_TIMEOUT,
  /** A directory of the provider tree is a symbolic link or not a directory. */
  UNSAFE_INSTALL_PATH: Codes.UNSAFE_INSTALL_PATH,
} as const;

/**
 * The directories between a base (`.terraform/providers`, the plugin cache,
 * an unpacked mirror) and its package directories, as one run makes them.
 *
 * {@link TreeDirs.make} creates `BASE/HOST/NS/TYPE/VERSION` one level at a
 * time. A level that exists must be a real directory: a symbolic link there
 * (pre-planted, or left by another tool) is refused with
 * `UNSAFE_INSTALL_PATH`, before anything is written, so nothing is ever
 * written outside the tree. Terraform 1.11.4 follows such a link and writes
 * the package through it (test/fixtures/install-safety/terraform-1.11.4.json).
 * The base itself may be a link: that is the user's choice of location. The
 * package directory (`OS_ARCH`) may be a link too: that is how a package is
 * installed from a cache (docs/reference.md §5.3 item 83); it is replaced, never written through.
 *
 * {@link TreeDirs.removeEmpty} removes, deepest first, the directories this
 * run created that are still empty (a failed install leaves none behind).
 * Directories that existed before are never removed. A concurrent run that
 * is about to use a directory this run just removed gets ENOENT once; `make`
 * retries that.
 */
export class TreeDirs {
  private readonly created = new Set<string>();

  /**
   * Makes `base` (recursively, links followed) and then each `/`-separated
   * level of `rel` below it (never through a link).
   *
   * @returns the directory `base/rel`.
   * @throws ProvkitError UNSAFE_INSTALL_PATH, IO
   */
  async make(base: string, rel: string): Promise<string> {
    for (let attempt = 0; ; attempt++) {
      try {
        // eslint-disable-next-line no-await-in-loop -- a retry after a concurrent removal
        return await this.makeOnce(base, rel);
      } catch (err) {
        if (systemErrorCode(err) !== 'ENOENT' || attempt >= 3) {
          if (err instanceof ProvkitError) throw err;
          throw new ProvkitError(Codes.IO, `cannot create ${join(base, rel)}: ${err instanceof Error ? err.message : String(err)}`, { file: join(base, rel), cause: err });
        }
      }
    }
  }

  private async makeOnce(base: string, rel: string): Promise<string> {
    const absBase = resolve(base);
    const first = await mkdir(absBase, { recursive: true, mode: 0o755 });
    if (first !== undefined) {
      // Every level from the first one made down to the base is new.
      for (let d = absBase; d.length >= first.length; d = dirname(d)) this.created.add(d);
    }
    let dir = absBase;
    for (const part of rel.split('/').filter((x) => x !== '')) {
      dir = join(dir, part);
      try {
        // eslint-disable-next-line no-await-in-loop -- one level at a time, in order
        await mkdir(dir, { mode: 0o755 });
        this.created.add(dir);
        continue;
      } catch (err) {
        if (systemErrorCode(err) !== 'EEXIST') throw err;
      }
      // eslint-disable-next-line no-await-in-loop
      const st = await lstat(dir);
      if (st.isSymbolicLink()) {
        throw new ProvkitError(
          Codes.UNSAFE_INSTALL_PATH,
          `${dir} is a symbolic link; provkit does not write through a link inside the provider directory ${absBase} (remove the link, or point the base directory itself elsewhere)`,
          { file: dir },
        );
      }
      if (!st.isDirectory()) throw new ProvkitError(Codes.UNSAFE_INSTALL_PATH, `${dir} is not a directory`, { file: dir });
    }
    return dir;
  }

  /** Removes the directories {@link make} created that are empty now, deepest first. */
  async removeEmpty(): Promise<void> {
    const dirs = [...this.created].sort((a, b) => b.length - a.length || (a < b ? 1 : -1));
    for (const d of dirs) {
      try {
        // eslint-disable-next-line no-await-in-loop -- children before their parents
        await rmdir(d);
        this.created.delete(d);
      } catch {
        // Not empty (a package, another run's files), or already gone: kept.
      }
    }
  }
}

/** `HOST/NS/TYPE/VERSION` of a package (the levels {@link TreeDirs.make} checks). */
export function versionDirPath(provider: ProviderAddress, version: Version): string {
  return `${providerDirPath(provider)}/${version.toString()}`;
}

/** `BASE/HOST/NS/TYPE/VERSION/OS_ARCH`. */
export function packageDir(base: string, provider: ProviderAddress, version: Version, platform: Platform): string {
  return join(base, unpackedDirPath(provider, version, platform));
}

/** `BASE/HOST/NS/TYPE/VERSION/OS_ARCH.lock` (docs/reference.md §5.5 item 86). */
export function packageLockPath(base: string, provider: ProviderAddress, version: Version, platform: Platform): string {
  return join(base, providerDirPath(provider), version.toString(), `${platform.toString()}.lock`);
}

/** Who holds a lock, as written in the lock file. */
export interface LockHolder {
  readonly pid: number;
  readonly hostname: string;
  /** Milliseconds since the epoch. */
  readonly created: number;
  readonly token: string;
}

export interface PackageLockOptions {
  /** A lock untouched for this long is broken (default 120 000 ms). */
  readonly staleMs?: number;
  /** How often the owner touches its lock (default `staleMs / 4`). */
  readonly heartbeatMs?: number;
  /** Give up after waiting this long (default: wait as long as the holder is alive). */
  readonly timeoutMs?: number;
  /** Report contention after waiting this long (default 5 000 ms, as OpenTofu). */
  readonly noticeAfterMs?: number;
  /** Called once when a wait exceeds `noticeAfterMs`. */
  readonly onWait?: (info: { readonly path: string; readonly holder: LockHolder | undefined; readonly waitedMs: number }) => void;
  /** Called when a stale lock is broken. */
  readonly onBreak?: (info: { readonly path: string; readonly holder: LockHolder | undefined; readonly reason: 'dead-process' | 'expired' }) => void;
  readonly signal?: AbortSignal;
}

/** A held lock; release it exactly once. */
export interface PackageLock {
  readonly path: string;
  release(): Promise<void>;
}

const DEFAULT_STALE_MS = 120_000;
const BREAK_STALE_MS = 10_000;

function parseHolder(raw: Buffer): LockHolder | undefined {
  try {
    const v = JSON.parse(raw.toString('utf8')) as Partial<LockHolder>;
    if (typeof v.pid === 'number' && typeof v.hostname === 'string' && typeof v.created === 'number' && typeof v.token === 'string') {
      return { pid: v.pid, hostname: v.hostname, created: v.created, token: v.token };
    }
  } catch {
    // Unknown content (an OpenTofu flock file, a foreign tool): judged by age only.
  }
  return undefined;
}

/** Whether a process with this PID exists on this host (`kill(pid, 0)`; EPERM means it exists). */
function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return systemErrorCode(err) === 'EPERM';
  }
}

function staleReason(holder: LockHolder | undefined, mtimeMs: number, staleMs: number): 'dead-process' | 'expired' | undefined {
  if (holder && holder.hostname === hostname() && holder.pid !== process.pid && !pidAlive(holder.pid)) return 'dead-process';
  if (Date.now() - mtimeMs > staleMs) return 'expired';
  return undefined;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolveSleep, reject) => {
    if (signal?.aborted) {
      reject(aborted());
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(aborted());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolveSleep();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function aborted(): ProvkitError {
  return new ProvkitError(Codes.ABORTED, 'waiting for a package lock was interrupted');
}

/** Creates `path` holding `content`, failing with EEXIST if it exists; never visible without its content. */
async function createExclusive(path: string, content: string): Promise<void> {
  const tmp = `${path}.${randomBytes(6).toString('hex')}.new`;
  await writeFile(tmp, content, { flag: 'wx', mode: 0o644 });
  try {
    await link(tmp, path);
  } catch (err) {
    const code = systemErrorCode(err);
    if (code === 'EEXIST') throw err;
    // Hard links unsupported here (some network or FAT file systems): fall
    // back to an exclusive create, whose content appears a moment later;
    // a waiter reading it empty judges it by age, which is fresh.
    if (code === 'EPERM' || code === 'ENOTSUP' || code === 'EOPNOTSUPP' || code === 'ENOSYS' || code === 'EXDEV') {
      await writeFile(path, content, { flag: 'wx', mode: 0o644 });
    } else {
      throw err;
    }
  } finally {
    await rm(tmp, { force: true });
  }
}

/** Breaks the lock at `path` if it still holds `observed` and is still stale; returns whether it did. */
async function breakStale(path: string, observed: Buffer, staleMs: number): Promise<boolean> {
  const breaker = `${path}.break`;
  try {
    await writeFile(breaker, String(process.pid), { flag: 'wx', mode: 0o644 });
  } catch (err) {
    if (systemErrorCode(err) !== 'EEXIST') throw err;
    // Someone else is breaking it; a breaker left by a crash is removed after a while.
    const st = await stat(breaker).catch(() => undefined);
    if (st && Date.now() - st.mtimeMs > BREAK_STALE_MS) await rm(breaker, { force: true });
    return false;
  }
  try {
    const [current, st] = await Promise.all([readFile(path), stat(path)]);
    if (!current.equals(observed) || staleReason(parseHolder(current), st.mtimeMs, staleMs) === undefined) return false;
    await unlink(path);
    return true;
  } catch (err) {
    if (systemErrorCode(err) === 'ENOENT') return false;
    throw err;
  } finally {
    await rm(breaker, { force: true });
  }
}

/**
 * Takes the lock at `path` (see the module comment), waiting while another
 * live process holds it. Parent directories are created (0755).
 *
 * @throws ProvkitError ABORTED (the signal fired), PACKAGE_LOCK_TIMEOUT
 *   (`timeoutMs` passed), IO
 */
export async function acquirePackageLock(path: string, options: PackageLockOptions = {}): Promise<PackageLock> {
  const staleMs = options.staleMs ?? DEFAULT_STALE_MS;
  const heartbeatMs = options.heartbeatMs ?? Math.max(50, Math.floor(staleMs / 4));
  const noticeAfterMs = options.noticeAfterMs ?? 5_000;
  const holder: LockHolder = { pid: process.pid, hostname: hostname(), created: Date.now(), token: randomBytes(12).toString('hex') };
  const content = `${JSON.stringify(holder)}\n`;
  const started = Date.now();
  let delay = 10;
  let noticed = false;
  let recreated = false;
  await mkdir(dirname(path), { recursive: true, mode: 0o755 });
  for (;;) {
    if (options.signal?.aborted) throw aborted();
    try {
      // eslint-disable-next-line no-await-in-loop -- retries in order until the lock is ours
      await createExclusive(path, content);
      break;
    } catch (err) {
      const code = systemErrorCode(err);
      if (code === 'ENOENT' && !recreated) {
        // Another run removed the directory it had made and left empty (TreeDirs.removeEmpty) just now: make it again, once.
        recreated = true;
        // eslint-disable-next-line no-await-in-loop
        await mkdir(dirname(path), { recursive: true, mode: 0o755 });
        continue;
      }
      if (code !== 'EEXIST') {
        throw new ProvkitError(Codes.IO, `cannot create the lock file ${path}: ${err instanceof Error ? err.message : String(err)}`, { file: path, cause: err });
      }
    }
    let raw: Buffer;
    let mtimeMs: number;
    try {
      // eslint-disable-next-line no-await-in-loop
      [raw, { mtimeMs }] = await Promise.all([readFile(path), stat(path)]);
    } catch (err) {
      if (systemErrorCode(err) === 'ENOENT') continue; // released meanwhile: try again at once
      throw new ProvkitError(Codes.IO, `cannot read the lock file ${path}: ${err instanceof Error ? err.message : String(err)}`, { file: path, cause: err });
    }
    const other = parseHolder(raw);
    const reason = staleReason(other, mtimeMs, staleMs);
    // eslint-disable-next-line no-await-in-loop
    if (reason !== undefined && (await breakStale(path, raw, staleMs))) {
      options.onBreak?.({ path, holder: other, reason });
      continue;
    }
    const waited = Date.now() - started;
    if (options.timeoutMs !== undefined && waited > options.timeoutMs) {
      throw new ProvkitError(
        InstallErrorCode.PACKAGE_LOCK_TIMEOUT,
        `timed out after ${waited} ms waiting for the lock ${path}${other ? ` (held by process ${other.pid} on ${other.hostname})` : ''}`,
        { file: path },
      );
    }
    if (!noticed && waited >= noticeAfterMs) {
      noticed = true;
      options.onWait?.({ path, holder: other, waitedMs: waited });
    }
    // eslint-disable-next-line no-await-in-loop
    await sleep(delay + Math.floor(Math.random() * delay), options.signal);
    delay = Math.min(500, Math.ceil(delay * 1.5));
  }

  const timer = setInterval(() => {
    const now = new Date();
    utimes(path, now, now).catch(() => undefined);
  }, heartbeatMs);
  timer.unref();
  let released = false;
  return {
    path,
    async release(): Promise<void> {
      if (released) return;
      released = true;
      clearInterval(timer);
      try {
        // Only remove it if it is still ours (it may have been broken as stale and re-taken).
        if ((await readFile(path, 'utf8')) === content) await unlink(path);
      } catch (err) {
        if (systemErrorCode(err) !== 'ENOENT') throw err;
      }
    },
  };
}

/** Runs `fn` holding the lock at `path`; the lock is released however `fn` ends. */
export async function withPackageLock<T>(path: string, options: PackageLockOptions, fn: () => Promise<T>): Promise<T> {
  const lock = await acquirePackageLock(path, options);
  try {
    return await fn();
  } finally {
    await lock.release();
  }
}

/**
 * The provider executable of the package at `dir` (docs/reference.md §5.1 item 75): the first entry
 * in byte order that is not a directory (symlinks count; the executable bit
 * is not checked) whose name is `terraform-provider-TYPE` followed by nothing,
 * `_` or `.`.
 *
 * @throws ProvkitError PROVIDER_BINARY_NOT_FOUND (the reference's text), IO
 */
export async function findExecutable(dir: string, provider: ProviderAddress, version?: Version, platform?: Platform): Promise<string> {
  const prefix = `terraform-provider-${provider.type}`;
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    throw new ProvkitError(Codes.IO, `cannot read the package directory ${dir}: ${err instanceof Error ? err.message : String(err)}`, { file: dir, cause: err });
  }
  entries.sort((a, b) => Buffer.compare(Buffer.from(a.name), Buffer.from(b.name)));
  for (const e of entries) {
    if (e.isDirectory()) continue;
    if (!e.name.startsWith(prefix)) continue;
    const rest = e.name.slice(prefix.length);
    if (rest === '' || rest.startsWith('_') || rest.startsWith('.')) return join(dir, e.name);
  }
  throw new ProvkitError(InstallErrorCode.PROVIDER_BINARY_NOT_FOUND, `provider binary not found: could not find executable file starting with ${prefix}`, {
    file: dir,
    provider: provider.toString(),
    ...(version ? { version: version.toString() } : {}),
    ...(platform ? { platform: platform.toString() } : {}),
  });
}

/** Whether two paths name the same file or directory (device and inode, as Go's `os.SameFile`). */
async function sameFile(a: string, b: string): Promise<boolean> {
  try {
    const [sa, sb] = await Promise.all([stat(a), stat(b)]);
    return sa.dev === sb.dev && sa.ino === sb.ino;
  } catch (err) {
    if (systemErrorCode(err) === 'ENOENT') return false;
    throw err;
  }
}

/**
 * Installs the unpacked package at `source` as `target` (docs/reference.md §5.3 item 83): refuses
 * to link a directory to itself, replaces whatever is at `target` with an
 * absolute symlink to `source` (atomically: the link is made beside the
 * target and renamed over it), or with a copy when symlinks cannot be made.
 *
 * @returns how it was installed.
 * @throws ProvkitError IO (including `cannot install existing provider directory … to itself`)
 */
export async function linkPackageDir(source: string, target: string): Promise<'symlink' | 'copy'> {
  const absSource = resolve(source);
  const absTarget = resolve(target);
  if (await sameFile(absSource, absTarget)) {
    throw new ProvkitError(Codes.IO, `cannot install existing provider directory ${absTarget} to itself`, { file: absTarget });
  }
  await mkdir(dirname(absTarget), { recursive: true, mode: 0o755 });
  const temp = siblingTempPath(absTarget, 'link');
  try {
    try {
      await symlink(absSource, temp, 'dir');
    } catch (err) {
      const code = systemErrorCode(err);
      if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS') throw err;
      await mkdir(temp, { mode: 0o755 });
      await cp(absSource, temp, { recursive: true, dereference: false, preserveTimestamps: true });
      await commitDir(temp, absTarget, 'replace');
      return 'copy';
    }
    await commitDir(temp, absTarget, 'replace');
    return 'symlink';
  } catch (err) {
    await rm(temp, { recursive: true, force: true });
    if (err instanceof ProvkitError) throw err;
    throw new ProvkitError(Codes.IO, `cannot link ${absTarget} to ${absSource}: ${err instanceof Error ? err.message : String(err)}`, { file: absTarget, cause: err });
  }
}

/**
 * What is at a package path: nothing, a directory (possibly through a
 * symlink, resolved), or something unusable (a file, a dangling link).
 */
export async function inspectPackageDir(dir: string): Promise<{ readonly kind: 'absent' } | { readonly kind: 'dir'; readonly realPath: string } | { readonly kind: 'other' }> {
  try {
    await lstat(dir);
  } catch (err) {
    if (systemErrorCode(err) === 'ENOENT') return { kind: 'absent' };
    throw err;
  }
  try {
    const real = await realpath(dir);
    return (await stat(real)).isDirectory() ? { kind: 'dir', realPath: real } : { kind: 'other' };
  } catch {
    return { kind: 'other' };
  }
}
