/**
 * Joining cancellation signals: one `AbortSignal` that aborts when either of
 * two does (a run's interrupt and one operation's own cancel, a source's
 * refusal, an output that closed), without `AbortSignal.any` when only one is
 * given (it would add a listener for nothing).
 */

/**
 * A signal that aborts when `a` or `b` aborts, with that signal's reason
 * (`AbortSignal.any`); the one given when the other is undefined; undefined
 * when neither is.
 */
export function eitherSignal(a: AbortSignal | undefined, b: AbortSignal): AbortSignal;
export function eitherSignal(a: AbortSignal, b: AbortSignal | undefined): AbortSignal;
export function eitherSignal(a: AbortSignal | undefined, b: AbortSignal | undefined): AbortSignal | undefined;
export function eitherSignal(a: AbortSignal | undefined, b: AbortSignal | undefined): AbortSignal | undefined {
  return a === undefined || b === undefined ? (a ?? b) : AbortSignal.any([a, b]);
}
