/**
 * `provkit lock [options] [PROVIDER...]`: `providers lock` (spec §6.1).
 * Thin: flags → requirements, old locks, a source → `runLock` → render → save.
 */
import { join, resolve } from 'node:path';

import { parsePlatform, currentPlatform, type Platform, tryParseProviderSource } from '../../addresses/index.js';
import { diagnosticLocation, loadModuleRequirements } from '../../config/index.js';
import { createHashPool } from '../../hashing/index.js';
import { runLock, type Requirement } from '../../installer/lock.js';
import { hasErrors as lockHasErrors, loadLockFile, LOCK_FILE_NAME, locksEqual, saveLockFile } from '../../lockfile/index.js';
import { createNodeFetch, HttpClient } from '../../net/index.js';
import { FilesystemMirrorSource, NetworkMirrorSource, type Source } from '../../sources/index.js';
import type { Diagnostic } from '../../ui/human.js';
import { parseFlags } from '../flags.js';
import type { CliIO, GlobalOptions } from '../io.js';
import { createRenderer } from '../render.js';
import { loadCliConfigFor, registrySourceFor } from '../wiring.js';

export const LOCK_HELP = `Usage: provkit [global options] lock [options] [PROVIDER...]

  Writes the hashes of the configuration's providers into
  .terraform.lock.hcl for each platform given (providers lock). All
  platforms are fetched and hashed in parallel; no package is fetched twice.

Options:
  -platform=OS_ARCH     A target platform (repeatable; default: this machine's).
  -fs-mirror=DIR        Use a filesystem mirror instead of the origin registries.
  -net-mirror=URL       Use a network mirror (https) instead of the origin registries.
  -enable-plugin-cache  Accepted for compatibility (the cache is not needed to lock).
  -json                 Machine-readable output (JSON lines; see docs/json-ui.md).
`;

export async function lockCommand(args: readonly string[], io: CliIO, globals: GlobalOptions): Promise<number> {
  const flags = parseFlags(args, { platform: 'strings', 'fs-mirror': 'string', 'net-mirror': 'string', 'enable-plugin-cache': 'bool', json: 'bool' });
  const ui = createRenderer(io, globals, flags.bools.get('json') === true);
  const errors: Diagnostic[] = [];

  const platforms: Platform[] = [];
  for (const s of flags.lists.get('platform') ?? []) {
    try {
      const p = parsePlatform(s);
      if (!platforms.some((x) => x.equals(p))) platforms.push(p);
    } catch (err) {
      errors.push({
        severity: 'error',
        summary: 'Invalid target platform',
        detail: `The string ${JSON.stringify(s)} given in the -platform option is not a valid target platform: ${err instanceof Error ? err.message : String(err)}.`,
      });
    }
  }
  if (platforms.length === 0 && errors.length === 0) platforms.push(currentPlatform());

  const fsMirror = flags.strings.get('fs-mirror');
  const netMirror = flags.strings.get('net-mirror');
  if (fsMirror !== undefined && netMirror !== undefined) {
    errors.push({ severity: 'error', summary: 'Invalid installation method options', detail: 'The -fs-mirror and -net-mirror command line options are mutually-exclusive.' });
  }
  if (netMirror !== undefined && !/^https:\/\/[^/]/.test(netMirror)) {
    errors.push({ severity: 'error', summary: 'Invalid network mirror URL', detail: 'The -net-mirror option requires a valid https: URL as the mirror base URL.' });
  }
  if (errors.length > 0) return ui.fail(errors);

  const config = await loadModuleRequirements(globals.cwd, { flavor: globals.flavor });
  for (const d of config.diagnostics) ui.diagnostic({ severity: d.severity, summary: d.summary, detail: d.detail, location: diagnosticLocation(d) });
  if (config.diagnostics.some((d) => d.severity === 'error')) return ui.fail([]);

  let requirements: Requirement[] = [...config.requirements.values()];
  if (flags.positionals.length > 0) {
    const wanted: Requirement[] = [];
    for (const arg of flags.positionals) {
      const parsed = tryParseProviderSource(arg, globals.flavor);
      if (!parsed.ok) {
        errors.push({ severity: 'error', summary: 'Invalid provider argument', detail: parsed.error.detail ?? parsed.error.message });
        continue;
      }
      const req = requirements.find((r) => r.provider.equals(parsed.address));
      if (!req) {
        errors.push({ severity: 'error', summary: 'Invalid provider argument', detail: `The provider ${parsed.address.toString()} is not required by the current configuration.` });
      } else if (!wanted.includes(req)) wanted.push(req);
    }
    requirements = wanted;
  }
  if (errors.length > 0) return ui.fail(errors);

  const lockPath = join(globals.cwd, LOCK_FILE_NAME);
  const old = await loadLockFile(lockPath, globals.flavor);
  for (const d of old.diagnostics) ui.diagnostic({ severity: d.severity, summary: d.summary, detail: d.detail, location: diagnosticLocation(d) });
  if (lockHasErrors(old.diagnostics)) return ui.fail([]);

  const nodeFetch = createNodeFetch({ env: io.env });
  const http = new HttpClient({ fetch: nodeFetch.fetch });
  let source: Source;
  if (fsMirror !== undefined) source = new FilesystemMirrorSource({ baseDir: resolve(globals.cwd, fsMirror), flavor: globals.flavor });
  else if (netMirror !== undefined) source = new NetworkMirrorSource({ baseUrl: netMirror, http, flavor: globals.flavor });
  else {
    // Host blocks and credentials apply; provider_installation does not (the reference's lock and mirror ignore it).
    const cli = await loadCliConfigFor(io, globals);
    for (const d of cli.diagnostics) ui.diagnostic({ severity: d.severity, summary: d.summary, detail: d.detail });
    if (cli.diagnostics.some((d) => d.severity === 'error')) return ui.fail([]);
    source = registrySourceFor(io, globals, http, cli);
  }

  const pool = createHashPool();
  try {
    const outcome = await runLock({
      requirements,
      oldLocks: old.locks,
      platforms,
      source,
      pool,
      http,
      flavor: globals.flavor,
      events: (e) => ui.event(e),
      enforceSignatures: io.env['OPENTOFU_ENFORCE_GPG_VALIDATION'] === 'true',
    });
    if (outcome.failures.length > 0) {
      const product = globals.flavor === 'terraform' ? 'Terraform' : 'OpenTofu';
      const byPlatform = new Map<string, string[]>();
      for (const f of outcome.failures) {
        const key = f.platform?.toString() ?? platforms.map(String).join(', ');
        byPlatform.set(key, [...(byPlatform.get(key) ?? []), `- ${f.provider.toString()}: ${f.error.message}`]);
      }
      return ui.fail(
        [...byPlatform.entries()].sort().map(([plat, lines]) => ({
          severity: 'error' as const,
          summary: 'Could not retrieve providers for locking',
          detail: `${product} failed to fetch the requested providers for ${plat} in order to calculate their checksums: some providers could not be installed:\n${[...new Set(lines)].sort().join('\n')}.`,
        })),
      );
    }
    // The reference always rewrites the file (item 43), atomically.
    await saveLockFile(lockPath, outcome.locks, globals.flavor);
    ui.lockSuccess(!locksEqual(old.locks, outcome.locks));
    return 0;
  } finally {
    await pool.close();
    nodeFetch.close();
  }
}
