/**
 * `provkit serve -upstream STORE` and `serve -offline STORE`: a pull-through
 * mirror (docs/fleet-mirror.md). Thin: flags → policy, store, origin →
 * `startPullThroughMirror` → access and fetch log lines; the run's resources
 * and its stop on SIGINT or SIGTERM, after the work in flight, are
 * src/cli/resources.ts `serveUntilStopped`.
 */
import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';

import { type Diagnostic, describeError, ErrorCode, errorText, ProvkitError } from '../../errors.js';
import {
  allowedHosts,
  destinationGuard,
  DirectoryStore,
  type FetchLogEntry,
  OciStore,
  type OriginPolicy,
  originPolicy,
  type PackageStore,
  startPullThroughMirror,
} from '../../pull-through/index.js';
import { cacheBase, ociClientFor, registrySourceFor, templateRepositoryMapping } from '../../sources/index.js';
import { terminalLine } from '../../ui/escape.js';
import { loadPolicyFile, POLICY_FILE_NAME } from '../../config/index.js';
import { configDiagnostics } from '../diagnostics.js';
import type { ParsedFlags } from '../flags.js';
import { noteFlavor } from '../flavor.js';
import type { CliIO, GlobalOptions } from '../io.js';
import { ociTemplate, ociTemplateDiagnostic } from '../mirror-flags.js';
import { serveUntilStopped } from '../resources.js';
import { loadCliConfigFor, sourceContext } from '../wiring.js';
import { accessLogger, type LogLine, type SERVE_FLAGS, serverEnd } from './serve-log.js';

/** The seconds a version list is used before the origin is asked again, by default. */
const DEFAULT_VERSIONS_TTL_S = 600;

/** What `serveCommand` checked and set up before handing over. */
export interface PullThroughRun {
  readonly listen: { readonly host: string; readonly port: number };
  readonly tls?: { readonly cert: Buffer; readonly key: Buffer };
  readonly json: boolean;
  readonly line: LogLine;
  readonly diagnostic: (d: Diagnostic) => void;
  readonly fail: (summary: string, detail: string, code?: ErrorCode) => number;
}

/** See the module comment. */
export async function pullThroughServe(
  io: CliIO,
  globals: GlobalOptions,
  flags: ParsedFlags<typeof SERVE_FLAGS>,
  run: PullThroughRun,
): Promise<number> {
  const { line, json } = run;
  const offline = flags.values.offline === true;
  if (offline && flags.values.upstream === true)
    return run.fail(
      'Conflicting options',
      '-offline serves only what the store holds; it cannot be used with -upstream.',
    );
  // The audit policy's pinned keys (provkit.hcl of the working directory) apply on the way in.
  const found = offline ? undefined : await loadPolicyFile(join(globals.cwd, POLICY_FILE_NAME), POLICY_FILE_NAME);
  for (const d of configDiagnostics(found?.diagnostics ?? [], globals.cwd)) run.diagnostic(d);
  if (found?.diagnostics.some((d) => d.severity === 'error')) return 1;
  let policy: OriginPolicy;
  try {
    policy = originPolicy({
      ...(found?.audit === undefined ? {} : { audit: found.audit }),
      flavor: globals.flavor,
      allow: flags.values.allow ?? [],
      allowUnsigned: flags.values['allow-unsigned'] === true,
      trustedKeys: flags.values['trusted-key'] ?? [],
      allowAddresses: flags.values['allow-address'] ?? [],
    });
  } catch (err) {
    return run.fail('Invalid pull-through options', describeError(err));
  }
  const given = flags.positionals[0]!;
  const oci = given.startsWith('oci://') ? ociTemplate(given) : undefined;
  if (oci !== undefined) {
    const problem = ociTemplateDiagnostic(`The store ${given}`, oci);
    if (problem) {
      run.diagnostic(problem);
      return 1;
    }
  } else {
    const st = await stat(resolve(globals.cwd, given)).catch(() => undefined);
    if (st !== undefined && !st.isDirectory())
      return run.fail('Not a directory', `The store ${resolve(globals.cwd, given)} is not a directory.`);
  }
  noteFlavor(io, globals);

  // The server's lifecycle and its resources (HTTP clients, pool, store) are the run's: src/cli/resources.ts.
  return serveUntilStopped(
    io,
    globals,
    async (r) => {
      // Fetches to origins go through the destination guard; the store's own registry is the operator's.
      const origin = offline ? undefined : r.guardedHttp(destinationGuard(policy));
      const storeHttp = r.http();
      const pool = r.pool();
      const { hashStore } = r.hashStore();
      const cli = await loadCliConfigFor(io, globals);
      let store: PackageStore;
      if (oci !== undefined) {
        store = new OciStore({
          client: ociClientFor(r.sourceContext(), cli),
          target: { display: given, repositoryFor: templateRepositoryMapping(oci) },
          http: storeHttp,
          pool,
          ...(hashStore ? { hashStore } : {}),
          cacheDir: join(
            cacheBase(io.env),
            'pull-through',
            createHash('sha256').update(oci).digest('hex').slice(0, 32),
          ),
        });
      } else {
        store = new DirectoryStore({
          dir: resolve(globals.cwd, given),
          pool,
          ...(hashStore ? { hashStore } : {}),
          onWarning: (message, path) => {
            line('warn', message, 'store_warning', { path, code: 'STORE_WARNING' });
            if (!json) io.stderr.write(`${terminalLine(`Warning: ${message}`)}\n`);
          },
        });
      }
      const ttl = flags.values['versions-ttl'] ?? DEFAULT_VERSIONS_TTL_S;
      const mirror = await startPullThroughMirror({
        policy,
        ...(origin
          ? {
              origin: {
                source: registrySourceFor(sourceContext(io, globals, origin, r.signatures()), cli, { memoize: false }),
                http: origin,
                versionsTtlMs: ttl * 1000,
              },
            }
          : {}),
        store,
        pool,
        ...(hashStore ? { hashStore } : {}),
        host: run.listen.host,
        port: run.listen.port,
        ...(run.tls ? { tls: run.tls } : {}),
        onRequest: accessLogger(io, json, line),
        onFetch: (e) => fetchLog(io, json, line, e),
        onWarning: (message, fields) => {
          line('warn', message, 'store_warning', { ...fields, path: store.display, code: 'STORE_WARNING' });
          if (!json) io.stderr.write(`${terminalLine(`Warning: ${message}`)}\n`);
        },
        onError: (err, path) => {
          line('error', `${path}: ${errorText(err)}`, 'serve_error', {
            path,
            code: err instanceof ProvkitError ? err.code : ErrorCode.INTERNAL,
          });
          if (!json) io.stderr.write(`${terminalLine(`Error serving ${path}: ${errorText(err)}`)}\n`);
        },
      });
      const mode = offline ? 'offline' : 'upstream';
      const audit = policy.audit;
      const pinsFrom =
        audit !== undefined &&
        (audit.defaults.trustedKeys !== undefined || audit.providers.some((p) => p.rule.trustedKeys !== undefined))
          ? audit.file
          : undefined;
      line('info', `Listening on ${mirror.url}`, 'listening', {
        url: mirror.url,
        dir: store.display,
        mode,
        ...(offline ? {} : { hosts: allowedHosts(policy) }),
        ...(pinsFrom === undefined ? {} : { trusted_keys_from: pinsFrom }),
      });
      if (!json) {
        io.stdout.write(`Listening on ${mirror.url}\n`);
        io.stdout.write(
          `${terminalLine(
            offline
              ? `Serving what ${store.display} holds (offline).`
              : `Pulling through from ${allowedHosts(policy).join(', ')} into ${store.display}.`,
          )}\n`,
        );
        if (pinsFrom !== undefined)
          io.stdout.write(`${terminalLine(`Signing keys must be the trusted_keys of ${pinsFrom}.`)}\n`);
      }
      return mirror;
    },
    serverEnd(io, json, line, run.diagnostic),
  );
}

/** One line per package fetched from an origin: stored, or failed and why. */
function fetchLog(io: CliIO, json: boolean, line: PullThroughRun['line'], e: FetchLogEntry): void {
  const what = `${e.provider} ${e.version} ${e.platform}`;
  const message =
    e.result === 'stored'
      ? `fetched ${what}: stored (${String(e.bytes ?? 0)} bytes, ${String(e.durationMs)}ms)`
      : `fetching ${what} failed: ${e.error ?? e.code ?? 'unknown error'}`;
  line(e.result === 'stored' ? 'info' : 'warn', message, 'fetch', { ...e });
  if (!json) (e.result === 'stored' ? io.stdout : io.stderr).write(`${terminalLine(message)}\n`);
}
