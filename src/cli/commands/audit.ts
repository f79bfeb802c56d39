/**
 * `provkit audit [options]`: who vouches for every hash of the lock file(s)
 * (src/installer/audit.ts, docs/provenance.md). Thin: flags → lock files
 * (and their base at a git revision), the audit policy of provkit.hcl →
 * `runAudit` per lock file → table / `-json` / SARIF → exit 0 (pass),
 * 2 (a hash violates the policy; as `lock -check` uses 2 for "would
 * change"), 1 (an error: nothing is passed that was not checked).
 */
import { join, posix, resolve, sep } from 'node:path';

import { type Flavor } from '../../addresses/index.js';
import { discoverRoots } from '../../config/index.js';
import { diagnosticFromError, ErrorCode, systemErrorCode } from '../../errors.js';
import { writeFileAtomic } from '../../fs/atomic.js';
import { readRegularFile } from '../../fs/read.js';
import { type AuditCache, runAudit } from '../../installer/audit.js';
import {
  type LockHashPositions,
  lockHashPositions,
  LOCK_FILE_NAME,
  Locks,
  parseLockFile,
} from '../../lockfile/index.js';
import type { Source } from '../../sources/index.js';
import {
  type AuditedLockFile,
  auditSarif,
  auditSummaryText,
  auditTableText,
  auditTotals,
  renderAuditJSON,
} from '../../ui/audit.js';
import type { Diagnostic } from '../../ui/human.js';
import { fittedLines } from '../../ui/table.js';
import { type PolicyCache, rootAuditPolicy } from '../audit-policy.js';
import { placed, reportDiagnostics } from '../diagnostics.js';
import { checkMirrorFlags, type MirrorFlags } from '../mirror-flags.js';
import { parseFlags, unexpectedArguments } from '../flags.js';
import { fileAtRevision, resolveRevision } from '../git.js';
import type { CliIO, GlobalOptions } from '../io.js';
import { createRenderer, jsonUIsFor, type Renderer, terminalColumns } from '../render.js';
import { runInterruptibleWith, type RunResources } from '../resources.js';
import { VERSION } from '../version.js';

export const AUDIT_HELP = `Usage: provkit [global options] audit [options]

  Shows who vouches for every hash of .terraform.lock.hcl and checks it
  against the audit policy (the audit block of provkit.hcl; see
  docs/provenance.md). Each hash's dispositions are derived again from the
  sources: the registry's signed SHA256SUMS (signed), the packages hashed
  here from the hash store or a download (verified-locally,
  computed-locally), what a registry or mirror only reported
  (reported-by-registry, reported-by-mirror), or nobody.

  Exits 0 when every audited hash passes, 2 when one violates the policy,
  1 on an error (a registry that cannot be reached fails the audit).

Options:
  -recursive            Audit the lock file of every root module of the tree.
  -base=REV             Audit only what changed against the git revision REV
                        (git show REV:PATH): added and changed hashes are
                        derived again; removed hashes, added and removed
                        providers and version changes are listed.
  -sarif=FILE           Also write the violations as SARIF 2.1.0, each at the
                        line of its hash in the lock file.
  -fs-mirror=DIR        Derive from a filesystem mirror instead of the origin
                        registries (its packages are computed-locally).
  -net-mirror=URL       Derive from a network mirror instead.
  -json                 Machine-readable output (JSON lines; see docs/json-ui.md).
`;

export async function auditCommand(args: readonly string[], io: CliIO, globals: GlobalOptions): Promise<number> {
  const flags = parseFlags(args, {
    json: 'bool',
    recursive: 'bool',
    base: 'string',
    sarif: 'string',
    'fs-mirror': 'string',
    'net-mirror': 'string',
  });
  const json = flags.values['json'] === true;
  const ui = createRenderer(io, globals, json);
  const errors: Diagnostic[] = [];
  const mirror: MirrorFlags = { fsMirror: flags.values['fs-mirror'], netMirror: flags.values['net-mirror'] };
  checkMirrorFlags(mirror, errors);
  const unexpected = unexpectedArguments('audit', flags.positionals);
  if (unexpected !== undefined) errors.push(unexpected);
  const sarif = flags.values['sarif'];
  if (sarif === '')
    errors.push({
      severity: 'error',
      summary: 'Invalid -sarif option',
      detail: 'The -sarif option requires the file to write.',
      code: ErrorCode.USAGE,
    });
  if (errors.length > 0) return ui.fail(errors);

  return runInterruptibleWith(io, globals, 'audit', async (r) => {
    const base = flags.values['base'];
    let commit: string | undefined;
    try {
      commit = base === undefined ? undefined : await resolveRevision(base, globals.cwd);
    } catch (err) {
      return ui.fail([diagnosticFromError(err, 'Error')]);
    }
    let roots: string[] = ['.'];
    if (flags.values['recursive'] === true) {
      const tree = await discoverRoots(globals.cwd, { flavor: globals.flavor });
      if (reportDiagnostics(ui, tree.diagnostics, globals.cwd)) return ui.fail([]);
      roots = tree.roots;
    }
    const run: AuditRun = {
      r,
      io,
      globals,
      ui,
      mirror,
      ...(commit === undefined ? {} : { commit }),
      cache: new Map(),
      policies: new Map(),
      sources: new Map(),
      downloads: 0,
    };
    const files: AuditedLockFile[] = [];
    try {
      for (const root of roots) {
        // eslint-disable-next-line no-await-in-loop -- one root after another: the derivations are shared (run.cache)
        const f = await auditRoot(run, root);
        if (f === 'failed') return ui.fail([]);
        if (f !== undefined) files.push(f);
      }
    } catch (err) {
      return ui.fail([diagnosticFromError(err, 'Audit failed')]);
    }
    const totals = auditTotals(files, run.downloads);
    if (sarif !== undefined) {
      try {
        const log = `${JSON.stringify(auditSarif(files, VERSION), null, 2)}\n`;
        await writeFileAtomic(resolve(globals.cwd, sarif), Buffer.from(log));
      } catch (err) {
        return ui.fail([diagnosticFromError(err, 'Cannot write the SARIF file')]);
      }
    }
    const uis = jsonUIsFor(io, json);
    for (const j of uis) renderAuditJSON(files, totals, j);
    const columns = terminalColumns(io.stdout);
    if (!json)
      io.stdout.write(
        `${auditTableText(files, columns)}${fittedLines(auditSummaryText(totals), columns).join('\n')}\n`,
      );
    return totals.failing > 0 ? 2 : 0;
  });
}

interface AuditRun {
  readonly r: RunResources;
  readonly io: CliIO;
  readonly globals: GlobalOptions;
  readonly ui: Renderer;
  readonly mirror: MirrorFlags;
  readonly commit?: string;
  readonly cache: AuditCache;
  readonly policies: PolicyCache;
  /** One source per flavor. */
  readonly sources: Map<Flavor, Promise<Source | undefined>>;
  downloads: number;
}

/**
 * One root module's lock file: undefined when there is none (nothing to
 * audit), `failed` when a diagnostic was rendered.
 */
async function auditRoot(run: AuditRun, root: string): Promise<AuditedLockFile | 'failed' | undefined> {
  const { globals, ui, r } = run;
  const dir = root === '.' ? globals.cwd : join(globals.cwd, root);
  const shown = root === '.' ? LOCK_FILE_NAME : posix.join(root.split(sep).join('/'), LOCK_FILE_NAME);
  const path = join(dir, LOCK_FILE_NAME);
  // As lock -recursive and verify -recursive choose it: per root module (src/cli/flavor.ts).
  const flavor = root === '.' ? globals.flavor : globals.flavorIn(dir).flavor;
  let bytes: Buffer | undefined;
  try {
    // A regular file, bounded (fs/read.ts), as every lock file provkit reads.
    bytes = await readRegularFile(path);
  } catch (err) {
    if (systemErrorCode(err) !== 'ENOENT') throw err;
  }
  const baseBytes = run.commit === undefined ? undefined : await fileAtRevision(run.commit, path);
  // Unchanged against the base: nothing to derive, nothing fetched.
  if (run.commit !== undefined && bytes !== undefined && baseBytes !== undefined && bytes.equals(baseBytes))
    return { file: shown, hashes: [], changes: [], positionOf: () => undefined };
  if (bytes === undefined && baseBytes === undefined) return undefined;
  const parse = (b: Buffer | undefined, name: string): Locks | 'failed' => {
    if (b === undefined) return new Locks();
    const parsed = parseLockFile(b, name, flavor);
    const errors = parsed.diagnostics.filter((d) => d.severity === 'error');
    if (errors.length > 0) {
      ui.diagnostics(errors.map((d) => placed(d)));
      return 'failed';
    }
    return parsed.locks;
  };
  const locks = parse(bytes, shown);
  const baseLocks = run.commit === undefined ? undefined : parse(baseBytes, `${shown} at ${run.commit.slice(0, 12)}`);
  if (locks === 'failed' || baseLocks === 'failed') return 'failed';
  const policy = await rootAuditPolicy(dir, globals.cwd, ui, run.policies);
  if (policy === 'failed') return 'failed';
  let source = run.sources.get(flavor);
  if (source === undefined) run.sources.set(flavor, (source = r.source(run.mirror, 'registry', ui, flavor)));
  const src = await source;
  if (src === undefined) return 'failed';
  const outcome = await runAudit({
    locks,
    ...(baseLocks === undefined ? {} : { base: baseLocks }),
    source: src,
    mirrorOnly: run.mirror.fsMirror !== undefined || run.mirror.netMirror !== undefined,
    pool: r.pool(),
    http: r.http(),
    ...r.hashStore(),
    ...policy,
    flavor,
    signal: r.signal,
    cache: run.cache,
  });
  run.downloads += outcome.downloads;
  const positions: LockHashPositions = bytes === undefined ? new Map() : lockHashPositions(bytes, shown);
  return {
    file: shown,
    hashes: outcome.hashes,
    changes: outcome.changes,
    positionOf: (h) => positions.get(h.provider.toString())?.get(h.hash.text),
  };
}
