// docs/ci.md's recipes, run as written, and the pre-commit hook of
// .pre-commit-hooks.yaml run by the real pre-commit (Debian's package). Every
// run is bin/provkit.js (on PATH as `provkit`) in a child process, against a
// fake registry in another process (test/support/remote), in git checkouts of
// a small monorepo: two root modules, a module, a platform policy. How the
// recipes are read and played is the rule of docs/ci.md, "How these recipes
// are tested" (test/support/yaml-subset.ts reads the YAML).
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { BIN, e2eWorkspace, requiresTf, type E2eWorkspace } from '../support/e2e.js';
import { startHost, type RemoteServer, type ServerHost } from '../support/remote/index.js';
import { makeProvider } from '../support/servers/packages.js';
import { asList, asMap, asString, parseYamlSubset, type YamlValue } from '../support/yaml-subset.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const HAS_PRE_COMMIT = spawnSync('pre-commit', ['--version'], { encoding: 'utf8' }).status === 0;

/** docs/ci.md's fenced blocks whose info string names a file (```yaml .gitlab-ci.yml), in order. */
const RECIPES = [
  ...readFileSync(join(ROOT, 'docs/ci.md'), 'utf8').matchAll(/^```(yaml|json) ([^\n]+)\n([\s\S]*?)^```$/gm),
].map((m) => ({ lang: m[1]!, file: m[2]!.trim(), text: m[3]! }));
function recipes(file: string): YamlValue[] {
  const found = RECIPES.filter((r) => r.file === file).map((r) =>
    r.lang === 'json' ? (JSON.parse(r.text) as YamlValue) : parseYamlSubset(r.text),
  );
  if (found.length === 0) throw new Error(`docs/ci.md has no \`${file}\` block`);
  return found;
}

let host: ServerHost;
let reg: RemoteServer;
let w: E2eWorkspace;
/** A directory holding `provkit` (this checkout's bin/provkit.js), first on PATH. */
let shim: string;
/** The environment of every command: the workspace's, without a hash store setting (the recipes set it). */
let baseEnv: Record<string, string>;

/** A fake registry serving what the monorepo below requires. */
async function monorepoRegistry(): Promise<RemoteServer> {
  return host.registry({
    providers: [await makeProvider('acme', 'demo', ['1.0.0', '1.1.0']), await makeProvider('acme', 'tools', ['0.3.0'])],
  });
}

beforeAll(async () => {
  host = await startHost();
  reg = await monorepoRegistry();
  w = e2eWorkspace(reg.caPath);
  shim = join(w.base, 'bin');
  mkdirSync(shim);
  symlinkSync(BIN, join(shim, 'provkit'));
  const { PROVKIT_HASH_STORE: _store, ...env } = w.env;
  baseEnv = {
    ...env,
    PATH: `${shim}:${process.env['PATH'] ?? ''}`,
    GIT_AUTHOR_NAME: 'ci',
    GIT_AUTHOR_EMAIL: 'ci@example.com',
    GIT_COMMITTER_NAME: 'ci',
    GIT_COMMITTER_EMAIL: 'ci@example.com',
    GIT_CONFIG_NOSYSTEM: '1',
  };
});
afterAll(async () => {
  await host.close();
  w.remove();
});

interface Run {
  code: number;
  out: string;
}
/** Runs `script` with bash as a CI runner does (`-eo pipefail`), stdout and stderr interleaved. */
function sh(script: string, cwd: string, env: Record<string, string>): Promise<Run> {
  return new Promise((done, fail) => {
    const child = spawn('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', script], { cwd, env });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', fail);
    child.on('close', (code) => done({ code: code ?? 1, out }));
  });
}
/** Runs a command line (not through a shell) and returns its outcome. */
function cmd(argv: string[], cwd: string, env: Record<string, string> = baseEnv): Promise<Run> {
  return sh(argv.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' '), cwd, env);
}
async function git(cwd: string, ...args: string[]): Promise<string> {
  const r = await cmd(['git', ...args], cwd);
  if (r.code !== 0) throw new Error(`git ${args.join(' ')}: ${r.out}`);
  return r.out;
}

/** The install command every recipe starts with: checked, not run (it needs the npm registry). */
const INSTALL = /^npm install --global provkit@(\S+)$/;
function isInstall(command: string): boolean {
  const m = INSTALL.exec(command.trim());
  if (m) expect(m[1], `${command}: provkit's version`).toBe(VERSION);
  return m !== null;
}

/**
 * The monorepo: a policy for two platforms; envs/dev requires acme/demo
 * `~> 1.0`; envs/prod pins acme/demo 1.0.0 and calls modules/net, which
 * requires acme/tools.
 */
function monorepo(dir: string, registryHost: string): void {
  const files: Record<string, string> = {
    'provkit.hcl': 'platforms = ["linux_amd64", "darwin_arm64"]\n',
    'envs/dev/main.tf': requiresTf({ demo: `${registryHost}/acme/demo@~> 1.0` }),
    'envs/prod/main.tf': `${requiresTf({ demo: `${registryHost}/acme/demo@1.0.0` })}\nmodule "net" {\n  source = "../../modules/net"\n}\n`,
    'modules/net/main.tf': requiresTf({ tools: `${registryHost}/acme/tools@>= 0.3` }),
  };
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(join(dir, rel, '..'), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
}
/** A pull request's change that makes envs/dev's lock file stale: it starts calling modules/net (acme/tools). */
function staleChange(dir: string): void {
  writeFileSync(join(dir, 'envs/dev/net.tf'), 'module "net" {\n  source = "../../modules/net"\n}\n');
}

/** The monorepo with lock files `provkit lock -recursive` wrote (no hash store): the main branch, once per registry. */
const templates = new Map<string, string>();
async function template(registry: RemoteServer): Promise<string> {
  let dir = templates.get(registry.host);
  if (dir === undefined) {
    dir = join(w.base, `template-${templates.size}`);
    monorepo(dir, registry.host);
    const r = await cmd(['provkit', 'lock', '-recursive'], dir, { ...baseEnv, PROVKIT_HASH_STORE: 'off' });
    expect(r.out).toContain('Locked 2 root modules (2 created)');
    expect(r.code).toBe(0);
    templates.set(registry.host, dir);
  }
  return dir;
}
/** A git checkout of the main branch. */
async function checkout(name: string, registry: RemoteServer = reg): Promise<string> {
  const dir = join(w.base, name);
  cpSync(await template(registry), dir, { recursive: true });
  await git(dir, 'init', '-q', '-b', 'main');
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-q', '-m', 'main');
  return dir;
}
/** Files of `dir` (relative), recursively. */
function filesIn(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}
async function archivesFetched(registry: RemoteServer): Promise<string[]> {
  return (await registry.log()).filter((q) => q.pathname.endsWith('.zip')).map((q) => q.pathname);
}

describe('docs/ci.md: GitHub Actions', () => {
  interface Step {
    name: string;
    run: string | undefined;
    if: string | undefined;
    uses: string | undefined;
    with: Record<string, YamlValue> | undefined;
  }
  const workflow = asMap(recipes('.github/workflows/provider-locks.yml')[0], 'the workflow');
  const job = asMap(asMap(workflow['jobs'], 'jobs')['lock-check'], 'jobs.lock-check');
  const steps: Step[] = asList(job['steps'], 'steps').map((s, i) => {
    const m = asMap(s, `step ${i}`);
    const text = (k: string): string | undefined =>
      m[k] === undefined ? undefined : asString(m[k], `step ${i}: ${k}`);
    return {
      name: text('name') ?? `step ${i}`,
      run: text('run'),
      if: text('if'),
      uses: text('uses'),
      with: m['with'] === undefined ? undefined : asMap(m['with'], `step ${i}: with`),
    };
  });
  /** `${{ github.workspace }}` is the only expression the recipe may use outside `uses:` steps. */
  const expand = (text: string, workspace: string): string => {
    const out = text.replaceAll('${{ github.workspace }}', workspace);
    if (out.includes('${{')) throw new Error(`an expression the test does not play: ${text}`);
    return out;
  };
  const jobEnv = (workspace: string): Record<string, string> =>
    Object.fromEntries(
      Object.entries(asMap(job['env'], 'env')).map(([k, v]) => [k, expand(asString(v, k), workspace)]),
    );

  /** Plays the job's steps in `workspace`: each run step in order, `if: failure()` ones after a failure. */
  async function playJob(workspace: string): Promise<{ failed: boolean; log: Array<{ step: string } & Run> }> {
    let failed = false;
    const log: Array<{ step: string } & Run> = [];
    for (const step of steps) {
      if (step.run === undefined) continue;
      if (step.if !== undefined && step.if !== 'failure()')
        throw new Error(`${step.name}: if: ${step.if} is not played`);
      if ((step.if === 'failure()') !== failed) continue;
      if (isInstall(step.run)) continue;
      const r = await sh(expand(step.run, workspace), workspace, { ...baseEnv, ...jobEnv(workspace) });
      log.push({ step: step.name, ...r });
      if (r.code !== 0) failed = true;
    }
    return { failed, log };
  }

  it('caches the hash store: the cache step saves the store directory; a run with it restored downloads no package', async () => {
    const cache = steps.find((s) => s.uses?.startsWith('actions/cache@'));
    const cached = asString(cache?.with?.['path'], 'the cache path');
    const a = await checkout('gh-a');
    expect(resolve(a, cached)).toBe(jobEnv(a)['PROVKIT_HASH_STORE']);

    await reg.mark();
    const cold = await playJob(a);
    expect(cold.log.map((s) => [s.step, s.code])).toEqual([["Every root module's lock file is up to date", 0]]);
    expect(cold.log[0]!.out).toContain('Checked 2 root modules (2 unchanged)');
    expect(await archivesFetched(reg)).toHaveLength(6);
    expect(filesIn(resolve(a, cached)).length).toBeGreaterThan(0);

    // The next run: another checkout, the cache restored into it.
    const b = await checkout('gh-b');
    cpSync(resolve(a, cached), resolve(b, cached), { recursive: true });
    await reg.mark();
    const warm = await playJob(b);
    expect(warm.failed).toBe(false);
    expect(await archivesFetched(reg)).toEqual([]);
  });

  it('fails a pull request whose lock file is stale, naming the root, and shows the diff lock would make', async () => {
    const pr = await checkout('gh-stale');
    staleChange(pr);
    await git(pr, 'add', '-A');
    await git(pr, 'commit', '-q', '-m', 'dev calls modules/net');
    const run = await playJob(pr);
    expect(run.failed).toBe(true);
    const [check, diff] = run.log;
    expect(check?.code).toBe(2);
    expect(check?.out).toContain('- envs/dev: lock file would change');
    expect(check?.out).toMatch(/^Checked 2 root modules \(.*1 would change/m);
    expect(diff?.step).toBe('What provkit lock -recursive would change');
    expect(diff?.code).toBe(0);
    expect(diff?.out).toContain(`+provider "${reg.host}/acme/tools" {`);
    expect(run.log).toHaveLength(2);
  });
});

describe('docs/ci.md: GitLab CI', () => {
  const job = asMap(asMap(recipes('.gitlab-ci.yml')[0], 'the pipeline')['provider-locks'], 'provider-locks');
  const commands = [...asList(job['before_script'], 'before_script'), ...asList(job['script'], 'script')].map((c, i) =>
    asString(c, `command ${i}`),
  );
  /** The job's variables, `$VAR` and `${VAR}` expanded as GitLab does, from CI_PROJECT_DIR and each other. */
  const variables = (projectDir: string): Record<string, string> => {
    const vars: Record<string, string> = { CI_PROJECT_DIR: projectDir };
    for (const [k, v] of Object.entries(asMap(job['variables'], 'variables'))) {
      vars[k] = asString(v, k).replace(/\$\{?([A-Z_][A-Z0-9_]*)\}?/g, (all, name: string) => {
        const value = vars[name];
        if (value === undefined) throw new Error(`variable ${name} is not played`);
        return value;
      });
    }
    return vars;
  };
  const play = (dir: string): Promise<Run> =>
    sh(commands.filter((c) => !isInstall(c)).join('\n'), dir, { ...baseEnv, ...variables(dir) });

  it('checks every root; the cache path is the store; with it restored nothing is downloaded; a stale lock fails the job', async () => {
    const paths = asList(asMap(job['cache'], 'cache')['paths'], 'cache.paths').map((p) => asString(p, 'path'));
    const a = await checkout('gl-a');
    expect(paths.map((p) => resolve(a, p))).toEqual([variables(a)['PROVKIT_HASH_STORE']]);
    const cold = await play(a);
    expect(cold.out).toContain('Checked 2 root modules (2 unchanged)');
    expect(cold.code).toBe(0);

    const b = await checkout('gl-b');
    cpSync(resolve(a, paths[0]!), resolve(b, paths[0]!), { recursive: true });
    await reg.mark();
    expect((await play(b)).code).toBe(0);
    expect(await archivesFetched(reg)).toEqual([]);

    staleChange(b);
    const stale = await play(b);
    expect(stale.code).toBe(2);
    expect(stale.out).toContain('- envs/dev: lock file would change');
  });
});

describe('docs/ci.md: Renovate postUpgradeTasks', () => {
  const config = asMap(recipes('renovate.json')[0], 'renovate.json');
  const rule = asList(config['packageRules'], 'packageRules')
    .map((r) => asMap(r, 'packageRule'))
    .find((r) => r['postUpgradeTasks'] !== undefined);
  const tasks = asMap(rule?.['postUpgradeTasks'], 'postUpgradeTasks');
  const commands = asList(tasks['commands'], 'commands').map((c) => asString(c, 'command'));
  /** `**\/NAME` patterns only (the recipe's). */
  const filters = asList(tasks['fileFilters'], 'fileFilters').map((f) => {
    const filter = asString(f, 'fileFilter');
    const m = /^\*\*\/([^*?[\]{}/]+)$/.exec(filter);
    if (!m) throw new Error(`fileFilter ${filter} is not played`);
    return (path: string): boolean => path === m[1] || path.endsWith(`/${m[1]}`);
  });

  it('after a provider bump, the commands bring every root to the policy, and change only files the filters take', async () => {
    const dir = await checkout('renovate');
    // The bump as a bot makes it: envs/prod's pin raised, its lock file rewritten for the bot's own platform only.
    const prodTf = join(dir, 'envs/prod/main.tf');
    writeFileSync(prodTf, readFileSync(prodTf, 'utf8').replace('"1.0.0"', '"1.1.0"'));
    rmSync(join(dir, 'envs/prod/.terraform.lock.hcl'));
    // A Renovate worker's own hash store (none of the other tests').
    const env = { ...baseEnv, PROVKIT_HASH_STORE: join(w.base, 'renovate-store') };
    const bot = await cmd(['provkit', 'lock', '-recursive', '-platform=linux_amd64'], dir, env);
    expect(bot.code).toBe(0);
    const h1s = (): number =>
      (
        /provider "[^"]+\/acme\/demo" \{[\s\S]*?\n\}/.exec(
          readFileSync(join(dir, 'envs/prod/.terraform.lock.hcl'), 'utf8'),
        )?.[0] ?? ''
      )
        .split('\n')
        .filter((l) => l.includes('"h1:')).length;
    expect(h1s()).toBe(1);
    await git(dir, 'commit', '-q', '-am', 'Update provider acme/demo to v1.1.0');

    const r = await sh(commands.filter((c) => !isInstall(c)).join('\n'), dir, env);
    expect(r.code).toBe(0);
    const changed = (await git(dir, 'status', '--porcelain')).trimEnd().split('\n');
    expect(changed).toEqual([' M envs/prod/.terraform.lock.hcl']);
    for (const line of changed) expect(filters.some((take) => take(line.slice(3)))).toBe(true);
    expect(h1s()).toBe(2); // linux_amd64 and darwin_arm64, the policy's
    const check = await cmd(['provkit', 'lock', '-recursive', '-check'], dir, env);
    expect(check.out).toContain('Checked 2 root modules (2 unchanged)');
    expect(check.code).toBe(0);
  });
});

describe.skipIf(!HAS_PRE_COMMIT)(
  `pre-commit: provkit-lock-check with the real pre-commit${HAS_PRE_COMMIT ? '' : ' (skipped: pre-commit is not installed)'}`,
  () => {
    /** A registry of its own: the last test stops it. */
    let hookReg: RemoteServer;
    /** A git repository holding this checkout's .pre-commit-hooks.yaml, as pre-commit fetches hooks. */
    let hooks: string;
    let rev: string;
    let project: string;
    let env: Record<string, string>;

    beforeAll(async () => {
      hookReg = await monorepoRegistry();
      hooks = join(w.base, 'hook-repo');
      mkdirSync(hooks);
      cpSync(join(ROOT, '.pre-commit-hooks.yaml'), join(hooks, '.pre-commit-hooks.yaml'));
      await git(hooks, 'init', '-q', '-b', 'main');
      await git(hooks, 'add', '-A');
      await git(hooks, 'commit', '-q', '-m', 'hooks');
      rev = (await git(hooks, 'rev-parse', 'HEAD')).trim();
      project = await checkout('pre-commit', hookReg);
      // pre-commit's own cache in the workspace; provkit's hash store where a user's is (PROVKIT_CACHE_DIR/hashes).
      env = { ...baseEnv, PRE_COMMIT_HOME: join(w.base, 'pre-commit-home') };
    });

    const tryRepo = (): Promise<Run> =>
      cmd(['pre-commit', 'try-repo', hooks, 'provkit-lock-check', '--all-files'], project, env);
    /** The documented .pre-commit-config.yaml number `i`, pointed at the hook repository (and `mirror`), committed. */
    async function useConfig(i: number, mirror?: string): Promise<void> {
      const doc = asMap(recipes('.pre-commit-config.yaml')[i], '.pre-commit-config.yaml');
      const [repo] = asList(doc['repos'], 'repos').map((r) => asMap(r, 'repo'));
      const hookList = asList(repo?.['hooks'], 'hooks').map((h) => asMap(h, 'hook'));
      expect(hookList.map((h) => h['id'])).toEqual(['provkit-lock-check']);
      const args = hookList[0]?.['args'] === undefined ? [] : asList(hookList[0]['args'], 'args');
      const played = args.map((a) => asString(a, 'arg').replace(/^-fs-mirror=.*$/, `-fs-mirror=${mirror ?? ''}`));
      const lines = [
        'repos:',
        `  - repo: ${hooks}`,
        `    rev: ${rev}`,
        '    hooks:',
        '      - id: provkit-lock-check',
        ...(played.length === 0 ? [] : [`        args: [${played.join(', ')}]`]),
        '',
      ];
      writeFileSync(join(project, '.pre-commit-config.yaml'), lines.join('\n'));
      await git(project, 'add', '.pre-commit-config.yaml');
    }

    it('passes on a clean tree; the run after the first downloads no package (a warm hash store)', async () => {
      await hookReg.mark();
      const first = await tryRepo();
      expect(await archivesFetched(hookReg)).toHaveLength(6);
      expect(first.out).toMatch(/^provkit lock -check\.+Passed$/m);
      expect(first.code).toBe(0);
      expect(filesIn(join(w.base, 'cache/hashes')).length).toBeGreaterThan(0);
      await hookReg.mark();
      const again = await tryRepo();
      expect(again.out).toMatch(/^provkit lock -check\.+Passed$/m);
      expect(again.code).toBe(0);
      expect(await archivesFetched(hookReg)).toEqual([]);
    });

    it('fails on a stale lock file with the summary: the root and what would change, not a line per package', async () => {
      staleChange(project);
      await git(project, 'add', '-A');
      const r = await tryRepo();
      await git(project, 'reset', '-q', '--hard');
      await git(project, 'clean', '-qfd', '--', 'envs');
      expect(r.code).toBe(1);
      expect(r.out).toMatch(/^provkit lock -check\.+Failed$/m);
      expect(r.out).toContain('- exit code: 2');
      expect(r.out).toContain('- envs/dev: lock file would change');
      expect(r.out).toContain(`${hookReg.host}/acme/tools`);
      expect(r.out).toMatch(/^Checked 2 root modules \(.*1 would change/m);
      expect(r.out).not.toMatch(/^- (Fetching|Retrieved|Obtained|Found) /m);
    });

    it('the documented configurations: from the registry, and offline against a mirror (the registry gone)', async () => {
      // A mirror of what the roots lock (`mirror` reads one configuration: envs/dev's, and one for envs/prod's versions).
      const mirror = join(w.base, 'pre-commit-mirror');
      const prodVersions = w.project('pre-commit-mirror-config', {
        'main.tf': requiresTf({ demo: `${hookReg.host}/acme/demo@1.0.0`, tools: `${hookReg.host}/acme/tools` }),
      });
      for (const config of [join(project, 'envs/dev'), prodVersions]) {
        const m = await cmd(['provkit', 'mirror', '-platform=linux_amd64', '-platform=darwin_arm64', mirror], config);
        expect(m.code).toBe(0);
      }
      await useConfig(0);
      const online = await cmd(['pre-commit', 'run', '--all-files'], project, env);
      expect(online.out).toMatch(/^provkit lock -check\.+Passed$/m);
      expect(online.code).toBe(0);

      await hookReg.close();
      // Without a mirror the check asks the registry for versions and signed checksums: it fails, naming it.
      const down = await cmd(['pre-commit', 'run', '--all-files'], project, env);
      expect(down.code).toBe(1);
      expect(down.out).toContain('- exit code: 1');
      expect(down.out).toContain(`could not connect to ${hookReg.host}`);
      // With one, nothing else is read.
      await useConfig(1, mirror);
      const offline = await cmd(['pre-commit', 'run', '--all-files'], project, env);
      expect(offline.out).toMatch(/^provkit lock -check\.+Passed$/m);
      expect(offline.code).toBe(0);
    });
  },
);

describe.skipIf(!HAS_PRE_COMMIT)(
  `pre-commit: provkit-audit with the real pre-commit${HAS_PRE_COMMIT ? '' : ' (skipped: pre-commit is not installed)'}`,
  () => {
    let hooks: string;
    let rev: string;
    let project: string;
    let env: Record<string, string>;

    beforeAll(async () => {
      hooks = join(w.base, 'audit-hook-repo');
      mkdirSync(hooks);
      cpSync(join(ROOT, '.pre-commit-hooks.yaml'), join(hooks, '.pre-commit-hooks.yaml'));
      await git(hooks, 'init', '-q', '-b', 'main');
      await git(hooks, 'add', '-A');
      await git(hooks, 'commit', '-q', '-m', 'hooks');
      rev = (await git(hooks, 'rev-parse', 'HEAD')).trim();
      project = await checkout('pre-commit-audit');
      env = {
        ...baseEnv,
        PRE_COMMIT_HOME: join(w.base, 'pre-commit-home'),
        PROVKIT_HASH_STORE: join(w.base, 'audit-hook-store'),
      };
      // The hash store warmed as a first full audit warms it (every locked package hashed once).
      const warm = await cmd(['provkit', 'audit', '-recursive'], project, env);
      expect(warm.out).toMatch(/^Audit passed: /m);
      expect(warm.code).toBe(0);
    });

    const tryRepo = (...extra: string[]): Promise<Run> =>
      cmd(['pre-commit', 'try-repo', hooks, 'provkit-audit', ...extra], project, env);
    const reset = async (): Promise<void> => {
      await git(project, 'reset', '-q', '--hard');
      await git(project, 'clean', '-qfd', '--', 'envs');
    };

    it('passes on a clean tree without a single request', async () => {
      await reg.mark();
      const r = await tryRepo('--all-files');
      expect(r.out).toMatch(/^provkit audit\.+Passed$/m);
      expect(r.code).toBe(0);
      expect(await reg.log()).toEqual([]);
    });

    it('fails a commit that adds a hash nobody vouches for, with the failing hash and the summary', async () => {
      const lock = join(project, 'envs/dev/.terraform.lock.hcl');
      const stray = `zh:${'0123456789abcdef'.repeat(4)}`;
      const text = readFileSync(lock, 'utf8');
      expect(text).toContain('  hashes = [\n');
      writeFileSync(lock, text.replace('  hashes = [\n', `  hashes = [\n    "${stray}",\n`));
      await git(project, 'add', '-A');
      await reg.mark();
      const r = await tryRepo();
      await reset();
      expect(r.code).toBe(1);
      expect(r.out).toMatch(/^provkit audit\.+Failed$/m);
      expect(r.out).toContain('- exit code: 2');
      expect(r.out).toMatch(new RegExp(`\\? +${stray} +FAIL +nobody`));
      expect(r.out).toContain('HASH_UNVOUCHED: no source vouches for this hash');
      expect(r.out).toMatch(/^Audit failed: 1 hash in 2 lock files audited, 1 not vouched for as the policy asks/m);
      expect(await archivesFetched(reg)).toEqual([]);
    });

    it('passes a commit that locks a new provider, downloading nothing from a warm hash store', async () => {
      staleChange(project);
      const locked = await cmd(['provkit', 'lock', '-recursive'], project, env);
      expect(locked.code).toBe(0);
      await git(project, 'add', '-A');
      await reg.mark();
      const r = await tryRepo();
      await reset();
      expect(r.out).toMatch(/^provkit audit\.+Passed$/m);
      expect(r.code).toBe(0);
      expect(await archivesFetched(reg)).toEqual([]);
    });

    it('the documented configuration with both hooks passes on a clean tree', async () => {
      const doc = asMap(recipes('.pre-commit-config.yaml')[2], '.pre-commit-config.yaml');
      const [repo] = asList(doc['repos'], 'repos').map((r) => asMap(r, 'repo'));
      const ids = asList(repo?.['hooks'], 'hooks').map((h) => asString(asMap(h, 'hook')['id'], 'id'));
      expect(ids).toEqual(['provkit-lock-check', 'provkit-audit']);
      const config = [
        'repos:',
        `  - repo: ${hooks}`,
        `    rev: ${rev}`,
        '    hooks:',
        ...ids.map((id) => `      - id: ${id}`),
      ];
      writeFileSync(join(project, '.pre-commit-config.yaml'), `${config.join('\n')}\n`);
      await git(project, 'add', '.pre-commit-config.yaml');
      const r = await cmd(['pre-commit', 'run', '--all-files'], project, env);
      await git(project, 'rm', '-q', '--cached', '.pre-commit-config.yaml');
      rmSync(join(project, '.pre-commit-config.yaml'));
      expect(r.out).toMatch(/^provkit lock -check\.+Passed$/m);
      expect(r.out).toMatch(/^provkit audit\.+Passed$/m);
      expect(r.code).toBe(0);
    });
  },
);

describe('test/support/yaml-subset.ts: what it does not know is an error, not a guess', () => {
  it('refuses anchors, > blocks, flow mappings, tabs and stray indentation; reads the rest', () => {
    for (const bad of ['a: &x 1', 'a: >\n  b', 'a: {b: 1}', 'a:\n\tb: 1', 'a: 1\n    b: 2']) {
      expect(() => parseYamlSubset(bad), bad).toThrow(/YAML line/);
    }
    expect(parseYamlSubset("a:\n  - b: 'it''s'\n    c: [x, \"y\"]\n  - |\n    one\n    two\nd: e # note\n")).toEqual({
      a: [{ b: "it's", c: ['x', 'y'] }, 'one\ntwo\n'],
      d: 'e',
    });
  });
});
