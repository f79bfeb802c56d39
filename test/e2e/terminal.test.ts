// provkit run in a real terminal (tmux) against a slow registry in another
// process (docs/terminal.md; its captures come from these runs,
// PROVKIT_TERMINAL_CAPTURES=DIR writes them):
// - 80×30, two 1.5 MiB packages sent at 400 KiB/s, one of them answered 503
//   once first: while it runs, one line per package in flight (bytes,
//   percentage, rate), an overall line, and the retry as it happens; after
//   it, the display is gone and the screen holds the command's own lines
//   (kept below as expectations);
// - five packages below earlier output (a terminal in use): every package
//   counted from the start (the queued ones listed as waiting); at 100
//   columns narrowed to 45 during the run, no line of the display left
//   behind in the screen or the scrollback; at 40 columns, no figure cut and
//   every percentage with its %, and Ctrl-C clears the display before the
//   one line that says so;
// - a filesystem mirror's large archives: the hashing shows bytes of the
//   total and a rate, not "waiting".
// Piped and -json output hold none of the display.
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { BIN, e2eWorkspace, requiresTf, runCli, type E2eWorkspace } from '../support/e2e.js';
import { runInTerminal, type TerminalRun, type TerminalStep } from '../support/pty.js';
import { startHost, type RemoteServer, type ServerHost } from '../support/remote/index.js';
import type { FakeProvider } from '../support/servers/packages.js';
import { buildZip, writeZip } from '../support/zip-writer.js';

const SIZE = 1536 * 1024;
const RATE = 400 * 1024;
const PLATFORMS = ['linux_amd64', 'darwin_arm64'] as const;

let host: ServerHost;
let reg: RemoteServer;
let w: E2eWorkspace;

/** Five packages of ~768 KiB, sent at 256 KiB/s: 3 s each, two or three at a time. */
const FIVE = ['linux_amd64', 'darwin_arm64', 'linux_arm64', 'darwin_amd64', 'windows_amd64'] as const;
const FIVE_SIZE = 768 * 1024;
const FIVE_RATE = 256 * 1024;

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

/** `acme/five` 1.0.0 for the five platforms (stored entries: their size is fixed). */
async function fiveProvider(): Promise<FakeProvider> {
  const packages = await Promise.all(
    FIVE.map(async (platform) => ({
      platform,
      zip: await buildZip([
        { name: 'terraform-provider-five_v1.0.0', data: `#!/bin/sh\n# five ${platform}\nexit 1\n`, unixMode: 0o100755 },
        { name: 'payload.bin', data: Buffer.alloc(FIVE_SIZE, platform), method: 0 },
      ]),
    })),
  );
  return { namespace: 'acme', type: 'five', versions: [{ version: '1.0.0', packages }] };
}

beforeAll(async () => {
  host = await startHost();
  reg = await host.registry({ providers: [await bigProvider(), await fiveProvider()] });
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

describe('the live progress display in a terminal', () => {
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

/** Each archive of acme/five sent at FIVE_RATE. */
async function slowFive(): Promise<void> {
  await reg.clearFaults();
  for (const platform of FIVE)
    await reg.setFault(await reg.path('archive', 'acme', 'five', '1.0.0', platform), {
      kind: 'throttle',
      bytesPerSecond: FIVE_RATE,
    });
}

const SIZE_RE = String.raw`\d+(?:\.\d)? (?:B|KiB|MiB|GiB)`;
const FIGURES_RE = String.raw`${SIZE_RE}(?: / ${SIZE_RE})?(?: {2}\d+%)?(?: {2}${SIZE_RE}/s)?(?: {2}no data for \d+ s)?`;
/** A package line of the display, whole: its name (or none), then its status, no figure cut. */
const ROW = new RegExp(
  String.raw`^ {2}(?:\S.*\S {2,})?(?:waiting|retrying(?: in \d+ s)?(?: after .+)?|(?:reading|hashing) {2}${FIGURES_RE}|${FIGURES_RE}|${SIZE_RE} {2}100%(?: {2}hashing and verifying)?|… and \d+ more)$`,
);
const TIME_RE = String.raw`\d+:\d\d(?::\d\d)?`;
/** The overall line, in one of its wordings (src/ui/progress.ts overallLine), no figure cut. */
const OVERALL = new RegExp(
  [
    String.raw`^\d+ of \d+ packages? done, \d+ in progress(?:, \d+ waiting)?: (?:${SIZE_RE}, )?(?:${SIZE_RE}/s, )?${TIME_RE} elapsed$`,
    String.raw`^\d+/\d+ done, \d+ in progress(?:, \d+ waiting)?: (?:${SIZE_RE}, )?(?:${SIZE_RE}/s, )?${TIME_RE}$`,
    String.raw`^\d+/\d+ done(?:, \d+ active)?(?:, \d+ waiting)?(?:, ${SIZE_RE})?(?:, ${SIZE_RE}/s)?(?:, ${TIME_RE})?$`,
  ].join('|'),
);
/** What only the display ever shows: none of it may stay on the screen or in the scrollback. */
const DEBRIS = /[KM]iB|%|\bwaiting\b|\bdone\b|elapsed|in progress|\bactive\b/;

/** The display's lines of a screen: below the command's last `- …` line, down to the overall line (none without one). */
function displayLines(screen: string): string[] {
  const lines = screen.split('\n');
  const overall = lines.findLastIndex((l) => /\bdone\b/.test(l) && !l.startsWith('- '));
  if (overall < 0) return [];
  const top = lines.slice(0, overall).findLastIndex((l) => /^(- |earlier output )/.test(l));
  return lines.slice(top + 1, overall + 1);
}

/** The display lines of `screens` that are cut (a figure, a percentage without its %) or wider than `columns` - 1. */
function problemsOf(screens: readonly string[], columns: number): string[] {
  return screens.flatMap((s) =>
    displayLines(s).filter((l) => !(ROW.test(l) || OVERALL.test(l)) || [...l].length >= columns),
  );
}

/** Writes the screens into PROVKIT_TERMINAL_CAPTURES, the registry's address as REGISTRY unless `shown` (lines as wrapped). */
function dump(name: string, screens: readonly string[], shown = false): void {
  const dir = process.env['PROVKIT_TERMINAL_CAPTURES'];
  if (dir)
    writeFileSync(
      join(dir, `${name}.txt`),
      screens.map((s) => (shown ? s : s.replaceAll(reg.host, 'REGISTRY'))).join('\n\n=====\n\n'),
    );
}

/** `provkit lock` of acme/five's five platforms, in a 30-row terminal `columns` wide below 40 lines of earlier output. */
async function lockFive(name: string, columns: number, step: TerminalStep): Promise<TerminalRun> {
  const p = w.project(name, { 'main.tf': requiresTf({ five: `${reg.host}/acme/five` }) });
  await slowFive();
  return runInTerminal(['lock', ...FIVE.map((x) => `-platform=${x}`)], {
    cwd: p,
    // Two downloads at once, so that three packages wait: the display of queued packages is under test.
    env: { ...w.env, PROVKIT_DOWNLOADS: '2' },
    columns,
    rows: 30,
    prefill: 40,
    steps: [step],
  });
}

describe('five packages in a terminal in use: counted from the start, resized, interrupted', () => {
  it('100 columns narrowed to 45 during the run: every package counted, the queued ones waiting; no line of the display left behind', async () => {
    // Narrowed once two downloads are under way (and have a rate).
    const run = await lockFive('tty-five-resize', 100, {
      when: /^0 of \d+ packages? done, 2 in progress.*[1-9]\d*\.\d KiB\/s/m,
      columns: 45,
    });
    expect(run.timedOut).toBe(false);
    expect(run.code).toBe(0);
    const resizedAt = run.stepAt[0]!;
    dump('five-100-during', run.duringJoined.slice(Math.max(0, resizedAt - 3), resizedAt));
    dump('five-100-after-resize', run.duringJoined.slice(resizedAt, resizedAt + 4));
    dump('five-100-after', [run.history.split('\n').slice(-18).join('\n')]);
    // Before the resize: all five counted from the start, the three queued ones listed as waiting.
    const before = run.duringJoined.slice(0, resizedAt);
    expect
      .soft(
        before.some(
          (s) =>
            /^0 of 5 packages done, 2 in progress, 3 waiting: /m.test(s) &&
            (s.match(/^ {2}\S+\/acme\/five 1\.0\.0 \w+ +waiting$/gm) ?? []).length === 3,
        ),
      )
      .toBe(true);
    // Every line of the display, before and after the resize, is whole and fits the terminal
    // (once redrawn: the screens just after the resize still show the old lines, rewrapped).
    const redrawn = run.duringJoined.findIndex(
      (s, i) => i >= resizedAt && displayLines(s).every((l) => [...l].length < 45),
    );
    expect.soft(problemsOf(run.duringJoined.slice(0, resizedAt), 100)).toEqual([]);
    expect.soft(problemsOf(run.duringJoined.slice(redrawn), 45)).toEqual([]);
    // After it: the command's lines, and nothing of the display anywhere in the scrollback.
    expect.soft(run.history.split('\n').filter((l) => DEBRIS.test(l))).toEqual([]);
    expect(run.after).toContain('Success! OpenTofu has updated the lock file.');
    expect(w.tmpLeftovers()).toEqual([]);
  });

  it('40 columns: no figure cut, every percentage with its %; Ctrl-C clears the display, then one line', async () => {
    // Interrupted once a download is under way.
    const run = await lockFive('tty-five-interrupt', 40, { when: /^ {2}.*\d+\.\d KiB \/ /m, keys: 'C-c' });
    expect(run.timedOut).toBe(false);
    expect(run.code).toBe(130);
    const at = run.stepAt[0]!;
    // As shown: the command's own lines wrap at 40 columns, the display's never.
    dump('five-40-during', run.during.slice(Math.max(0, at - 2), at), true);
    dump('five-40-after-ctrl-c', [run.afterShown], true);
    expect.soft(problemsOf(run.duringJoined.slice(0, at), 40)).toEqual([]);
    expect.soft(run.duringJoined.slice(0, at).some((s) => /^ {2}[\d.]+ KiB \/ [\d.]+ KiB {2}\d+%/m.test(s))).toBe(true);
    // After Ctrl-C: the display is gone (from the screen and the scrollback), one line says why.
    expect.soft(run.history.split('\n').filter((l) => DEBRIS.test(l))).toEqual([]);
    expect(run.after.split('\n').at(-1)).toBe('Error: provkit lock was interrupted by SIGINT; nothing was changed.');
    expect(run.after.split('\n').filter((l) => l.startsWith('Error') || l.startsWith('╷'))).toHaveLength(1);
    expect(w.tmpLeftovers()).toEqual([]);
  });
});

describe("a filesystem mirror's large archives: the hashing in progress", () => {
  it('shows the bytes read and hashed of the total and a rate, not "waiting"', async () => {
    const p = w.project('tty-local', { 'main.tf': requiresTf({ huge: 'registry.example.test/acme/huge' }) });
    const dir = join(p, 'mirror', 'registry.example.test', 'acme', 'huge');
    mkdirSync(dir, { recursive: true });
    const block = Buffer.alloc(1024 * 1024, 'provkit');
    for (const platform of ['linux_amd64', 'darwin_arm64'])
      await writeZip(join(dir, `terraform-provider-huge_1.0.0_${platform}.zip`), [
        { name: 'terraform-provider-huge_v1.0.0', data: '#!/bin/sh\nexit 1\n', unixMode: 0o100755 },
        {
          name: 'payload.bin',
          method: 0,
          // 384 MiB: long enough on a fast, idle machine for the display to
          // have measured a rate before the hashing ends (at 128 MiB an idle
          // CI machine finished both in under a second, before any rate).
          data: function* () {
            for (let i = 0; i < 384; i++) yield Buffer.from(block);
          },
        },
      ]);
    // With a hash store (the default): the archive is read for its zh: (the store's key), then hashed.
    const run = await runInTerminal(['lock', '-fs-mirror=mirror', '-platform=linux_amd64', '-platform=darwin_arm64'], {
      cwd: p,
      env: { ...w.env, PROVKIT_HASH_STORE: join(w.base, 'tty-local-store') },
      columns: 100,
      sampleMs: 50,
    });
    expect(run.timedOut).toBe(false);
    expect(run.code).toBe(0);
    dump('local-hashing', run.duringJoined);
    const local = new RegExp(
      String.raw`^ {2}\S.* (?:linux_amd64|darwin_arm64) +(reading|hashing) {2}${SIZE_RE} / 384\.0 MiB {2}\d+% {2}${SIZE_RE}/s$`,
      'm',
    );
    const seen = run.duringJoined.join('\n-----\n');
    expect(
      run.duringJoined.some((s) => local.test(s)),
      seen,
    ).toBe(true);
    expect(
      run.duringJoined.some((s) => new RegExp(String.raw`hashing {2}${SIZE_RE} / 384\.0 MiB`).test(s)),
      seen,
    ).toBe(true);
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

describe('diagnostics in a terminal, as terraform 1.11.4 prints them', () => {
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
