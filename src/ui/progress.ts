/**
 * The live progress display of `lock`, `mirror` and `install` on a terminal
 * (docs/terminal.md): below the command's own lines, one line per package of
 * the run (bytes, percentage, rate; "waiting" from the start for the ones
 * queued, "hashing" for a local archive, "retrying in 4 s after HTTP 503",
 * "hashing and verifying") and an overall line counting every package,
 * redrawn in place a few times a second. Redrawn on a timer too, so the
 * elapsed time and a stalled download ("no data for 12 s") show: a long
 * download never looks hung. Retries and resumes also leave a line of their
 * own above the display.
 *
 * Narrow terminals: a line is never cut inside a figure. The package names
 * give way first (cut at their start, then left out), then the least
 * useful figures as whole words (a rate, a total); the overall line takes a
 * shorter wording, then leaves out whole parts ({@link overallLine}).
 *
 * The cursor rests at the top of the display between redraws, so taking it
 * away is "erase from here down", however many rows a resize made its lines
 * wrap into (a terminal that reflows, as tmux, VTE and iTerm2 do, rewraps
 * them below the cursor); nothing is counted from rows that no longer hold.
 * The first row is erased on its own before the rest, so that the erase is
 * never the "whole screen" one that tmux's scroll-on-clear copies into the
 * scrollback.
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
import type { InstallerEvent, ProgressPhase } from '../installer/events.js';
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

/**
 * `waiting`: not started (queued, or its download not begun); `downloading`;
 * `retrying`; `verifying`: every byte received, being hashed and checked;
 * `local`: a local archive being read for its `zh:` or hashed.
 */
type State = 'waiting' | 'downloading' | 'retrying' | 'verifying' | 'local';

interface Item {
  readonly label: string;
  state: State;
  phase: ProgressPhase;
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
/** A package name cut shorter than this is left out (its figures keep the room). */
const MIN_LABEL = 10;

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

/** Columns a line takes (code points; escape sequences take none). */
const width = (s: string): number => [...s.replace(/\u001b\[[0-9;]*m/g, '')].length;

/**
 * A package line's status as whole words, most useful first; `drop` gives
 * the order in which they are left out when the line is too narrow (by
 * index, least useful first). Never cut: a figure is shown whole or not at all.
 */
interface Status {
  readonly words: readonly string[];
  readonly drop: readonly number[];
  /** Between the words (default two spaces; one where they read as a phrase). */
  readonly sep?: string;
}

const joined = (s: Status, keep: (i: number) => boolean = () => true): string =>
  s.words.filter((_, i) => keep(i)).join(s.sep ?? '  ');

/** The words of `status` that fit `room` columns (joined by two spaces), dropping in its order. */
function fitStatus(status: Status, room: number): string {
  const keep = status.words.map(() => true);
  const text = (): string => joined(status, (i) => keep[i] === true);
  for (const i of status.drop) {
    if (width(text()) <= room) break;
    keep[i] = false;
  }
  return text();
}

/**
 * The overall line in the widest wording that fits `room`: every package of
 * the run counted (done, in progress, waiting), the bytes downloaded, the rate, the time
 * elapsed; then shorter words; then whole parts left out, the time and
 * "done" last. Never cut inside a figure.
 */
export function overallLine(
  o: { done: number; all: number; active: number; waiting: number; bytes: number; rate: number; elapsedMs: number },
  room: number,
): string {
  // Bytes downloaded; none yet (or a run that hashes local archives only) says nothing.
  const bytes = o.bytes > 0 ? formatBytes(o.bytes) : undefined;
  const rate = o.rate > 0 ? `${formatBytes(Math.round(o.rate))}/s` : undefined;
  const elapsed = formatElapsed(o.elapsedMs);
  const waiting = o.waiting > 0 ? `, ${o.waiting} waiting` : '';
  const parts = (...xs: Array<string | undefined | false>): string => xs.filter((x) => x).join(', ');
  const candidates = [
    `${o.done} of ${count(o.all, 'package')} done, ${o.active} in progress${waiting}: ${parts(bytes, rate, `${elapsed} elapsed`)}`,
    `${o.done}/${o.all} done, ${o.active} in progress${waiting}: ${parts(bytes, rate, elapsed)}`,
    parts(
      `${o.done}/${o.all} done`,
      `${o.active} active`,
      o.waiting > 0 && `${o.waiting} waiting`,
      bytes,
      rate,
      elapsed,
    ),
    parts(`${o.done}/${o.all} done`, `${o.active} active`, bytes, rate, elapsed),
    parts(`${o.done}/${o.all} done`, `${o.active} active`, bytes, elapsed),
    parts(`${o.done}/${o.all} done`, `${o.active} active`, elapsed),
    parts(`${o.done}/${o.all} done`, elapsed),
  ];
  return candidates.find((c) => width(c) <= room) ?? `${o.done}/${o.all} done`;
}

/**
 * The package names cut to share `room` columns, padded to one width, or
 * undefined when they cannot all be shown (less than {@link MIN_LABEL} when
 * any must be cut, or a version or platform would be cut). Every name loses
 * the same leading characters within the address (the host, usually), so
 * that they stay aligned; past the address, whole words go.
 */
function names(labels: readonly string[], room: number): string[] | undefined {
  const longest = Math.max(...labels.map(width));
  if (longest <= room) return labels.map((l) => l.padEnd(longest));
  if (room < MIN_LABEL) return undefined;
  const cut = longest - room + 1;
  const shown: string[] = [];
  for (const label of labels) {
    const address = label.indexOf(' ');
    if (cut <= address) shown.push(`…${label.slice(cut)}`);
    else {
      // The last words that fit, whole (`…1.0.0 linux_amd64`, `…linux_amd64`).
      const words = label.split(' ');
      let tail: string | undefined;
      for (let k = 1; k < words.length; k++) {
        const t = words.slice(k).join(' ');
        if (width(t) + 1 <= room) {
          tail = t;
          break;
        }
      }
      if (tail === undefined) return undefined;
      shown.push(`…${tail}`);
    }
  }
  const pad = Math.max(...shown.map(width));
  return shown.map((l) => l.padEnd(pad));
}

export class ProgressDisplay {
  private readonly items = new Map<string, Item>();
  private readonly now: () => number;
  private readonly startedAt: number;
  /** Whether the display is on the screen (the cursor then rests at its top). */
  private drawn = false;
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
    return `${e.provider.forDisplay(this.options.flavor)} ${e.version.toString()} ${e.platform.toString()}`;
  }

  /** Takes an event into the display's state; returns the line to print above it, if the event calls for one. */
  event(e: InstallerEvent): string | undefined {
    if (this.stopped) return undefined;
    const t = this.now();
    switch (e.type) {
      case 'fetch_queued':
      case 'fetch_start':
      case 'install_start': {
        const k = this.key(e);
        if (!this.items.has(k)) {
          this.items.set(k, {
            label: this.label(e),
            state: 'waiting',
            phase: 'download',
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
        const phase = e.phase ?? 'download';
        // A new phase (a local archive's hashing after its checksum pass) counts from 0 again.
        if (phase !== it.phase || e.bytes < it.bytes) it.samples = [];
        it.phase = phase;
        if (it.state === 'waiting' || it.state === 'retrying') it.lastData = t;
        if (e.bytes !== it.bytes) it.lastData = t;
        it.bytes = e.bytes;
        it.total = e.total;
        it.state =
          phase !== 'download' ? 'local' : e.total !== undefined && e.bytes >= e.total ? 'verifying' : 'downloading';
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
          it.phase = 'download';
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
          if (e.type !== 'fetch_failed' && it.phase === 'download') this.finishedBytes += it.bytes;
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
    const room = Math.max(20, this.options.columns() - 1);
    const items = [...this.items.values()];
    // Packages in progress first, the waiting ones after (in the order they came).
    const shown = [...items.filter((i) => i.state !== 'waiting'), ...items.filter((i) => i.state === 'waiting')].slice(
      0,
      MAX_LINES,
    );
    const rows = shown.map((it) => ({ label: it.label, status: this.status(it, t) }));
    const lines = this.layout(rows, room);
    if (items.length > MAX_LINES) lines.push(`  … and ${items.length - MAX_LINES} more`);
    const waiting = items.filter((i) => i.state === 'waiting').length;
    const line = overallLine(
      {
        done: this.finished,
        all: this.finished + items.length,
        active: items.length - waiting,
        waiting,
        bytes: this.finishedBytes + items.reduce((n, i) => n + (i.phase === 'download' ? i.bytes : 0), 0),
        rate: items.reduce((n, i) => n + (i.phase === 'download' ? this.rate(i) : 0), 0),
        elapsedMs: t - this.startedAt,
      },
      room,
    );
    lines.push(this.options.color ? `${ESC}1m${line}${ESC}0m` : line);
    return lines;
  }

  /**
   * The package lines: two spaces, the name, two spaces, the status; the
   * names share what the statuses leave, and go first when it is too little.
   */
  private layout(rows: ReadonlyArray<{ label: string; status: Status }>, room: number): string[] {
    const statusWidth = Math.max(...rows.map((r) => width(joined(r.status))));
    const all = names(
      rows.map((r) => r.label),
      room - 4 - statusWidth,
    );
    if (all) return rows.map((r, i) => `  ${all[i]!}  ${joined(r.status)}`);
    // Too narrow for every name: the rows whose status leaves room keep theirs (a waiting
    // package), aligned among themselves; the others show their figures alone, fewer when
    // they do not fit either.
    const left = (r: (typeof rows)[number]): number => room - 4 - width(joined(r.status));
    let roomy = rows.filter((r) => left(r) >= MIN_LABEL);
    let some: string[] | undefined;
    while (roomy.length > 0) {
      const least = Math.min(...roomy.map(left));
      some = names(
        roomy.map((r) => r.label),
        least,
      );
      if (some) break;
      // The rows with the least room give up their names first.
      roomy = roomy.filter((r) => left(r) > least);
    }
    return rows.map((r) => {
      const i = roomy.indexOf(r);
      return some && i >= 0 ? `  ${some[i]!}  ${joined(r.status)}` : `  ${fitStatus(r.status, room - 2)}`;
    });
  }

  private rate(it: Item): number {
    if ((it.state !== 'downloading' && it.state !== 'local') || it.samples.length < 2) return 0;
    const [t0, b0] = it.samples[0]!;
    const [t1, b1] = it.samples[it.samples.length - 1]!;
    const now = this.now();
    // Bytes over the window up to now: a download that stopped slows to 0.
    const span = Math.max(now - t0, t1 - t0, 1);
    return ((b1 - b0) * 1000) / span;
  }

  private status(it: Item, t: number): Status {
    switch (it.state) {
      case 'waiting':
        return { words: ['waiting'], drop: [] };
      case 'retrying':
        return it.retryUntil > t
          ? {
              words: [`retrying in ${Math.ceil((it.retryUntil - t) / 1000)} s`, `after ${it.retryReason}`],
              drop: [1],
              sep: ' ',
            }
          : { words: ['retrying', `after ${it.retryReason}`], drop: [1], sep: ' ' };
      case 'verifying':
        return { words: [formatBytes(it.bytes), '100%', 'hashing and verifying'], drop: [2, 0] };
      case 'local':
      case 'downloading': {
        const rate = this.rate(it);
        const stalled = it.state === 'downloading' && t - it.lastData >= STALL_MS;
        const words = [
          // A local archive: reading it for its checksum, or hashing it.
          ...(it.state === 'local' ? [it.phase === 'checksum' ? 'reading' : 'hashing'] : []),
          it.total === undefined ? formatBytes(it.bytes) : `${formatBytes(it.bytes)} / ${formatBytes(it.total)}`,
          ...(it.total ? [`${Math.floor((it.bytes * 100) / it.total)}%`] : []),
          ...(rate > 0 ? [`${formatBytes(Math.round(rate))}/s`] : []),
          ...(stalled ? [`no data for ${Math.floor((t - it.lastData) / 1000)} s`] : []),
        ];
        // Left out first: the stall note, the rate, the word; the bytes and the percentage stay.
        const at = (w: string): number => words.indexOf(w);
        const drop = [
          ...(stalled ? [words.length - 1] : []),
          ...(rate > 0 ? [at(`${formatBytes(Math.round(rate))}/s`)] : []),
          ...(it.state === 'local' ? [0] : []),
        ];
        return { words, drop };
      }
    }
  }

  /**
   * Takes the display off the screen: the cursor is at its top; the first
   * row is erased, then everything below it (see the module comment).
   */
  private clear(): string {
    if (!this.drawn) return '';
    this.drawn = false;
    return `\r${ESC}K\u001b7${ESC}B${ESC}J\u001b8`;
  }

  /** The display, drawn from the cursor down, the cursor then taken back to its top. */
  private draw(): string {
    if (this.stopped) return '';
    const lines = this.lines();
    if (lines.length === 0) return '';
    this.drawn = true;
    // Rows, not lines: a line wider than the terminal (narrower than any wording) wraps.
    const columns = Math.max(1, this.options.columns());
    const rows = lines.reduce((n, l) => n + Math.max(1, Math.ceil(width(l) / columns)), 0);
    return `${lines.join('\n')}\n${ESC}${rows}A`;
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
    if (this.drawn) this.options.out.write(this.clear());
    sink.write(text);
    if (this.items.size > 0) {
      const drawn = this.draw();
      if (drawn !== '') this.options.out.write(drawn);
    }
  }

  /** Takes the display away for good (before the final diagnostics and summary, or an interrupt's line). */
  stop(): void {
    if (this.stopped) return;
    if (this.drawn) this.options.out.write(this.clear());
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
