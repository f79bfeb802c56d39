/**
 * `provkit mirror [options] TARGET_DIR`: `providers mirror` (spec §6.2).
 * Thin: flags → requirements, lock selections, a source → `runMirror` → render.
 */
import { createHash } from 'node:crypto';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

import { currentPlatform, parsePlatform, type Platform } from '../../addresses/index.js';
import { diagnosticLocation, loadModuleRequirements } from '../../config/index.js';
import { createHashPool } from '../../hashing/index.js';
import { runMirror } from '../../installer/mirror.js';
import { hasErrors as lockHasErrors, loadLockFile, LOCK_FILE_NAME, verifyDependencySelections } from '../../lockfile/index.js';
import { createNodeFetch, HttpClient } from '../../net/index.js';
import { FilesystemMirrorSource, NetworkMirrorSource, type Source } from '../../sources/index.js';
import type { Diagnostic } from '../../ui/human.js';
import { parseFlags } from '../flags.js';
import type { CliIO, GlobalOptions } from '../io.js';
import { createRenderer } from '../render.js';
import { loadCliConfigFor, registrySourceFor } from '../wiring.js';

export const MIRROR_HELP = `Usage: provkit [global options] mirror [options] TARGET_DIR

  Copies the configuration's providers for each platform into TARGET_DIR as
  a packed filesystem mirror with index.json and VERSION.json files that a
  network mirror can serve (providers mirror). Versions follow the lock file
  when there is one. Packages already in TARGET_DIR that verify are kept,
  not fetched again.

Options:
  -platform=OS_ARCH   A target platform (repeatable; default: this machine's).
  -hashes=all         List zh: and both h1: forms in VERSION.json (default:
                      what the reference writes for the flavor).
  -fs-mirror=DIR      Take packages from a filesystem mirror, not the origin registries.
  -net-mirror=URL     Take packages from a network mirror, not the origin registries.
  -json               Machine-readable output (JSON lines; see docs/json-ui.md).
`;

export async function mirrorCommand(args: readonly string[], io: CliIO, globals: GlobalOptions): Promise<number> {
  const flags = parseFlags(args, { platform: 'strings', hashes: 'string', 'fs-mirror': 'string', 'net-mirror': 'string', json: 'bool' });
  const ui = createRenderer(io, globals, flags.bools.get('json') === true);
  const errors: Diagnostic[] = [];
  if (flags.positionals.length !== 1) {
    errors.push({ severity: 'error', summary: 'Wrong number of arguments', detail: 'The providers mirror command requires an output directory as a command-line argument.' });
  }
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
  if (platforms.length === 0) platforms.push(currentPlatform());
  const hashesFlag = flags.strings.get('hashes') ?? 'reference';
  const hashes = hashesFlag === 'all' ? 'all' : 'reference';
  if (hashesFlag !== 'reference' && hashesFlag !== 'all') {
    errors.push({ severity: 'error', summary: 'Invalid -hashes option', detail: `The -hashes option must be "reference" or "all", not ${JSON.stringify(hashesFlag)}.` });
  }
  const fsMirror = flags.strings.get('fs-mirror');
  const netMirror = flags.strings.get('net-mirror');
  if (fsMirror !== undefined && netMirror !== undefined) {
    errors.push({ severity: 'error', summary: 'Invalid installation method options', detail: 'The -fs-mirror and -net-mirror command line options are mutually-exclusive.' });
  }
  if (errors.length > 0) return ui.fail(errors);

  const config = await loadModuleRequirements(globals.cwd, { flavor: globals.flavor });
  for (const d of config.diagnostics) ui.diagnostic({ severity: d.severity, summary: d.summary, detail: d.detail, location: diagnosticLocation(d) });
  if (config.diagnostics.some((d) => d.severity === 'error')) return ui.fail([]);
  const requirements = [...config.requirements.values()];

  const lock = await loadLockFile(join(globals.cwd, LOCK_FILE_NAME), globals.flavor);
  for (const d of lock.diagnostics) ui.diagnostic({ severity: d.severity, summary: d.summary, detail: d.detail, location: diagnosticLocation(d) });
  if (lockHasErrors(lock.diagnostics)) return ui.fail([]);
  // A lock that does not cover the configuration is reported, but mirroring goes on (item 93.2).
  let exit = 0;
  if (lock.locks.size > 0) {
    const problems = verifyDependencySelections(lock.locks, requirements);
    if (problems.length > 0) {
      exit = 1;
      ui.diagnostic({
        severity: 'error',
        summary: 'Inconsistent dependency lock file',
        detail: `To update the locked dependency selections to match a changed configuration, run:\n  ${globals.flavor === 'terraform' ? 'terraform' : 'tofu'} init -upgrade\n\n${problems.map((p) => `- ${p}`).join('\n')}`,
      });
    }
  }

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

  const targetDir = resolve(globals.cwd, flags.positionals[0]!);
  const pool = createHashPool();
  try {
    const outcome = await runMirror({
      requirements,
      locks: lock.locks,
      platforms,
      source,
      pool,
      http,
      targetDir,
      cacheFile: mirrorCacheFile(io.env, targetDir),
      flavor: globals.flavor,
      hashes,
      events: (e) => ui.event(e),
    });
    for (const f of outcome.failures) {
      ui.diagnostic({ severity: 'error', summary: f.summary, detail: f.provider ? `${f.provider.toString()}: ${f.error.message}` : f.error.message });
    }
    ui.summary(`Mirrored: ${outcome.written} fetched, ${outcome.reused} already present and verified.`, { fetched: outcome.written, reused: outcome.reused, failed: outcome.failures.length });
    return outcome.failures.length > 0 ? 1 : exit;
  } finally {
    await pool.close();
    nodeFetch.close();
  }
}

/**
 * The fingerprint cache of one mirror target, kept out of the mirror
 * (`$XDG_CACHE_HOME/provkit/mirror/<sha256 of the target path>.json`,
 * `~/.cache` by default; `PROVKIT_CACHE_DIR` overrides the base).
 */
function mirrorCacheFile(env: CliIO['env'], targetDir: string): string {
  const base = env['PROVKIT_CACHE_DIR'] ?? join(env['XDG_CACHE_HOME'] ?? join(env['HOME'] ?? homedir(), '.cache'), 'provkit');
  return join(base, 'mirror', `${createHash('sha256').update(targetDir).digest('hex').slice(0, 32)}.json`);
}
