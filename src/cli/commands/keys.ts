/**
 * `provkit keys [options]`: the signing keys of the configuration's
 * providers (src/installer/keys.ts, docs/provenance.md "Signing keys").
 * Thin: flags → the root module(s)' requirements and lock files, each
 * root's audit policy (its nearest provkit.hcl, src/cli/audit-policy.ts) →
 * `runKeys` over the origin registries (or the mirror of `-fs-mirror` /
 * `-net-mirror`) → table / `-json` → exit 0 (nothing flagged), 2 (a key
 * flagged; as `audit`), 1 (an error: a registry or mirror that cannot be
 * asked fails the run).
 */
import { join, posix, sep } from 'node:path';

import type { ProviderAddress, Version, VersionConstraints } from '../../addresses/index.js';
import { type AuditPolicy, discoverRoots, loadModuleRequirements } from '../../config/index.js';
import { type Diagnostic, diagnosticFromError } from '../../errors.js';
import { compareBytewise } from '../../go/index.js';
import { type KeysRequest, runKeys } from '../../installer/keys.js';
import { loadLockFile, LOCK_FILE_NAME } from '../../lockfile/index.js';
import { registrySourceFor, type Source } from '../../sources/index.js';
import { fittedLines } from '../../ui/table.js';
import { keysSummaryText, keysTableText, keysTotals, renderKeysJSON } from '../../ui/keys.js';
import { type PolicyCache, rootAuditPolicy } from '../audit-policy.js';
import { placed, reportDiagnostics } from '../diagnostics.js';
import { parseFlags, unexpectedArguments } from '../flags.js';
import { checkMirrorFlags, type MirrorFlags } from '../mirror-flags.js';
import type { CliIO, GlobalOptions } from '../io.js';
import { createRenderer, jsonUIsFor, terminalColumns } from '../render.js';
import { runInterruptibleWith } from '../resources.js';

export const KEYS_HELP = `Usage: provkit [global options] keys [options]

  Shows the OpenPGP keys the providers of the configuration are signed with:
  for each version the lock file selects, the key whose signature over the
  release's SHA256SUMS verified (key ID, fingerprint, expiry). Downloads no
  package: one SHA256SUMS and its signature per version.

  Flags (see docs/provenance.md, "Signing keys"), judged with the audit
  block of each root module's provkit.hcl:
    KEY_EXPIRED      the key had expired (unless allow_expired_keys)
    KEY_NOT_TRUSTED  the key is not one of trusted_keys
    KEY_CHANGED      a version is signed by another key than the one before
                     it (unless both keys are trusted_keys)
    NOT_SIGNED       no key vouches for a version (signature check skipped,
                     or the source is a mirror: a mirror vouches for no key)

  Exits 0 when nothing is flagged, 2 when a key is flagged, 1 on an error.

Options:
  -available            Also every version the configuration's constraints
                        allow, not only the locked ones.
  -recursive            The providers of every root module of the tree, each
                        judged by its root's policy.
  -fs-mirror=DIR        Ask a filesystem mirror instead of the origin
                        registries (it has no signatures: nothing is signed).
  -net-mirror=URL       Ask a network mirror instead.
  -json                 Machine-readable output (JSON lines; see docs/json-ui.md).
`;

export async function keysCommand(args: readonly string[], io: CliIO, globals: GlobalOptions): Promise<number> {
  const flags = parseFlags(args, {
    json: 'bool',
    available: 'bool',
    recursive: 'bool',
    'fs-mirror': 'string',
    'net-mirror': 'string',
  });
  const json = flags.values['json'] === true;
  const ui = createRenderer(io, globals, json);
  const errors: Diagnostic[] = [];
  const mirror: MirrorFlags = { fsMirror: flags.values['fs-mirror'], netMirror: flags.values['net-mirror'] };
  checkMirrorFlags(mirror, errors);
  const unexpected = unexpectedArguments('keys', flags.positionals);
  if (unexpected !== undefined) errors.push(unexpected);
  if (errors.length > 0) return ui.fail(errors);

  return runInterruptibleWith(io, globals, 'keys', async (r) => {
    let roots: string[] = ['.'];
    if (flags.values['recursive'] === true) {
      const tree = await discoverRoots(globals.cwd, { flavor: globals.flavor });
      if (reportDiagnostics(ui, tree.diagnostics, globals.cwd)) return ui.fail([]);
      roots = tree.roots;
    }
    // One request per provider and policy file: each root's requests are judged by its own provkit.hcl.
    const requests = new Map<string, Request>();
    const entry = (provider: ProviderAddress, policy: AuditPolicy | undefined): Request => {
      const key = `${provider.toComparisonString()}\0${policy?.file ?? ''}`;
      let e = requests.get(key);
      if (e === undefined)
        requests.set(key, (e = { provider, locked: new Map(), constraints: [], roots: new Set(), policy }));
      return e;
    };
    const policies: PolicyCache = new Map();
    const dataDir = io.env['TF_DATA_DIR'] || '.terraform';
    for (const root of roots) {
      const dir = root === '.' ? globals.cwd : join(globals.cwd, root);
      const shown = root === '.' ? root : root.split(sep).join('/');
      const within = (name: string): string => (root === '.' ? name : posix.join(shown, name));
      const flavor = root === '.' ? globals.flavor : globals.flavorIn(dir).flavor;
      // eslint-disable-next-line no-await-in-loop -- local files, one root after another
      const config = await loadModuleRequirements(dir, {
        flavor,
        dataDir,
        ...(root === '.' ? {} : { resolveLocalModules: true }),
      });
      // eslint-disable-next-line no-await-in-loop -- see above
      const lock = await loadLockFile(join(dir, LOCK_FILE_NAME), flavor, within(LOCK_FILE_NAME));
      const diagnostics = [...config.diagnostics, ...lock.diagnostics].map((d) =>
        placed(d.range ? { ...d, range: { ...d.range, filename: within(d.range.filename) } } : d, root !== '.'),
      );
      if (diagnostics.some((d) => d.severity === 'error')) return ui.fail(diagnostics);
      for (const d of diagnostics) ui.diagnostic(d);
      // eslint-disable-next-line no-await-in-loop -- see above
      const found = await rootAuditPolicy(dir, globals.cwd, ui, policies);
      if (found === 'failed') return ui.fail([]);
      const ask = (provider: ProviderAddress): Request => {
        const e = entry(provider, found.policy);
        e.roots.add(shown);
        return e;
      };
      for (const req of config.requirements.values()) ask(req.provider).constraints.push(req.constraints);
      for (const l of lock.locks.all()) ask(l.provider).locked.set(l.version.toString(), l.version);
    }

    const fromMirror = mirror.fsMirror !== undefined || mirror.netMirror !== undefined;
    let source: Source | undefined;
    if (fromMirror) source = await r.source(mirror, 'registry', ui);
    else {
      const cli = await r.cliConfig(ui);
      // Origin registries (as lock: provider_installation is not theirs to say); expired keys shown, not refused.
      if (cli !== undefined) source = registrySourceFor(r.sourceContext(), cli, { tolerateExpiredKeys: true });
    }
    if (source === undefined) return ui.fail([]);
    const providers: KeysRequest[] = [...requests.values()].map((e) => ({
      provider: e.provider,
      locked: [...e.locked.values()],
      constraints: e.constraints,
      roots: [...e.roots].sort(compareBytewise),
      ...(e.policy === undefined ? {} : { policy: e.policy }),
    }));
    let outcome;
    try {
      outcome = await runKeys({
        providers,
        source,
        available: flags.values['available'] === true,
        mirror: fromMirror,
        flavor: globals.flavor,
        signal: r.signal,
      });
    } catch (err) {
      return ui.fail([diagnosticFromError(err, 'Cannot read the signing keys')]);
    }
    const totals = keysTotals(outcome);
    for (const j of jsonUIsFor(io, json)) renderKeysJSON(outcome, totals, j);
    const columns = terminalColumns(io.stdout);
    if (!json)
      io.stdout.write(
        `${keysTableText(outcome, columns)}${fittedLines(keysSummaryText(totals), columns).join('\n')}\n`,
      );
    return totals.flagged > 0 ? 2 : 0;
  });
}

/** What the roots ask of one provider under one policy file. */
interface Request {
  readonly provider: ProviderAddress;
  readonly locked: Map<string, Version>;
  readonly constraints: VersionConstraints[];
  readonly roots: Set<string>;
  readonly policy: AuditPolicy | undefined;
}
