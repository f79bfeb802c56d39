// The live progress display (src/ui/progress.ts) on a fake clock: what
// each state of a package shows, the overall line counting every package
// from the start, a local archive's hashing, narrow terminals (never a figure
// cut), a stalled download, and the in-place redraw around other output.
// (Under a real terminal: test/e2e/terminal.test.ts.)
import { describe, expect, it } from 'vitest';

import { parsePlatform, parseProviderSource, parseVersion } from '../../src/addresses/index.js';
import { formatBytes, overallLine, ProgressDisplay } from '../../src/ui/progress.js';

const provider = parseProviderSource('hashicorp/aws', 'terraform');
const version = parseVersion('5.56.1');
const platform = parsePlatform('linux_amd64');
const pkg = { provider, version, platform };

function display(columns = 80): {
  d: ProgressDisplay;
  text: () => string;
  tick: (ms: number) => void;
  resize: (columns: number) => void;
} {
  let now = 1_000_000;
  let text = '';
  let cols = columns;
  const d = new ProgressDisplay({
    out: { write: (s: string) => (text += s) },
    flavor: 'terraform',
    columns: () => cols,
    color: false,
    now: () => now,
    intervalMs: 0,
  });
  return { d, text: () => text, tick: (ms) => (now += ms), resize: (n) => (cols = n) };
}

describe('the live progress display', () => {
  it('shows bytes, percentage and rate per package, and an overall line', () => {
    const { d, tick } = display();
    d.event({ type: 'fetch_start', ...pkg, location: '' });
    expect(d.lines()).toEqual([
      '  hashicorp/aws 5.56.1 linux_amd64  waiting',
      '0 of 1 package done, 0 in progress, 1 waiting: 0:00 elapsed',
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
    // Drawn with the cursor taken back to its top (2 rows up); taken away by erasing its first
    // row, then everything below (never the whole-screen erase), before the line; drawn again after it.
    expect(text()).toBe(
      [
        `${d.lines().join('\n')}\n\u001b[2A`,
        '\r\u001b[K\u001b7\u001b[B\u001b[J\u001b8',
        `${d.lines().join('\n')}\n\u001b[2A`,
      ].join(''),
    );
    for (const l of d.lines()) expect([...l].length).toBeLessThanOrEqual(39);
    d.stop();
    expect(text().endsWith('\r\u001b[K\u001b7\u001b[B\u001b[J\u001b8')).toBe(true);
  });

  it('counts every package of the run from the start: the queued ones as waiting, after those in progress', () => {
    const { d, tick } = display(100);
    const platforms = ['linux_amd64', 'darwin_arm64', 'linux_arm64', 'darwin_amd64', 'windows_amd64'].map((p) =>
      parsePlatform(p),
    );
    for (const p of platforms) d.event({ type: 'fetch_queued', provider, version, platform: p });
    for (const p of platforms.slice(3))
      d.event({ type: 'fetch_progress', provider, version, platform: p, bytes: 0, total: 2048 });
    tick(1000);
    for (const p of platforms.slice(3))
      d.event({ type: 'fetch_progress', provider, version, platform: p, bytes: 1024, total: 2048 });
    expect(d.lines()).toEqual([
      '  hashicorp/aws 5.56.1 darwin_amd64   1.0 KiB / 2.0 KiB  50%  1.0 KiB/s',
      '  hashicorp/aws 5.56.1 windows_amd64  1.0 KiB / 2.0 KiB  50%  1.0 KiB/s',
      '  hashicorp/aws 5.56.1 linux_amd64    waiting',
      '  hashicorp/aws 5.56.1 darwin_arm64   waiting',
      '  hashicorp/aws 5.56.1 linux_arm64    waiting',
      '0 of 5 packages done, 2 in progress, 3 waiting: 2.0 KiB, 2.0 KiB/s, 0:01 elapsed',
    ]);
  });

  it("a local archive's hashing: bytes read for its checksum, then hashed, of the total, with a rate", () => {
    const { d, tick } = display(100);
    const MiB = 1024 * 1024;
    d.event({ type: 'fetch_start', ...pkg, location: '/mirror' });
    d.event({ type: 'fetch_progress', ...pkg, bytes: 0, total: 200 * MiB, phase: 'checksum' });
    tick(500);
    d.event({ type: 'fetch_progress', ...pkg, bytes: 100 * MiB, total: 200 * MiB, phase: 'checksum' });
    expect(d.lines()[0]).toBe('  hashicorp/aws 5.56.1 linux_amd64  reading  100.0 MiB / 200.0 MiB  50%  200.0 MiB/s');
    d.event({ type: 'fetch_progress', ...pkg, bytes: 0, total: 200 * MiB, phase: 'hash' });
    tick(1000);
    d.event({ type: 'fetch_progress', ...pkg, bytes: 50 * MiB, total: 200 * MiB, phase: 'hash' });
    expect(d.lines()).toEqual([
      '  hashicorp/aws 5.56.1 linux_amd64  hashing  50.0 MiB / 200.0 MiB  25%  50.0 MiB/s',
      // Not downloaded bytes: the overall line counts downloads only.
      '0 of 1 package done, 1 in progress: 0:01 elapsed',
    ]);
  });

  it('at 40 columns: the names go first (a waiting package keeps what room it has), then the rate; a figure is never cut and a percentage keeps its %', () => {
    const { d, tick, resize } = display(40);
    const other = parsePlatform('darwin_arm64');
    for (const p of [platform, other, parsePlatform('linux_arm64')])
      d.event({ type: 'fetch_queued', provider, version, platform: p });
    for (const [p, b] of [
      [platform, 656 * 1024],
      [other, 576 * 1024],
    ] as const) {
      d.event({ type: 'fetch_progress', provider, version, platform: p, bytes: 0, total: 1536 * 1024 });
      tick(1000);
      d.event({ type: 'fetch_progress', provider, version, platform: p, bytes: b, total: 1536 * 1024 });
    }
    const lines = d.lines();
    expect(lines).toEqual([
      '  656.0 KiB / 1.5 MiB  42%  328.0 KiB/s',
      '  576.0 KiB / 1.5 MiB  37%  576.0 KiB/s',
      // A waiting package's status leaves room for (the end of) its name.
      '  …corp/aws 5.56.1 linux_arm64  waiting',
      '0/3 done, 2 active, 1.2 MiB, 0:02',
    ]);
    for (const l of lines) expect([...l].length).toBeLessThanOrEqual(39);
    // Narrower still: the rate goes, the bytes and the percentage stay whole.
    resize(30);
    expect(d.lines()).toEqual([
      '  656.0 KiB / 1.5 MiB  42%',
      '  576.0 KiB / 1.5 MiB  37%',
      '  …linux_arm64  waiting',
      '0/3 done, 2 active, 0:02',
    ]);
    for (const l of d.lines()) expect([...l].length).toBeLessThanOrEqual(29);
  });

  it('the overall line in the widest wording that fits, whole parts left out after that', () => {
    const o = {
      done: 12,
      all: 35,
      active: 2,
      waiting: 21,
      bytes: 5 * 1024 * 1024,
      rate: 2 * 1024 * 1024,
      elapsedMs: 75_000,
    };
    expect(overallLine(o, 99)).toBe(
      '12 of 35 packages done, 2 in progress, 21 waiting: 5.0 MiB, 2.0 MiB/s, 1:15 elapsed',
    );
    expect(overallLine(o, 70)).toBe('12/35 done, 2 in progress, 21 waiting: 5.0 MiB, 2.0 MiB/s, 1:15');
    expect(overallLine(o, 58)).toBe('12/35 done, 2 active, 21 waiting, 5.0 MiB, 2.0 MiB/s, 1:15');
    expect(overallLine(o, 39)).toBe('12/35 done, 2 active, 5.0 MiB, 1:15');
    expect(overallLine(o, 19)).toBe('12/35 done, 1:15');
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
