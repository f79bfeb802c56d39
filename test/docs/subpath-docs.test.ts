// The subpath exports (package.json "exports": provkit/hcl, provkit/net, …) are
// public too: every item each of them exports has a doc comment, as the root's
// API report requires of the root (test/docs/api-report.test.ts). Read from the
// sources with the TypeScript compiler: no build, no process.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The subpath entries of package.json and the source of each (the `types` file under `dist/` maps to its `.ts` under `src/`). */
function subpathEntries(): Array<{ subpath: string; file: string }> {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    exports: Record<string, string | { types?: string }>;
  };
  return Object.entries(pkg.exports).flatMap(([subpath, target]) => {
    const types = typeof target === 'string' ? undefined : target.types;
    if (subpath === '.' || types === undefined) return [];
    return [{ subpath, file: join(ROOT, types.replace(/^\.\/dist\//, 'src/').replace(/\.d\.ts$/, '.ts')) }];
  });
}

/**
 * A program over `roots` and the `src/` files they import, and nothing else: no default library, no `@types`
 * packages, and every file outside `src/` (a dependency's declarations) read as empty. Which names a module
 * exports, what each alias stands for and the comments of their declarations come from binding the sources;
 * nothing here is type-checked, so the dependencies' declarations (most of the parsing) are not needed.
 */
function sourcesOnlyProgram(roots: readonly string[], srcDir = join(ROOT, 'src')): ts.Program {
  const options: ts.CompilerOptions = {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    noLib: true,
    types: [],
    noEmit: true,
  };
  const host = ts.createCompilerHost(options, true);
  const src = srcDir + sep;
  const readSource = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, languageVersion, ...rest) =>
    fileName.startsWith(src)
      ? readSource(fileName, languageVersion, ...rest)
      : ts.createSourceFile(fileName, '', languageVersion, true);
  return ts.createProgram(roots, options, host);
}

/** The names `file` exports (through aliases and re-exports) whose declarations have no doc comment, sorted. */
function undocumentedExports(program: ts.Program, file: string): string[] {
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file);
  expect(source, file).toBeDefined();
  const module = checker.getSymbolAtLocation(source!);
  expect(module, file).toBeDefined();
  return checker
    .getExportsOfModule(module!)
    .filter((exported) => {
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      // A declaration with a comment of its own counts (overloads, merged declarations: any of them).
      return (symbol.declarations ?? []).every((d) => ts.getJSDocCommentsAndTags(d).length === 0);
    })
    .map((s) => s.getName())
    .sort();
}

describe('the subpath exports', () => {
  const entries = subpathEntries();
  const program = sourcesOnlyProgram(entries.map((e) => e.file));

  it('are the ones docs/api.md and the package test name', () => {
    expect(entries.map((e) => e.subpath).sort()).toEqual(
      ['./cliconfig', './config', './hcl', './layout', './net', './sources'].sort(),
    );
  });

  it.each(entries.map((e) => [e.subpath, e.file] as const))(
    '%s: every exported item has a doc comment',
    (_subpath, file) => {
      const undocumented = undocumentedExports(program, file);
      expect(undocumented).toEqual([]);
    },
  );
});

describe('the check of doc comments', () => {
  it('names an undocumented export, re-exported through a barrel, and passes documented ones', () => {
    const dir = mkdtempSync(join(tmpdir(), 'provkit-subpath-'));
    try {
      const src = join(dir, 'src');
      mkdirSync(src);
      writeFileSync(
        join(src, 'items.ts'),
        [
          '/** Documented. */',
          'export function documented(): number { return 1; }',
          'export function undocumented(): number { return 2; }',
          '/** Documented. */',
          'export interface Shape { readonly x: number }',
          'export type Bare = string;',
        ].join('\n'),
      );
      writeFileSync(
        join(src, 'index.ts'),
        "export { documented, undocumented } from './items.js';\nexport type * from './items.js';\n",
      );
      const index = join(src, 'index.ts');
      expect(undocumentedExports(sourcesOnlyProgram([index], src), index)).toEqual(['Bare', 'undocumented']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
