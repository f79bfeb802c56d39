// Issue 14 (-json without gaps): every command's -json stream, successes and
// failures, conforms to the one schema (test/support/json-ui-schema.ts) and
// starts with the version message. runCli checks every -json run of the
// suite against that schema; this file makes sure each command is among them,
// and checks a -json-into file the same way. provkit runs as a child process.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { e2eWorkspace, runCli, type E2eWorkspace } from '../support/e2e.js';
import { checkedStreams, jsonUiStreamProblems } from '../support/json-ui-schema.js';
import { makeProvider } from '../support/servers/packages.js';

const HOST = 'registry.example.test';
const CONFIG = `terraform {\n  required_providers {\n    demo = {\n      source  = "${HOST}/acme/demo"\n      version = "~> 1.0"\n    }\n  }\n}\n`;

let w: E2eWorkspace;
let fsm: string;

beforeAll(async () => {
  w = e2eWorkspace();
  fsm = w.project('fs-mirror');
  const p = await makeProvider('acme', 'demo', ['1.0.0'], ['linux_amd64']);
  const dir = join(fsm, HOST, 'acme', 'demo');
  mkdirSync(dir, { recursive: true });
  for (const v of p.versions)
    for (const pkg of v.packages)
      writeFileSync(join(dir, `terraform-provider-demo_${v.version}_${pkg.platform}.zip`), pkg.zip);
});
afterAll(() => w.remove());

const types = (stdout: string): string[] =>
  stdout
    .trimEnd()
    .split('\n')
    .map((l) => (JSON.parse(l) as { type: string }).type);

describe('every command’s -json stream conforms to the one schema, failures included', () => {
  it('lock, mirror, install, verify, bundle: success and failure', { timeout: 120_000 }, async () => {
    const before = checkedStreams.count;
    const p = w.project('all', { 'main.tf': CONFIG });
    const runs: Array<[string[], number]> = [
      [['lock', '-json', `-fs-mirror=${fsm}`, '-platform=linux_amd64'], 0],
      [['lock', '-json', `-fs-mirror=${fsm}`, '-platform=windows_386'], 1],
      [['mirror', '-json', `-fs-mirror=${fsm}`, '-platform=linux_amd64', 'out'], 0],
      [['mirror', '-json', `-fs-mirror=${fsm}`, '-platform=windows_386', 'out2'], 1],
      [['install', '-json', `-fs-mirror=${fsm}`, '-platform=linux_amd64'], 0],
      [['verify', '-json', '-mirror=out', '-platform=linux_amd64'], 0],
      [['verify', '-json', '-platform=linux_amd64'], 1],
      [['bundle', 'create', '-json', `-fs-mirror=${fsm}`, '-platform=linux_amd64', 'b.tar'], 0],
      [['bundle', 'import', '-json', 'missing.tar'], 1],
      [['lock', '-json', '-platfrom=linux_amd64'], 1],
      [['lock', '-json', '-fs-mirror='], 1],
      [['-json', 'nosuchcommand'], 1],
      [['serve', '-json'], 1],
    ];
    for (const [args, code] of runs) {
      const r = await runCli(args, { cwd: p, env: w.env });
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(code);
      expect(types(r.stdout)[0], args.join(' ')).toBe('version');
      if (code === 1) expect(types(r.stdout), args.join(' ')).toContain('diagnostic');
      // stdout is the JSON stream: nothing of it on stderr.
      expect(r.stderr, args.join(' ')).toBe('');
    }
    // runCli checked each stream against the schema (it rejects otherwise).
    expect(checkedStreams.count - before).toBe(runs.length);
    expect(w.tmpLeftovers()).toEqual([]);
  });

  it(
    '-json-into=FILE: human output on the terminal, the stream in FILE (OpenTofu 1.12)',
    { timeout: 60_000 },
    async () => {
      const p = w.project('into', { 'main.tf': CONFIG });
      const r = await runCli(['lock', '-json-into=stream.json', `-fs-mirror=${fsm}`, '-platform=linux_amd64'], {
        cwd: p,
        env: w.env,
      });
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('Success!');
      const text = readFileSync(join(p, 'stream.json'), 'utf8');
      expect(jsonUiStreamProblems(text)).toEqual([]);
      expect(types(text)).toEqual(expect.arrayContaining(['version', 'package_fetch_complete', 'summary']));
      const both = await runCli(['lock', '-json', '-json-into=x.json'], { cwd: p, env: w.env });
      expect(both.code).toBe(1);
      expect(both.stdout).toContain('The -json and -json-into arguments are mutually exclusive');
    },
  );
});
