// A curated public API (ARCHITECTURE.md, docs/api.md): the declarations the build emits for
// `provkit` match the API report etc/provkit.api.md, so that a change to the
// public API is a deliberate change to that file (`npm run api` rewrites it);
// every type a root signature uses is exported from the root, and every
// exported item and member has a doc comment (api-extractor.json makes both
// errors, and this test lists them).
// And the subpath exports resolve, as a user's `import` does.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The messages of one kind api-extractor printed (`ae-forgotten-export`, `ae-undocumented`), as `FILE:LINE:COL text`. */
function extractorMessages(output: string, id: string): string[] {
  return output
    .replace(/\x1b\[[0-9;]*m/g, '')
    .split('\n')
    .flatMap((line) => {
      const m = new RegExp(`^(?:Error|Warning): (\\S+) - \\(${id}\\) (.*)$`).exec(line.trim());
      return m ? [`${m[1]} ${m[2]}`] : [];
    });
}

describe('the public API', () => {
  // One api-extractor run over the build's declarations (api-extractor.json), shared by the tests that read it.
  let run: { output: string; status: number | null } | undefined;
  const extractor = (): { output: string; status: number | null } => {
    if (run) return run;
    expect(existsSync(join(ROOT, 'dist/index.d.ts'))).toBe(true);
    const r = spawnSync(
      process.execPath,
      [join(ROOT, 'node_modules/@microsoft/api-extractor/bin/api-extractor'), 'run'],
      { cwd: ROOT, encoding: 'utf8' },
    );
    return (run = { output: r.stdout + r.stderr, status: r.status });
  };

  it('matches the API report (etc/provkit.api.md)', () => {
    const r = extractor();
    // api-extractor exits non-zero when the report differs, and says so.
    expect(r.output).not.toMatch(/You have changed the API signature|API report (file )?(is )?missing/i);
    expect(r.status).toBe(0);
  });

  it('exports from the root every type a root signature uses, and documents every exported item and member', () => {
    // The line api-extractor prints for each (with its colours), read as this test reads it.
    const sample = '\x1b[31mError: dist/a.d.ts:3:5 - (ae-undocumented) Missing documentation for "size".\x1b[39m';
    expect(extractorMessages(sample, 'ae-undocumented')).toEqual(['dist/a.d.ts:3:5 Missing documentation for "size".']);
    const r = extractor();
    // ae-forgotten-export: a caller would need a deep import to name it; ae-undocumented: no doc comment.
    const found = {
      forgotten: extractorMessages(r.output, 'ae-forgotten-export'),
      undocumented: extractorMessages(r.output, 'ae-undocumented'),
    };
    expect(found).toEqual({ forgotten: [], undocumented: [] });
  });

  it('documents every exported item: the report, which the test above holds to the build, has no (undocumented) member', () => {
    const report = readFileSync(join(ROOT, 'etc/provkit.api.md'), 'utf8');
    const undocumented = report
      .split('\n')
      .flatMap((line, i, all) => (line.includes('(undocumented)') ? [all[i + 1]!.trim()] : []));
    expect(undocumented).toEqual([]);
  });

  it('exports the operations, sources, hashing, lock-file and error names, and none of the internals', () => {
    const report = readFileSync(join(ROOT, 'etc/provkit.api.md'), 'utf8');
    for (const name of [
      'lockModule',
      'runLock',
      'runMirror',
      'runInstall',
      'runVerify',
      'createBundle',
      'importBundle',
      'sourceFromCliConfig',
      'FilesystemMirrorSource',
      'hashZipPackage',
      'parseLockFile',
      'serializeLocks',
      'ProvkitError',
      'diagnosticFromError',
    ]) {
      expect(report).toMatch(new RegExp(`export (async )?(function|class|const) ${name}\\b`));
    }
    for (const internal of [
      'goQuote',
      'compareBytewise',
      'packageNetEvents',
      'installFailureDiagnostics',
      'MockSource',
    ]) {
      expect(report).not.toMatch(new RegExp(`export (async )?(function|class|const) ${internal}\\b`));
    }
  });

  it('names the option and result types of the clients it exports, so no caller needs a deep import for them', () => {
    const report = readFileSync(join(ROOT, 'etc/provkit.api.md'), 'utf8');
    // HttpClient's get/send/download, ServiceDiscovery's constructor and discover, a registry source's signature
    // cache and policy, the hashes an event carries, where a run's platforms came from.
    for (const name of [
      'RequestOptions',
      'SendOptions',
      'DownloadOptions',
      'HttpResponse',
      'DownloadResult',
      'ServiceDiscoveryOptions',
      'DiscoveredHost',
      'SignatureCache',
      'CachedVerification',
      'SignaturePolicy',
      'PackageHash',
      'PlatformOrigin',
      'InferenceVia',
    ]) {
      expect(report).toMatch(new RegExp(`export (interface|type|class) ${name}\\b`));
    }
  });

  const dir = mkdtempSync(join(ROOT, '.api-subpaths-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('resolves the subpath exports (provkit/hcl, /config, /cliconfig, /net, /sources, /layout)', () => {
    const file = join(dir, 'subpaths.mjs');
    writeFileSync(
      file,
      "for (const p of ['hcl', 'config', 'cliconfig', 'net', 'sources', 'layout']) { const m = await import(`provkit/${p}`); console.log(p, Object.keys(m).length > 0); }\n",
    );
    const r = spawnSync(process.execPath, [file], { cwd: dir, encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('hcl true\nconfig true\ncliconfig true\nnet true\nsources true\nlayout true\n');
  });
});
