/**
 * The one cancellation contract of the operations (`lockModule`, `runLock`, `runMirror`,
 * `runInstall`, `runVerify`, `createBundle`, `importBundle`; docs/api.md
 * "Cancel a run"): once the caller's `signal` aborts,
 *
 * - the run asks its source nothing more: a call not yet made is not made,
 *   and one in flight is given up (its late answer, or its own error, is not
 *   acted on), so no package fetch starts (`fetch_start`) after the abort;
 * - the run rejects with a `ProvkitError` `ABORTED`, whatever the source or
 *   the network rejected with meanwhile (the `TimeoutError` of
 *   `AbortSignal.timeout`, a reset connection, a source's own error), with
 *   the signal's reason as its `cause`: the same code for every run, never a
 *   resolved outcome whose failures say `IO` or a timeout.
 *
 * What a run did before the abort is undone by the run itself (a lock file
 * or a mirror is written all or nothing; see each run's documentation).
 */
import { setMaxListeners } from 'node:events';

import type { Platform, ProviderAddress, Version } from '../addresses/index.js';
import { ErrorCode, ProvkitError } from '../errors.js';
import type { AvailableVersions, PackageMeta, PackageMetaHints, Source } from '../sources/index.js';

/** The error of a run that `signal` aborted: `ABORTED`, the signal's reason as cause. */
export function abortedError(what: string, signal: AbortSignal): ProvkitError {
  return new ProvkitError(ErrorCode.ABORTED, `${what} was interrupted`, { cause: signal.reason });
}

/** Throws {@link abortedError} when `signal` has aborted. */
export function throwIfAborted(what: string, signal: AbortSignal | undefined): void {
  if (signal?.aborted === true) throw abortedError(what, signal);
}

/** A run's own signal ({@link runSignal}) and the way to let go of the caller's. */
export interface RunSignal {
  /** Aborts when the caller's signal aborts, with its reason; undefined when the caller gave none. */
  readonly signal: AbortSignal | undefined;
  /** Removes the one listener on the caller's signal (idempotent): call when the run ends. */
  readonly release: () => void;
}

/**
 * The signal a run listens to, derived from the caller's `parent`: one
 * listener on `parent` (removed by `release`), whatever the run does, and no
 * listener limit on the derived signal, on which the run's concurrent
 * fetches, downloads and hashes each add their own. Without it a caller's
 * own `AbortSignal` (Node's default limit is 10 listeners per target) met a
 * `MaxListenersExceededWarning` from any run with more than ten packages in
 * flight (nodejs.org/api/events.html, `events.setMaxListeners`).
 */
export function runSignal(parent: AbortSignal | undefined): RunSignal {
  if (parent === undefined) return { signal: undefined, release: () => undefined };
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  if (parent.aborted) {
    controller.abort(parent.reason);
    return { signal: controller.signal, release: () => undefined };
  }
  const onAbort = (): void => controller.abort(parent.reason);
  parent.addEventListener('abort', onAbort, { once: true });
  return { signal: controller.signal, release: () => parent.removeEventListener('abort', onAbort) };
}

/**
 * Runs `body` under the contract (see the module comment), with the run's
 * own signal ({@link runSignal}, passed to `body`: the run uses it in place
 * of the caller's, which then holds one listener of the run's, removed when
 * it settles). When the caller's signal has aborted by the time `body`
 * settles, however it settles, the result is
 * {@link abortedError} (or the run's own `ABORTED` error, which may say more:
 * "the target is unchanged") — unless `body` had called `committed` (its
 * writes are in place: a mirror's renames, a bundle import's): an abort
 * after that point is too late to undo anything, so a run that then
 * resolves resolves with its outcome, and the caller reports the interrupt
 * as arriving after completion (cli/interrupt.ts `runInterruptible`).
 */
export async function abortable<T>(
  what: string,
  parent: AbortSignal | undefined,
  body: (signal: AbortSignal | undefined, committed: () => void) => Promise<T>,
): Promise<T> {
  let done = false;
  const committed = (): void => {
    done = true;
  };
  if (parent === undefined) return body(undefined, committed);
  throwIfAborted(what, parent);
  const { signal, release } = runSignal(parent);
  let value: T;
  try {
    value = await body(signal, committed);
  } catch (err) {
    if (!parent.aborted) throw err;
    throw err instanceof ProvkitError && err.code === ErrorCode.ABORTED ? err : abortedError(what, parent);
  } finally {
    release();
  }
  if (!done) throwIfAborted(what, parent);
  return value;
}

/**
 * `source` as a run under `signal` sees it: after the abort no call reaches
 * `source` (it rejects with `ABORTED` at once), and a call in flight settles
 * as `ABORTED` when the signal fires, whatever `source` does with it later.
 */
export function abortableSource(source: Source, signal: AbortSignal | undefined, what: string): Source {
  if (signal === undefined) return source;
  const guard = <T>(call: () => Promise<T>): Promise<T> => {
    if (signal.aborted) return Promise.reject(abortedError(what, signal));
    return new Promise<T>((resolve, reject) => {
      const onAbort = (): void => reject(abortedError(what, signal));
      signal.addEventListener('abort', onAbort, { once: true });
      const settled = (): void => signal.removeEventListener('abort', onAbort);
      call().then(
        (value) => {
          settled();
          if (signal.aborted) onAbort();
          else resolve(value);
        },
        (err: Error) => {
          settled();
          if (signal.aborted) onAbort();
          else reject(err);
        },
      );
    });
  };
  // A getter on some sources (MemoizeSource): read once, called with its source.
  const localPlatforms = source.localPlatforms;
  return {
    forDisplay: (provider?: ProviderAddress) => source.forDisplay(provider),
    availableVersions: (provider: ProviderAddress): Promise<AvailableVersions> =>
      guard(() => source.availableVersions(provider, signal)),
    packageMeta: (
      provider: ProviderAddress,
      version: Version,
      platform: Platform,
      _signal?: AbortSignal,
      hints?: PackageMetaHints,
    ): Promise<PackageMeta> => guard(() => source.packageMeta(provider, version, platform, signal, hints)),
    ...(source.publishedPlatforms === undefined
      ? {}
      : {
          publishedPlatforms: (provider: ProviderAddress, version: Version) =>
            guard(() => source.publishedPlatforms!(provider, version, signal)),
        }),
    ...(localPlatforms === undefined
      ? {}
      : {
          localPlatforms: (provider: ProviderAddress, version: Version) =>
            guard(() => localPlatforms.call(source, provider, version)),
        }),
  };
}

/** `options` with the run's own signal ({@link abortable}) in place of the caller's. */
export function withSignal<T extends { readonly signal?: AbortSignal }>(
  options: T,
  signal: AbortSignal | undefined,
): T {
  if (signal === undefined) return options;
  return { ...options, signal };
}
