// The CLI bundle's V8 code cache (bin/load-cli.js, scripts/bundle.mjs; issue 13,
// start-up). A cache that does not fit must only cost time: the CLI loads and
// runs the same with a cache of another build, with data V8 refuses, and with
// none. Each case loads the bundle in a child process, as bin/provkit.js does.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, describe, expect, it } from 'vitest';

import { runNodeOk } from '../support/e2e.js';

const LOADER = fileURLToPath(new URL('../../bin/load-cli.js', import.meta.url));
const BUNDLE_DIR = fileURLToPath(new URL('../../dist/bundle/', import.meta.url));

/** Loads the bundle in `dir` in a child process; returns the cache state and what `provkit version` printed. */
async function load(dir: string, env: Record<string, string> = {}): Promise<{ cache: string; version: string }> {
  const script = `
    const { loadCli } = require(${JSON.stringify(LOADER)});
    loadCli(process.env, ${JSON.stringify(dir)}).then(async ({ cli, cache }) => {
      let out = '';
      const sink = { write: (s) => { out += s; return true; }, isTTY: false, columns: 80 };
      const code = await cli.main(['version'], { stdout: sink, stderr: sink, env: process.env, cwd: process.cwd() });
      process.stdout.write(JSON.stringify({ cache, version: code + ' ' + out }));
    });`;
  const { stdout, stderr } = await runNodeOk(['-e', script], { env: { ...process.env, ...env } });
  expect(stderr).toBe('');
  return JSON.parse(stdout) as { cache: string; version: string };
}

const scratch = mkdtempSync(join(tmpdir(), 'provkit-code-cache-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A copy of the built bundle directory, changed by `edit`. */
function copyBundle(name: string, edit: (dir: string) => void = () => undefined): string {
  const dir = join(scratch, name);
  cpSync(BUNDLE_DIR, dir, { recursive: true });
  edit(dir);
  return dir;
}

describe('the CLI bundle’s code cache', () => {
  it('is used as built, and where the package is installed elsewhere', async () => {
    const built = await load(BUNDLE_DIR);
    expect(built.cache).toBe('used');
    expect(built.version).toMatch(/^0 provkit v\d+\.\d+\.\d+/);
    const moved = await load(copyBundle('moved'));
    expect(moved).toEqual(built);
  });

  it('the vendor files (openpgp.js, node-fetch, https-proxy-agent) load with their own caches', async () => {
    const script = `
      const { runBundle, cacheBeside, cacheState } = require(${JSON.stringify(LOADER)});
      const out = {};
      for (const name of ['openpgp', 'node-fetch', 'https-proxy-agent']) {
        const run = runBundle(require('node:path').join(${JSON.stringify(BUNDLE_DIR)}, 'vendor-' + name + '.cjs'), cacheBeside);
        out[name] = cacheState(run) + ' ' + Object.keys(run.exports).length;
      }
      process.stdout.write(JSON.stringify(out));`;
    const { stdout } = await runNodeOk(['-e', script], { env: process.env });
    const states = JSON.parse(stdout) as Record<string, string>;
    for (const [name, state] of Object.entries(states)) expect(state, name).toMatch(/^used [1-9]/);
  });

  it('is not used with PROVKIT_CODE_CACHE=off', async () => {
    const r = await load(BUNDLE_DIR, { PROVKIT_CODE_CACHE: 'off' });
    expect(r.cache).toBe('none');
    expect(r.version).toMatch(/^0 provkit v/);
  });

  it('is not used for a bundle of another build (same length, another id)', async () => {
    const dir = copyBundle('other-build', (d) => {
      const file = join(d, 'main.cjs');
      const source = readFileSync(file, 'latin1');
      const other = source.replace(
        /^\/\/provkit-bundle [0-9a-f]/,
        (m) => m.slice(0, -1) + (m.endsWith('0') ? '1' : '0'),
      );
      expect(other.length).toBe(source.length);
      expect(other).not.toBe(source);
      writeFileSync(file, other, 'latin1');
    });
    const r = await load(dir);
    expect(r.cache).toBe('none');
    expect(r.version).toMatch(/^0 provkit v/);
  });

  it('costs only time when V8 refuses it', async () => {
    const dir = copyBundle('refused', (d) => {
      const file = join(d, 'main.cjs.cache');
      const data = readFileSync(file);
      const header = data.indexOf(10) + 1;
      // The build's header kept, V8's data garbled.
      writeFileSync(file, Buffer.concat([data.subarray(0, header), Buffer.alloc(data.length - header, 0x5a)]));
    });
    const r = await load(dir);
    expect(r.cache).toBe('rejected');
    expect(r.version).toMatch(/^0 provkit v/);
  });

  it('without a bundle, the plain build (dist/cli/main.js) runs', async () => {
    const r = await load(join(scratch, 'no-bundle-here'));
    expect(r.cache).toBe('unbundled');
    expect(r.version).toMatch(/^0 provkit v/);
  });

  it('a bundle written before bundles were wrapped (a stale dist/) is refused with what to do', async () => {
    const dir = copyBundle('stale', (d) => {
      const file = join(d, 'main.cjs');
      const wrapped = readFileSync(file, 'latin1');
      // The same code as esbuild wrote it, without the module wrapper around it.
      const head = wrapped.indexOf('{') + 1;
      writeFileSync(file, wrapped.slice(0, wrapped.indexOf('\n') + 1) + wrapped.slice(head, -3), 'latin1');
    });
    await expect(load(dir)).rejects.toThrow(/main\.cjs is not a bundle of this version; run `npm run build`/);
  });

  it('is absent: the bundle compiles from its source', async () => {
    const r = await load(copyBundle('absent', (d) => rmSync(join(d, 'main.cjs.cache'))));
    expect(r.cache).toBe('none');
    expect(r.version).toMatch(/^0 provkit v/);
  });
});
