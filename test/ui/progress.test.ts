// Issue 14: the live progress display (src/ui/progress.ts) on a fake clock:
// what each state of a package shows, the overall line, a stalled download,
// and the in-place redraw around other output. (Under a real terminal:
// test/e2e/terminal.test.ts.)
import { describe, expect, it } from 'vitest';

import { parsePlatform, parseProviderSource, parseVersion } from '../../src/addresses/index.js';
import { formatBytes, ProgressDisplay } from '../../src/ui/progress.js';

const provider = parseProviderSource('hashicorp/aws', 'terraform');
const version = parseVersion('5.56.1');
const platform = parsePlatform('linux_amd64');
const pkg = { provider, version, platform };

function display(columns = 80): { d: ProgressDisplay; text: () => string; tick: (ms: number) => void } {
  let now = 1_000_000;
  let text = '';
  const d = new ProgressDisplay({
    out: { write: (s: string) => (text += s) },
    flavor: 'terraform',
    columns: () => columns,
    color: false,
    now: () => now,
    intervalMs: 0,
  });
  return { d, text: () => text, tick: (ms) => (now += ms) };
}

describe('issue 14: the live progress display', () => {
  it('shows bytes, percentage and rate per package, and an overall line', () => {
    const { d, tick } = display();
    d.event({ type: 'fetch_start', ...pkg, location: '' });
    expect(d.lines()).toEqual([
      '  hashicorp/aws 5.56.1 linux_amd64  waiting',
      '0 of 1 package done, 0 in progress: 0 B, 0:00 elapsed',
    ]);
    d.event({ type: 'fetch_progress', ...pkg, bytes: 0, total: 4 * 1024 * 1024 });
    tick(1000);
    d.event({ type: 'fetch_progress', ...pkg, bytes: 1024 * 1024, total: 4 * 1024 * 1024 });
    expect(d.lines()).toEqual([
      '  hashicorp/aws 5.56.1 linux_amd64  1.0 MiB / 4.0 MiB  25%  1.0 MiB/s',
      '0 of 1 package done, 1 in progress: 1.0 MiB, 1.0 MiB/s, 0:01 elapsed',
    ]);
  });

  it('says when a download receives nothing, and counts down a retry', () => {
    const { d, tick } = display();
    d.event({ type: 'fetch_start', ...pkg, location: '' });
    d.event({ type: 'fetch_progress', ...pkg, bytes: 2048, total: 4096 });
    tick(7000);
    expect(d.lines()[0]).toBe('  hashicorp/aws 5.56.1 linux_amd64  2.0 KiB / 4.0 KiB  50%  no data for 7 s');
    expect(
      d.event({ type: 'fetch_retry', ...pkg, attempt: 1, delayMs: 4000, reason: 'HTTP 503 Service Unavailable' }),
    ).toBe('- hashicorp/aws 5.56.1 linux_amd64: retrying in 4 s after HTTP 503\n');
    tick(1500);
    expect(d.lines()[0]).toBe('  hashicorp/aws 5.56.1 linux_amd64  retrying in 3 s after HTTP 503');
    expect(d.event({ type: 'fetch_resume', ...pkg, offset: 2048, total: 4096 })).toBe(
      '- hashicorp/aws 5.56.1 linux_amd64: resuming at 2.0 KiB of 4.0 KiB\n',
    );
    d.event({ type: 'fetch_progress', ...pkg, bytes: 4096, total: 4096 });
    expect(d.lines()[0]).toBe('  hashicorp/aws 5.56.1 linux_amd64  4.0 KiB  100%  hashing and verifying');
    d.event({ type: 'fetch_complete', ...pkg, auth: 'signed', keyId: undefined, reused: false });
    expect(d.lines()).toEqual([]);
  });

  it('redraws in place around other output, and fits the terminal', () => {
    const { d, text } = display(40);
    d.event({ type: 'fetch_start', ...pkg, location: '' });
    d.redraw();
    const sink = { write: (s: string) => d.print({ write: () => undefined }, s) };
    sink.write('- line\n');
    // Taken away (cursor up over its 2 lines, erase below) before the line, drawn again after it.
    expect(text()).toContain('\r\u001b[2A\u001b[J');
    for (const l of d.lines()) expect([...l].length).toBeLessThanOrEqual(39);
    d.stop();
    expect(text().endsWith('\r\u001b[2A\u001b[J')).toBe(true);
  });

  it('formats sizes in binary units', () => {
    expect([formatBytes(12), formatBytes(2048), formatBytes(1536 * 1024), formatBytes(3 * 1024 ** 3)]).toEqual([
      '12 B',
      '2.0 KiB',
      '1.5 MiB',
      '3.0 GiB',
    ]);
  });
});
