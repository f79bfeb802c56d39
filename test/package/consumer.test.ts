// The package as a user gets it. `npm pack` runs as a release does (the
// prepack and postpack hooks of scripts/prepack.mjs included), the tarball is
// installed with npm into a new project, and everything below is checked
// there, through `node_modules/provkit`, never through this checkout: what the
// tarball holds and links, its package.json, the typings (docs/api.md's
// examples type-checked under strict `nodenext`, `node16` and `bundler`, the
// subpath exports under `node10`), the examples compiled and run, `require('provkit')`,
// and the `provkit` command npm linked.
//
// Offline and fast: one pack and one install for the whole file. The install
// is `npm ci --offline` from a package-lock.json written here: provkit from
// the tarball, its dependencies (and `@types/node`) at the versions and
// integrities of this checkout's package-lock.json, which `npm ci` has put in
// npm's cache. The checkout's dist/ must be the build of its sources
// (scripts/build.mjs --check): the pack would rebuild it otherwise, under the
// feet of the other test files.
import { execFile, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ZIP = join(ROOT, 'test/fixtures/conformance/packages/comment.zip');
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');
const EXAMPLES = [...readFileSync(join(ROOT, 'docs/api.md'), 'utf8').matchAll(/```ts\n([\s\S]*?)```/g)].map(
  (m) => m[1]!,
);

interface LockEntry {
  version: string;
  integrity?: string;
  resolved?: string;
  dev?: boolean;
  devOptional?: boolean;
  optional?: boolean;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  [key: string]: unknown;
}
interface Manifest {
  name: string;
  version: string;
  scripts?: Record<string, string>;
  dependencies: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  engines: { node: string };
  [key: string]: unknown;
}

let work: string;
let consumer: string;
let files: string[];
let manifestBefore: Buffer;
let packed: Manifest;
let install: SpawnSyncReturns<string>;
let typecheck: SpawnSyncReturns<string>;
/** Each example's run: exit code and output. */
let examples: Array<{ status: number; stdout: string; stderr: string }>;
/** The program that locks a directory (the last example): its module directory and filesystem mirror. */
let programDir: string;
let programMirror: string;
const PROGRAM = 8;

function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): SpawnSyncReturns<string> {
  return spawnSync(cmd, args, { cwd, env, encoding: 'utf8', timeout: 120_000 });
}
const said = (r: SpawnSyncReturns<string>): string => `exit ${r.status}\n${r.stdout}\n${r.stderr}`;

/**
 * The lock-file entries of `names` and everything they depend on, as this
 * checkout's package-lock.json resolved them (npm's nesting: a dependency is
 * looked up in the dependent's own node_modules, then in each parent's).
 */
function closure(names: string[], dev: boolean): Record<string, LockEntry> {
  const all = (
    JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, LockEntry>;
    }
  ).packages;
  const out: Record<string, LockEntry> = {};
  const visit = (from: string, name: string): void => {
    let base = from;
    for (;;) {
      const at = `${base === '' ? '' : `${base}/`}node_modules/${name}`;
      if (all[at]) {
        if (out[at]) return;
        const { dev: _d, devOptional: _o, ...entry } = all[at];
        out[at] = dev ? { ...entry, dev: true } : entry;
        for (const d of Object.keys({ ...entry.dependencies, ...entry.optionalDependencies })) visit(at, d);
        return;
      }
      if (base === '') throw new Error(`package-lock.json has no ${name} for ${from || 'the root'}`);
      const i = base.lastIndexOf('/node_modules/');
      base = i < 0 ? '' : base.slice(0, i);
    }
  };
  for (const n of names) visit('', n);
  return out;
}

/** Every relative Markdown link target of `text` (no scheme, no pure anchors), resolved against `file`'s directory. */
function markdownLinks(file: string, text: string): string[] {
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1]!.split('#')[0]!)
    .filter((t) => t !== '' && !/^[a-z][a-z0-9+.-]*:/i.test(t))
    .map((t) => posix.normalize(posix.join(posix.dirname(file), t)));
}

beforeAll(async () => {
  const fresh = run(process.execPath, [join(ROOT, 'scripts/build.mjs'), '--check'], ROOT);
  if (fresh.status !== 0) throw new Error(`dist/ is not the build of this checkout: ${fresh.stderr.trim()}`);
  work = mkdtempSync(join(tmpdir(), 'provkit-consumer-'));
  manifestBefore = readFileSync(join(ROOT, 'package.json'));

  const pack = run('npm', ['pack', '--json', '--pack-destination', work], ROOT);
  if (pack.status !== 0) throw new Error(`npm pack failed: ${said(pack)}`);
  const info = (JSON.parse(pack.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>)[0]!;
  files = info.files.map((f) => f.path).sort();

  // The new project: provkit from the tarball, @types/node for its typings.
  consumer = join(work, 'consumer');
  mkdirSync(join(consumer, 'src'), { recursive: true });
  const self = JSON.parse(manifestBefore.toString('utf8')) as Manifest;
  const typesNode = closure(['@types/node'], true);
  const deps = {
    dependencies: { provkit: `file:../${info.filename}` },
    devDependencies: { '@types/node': typesNode['node_modules/@types/node']!.version },
  };
  writeFileSync(
    join(consumer, 'package.json'),
    JSON.stringify({ name: 'consumer', private: true, type: 'module', ...deps }, null, 2),
  );
  const { scripts: _s, devDependencies: _d, ...shipped } = self;
  writeFileSync(
    join(consumer, 'package-lock.json'),
    JSON.stringify(
      {
        name: 'consumer',
        lockfileVersion: 3,
        requires: true,
        packages: {
          '': { name: 'consumer', ...deps },
          'node_modules/provkit': {
            version: self.version,
            resolved: `file:../${info.filename}`,
            license: shipped['license'],
            dependencies: shipped.dependencies,
            peerDependencies: shipped.peerDependencies,
            peerDependenciesMeta: shipped.peerDependenciesMeta,
            bin: shipped['bin'],
            engines: shipped.engines,
          },
          ...closure(Object.keys(self.dependencies), false),
          ...typesNode,
        },
      },
      null,
      2,
    ),
  );
  install = run('npm', ['ci', '--offline', '--no-audit', '--no-fund'], consumer);
  if (install.status !== 0) {
    throw new Error(
      `npm ci --offline failed in the new project (npm's cache must hold this checkout's dependencies: run npm ci): ${said(install)}`,
    );
  }
  packed = JSON.parse(readFileSync(join(consumer, 'node_modules/provkit/package.json'), 'utf8')) as Manifest;

  // The examples, and one file per subpath export for node10.
  EXAMPLES.forEach((code, i) => writeFileSync(join(consumer, 'src', `example-${i}.ts`), code));
  const subpaths = Object.keys(packed['exports'] as Record<string, unknown>)
    .filter((k) => k !== '.' && k !== './package.json')
    .map((k) => `provkit${k.slice(1)}`);
  writeFileSync(
    join(consumer, 'subpaths.ts'),
    [
      "import { parseHash } from 'provkit';",
      ...subpaths.map((p, i) => `import * as m${i} from '${p}';`),
      `export const names: number[] = [${subpaths.map((_, i) => `Object.keys(m${i}).length`).join(', ')}];`,
      "export const zh: string = String(parseHash('zh:' + '0'.repeat(64)));",
      '',
    ].join('\n'),
  );
  // The HTTP client over the fetch a user already has: Node's global one, under Node's types and under the DOM's.
  writeFileSync(
    join(consumer, 'clients.ts'),
    [
      "import { createRegistrySource, HttpClient } from 'provkit';",
      'export const web = new HttpClient({ fetch: globalThis.fetch });',
      'export const byDefault = new HttpClient({});',
      "export const registry = createRegistrySource({ flavor: 'terraform', http: web });",
      '',
    ].join('\n'),
  );
  const common = { strict: true, target: 'es2022', lib: ['es2023'], types: ['node'], skipLibCheck: true };
  const configs: Record<string, unknown> = {
    'tsconfig.nodenext.json': {
      compilerOptions: { ...common, module: 'nodenext', moduleResolution: 'nodenext', rootDir: 'src', outDir: 'out' },
      include: ['src'],
    },
    'tsconfig.node16.json': {
      compilerOptions: { ...common, module: 'node16', moduleResolution: 'node16', noEmit: true },
      include: ['src'],
    },
    'tsconfig.bundler.json': {
      compilerOptions: { ...common, module: 'esnext', moduleResolution: 'bundler', noEmit: true },
      include: ['src'],
    },
    'tsconfig.clients.json': {
      compilerOptions: { ...common, module: 'nodenext', moduleResolution: 'nodenext', noEmit: true },
      files: ['clients.ts'],
    },
    'tsconfig.clients-dom.json': {
      compilerOptions: {
        ...common,
        lib: ['es2023', 'dom', 'dom.iterable'],
        module: 'esnext',
        moduleResolution: 'bundler',
        noEmit: true,
      },
      files: ['clients.ts'],
    },
    'tsconfig.node10.json': {
      compilerOptions: { ...common, module: 'commonjs', moduleResolution: 'node10', noEmit: true },
      files: ['subpaths.ts'],
    },
  };
  for (const [name, config] of Object.entries(configs)) writeFileSync(join(consumer, name), JSON.stringify(config));
  // One build process for them all: declaration files parsed once (tsc -b shares them between projects).
  typecheck = run(process.execPath, [TSC, '-b', ...Object.keys(configs)], consumer);
  // The program's directory: a configuration and a policy (provkit.hcl); its mirror: the zip as acme/demo 1.0.0 for linux_amd64.
  programDir = join(work, 'module');
  mkdirSync(programDir);
  writeFileSync(
    join(programDir, 'main.tf'),
    'terraform {\n  required_providers {\n    demo = { source = "acme/demo", version = "~> 1.0" }\n  }\n}\n',
  );
  writeFileSync(join(programDir, 'provkit.hcl'), 'platforms = ["linux_amd64"]\n');
  programMirror = join(work, 'fs-mirror');
  mkdirSync(join(programMirror, 'registry.opentofu.org/acme/demo'), { recursive: true });
  copyFileSync(
    ZIP,
    join(programMirror, 'registry.opentofu.org/acme/demo/terraform-provider-demo_1.0.0_linux_amd64.zip'),
  );
  // The compiled examples, all at once (each with the zip; the program with its directory and mirror).
  examples = await Promise.all(
    EXAMPLES.map(
      (_, i) =>
        new Promise<{ status: number; stdout: string; stderr: string }>((resolve) => {
          execFile(
            process.execPath,
            [join(consumer, 'out', `example-${i}.js`), ...(i === PROGRAM ? [programDir, programMirror] : [ZIP])],
            { cwd: consumer, encoding: 'utf8' },
            (err, stdout, stderr) =>
              resolve({ status: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, stdout, stderr }),
          );
        }),
    ),
  );
});

afterAll(() => {
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

function runExample(i: number): { status: number; stdout: string; stderr: string } {
  const r = examples[i];
  if (r === undefined) throw new Error(`docs/api.md has no example ${i}`);
  return r;
}

describe('npm pack', () => {
  it('ships a package.json without scripts (no prepare for consumers), and puts the checkout’s back byte for byte', () => {
    expect(packed.scripts).toBeUndefined();
    expect(packed.name).toBe('provkit');
    expect(readFileSync(join(ROOT, 'package.json'))).toEqual(manifestBefore);
    expect(existsSync(join(ROOT, '.package.json.orig'))).toBe(false);
    // The checkout keeps the build that `npm ci` runs in a clone (README "Quick start").
    expect((JSON.parse(manifestBefore.toString('utf8')) as Manifest).scripts?.['prepare']).toBe('npm run build');
  });

  it('ships every document its files link to or name, and no source maps of sources it does not ship', () => {
    const shipped = new Set(files);
    const dangling: string[] = [];
    for (const f of files.filter((p) => p.endsWith('.md'))) {
      const text = readFileSync(join(consumer, 'node_modules/provkit', f), 'utf8');
      for (const target of markdownLinks(f, text)) if (!shipped.has(target)) dangling.push(`${f} → ${target}`);
    }
    // Documents named in the typings, the code and the docs (README's "see docs/NAME.md", a TSDoc "etc/provkit.api.md").
    const named = /\b(docs\/[a-z0-9-]+\.md|etc\/provkit\.api\.md|ARCHITECTURE\.md|CONTRIBUTING\.md|README\.md)\b/g;
    for (const f of files.filter((p) => /\.(md|d\.ts|js|cjs)$/.test(p))) {
      const text = readFileSync(join(consumer, 'node_modules/provkit', f), 'utf8');
      for (const m of text.matchAll(named)) if (!shipped.has(m[1]!)) dangling.push(`${f} names ${m[1]!}`);
      if (/\/\/# sourceMappingURL=/.test(text)) dangling.push(`${f} has a sourceMappingURL`);
    }
    expect(dangling).toEqual([]);
    expect(files.filter((p) => p.endsWith('.map'))).toEqual([]);
    for (const f of ['README.md', 'LICENSE', 'ARCHITECTURE.md', 'CONTRIBUTING.md', 'etc/provkit.api.md', 'docs/api.md'])
      expect(files, f).toContain(f);
    // Nothing of the build's bookkeeping or the checkout's sources and tests.
    expect(files.filter((p) => /^(src|test|scripts|bench)\/|build-inputs\.json$|\.orig$/.test(p))).toEqual([]);
  });

  it('ships what bin/provkit.js loads, and the docs -help names', () => {
    const help = run(process.execPath, [join(consumer, 'node_modules/provkit/bin/provkit.js'), '-help'], consumer);
    for (const v of [
      'SSL_CERT_FILE',
      'HTTPS_PROXY',
      'NO_PROXY',
      'TF_CLI_CONFIG_FILE',
      'PROVKIT_HASH_STORE',
      'NO_COLOR',
    ])
      expect(help.stdout).toContain(v);
    const cited = new Set<string>();
    for (const f of files.filter((p) => p.startsWith('dist/cli/') && p.endsWith('.js'))) {
      for (const d of readFileSync(join(consumer, 'node_modules/provkit', f), 'utf8').matchAll(/docs\/[a-z-]+\.md/g))
        cited.add(d[0]);
    }
    expect(cited.size).toBeGreaterThan(0);
    for (const d of cited) expect(files, d).toContain(d);
    // bin/ is CommonJS by its package.json; the bundle comes with its code cache (scripts/bundle.mjs).
    for (const f of [
      'bin/provkit.js',
      'bin/load-cli.js',
      'bin/package.json',
      'dist/bundle/main.cjs',
      'dist/bundle/main.cjs.cache',
      'dist/bundle/worker.js',
      'dist/bundle/vendor-openpgp.cjs',
      'dist/bundle/vendor-node-fetch.cjs',
      'dist/bundle/vendor-https-proxy-agent.cjs',
    ])
      expect(files, f).toContain(f);
  });
});

describe('installed into a new project (npm ci --offline)', () => {
  it('installs without running anything of provkit’s, and links the provkit command', () => {
    // npm 11 lists the install scripts it met (`npm warn install-scripts   esbuild@0.28.2 (postinstall: …)`).
    expect(install.stdout + install.stderr).not.toMatch(/provkit@\S+ \((pre|post)?(install|prepare)\b/);
    const version = run(join(consumer, 'node_modules/.bin/provkit'), ['version'], consumer);
    expect(version.stderr).toBe('');
    expect(version.stdout).toMatch(new RegExp(`^provkit v${packed.version.replaceAll('.', '\\.')}\\b`, 'm'));
  });

  it('declares what its typings need: Node’s types (an optional peer), nothing else', () => {
    expect(packed.peerDependencies).toEqual({ '@types/node': expect.any(String) as string });
    expect(packed.peerDependenciesMeta).toEqual({ '@types/node': { optional: true } });
    const outside = new Set<string>();
    for (const f of files.filter((p) => p.endsWith('.d.ts'))) {
      const text = readFileSync(join(consumer, 'node_modules/provkit', f), 'utf8');
      for (const m of text.matchAll(/(?:from|import\()\s*'([^'.][^']*)'/g))
        if (!m[1]!.startsWith('node:') && m[1] !== 'provkit') outside.add(`${f}: ${m[1]!}`);
      for (const m of text.matchAll(/\/\/\/ <reference types="([^"]+)"/g))
        if (m[1] !== 'node') outside.add(`${f}: ${m[1]!}`);
    }
    expect([...outside]).toEqual([]);
  });

  it('type-checks docs/api.md’s examples under strict nodenext, node16 and bundler, the subpaths under node10 (typesVersions), and an HttpClient over globalThis.fetch with Node’s and the DOM’s types', () => {
    expect(EXAMPLES).toHaveLength(9);
    expect(typecheck.stdout + typecheck.stderr).toBe('');
    expect(typecheck.status).toBe(0);
  });

  it('require("provkit") and its subpaths load from CommonJS on this Node, which engines allows', () => {
    writeFileSync(
      join(consumer, 'require.cjs'),
      "const p = require('provkit'); const c = require('provkit/config');\n" +
        "console.log(String(p.parseHash('zh:' + '0'.repeat(64))), typeof c.loadModuleRequirements);\n",
    );
    const r = run(process.execPath, [join(consumer, 'require.cjs')], consumer);
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(`zh:${'0'.repeat(64)} function\n`);
    // require(esm) without a flag: Node 20.19 and 22.12 (nodejs.org/api/modules.html, "Loading ECMAScript modules using require()").
    expect(packed.engines.node).toBe('^20.19.0 || >=22.12.0');
  });
});

describe('docs/api.md examples, compiled in the new project and run', () => {
  it('hashes a zip; hash values print as their text', () => {
    const r = runExample(0);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const [zh, h1, json] = r.stdout.trimEnd().split('\n');
    expect(zh).toMatch(/^zh:[0-9a-f]{64}$/);
    expect(h1).toMatch(/^h1:[A-Za-z0-9+/]{43}=$/);
    expect(JSON.parse(json!)).toEqual({ zh });
  });

  it('parses and writes a lock file; parseLockFile(text) gives diagnostics, not a TypeError', () => {
    const r = runExample(1);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(
      'registry.terraform.io/hashicorp/aws 5.0.0 h1:abc=\n' +
        '# This file is maintained automatically by "terraform init".\n# Manual edits may be lost in future updates.\n\n' +
        'provider "registry.terraform.io/hashicorp/aws" {\n  version = "5.0.0"\n  hashes = [\n    "h1:abc=",\n  ]\n}\n' +
        'error INVALID_LOCK_FILE .terraform.lock.hcl:1:14\n',
    );
  });

  it('turns an error into the one Diagnostic', () => {
    const r = runExample(2);
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('INVALID_HASH Invalid hash\n');
  });

  it('locks a configuration through a custom source: the questions it was asked, the lock file written', () => {
    const r = runExample(3);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    // The h1: is the conformance package's recorded hash (test/fixtures/conformance: comment.zip).
    expect(r.stdout).toBe(
      'versions of registry.opentofu.org/acme/demo\n' +
        'package registry.opentofu.org/acme/demo 1.0.0 linux_amd64, to check: nothing\n' +
        '# This file is maintained automatically by "tofu init".\n# Manual edits may be lost in future updates.\n\n' +
        'provider "registry.opentofu.org/acme/demo" {\n  version     = "1.0.0"\n  constraints = "~> 1.0"\n  hashes = [\n' +
        '    "h1:0A1EWNUOQmgFrARBK8Wf4JyLw7PYSRWz3I+x+MEybHo=",\n  ]\n}\n',
    );
  });

  it('verifies a mirror: no problem against its own hashes, the package named when the lock does not vouch for it', () => {
    const r = runExample(4);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(
      '1 package(s), 0 problem(s)\n1 package(s), 1 problem(s)\nLOCK_MISSING_H1 registry.opentofu.org/acme/demo 1.0.0 linux_amd64\n',
    );
  });

  it('locks a directory with progress: the platforms, the selection, each platform’s hashes, the lock file', () => {
    const r = runExample(5);
    // stderr: the progress, if any (a small local archive is hashed at once).
    expect(r.stderr).toMatch(/^([a-z0-9]+_[a-z0-9]+: \d+ of (\d+|\?) bytes\n)*$/);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(
      'platforms (flags): linux_amd64, darwin_arm64\n' +
        'registry.opentofu.org/acme/demo 1.0.0 (constraints)\n' +
        'darwin_arm64: new-provider\ndarwin_arm64: unauthenticated\n' +
        'linux_amd64: new-provider\nlinux_amd64: unauthenticated\n' +
        'created no .terraform.lock.hcl yet: a new one with 1 provider\n' +
        '# This file is maintained automatically by "tofu init".\n# Manual edits may be lost in future updates.\n\n' +
        'provider "registry.opentofu.org/acme/demo" {\n  version     = "1.0.0"\n  constraints = "~> 1.0"\n  hashes = [\n' +
        '    "h1:0A1EWNUOQmgFrARBK8Wf4JyLw7PYSRWz3I+x+MEybHo=",\n  ]\n}\n',
    );
  });

  it('mirrors a provider: the package and the network mirror protocol’s index files', () => {
    const r = runExample(6);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(
      'written registry.opentofu.org/acme/demo/terraform-provider-demo_1.0.0_linux_amd64.zip\n' +
        '1 written, 0 reused, 0 failed\n' +
        'registry.opentofu.org/acme/demo/1.0.0.json\n' +
        'registry.opentofu.org/acme/demo/index.json\n' +
        'registry.opentofu.org/acme/demo/terraform-provider-demo_1.0.0_linux_amd64.zip\n',
    );
  });

  it('cancels a run: ABORTED with the signal’s reason as cause, no lock file written', () => {
    const r = runExample(7);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('ABORTED stopped by the caller\nlock file written: false\n');
  });

  it('a program of at most 30 lines locks a directory through the root export, for its policy’s platforms', () => {
    expect(EXAMPLES[PROGRAM]!.trimEnd().split('\n').length).toBeLessThanOrEqual(30);
    expect(EXAMPLES[PROGRAM]).not.toMatch(/from 'provkit\//);
    const r = runExample(PROGRAM);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(
      'platforms (policy): linux_amd64\n' +
        '- registry.opentofu.org/acme/demo 1.0.0 linux_amd64: unauthenticated\n' +
        'created \n  no .terraform.lock.hcl yet: a new one with 1 provider\n',
    );
    expect(readFileSync(join(programDir, '.terraform.lock.hcl'), 'utf8')).toContain(
      '"h1:0A1EWNUOQmgFrARBK8Wf4JyLw7PYSRWz3I+x+MEybHo=",',
    );
  });
});
