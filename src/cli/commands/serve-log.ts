/**
 * What `serve DIR` and `serve -upstream` share: the flags, the access log's
 * two forms and how a server's run ends (its lifecycle, the stop on the
 * first SIGINT or SIGTERM: src/cli/resources.ts `serveUntilStopped`).
 */
import { type Diagnostic, describeError, diagnosticFromError } from '../../errors.js';
import type { AccessLogEntry } from '../../serve/server.js';
import { terminalLine } from '../../ui/escape.js';
import type { CliIO } from '../io.js';
import type { ServerEnd } from '../resources.js';

/** A line of a server's log, on the run's JSON streams (`-json`, `-json-into`). */
export type LogLine = (
  level: 'info' | 'warn' | 'error',
  message: string,
  type: string,
  fields?: Record<string, unknown>,
) => void;

/** The flags of `serve` (both forms). */
export const SERVE_FLAGS = {
  listen: 'string',
  'tls-cert': 'string',
  'tls-key': 'string',
  refresh: 'int',
  json: 'bool',
  upstream: 'bool',
  offline: 'bool',
  allow: 'strings',
  'allow-address': 'strings',
  'allow-unsigned': 'bool',
  'trusted-key': 'strings',
  'versions-ttl': 'int',
} as const;

/** The access log: a JSON `access` line, or a combined-log-format line on stdout. */
export function accessLogger(
  io: CliIO,
  json: boolean,
  line: (level: 'info', message: string, type: string, fields: Record<string, unknown>) => void,
): (e: AccessLogEntry) => void {
  return (e) => {
    line('info', `${e.method} ${e.path} ${e.status}`, 'access', { ...e });
    if (!json)
      io.stdout.write(
        `${terminalLine(`${e.remote} - - [${e.time}] "${e.method} ${e.path}" ${e.status} ${e.bytes} ${e.durationMs}ms ${JSON.stringify(e.userAgent)}${e.result === undefined ? '' : ` ${e.result}`}`)}\n`,
      );
  };
}

/** How a server says that it stopped (`stopped` message, `Stopped (SIGINT).`), or could not serve. */
export function serverEnd(io: CliIO, json: boolean, line: LogLine, diagnostic: (d: Diagnostic) => void): ServerEnd {
  return {
    stopped(signal) {
      line('info', `Stopped (${signal})`, 'stopped', { signal });
      if (!json) io.stdout.write(`Stopped (${signal}).\n`);
    },
    failed(err) {
      diagnostic({ ...diagnosticFromError(err), summary: 'Cannot serve', detail: describeError(err) });
      return 1;
    },
  };
}
