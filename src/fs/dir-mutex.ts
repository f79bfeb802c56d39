/**
 * The one directory mutex: a mutex file (`OS_ARCH.lock` beside a package
 * directory, `.provkit-mirror.lock` inside a mirror target) held while one
 * process changes the directory it guards, so that several `provkit`
 * processes can share a plugin cache, an install tree or a mirror
 * (docs/reference.md §5.5 item 86, OpenTofu's `internal/providercache/dir_modify.go`).
 * "Lock" in provkit means the dependency lock file: messages call this
 * file the mutex file, whatever its name, and never name the temporary
 * file it is written through.
 *
 * Node has no `flock`, so the mutex is the file's existence: created
 * exclusively (written to a temporary file, then `link`ed into place, so it
 * never exists without its content) holding the owner's PID, host name,
 * creation time and a random token. The owner touches it every
 * `heartbeatMs`. A waiter breaks a mutex that is stale: its PID is dead on
 * this host, or it has not been touched for `staleMs` (a crashed owner on
 * another host, a hung process, or a file of unknown content). Breaking is
 * itself serialised by a short-lived `.lock.break` file, and re-checks under
 * it that the file still holds the content judged stale, so two waiters
 * never both break it and never break a fresh one.
 *
 * Limits, by design: the protocol is provkit's own. OpenTofu 1.12 `flock`s a
 * persistent, empty `.lock` file at the same path, which provkit sees as a
 * mutex of unknown content and breaks once it is `staleMs` old; do not run
 * provkit and OpenTofu on one cache at the same moment. Terraform 1.11 takes
 * no lock at all.
 */
import { link, mkdir, rm, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import { randomBytes } from 'node:crypto';

import { ErrorCode, ProvkitError, systemErrorCode, systemErrorText } from '../errors.js';
import { makeDirectory } from './target.js';
import { tempPathBeside } from './temp-name.js';
import { readRegularFile } from './read.js';

/** A mutex file's bytes: a small regular file (fs/read.ts), never a FIFO someone put in its place. */
function readHolder(path: string): Promise<Buffer> {
  return readRegularFile(path, { maxBytes: 64 * 1024 });
}

/** Who holds a mutex, as written in its file. */
export interface MutexHolder {
  /** The holder's process ID, on {@link MutexHolder.hostname}: a dead PID on this host makes the mutex stale. */
  readonly pid: number;
  /** The host the holder runs on (`os.hostname()`); its PID is only checked when it is this host. */
  readonly hostname: string;
  /** Milliseconds since the epoch. */
  readonly created: number;
  /** A random hex token of this holding, so that a waiter breaking a stale mutex can tell it was not replaced meanwhile. */
  readonly token: string;
}

/** How a directory mutex is waited for, kept alive and broken when stale; every field has a default. */
export interface DirMutexOptions {
  /** A mutex file untouched for this long is broken (default 120 000 ms). */
  readonly staleMs?: number;
  /** How often the owner touches its mutex file (default `staleMs / 4`). */
  readonly heartbeatMs?: number;
  /** Give up after waiting this long (default: wait as long as the holder is alive). */
  readonly timeoutMs?: number;
  /** Report contention after waiting this long (default 5 000 ms, as OpenTofu). */
  readonly noticeAfterMs?: number;
  /** Called once when a wait exceeds `noticeAfterMs`. */
  readonly onWait?: (info: {
    readonly path: string;
    readonly holder: MutexHolder | undefined;
    readonly waitedMs: number;
  }) => void;
  /** Called when a stale mutex is broken. */
  readonly onBreak?: (info: {
    readonly path: string;
    readonly holder: MutexHolder | undefined;
    readonly reason: 'dead-process' | 'expired';
  }) => void;
  /** Stops the wait: acquiring rejects with `ABORTED`. */
  readonly signal?: AbortSignal;
}

/** A held mutex; release it exactly once. */
export interface DirMutex {
  readonly path: string;
  release(): Promise<void>;
}

const DEFAULT_STALE_MS = 120_000;
const BREAK_STALE_MS = 10_000;

function parseHolder(raw: Buffer): MutexHolder | undefined {
  try {
    const v = JSON.parse(raw.toString('utf8')) as Partial<MutexHolder>;
    if (
      typeof v.pid === 'number' &&
      typeof v.hostname === 'string' &&
      typeof v.created === 'number' &&
      typeof v.token === 'string'
    ) {
      return { pid: v.pid, hostname: v.hostname, created: v.created, token: v.token };
    }
  } catch {
    // Unknown content (an OpenTofu flock file, a foreign tool): judged by age only.
  }
  return undefined;
}

/** Whether a process with this PID exists on this host (`kill(pid, 0)`; EPERM means it exists). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return systemErrorCode(err) === 'EPERM';
  }
}

function staleReason(
  holder: MutexHolder | undefined,
  mtimeMs: number,
  staleMs: number,
): 'dead-process' | 'expired' | undefined {
  if (holder && holder.hostname === hostname() && holder.pid !== process.pid && !pidAlive(holder.pid))
    return 'dead-process';
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
  return new ProvkitError(ErrorCode.ABORTED, 'waiting for a directory mutex was interrupted');
}

/** Creates `path` holding `content`, failing with EEXIST if it exists; never visible without its content. */
async function createExclusive(path: string, content: string): Promise<void> {
  const tmp = tempPathBeside(path, { ext: '.new' });
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

/** Breaks the mutex file at `path` if it still holds `observed` and is still stale; returns whether it did. */
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
    const [current, st] = await Promise.all([readHolder(path), stat(path)]);
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
 * Takes the mutex whose file is `path` (see the module comment), waiting while another
 * live process holds it. Parent directories are created (0755).
 *
 * @throws ProvkitError ABORTED (the signal fired), MUTEX_TIMEOUT
 *   (`timeoutMs` passed), IO
 */
export async function acquireDirMutex(path: string, options: DirMutexOptions = {}): Promise<DirMutex> {
  const staleMs = options.staleMs ?? DEFAULT_STALE_MS;
  const heartbeatMs = options.heartbeatMs ?? Math.max(50, Math.floor(staleMs / 4));
  const noticeAfterMs = options.noticeAfterMs ?? 5_000;
  const holder: MutexHolder = {
    pid: process.pid,
    hostname: hostname(),
    created: Date.now(),
    token: randomBytes(12).toString('hex'),
  };
  const content = `${JSON.stringify(holder)}\n`;
  const started = Date.now();
  let delay = 10;
  let noticed = false;
  let recreated = false;
  // makeDirectory, not a recursive mkdir: that says ENOENT on a read-only file system.
  await makeDirectory(dirname(path), 'cannot create the directory of the mutex file');
  for (;;) {
    if (options.signal?.aborted) throw aborted();
    try {
      // eslint-disable-next-line no-await-in-loop -- retries in order until the mutex is ours
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
        throw new ProvkitError(ErrorCode.IO, `cannot create the mutex file ${path}: ${systemErrorText(err)}`, {
          file: path,
          cause: err,
        });
      }
    }
    let raw: Buffer;
    let mtimeMs: number;
    try {
      // eslint-disable-next-line no-await-in-loop
      [raw, { mtimeMs }] = await Promise.all([readHolder(path), stat(path)]);
    } catch (err) {
      if (systemErrorCode(err) === 'ENOENT') continue; // released meanwhile: try again at once
      throw new ProvkitError(ErrorCode.IO, `cannot read the mutex file ${path}: ${systemErrorText(err)}`, {
        file: path,
        cause: err,
      });
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
        ErrorCode.MUTEX_TIMEOUT,
        `timed out after ${waited} ms waiting for the mutex file ${path}${other ? ` (held by process ${other.pid} on ${other.hostname})` : ''}`,
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
        if ((await readHolder(path)).toString('utf8') === content) await unlink(path);
      } catch (err) {
        if (systemErrorCode(err) !== 'ENOENT') throw err;
      }
    },
  };
}

/** Runs `fn` holding the mutex whose file is `path`; it is released however `fn` ends. */
export async function withDirMutex<T>(path: string, options: DirMutexOptions, fn: () => Promise<T>): Promise<T> {
  const mutex = await acquireDirMutex(path, options);
  try {
    return await fn();
  } finally {
    await mutex.release();
  }
}
