/**
 * The live progress display of `lock`, `mirror` and `install` on a terminal
 * (issue 14): below the command's own lines, one line per package in flight
 * (bytes, percentage, rate; "waiting", "retrying in 4 s after HTTP 503",
 * "hashing and verifying") and an overall line, redrawn in place a few times
 * a second. Redrawn on a timer too, so the elapsed time and a stalled
 * download ("no data for 12 s") show: a long download never looks hung.
 * Retries and resumes also leave a line of their own above the display.
 *
 * Only for a terminal: the caller creates it when stdout is one and the
 * output is not `-json` (src/cli/render.ts); piped output never holds any of
 * it. Every other write of the run goes through {@link ProgressDisplay.print},
 * which takes the display away, writes, and draws it again below.
 *
 * The reference tools have no such display (terraform prints the
 * `- Installing…` lines only); the lines above the display are theirs.
 */
import type { Flavor, ProviderAddress } from '../addresses/index.js';
import type { InstallerEvent } from '../installer/events.js';
import type { TextSink } from './human.js';
import { count } from './words.js';
import { terminalLine } from './escape.js';

export interface ProgressOptions {
  /** The terminal (stdout). */
  readonly out: TextSink;
  readonly flavor: Flavor;
  /** The terminal's width now (it may be resized while the run goes on). */
  readonly columns: () => number;
  readonly color: boolean;
  /** Milliseconds since some epoch (default `Date.now`). */
  readonly now?: () => number;
  /** How often the display is redrawn without news (default 250 ms); 0: only on events. */
  readonly intervalMs?: number;
}

type State = 'waiting' | 'downloading' | 'retrying' | 'hashing';

interface Item {
  readonly label: string;
  state: State;
  bytes: number;
  total: number | undefined;
  /** When bytes last grew (or the download began). */
  lastData: number;
  /** Recent (time, bytes) samples for the rate. */
  samples: Array<readonly [number, number]>;
  retryUntil: number;
  retryReason: string;
}

/** How far back the rate looks. */
const RATE_WINDOW_MS = 3000;
/** A download that received nothing for this long says so. */
const STALL_MS = 5000;
/** At most this many package lines; the rest are counted. */
const MAX_LINES = 8;

const ESC = '\u001b[';

/** `1.5 MiB`, `980 KiB`, `12 B` (binary units, one decimal from KiB on). */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v.toFixed(1)} ${units[u]!}`;
}

/** `0:07`, `1:02:03`. */
export function formatElapsed(ms: number): string {
  const s = Math.floor(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

/** `HTTP 503 Service Unavailable` → `HTTP 503`; other reasons up to their first colon's message, shortened. */
function shortReason(reason: string): string {
  const http = /^HTTP (\d{3})\b/.exec(reason);
  if (http) return `HTTP ${http[1]!}`;
  // A server's text may be in it: one line, escaped (src/ui/escape.ts).
  const text = terminalLine(reason);
  return text.length > 60 ? `${text.slice(0, 59)}…` : text;
}

/** Cuts a line to `width` code points (an escape sequence counts nothing). */
function fit(line: string, width: number): string {
  if (width <= 0) return line;
  let out = '';
  let n = 0;
  for (let i = 0; i < line.length;) {
    const esc = /^\u001b\[[0-9;]*m/.exec(line.slice(i));
    if (esc) {
      out += esc[0];
      i += esc[0].length;
      continue;
    }
    const ch = String.fromCodePoint(line.codePointAt(i)!);
    if (n >= width) break;
    out += ch;
    n++;
    i += ch.length;
  }
  return out;
}

export class ProgressDisplay {
  private readonly items = new Map<string, Item>();
  private readonly now: () => number;
  private readonly startedAt: number;
  private drawn = 0;
  private timer: ReturnType<typeof setInterval> | undefined;
  private stopped = false;
  /** Packages finished (downloaded or failed) and the bytes of those downloaded. */
  private finished = 0;
  private finishedBytes = 0;

  constructor(private readonly options: ProgressOptions) {
    this.now = options.now ?? Date.now;
    this.startedAt = this.now();
  }

  private key(e: {
    provider: ProviderAddress;
    version: { toString(): string };
    platform: { toString(): string };
  }): string {
    return `${e.provider.toString()} ${e.version.toString()} ${e.platform.toString()}`;
  }

  private label(e: {
    provider: ProviderAddress;
    version: { toString(): string };
    platform: { toString(): string };
  }): string {
    return `${e.provider.toShortString(this.options.flavor)} ${e.version.toString()} ${e.platform.toString()}`;
  }

  /** Takes an event into the display's state; returns the line to print above it, if the event calls for one. */
  event(e: InstallerEvent): string | undefined {
    if (this.stopped) return undefined;
    const t = this.now();
    switch (e.type) {
      case 'fetch_start':
      case 'install_start': {
        const k = this.key(e);
        if (!this.items.has(k)) {
          this.items.set(k, {
            label: this.label(e),
            state: 'waiting',
            bytes: 0,
            total: undefined,
            lastData: t,
            samples: [],
            retryUntil: 0,
            retryReason: '',
          });
        }
        this.ensureTimer();
        return undefined;
      }
      case 'fetch_progress': {
        const it = this.items.get(this.key(e));
        if (!it) return undefined;
        if (it.state === 'waiting' || it.state === 'retrying') it.lastData = t;
        if (e.bytes !== it.bytes) it.lastData = t;
        it.bytes = e.bytes;
        it.total = e.total;
        it.state = e.total !== undefined && e.bytes >= e.total ? 'hashing' : 'downloading';
        it.samples.push([t, e.bytes]);
        while (it.samples.length > 2 && t - it.samples[0]![0] > RATE_WINDOW_MS) it.samples.shift();
        return undefined;
      }
      case 'fetch_retry': {
        const it = this.items.get(this.key(e));
        const secs = Math.ceil(e.delayMs / 1000);
        if (it) {
          it.state = 'retrying';
          it.retryUntil = t + e.delayMs;
          it.retryReason = shortReason(e.reason);
          it.samples = [];
        }
        return `- ${this.label(e)}: retrying in ${secs} s after ${shortReason(e.reason)}\n`;
      }
      case 'fetch_resume': {
        const it = this.items.get(this.key(e));
        if (it) {
          it.state = 'downloading';
          it.bytes = e.offset;
          it.total = e.total;
          it.lastData = t;
          it.samples = [[t, e.offset]];
        }
        return `- ${this.label(e)}: resuming at ${formatBytes(e.offset)} of ${formatBytes(e.total)}\n`;
      }
      case 'fetch_complete':
      case 'install_complete':
      case 'fetch_failed': {
        const k = this.key(e);
        const it = this.items.get(k);
        if (it) {
          this.items.delete(k);
          this.finished++;
          if (e.type !== 'fetch_failed') this.finishedBytes += it.bytes;
        }
        return undefined;
      }
      default:
        return undefined;
    }
  }

  /** The display's lines now (without the redraw codes); empty when nothing is in flight. */
  lines(): string[] {
    if (this.items.size === 0) return [];
    const t = this.now();
    const width = Math.max(20, this.options.columns() - 1);
    const items = [...this.items.values()];
    const rows = items.slice(0, MAX_LINES).map((it) => ({ label: it.label, status: this.status(it, t) }));
    // The status has the room it needs; the labels share what is left (cut at their start: the host goes first).
    const longest = Math.max(...rows.map((r) => r.status.length));
    const widest = Math.max(...rows.map((r) => r.label.length));
    const labelWidth = Math.max(12, Math.min(widest, width - 4 - longest));
    // Every label loses the same leading characters (the host, usually), so that they stay aligned.
    const cut = widest - labelWidth;
    const shown = rows.map((r) => {
      const label = (cut > 0 ? `…${r.label.slice(cut + 1)}` : r.label).padEnd(labelWidth);
      return fit(`  ${label}  ${r.status}`, width);
    });
    if (items.length > MAX_LINES) shown.push(`  … and ${items.length - MAX_LINES} more`);
    const active = items.filter((i) => i.state === 'downloading' || i.state === 'hashing');
    const bytes = this.finishedBytes + items.reduce((n, i) => n + i.bytes, 0);
    const rate = items.reduce((n, i) => n + this.rate(i), 0);
    const all = this.finished + items.length;
    const overall =
      `${this.finished} of ${count(all, 'package')} done, ${active.length} in progress: ` +
      `${formatBytes(bytes)}${rate > 0 ? `, ${formatBytes(Math.round(rate))}/s` : ''}, ${formatElapsed(t - this.startedAt)} elapsed`;
    const line = fit(overall, width);
    shown.push(this.options.color ? `${ESC}1m${line}${ESC}0m` : line);
    return shown;
  }

  private rate(it: Item): number {
    if (it.state !== 'downloading' || it.samples.length < 2) return 0;
    const [t0, b0] = it.samples[0]!;
    const [t1, b1] = it.samples[it.samples.length - 1]!;
    const now = this.now();
    // Bytes over the window up to now: a download that stopped slows to 0.
    const span = Math.max(now - t0, t1 - t0, 1);
    return ((b1 - b0) * 1000) / span;
  }

  private status(it: Item, t: number): string {
    switch (it.state) {
      case 'waiting':
        return 'waiting';
      case 'retrying':
        return it.retryUntil > t
          ? `retrying in ${Math.ceil((it.retryUntil - t) / 1000)} s after ${it.retryReason}`
          : `retrying after ${it.retryReason}`;
      case 'hashing':
        return `${formatBytes(it.bytes)}  100%  hashing and verifying`;
      case 'downloading': {
        const pct = it.total ? `${Math.floor((it.bytes * 100) / it.total)}%` : '';
        const size =
          it.total === undefined ? formatBytes(it.bytes) : `${formatBytes(it.bytes)} / ${formatBytes(it.total)}`;
        const rate = this.rate(it);
        const stalled = t - it.lastData >= STALL_MS ? `  no data for ${Math.floor((t - it.lastData) / 1000)} s` : '';
        return `${size}${pct ? `  ${pct}` : ''}${rate > 0 ? `  ${formatBytes(Math.round(rate))}/s` : ''}${stalled}`;
      }
    }
  }

  /** Takes the display off the screen (the cursor goes back to where it began). */
  private clear(): string {
    if (this.drawn === 0) return '';
    const s = `\r${ESC}${this.drawn}A${ESC}J`;
    this.drawn = 0;
    return s;
  }

  private draw(): string {
    if (this.stopped) return '';
    const lines = this.lines();
    this.drawn = lines.length;
    return lines.map((l) => `${l}\n`).join('');
  }

  /** Redraws the display in place. */
  redraw(): void {
    if (this.stopped) return;
    const text = this.clear() + this.draw();
    if (text !== '') this.options.out.write(text);
    if (this.items.size === 0) this.stopTimer();
  }

  /**
   * Writes `text` to `sink` (stdout or stderr, both the terminal) with the
   * display taken away first and drawn again after it.
   */
  print(sink: TextSink, text: string): void {
    if (this.drawn > 0) this.options.out.write(this.clear());
    sink.write(text);
    if (this.items.size > 0) this.options.out.write(this.draw());
  }

  /** Takes the display away for good (before the final diagnostics and summary). */
  stop(): void {
    if (this.stopped) return;
    if (this.drawn > 0) this.options.out.write(this.clear());
    this.stopped = true;
    this.stopTimer();
  }

  private ensureTimer(): void {
    const ms = this.options.intervalMs ?? 250;
    if (this.timer !== undefined || ms <= 0) return;
    this.timer = setInterval(() => this.redraw(), ms);
    // The display never keeps a finished command alive.
    this.timer.unref();
  }

  private stopTimer(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }
}
