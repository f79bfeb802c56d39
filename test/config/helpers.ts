// Shared helpers of the src/config tests: fixture paths, an in-memory file
// system for the loader, and compact views of results.
import { posix } from 'node:path';
import { fileURLToPath } from 'node:url';

import type { Flavor } from '../../src/addresses/index.js';
import type { ConfigFs, Diagnostic, LoadedConfig, Requirements } from '../../src/config/index.js';
import { diagnosticLocation, loadConfig, parseConfigFile } from '../../src/config/index.js';

export const FIXTURES = fileURLToPath(new URL('../fixtures/config/', import.meta.url));
export const HCL_CORPUS = fileURLToPath(new URL('../hcl/corpus/', import.meta.url));

/** `provider constraints` lines, in requirement order. */
export function reqLines(reqs: Requirements): string[] {
  return [...reqs.values()].map((r) => `${r.provider.toString()} ${r.constraints.toString()}`.trimEnd());
}

/** `severity file:line:col: summary` lines. */
export function diagLines(diags: readonly Diagnostic[]): string[] {
  return diags.map((d) => `${d.severity} ${diagnosticLocation(d)}: ${d.summary}`);
}

/** The detail texts, with newlines kept. */
export function details(diags: readonly Diagnostic[]): string[] {
  return diags.map((d) => d.detail);
}

/**
 * An in-memory {@link ConfigFs}: `files` maps root-relative paths to contents;
 * directories are implied by the paths (plus `dirs`).
 */
export function memFs(files: Record<string, string>, dirs: string[] = []): ConfigFs {
  const norm = (p: string): string => posix.normalize(p).replace(/^\.\//, '').replace(/\/$/, '');
  const fileMap = new Map(Object.entries(files).map(([k, v]) => [norm(k), new TextEncoder().encode(v)]));
  const dirSet = new Set<string>(['.', ...dirs.map(norm)]);
  for (const f of fileMap.keys()) {
    let d = posix.dirname(f);
    while (d !== '.' && d !== '/') {
      dirSet.add(d);
      d = posix.dirname(d);
    }
  }
  const enoent = (p: string): Error =>
    Object.assign(new Error(`ENOENT: no such file or directory, open '${p}'`), { code: 'ENOENT' });
  return {
    readDir(path) {
      const p = norm(path);
      if (!dirSet.has(p)) return Promise.reject(enoent(path));
      const names = new Map<string, boolean>();
      const prefix = p === '.' ? '' : `${p}/`;
      for (const f of fileMap.keys())
        if (f.startsWith(prefix) && !f.slice(prefix.length).includes('/')) names.set(f.slice(prefix.length), false);
      for (const d of dirSet)
        if (d !== p && d.startsWith(prefix) && !d.slice(prefix.length).includes('/'))
          names.set(d.slice(prefix.length), true);
      return Promise.resolve([...names].map(([name, isDirectory]) => ({ name, isDirectory })));
    },
    readFile(path) {
      const f = fileMap.get(norm(path));
      return f ? Promise.resolve(f) : Promise.reject(enoent(path));
    },
  };
}

/** Loads an in-memory configuration rooted at `.`. */
export function loadMem(
  files: Record<string, string>,
  flavor: Flavor = 'terraform',
  extra: { resolveLocalModules?: boolean; dirs?: string[] } = {},
): Promise<LoadedConfig> {
  return loadConfig('.', {
    flavor,
    fs: memFs(files, extra.dirs),
    ...(extra.resolveLocalModules ? { resolveLocalModules: true } : {}),
  });
}

/** Parses one native-syntax file as `main.tf`. */
export function decode(text: string, flavor: Flavor = 'terraform', filename = 'main.tf') {
  return parseConfigFile(text, filename, { flavor, override: /(^|_)override\./.test(filename) });
}
