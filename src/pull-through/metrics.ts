/**
 * The pull-through mirror's counters and gauges, and their rendering in the
 * Prometheus text exposition format (version 0.0.4: `# HELP`, `# TYPE`, one
 * `name{label="value"} number` line per series; prometheus/docs
 * content/docs/instrumenting/exposition_formats.md). Names and labels are
 * listed in docs/fleet-mirror.md ("Metrics").
 *
 * One object per server; counters only grow; a gauge is read when the
 * metrics are rendered. Label values are escaped as the format requires
 * (backslash, double quote, line feed).
 */

/** What a request ended as, for `provkit_mirror_requests_total{result}`. */
export type RequestResult =
  /** Served from the store (or documents built from it and the cached origin view). */
  | 'hit'
  /** Needed the origin (a package fetched, or the origin's answer not cached). */
  | 'miss'
  /** Served from what was kept because the origin could not be reached. */
  | 'stale'
  | 'not_found'
  /** Outside the allow-list or the signature policy. */
  | 'refused'
  /** The origin failed (5xx, reset, stall, a bad signature): 502 / 504. */
  | 'origin_error'
  /** The store failed (disk full, registry refusing): 503. */
  | 'store_error'
  | 'error';

/** What a request asked for. */
export type RequestKind = 'index' | 'version' | 'archive' | 'health' | 'metrics' | 'other';

interface Series {
  readonly help: string;
  readonly type: 'counter' | 'gauge';
  readonly values: Map<string, number>;
}

/** See the module comment. */
export class MirrorMetrics {
  private readonly series = new Map<string, Series>();
  private readonly gauges = new Map<string, () => number>();

  constructor() {
    this.define(
      'provkit_mirror_requests_total',
      'counter',
      'Requests answered, by what they asked for and how they ended.',
    );
    this.define('provkit_mirror_sent_bytes_total', 'counter', 'Response body bytes sent to clients.');
    this.define(
      'provkit_mirror_store_hits_total',
      'counter',
      'Packages served from the store without asking the origin for them.',
    );
    this.define(
      'provkit_mirror_upstream_fetches_total',
      'counter',
      'Packages fetched from an origin registry, by result.',
    );
    this.define('provkit_mirror_upstream_bytes_total', 'counter', 'Package bytes received from origin registries.');
    this.define(
      'provkit_mirror_upstream_requests_total',
      'counter',
      'Metadata requests to origin registries (versions, package metadata), by result.',
    );
    this.define(
      'provkit_mirror_single_flight_joins_total',
      'counter',
      'Requests that waited for a fetch another request had started.',
    );
    this.define('provkit_mirror_errors_total', 'counter', 'Failures, by where they came from.');
    this.define('provkit_mirror_requests_in_flight', 'gauge', 'Requests being answered.');
    this.define(
      'provkit_mirror_upstream_fetches_in_flight',
      'gauge',
      'Package fetches from origin registries in progress.',
    );
  }

  private define(name: string, type: 'counter' | 'gauge', help: string): void {
    this.series.set(name, { help, type, values: new Map() });
  }

  /** Adds `by` (default 1) to a counter's series. */
  add(name: string, labels: Readonly<Record<string, string>> = {}, by = 1): void {
    const s = this.series.get(name);
    if (s === undefined || s.type !== 'counter') throw new Error(`internal: no counter ${name}`);
    const key = labelText(labels);
    s.values.set(key, (s.values.get(key) ?? 0) + by);
  }

  /** A gauge read when the metrics are rendered. */
  gauge(name: string, read: () => number): void {
    const s = this.series.get(name);
    if (s === undefined || s.type !== 'gauge') throw new Error(`internal: no gauge ${name}`);
    this.gauges.set(name, read);
  }

  /** A counter's value for exactly these labels (0 when never added to). */
  value(name: string, labels: Readonly<Record<string, string>> = {}): number {
    const s = this.series.get(name);
    if (s?.type === 'gauge') return this.gauges.get(name)?.() ?? 0;
    return s?.values.get(labelText(labels)) ?? 0;
  }

  /** The exposition text: every metric with its HELP and TYPE, series sorted. */
  render(): string {
    const lines: string[] = [];
    for (const [name, s] of this.series) {
      lines.push(`# HELP ${name} ${s.help}`, `# TYPE ${name} ${s.type}`);
      if (s.type === 'gauge') {
        lines.push(`${name} ${String(this.gauges.get(name)?.() ?? 0)}`);
        continue;
      }
      if (s.values.size === 0) lines.push(`${name} 0`);
      for (const key of [...s.values.keys()].sort()) lines.push(`${name}${key} ${String(s.values.get(key))}`);
    }
    return `${lines.join('\n')}\n`;
  }
}

/** `{a="x",b="y"}`, labels sorted, values escaped; empty for no labels. */
function labelText(labels: Readonly<Record<string, string>>): string {
  const keys = Object.keys(labels).sort();
  if (keys.length === 0) return '';
  const escape = (v: string): string => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
  return `{${keys.map((k) => `${k}="${escape(labels[k]!)}"`).join(',')}}`;
}

/** The `Content-Type` of {@link MirrorMetrics.render}'s text. */
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
