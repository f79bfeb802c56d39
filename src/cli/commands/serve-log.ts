/**
 * What `serve DIR` and `serve -upstream` share: the flags and the access
 * log's two forms (the signal that stops a server: src/cli/interrupt.ts
 * `stopSignal`).
 */
import type { AccessLogEntry } from '../../serve/server.js';
import { terminalLine } from '../../ui/escape.js';
import type { CliIO } from '../io.js';

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
