/**
 * `provkit serve DIR`: a read-only network mirror over a mirror directory.
 * Thin: flags → `startMirrorServer` → log lines → stop on SIGINT/SIGTERM.
 * The first stdout line names the URL (`Listening on URL`; with -json a
 * `listening` message with `url`).
 */
import { readFile, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { createSecureContext } from 'node:tls';

import {
  type Diagnostic,
  describeError,
  diagnosticFromError,
  ErrorCode,
  ProvkitError,
  WarningCode,
  errorText,
} from '../../errors.js';
import { createHashPool } from '../../hashing/index.js';
import { type AccessLogEntry, isLoopbackHost, parseListen, startMirrorServer } from '../../installer/serve/server.js';
import { terminalLine } from '../../ui/escape.js';
import { renderDiagnostic } from '../../ui/human.js';
import { parseFlags } from '../flags.js';
import { noteFlavor } from '../flavor.js';
import type { CliIO, GlobalOptions } from '../io.js';
import { humanStyle, jsonUIsFor } from '../render.js';

export const SERVE_HELP = `Usage: provkit [global options] serve [options] DIR

  Serves the mirror directory DIR (packed or unpacked layout) with the
  provider network mirror protocol. index.json and VERSION.json files in DIR
  are served as they are; where absent they are generated (with zh: and both
  h1: forms) and refreshed when DIR changes. Read-only. Only regular files
  inside DIR are served: symlinks leading out of DIR are ignored with a
  warning. Query strings are not logged. Stops on SIGINT or SIGTERM after the
  requests in flight.

Options:
  -listen=HOST:PORT   Address to listen on (default 127.0.0.1:8443; port 0: any free port).
  -tls-cert=FILE      PEM certificate (chain) for HTTPS.
  -tls-key=FILE       PEM private key for HTTPS.
                      Without them, plain HTTP on a loopback address only
                      (tofu and terraform require https for network mirrors).
  -refresh=MS         Rescan DIR at most this often (default 2000).
  -json               Access log and messages as JSON lines.
`;

export async function serveCommand(args: readonly string[], io: CliIO, globals: GlobalOptions): Promise<number> {
  const flags = parseFlags(args, {
    listen: 'string',
    'tls-cert': 'string',
    'tls-key': 'string',
    refresh: 'int',
    json: 'bool',
  });
  const json = flags.bools.get('json') === true;
  // -json: the run's JSON streams (stdout's starts with the version message; -json-into's too).
  const uis = jsonUIsFor(io, json);
  const line = (
    level: 'info' | 'warn' | 'error',
    message: string,
    type: string,
    fields: Record<string, unknown> = {},
  ): void => {
    for (const ui of uis) ui.message(level, message, type, fields);
  };
  const diagnostic = (d: Diagnostic): void => {
    for (const ui of uis) ui.diagnostic(d);
    if (!json) renderDiagnostic(d, io.stderr, humanStyle(io, globals.color));
  };
  const fail = (summary: string, detail: string, code: ErrorCode = ErrorCode.USAGE): number => {
    diagnostic({ severity: 'error', summary, detail, code });
    return 1;
  };
  if (flags.positionals.length !== 1)
    return fail('Wrong number of arguments', 'serve requires the mirror directory as its argument.');
  const certFile = flags.strings.get('tls-cert');
  const keyFile = flags.strings.get('tls-key');
  if ((certFile === undefined) !== (keyFile === undefined))
    return fail('Incomplete TLS options', '-tls-cert and -tls-key must be given together.');
  let listen: { host: string; port: number };
  try {
    listen = parseListen(flags.strings.get('listen') ?? '127.0.0.1:8443');
  } catch (err) {
    return fail('Invalid -listen address', (err as Error).message);
  }
  const dir = resolve(globals.cwd, flags.positionals[0]!);
  if (!(await stat(dir).catch(() => undefined))?.isDirectory())
    return fail('Not a directory', `The mirror directory ${dir} does not exist or is not a directory.`);
  let tls: { cert: Buffer; key: Buffer } | undefined;
  if (certFile !== undefined && keyFile !== undefined) {
    const certPath = resolve(globals.cwd, certFile);
    const keyPath = resolve(globals.cwd, keyFile);
    try {
      tls = { cert: await readFile(certPath), key: await readFile(keyPath) };
    } catch (err) {
      return fail('Cannot read the TLS files', describeError(err), ErrorCode.IO);
    }
    // Checked here, where the files are known: the server would throw OpenSSL's
    // words from deep inside node:https.
    try {
      createSecureContext(tls);
    } catch (err) {
      return fail(
        'Invalid TLS certificate or key',
        `${certPath} and ${keyPath} cannot be used together: ${tlsReason(err)}.`,
      );
    }
  }
  if (!tls && !isLoopbackHost(listen.host)) {
    return fail(
      'Plain HTTP refused',
      `Without -tls-cert and -tls-key, provkit serve listens on a loopback address only (not ${listen.host}).`,
    );
  }
  noteFlavor(io, globals);
  const accessLog = (e: AccessLogEntry): void => {
    line('info', `${e.method} ${e.path} ${e.status}`, 'access', { ...e });
    if (!json)
      io.stdout.write(
        `${terminalLine(`${e.remote} - - [${e.time}] "${e.method} ${e.path}" ${e.status} ${e.bytes} ${e.durationMs}ms ${JSON.stringify(e.userAgent)}`)}\n`,
      );
  };
  const pool = createHashPool();
  try {
    const server = await startMirrorServer({
      dir,
      flavor: globals.flavor,
      pool,
      host: listen.host,
      port: listen.port,
      ...(tls ? { tls } : {}),
      ...(flags.ints.get('refresh') === undefined ? {} : { refreshMs: flags.ints.get('refresh')! }),
      onRequest: accessLog,
      onWarning: (w) => {
        line('warn', w.message, 'scan_warning', { path: w.path, code: WarningCode.SCAN_WARNING });
        if (!json) io.stderr.write(`${terminalLine(`Warning: ${w.message}`)}\n`);
      },
      onError: (err, path) => {
        line('error', `${path}: ${String(err)}`, 'serve_error', {
          path,
          code: err instanceof ProvkitError ? err.code : ErrorCode.INTERNAL,
        });
        if (!json) io.stderr.write(`${terminalLine(`Error serving ${path}: ${errorText(err)}`)}\n`);
      },
    });
    line('info', `Listening on ${server.url}`, 'listening', { url: server.url, dir });
    if (!json) io.stdout.write(`Listening on ${server.url}\n`);
    if (!server.tls) {
      const detail = 'tofu and terraform accept network mirrors over https only; use -tls-cert and -tls-key for them.';
      diagnostic({
        severity: 'warning',
        summary: `Serving plain HTTP on ${server.url}`,
        detail,
        code: WarningCode.PLAIN_HTTP,
      });
    }
    const signal = await new Promise<string>((done) => {
      const stop = (s: string): void => {
        process.off('SIGINT', onInt);
        process.off('SIGTERM', onTerm);
        done(s);
      };
      const onInt = (): void => stop('SIGINT');
      const onTerm = (): void => stop('SIGTERM');
      process.on('SIGINT', onInt);
      process.on('SIGTERM', onTerm);
    });
    await server.close();
    line('info', `Stopped (${signal})`, 'stopped', { signal });
    if (!json) io.stdout.write(`Stopped (${signal}).\n`);
    return 0;
  } catch (err) {
    diagnostic({ ...diagnosticFromError(err), summary: 'Cannot serve', detail: describeError(err) });
    return 1;
  } finally {
    await pool.close();
  }
}

/** OpenSSL's reason for a refused certificate or key (`key values mismatch`, `no start line`…). */
function tlsReason(err: unknown): string {
  const reason = (err as { reason?: unknown } | null)?.reason;
  if (typeof reason === 'string') {
    if (reason === 'key values mismatch')
      return 'the private key does not belong to the certificate (key values mismatch)';
    if (reason === 'no start line') return 'a file is not PEM (no start line)';
    return reason;
  }
  return errorText(err);
}
