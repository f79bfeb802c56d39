/**
 * The server host: a separate Node process (started by `./index.ts` with
 * `fork`) that runs the fake registries, network mirrors and file servers of
 * `../servers/` for a test, so that the provkit process under test and its
 * servers never share an event loop with each other or with the test runner.
 *
 * Protocol (IPC, `serialization: 'advanced'`, so Buffers and RegExps cross):
 * the parent sends `{ id, op, args }`, the host answers `{ id, ok, value }` or
 * `{ id, ok: false, error }`. Ops:
 * - `start` `{ kind, options }`: starts a server; the answer describes it
 *   (origin, host, CA file, …) and gives it a handle;
 * - `call` `{ handle, method, args }`: calls a method of that server
 *   (`setFault`, `clearFaults`, `setRanges`, `tamperArchive`,
 *   `paths.archive`, …; `archives.setFault` reaches the archive server);
 * - `log` `{ handle, from }`: the request log from index `from`;
 * - `connections` `{ handle }`: the connections the server (not its archive server) accepted;
 * - `close` `{ handle }`.
 *
 * Functions cannot cross a process boundary, so options and faults name them:
 * `{ $fn: NAME, arg }` wherever the servers take a function (see `FNS`).
 * The host exits when its parent goes away (IPC disconnect), so a crashed
 * test run leaves no server behind.
 */
import { startFakeNetMirror, startFakeRegistry, startServer, type TestServer } from '../servers/index.js';
import { startFakeOciRegistry, type FakeOciOptions } from '../servers/oci.js';

interface Request {
  id: number;
  op: 'start' | 'call' | 'log' | 'connections' | 'close';
  args: Record<string, unknown>;
}

type AnyServer = TestServer & Record<string, unknown>;

const servers = new Map<number, AnyServer>();
let nextHandle = 1;

/** Named functions that options and faults may use (`{ $fn, arg }`). */
const FNS: Record<string, (arg: unknown) => unknown> = {
  /** Fault body: the original plus `arg` bytes of 0x01. */
  appendJunk: (arg) => (orig: Buffer) => Buffer.concat([orig, Buffer.alloc(Number(arg ?? 1000), 1)]),
  /** Fault body: the original with one byte near its end flipped (a detached signature that no longer verifies). */
  corruptNearEnd: () => (orig: Buffer) => {
    const out = Buffer.from(orig);
    const i = Math.max(0, out.length - 8);
    out[i] = (out[i] ?? 0) ^ 0x55;
    return out;
  },
  /** Fault body: the first `arg` bytes of the original. */
  truncateTo: (arg) => (orig: Buffer) => orig.subarray(0, Number(arg)),
  /** Fault body: `arg` (a string or bytes) repeated up to `size` bytes, e.g. an endless-looking JSON. */
  repeat: (arg) => () => {
    const { text, size } = arg as { text: string; size: number };
    return Buffer.alloc(size, text);
  },
  /**
   * Fault body: a registry versions document listing `count` versions
   * `0.N.0` (three platforms each) besides the real ones, e.g. 50 MB of
   * valid JSON.
   */
  manyVersions: (arg) => (orig: Buffer) => {
    const { count } = arg as { count: number };
    const doc = JSON.parse(orig.toString('utf8')) as { versions: unknown[] };
    const platforms = [
      { os: 'linux', arch: 'amd64' },
      { os: 'darwin', arch: 'arm64' },
      { os: 'windows', arch: 'amd64' },
    ];
    for (let i = 1; i <= count; i++) doc.versions.push({ version: `0.${i}.0`, protocols: ['5.0'], platforms });
    return Buffer.from(JSON.stringify(doc));
  },
  /** downloadTransform: overwrite fields of the download response. */
  downloadSet: (arg) => (body: Record<string, unknown>) => ({ ...body, ...(arg as Record<string, unknown>) }),
  /** downloadTransform: rewrite `download_url` by a regular-expression replacement `{ from, to }`. */
  downloadUrlReplace: (arg) => (body: Record<string, unknown>) => {
    const { from, to } = arg as { from: string; to: string };
    return { ...body, download_url: String(body['download_url']).replace(new RegExp(from), to) };
  },
  /** shasumsTransform: Windows line ends. */
  crlf: () => (doc: string) => doc.replace(/\n/g, '\r\n'),
};

/** Replaces `{ $fn, arg }` objects by the named functions, recursively. */
function revive(value: unknown): unknown {
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  if (Array.isArray(value)) return value.map(revive);
  if (value !== null && typeof value === 'object' && !(value instanceof RegExp)) {
    const o = value as Record<string, unknown>;
    if (typeof o['$fn'] === 'string') {
      const f = FNS[o['$fn']];
      if (!f) throw new Error(`unknown host function ${o['$fn']}`);
      return f(o['arg']);
    }
    return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, revive(v)]));
  }
  return value;
}

function describe(handle: number, s: AnyServer): Record<string, unknown> {
  const archives = s['archives'] as TestServer | undefined;
  return {
    handle,
    origin: s.origin,
    url: s.url,
    host: s.host,
    port: s.port,
    caPath: s.caPath,
    caPem: s.caPem,
    providersUrl: s['providersUrl'],
    archivesOrigin: archives?.origin ?? s.origin,
    keyIds: s['keyIds'],
  };
}

async function handle(req: Request): Promise<unknown> {
  const a = req.args;
  switch (req.op) {
    case 'start': {
      const options = revive(a['options']) as Record<string, unknown>;
      let s: AnyServer;
      switch (a['kind']) {
        case 'registry':
          s = (await startFakeRegistry(
            options as unknown as Parameters<typeof startFakeRegistry>[0],
          )) as unknown as AnyServer;
          break;
        case 'net-mirror':
          s = (await startFakeNetMirror(
            options as unknown as Parameters<typeof startFakeNetMirror>[0],
          )) as unknown as AnyServer;
          break;
        case 'oci':
          // Issue 16: a fake OCI registry serving hostile content as given (servers/oci.ts).
          s = (await startFakeOciRegistry(options as unknown as FakeOciOptions)) as unknown as AnyServer;
          break;
        case 'files': {
          // A static file server: `files` maps decoded pathnames to bodies.
          const files = new Map(Object.entries((options['files'] ?? {}) as Record<string, Buffer | string>));
          const contentType =
            typeof options['contentType'] === 'string' ? options['contentType'] : 'application/octet-stream';
          s = (await startServer({
            tls: options['tls'] !== false,
            handler: (_req, url) => {
              const body = files.get(decodeURIComponent(url.pathname));
              return body === undefined ? undefined : { headers: { 'content-type': contentType }, body };
            },
          })) as unknown as AnyServer;
          break;
        }
        default:
          throw new Error(`unknown server kind ${String(a['kind'])}`);
      }
      const h = nextHandle++;
      servers.set(h, s);
      return describe(h, s);
    }
    case 'call': {
      const s = servers.get(Number(a['handle']));
      if (!s) throw new Error(`no server ${String(a['handle'])}`);
      const path = String(a['method']).split('.');
      let self: Record<string, unknown> = s;
      // `archives.` reaches the archive server, which is the server itself unless it has a separate one.
      for (const part of path.slice(0, -1)) self = (self[part] as Record<string, unknown> | undefined) ?? self;
      const fn = self[path[path.length - 1] ?? ''];
      if (typeof fn !== 'function') throw new Error(`no method ${String(a['method'])}`);
      return await (fn as (...x: unknown[]) => unknown).apply(self, revive(a['args'] ?? []) as unknown[]);
    }
    case 'log': {
      const s = servers.get(Number(a['handle']));
      if (!s) throw new Error(`no server ${String(a['handle'])}`);
      const archives = s['archives'] as TestServer | undefined;
      const from = Number(a['from'] ?? 0);
      const main = s.log.slice(from).map((r) => ({ ...r, server: 'main' }));
      if (archives && archives !== (s as TestServer) && archives.log !== s.log) {
        return { main, archives: archives.log.map((r) => ({ ...r, server: 'archives' })) };
      }
      return { main, archives: [] };
    }
    case 'connections': {
      const s = servers.get(Number(a['handle']));
      if (!s) throw new Error(`no server ${String(a['handle'])}`);
      return s.connections;
    }
    case 'close': {
      const s = servers.get(Number(a['handle']));
      servers.delete(Number(a['handle']));
      await s?.close();
      return true;
    }
  }
}

process.on('message', (msg: Request) => {
  handle(msg).then(
    (value) => process.send?.({ id: msg.id, ok: true, value: value === undefined ? null : value }),
    (err: unknown) =>
      process.send?.({
        id: msg.id,
        ok: false,
        error: err instanceof Error ? `${err.message}\n${err.stack ?? ''}` : String(err),
      }),
  );
});
// One bad request must not take down every server of the run: report and go on.
process.on('uncaughtException', (err) => {
  process.stderr.write(`server host: uncaught ${err.stack ?? String(err)}\n`);
});
process.on('disconnect', () => {
  void Promise.all([...servers.values()].map((s) => s.close())).finally(() => process.exit(0));
});
process.send?.({ id: 0, ok: true, value: 'ready' });
