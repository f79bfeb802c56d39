/**
 * Fake registries, network mirrors and file servers in *another process*
 * (`./host.ts`), for end-to-end tests that run `bin/provkit.js` as a child:
 * the provkit process, its servers and the test runner then each have their
 * own event loop, so what the user sees (exit codes, a process kept alive or
 * not by its own timers, signals) is what the test sees. Servers that live in
 * the test runner keep a provkit-in-process alive and hid exactly that class
 * of defect (an unsettled top-level await, exit 13).
 *
 * ```ts
 * const host = await startHost();
 * const reg = await host.registry({ providers: [await makeProvider('acme', 'demo', ['1.0.0'])] });
 * await reg.setFault(await reg.path('versions', 'acme', 'demo'), { kind: 'status', status: 500, times: 1 });
 * // spawn bin/provkit.js with SSL_CERT_FILE=reg.caPath against `${reg.host}/acme/demo`
 * const log = await reg.log();
 * await host.close();
 * ```
 *
 * Functions cannot cross the boundary: options and faults that take one name
 * it instead, `{ $fn: 'appendJunk', arg: 1000 }` (the table is in host.ts).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import type {
  Fault,
  FakeNetMirrorOptions,
  FakeRegistryOptions,
  LoggedConnection,
  LoggedRequest,
} from '../servers/index.js';
import type { FakeOciOptions } from '../servers/oci.js';

const HOST = fileURLToPath(new URL('./host.ts', import.meta.url));

/** A function named for the host (see host.ts `FNS`). */
export interface HostFn {
  $fn: string;
  arg?: unknown;
}

/** A fault as the host takes it: `replace` bodies may be a {@link HostFn}. */
export type RemoteFault =
  | Exclude<Fault, { kind: 'replace' } | { kind: 'after' }>
  | ({ kind: 'replace'; body: Buffer | string | HostFn; headers?: Record<string, string> } & { times?: number })
  | {
      kind: 'after';
      request: string | RegExp;
      count?: number;
      finished?: boolean;
      then?: RemoteFault;
      times?: number;
    };

type Remote<T> = Omit<T, 'shasumsTransform' | 'downloadTransform' | 'faults'> & {
  shasumsTransform?: HostFn;
  downloadTransform?: HostFn;
  faults?: Record<string, RemoteFault | RemoteFault[]>;
};

export type RemoteLoggedRequest = LoggedRequest & { server: 'main' | 'archives' };

/** A server running in the host process. */
export interface RemoteServer {
  readonly origin: string;
  /** Base URL with trailing slash (the mirror's base URL for a network mirror). */
  readonly url: string;
  /** `127.0.0.1:PORT`. */
  readonly host: string;
  readonly port: number;
  readonly caPath: string;
  readonly caPem: string;
  /** Registries: `ORIGIN/v1/providers/`. */
  readonly providersUrl: string;
  /** Where archives are served (another origin with `archiveHost: 'separate'`). */
  readonly archivesOrigin: string;
  readonly keyIds: string[];
  /** Arms a fault on the main server, or on the archive server with `on: 'archives'`. */
  setFault(path: string | RegExp, fault: RemoteFault, on?: 'main' | 'archives'): Promise<void>;
  /** Clears the faults of both servers. */
  clearFaults(): Promise<void>;
  setRanges(on: boolean): Promise<void>;
  /** A path of the server's `paths` table, e.g. `path('archive', 'acme', 'demo', '1.0.0', 'linux_amd64')`. */
  path(kind: string, ...args: string[]): Promise<string>;
  /** Calls any method of the server object (`tamperArchive`, `badSignature`, …). */
  call(method: string, ...args: unknown[]): Promise<unknown>;
  /** The requests both servers logged (archive server last), from the log positions of {@link mark}. */
  log(): Promise<RemoteLoggedRequest[]>;
  /** The connections the server (not its archive server) accepted, from the position of {@link mark}. */
  connections(): Promise<LoggedConnection[]>;
  /** Forgets the requests and connections logged so far (for `log` and `connections`). */
  mark(): Promise<void>;
  close(): Promise<void>;
}

export interface ServerHost {
  registry(options: Remote<FakeRegistryOptions>): Promise<RemoteServer>;
  netMirror(options: Remote<FakeNetMirrorOptions>): Promise<RemoteServer>;
  /** A fake OCI registry (servers/oci.ts): content served as given, optional Bearer tokens. */
  oci(options: FakeOciOptions): Promise<RemoteServer>;
  /** A static file server: decoded pathname → body. */
  files(options: {
    files: Record<string, Buffer | string>;
    tls?: boolean;
    contentType?: string;
  }): Promise<RemoteServer>;
  /** The host's pid (to check it is a separate process). */
  readonly pid: number;
  close(): Promise<void>;
}

interface Reply {
  id: number;
  ok: boolean;
  value?: unknown;
  error?: string;
}

/** Starts a server host process. Close it in `afterAll` (it also exits when the test process goes away). */
export async function startHost(): Promise<ServerHost> {
  const child: ChildProcess = fork(HOST, [], {
    execArgv: ['--import', 'tsx'],
    serialization: 'advanced',
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let next = 1;
  let exited = false;
  const ready = new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`server host exited with ${String(code)} before it was ready`)));
    const onReady = (m: Reply): void => {
      if (m.id === 0) {
        child.off('message', onReady);
        resolve();
      }
    };
    child.on('message', onReady);
  });
  child.on('message', (m: Reply) => {
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    if (m.ok) p.resolve(m.value);
    else p.reject(new Error(`server host: ${m.error ?? 'failed'}`));
  });
  child.on('exit', (code, signal) => {
    exited = true;
    for (const p of pending.values()) p.reject(new Error(`server host exited (${String(code ?? signal)})`));
    pending.clear();
  });
  await ready;

  const request = (op: string, args: Record<string, unknown>): Promise<unknown> =>
    new Promise((resolve, reject) => {
      if (exited) {
        reject(new Error('server host has exited'));
        return;
      }
      const id = next++;
      pending.set(id, { resolve, reject });
      child.send({ id, op, args });
    });

  const wrap = async (kind: string, options: unknown): Promise<RemoteServer> => {
    const d = (await request('start', { kind, options })) as Record<string, unknown> & { handle: number };
    const h = d.handle;
    let fromMain = 0;
    let fromArchives = 0;
    let fromConnections = 0;
    const rawConnections = async (): Promise<LoggedConnection[]> =>
      (await request('connections', { handle: h })) as LoggedConnection[];
    const call = (method: string, ...args: unknown[]): Promise<unknown> => request('call', { handle: h, method, args });
    const rawLog = async (): Promise<{ main: RemoteLoggedRequest[]; archives: RemoteLoggedRequest[] }> =>
      (await request('log', { handle: h, from: 0 })) as {
        main: RemoteLoggedRequest[];
        archives: RemoteLoggedRequest[];
      };
    return {
      origin: String(d['origin']),
      url: String(d['url']),
      host: String(d['host']),
      port: Number(d['port']),
      caPath: String(d['caPath']),
      caPem: String(d['caPem']),
      providersUrl: typeof d['providersUrl'] === 'string' ? d['providersUrl'] : '',
      archivesOrigin: String(d['archivesOrigin']),
      keyIds: (d['keyIds'] as string[] | undefined) ?? [],
      async setFault(path, fault, on = 'main') {
        await call(on === 'archives' ? 'archives.setFault' : 'setFault', path, fault);
      },
      async clearFaults() {
        await call('clearFaults');
        await call('archives.clearFaults');
      },
      async setRanges(on) {
        await call('setRanges', on);
        await call('archives.setRanges', on);
      },
      async path(kind, ...args) {
        return String(await call(`paths.${kind}`, ...args));
      },
      call,
      async log() {
        const l = await rawLog();
        return [...l.main.slice(fromMain), ...l.archives.slice(fromArchives)];
      },
      async connections() {
        return (await rawConnections()).slice(fromConnections);
      },
      async mark() {
        const l = await rawLog();
        fromMain = l.main.length;
        fromArchives = l.archives.length;
        fromConnections = (await rawConnections()).length;
      },
      async close() {
        await request('close', { handle: h });
      },
    };
  };

  return {
    pid: child.pid ?? -1,
    registry: (options) => wrap('registry', options),
    netMirror: (options) => wrap('net-mirror', options),
    oci: (options) => wrap('oci', options),
    files: (options) => wrap('files', options),
    async close() {
      if (exited) return;
      const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.disconnect();
      const t = setTimeout(() => child.kill('SIGKILL'), 5000);
      await gone;
      clearTimeout(t);
    },
  };
}
