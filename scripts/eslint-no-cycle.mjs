// An ESLint rule of this repository: no import cycle in src/ (CONTRIBUTING.md,
// the layer rule). The layer blocks of eslint.config.js refuse an import that
// climbs to another folder; a cycle inside one folder (or through a barrel:
// `hcl/index.ts` once re-exported `json.ts`, which imported `parseHCL` from
// `./index.js`) is this rule's.
//
// Why a rule of our own and not eslint-plugin-import-x's `no-cycle`: that
// plugin pulls a native resolver whose per-platform optional packages npm
// leaves out of the lock file, which breaks `npm ci` on other platforms
// (eslint.config.js says so too), and it resolves every import of every file
// again per file. This one reads the relative imports of src/ once per lint
// run (type-only imports included: a cycle of types is a cycle of the
// design too), finds the strongly connected components (Tarjan), and reports
// every import that stays inside one, with the cycle it closes.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const IMPORT = /(?:^|[\n;])\s*(?:import|export)(?:\s+type)?\s+(?:[^;'"]*?\sfrom\s+)?['"](\.{1,2}\/[^'"]+)['"]/g;

/**
 * The module a relative specifier names (`./x.js` is `./x.ts` in src/).
 * @param {string} from
 * @param {string} specifier
 * @returns {string}
 */
function target(from, specifier) {
  return resolve(dirname(from), specifier).replace(/\.js$/, '.ts');
}

/**
 * @param {string} dir
 * @param {string[]} out
 * @returns {string[]}
 */
function tsFiles(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) tsFiles(path, out);
    else if (name.endsWith('.ts')) out.push(path);
  }
  return out;
}

/**
 * The import graph of `srcDir` and, per file, its strongly connected
 * component (only those of 2+ files, or a self-import).
 * @param {string} srcDir
 * @returns {{ graph: Map<string, string[]>, component: Map<string, Set<string>> }}
 */
function analyse(srcDir) {
  /** @type {Map<string, string[]>} */
  const graph = new Map();
  for (const file of tsFiles(srcDir)) {
    const text = readFileSync(file, 'utf8');
    graph.set(
      file,
      [...text.matchAll(IMPORT)].map((m) => target(file, m[1] ?? '')),
    );
  }
  /** @type {Map<string, number>} */
  const index = new Map();
  /** @type {Map<string, number>} */
  const low = new Map();
  /** @type {string[]} */
  const stack = [];
  /** @type {Set<string>} */
  const onStack = new Set();
  /** @type {Map<string, Set<string>>} */
  const component = new Map();
  let next = 0;
  /** @param {string} v */
  const visit = (v) => {
    const lowOf = (/** @type {string} */ x) => low.get(x) ?? 0;
    const edges = graph.get(v) ?? [];
    index.set(v, next);
    low.set(v, next);
    next += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of edges) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(lowOf(v), lowOf(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(lowOf(v), index.get(w) ?? 0));
    }
    if (low.get(v) !== index.get(v)) return;
    /** @type {Set<string>} */
    const members = new Set();
    for (let w = stack.pop(); w !== undefined; w = w === v ? undefined : stack.pop()) {
      onStack.delete(w);
      members.add(w);
    }
    if (members.size > 1 || edges.includes(v)) for (const m of members) component.set(m, members);
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return { graph, component };
}

/**
 * A shortest path of imports from `from` back to `to` inside `members`.
 * @param {Map<string, string[]>} graph
 * @param {Set<string>} members
 * @param {string} from
 * @param {string} to
 * @returns {string[]}
 */
function pathBack(graph, members, from, to) {
  /** @type {Map<string, string | undefined>} */
  const previous = new Map([[from, undefined]]);
  const queue = [from];
  for (let v = queue.shift(); v !== undefined && v !== to; v = queue.shift()) {
    for (const w of graph.get(v) ?? []) {
      if (!members.has(w) || previous.has(w)) continue;
      previous.set(w, v);
      queue.push(w);
    }
  }
  /** @type {string[]} */
  const path = [];
  for (let v = /** @type {string | undefined} */ (to); v !== undefined; v = previous.get(v)) path.unshift(v);
  return path;
}

/** @type {{ srcDir: string, graph: Map<string, string[]>, component: Map<string, Set<string>> } | undefined} */
let cached;

/** @type {import('eslint').Rule.RuleModule} */
const noCycle = {
  meta: {
    type: 'problem',
    docs: { description: 'no import cycle in src/ (CONTRIBUTING.md, the layer rule)' },
    schema: [],
    messages: { cycle: 'import cycle: {{cycle}} (the layer rule: imports go one way; see CONTRIBUTING.md)' },
  },
  create(context) {
    const file = context.filename;
    const srcDir = join(context.cwd, 'src');
    if (relative(srcDir, file).startsWith('..')) return {};
    if (cached?.srcDir !== srcDir) cached = { srcDir, ...analyse(srcDir) };
    const { graph, component } = cached;
    const members = component.get(file);
    if (members === undefined) return {};
    /** @param {import('estree').ImportDeclaration | import('estree').ExportNamedDeclaration | import('estree').ExportAllDeclaration} node */
    const check = (node) => {
      const specifier = node.source?.value;
      if (typeof specifier !== 'string' || !specifier.startsWith('.')) return;
      const to = target(file, specifier);
      if (!members.has(to)) return;
      const cycle = [file, ...pathBack(graph, members, to, file)].map((f) => relative(context.cwd, f));
      context.report({ node: node.source ?? node, messageId: 'cycle', data: { cycle: cycle.join(' → ') } });
    };
    return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check };
  },
};

/** The plugin eslint.config.js registers as `provkit`. */
export const provkitPlugin = { rules: { 'no-cycle': noCycle } };
