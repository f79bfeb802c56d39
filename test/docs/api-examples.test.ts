// Issue 14 (library): every ```js example of docs/api.md runs as a child
// process importing 'provkit' (the package's own name, resolved through its
// "exports"), and prints what the document says it prints.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ZIP = join(ROOT, 'test/fixtures/conformance/packages/comment.zip');
const blocks = [...readFileSync(join(ROOT, 'docs/api.md'), 'utf8').matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]!);
// Inside the package (not the system TMPDIR), so that `import 'provkit'` resolves to this package.
const dir = mkdtempSync(join(ROOT, '.api-examples-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function runExample(i: number): { status: number | null; stdout: string; stderr: string } {
  const file = join(dir, `example-${i}.mjs`);
  writeFileSync(file, blocks[i]!);
  const r = spawnSync(process.execPath, [file, ZIP], { encoding: 'utf8', cwd: dir });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('the docs/api.md examples run as written', () => {
  it('has the five examples', () => {
    expect(blocks).toHaveLength(5);
  });

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
        'error .terraform.lock.hcl\n',
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
        'package registry.opentofu.org/acme/demo 1.0.0 linux_amd64\n' +
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
});

describe('what -help points to ships in the package, and -help names the air-gap variables', () => {
  it('-help lists the environment variables of an air gap; the docs it names are in the package', () => {
    const help = spawnSync(process.execPath, [join(ROOT, 'bin/provkit.js'), '-help'], { encoding: 'utf8' }).stdout;
    for (const v of [
      'SSL_CERT_FILE',
      'HTTPS_PROXY',
      'NO_PROXY',
      'TF_CLI_CONFIG_FILE',
      'PROVKIT_CACHE_DIR',
      'PROVKIT_HASH_STORE',
      'TF_PROVIDER_DOWNLOAD_RETRY',
      'NO_COLOR',
    ]) {
      expect(help).toContain(v);
    }
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    expect(readme).toContain('## Environment variables');
    expect(readme).toContain('docs/api.md');
    const files = (
      JSON.parse(
        spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8' }).stdout,
      ) as Array<{ files: Array<{ path: string }> }>
    )[0]!.files.map((f) => f.path);
    const cited = new Set<string>();
    for (const m of [
      'src/cli/main.ts',
      ...['lock', 'mirror', 'install', 'verify', 'bundle', 'serve', 'hash'].map((c) => `src/cli/commands/${c}.ts`),
    ]) {
      for (const d of readFileSync(join(ROOT, m), 'utf8').matchAll(/docs\/[a-z-]+\.md/g)) cited.add(d[0]);
    }
    expect(cited.size).toBeGreaterThan(0);
    for (const d of [...cited, 'docs/api.md']) expect(files, d).toContain(d);
    // What bin/provkit.js loads (bin/load-cli.js; scripts/bundle.mjs): bin/ is
    // CommonJS by its package.json, the bundle comes with its code cache.
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
