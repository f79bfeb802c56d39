// `provkit verify`'s problem lines on a terminal are wrapped at spaces to its
// width (src/ui/human.ts `verifyProblemText`, src/ui/wrap.ts), continuation
// lines indented, so that an 80-column terminal does not break them in the
// middle of a word; anywhere else (pipes, files, CI logs) they stay one line
// each, byte for byte as before. The problems: a lock file written for
// linux_amd64 only, checked against the in-repo fixture mirror
// (mirror-fixtures/), which also has darwin_amd64, darwin_arm64, linux_arm64
// and windows_amd64 (their h1: hashes are in mirror-fixtures/hashes.json).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { main } from '../../src/cli/main.js';
import { FIXTURE_MIRROR } from '../fixtures/recursive/cases.js';
import { e2eWorkspace, requiresTf, runCli, type E2eWorkspace } from '../support/e2e.js';
import { runInTerminal } from '../support/pty.js';

let w: E2eWorkspace;
let project: string;
/** A tree of one root module (`app`), the same project, for `verify -recursive`. */
let tree: string;

const TOOLS = 'registry.example.test/acme/tools';
const H1: Record<string, string> = {
  darwin_amd64: 'h1:I6CsJB9yyYnIjLTNaMOdlhYy8i+fLDdv4M6hLu0Tb1A=',
  darwin_arm64: 'h1:AwtkeE2jn41EsBoeR/OFvCVthbU51VGEt8hcTDa2eWQ=',
  linux_arm64: 'h1:u+d2TAqsqU3eJ7p4b9oEE+9nBWAugSdbeK3eQ/PP0bI=',
  windows_amd64: 'h1:zX/HNMYM6HDPXJ2vpZ/M3SzPxdMoxQ49xPCq4drTdcU=',
};
const MISSING = Object.keys(H1);
/** The one-line form of each problem, as piped output has always had it. */
const problemLine = (p: string): string =>
  `${TOOLS} 0.3.0 ${p}: its h1: (${H1[p]}) is not in the lock file: the lock does not cover ${p}, or the package differs from the one locked (provkit lock -platform=${p} records it)`;

const VERIFY = ['-flavor=terraform', 'verify', `-mirror=${FIXTURE_MIRROR}`];

/** Every package of the mirror, checked: its line first, naming who vouches for its hashes (docs/provenance.md). */
const PACKAGES = ['darwin_amd64', 'darwin_arm64', 'linux_amd64', 'linux_arm64', 'windows_amd64'];
const checked = (p: string): string => `- Checked ${TOOLS} 0.3.0 for ${p} (computed locally)`;

beforeAll(async () => {
  w = e2eWorkspace();
  const files = { 'main.tf': requiresTf({ tools: TOOLS }) };
  project = w.project('project', files);
  tree = w.project('tree');
  for (const dir of [project, w.project('tree/app', files)]) {
    const lock = await runCli(['-flavor=terraform', 'lock', `-fs-mirror=${FIXTURE_MIRROR}`, '-platform=linux_amd64'], {
      cwd: dir,
      env: w.env,
    });
    expect(lock.code, lock.stderr).toBe(0);
  }
});
afterAll(() => w.remove());

/** Runs provkit in this process with stdout and stderr that say they are a terminal `columns` wide. */
async function onTerminal(args: string[], cwd: string, columns: number): Promise<{ code: number; stdout: string }> {
  let stdout = '';
  const code = await main(args, {
    stdout: { write: (t: string) => (stdout += t), isTTY: true, columns },
    stderr: { write: () => true, isTTY: true, columns },
    env: { ...w.env, NO_COLOR: '1' },
    cwd,
  });
  return { code, stdout };
}

describe('verify-wrap: verify problem lines fit the terminal, and stay one line each off it', () => {
  it('piped: one line per problem, the bytes unchanged', async () => {
    const r = await runCli(VERIFY, { cwd: project, env: w.env });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(
      `${PACKAGES.map(checked).join('\n')}\n${MISSING.map(problemLine).join('\n')}\n\n4 problems found.\n`,
    );
    expect(w.tmpLeftovers()).toEqual([]);
  });

  it('piped, -recursive: the lines of verify in the root, one each, under its root', async () => {
    const r = await runCli([...VERIFY, '-recursive'], { cwd: tree, env: w.env });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(
      `- app: 4 problems\n${[...PACKAGES.map(checked), ...MISSING.map(problemLine)].map((l) => `    ${l}\n`).join('')}\n1 root module verified: 1 with problems (4 in all).\n`,
    );
    expect(w.tmpLeftovers()).toEqual([]);
  });

  it('a terminal 60 columns wide: wrapped at spaces to 59 columns, continuation lines indented 2', async () => {
    const r = await onTerminal(VERIFY, project, 60);
    expect(r.code).toBe(1);
    const rest = (p: string): string =>
      `  not in the lock file: the lock does not cover\n  ${p}, or the package differs from the one locked\n  (provkit lock -platform=${p} records it)\n`;
    expect(r.stdout).toBe(
      [
        // A package line too, its continuation indented 4 (under the text after "- ").
        ...PACKAGES.map((p) => `- Checked ${TOOLS} 0.3.0 for\n    ${p} (computed locally)\n`),
        `${TOOLS} 0.3.0 darwin_amd64: its\n  h1: (${H1['darwin_amd64']}) is\n${rest('darwin_amd64')}`,
        `${TOOLS} 0.3.0 darwin_arm64: its\n  h1: (${H1['darwin_arm64']}) is\n${rest('darwin_arm64')}`,
        // One column shorter: "h1:" fits on the first line, and so on.
        `${TOOLS} 0.3.0 linux_arm64: its h1:\n  (${H1['linux_arm64']}) is not\n` +
          '  in the lock file: the lock does not cover linux_arm64, or\n' +
          '  the package differs from the one locked (provkit lock\n' +
          '  -platform=linux_arm64 records it)\n',
        `${TOOLS} 0.3.0 windows_amd64: its\n  h1: (${H1['windows_amd64']}) is\n${rest('windows_amd64')}`,
        '\n4 problems found.\n',
      ].join(''),
    );
    for (const line of r.stdout.split('\n')) expect([...line].length).toBeLessThanOrEqual(59);
  });

  it('a terminal 60 columns wide, -recursive: under the root, continuation lines indented 6 (packages 8)', async () => {
    const r = await onTerminal([...VERIFY, '-recursive'], tree, 60);
    expect(r.code).toBe(1);
    const lines = r.stdout.split('\n');
    for (const line of lines) expect([...line].length).toBeLessThanOrEqual(59);
    // Each package line, its continuation under the text after "- ".
    expect(lines.slice(1, 1 + 2 * PACKAGES.length)).toEqual(
      PACKAGES.flatMap((p) => [`    - Checked ${TOOLS} 0.3.0 for`, `        ${p} (computed locally)`]),
    );
    const problems = lines.slice(1 + 2 * PACKAGES.length, lines.indexOf(''));
    expect(problems.filter((l) => l.startsWith(`    ${TOOLS} `))).toHaveLength(4);
    expect(problems.every((l) => l.startsWith(`    ${TOOLS} `) || /^ {6}\S/.test(l))).toBe(true);
    // The words, in order, are those of the one-line form.
    expect(problems.join(' ').split(/ +/).filter(Boolean)).toEqual(
      MISSING.map(problemLine).join(' ').split(/ +/).filter(Boolean),
    );
  });

  it('a real terminal (tmux, 80 columns): the screen shows whole words, no line broken by the terminal', async () => {
    const r = await runInTerminal(VERIFY, { cwd: project, env: w.env, columns: 80, rows: 40 });
    expect(r.code).toBe(1);
    expect(r.timedOut).toBe(false);
    // `after` joins the lines the terminal itself wrapped: none were.
    expect(r.after).toBe(
      `${PACKAGES.map((p) => `- Checked ${TOOLS} 0.3.0 for ${p} (computed\n    locally)\n`).join('')}${MISSING.map(
        (p) =>
          `${TOOLS} 0.3.0 ${p}: its h1:\n` +
          `  (${H1[p]}) is not in the lock file:\n` +
          `  the lock does not cover ${p}, or the package differs from the one\n` +
          `  locked (provkit lock -platform=${p} records it)\n`,
      ).join('')}\n4 problems found.`,
    );
    expect(w.tmpLeftovers()).toEqual([]);
  });
});
