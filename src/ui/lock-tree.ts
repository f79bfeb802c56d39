/**
 * The output of `lock -recursive` (docs/recursive-lock.md): one line per
 * root module (or, under `-json`, a `lock_root` message scoped to the root),
 * and the run's summary.
 */
import { type Flavor, FLAVORS } from '../addresses/index.js';
import type { PlanStats } from '../installer/lock-plan.js';
import type { RootOutcome, TreeLockResult } from '../installer/lock-tree.js';
import {
  type Diagnostic,
  type HumanStyle,
  platformsText,
  renderDiagnostics,
  sortedDiagnostics,
  type TextSink,
} from './human.js';
import { terminalLine } from './escape.js';
import type { JsonUI } from './json.js';
import { count } from './words.js';

/** How a root's outcome reads on its line. */
export function lockRootStatusText(o: RootOutcome): string {
  switch (o.status) {
    case 'unchanged':
      return 'no changes';
    case 'updated':
      return 'lock file updated';
    case 'created':
      return 'lock file created';
    case 'would-change':
      return 'lock file would change';
    case 'failed':
      return 'failed';
  }
}

/**
 * One root's result with its diagnostics: a `lock_root` message under
 * `-json`, else its line, its changes and the diagnostics, rendered as a
 * single lock renders them (`style`: boxed on a terminal, source lines,
 * similar warnings consolidated).
 */
export function renderLockRoot(
  o: RootOutcome,
  diagnostics: readonly Diagnostic[],
  out: { stdout: TextSink; stderr: TextSink; json: JsonUI | undefined; style: HumanStyle },
): void {
  const platforms = o.platforms ? platformsText({ type: 'platforms_chosen', ...o.platforms }) : undefined;
  if (out.json) {
    const scoped = out.json.scoped({ root: o.root });
    for (const d of diagnostics) scoped.diagnostic(d);
    scoped.message(o.status === 'failed' ? 'error' : 'info', `${o.root}: ${lockRootStatusText(o)}`, 'lock_root', {
      status: o.status.replace('-', '_'),
      flavor: o.flavor.flavor,
      ...(o.flavor.reason === undefined ? {} : { flavor_reason: o.flavor.reason }),
      providers: o.providers,
      platforms: o.platforms?.platforms.map(String) ?? [],
      platforms_origin: o.platforms?.origin ?? null,
      ...(o.platforms?.policyFile === undefined ? {} : { policy_file: o.platforms.policyFile }),
      ...(o.platforms?.via === undefined ? {} : { platforms_via: o.platforms.via }),
      changes: o.changes,
    });
    return;
  }
  const what = `${count(o.providers, 'provider')}${platforms === undefined ? '' : `; ${platforms}`}`;
  // The root's name is a directory name from the tree: one line, escaped (src/ui/escape.ts).
  out.stdout.write(`${terminalLine(`- ${o.root}: ${lockRootStatusText(o)} (${what})`)}\n`);
  if (o.status === 'would-change' || o.status === 'updated')
    for (const c of o.changes) out.stdout.write(`${terminalLine(`    ${c}`)}\n`);
  renderDiagnostics(sortedDiagnostics(diagnostics), out.stderr, out.style, out.stdout);
}

/**
 * Which roots used which flavor, as a sentence of the summary (`Flavors:
 * terraform for envs/dev, envs/prod; tofu for envs/new.`), or undefined when
 * nothing is worth saying: every root in one flavor that no lock file chose
 * (`-flavor`, `PROVKIT_FLAVOR`, or the default everywhere), as a single
 * `lock` says nothing then either. Shared by `lock -recursive` and
 * `verify -recursive`.
 */
export function flavorsSentence(
  flavors: Readonly<Record<Flavor, readonly string[]>>,
  inferred: boolean,
): string | undefined {
  const used = FLAVORS.filter((f) => flavors[f].length > 0);
  if (used.length === 0 || (used.length === 1 && !inferred)) return undefined;
  if (used.length === 1) {
    const roots = flavors[used[0]!];
    return `Flavor: ${used[0]!} for ${roots.length === 1 ? `the root module ${roots[0]!}` : `all ${roots.length} root modules`}.`;
  }
  // The flavor with more roots first; each flavor's roots in tree order.
  const order = [...used].sort((a, b) => flavors[b].length - flavors[a].length);
  return `Flavors: ${order.map((f) => `${f} for ${flavors[f].join(', ')}`).join('; ')}.`;
}

/** The summary of a `lock -recursive` run: its message and its `-json` fields. */
export function lockTreeSummary(
  result: TreeLockResult,
  stats: PlanStats,
  seconds: number,
  check: boolean,
  /** Whether a root's flavor came from its lock file (see {@link flavorsSentence}). */
  inferred = false,
): { message: string; fields: Record<string, unknown> } {
  const s = result.byStatus;
  const counts = [
    s.unchanged > 0 ? `${s.unchanged} unchanged` : '',
    s.updated > 0 ? `${s.updated} updated` : '',
    s.created > 0 ? `${s.created} created` : '',
    s['would-change'] > 0 ? `${s['would-change']} would change` : '',
    s.failed > 0 ? `${s.failed} failed` : '',
  ].filter((x) => x !== '');
  const fetched = [
    `${stats.downloaded} downloaded`,
    ...(stats.local > 0 ? [`${stats.local} from the mirror`] : []),
    `${stats.fromStore} from the hash store`,
  ];
  const flavors = flavorsSentence(result.flavors, inferred);
  const message =
    `${check ? 'Checked' : 'Locked'} ${count(result.roots, 'root module')} (${counts.join(', ')}): ` +
    `${count(result.providers, 'provider')}, ${count(stats.packages, 'unique package')} (${fetched.join(', ')}) in ${seconds.toFixed(1)} s.` +
    (flavors === undefined ? '' : `\n${flavors}`);
  return {
    message,
    fields: {
      roots: result.roots,
      unchanged: s.unchanged,
      updated: s.updated,
      created: s.created,
      would_change: s['would-change'],
      failed: s.failed,
      providers: result.providers,
      packages: stats.packages,
      downloaded: stats.downloaded,
      local: stats.local,
      hash_store: stats.fromStore,
      flavors: result.flavors,
      seconds,
    },
  };
}
