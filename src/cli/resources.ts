/**
 * The resources of one command run, in one place: the HTTP client, the hash
 * pool, the hash store, the CLI configuration and the source, each opened
 * when the command first asks for it (nothing is set up that the run does
 * not use: a `verify` without an OCI mirror makes no HTTP client, a
 * `bundle import` into a directory none; start-up time counts, bench/PROFILE.md),
 * and closed exactly once, in the reverse order of opening, however the run
 * ends: success, a failure, an exception, or an interrupt (which aborts
 * {@link RunResources.signal}; the body then unwinds through
 * {@link withResources}, which closes). Anything else a run opens that must
 * be closed with them (a fetch-and-hash cache) is handed over with
 * {@link RunResources.defer}.
 */
import type { LookupFunction } from 'node:net';
import { resolve } from 'node:path';

import type { Flavor } from '../addresses/index.js';
import type { CliConfig } from '../cliconfig/index.js';
import {
  createHashPool,
  type HashPool,
  type HashPoolOptions,
  type HashStore,
  openHashStore,
  type ZipLimits,
} from '../hashing/index.js';
import { parseZipLimits } from '../hashing/zip-reader.js';
import { createNodeFetch, type FetchLike, HttpClient, httpTuningFromEnv } from '../net/index.js';
import {
  FilesystemMirrorSource,
  hashStoreDir,
  type SignatureSwitches,
  signatureSwitchesFromEnv,
  installationSourceFor,
  netMirrorSourceFor,
  ociMirrorSourceFor,
  registrySourceFor,
  type Source,
  type SourceContext,
} from '../sources/index.js';
import { runInterruptible, stopSignal } from './interrupt.js';
import type { CliIO, GlobalOptions } from './io.js';
import { type MirrorFlags, mirrorDirectoryDiagnostic, ociTemplate } from './mirror-flags.js';
import type { Renderer } from './render.js';
import { loadCliConfigFor, sourceContext } from './wiring.js';
import { hasErrors } from '../hcl/index.js';

/** What an HTTP client's connections go through (`serve -upstream`'s destination guard, src/pull-through/destinations.ts). */
export interface HttpGuard {
  wrap(fetch: FetchLike): FetchLike;
  readonly lookup: LookupFunction;
}

/** An HTTP client (proxies, CAs and tuning from the environment); `close` frees its connections. */
function httpFor(io: CliIO, guard?: HttpGuard): { http: HttpClient; close: () => void } {
  const nodeFetch = createNodeFetch({ env: io.env, ...(guard ? { lookup: guard.lookup } : {}) });
  return {
    http: new HttpClient({
      fetch: guard ? guard.wrap(nodeFetch.fetch) : nodeFetch.fetch,
      ...httpTuningFromEnv(io.env),
    }),
    close: () => nodeFetch.close(),
  };
}

/** See the module comment. */
export class RunResources {
  private readonly closers: Array<() => void | Promise<void>> = [];
  private closing: Promise<void> | undefined;
  private httpClient: HttpClient | undefined;
  private hashPool: HashPool | undefined;
  private store: { hashStore?: HashStore } | undefined;
  private limits: Required<ZipLimits> | undefined;
  private switches: SignatureSwitches | undefined;
  /** The CLI configuration per flavor (the flavor decides which files are read); usually one. */
  private readonly cli = new Map<Flavor, Promise<CliConfig>>();
  /** CLI-configuration diagnostics already rendered (two flavors may read the same file). */
  private readonly cliDiagnostics = new Set<string>();

  constructor(
    readonly io: CliIO,
    readonly globals: GlobalOptions,
    /** Aborted by an interrupt (SIGINT, SIGTERM, SIGHUP, closed output); never, for a run that is not interruptible. */
    readonly signal: AbortSignal = new AbortController().signal,
  ) {}

  /** The run's HTTP client (proxies, CAs and tuning from the environment), made on first use. */
  http(): HttpClient {
    if (this.httpClient === undefined) {
      const { http, close } = httpFor(this.io);
      this.httpClient = http;
      this.defer(close);
    }
    return this.httpClient;
  }

  /**
   * Another HTTP client of the run, whose every connection goes through
   * `guard` (`serve -upstream`'s destination guard: the origins' fetches, not
   * the store's), closed with the run.
   */
  guardedHttp(guard: HttpGuard): HttpClient {
    const { http, close } = httpFor(this.io, guard);
    this.defer(close);
    return http;
  }

  /**
   * The run's hash pool, made on first use with the first caller's options
   * (its workers start when a job needs one: hashing/pool.ts).
   */
  pool(options: HashPoolOptions = {}): HashPool {
    if (this.hashPool === undefined) {
      const pool = createHashPool(options);
      this.hashPool = pool;
      this.defer(() => pool.close());
    }
    return this.hashPool;
  }

  /**
   * The archive limits of `PROVKIT_ZIP_LIMITS` (`entries=N,bytes=N[K|M|G],ratio=N`;
   * see docs/reliability.md), or the defaults.
   *
   * @throws ProvkitError USAGE when the variable is malformed
   */
  zipLimits(): Required<ZipLimits> {
    this.limits ??= parseZipLimits(this.io.env['PROVKIT_ZIP_LIMITS'] ?? '');
    return this.limits;
  }

  /**
   * The hash store of `lock`, `mirror`, `install`, `verify` and `serve
   * -upstream` (see `hashStoreDir`), as an option (none when disabled; option
   * objects have exact optional properties).
   */
  hashStore(): { hashStore?: HashStore } {
    if (this.store === undefined) {
      const dir = hashStoreDir(this.io.env, this.globals.cwd);
      this.store = dir === undefined ? {} : { hashStore: openHashStore(dir) };
    }
    return this.store;
  }

  /**
   * OpenTofu's signature switches (`OPENTOFU_ENFORCE_GPG_VALIDATION`,
   * `OPENTOFU_ENFORCE_GPG_EXPIRATION`), read from the run's environment once,
   * here, and passed to the library as data: the sources' signature policy
   * and which reported hashes a lock or an install records.
   */
  signatures(): SignatureSwitches {
    this.switches ??= signatureSwitchesFromEnv(this.io.env);
    return this.switches;
  }

  /**
   * The factory's context for this run (src/cli/wiring.ts), with the run's
   * HTTP client; `flavor`: a root module's of `lock -recursive` (default the run's).
   */
  sourceContext(flavor: Flavor = this.globals.flavor): SourceContext {
    return sourceContext(this.io, this.flavored(flavor), this.http(), this.signatures());
  }

  /** The run's global options with another flavor (a root module's). */
  private flavored(flavor: Flavor): GlobalOptions {
    return flavor === this.globals.flavor ? this.globals : { ...this.globals, flavor };
  }

  /**
   * The CLI configuration, read once per run (per flavor: `flavor`, default
   * the run's), its diagnostics rendered once; undefined when it has errors
   * (already rendered).
   */
  async cliConfig(ui: Renderer, flavor: Flavor = this.globals.flavor): Promise<CliConfig | undefined> {
    let loading = this.cli.get(flavor);
    if (!loading) {
      loading = loadCliConfigFor(this.io, this.flavored(flavor));
      this.cli.set(flavor, loading);
    }
    const cli = await loading;
    for (const d of cli.diagnostics) {
      const key = `${d.severity}\n${d.summary}\n${d.detail}`;
      if (this.cliDiagnostics.has(key)) continue;
      this.cliDiagnostics.add(key);
      // Shown without its range, as terraform shows the CLI configuration's diagnostics.
      const { range: _range, ...shown } = d;
      ui.diagnostic(shown);
    }
    return hasErrors(cli.diagnostics) ? undefined : cli;
  }

  /**
   * The source of the run: `-fs-mirror`, `-net-mirror` or `-oci-mirror` when
   * given; otherwise, with the CLI configuration, the origin registries
   * (`lock`, `mirror`, `bundle`: the reference ignores provider_installation
   * there) or the configured installation methods (`install`, as init).
   * `-net-mirror` and `-oci-mirror` also read the CLI configuration, for the
   * mirror host's credentials (as the reference; see `netMirrorSourceFor`,
   * and OpenTofu's OCICredentialsPolicyBuilder). Undefined when the CLI
   * configuration has errors (already rendered). `flavor`: the flavor whose
   * rules the source follows (a root module's of `lock -recursive`; default
   * the run's).
   */
  async source(
    flags: MirrorFlags,
    otherwise: 'registry' | 'installation',
    ui: Renderer,
    flavor: Flavor = this.globals.flavor,
  ): Promise<Source | undefined> {
    if (flags.fsMirror !== undefined) {
      const baseDir = resolve(this.globals.cwd, flags.fsMirror);
      // Lock, mirror and bundle always read the mirror: a wrong directory is said before any work.
      // An install may need nothing from it (every package already installed); its failures say it once.
      const problem = otherwise === 'registry' ? await mirrorDirectoryDiagnostic(baseDir, '-fs-mirror') : undefined;
      if (problem !== undefined) {
        ui.diagnostic(problem);
        return undefined;
      }
      return new FilesystemMirrorSource({ baseDir, flavor });
    }
    const cli = await this.cliConfig(ui, flavor);
    if (cli === undefined) return undefined;
    const context = this.sourceContext(flavor);
    if (flags.netMirror !== undefined) return netMirrorSourceFor(flags.netMirror, context, cli);
    if (flags.ociMirror !== undefined) return ociMirrorSourceFor(ociTemplate(flags.ociMirror), context, cli);
    return otherwise === 'registry' ? registrySourceFor(context, cli) : installationSourceFor(context, cli);
  }

  /** Closes `close` with the run's resources: after everything opened later, before everything opened earlier. */
  defer(close: () => void | Promise<void>): void {
    if (this.closing !== undefined) throw new Error('internal: a resource opened after its run was closed');
    this.closers.push(close);
  }

  /**
   * Closes everything, last opened first, once (later calls wait for the
   * first). Every closer runs even when one fails; the first failure is
   * then thrown.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      let failure: { err: unknown } | undefined;
      for (const close of this.closers.reverse()) {
        try {
          // eslint-disable-next-line no-await-in-loop -- in reverse order of opening, one after another
          await close();
        } catch (err) {
          failure ??= { err };
        }
      }
      this.closers.length = 0;
      if (failure) throw failure.err;
    })();
    return this.closing;
  }
}

/** Runs `body` with a run's resources, closing them when it ends, however it ends. */
export async function withResources<T>(
  io: CliIO,
  globals: GlobalOptions,
  body: (r: RunResources) => Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  const r = new RunResources(io, globals, signal);
  try {
    return await body(r);
  } finally {
    await r.close();
  }
}

/**
 * A command body under {@link runInterruptible} with its resources: an
 * interrupt aborts `r.signal`, the body unwinds, the resources are closed,
 * and then the interrupt is reported (exit 130, 143 or 129).
 */
export function runInterruptibleWith(
  io: CliIO,
  globals: GlobalOptions,
  what: string,
  body: (r: RunResources) => Promise<number>,
  changed?: () => string,
): Promise<number> {
  return runInterruptible(io, what, (signal) => withResources(io, globals, body, signal), changed);
}

/**
 * {@link runInterruptibleWith} for a run that puts its results in place one by one (each whole: a root's lock
 * file, an installed package): the body calls `landed()` as each is in place, and an interrupt is reported as
 * leaving "nothing was changed" until one has, then with `said(n)` for the `n` that had.
 */
export function runInterruptibleCounting(
  io: CliIO,
  globals: GlobalOptions,
  what: string,
  said: (n: number) => string,
  body: (r: RunResources, landed: () => void) => Promise<number>,
): Promise<number> {
  let n = 0;
  const landed = (): void => {
    n += 1;
  };
  return runInterruptibleWith(
    io,
    globals,
    what,
    (r) => body(r, landed),
    () => (n === 0 ? 'nothing was changed' : said(n)),
  );
}

/** A server a command started (`serve`, `serve -upstream`): closed after the requests in flight. */
export interface RunningServer {
  close(): Promise<void>;
}

/** How a server's run ends: stopped by a signal, or failed to start or to stop. */
export interface ServerEnd {
  /** After the server closed on the first SIGINT or SIGTERM (the run then returns 0). */
  stopped(signal: 'SIGINT' | 'SIGTERM'): void;
  /** The server could not start or stop: reports it and returns the exit code. */
  failed(err: unknown): number;
}

/**
 * A server's run, the one lifecycle of `serve` and `serve -upstream`:
 * `start` opens the server with the run's resources; it serves until the
 * first SIGINT or SIGTERM (src/cli/interrupt.ts `stopSignal`), is closed
 * after the requests in flight, and then the run's resources are closed,
 * last opened first, however it ends.
 */
export function serveUntilStopped(
  io: CliIO,
  globals: GlobalOptions,
  start: (r: RunResources) => Promise<RunningServer>,
  end: ServerEnd,
): Promise<number> {
  return withResources(io, globals, async (r) => {
    try {
      const server = await start(r);
      const signal = await stopSignal(io.signals);
      await server.close();
      end.stopped(signal);
      return 0;
    } catch (err) {
      return end.failed(err);
    }
  });
}
