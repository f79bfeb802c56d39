/**
 * Which credentials an OCI repository gets, as OpenTofu decides
 * (opentofu/opentofu internal/command/cliconfig/oci_credentials.go
 * `ociCredentialsPolicy`, and ociauthconfig/ `CredentialsConfigs`,
 * `docker_cli_credentials_config.go`, `credentials_specificity.go`):
 *
 * 1. The sources, in order: every `oci_credentials` block; the
 *    `oci_default_credentials` block's `docker_credentials_helper`; then,
 *    unless `discover_ambient_credentials = false`, Docker-style config files:
 *    those `docker_style_config_files` names (each must be readable), or the
 *    usual places (`$XDG_RUNTIME_DIR/containers/auth.json` on Linux,
 *    `~/.config/containers/auth.json` on macOS and Windows,
 *    `$XDG_CONFIG_HOME/containers/auth.json`, `~/.docker/config.json`,
 *    `~/.dockercfg`; unreadable ones are skipped).
 * 2. Each source offers candidates with a specificity: a repository-path
 *    prefix match (`registry/a/b` for `registry/a/b/c`: more segments win), a
 *    registry match (`auths` entries, `credHelpers`), or global
 *    (`credsStore`, the default helper). The most specific candidate wins;
 *    among equals, the first source.
 * 3. Static credentials are used as they are (`auths.*.auth` is base64 of
 *    `user:password`); a helper is run as `docker-credential-NAME get` with
 *    `https://REGISTRY` on its standard input, and answers JSON
 *    `{"Username","Secret"}` (an identity token, `Username: "<token>"`, is
 *    refused, as OpenTofu does).
 *
 * A matching candidate that cannot be used (a malformed `auth`, a failing
 * helper) fails the request (`OCI_CREDENTIALS`); nothing matching means
 * anonymous access.
 */
import { join } from 'node:path';

import { ErrorCode, ProvkitError, errorText, systemErrorText, systemErrorCode } from '../errors.js';
import type { OciCredentials, OciCredentialsLookup } from '../net/oci/auth.js';
import { parseRepositoryAddress } from '../net/oci/reference.js';
import type { HostOS } from './locations.js';
import type { CliConfig } from './model.js';
import { readRegularFile } from '../fs/read.js';
import { isRecord } from '../go/index.js';

/** Where credentials are looked for (injected, for tests). */
export interface OciCredentialsEnv {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly homeDir: string;
  readonly os: HostOS;
  /** Reads a file; rejects with an `ENOENT` error when it does not exist. */
  readonly readFile?: (path: string) => Promise<Buffer>;
  /** Runs a credential helper (default: spawns `docker-credential-NAME get`). */
  readonly runHelper?: (name: string, serverUrl: string) => Promise<HelperResult>;
}

/** What a credential helper answered. */
export type HelperResult =
  { readonly found: true; readonly username: string; readonly secret: string } | { readonly found: false };

/** One candidate for a repository. */
interface Candidate {
  readonly specificity: number;
  readonly where: string;
  readonly get: () => Promise<OciCredentials | undefined>;
}

/** A source of candidates. */
interface Source {
  readonly where: string;
  candidates(registry: string, repository: string): Array<Candidate | Error>;
}

const GLOBAL = 1;
const DOMAIN = 2;

/**
 * `ContainersAuthPropertyNameMatch`: 0 (no match), {@link DOMAIN} (the
 * registry), or DOMAIN + the number of matching path segments.
 */
export function prefixSpecificity(prefix: string, registry: string, repository: string): number {
  if (prefix === '') return 0;
  let gotRegistry = prefix;
  let gotPath = '';
  if (prefix.includes('/')) {
    try {
      const a = parseRepositoryAddress(prefix);
      gotRegistry = a.registry;
      gotPath = a.repository;
    } catch {
      return 0;
    }
  }
  if (gotRegistry !== registry) return 0;
  if (gotPath === '') return DOMAIN;
  const want = repository.split('/');
  const got = gotPath.split('/');
  if (got.length > want.length) return 0;
  for (let i = 0; i < got.length; i++) if (got[i] !== want[i]) return 0;
  return DOMAIN + got.length;
}

function helperCandidate(
  name: string,
  registry: string,
  specificity: number,
  where: string,
  env: OciCredentialsEnv,
): Candidate {
  const run = env.runHelper ?? runDockerCredentialHelper;
  return {
    specificity,
    where,
    get: async () => {
      const r = await run(name, `https://${registry}`);
      if (!r.found) return undefined;
      if (r.username === '<token>') {
        throw new ProvkitError(
          ErrorCode.OCI_CREDENTIALS,
          `${JSON.stringify(name)} credential helper returned OAuth-style credentials, but only username/password-style is allowed from a credential helper`,
        );
      }
      return { kind: 'basic', username: r.username, password: r.secret };
    },
  };
}

/** A Docker CLI-style config file (`auths`, `credHelpers`, `credsStore`). */
function dockerConfigSource(file: string, doc: Record<string, unknown>, env: OciCredentialsEnv): Source {
  const auths = isRecord(doc['auths']) ? doc['auths'] : {};
  const credHelpers = isRecord(doc['credHelpers']) ? doc['credHelpers'] : {};
  const credsStore = typeof doc['credsStore'] === 'string' ? doc['credsStore'] : '';
  return {
    where: file,
    candidates(registry, repository) {
      const out: Array<Candidate | Error> = [];
      for (const [prop, entry] of Object.entries(auths)) {
        // Entries without `auth` are what `login` leaves when a helper holds the secret.
        if (!isRecord(entry) || typeof entry['auth'] !== 'string' || entry['auth'] === '') continue;
        const specificity = prefixSpecificity(prop, registry, repository);
        if (specificity === 0) continue;
        const decoded = Buffer.from(entry['auth'], 'base64').toString('utf8');
        const colon = decoded.indexOf(':');
        if (colon < 0) {
          out.push(
            new Error(
              `auth object for ${JSON.stringify(prop)} in ${file} does not have base64-encoded username:password pair`,
            ),
          );
          continue;
        }
        const creds: OciCredentials = {
          kind: 'basic',
          username: decoded.slice(0, colon),
          password: decoded.slice(colon + 1),
        };
        out.push({ specificity, where: file, get: () => Promise.resolve(creds) });
      }
      const helper = credHelpers[registry];
      if (typeof helper === 'string' && helper !== '') out.push(helperCandidate(helper, registry, DOMAIN, file, env));
      if (credsStore !== '') out.push(helperCandidate(credsStore, registry, GLOBAL, file, env));
      return out;
    },
  };
}

/** Parses a Docker-style config file; `auth` values must be valid base64, as Go's JSON decoder requires of `[]byte`. */
function parseDockerConfig(bytes: Buffer, file: string): Record<string, unknown> {
  let doc: unknown;
  try {
    doc = JSON.parse(bytes.toString('utf8'));
  } catch (err) {
    throw new Error(`invalid JSON syntax: ${errorText(err)}`);
  }
  if (!isRecord(doc)) throw new Error('invalid JSON syntax: not an object');
  const auths = doc['auths'];
  if (isRecord(auths)) {
    for (const [prop, entry] of Object.entries(auths)) {
      const a = isRecord(entry) ? entry['auth'] : undefined;
      if (typeof a === 'string' && !/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(a)) {
        throw new Error(`invalid JSON syntax: the "auth" of ${JSON.stringify(prop)} in ${file} is not base64`);
      }
    }
  }
  return doc;
}

/** `dockerCLIStyleAuthFileSearchLocations`. */
export function dockerConfigSearchLocations(env: OciCredentialsEnv): string[] {
  const out: string[] = [];
  if (env.os === 'linux') {
    const run = env.env['XDG_RUNTIME_DIR'];
    if (run) out.push(join(run, 'containers', 'auth.json'));
  } else if (env.os === 'windows' || env.os === 'darwin') {
    out.push(join(env.homeDir, '.config', 'containers', 'auth.json'));
  }
  const xdg = env.env['XDG_CONFIG_HOME'] || join(env.homeDir, '.config');
  out.push(
    join(xdg, 'containers', 'auth.json'),
    join(env.homeDir, '.docker', 'config.json'),
    join(env.homeDir, '.dockercfg'),
  );
  return out.filter((p, i) => p !== out[i - 1]);
}

async function dockerConfigSources(cli: CliConfig, env: OciCredentialsEnv): Promise<Source[]> {
  const defaults = cli.ociDefaultCredentials;
  if (defaults && !defaults.discoverAmbientCredentials) return [];
  const read = env.readFile ?? ((p: string) => readRegularFile(p));
  const explicit = defaults?.dockerStyleConfigFiles;
  const out: Source[] = [];
  if (explicit !== undefined) {
    // Named by the operator: each must be there and parse.
    const problems: string[] = [];
    for (const file of explicit) {
      try {
        // eslint-disable-next-line no-await-in-loop -- a few small files, in order (the order is the precedence)
        out.push(dockerConfigSource(file, parseDockerConfig(await read(file), file), env));
      } catch (err) {
        problems.push(`${systemErrorCode(err) !== undefined ? 'reading' : 'parsing'} ${file}: ${systemErrorText(err)}`);
      }
    }
    if (problems.length > 0) {
      throw new ProvkitError(
        ErrorCode.OCI_CREDENTIALS,
        `invalid credentials configuration for OCI registries: discovering ambient OCI registry credentials: failed to read Docker-style config files: ${problems.join('; ')}`,
      );
    }
    return out;
  }
  for (const file of dockerConfigSearchLocations(env)) {
    try {
      // eslint-disable-next-line no-await-in-loop -- the search order is the precedence
      out.push(dockerConfigSource(file, parseDockerConfig(await read(file), file), env));
    } catch {
      // Files shared with other tools: a missing or broken one is skipped (the reference logs it).
    }
  }
  return out;
}

/**
 * The credentials lookup of a CLI configuration (see the module comment).
 * Files are read on the first lookup, once.
 */
export function ociCredentialsLookup(cli: CliConfig, env: OciCredentialsEnv): OciCredentialsLookup {
  let sources: Promise<Source[]> | undefined;
  const all = (): Promise<Source[]> => {
    sources ??= (async () => {
      const explicit: Source[] = cli.ociCredentials.map((b) => ({
        where: `explicit oci_credentials ${JSON.stringify(b.prefix)} block`,
        candidates(registry, repository) {
          const specificity = prefixSpecificity(b.prefix, registry, repository);
          if (specificity === 0) return [];
          const where = `explicit oci_credentials ${JSON.stringify(b.prefix)} block`;
          if (b.kind === 'helper') return [helperCandidate(b.helper, registry, specificity, where, env)];
          const creds: OciCredentials =
            b.kind === 'basic'
              ? { kind: 'basic', username: b.username, password: b.password }
              : { kind: 'oauth', accessToken: b.accessToken, refreshToken: b.refreshToken };
          return [{ specificity, where, get: () => Promise.resolve(creds) }];
        },
      }));
      const defaultHelper = cli.ociDefaultCredentials?.dockerCredentialsHelper;
      const global: Source[] =
        defaultHelper === undefined
          ? []
          : [
              {
                where: 'oci_default_credentials block',
                candidates: (registry) => [
                  helperCandidate(defaultHelper, registry, GLOBAL, 'oci_default_credentials block', env),
                ],
              },
            ];
      return [...explicit, ...global, ...(await dockerConfigSources(cli, env))];
    })();
    return sources;
  };
  return async (registry, repository) => {
    let best: Candidate | undefined;
    const problems: string[] = [];
    for (const s of await all()) {
      for (const c of s.candidates(registry, repository)) {
        if (c instanceof Error) {
          problems.push(`from ${s.where}: ${c.message}`);
          continue;
        }
        if (c.specificity > (best?.specificity ?? 0)) best = c;
      }
    }
    if (problems.length > 0) {
      throw new ProvkitError(
        ErrorCode.OCI_CREDENTIALS,
        `finding credentials for ${JSON.stringify(registry)}: ${problems.join('; ')}`,
      );
    }
    if (best === undefined) return undefined;
    try {
      return await best.get();
    } catch (err) {
      if (err instanceof ProvkitError) throw err;
      throw new ProvkitError(
        ErrorCode.OCI_CREDENTIALS,
        `finding credentials for ${JSON.stringify(registry)} (${best.where}): ${errorText(err)}`,
        { cause: err },
      );
    }
  };
}

/**
 * The Docker credential helper protocol's `get`
 * (docker/docker-credential-helpers): stdin the server URL, stdout
 * `{"ServerURL","Username","Secret"}`; "credentials not found" means none.
 */
export async function runDockerCredentialHelper(name: string, serverUrl: string): Promise<HelperResult> {
  const program = `docker-credential-${name}`;
  // Loaded here, not at start-up: child_process (and the net and dgram
  // modules it pulls in) costs every run's start-up and only this path needs it.
  const { spawn } = await import('node:child_process');
  return new Promise((resolvePromise, reject) => {
    let child;
    try {
      child = spawn(program, ['get'], { stdio: ['pipe', 'pipe', 'pipe'], timeout: 60_000 });
    } catch (err) {
      reject(
        new ProvkitError(
          ErrorCode.OCI_CREDENTIALS,
          `${JSON.stringify(name)} credential helper failed: ${errorText(err)}`,
          { cause: err },
        ),
      );
      return;
    }
    let out = '';
    let errText = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (errText += d.toString()));
    child.on('error', (err) =>
      reject(
        new ProvkitError(
          ErrorCode.OCI_CREDENTIALS,
          `${JSON.stringify(name)} credential helper failed: ${program}: ${systemErrorText(err)}`,
          { cause: err },
        ),
      ),
    );
    child.on('close', (code) => {
      const text = `${out}${errText}`.trim();
      if (code !== 0) {
        if (/credentials not found/i.test(text)) resolvePromise({ found: false });
        else
          reject(
            new ProvkitError(
              ErrorCode.OCI_CREDENTIALS,
              `${JSON.stringify(name)} credential helper failed: ${program} get exited with ${String(code)}: ${text}`,
            ),
          );
        return;
      }
      try {
        const doc = JSON.parse(out) as Record<string, unknown>;
        const username = doc['Username'];
        const secret = doc['Secret'];
        resolvePromise({
          found: true,
          username: typeof username === 'string' ? username : '',
          secret: typeof secret === 'string' ? secret : '',
        });
      } catch {
        reject(
          new ProvkitError(
            ErrorCode.OCI_CREDENTIALS,
            `${JSON.stringify(name)} credential helper failed: ${program} get did not print JSON`,
          ),
        );
      }
    });
    child.stdin.end(serverUrl);
  });
}
