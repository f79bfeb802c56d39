/**
 * `provkit verify [options]`: offline checks of .terraform.lock.hcl for CI
 * (src/installer/verify.ts), of one root module or, with `-recursive`, of
 * every root module of the tree. Thin: flags → locks, requirements, mirror,
 * platform policy → `runVerify` → one line per problem → exit 1 if any,
 * else a summary and 0.
 */
import { join, posix, resolve } from 'node:path';

import type { Flavor, Platform, ProviderAddress, Requirement } from '../../addresses/index.js';
import {
  type Diagnostic as ConfigDiagnostic,
  discoverRoots,
  findPolicy,
  loadModuleRequirements,
  type PlatformPolicy,
} from '../../config/index.js';
import type { EventSink } from '../../installer/events.js';
import { runOciVerify } from '../../installer/oci-verify.js';
import { compareProblems, runVerify, type VerifyOutcome } from '../../installer/verify.js';
import { loadLockFile, LOCK_FILE_NAME, type Locks } from '../../lockfile/index.js';
import { type Diagnostic, verifyEventText, type VerifyEvent } from '../../ui/human.js';
import { flavorsSentence } from '../../ui/lock-tree.js';
import { placed, reportDiagnostics } from '../diagnostics.js';
import { parsePlatformFlags } from '../flag-values.js';
import { mirrorDirectoryDiagnostic, ociTemplate, ociTemplateDiagnostic } from '../mirror-flags.js';
import { ociMirrorSourceFor } from '../../sources/index.js';
import { ErrorCode } from '../../errors.js';
import { parseFlags, unexpectedArguments } from '../flags.js';
import { noteFlavor } from '../flavor.js';
import type { CliIO, GlobalOptions } from '../io.js';
import { createRenderer, type Renderer } from '../render.js';
import { type RunResources, withResources } from '../resources.js';
import { count } from '../../ui/words.js';
import { terminalLine } from '../../ui/escape.js';
import { hasErrors } from '../../hcl/index.js';

export const VERIFY_HELP = `Usage: provkit [global options] verify [options]

  Checks .terraform.lock.hcl offline, for CI; fetches and writes nothing.
  Prints one line per problem ("PROVIDER VERSION PLATFORM: problem") and
  exits 1 if there is any, else prints a summary and exits 0.

  - The lock file selects a version, meeting the constraints, of every
    provider the configuration requires.
  - With -mirror: the lock file covers every platform (its h1: of each
    package is recorded, and its zh: when the lock has registry zh: hashes);
    every package in the mirror matches the mirror's index.json/VERSION.json
    and can be installed; archives whose zip-form and extracted-form h1:
    differ are flagged (H1_FORMS_DIFFER).
  - Without -mirror: each package of a locked version installed in
    .terraform/providers (TF_DATA_DIR) is hashed and said with who vouches
    for its hashes (docs/provenance.md), as the mirror's packages are.
  - With a platform policy (provkit.hcl, the nearest one in the root
    module's directory or above it, up to the working directory) and no
    -mirror: the lock file covers the policy's platforms, as far as the hash
    store can tell (LOCK_MISSING_PLATFORM).

Options:
  -recursive            Check every root module of the tree (see "lock -recursive").
  -mirror=DIR           A filesystem mirror holding the packages (packed or unpacked).
  -mirror=oci://REGISTRY[:PORT]/TEMPLATE
                        A published OCI mirror (see docs/oci.md): its indexes,
                        manifests and blobs are read and every package of the
                        locked versions downloaded (to TMPDIR) and hashed.
  -platform=OS_ARCH     A platform the lock must cover (repeatable; needs -mirror;
                        default: the policy's, else every platform the mirror has).
  -json                 Machine-readable output (JSON lines; see docs/json-ui.md).
`;

export async function verifyCommand(args: readonly string[], io: CliIO, globals: GlobalOptions): Promise<number> {
  const flags = parseFlags(args, { platform: 'strings', mirror: 'string', json: 'bool', recursive: 'bool' });
  const json = flags.values.json === true;
  const ui = createRenderer(io, globals, json);
  const errors: Diagnostic[] = [];

  // None given: the policy's, else every platform the mirror has.
  const platforms = parsePlatformFlags(flags.values.platform ?? [], errors, false);
  const mirror = flags.values.mirror;
  if (platforms.length > 0 && mirror === undefined) {
    errors.push({
      severity: 'error',
      summary: 'A mirror is needed',
      detail: 'Checking that the lock file covers a platform needs the packages: give -mirror=DIR.',
      code: ErrorCode.USAGE,
    });
  }
  const unexpected = unexpectedArguments('verify', flags.positionals);
  if (unexpected !== undefined) errors.push(unexpected);
  if (mirror !== undefined && !mirror.startsWith('oci://')) {
    const problem = await mirrorDirectoryDiagnostic(resolve(globals.cwd, mirror), '-mirror');
    if (problem !== undefined) errors.push(problem);
  }
  if (errors.length > 0) return ui.fail(errors);
  // verify -recursive says each root's flavor in its summary instead.
  if (flags.values.recursive !== true) noteFlavor(io, globals);

  return withResources(io, globals, (r) => {
    const context: VerifyContext = { r, io, globals, ui, platforms, ...(mirror === undefined ? {} : { mirror }) };
    return flags.values.recursive !== true ? verifyOne(context) : verifyTree(context);
  });
}

interface VerifyContext {
  /** The run's hash pool (default options), hash store and, for an OCI mirror, HTTP client and CLI configuration. */
  readonly r: RunResources;
  readonly io: CliIO;
  readonly globals: GlobalOptions;
  readonly ui: Renderer;
  readonly platforms: Platform[];
  readonly mirror?: string;
}

/** One root's checks: its diagnostics (failures to load) or the verify outcome. */
async function verifyRoot(
  c: VerifyContext,
  dir: string,
  root: string | undefined,
  /** The root's flavor (`verify -recursive`: as verify run in it would choose it, src/cli/flavor.ts). */
  flavor: Flavor = c.globals.flavor,
  /** Where the checked packages and unvouched lock hashes go (`verify_package`, `verify_unvouched`). */
  events?: EventSink,
): Promise<{ diagnostics: Diagnostic[]; failed: boolean; outcome?: VerifyOutcome; policy?: PlatformPolicy }> {
  const { io, globals } = c;
  const within = (name: string): string => (root === undefined || root === '.' ? name : posix.join(root, name));
  const asUi = (ds: readonly ConfigDiagnostic[]): Diagnostic[] =>
    ds.map((d) =>
      placed(d.range ? { ...d, range: { ...d.range, filename: within(d.range.filename) } } : d, root !== undefined),
    );
  const dataDir = io.env['TF_DATA_DIR'] || '.terraform';
  // A tree is checked as lock -recursive locks it: local module calls read from disk.
  const config = await loadModuleRequirements(dir, {
    flavor,
    dataDir,
    ...(root === undefined ? {} : { resolveLocalModules: true }),
  });
  const diagnostics = asUi(config.diagnostics);
  if (hasErrors(config.diagnostics)) return { diagnostics, failed: true };
  const lock = await loadLockFile(join(dir, LOCK_FILE_NAME), flavor, within(LOCK_FILE_NAME));
  diagnostics.push(...asUi(lock.diagnostics));
  const policy = c.platforms.length > 0 ? { diagnostics: [] } : await findPolicy(dir, globals.cwd);
  diagnostics.push(...asUi(policy.diagnostics));
  if (hasErrors(diagnostics)) return { diagnostics, failed: true };

  const platforms = c.platforms.length > 0 ? c.platforms : policy.policy ? [...policy.policy.platforms] : [];
  const outcome = c.mirror?.startsWith('oci://')
    ? await verifyOci(c.r, c.ui, flavor, {
        locks: lock.locks,
        requirements: [...config.requirements.values()],
        mirror: c.mirror,
        platforms,
        ...(events === undefined ? {} : { events }),
      })
    : await runVerify({
        locks: lock.locks,
        requirements: [...config.requirements.values()],
        // Without a mirror: the packages init installed for this root module.
        ...(c.mirror === undefined
          ? { installedDir: resolve(dir, dataDir, 'providers') }
          : { mirrorDir: resolve(globals.cwd, c.mirror) }),
        ...(platforms.length > 0 && c.mirror !== undefined ? { platforms } : {}),
        ...(policy.policy && c.platforms.length === 0
          ? { policy: { platforms: policy.policy.platforms, file: policy.policy.file } }
          : {}),
        ...c.r.hashStore(),
        pool: c.r.pool(),
        flavor,
        ...(events === undefined ? {} : { events }),
      });
  if (outcome === undefined) return { diagnostics, failed: true };
  return { diagnostics, failed: false, outcome, ...(policy.policy ? { policy: policy.policy } : {}) };
}

async function verifyOne(c: VerifyContext): Promise<number> {
  const { ui, globals } = c;
  const r = await verifyRoot(c, globals.cwd, undefined, globals.flavor, (e) => ui.event(e));
  for (const d of r.diagnostics) ui.diagnostic(d);
  if (r.failed || !r.outcome) return ui.fail([]);
  const outcome = r.outcome;
  for (const p of outcome.problems) ui.event({ type: 'verify_problem', ...p });
  const fields = {
    problems: outcome.problems.length,
    providers: outcome.providers,
    packages: outcome.packages,
    platforms: outcome.platforms.map(String),
  };
  if (outcome.problems.length > 0) {
    ui.summary(`${count(outcome.problems.length, 'problem')} found.`, fields);
    return 1;
  }
  const scope =
    c.mirror !== undefined
      ? `against ${count(outcome.packages, 'package')} for ${outcome.platforms.map(String).join(', ') || 'no platform'}`
      : r.policy
        ? `against the configuration and the platforms of ${r.policy.file}`
        : 'against the configuration';
  ui.summary(
    `${LOCK_FILE_NAME} verified: ${count(outcome.providers, 'provider')} checked ${scope}; no problems.`,
    fields,
  );
  return 0;
}

async function verifyTree(c: VerifyContext): Promise<number> {
  const { ui, globals, io } = c;
  const json = ui.json;
  const tree = await discoverRoots(globals.cwd, { flavor: globals.flavor });
  if (reportDiagnostics(ui, tree.diagnostics, globals.cwd)) return ui.fail([]);
  let problems = 0;
  let failing = 0;
  const flavors: Record<Flavor, string[]> = { tofu: [], terraform: [] };
  let inferred = false;
  for (const root of tree.roots) {
    const dir = root === '.' ? globals.cwd : join(globals.cwd, root);
    const flavor = globals.flavorIn(dir);
    flavors[flavor.flavor].push(root);
    if (flavor.reason !== undefined) inferred = true;
    // -json: each root's packages under its root; for people, under the root's line, which comes first.
    const scoped = json?.scoped({ root });
    const found: VerifyEvent[] = [];
    const sink: EventSink = (e) => {
      if (scoped !== undefined) scoped.event(e);
      else if (e.type === 'verify_package' || e.type === 'verify_unvouched') found.push(e);
    };
    // eslint-disable-next-line no-await-in-loop -- offline and quick; one root's lines together
    const r = await verifyRoot(c, dir, root, flavor.flavor, sink);
    const rootProblems = r.outcome?.problems ?? [];
    if (r.failed || rootProblems.length > 0) failing += 1;
    problems += rootProblems.length;
    if (scoped) {
      for (const d of r.diagnostics) scoped.diagnostic(d);
      for (const p of rootProblems) scoped.event({ type: 'verify_problem', ...p });
      scoped.message(
        r.failed || rootProblems.length > 0 ? 'error' : 'info',
        `${root}: ${r.failed ? 'failed' : count(rootProblems.length, 'problem')}`,
        'verify_root',
        {
          status: r.failed ? 'failed' : rootProblems.length > 0 ? 'problems' : 'ok',
          flavor: flavor.flavor,
          ...(flavor.reason === undefined ? {} : { flavor_reason: flavor.reason }),
          problems: rootProblems.length,
          platforms: r.outcome?.platforms.map(String) ?? [],
        },
      );
      continue;
    }
    // The root's name is a directory name from the tree: one line, escaped (src/ui/escape.ts).
    io.stdout.write(
      `${terminalLine(`- ${root}: ${r.failed ? 'failed' : rootProblems.length === 0 ? 'ok' : count(rootProblems.length, 'problem')}`)}\n`,
    );
    // The lines a verify run in the root prints, in its order (packages, unvouched hashes, problems), under it.
    const name = (p: ProviderAddress): string => p.forDisplay(flavor.flavor);
    for (const e of [...found, ...rootProblems.map((p): VerifyEvent => ({ type: 'verify_problem', ...p }))])
      io.stdout.write(verifyEventText(e, io.stdout, name, '    '));
    for (const d of r.diagnostics) ui.diagnostic(d);
  }
  const fields = { roots: tree.roots.length, failing, problems, flavors };
  const said = flavorsSentence(flavors, inferred);
  ui.summary(
    `${count(tree.roots.length, 'root module')} verified: ${failing === 0 ? 'no problems' : `${failing} with problems (${problems} in all)`}.${said === undefined ? '' : `\n${said}`}`,
    fields,
  );
  return failing > 0 ? 1 : 0;
}

/**
 * `-mirror=oci://…`: the configuration checks of {@link runVerify}, then the
 * published mirror's (installer/oci-verify.ts). Undefined when the CLI
 * configuration or the template is unusable (already reported).
 */
async function verifyOci(
  r: RunResources,
  ui: Renderer,
  flavor: Flavor,
  o: { locks: Locks; requirements: Requirement[]; mirror: string; platforms: Platform[]; events?: EventSink },
): Promise<VerifyOutcome | undefined> {
  const template = ociTemplate(o.mirror);
  const problem = ociTemplateDiagnostic(`The mirror ${o.mirror}`, template);
  if (problem !== undefined) {
    ui.diagnostic(problem);
    return undefined;
  }
  const cli = await r.cliConfig(ui, flavor);
  if (!cli) return undefined;
  const pool = r.pool();
  const configProblems = await runVerify({
    locks: o.locks,
    requirements: o.requirements,
    pool,
    flavor,
  });
  const published = await runOciVerify({
    locks: o.locks,
    source: ociMirrorSourceFor(template, r.sourceContext(flavor), cli),
    mirror: o.mirror,
    ...(o.platforms.length > 0 ? { platforms: o.platforms } : {}),
    pool,
    http: r.http(),
    ...r.hashStore(),
    ...(o.events === undefined ? {} : { events: o.events }),
  });
  const problems = [...configProblems.problems, ...published.problems].sort(compareProblems);
  return { ...published, problems };
}
