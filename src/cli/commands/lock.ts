/**
 * `provkit lock [options] [PROVIDER...]`: `providers lock` (docs/reference.md §6.1).
 * Thin: flags → requirements, old locks, a source → `runLock` → render → save.
 */
import { join } from 'node:path';

import { tryParseProviderSource } from '../../addresses/index.js';
import { loadModuleRequirements } from '../../config/index.js';
import { createHashPool } from '../../hashing/index.js';
import { runLock, type Requirement } from '../../installer/lock.js';
import { loadLockFile, LOCK_FILE_NAME, locksEqual, saveLockFile } from '../../lockfile/index.js';
import type { Diagnostic } from '../../ui/human.js';
import { checkMirrorFlags, hashStoreOption, httpFor, parsePlatformFlags, reportDiagnostics, runInterruptible, sourceFor, zipLimitsFromEnv } from '../common.js';
import { parseFlags } from '../flags.js';
import type { CliIO, GlobalOptions } from '../io.js';
import { createRenderer } from '../render.js';

export const LOCK_HELP = `Usage: provkit [global options] lock [options] [PROVIDER...]

  Writes the hashes of the configuration's providers into
  .terraform.lock.hcl for each platform given (providers lock). All
  platforms are fetched and hashed in parallel; no package is fetched twice.

Options:
  -platform=OS_ARCH     A target platform (repeatable; default: this machine's).
  -fs-mirror=DIR        Use a filesystem mirror instead of the origin registries.
  -net-mirror=URL       Use a network mirror (https) instead of the origin registries.
  -oci-mirror=TEMPLATE  Use repositories of an OCI registry instead of the origin
                        registries: REGISTRY[:PORT]/PATH, an RFC 6570 level 1
                        template over {hostname}, {namespace} and {type}, as
                        tofu providers lock -oci-mirror (see docs/oci.md).
  -enable-plugin-cache  Accepted for compatibility (the cache is not needed to lock).
  -all-platforms        Also lock every platform the registry publishes for the
                        selected version (each fetched and hashed).
  -json                 Machine-readable output (JSON lines; see docs/json-ui.md).
`;

export function lockCommand(args: readonly string[], io: CliIO, globals: GlobalOptions): Promise<number> {
  return runInterruptible(io, 'provkit lock', (signal) => lockRun(args, io, globals, signal));
}

async function lockRun(args: readonly string[], io: CliIO, globals: GlobalOptions, signal: AbortSignal): Promise<number> {
  const flags = parseFlags(args, {
    platform: 'strings',
    'fs-mirror': 'string',
    'net-mirror': 'string',
    'oci-mirror': 'string',
    'enable-plugin-cache': 'bool',
    'all-platforms': 'bool',
    json: 'bool',
  });
  const ui = createRenderer(io, globals, flags.bools.get('json') === true);
  const errors: Diagnostic[] = [];

  const platforms = parsePlatformFlags(flags.lists.get('platform') ?? [], errors);
  const fsMirror = flags.strings.get('fs-mirror');
  const netMirror = flags.strings.get('net-mirror');
  const ociMirror = flags.strings.get('oci-mirror');
  checkMirrorFlags({ fsMirror, netMirror, ociMirror }, errors);
  if (errors.length > 0) return ui.fail(errors);

  const config = await loadModuleRequirements(globals.cwd, { flavor: globals.flavor });
  if (reportDiagnostics(ui, config.diagnostics)) return ui.fail([]);

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
  const old = await loadLockFile(lockPath, globals.flavor, LOCK_FILE_NAME);
  if (reportDiagnostics(ui, old.diagnostics)) return ui.fail([]);

  const { http, close } = httpFor(io);
  const source = await sourceFor(io, globals, http, { fsMirror, netMirror, ociMirror }, 'registry', ui);
  if (!source) {
    close();
    return ui.fail([]);
  }
  // Small archives (up to 4 MiB) are hashed in this thread: a worker's
  // start costs ~30-60 ms of CPU, hashing 1 MiB of zip ~5 ms.
  const pool = createHashPool({ limits: zipLimitsFromEnv(io.env), inThreadBytes: 4 * 1024 * 1024 });
  try {
    const outcome = await runLock({
      signal,
      requirements,
      oldLocks: old.locks,
      platforms,
      source,
      pool,
      http,
      flavor: globals.flavor,
      events: (e) => ui.event(e),
      enforceSignatures: io.env['OPENTOFU_ENFORCE_GPG_VALIDATION'] === 'true',
      allPlatforms: flags.bools.get('all-platforms') === true,
      ...hashStoreOption(io.env, globals.cwd),
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
    // The reference always rewrites the file (docs/reference.md §3.3 item 43), atomically; not after an interrupt.
    if (signal.aborted) return 1;
    await saveLockFile(lockPath, outcome.locks, globals.flavor);
    ui.lockSuccess(!locksEqual(old.locks, outcome.locks));
    return 0;
  } finally {
    await pool.close();
    close();
  }
}
