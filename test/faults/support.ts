/**
 * Shared helpers of the fault suite: state snapshots (every file under a
 * directory with its SHA-256, symlinks with their target), a search for
 * leftover temporary files, and the two ways of running provkit: in-process
 * through `main` (fast, for the fault matrix) and as a child process (for
 * signals and concurrency).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { lstat, readdir, readFile, readlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { main } from '../../src/cli/main.js';
import { makeProvider } from '../support/servers/packages.js';
import { startFakeRegistry, type FakeRegistry } from '../support/servers/registry.js';
import { buildZip } from '../support/zip-writer.js';

export const BIN = fileURLToPath(new URL('../../bin/provkit.js', import.meta.url));

/** `relative path → sha256 | '->target' | 'dir'`, or `absent` when `root` does not exist. */
export async function snapshot(root: string): Promise<Record<string, string> | 'absent'> {
  const out: Record<string, string> = {};
  try {
    await lstat(root);
  } catch {
    return 'absent';
  }
  const walk = async (dir: string, rel: string): Promise<void> => {
    const st = await lstat(dir);
    if (st.isSymbolicLink()) {
      out[rel] = `->${await readlink(dir)}`;
      return;
    }
    if (st.isFile()) {
      out[rel] = createHash('sha256')
        .update(await readFile(dir))
        .digest('hex');
      return;
    }
    out[rel === '' ? '.' : rel] = 'dir';
    for (const name of (await readdir(dir)).sort()) {
      await walk(join(dir, name), rel === '' ? name : `${rel}/${name}`);
    }
  };
  await walk(root, '');
  return out;
}

/** Names that only exist while a run is in progress (or after one was killed). */
const TEMP = /\.partial$|\.tmp$|\.new$|\.break$|\.provkit-staging-|\.provkit-mirror\.lock$|^\.?provkit-(install|lock)-/;

/** Leftover temporary files under `roots` (relative paths). */
export async function leftovers(...roots: string[]): Promise<string[]> {
  const found: string[] = [];
  for (const root of roots) {
    const snap = await snapshot(root);
    if (snap === 'absent') continue;
    for (const rel of Object.keys(snap))
      if (rel.split('/').some((part) => TEMP.test(part))) found.push(`${root}/${rel}`);
  }
  return found;
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
  /** Set when a child was killed by a signal it did not handle (it had not installed its handlers yet). */
  killedBy?: string;
}

/** Runs provkit in this process with `env` as its whole environment. */
export async function runInProcess(args: string[], cwd: string, env: Record<string, string>): Promise<RunResult> {
  let stdout = '';
  let stderr = '';
  const code = await main(args, {
    stdout: { write: (t: string) => (stdout += t) },
    stderr: { write: (t: string) => (stderr += t) },
    env,
    cwd,
  });
  return { code, stdout, stderr };
}

/** A child `provkit` with pipes; `done` resolves with its exit code (or 128+signal). */
export function spawnCli(
  args: string[],
  cwd: string,
  env: Record<string, string>,
): { child: ChildProcess; done: Promise<RunResult>; output: () => string } {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd,
    env: { PATH: process.env['PATH'] ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<RunResult>((resolve) => {
    child.on('close', (code, signal) =>
      resolve({
        code: code ?? 128 + (signal === 'SIGINT' ? 2 : signal === 'SIGTERM' ? 15 : 9),
        stdout,
        stderr,
        ...(signal === null ? {} : { killedBy: signal }),
      }),
    );
  });
  return { child, done, output: () => stdout + stderr };
}

/** Resolves once `cond()` holds (polled), or rejects after `ms`. */
export async function waitFor(cond: () => boolean, ms = 10_000, what = 'condition'): Promise<void> {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > ms) throw new Error(`timed out waiting for ${what}`);

    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The provider version and platform the fault tests fetch. */
export const V = '1.1.0';
export const PLAT = 'linux_amd64';

/**
 * A fake registry serving `acme/demo` 1.0.0 and 1.1.0 for linux_amd64 and
 * darwin_arm64, each package about 2 MiB (stored, incompressible), so that a
 * fault can hit the middle of a body.
 */
export async function startBigRegistry(): Promise<FakeRegistry> {
  const provider = await makeProvider('acme', 'demo', ['1.0.0', V], [PLAT, 'darwin_arm64']);
  const bulk = randomBytes(2 * 1024 * 1024);
  for (const v of provider.versions) {
    for (const p of v.packages) {
      p.zip = await buildZip([
        {
          name: `terraform-provider-demo_v${v.version}`,
          data: Buffer.concat([Buffer.from(`#!/bin/sh\n# ${v.version} ${p.platform}\n`), bulk]),
          unixMode: 0o100755,
          method: 0,
        },
      ]);
    }
  }
  return startFakeRegistry({ providers: [provider] });
}

/** A module requiring `HOST/acme/demo ~> 1.0`. */
export function mainTf(host: string): string {
  return `terraform {\n  required_providers {\n    demo = {\n      source  = "${host}/acme/demo"\n      version = "~> 1.0"\n    }\n  }\n}\n`;
}

/**
 * A hermetic environment for provkit children: an empty CLI configuration, a
 * home and cache inside `base`, no plugin cache or data dir from the machine,
 * the registry's CA trusted, and the given HTTP tuning.
 */
export async function hermeticEnv(base: string, caPath: string, tuning: string): Promise<Record<string, string>> {
  await writeFile(join(base, 'empty.tfrc'), '');
  return {
    SSL_CERT_FILE: caPath,
    TF_CLI_CONFIG_FILE: join(base, 'empty.tfrc'),
    PROVKIT_CACHE_DIR: join(base, 'cache'),
    // No hash store: each fault must meet a real download, not remembered hashes.
    PROVKIT_HASH_STORE: 'off',
    PROVKIT_FLAVOR: '',
    HOME: base,
    TF_DATA_DIR: '',
    TF_PLUGIN_CACHE_DIR: '',
    PROVKIT_HTTP_TUNING: tuning,
  };
}
