/**
 * `provkit serve DIR`: a read-only network mirror over a mirror directory.
 * Thin: flags → `startMirrorServer` → log lines; the run's resources and
 * its stop on SIGINT/SIGTERM are src/cli/resources.ts `serveUntilStopped`.
 * The first stdout line names the URL (`Listening on URL`; with -json a
 * `listening` message with `url`).
 */
import { readFile, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { createSecureContext } from 'node:tls';

import { type Diagnostic, describeError, ErrorCode, ProvkitError, WarningCode, errorText } from '../../errors.js';
import { isLoopbackHost, parseListen, startMirrorServer } from '../../serve/server.js';
import { terminalLine } from '../../ui/escape.js';
import { renderDiagnostic } from '../../ui/human.js';
import { parseFlags } from '../flags.js';
import { noteFlavor } from '../flavor.js';
import type { CliIO, GlobalOptions } from '../io.js';
import { humanStyle, jsonUIsFor } from '../render.js';
import { serveUntilStopped } from '../resources.js';
import { accessLogger, SERVE_FLAGS, serverEnd } from './serve-log.js';
import { pullThroughServe } from './serve-upstream.js';

export const SERVE_HELP = `Usage: provkit [global options] serve [options] DIR
       provkit [global options] serve -upstream [options] STORE
       provkit [global options] serve -offline [options] STORE

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

Pull-through mirror (docs/fleet-mirror.md):
  -upstream           Answer for providers of the allowed origin registries:
                      a package not in STORE is fetched from its registry,
                      verified (signed SHA256SUMS, signature), hashed and
                      stored, then served. STORE is a mirror directory (the
                      packed layout provkit mirror writes) or
                      oci://REGISTRY[:PORT]/TEMPLATE (shared by replicas).
  -offline            Serve only what STORE holds; never fetch.
  -allow=PATTERN      Providers it answers for: HOST, NAMESPACE/TYPE or
                      HOST/NAMESPACE/TYPE, * for any namespace or type.
                      Repeatable. Default: the flavor's public registry.
  -allow-address=IP   An address or CIDR range fetches may go to although it
                      is loopback or private (refused otherwise). Repeatable.
  -allow-unsigned     Accept packages whose checksums are not signed.
  -trusted-key=ID     Accept only signatures by this key (16 or 40 hex
                      digits). Repeatable. The trusted_keys of the audit
                      block of provkit.hcl in the working directory apply
                      too (docs/provenance.md).
  -versions-ttl=SEC   How long a provider's version list is used before the
                      origin is asked again (default 600; served stale when
                      the origin is down).
  GET /healthz and /metrics (Prometheus text format) are answered too.
  VERSION.json lists zh: and h1: for every stored platform, and who vouches
  for each hash (provkit_dispositions, ignored by terraform and tofu).
`;

export async function serveCommand(args: readonly string[], io: CliIO, globals: GlobalOptions): Promise<number> {
  const flags = parseFlags(args, SERVE_FLAGS);
  const json = flags.values.json === true;
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
  const pullThrough = flags.values.upstream === true || flags.values.offline === true;
  if (flags.positionals.length !== 1)
    return fail(
      'Wrong number of arguments',
      pullThrough
        ? 'serve -upstream requires the store (a directory or oci://REGISTRY/TEMPLATE) as its argument.'
        : 'serve requires the mirror directory as its argument (serve -upstream STORE or serve -offline STORE for a pull-through mirror).',
    );
  if (!pullThrough) {
    const only = (['allow', 'allow-address', 'trusted-key', 'allow-unsigned', 'versions-ttl'] as const).find(
      (f) => flags.values[f] !== undefined,
    );
    if (only !== undefined)
      return fail('Option for a pull-through mirror', `-${only} applies to serve -upstream only.`);
  } else if (flags.values.refresh !== undefined) {
    return fail('Option for a directory mirror', '-refresh applies to serve DIR only, not to -upstream or -offline.');
  }
  const certFile = flags.values['tls-cert'];
  const keyFile = flags.values['tls-key'];
  if ((certFile === undefined) !== (keyFile === undefined))
    return fail('Incomplete TLS options', '-tls-cert and -tls-key must be given together.');
  let listen: { host: string; port: number };
  try {
    listen = parseListen(flags.values.listen ?? '127.0.0.1:8443');
  } catch (err) {
    return fail('Invalid -listen address', errorText(err));
  }
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
  if (pullThrough) {
    return pullThroughServe(io, globals, flags, {
      listen,
      ...(tls ? { tls } : {}),
      line,
      diagnostic,
      fail,
      json,
    });
  }
  const dir = resolve(globals.cwd, flags.positionals[0]!);
  if (!(await stat(dir).catch(() => undefined))?.isDirectory())
    return fail('Not a directory', `The mirror directory ${dir} does not exist or is not a directory.`);
  noteFlavor(io, globals);
  const accessLog = accessLogger(io, json, line);
  // The server's lifecycle and its resources (the hash pool) are the run's: src/cli/resources.ts.
  return serveUntilStopped(
    io,
    globals,
    async (r) => {
      const server = await startMirrorServer({
        dir,
        flavor: globals.flavor,
        pool: r.pool(),
        host: listen.host,
        port: listen.port,
        ...(tls ? { tls } : {}),
        ...(flags.values.refresh === undefined ? {} : { refreshMs: flags.values.refresh }),
        onRequest: accessLog,
        onWarning: (w) => {
          line('warn', w.message, 'scan_warning', { path: w.path, code: WarningCode.SCAN_WARNING });
          if (!json) io.stderr.write(`${terminalLine(`Warning: ${w.message}`)}\n`);
        },
        onError: (err, path) => {
          line('error', `${path}: ${errorText(err)}`, 'serve_error', {
            path,
            code: err instanceof ProvkitError ? err.code : ErrorCode.INTERNAL,
          });
          if (!json) io.stderr.write(`${terminalLine(`Error serving ${path}: ${errorText(err)}`)}\n`);
        },
      });
      line('info', `Listening on ${server.url}`, 'listening', { url: server.url, dir });
      if (!json) io.stdout.write(`Listening on ${server.url}\n`);
      if (!server.tls) {
        const detail =
          'tofu and terraform accept network mirrors over https only; use -tls-cert and -tls-key for them.';
        diagnostic({
          severity: 'warning',
          summary: `Serving plain HTTP on ${server.url}`,
          detail,
          code: WarningCode.PLAIN_HTTP,
        });
      }
      return server;
    },
    serverEnd(io, json, line, diagnostic),
  );
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
