// eitherSignal (src/net/signals.ts): the one way two cancellation signals
// are joined (a run's interrupt with an operation's own cancel, a source's
// refusal, or an output that closed).
import { describe, expect, it } from 'vitest';

import { eitherSignal } from '../../src/net/index.js';

describe('eitherSignal', () => {
  it('aborts when the first aborts, with its reason', () => {
    const a = new AbortController();
    const b = new AbortController();
    const joined = eitherSignal(a.signal, b.signal);
    expect(joined.aborted).toBe(false);
    const reason = new Error('SIGINT');
    a.abort(reason);
    expect(joined.aborted).toBe(true);
    expect(joined.reason).toBe(reason);
    expect(b.signal.aborted).toBe(false);
  });

  it('aborts when the second aborts, with its reason', () => {
    const a = new AbortController();
    const b = new AbortController();
    const joined = eitherSignal(a.signal, b.signal);
    b.abort('cancelled');
    expect(joined.aborted).toBe(true);
    expect(joined.reason).toBe('cancelled');
  });

  it('is already aborted when one of them is', () => {
    const a = new AbortController();
    a.abort('early');
    expect(eitherSignal(a.signal, new AbortController().signal).reason).toBe('early');
  });

  it('one signal given: that very signal; none: undefined', () => {
    const a = new AbortController().signal;
    expect(eitherSignal(a, undefined)).toBe(a);
    expect(eitherSignal(undefined, a)).toBe(a);
    expect(eitherSignal(undefined, undefined)).toBeUndefined();
  });
});
