/**
 * The timers of one HTTP exchange (one redirect hop): the connect timeout
 * (until the response headers arrive) and the idle timeout (between two body
 * chunks), both aborting the exchange's own controller, which also follows
 * the caller's signal. Used by {@link HttpClient} (`client.ts`).
 */
import type { Clock } from './types.js';
import { redactURL } from './url.js';

/** One HTTP exchange (one redirect hop): its abort controller and timers. */
export class Hop {
  readonly controller = new AbortController();
  timedOut: string | undefined;
  /** The URL as messages show it ({@link redactURL}). */
  readonly url: string;
  /** The URL itself (userinfo included: relative references resolve against it). */
  readonly href: string;
  private timer: { cancel(): void } | undefined;
  private lastTouch = 0;
  private readonly unlink: () => void;

  constructor(
    private readonly clock: Clock,
    url: URL,
    userSignal: AbortSignal | undefined,
  ) {
    this.href = url.href;
    this.url = redactURL(url);
    const onAbort = (): void => this.controller.abort(userSignal?.reason);
    if (userSignal?.aborted) onAbort();
    userSignal?.addEventListener('abort', onAbort, { once: true });
    this.unlink = () => userSignal?.removeEventListener('abort', onAbort);
  }

  /** (Re)arms the timeout; when it fires the exchange is aborted and `timedOut` says why. */
  arm(ms: number, why: string): void {
    this.timer?.cancel();
    this.timer = undefined;
    if (ms <= 0) return;
    this.timer = this.clock.setTimer(() => {
      this.timedOut = why;
      this.controller.abort(new Error(why));
    }, ms);
  }

  /**
   * An idle timeout that {@link touch} keeps off: the timer is not re-armed
   * per chunk (a body has tens of thousands); when it fires it measures the
   * time since the last touch and waits the rest, or aborts.
   */
  armIdle(ms: number, why: string): void {
    this.lastTouch = this.clock.now();
    const check = (wait: number): void => {
      this.timer = this.clock.setTimer(() => {
        const quiet = this.clock.now() - this.lastTouch;
        if (quiet >= ms) {
          this.timedOut = why;
          this.controller.abort(new Error(why));
        } else check(ms - quiet);
      }, wait);
    };
    this.timer?.cancel();
    this.timer = undefined;
    if (ms > 0) check(ms);
  }

  /** Data arrived (see {@link armIdle}). */
  touch(): void {
    this.lastTouch = this.clock.now();
  }

  disarm(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  abort(): void {
    this.disarm();
    this.controller.abort(new Error('response discarded'));
  }

  dispose(): void {
    this.disarm();
    this.unlink();
  }
}
