// The fault matrix at the process boundary (issue 11): every URL kind a
// command fetches × every network fault × every command that fetches, run as
// users run provkit (`bin/provkit.js` as a child process) against servers in
// another process (test/support/remote). Generated, not hand-written.
//
// After each run, one of two outcomes and nothing else:
// - success with the result of a fault-free run (byte for byte, once the
//   server's port is normalised away): required when the fault happens once
//   and is one a client must ride out (5xx, 429, reset, a dropped or stalled
//   body, a short body);
// - a diagnostic (`Error: …`, no stack trace), exit 1, the state on disk
//   exactly as before the run, nothing left in TMPDIR, no `.partial`.
// A persistent fault must end in the second.
//
// Each cell starts its own fake registry or network mirror (in the server
// host process), so cells run concurrently without sharing fault counters.
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import tar from 'tar-stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { leftovers, snapshot } from '../faults/support.js';
import { recordFault } from '../faults/report.js';
import { e2eWorkspace, requiresTf, runCli, type CliResult, type E2eWorkspace } from '../support/e2e.js';
import { startHost, type RemoteFault, type RemoteServer, type ServerHost } from '../support/remote/index.js';
import type { FakeProvider } from '../support/servers/packages.js';
import { buildZip } from '../support/zip-writer.js';

const NS = 'acme';
const TYPE = 'demo';
const V = '1.1.0';
const PLAT = 'linux_amd64';
/** The provider host a network mirror serves (any name: the mirror answers for it). */
const MIRROR_HOST = 'registry.example.test';
const OLD_LOCK =
  '# This file is maintained automatically by "tofu init".\n# Manual edits may be lost in future updates.\n';

type Command = 'lock' | 'mirror' | 'install' | 'bundle create';
const COMMANDS: Command[] = ['lock', 'mirror', 'install', 'bundle create'];

interface UrlKind {
  name: string;
  source: 'registry' | 'net-mirror';
  path(s: RemoteServer): Promise<string>;
  on: 'main' | 'archives';
}

const KINDS: UrlKind[] = [
  { name: 'discovery', source: 'registry', on: 'main', path: () => Promise.resolve('/.well-known/terraform.json') },
  { name: 'versions', source: 'registry', on: 'main', path: (s) => s.path('versions', NS, TYPE) },
  { name: 'download metadata', source: 'registry', on: 'main', path: (s) => s.path('download', NS, TYPE, V, PLAT) },
  { name: 'SHA256SUMS', source: 'registry', on: 'archives', path: (s) => s.path('shasums', NS, TYPE, V) },
  { name: 'signature', source: 'registry', on: 'archives', path: (s) => s.path('signature', NS, TYPE, V) },
  { name: 'archive', source: 'registry', on: 'archives', path: (s) => s.path('archive', NS, TYPE, V, PLAT) },
  { name: 'mirror index', source: 'net-mirror', on: 'main', path: (s) => s.path('index', MIRROR_HOST, NS, TYPE) },
  {
    name: 'mirror version file',
    source: 'net-mirror',
    on: 'main',
    path: (s) => s.path('version', MIRROR_HOST, NS, TYPE, V),
  },
  {
    name: 'mirror archive',
    source: 'net-mirror',
    on: 'main',
    path: (s) => s.path('archive', MIRROR_HOST, NS, TYPE, V, PLAT),
  },
];

interface FaultKind {
  name: string;
  fault: RemoteFault;
  /** Once is survivable: a client must retry or resume. */
  transient: boolean;
}

const FAULTS: FaultKind[] = [
  { name: 'HTTP 500', fault: { kind: 'status', status: 500 }, transient: true },
  {
    name: 'HTTP 503 with Retry-After',
    fault: { kind: 'status', status: 503, headers: { 'retry-after': '1' } },
    transient: true,
  },
  { name: 'HTTP 429', fault: { kind: 'status', status: 429, headers: { 'retry-after': '0' } }, transient: true },
  { name: 'reset before headers', fault: { kind: 'reset' }, transient: true },
  { name: 'dropped mid-body', fault: { kind: 'drop' }, transient: true },
  { name: 'stall before headers', fault: { kind: 'stall', phase: 'headers' }, transient: true },
  { name: 'stall mid-body', fault: { kind: 'stall', phase: 'body' }, transient: true },
  { name: 'truncated (close-delimited)', fault: { kind: 'truncate' }, transient: false },
  { name: 'wrong Content-Length', fault: { kind: 'wrong-length', delta: 9 }, transient: true },
];

const MODES = ['once', 'always'] as const;

let host: ServerHost;
let provider: FakeProvider;
let w: E2eWorkspace;
/** The fault-free result of each (command, source), normalised. */
const baseline = new Map<string, unknown>();

beforeAll(async () => {
  host = await startHost();
  // ~256 KiB stored and incompressible, so a fault can land mid-body.
  const bulk = randomBytes(256 * 1024);
  provider = {
    hostname: MIRROR_HOST,
    namespace: NS,
    type: TYPE,
    versions: [
      {
        version: V,
        packages: [
          {
            platform: PLAT,
            zip: await buildZip([
              {
                name: `terraform-provider-${TYPE}_v${V}`,
                data: Buffer.concat([Buffer.from('#!/bin/sh\n'), bulk]),
                unixMode: 0o100755,
                method: 0,
              },
              { name: 'README.md', data: 'fault matrix\n' },
            ]),
          },
        ],
      },
    ],
  };
  // Any CA works: every server of the host shares its test CA.
  const probe = await host.files({ files: {} });
  w = e2eWorkspace(probe.caPath, { PROVKIT_HTTP_TUNING: 'connect=2000,idle=1000,backoff=20,retry-after-max=50' });
  await probe.close();
  for (const source of ['registry', 'net-mirror'] as const) {
    for (const command of COMMANDS) {
      const server = await start(source);
      const cell = prepare(`baseline-${source}-${command.replace(' ', '-')}`, command, source, server);
      const r = await runCli(cell.args, { cwd: cell.dir, env: cell.env });
      expect(r.stderr, `${command} from ${source}`).toBe('');
      expect(r.code).toBe(0);
      baseline.set(`${command} ${source}`, await cell.state());
      await server.close();
    }
  }
}, 120_000);
afterAll(async () => {
  await host.close();
  w.remove();
});

function start(source: 'registry' | 'net-mirror'): Promise<RemoteServer> {
  return source === 'registry' ? host.registry({ providers: [provider] }) : host.netMirror({ providers: [provider] });
}

interface Cell {
  dir: string;
  /** The cell's own TMPDIR (cells run concurrently). */
  tmp: string;
  env: Record<string, string>;
  args: string[];
  /** The state the command may change, with the server's port normalised away. */
  state(): Promise<unknown>;
}

/** Reads a tar into `name → sha256` (contents with the host normalised). */
async function tarListing(path: string, norm: (s: string) => string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const extract = tar.extract();
  const done = new Promise<void>((resolve, reject) => {
    extract.on('entry', (header, stream, next) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: unknown) => {
        chunks.push(c as Buffer);
      });
      stream.on('end', () => {
        const body = Buffer.concat(chunks);
        let text =
          header.name.endsWith('.json') || header.name.endsWith('.hcl') ? norm(body.toString('utf8')) : undefined;
        // The manifest's digests of text members cover the port; those members are compared as text.
        if (text !== undefined && /manifest/.test(header.name)) {
          const doc = JSON.parse(text) as { members?: Array<{ name: string; sha256: string }> };
          for (const m of doc.members ?? []) if (/\.(json|hcl)$/.test(m.name)) m.sha256 = 'normalised';
          text = JSON.stringify(doc, null, 2);
        }
        out[norm(header.name)] = text ?? createHash('sha256').update(body).digest('hex');
        next();
      });
    });
    extract.on('finish', resolve);
    extract.on('error', reject);
  });
  createReadStream(path).pipe(extract);
  await done;
  return out;
}

function prepare(name: string, command: Command, source: 'registry' | 'net-mirror', server: RemoteServer): Cell {
  const providerHost = source === 'registry' ? server.host : MIRROR_HOST;
  const norm = (s: string): string =>
    s.split(server.host).join('HOST').split(encodeURIComponent(server.host)).join('HOST');
  const dir = w.project(name, {
    'main.tf': requiresTf({ demo: `${providerHost}/${NS}/${TYPE}` }),
    '.terraform.lock.hcl': OLD_LOCK,
  });
  const via = source === 'net-mirror' ? [`-net-mirror=${server.url}`] : [];
  const tmp = join(w.base, `tmp-${name}`);
  mkdirSync(tmp);
  const env = { ...w.env, TMPDIR: tmp };
  const base = { dir, tmp, env };
  const normSnap = async (root: string): Promise<unknown> => {
    const snap = await snapshot(root);
    if (snap === 'absent') return 'absent';
    return Object.fromEntries(Object.entries(snap).map(([k, v]) => [norm(k), norm(v)]));
  };
  const lockText = async (): Promise<string> => norm(await readFile(join(dir, '.terraform.lock.hcl'), 'utf8'));
  switch (command) {
    case 'lock':
      return { ...base, args: ['lock', `-platform=${PLAT}`, ...via], state: lockText };
    case 'mirror':
      return {
        ...base,
        args: ['mirror', `-platform=${PLAT}`, ...via, 'out'],
        state: async () => ({ out: await normSnap(join(dir, 'out')), lock: await lockText() }),
      };
    case 'install':
      return {
        ...base,
        args: ['install', `-platform=${PLAT}`, ...via],
        state: async () => ({ tree: await normSnap(join(dir, '.terraform')), lock: await lockText() }),
      };
    case 'bundle create':
      return {
        ...base,
        args: ['bundle', 'create', `-platform=${PLAT}`, ...via, 'out.tar'],
        state: async () => (existsSync(join(dir, 'out.tar')) ? tarListing(join(dir, 'out.tar'), norm) : 'absent'),
      };
  }
}

const STACK = /\n\s+at .+\(.*:\d+:\d+\)|node:internal|\bat async\b/;

interface Row {
  kind: UrlKind;
  fault: FaultKind;
  mode: (typeof MODES)[number];
  command: Command;
}

const ROWS: Row[] = KINDS.flatMap((kind) =>
  FAULTS.flatMap((fault) => MODES.flatMap((mode) => COMMANDS.map((command) => ({ kind, fault, mode, command })))),
);

function outcome(r: CliResult): string {
  if (r.code === 0) return 'exit 0';
  const first = /Error: ([^\n]*)/.exec(r.stderr)?.[1] ?? r.stderr.split('\n')[0] ?? '';
  return `exit ${r.code}: ${first.slice(0, 80)}`;
}

describe.concurrent(
  `fault matrix (${ROWS.length} runs: ${KINDS.length} URL kinds × ${FAULTS.length} faults × ${MODES.length} × ${COMMANDS.length} commands)`,
  () => {
    it.concurrent.each(ROWS)(
      '$command: $fault.name $mode on the $kind.name URL ($kind.source)',
      async ({ kind, fault, mode, command }) => {
        const server = await start(kind.source);
        try {
          const cell = prepare(
            `${command}-${kind.name}-${fault.name}-${mode}`.replace(/[^\w-]+/g, '_'),
            command,
            kind.source,
            server,
          );
          const before = await cell.state();
          await server.setFault(
            await kind.path(server),
            { ...fault.fault, ...(mode === 'once' ? { times: 1 } : {}) },
            kind.on,
          );
          const r = await runCli(cell.args, { cwd: cell.dir, env: cell.env, timeoutMs: 45_000 });
          const log = await server.log();
          const after = await cell.state();
          const hit = log.some((q) => q.fault !== undefined);
          recordFault({
            group: 'matrix',
            fault: `${fault.name} ${mode} on ${kind.name} (${kind.source})`,
            command: `provkit ${command}`,
            outcome: outcome(r),
            state:
              r.code === 0
                ? 'as a clean run'
                : JSON.stringify(after) === JSON.stringify(before)
                  ? 'unchanged'
                  : 'CHANGED',
            rerun: '-',
          });
          const diag = `${command} ${kind.name} ${fault.name} ${mode}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`;
          expect(r.timedOut, diag).toBe(false);
          expect(r.stderr, diag).not.toMatch(STACK);
          expect(readdirSync(cell.tmp), diag).toEqual([]);
          expect(await leftovers(cell.dir), diag).toEqual([]);
          if (r.code === 0) {
            expect(after, diag).toEqual(baseline.get(`${command} ${kind.source}`));
            // A discovery/versions fault may be skipped only where the URL is not needed (it always is here).
            expect(hit, `${diag}\nthe fault was never triggered`).toBe(true);
          } else {
            expect(r.code, diag).toBe(1);
            expect(r.stderr, diag).toMatch(/Error: \S/);
            expect(after, diag).toEqual(before);
          }
          if (mode === 'always') expect(r.code, diag).toBe(1);
          if (mode === 'once' && fault.transient) expect(r.code, diag).toBe(0);
        } finally {
          await server.close();
        }
      },
    );
  },
);
