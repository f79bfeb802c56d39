// The one cancellation contract of the operations (src/installer/abort.ts):
// whatever the source does once the caller's signal aborts (rejects with the
// signal's reason as fetch does, with an I/O error, answers late anyway, or
// never answers), every run rejects with the ProvkitError ABORTED, asks its
// source nothing more and starts no fetch. The sources answer from the demo
// filesystem mirror (mirror-fixtures/); one trap source counts every call it
// gets after the abort.
import { getEventListeners } from 'node:events';
import { createWriteStream, existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  createBundle,
  createHashPool,
  FetchCache,
  FilesystemMirrorSource,
  importBundle,
  isProvkitError,
  lockModule,
  Locks,
  parseConstraints,
  parsePlatform,
  parseProviderSource,
  runInstall,
  runLock,
  runMirror,
  runVerify,
  serializeLocks,
  type EventSink,
  type InstallerEvent,
  type HashPool,
  type Source,
} from '../../src/index.js';
import { ErrorCode } from '../../src/errors.js';

const MIRROR = fileURLToPath(new URL('../../mirror-fixtures/', import.meta.url));
const REQUIREMENTS = ['acme/demo', 'acme/tools'].map((p) => ({
  provider: parseProviderSource(`registry.example.test/${p}`, 'tofu'),
  constraints: parseConstraints('>= 0.1'),
}));
const PLATFORMS = ['linux_amd64', 'linux_arm64', 'darwin_arm64', 'windows_amd64'].map((p) => parsePlatform(p));

let pool: HashPool;
let tmp: string;
let locks: Locks;
let bundlePath: string;

beforeAll(async () => {
  pool = createHashPool();
  tmp = await mkdtemp(join(tmpdir(), 'provkit-cancel-'));
  const source = new FilesystemMirrorSource({ baseDir: MIRROR, flavor: 'tofu' });
  const base = { requirements: REQUIREMENTS, platforms: PLATFORMS, source, pool, flavor: 'tofu' as const };
  const cache = new FetchCache({ source, pool });
  try {
    ({ locks } = await runLock({
      requirements: REQUIREMENTS,
      platforms: PLATFORMS,
      cache,
      flavor: 'tofu',
      oldLocks: new Locks(),
    }));
  } finally {
    await cache.close();
  }
  expect(serializeLocks(locks, 'tofu').toString()).toContain('acme/tools');
  bundlePath = join(tmp, 'all.tar');
  const out = createWriteStream(bundlePath);
  const closed = new Promise<void>((resolve) => out.on('close', () => resolve()));
  const made = await createBundle({
    ...base,
    locks,
    provkitVersion: '0.0.0',
    createdEpoch: 0,
    out,
    outPath: bundlePath,
  });
  expect(made.failures).toEqual([]);
  await closed;
});
afterAll(async () => {
  await pool.close();
  await rm(tmp, { recursive: true, force: true });
});

/** What a source does with a question once the run's signal has aborted. */
type Behaviour = 'rejects with the signal reason' | 'rejects with an I/O error' | 'answers late' | 'never answers';

interface Trap {
  readonly source: Source;
  readonly signal: AbortSignal;
  readonly events: EventSink;
  /** Source calls made after the abort. */
  callsAfterAbort: number;
  /** `fetch_start` events emitted after the abort. */
  startsAfterAbort: number;
}

/**
 * The run's signal aborts at the source's second package question (one
 * package is under way); that question, and every one after, meets `behaviour`.
 * With `timeout`, the signal is `AbortSignal.timeout` instead, and the
 * source waits for it.
 */
function trap(behaviour: Behaviour, timeout = false): Trap {
  const inner: Source = new FilesystemMirrorSource({ baseDir: MIRROR, flavor: 'tofu' });
  const controller = new AbortController();
  const signal = timeout ? AbortSignal.timeout(30) : controller.signal;
  let questions = 0;
  const t: Trap = {
    signal,
    callsAfterAbort: 0,
    startsAfterAbort: 0,
    events: (e) => {
      if (e.type === 'fetch_start' && signal.aborted) t.startsAfterAbort++;
    },
    source: {
      forDisplay: (p) => inner.forDisplay(p),
      availableVersions: (p, s) => {
        if (signal.aborted) t.callsAfterAbort++;
        return inner.availableVersions(p, s);
      },
      async packageMeta(p, v, platform, s) {
        if (signal.aborted) t.callsAfterAbort++;
        if (++questions < 2) return inner.packageMeta(p, v, platform, s);
        if (timeout) await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        else controller.abort(new Error('stopped by the caller'));
        switch (behaviour) {
          case 'rejects with the signal reason':
            throw signal.reason;
          case 'rejects with an I/O error':
            throw Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET', syscall: 'read' });
          case 'answers late':
            return inner.packageMeta(p, v, platform);
          case 'never answers':
            return new Promise(() => undefined);
        }
      },
    },
  };
  return t;
}

/** A root module requiring {@link REQUIREMENTS}, in a new directory. */
async function moduleDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmp, prefix));
  await writeFile(
    join(dir, 'main.tf'),
    `terraform {\n  required_providers {\n${REQUIREMENTS.map((r) => `    ${r.provider.type} = { source = "${r.provider.toString()}" }\n`).join('')}  }\n}\n`,
  );
  return dir;
}

const runs: Record<string, (t: Trap) => Promise<unknown>> = {
  runLock: async (t) => {
    // The package events (fetch_start) come from the cache, the run's own from runLock.
    const cache = new FetchCache({ source: t.source, pool, events: t.events, signal: t.signal, networkConcurrency: 1 });
    try {
      return await runLock({
        requirements: REQUIREMENTS,
        platforms: PLATFORMS,
        cache,
        flavor: 'tofu',
        oldLocks: new Locks(),
        signal: t.signal,
        events: t.events,
      });
    } finally {
      await cache.close();
    }
  },
  lockModule: async (t) => {
    // The one call of docs/api.md: its own cache over the given source, the package events to the caller's sink.
    const dir = await moduleDir('module-');
    try {
      return await lockModule(dir, {
        flavor: 'tofu',
        source: t.source,
        pool,
        platforms: PLATFORMS,
        signal: t.signal,
        events: t.events,
      });
    } finally {
      // Nothing written: the lock file is written only when the whole run succeeded.
      expect(existsSync(join(dir, '.terraform.lock.hcl'))).toBe(false);
    }
  },
  runMirror: async (t) =>
    runMirror({
      requirements: REQUIREMENTS,
      platforms: PLATFORMS,
      source: t.source,
      pool,
      flavor: 'tofu',
      locks: new Locks(),
      targetDir: await mkdtemp(join(tmp, 'mirror-')),
      signal: t.signal,
      events: t.events,
      networkConcurrency: 1,
    }),
  runInstall: async (t) =>
    runInstall({
      requirements: REQUIREMENTS,
      platform: PLATFORMS[0]!,
      source: t.source,
      pool,
      flavor: 'tofu',
      oldLocks: new Locks(),
      targetDir: await mkdtemp(join(tmp, 'install-')),
      signal: t.signal,
      events: t.events,
      networkConcurrency: 1,
    }),
  createBundle: (t) =>
    createBundle({
      requirements: REQUIREMENTS,
      platforms: PLATFORMS,
      source: t.source,
      pool,
      flavor: 'tofu',
      locks,
      provkitVersion: '0.0.0',
      createdEpoch: 0,
      out: new PassThrough().resume(),
      signal: t.signal,
      events: t.events,
      networkConcurrency: 1,
    }),
};

const behaviours: Behaviour[] = [
  'rejects with the signal reason',
  'rejects with an I/O error',
  'answers late',
  'never answers',
];

/** The run's rejection; a resolved run fails the test. */
async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    (value) => {
      throw new Error(
        `resolved after the abort: ${JSON.stringify(value, (_k, v: unknown) => (v instanceof Map ? [...v] : v))}`,
      );
    },
    (err: unknown) => err,
  );
}

/** Long enough for a run that went on after its abort to ask its next question (the answers come from a local mirror). */
const settleAfter = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 100));

describe.each(Object.keys(runs))('%s, aborted while a package is under way', (name) => {
  it.each(behaviours)('throws ABORTED and asks nothing more when the source %s', async (behaviour) => {
    const t = trap(behaviour);
    const err = await rejection(runs[name]!(t));
    await settleAfter();
    expect(isProvkitError(err, ErrorCode.ABORTED), String(err)).toBe(true);
    expect((err as Error & { cause?: unknown }).cause).toBe(t.signal.reason);
    expect(t.callsAfterAbort).toBe(0);
    expect(t.startsAfterAbort).toBe(0);
  });

  it('throws ABORTED under AbortSignal.timeout, the source rejecting with its TimeoutError', async () => {
    const t = trap('rejects with the signal reason', true);
    const err = await rejection(runs[name]!(t));
    await settleAfter();
    expect(isProvkitError(err, ErrorCode.ABORTED), String(err)).toBe(true);
    expect((err as Error & { cause?: Error }).cause?.name).toBe('TimeoutError');
    expect(t.callsAfterAbort).toBe(0);
    expect(t.startsAfterAbort).toBe(0);
  });
});

describe('the runs without a source stop hashing at the abort', () => {
  /** The pool, aborting `controller` at its first job and counting the jobs after it. */
  function abortingPool(controller: AbortController): { pool: HashPool; after: () => number } {
    let jobs = 0;
    return {
      after: () => jobs - 1,
      pool: {
        ...pool,
        shareUpTo: 1,
        hashZip: (...args) => {
          jobs++;
          controller.abort(new Error('stopped by the caller'));
          return pool.hashZip(...args);
        },
        hashDir: (path) => {
          jobs++;
          controller.abort(new Error('stopped by the caller'));
          return pool.hashDir(path);
        },
      },
    };
  }

  it('runVerify', async () => {
    const controller = new AbortController();
    const { pool: p, after } = abortingPool(controller);
    const err = await rejection(
      runVerify({ locks, mirrorDir: MIRROR, pool: p, flavor: 'tofu', signal: controller.signal }),
    );
    await settleAfter();
    expect(isProvkitError(err, ErrorCode.ABORTED), String(err)).toBe(true);
    expect(after()).toBe(0);
  });

  it('importBundle', async () => {
    const controller = new AbortController();
    const { pool: p } = abortingPool(controller);
    const targetDir = join(tmp, 'imported');
    const err = await rejection(
      importBundle({ bundlePath, targetDir, pool: p, flavor: 'tofu', signal: controller.signal }),
    );
    expect(isProvkitError(err, ErrorCode.ABORTED), String(err)).toBe(true);
  });
});

describe('an abort after a run has committed is too late to undo it', () => {
  // The race a SIGINT can meet (test/faults/signals.test.ts): the mirror's
  // renames are done and its events say so when the signal fires. The run
  // resolves with its outcome; rejecting with ABORTED would tell the caller
  // "the target is unchanged" about a target that holds every package.
  it('runMirror resolves with its outcome when the signal fires at its first post-commit event', async () => {
    const controller = new AbortController();
    const targetDir = await mkdtemp(join(tmp, 'late-mirror-'));
    const outcome = await runMirror({
      requirements: REQUIREMENTS,
      platforms: PLATFORMS,
      source: new FilesystemMirrorSource({ baseDir: MIRROR, flavor: 'tofu' }),
      pool,
      flavor: 'tofu',
      locks: new Locks(),
      targetDir,
      signal: controller.signal,
      events: (e) => {
        if (e.type === 'mirror_package') controller.abort(new Error('stopped by the caller'));
      },
    });
    expect(controller.signal.aborted).toBe(true);
    expect(outcome.failures).toEqual([]);
    expect(outcome.written).toBeGreaterThan(0);
  });

  it('runMirror still rejects with ABORTED when the signal fires before the commit', async () => {
    const controller = new AbortController();
    const err = await rejection(
      runMirror({
        requirements: REQUIREMENTS,
        platforms: PLATFORMS,
        source: new FilesystemMirrorSource({ baseDir: MIRROR, flavor: 'tofu' }),
        pool,
        flavor: 'tofu',
        locks: new Locks(),
        targetDir: await mkdtemp(join(tmp, 'early-mirror-')),
        signal: controller.signal,
        events: (e) => {
          if (e.type === 'fetch_complete') controller.abort(new Error('stopped by the caller'));
        },
      }),
    );
    expect(isProvkitError(err, ErrorCode.ABORTED), String(err)).toBe(true);
  });
});

describe('lockModule: an abort before its lock file is in place rejects, one after it is too late', () => {
  const OLD_LOCK = '# an earlier lock file, to be left byte for byte as it is\n';

  /** lockModule over the demo mirror in a module holding OLD_LOCK; `onEvent` may abort `controller`. */
  async function lockOverOldLock(
    prefix: string,
    onEvent: (e: InstallerEvent, controller: AbortController) => void,
  ): Promise<{ dir: string; controller: AbortController; run: ReturnType<typeof lockModule> }> {
    const dir = await moduleDir(prefix);
    await writeFile(join(dir, '.terraform.lock.hcl'), OLD_LOCK);
    const controller = new AbortController();
    const run = lockModule(dir, {
      flavor: 'tofu',
      source: new FilesystemMirrorSource({ baseDir: MIRROR, flavor: 'tofu' }),
      pool,
      platforms: PLATFORMS,
      signal: controller.signal,
      events: (e) => onEvent(e, controller),
    });
    return { dir, controller, run };
  }

  it('rejects with ABORTED and leaves the old lock file as it was when the signal fires after the last package, before the write lands', async () => {
    // Every package hashed: the run has ended, nothing is left but the decision and the write. The abort
    // comes on the next turn of the event loop (as a signal's does), while the write's file I/O is under way.
    let complete = 0;
    const { dir, controller, run } = await lockOverOldLock('late-module-', (e, c) => {
      if (e.type === 'fetch_complete' && ++complete === REQUIREMENTS.length * PLATFORMS.length)
        setImmediate(() => c.abort(new Error('stopped by the caller')));
    });
    const err = await rejection(run);
    expect(isProvkitError(err, ErrorCode.ABORTED), String(err)).toBe(true);
    expect((err as Error & { cause?: unknown }).cause).toBe(controller.signal.reason);
    expect(await readFile(join(dir, '.terraform.lock.hcl'), 'utf8')).toBe(OLD_LOCK);
    // No temporary file of the write left beside it.
    expect((await readdir(dir)).sort()).toEqual(['.terraform.lock.hcl', 'main.tf']);
  });

  it('resolves with what it wrote when the signal fires at its first event after the write (hashes_obtained)', async () => {
    const { dir, controller, run } = await lockOverOldLock('written-module-', (e, c) => {
      if (e.type === 'hashes_obtained') c.abort(new Error('stopped by the caller'));
    });
    const outcome = await run;
    expect(controller.signal.aborted).toBe(true);
    expect(outcome.status).toBe('updated');
    expect(outcome.error).toBeUndefined();
    const written = await readFile(join(dir, '.terraform.lock.hcl'), 'utf8');
    for (const r of REQUIREMENTS) expect(written).toContain(`provider "${r.provider.toString()}"`);
    expect((await readdir(dir)).sort()).toEqual(['.terraform.lock.hcl', 'main.tf']);
  });
});

describe("a caller's own AbortSignal, given to runs with many packages in flight", () => {
  // Node warns (MaxListenersExceededWarning) past 10 listeners on one
  // EventTarget; each run derives its own signal from the caller's
  // (installer/abort.ts `runSignal`): one listener of the run's on the
  // caller's signal while it runs, none after it.
  const complete: Record<string, (signal: AbortSignal) => Promise<unknown>> = {
    'runLock over a FetchCache given the same signal': async (signal) => {
      const source = new FilesystemMirrorSource({ baseDir: MIRROR, flavor: 'tofu' });
      const cache = new FetchCache({ source, pool, signal });
      try {
        return await runLock({
          requirements: REQUIREMENTS,
          platforms: PLATFORMS,
          cache,
          flavor: 'tofu',
          oldLocks: new Locks(),
          signal,
        });
      } finally {
        await cache.close();
      }
    },
    runMirror: async (signal) =>
      runMirror({
        requirements: REQUIREMENTS,
        platforms: PLATFORMS,
        source: new FilesystemMirrorSource({ baseDir: MIRROR, flavor: 'tofu' }),
        pool,
        flavor: 'tofu',
        locks: new Locks(),
        targetDir: await mkdtemp(join(tmp, 'listeners-mirror-')),
        signal,
      }),
  };

  it.each(Object.keys(complete))('%s: no MaxListenersExceededWarning, no listener left behind', async (name) => {
    const warnings: string[] = [];
    const onWarning = (w: Error): void => {
      if (w.name === 'MaxListenersExceededWarning') warnings.push(w.message);
    };
    process.on('warning', onWarning);
    try {
      // Two runs at once on one signal, then one more: a long-lived caller's signal.
      const { signal } = new AbortController();
      await Promise.all([complete[name]!(signal), complete[name]!(signal)]);
      await complete[name]!(signal);
      // process.emitWarning emits on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).toEqual([]);
      expect(getEventListeners(signal, 'abort')).toHaveLength(0);
    } finally {
      process.off('warning', onWarning);
    }
  });
});
