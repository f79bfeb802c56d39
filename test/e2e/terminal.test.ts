// Issue 14 (the terminal): provkit run in a real terminal (tmux, 80×30)
// against a slow registry in another process: two 1.5 MiB packages sent at
// 400 KiB/s, one of them answered 503 once first. While it runs, the screen
// shows one line per package in flight (bytes, percentage, rate), an overall
// line, and the retry as it happens; after it, the display is gone and the
// screen holds the command's own lines (kept below as expectations; the
// captures in docs/terminal.md come from these runs). Piped and -json output
// hold none of it.
import { spawn } from 'node:child_process';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { BIN, e2eWorkspace, requiresTf, runCli, type E2eWorkspace } from '../support/e2e.js';
import { runInTerminal, type TerminalRun } from '../support/pty.js';
import { startHost, type RemoteServer, type ServerHost } from '../support/remote/index.js';
import type { FakeProvider } from '../support/servers/packages.js';
import { buildZip } from '../support/zip-writer.js';

const SIZE = 1536 * 1024;
const RATE = 400 * 1024;
const PLATFORMS = ['linux_amd64', 'darwin_arm64'] as const;

let host: ServerHost;
let reg: RemoteServer;
let w: E2eWorkspace;

/** A provider whose packages are big (stored, not deflated: their size is fixed). */
async function bigProvider(): Promise<FakeProvider> {
  const packages = await Promise.all(
    PLATFORMS.map(async (platform) => ({
      platform,
      zip: await buildZip([
        {
          name: 'terraform-provider-big_v2.0.0',
          data: `#!/bin/sh\n# big 2.0.0 ${platform}\nexit 1\n`,
          unixMode: 0o100755,
        },
        { name: 'payload.bin', data: Buffer.alloc(SIZE, platform), method: 0 },
      ]),
    })),
  );
  return { namespace: 'acme', type: 'big', versions: [{ version: '2.0.0', packages }] };
}

beforeAll(async () => {
  host = await startHost();
  reg = await host.registry({ providers: [await bigProvider()] });
  w = e2eWorkspace(reg.caPath, { PROVKIT_HTTP_TUNING: 'backoff=200' });
});
afterAll(async () => {
  await host.close();
  w.remove();
});

/** A slow link for both archives; the darwin one first answers 503 once. */
async function slowRegistry(): Promise<void> {
  await reg.clearFaults();
  const linux = await reg.path('archive', 'acme', 'big', '2.0.0', 'linux_amd64');
  const darwin = await reg.path('archive', 'acme', 'big', '2.0.0', 'darwin_arm64');
  await reg.setFault(darwin, { kind: 'status', status: 503, times: 1 });
  await reg.setFault(darwin, { kind: 'throttle', bytesPerSecond: RATE });
  await reg.setFault(linux, { kind: 'throttle', bytesPerSecond: RATE });
}

/**
 * The registry's address, which changes from run to run, as REGISTRY;
 * trailing spaces dropped; the `- Retrieved` lines, whose order is the order
 * the two downloads finished in, sorted.
 */
const stable = (screen: string): string => {
  const lines = screen
    .replaceAll(reg.host, 'REGISTRY')
    .split('\n')
    .map((l) => l.trimEnd());
  // Packages are fetched in parallel: the order of their Fetching and Retrieved lines is the order they started and finished in.
  const sorted = (prefix: string): ((l: string) => string) => {
    const these = lines.filter((l) => l.startsWith(prefix)).sort();
    return (l) => (l.startsWith(prefix) ? these.shift()! : l);
  };
  const [fetching, retrieved] = [sorted('- Fetching '), sorted('- Retrieved ')];
  return lines.map((l) => retrieved(fetching(l))).join('\n');
};

const ARGS = PLATFORMS.map((p) => `-platform=${p}`);

function checkDuring(run: TerminalRun, name: string): void {
  const during = run.duringJoined.map(stable);
  // PROVKIT_TERMINAL_CAPTURES=DIR keeps the screens (docs/terminal.md shows them).
  const dump = process.env['PROVKIT_TERMINAL_CAPTURES'];
  if (dump) writeFileSync(join(dump, `${name}.txt`), [...during, stable(run.after)].join('\n\n=====\n\n'));
  // A package line with bytes, total, percentage and rate (its label cut at the start when the
  // terminal is too narrow for all of it: `…0.1:PORT/acme/big…`), and the overall line.
  expect(
    during.some((s) =>
      /^ {2}\S*\/acme\/big 2\.0\.0 (linux_amd64|darwin_arm64) +\d+\.\d [KM]iB \/ 1\.5 MiB +\d+% +\d+\.\d KiB\/s$/m.test(
        s,
      ),
    ),
  ).toBe(true);
  expect(during.some((s) => /^0 of 2 packages done, [12] in progress: .*, \d+:\d\d elapsed$/m.test(s))).toBe(true);
  // The retry, as it happened: a line of its own above the display (the package's own line says so
  // too for the 200 ms of the backoff: too short to be sure a screen sample sees it).
  expect(
    during.some((s) => s.includes('- REGISTRY/acme/big 2.0.0 darwin_arm64: retrying in 1 s after HTTP 503\n')),
  ).toBe(true);
  // Never more than one display on the screen: it is redrawn in place.
  for (const s of during) expect(s.match(/packages done/g)?.length ?? 0).toBeLessThanOrEqual(1);
  // The display's lines fit the terminal (a wrapped line would break the redraw): none is wrapped.
  for (const [i, s] of run.during.entries()) {
    const display = s
      .split('\n')
      .filter((l) => /^ {2}\S.* (linux_amd64|darwin_arm64) /.test(l) || /packages done/.test(l));
    expect(display.every((l) => [...l].length <= 80)).toBe(true);
    expect(
      run.duringJoined[i]!.split('\n')
        .filter((l) => /packages done/.test(l))
        .every((l) => [...l].length <= 80),
    ).toBe(true);
  }
}

describe('issue 14: the live progress display in a terminal', () => {
  it("lock: package lines, overall line and the retry while it runs; the command's lines after", async () => {
    const p = w.project('tty-lock', { 'main.tf': requiresTf({ big: `${reg.host}/acme/big` }) });
    await slowRegistry();
    const run = await runInTerminal(['lock', ...ARGS], { cwd: p, env: w.env });
    expect(run.timedOut).toBe(false);
    expect(run.code).toBe(0);
    checkDuring(run, 'lock');
    expect(stable(run.after)).toBe(LOCK_AFTER);
    expect(w.tmpLeftovers()).toEqual([]);
  });

  it("mirror: the same display while it runs; the command's lines after", async () => {
    const p = w.project('tty-mirror', { 'main.tf': requiresTf({ big: `${reg.host}/acme/big` }) });
    await slowRegistry();
    const run = await runInTerminal(['mirror', ...ARGS, 'out'], { cwd: p, env: w.env });
    expect(run.timedOut).toBe(false);
    expect(run.code).toBe(0);
    checkDuring(run, 'mirror');
    expect(stable(run.after)).toBe(MIRROR_AFTER);
    expect(w.tmpLeftovers()).toEqual([]);
  });

  it('piped: none of it (no escape sequences, no progress lines); -json keeps fetch_progress', async () => {
    const p = w.project('piped-lock', { 'main.tf': requiresTf({ big: `${reg.host}/acme/big` }) });
    await slowRegistry();
    const r = await runCli(['lock', ...ARGS], { cwd: p, env: w.env });
    expect(r.code).toBe(0);
    expect(r.stdout + r.stderr).not.toMatch(/\u001b|packages done|retrying in|KiB/);
    await slowRegistry();
    const j = await runCli(['lock', ...ARGS, '-json'], {
      cwd: w.project('piped-json', { 'main.tf': requiresTf({ big: `${reg.host}/acme/big` }) }),
      env: w.env,
    });
    expect(j.code).toBe(0);
    expect(j.stdout).not.toMatch(/\u001b|packages done/);
    const types = j.stdout
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { type: string }).type);
    expect(types).toContain('package_fetch_progress');
    expect(w.tmpLeftovers()).toEqual([]);
  });
});

const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url));

/** What `node bin/provkit.js ...args` writes to a pseudo-terminal `columns` wide (`script`; stdout and stderr both go to the terminal). */
function inPty(args: readonly string[], cwd: string, env: Record<string, string>, columns: number): Promise<string> {
  const command = `stty cols ${columns} rows 40; exec ${[process.execPath, BIN, ...args].map((a) => `'${a}'`).join(' ')}`;
  return new Promise((resolve, reject) => {
    // stdin stays open (a pipe): at its end `script` would end the terminal's input too.
    const child = spawn('script', ['-qfec', command, '/dev/null'], {
      cwd,
      env: { PATH: process.env['PATH'] ?? '', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', () => {
      child.stdin.destroy();
      resolve(out);
    });
  });
}

describe('issue 14: diagnostics in a terminal, as terraform 1.11.4 prints them', () => {
  // test/fixtures/terminal/README.md: terraform's bytes on a terminal of that width.
  for (const columns of [80, 60]) {
    it(`providers lock on an invalid configuration, ${columns} columns: wrapped, with the source lines and the subject underlined, byte for byte`, async () => {
      const p = w.project(`c12-${columns}`);
      cpSync(join(FIXTURES, 'real/configs/c12-opentofu-provider-from-json/files'), p, { recursive: true });
      const out = await inPty(['-flavor=terraform', 'lock'], p, { ...w.env, TF_CLI_CONFIG_FILE: '/dev/null' }, columns);
      expect(out).toBe(
        readFileSync(join(FIXTURES, `terminal/c12-providers-lock-${columns}.terraform-1.11.4.txt`), 'utf8'),
      );
      expect(w.tmpLeftovers()).toEqual([]);
    });
  }
});

// The screens after the runs (80 columns; wrapped lines joined).
const LOCK_AFTER = `- Fetching REGISTRY/acme/big 2.0.0 for darwin_arm64...
- Fetching REGISTRY/acme/big 2.0.0 for linux_amd64...
- REGISTRY/acme/big 2.0.0 darwin_arm64: retrying in 1 s after HTTP 503
- Retrieved REGISTRY/acme/big 2.0.0 for darwin_arm64 (signed, key ID 369B4E05EAAB5FA6)
- Retrieved REGISTRY/acme/big 2.0.0 for linux_amd64 (signed, key ID 369B4E05EAAB5FA6)
- Obtained REGISTRY/acme/big checksums for linux_amd64; This was a new provider and the checksums for this platform are now tracked in the lock file
- Obtained REGISTRY/acme/big checksums for darwin_arm64; This was a new provider and the checksums for this platform are now tracked in the lock file

Success! OpenTofu has updated the lock file.

Review the changes in .terraform.lock.hcl and then commit to your
version control system to retain the new checksums.`;

const MIRROR_AFTER = `- Mirroring REGISTRY/acme/big...
  - Selected v2.0.0 with no constraints
- Fetching REGISTRY/acme/big 2.0.0 for darwin_arm64...
- Fetching REGISTRY/acme/big 2.0.0 for linux_amd64...
- REGISTRY/acme/big 2.0.0 darwin_arm64: retrying in 1 s after HTTP 503
- Retrieved REGISTRY/acme/big 2.0.0 for darwin_arm64 (signed, key ID 369B4E05EAAB5FA6)
- Retrieved REGISTRY/acme/big 2.0.0 for linux_amd64 (signed, key ID 369B4E05EAAB5FA6)
  - Wrote REGISTRY/acme/big/terraform-provider-big_2.0.0_darwin_arm64.zip
  - Wrote REGISTRY/acme/big/terraform-provider-big_2.0.0_linux_amd64.zip
  - Updated REGISTRY/acme/big/2.0.0.json
  - Updated REGISTRY/acme/big/index.json

Mirrored: 2 fetched, 0 already present and verified.`;
