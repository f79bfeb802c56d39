// An in-memory file system and context for the CLI configuration tests: no
// real $HOME, no real environment.
import { posix } from 'node:path';

import type { Flavor } from '../../src/addresses/index.js';
import type { CliConfigContext, CliConfigFs, HostOS } from '../../src/cliconfig/index.js';

/** Files by absolute path; directories are implied by the paths, plus `dirs`. */
export function memCliFs(files: Record<string, string>, dirs: string[] = []): CliConfigFs {
  const fileMap = new Map(Object.entries(files).map(([k, v]) => [k, new TextEncoder().encode(v)]));
  const dirSet = new Set<string>(dirs);
  for (const f of [...fileMap.keys(), ...dirs]) {
    for (let d = posix.dirname(f); d !== '/' && d !== '.'; d = posix.dirname(d)) dirSet.add(d);
  }
  const enoent = (p: string): Error =>
    Object.assign(new Error(`ENOENT: no such file or directory, open '${p}'`), { code: 'ENOENT' });
  return {
    readFile: (p) => {
      const f = fileMap.get(p);
      return f ? Promise.resolve(f) : Promise.reject(enoent(p));
    },
    readDir: (p) => {
      if (!dirSet.has(p)) return Promise.reject(enoent(p));
      const names = new Set<string>();
      for (const x of [...fileMap.keys(), ...dirSet]) if (posix.dirname(x) === p) names.add(posix.basename(x));
      return Promise.resolve([...names]);
    },
    stat: (p) =>
      Promise.resolve(fileMap.has(p) ? { isDirectory: false } : dirSet.has(p) ? { isDirectory: true } : undefined),
  };
}

export function ctx(flavor: Flavor, env: Record<string, string> = {}, os: HostOS = 'linux'): CliConfigContext {
  return { flavor, env: { HOME: '/home/u', ...env }, homeDir: '/home/fallback', os, cwd: '/work' };
}
