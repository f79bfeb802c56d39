// The subpath exports (package.json "exports": provkit/hcl, provkit/net, …) are
// public too: every item each of them exports has a doc comment, as the root's
// API report requires of the root (test/docs/api-report.test.ts). Read from the
// sources with the TypeScript compiler: no build, no process.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The subpath entries of package.json and the source of each (`./dist/X/index.d.ts` → `src/X/index.ts`). */
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

describe('the subpath exports', () => {
  const entries = subpathEntries();
  const program = ts.createProgram(
    entries.map((e) => e.file),
    { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, strict: true, noEmit: true },
  );
  const checker = program.getTypeChecker();

  it('are the ones docs/api.md and the package test name', () => {
    expect(entries.map((e) => e.subpath).sort()).toEqual(
      ['./cliconfig', './config', './hcl', './layout', './net', './sources'].sort(),
    );
  });

  it.each(entries.map((e) => [e.subpath, e.file] as const))(
    '%s: every exported item has a doc comment',
    (_subpath, file) => {
      const source = program.getSourceFile(file);
      expect(source, file).toBeDefined();
      const module = checker.getSymbolAtLocation(source!);
      expect(module, file).toBeDefined();
      const undocumented = checker
        .getExportsOfModule(module!)
        .filter((exported) => {
          const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
          // A declaration with a comment of its own counts (overloads, merged declarations: any of them).
          return (symbol.declarations ?? []).every((d) => ts.getJSDocCommentsAndTags(d).length === 0);
        })
        .map((s) => s.getName())
        .sort();
      expect(undocumented).toEqual([]);
    },
  );
});
