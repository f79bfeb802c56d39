import { goOneLine } from './go/index.js';

/**
 * The one error base class of provkit.
 *
 * Contract: every failure the library reports is a {@link ProvkitError} with a
 * stable `code` from {@link ErrorCode}. Callers branch on `code`, never on the
 * message text. Codes are never renamed or reused (as yarn's MessageName): users
 * search for them, and `-json` output carries them.
 *
 * Context fields (`file`, `entry`, `provider`, `version`, `platform`, `url`,
 * `expected`, `found`) are set where known so that a UI can write a precise
 * message without parsing the text.
 */
export const ErrorCode = {
  // --- addresses (provider source strings, versions, constraints, platforms)
  INVALID_PROVIDER_SOURCE: 'INVALID_PROVIDER_SOURCE',
  INVALID_HOSTNAME: 'INVALID_HOSTNAME',
  INVALID_VERSION: 'INVALID_VERSION',
  INVALID_CONSTRAINT: 'INVALID_CONSTRAINT',
  INVALID_PLATFORM: 'INVALID_PLATFORM',
  INVALID_FLAVOR: 'INVALID_FLAVOR',
  INVALID_HASH: 'INVALID_HASH',
  /** An include/exclude provider pattern of a CLI configuration. */
  INVALID_PROVIDER_PATTERN: 'INVALID_PROVIDER_PATTERN',
  /** Module configuration that cannot be loaded (diagnostics carry the details). */
  INVALID_CONFIGURATION: 'INVALID_CONFIGURATION',
  /** A CLI configuration file that cannot be used. */
  INVALID_CLI_CONFIGURATION: 'INVALID_CLI_CONFIGURATION',

  // --- hashing: the archive as a file
  /** Not a zip archive the reference can open (no end record, bad headers, wrong entry count). */
  ZIP_FORMAT: 'ZIP_FORMAT',
  /** An entry's data does not match the CRC-32 recorded for it. */
  ZIP_CHECKSUM: 'ZIP_CHECKSUM',
  /** An entry's data is shorter or longer than the size recorded for it, or the archive ends early. */
  ZIP_SIZE: 'ZIP_SIZE',
  /** An entry uses a compression method other than store (0) or deflate (8). */
  ZIP_UNSUPPORTED_METHOD: 'ZIP_UNSUPPORTED_METHOD',
  /** Deflate data that does not decode. */
  ZIP_CORRUPT_DATA: 'ZIP_CORRUPT_DATA',
  /** The archive has no entries at all (the reference refuses to extract it). */
  ZIP_EMPTY: 'ZIP_EMPTY',

  // --- hashing: hostile or unusable names
  /** A name with a `..` segment (split on `/` and `\`). */
  ZIP_PATH_TRAVERSAL: 'ZIP_PATH_TRAVERSAL',
  /** An absolute name (`/x`, `\x`, `C:x`): refused on purpose, see hashes.json `absolute`. */
  ZIP_ABSOLUTE_PATH: 'ZIP_ABSOLUTE_PATH',
  /** Two entries that cannot both be extracted (a file where a directory must go, or the reverse). */
  ZIP_EXTRACT_CONFLICT: 'ZIP_EXTRACT_CONFLICT',
  /** dirhash refuses names that contain a newline. */
  HASH_NEWLINE_IN_NAME: 'HASH_NEWLINE_IN_NAME',
  /** An archive exceeds a configured limit (entries, total size, ratio). */
  ZIP_LIMIT_EXCEEDED: 'ZIP_LIMIT_EXCEEDED',
  /**
   * A name with a control character (C0 other than a newline in a file name,
   * DEL, or a UTF-8 C1): refused when a package is extracted, never when it is
   * only hashed (the reference hashes and extracts such names).
   */
  ZIP_UNSAFE_NAME: 'ZIP_UNSAFE_NAME',

  // --- hashing: directories
  NOT_A_DIRECTORY: 'NOT_A_DIRECTORY',
  /** A symlink inside a package directory points at a directory (dirhash reads it as a file). */
  DIR_SYMLINK_TO_DIRECTORY: 'DIR_SYMLINK_TO_DIRECTORY',
  /** A symlink inside a package directory points nowhere. */
  DIR_DANGLING_SYMLINK: 'DIR_DANGLING_SYMLINK',

  // --- network (src/net)
  /** A response status the caller cannot use (after retries, where retries apply). */
  NET_HTTP_STATUS: 'NET_HTTP_STATUS',
  /** Connecting, TLS, or reading the response failed (reset, refused, DNS, dropped mid-body). */
  NET_CONNECTION: 'NET_CONNECTION',
  /** No response headers within the connect timeout, or no body bytes within the idle timeout. */
  NET_TIMEOUT: 'NET_TIMEOUT',
  /** The body was shorter or longer than `Content-Length` or than the size expected. */
  NET_SIZE_MISMATCH: 'NET_SIZE_MISMATCH',
  NET_TOO_MANY_REDIRECTS: 'NET_TOO_MANY_REDIRECTS',
  /** A body larger than the caller's limit. */
  NET_RESPONSE_TOO_LARGE: 'NET_RESPONSE_TOO_LARGE',
  /**
   * A request the client's own fetch refused before any connection (a
   * destination outside a pull-through mirror's allow-list): final, never retried.
   */
  NET_REFUSED: 'NET_REFUSED',

  // --- sources (src/sources); the multi-source (docs/reference.md §4.4 item 72) treats the first three as
  // "try the next source", every other error aborts
  /** Go `ErrProviderNotFound`: no source (or this mirror) has the provider. */
  PROVIDER_NOT_FOUND: 'PROVIDER_NOT_FOUND',
  /** Go `ErrRegistryProviderNotKnown`: the provider's registry answered 404 for it. */
  REGISTRY_PROVIDER_UNKNOWN: 'REGISTRY_PROVIDER_UNKNOWN',
  /** Go `ErrPlatformNotSupported`: the version exists but not for the platform. */
  PLATFORM_NOT_SUPPORTED: 'PLATFORM_NOT_SUPPORTED',
  /** Go `ErrProtocolNotSupported`: no plugin protocol this tool speaks. */
  PROTOCOL_NOT_SUPPORTED: 'PROTOCOL_NOT_SUPPORTED',
  /** Service discovery failed, or the host offers no provider registry (Go `ErrHostNoProviders`). */
  SERVICE_DISCOVERY: 'SERVICE_DISCOVERY',
  /** Go `ErrUnauthorized`: 401/403 from a registry or mirror. */
  UNAUTHORIZED: 'UNAUTHORIZED',
  /** A registry or mirror answered something unusable (status, Content-Type, JSON shape, field values). */
  INVALID_RESPONSE: 'INVALID_RESPONSE',
  /** An archive or checksum list does not match what it must (shasum, SHA256SUMS line, mirror hashes, package size). */
  CHECKSUM_MISMATCH: 'CHECKSUM_MISMATCH',
  /** The SHA256SUMS signature is missing, invalid, or by no listed key. */
  SIGNATURE_INVALID: 'SIGNATURE_INVALID',
  /** A source configuration that cannot work (mirror URL not https, bad include/exclude pattern). */
  INVALID_SOURCE_CONFIG: 'INVALID_SOURCE_CONFIG',
  /** An OCI registry refused a push (blob upload, manifest, tag) or answered it in a way that cannot be used. */
  OCI_PUSH_REFUSED: 'OCI_PUSH_REFUSED',
  /** OCI registry credentials that cannot be used: a Docker-style config file, a credential helper or a token service failed. */
  OCI_CREDENTIALS: 'OCI_CREDENTIALS',

  // --- installer (src/installer)
  /** The package does not match any checksum of the lock file. */
  LOCKFILE_CHECKSUM_MISMATCH: 'LOCKFILE_CHECKSUM_MISMATCH',
  /** The installed package has no `terraform-provider-TYPE` executable. */
  PROVIDER_BINARY_NOT_FOUND: 'PROVIDER_BINARY_NOT_FOUND',
  /** The locked version no longer meets the constraints, none matches, or 0.0.0 was requested. */
  VERSION_SELECTION: 'VERSION_SELECTION',
  /** A directory mutex (src/fs/dir-mutex.ts: a package directory's, a mirror target's) could not be taken (timed out waiting). */
  MUTEX_TIMEOUT: 'MUTEX_TIMEOUT',
  /**
   * The old name of {@link ErrorCode.MUTEX_TIMEOUT}, the same value.
   *
   * @deprecated Use `MUTEX_TIMEOUT`: "lock" in provkit means the dependency lock file only (renamed before 1.0;
   * `-json` carries `MUTEX_TIMEOUT`).
   */
  PACKAGE_LOCK_TIMEOUT: 'MUTEX_TIMEOUT',
  /**
   * A directory of the provider tree (`HOST/NS/TYPE/VERSION` under
   * `.terraform/providers`, the plugin cache or an unpacked mirror) is a
   * symbolic link or not a directory: provkit never writes through it.
   */
  UNSAFE_INSTALL_PATH: 'UNSAFE_INSTALL_PATH',
  /**
   * A name that would become a component of a path (a platform word, a
   * provider's host, namespace or type, a version, a package file name) is
   * not a plain name: empty, `.` or `..`, a separator or a control character
   * (src/addresses/names.ts).
   */
  UNSAFE_NAME: 'UNSAFE_NAME',

  // --- the lock file as a whole (src/lockfile, the commands)
  /** A lock file that does not parse or decode (diagnostics carry the file and line). */
  INVALID_LOCK_FILE: 'INVALID_LOCK_FILE',
  /** The lock file does not cover the configuration ("Inconsistent dependency lock file"). */
  INCONSISTENT_LOCK_FILE: 'INCONSISTENT_LOCK_FILE',
  /** `-lockfile=readonly` and the set of providers would change ("Provider dependency changes detected"). */
  LOCK_FILE_READONLY: 'LOCK_FILE_READONLY',

  // --- air-gap bundles and the mirror server
  /** A bundle whose manifest is missing, malformed or not the first member. */
  BUNDLE_INVALID: 'BUNDLE_INVALID',
  /** A bundle member refused on import (name, type, size, checksum, duplicate or unlisted). */
  BUNDLE_MEMBER_REFUSED: 'BUNDLE_MEMBER_REFUSED',
  /** The import target already holds something different under the same name. */
  BUNDLE_TARGET_CONFLICT: 'BUNDLE_TARGET_CONFLICT',
  /** `provkit serve` asked to listen without TLS on a non-loopback address. */
  SERVE_INSECURE_LISTEN: 'SERVE_INSECURE_LISTEN',
  /** `audit -base`: git could not be run, the revision is unknown, or a file could not be read at it. */
  GIT_FAILED: 'GIT_FAILED',
  /** A pull-through mirror was asked for a provider, host or address outside its allow-list (docs/fleet-mirror.md). */
  UPSTREAM_NOT_ALLOWED: 'UPSTREAM_NOT_ALLOWED',
  /** A pull-through mirror refused a package its signature policy does not accept: unsigned, or a key not pinned. */
  UPSTREAM_UNTRUSTED: 'UPSTREAM_UNTRUSTED',

  // --- generic I/O and usage
  IO: 'IO',
  NOT_FOUND: 'NOT_FOUND',
  /** A file provkit reads (configuration, lock file, cache entry) is a FIFO, a device, a socket or a directory (src/fs/read.ts). */
  NOT_REGULAR_FILE: 'NOT_REGULAR_FILE',
  /** A file provkit reads is larger than it reads (src/fs/read.ts). */
  FILE_TOO_LARGE: 'FILE_TOO_LARGE',
  USAGE: 'USAGE',
  /**
   * A command-line flag that is not defined, lacks its value or has a bad
   * one (the reference's "Failed to parse command-line flags").
   */
  INVALID_FLAGS: 'INVALID_FLAGS',
  /** A hashing worker thread died or could not start (hashing/pool.ts); the job's package is not hashed. */
  WORKER_FAILED: 'WORKER_FAILED',
  /**
   * The caller's `AbortSignal` aborted the run (installer/abort.ts): nothing
   * was written, and the signal's reason is the error's `cause`.
   */
  ABORTED: 'ABORTED',
  /** An unexpected failure inside provkit (a bug; the diagnostic asks for a report). */
  INTERNAL: 'INTERNAL',
} as const;

/**
 * A stable failure code: one of the {@link ErrorCode} values. Codes are only ever added, never reused, so a
 * caller can branch on them. Before 1.0 a few were renamed (the directory mutex's codes, so that "lock" means
 * only the lock file); each old name stays as a `@deprecated` key with the new value.
 */
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/**
 * Stable codes of warnings, the diagnostics of severity `warning` (`-json`
 * carries them as `diagnostic.code`, as it carries an error's
 * {@link ErrorCode}). Same contract: never renamed or reused.
 */
export const WarningCode = {
  /** The registry returned `warnings` with a provider's versions ("Additional provider information from registry"). */
  REGISTRY_WARNINGS: 'REGISTRY_WARNINGS',
  /** A source's remark about a package or its metadata (an expired signing key, blank lines in SHA256SUMS, …). */
  SOURCE_WARNING: 'SOURCE_WARNING',
  /** An archive whose zip-form and extracted-form `h1:` differ (hashing/zip-package.ts). */
  H1_FORMS_DIFFER: 'H1_FORMS_DIFFER',
  /** An archive with a symbolic link entry, extracted as a file holding the link text (hashing/zip-package.ts). */
  ZIP_SYMLINK_ENTRY: 'ZIP_SYMLINK_ENTRY',
  /** A package installed without verification: the lock holds only `zh:` hashes, which cannot check a directory. */
  PACKAGE_UNVERIFIED: 'PACKAGE_UNVERIFIED',
  /** `mirror -ignore-lock-hashes` wrote a package that matches none of the lock file's hashes for its version. */
  LOCK_HASHES_IGNORED: 'LOCK_HASHES_IGNORED',
  /** A directory mutex (a package's, a cache's or a mirror target's, src/fs/dir-mutex.ts) whose holder is gone was removed. */
  STALE_MUTEX_REMOVED: 'STALE_MUTEX_REMOVED',
  /** Waiting for another run that holds the mirror target's directory mutex. */
  MUTEX_WAIT: 'MUTEX_WAIT',
  /**
   * The old name of {@link WarningCode.STALE_MUTEX_REMOVED}, the same value.
   *
   * @deprecated Use `STALE_MUTEX_REMOVED` (renamed before 1.0: "lock" means the dependency lock file only).
   */
  STALE_LOCK_REMOVED: 'STALE_MUTEX_REMOVED',
  /**
   * The old name of {@link WarningCode.MUTEX_WAIT}, the same value.
   *
   * @deprecated Use `MUTEX_WAIT` (renamed before 1.0: "lock" means the dependency lock file only).
   */
  LOCK_WAIT: 'MUTEX_WAIT',
  /** The lock file records checksums of this platform only ("Incomplete lock file information for providers"). */
  INCOMPLETE_LOCK_FILE: 'INCOMPLETE_LOCK_FILE',
  /** `-lockfile=readonly`: the lock file would have changed ("Provider lock file not updated"). */
  LOCK_FILE_NOT_UPDATED: 'LOCK_FILE_NOT_UPDATED',
  /** A warning of the configuration (deprecated syntax, …), with its file and line. */
  CONFIGURATION_WARNING: 'CONFIGURATION_WARNING',
  /** A warning of the lock file, with its file and line. */
  LOCK_FILE_WARNING: 'LOCK_FILE_WARNING',
  /** A warning of the CLI configuration (a file that cannot be opened, an unknown setting, …). */
  CLI_CONFIGURATION_WARNING: 'CLI_CONFIGURATION_WARNING',
  /** An interrupt arrived after the command had committed everything: the run stands. */
  INTERRUPTED_AFTER_COMMIT: 'INTERRUPTED_AFTER_COMMIT',
  /** `provkit serve` without TLS: clients that require https cannot use it. */
  PLAIN_HTTP: 'PLAIN_HTTP',
  /** `provkit serve` found something in the directory it cannot serve. */
  SCAN_WARNING: 'SCAN_WARNING',
  /** A delta bundle was imported where the packages of the bundle it was made against are missing. */
  BUNDLE_BASE_MISSING: 'BUNDLE_BASE_MISSING',
} as const;

/**
 * A stable warning code: one of the {@link WarningCode} values (a diagnostic or `warning` event that does not stop
 * a run).
 */
export type WarningCode = (typeof WarningCode)[keyof typeof WarningCode];

/**
 * The short summary of each {@link ErrorCode}, for an error that carries
 * none of its own ({@link ProvkitError.summary}): what
 * {@link diagnosticFromError} gives as the diagnostic's `summary`. A
 * `Record` over the codes, so a new code cannot be added without one.
 */
export const ERROR_SUMMARY: Readonly<Record<ErrorCode, string>> = {
  INVALID_PROVIDER_SOURCE: 'Invalid provider source address',
  INVALID_HOSTNAME: 'Invalid hostname',
  INVALID_VERSION: 'Invalid version',
  INVALID_CONSTRAINT: 'Invalid version constraint',
  INVALID_PLATFORM: 'Invalid platform',
  INVALID_FLAVOR: 'Invalid flavor',
  INVALID_HASH: 'Invalid hash',
  INVALID_PROVIDER_PATTERN: 'Invalid provider pattern',
  INVALID_CONFIGURATION: 'Invalid configuration',
  INVALID_CLI_CONFIGURATION: 'Invalid CLI configuration',
  ZIP_FORMAT: 'Invalid provider package',
  ZIP_CHECKSUM: 'Invalid provider package',
  ZIP_SIZE: 'Invalid provider package',
  ZIP_UNSUPPORTED_METHOD: 'Invalid provider package',
  ZIP_CORRUPT_DATA: 'Invalid provider package',
  ZIP_EMPTY: 'Invalid provider package',
  ZIP_PATH_TRAVERSAL: 'Unsafe provider package',
  ZIP_ABSOLUTE_PATH: 'Unsafe provider package',
  ZIP_EXTRACT_CONFLICT: 'Invalid provider package',
  HASH_NEWLINE_IN_NAME: 'Unhashable provider package',
  ZIP_LIMIT_EXCEEDED: 'Provider package too large',
  ZIP_UNSAFE_NAME: 'Unsafe provider package',
  NOT_A_DIRECTORY: 'Not a directory',
  DIR_SYMLINK_TO_DIRECTORY: 'Unhashable provider package',
  DIR_DANGLING_SYMLINK: 'Unhashable provider package',
  NET_HTTP_STATUS: 'Unexpected HTTP response',
  NET_CONNECTION: 'Connection failed',
  NET_TIMEOUT: 'Request timed out',
  NET_SIZE_MISMATCH: 'Incomplete download',
  NET_TOO_MANY_REDIRECTS: 'Too many redirects',
  NET_RESPONSE_TOO_LARGE: 'Response too large',
  NET_REFUSED: 'Request refused',
  PROVIDER_NOT_FOUND: 'Provider not found',
  REGISTRY_PROVIDER_UNKNOWN: 'Provider unknown to its registry',
  PLATFORM_NOT_SUPPORTED: 'Platform not supported',
  PROTOCOL_NOT_SUPPORTED: 'Plugin protocol not supported',
  SERVICE_DISCOVERY: 'Service discovery failed',
  UNAUTHORIZED: 'Not authorized',
  INVALID_RESPONSE: 'Invalid response',
  CHECKSUM_MISMATCH: 'Checksum mismatch',
  SIGNATURE_INVALID: 'Invalid signature',
  INVALID_SOURCE_CONFIG: 'Invalid provider source configuration',
  OCI_PUSH_REFUSED: 'OCI registry refused the upload',
  OCI_CREDENTIALS: 'OCI registry credentials failed',
  LOCKFILE_CHECKSUM_MISMATCH: 'Package does not match the lock file',
  PROVIDER_BINARY_NOT_FOUND: 'Provider executable not found',
  VERSION_SELECTION: 'No suitable version',
  MUTEX_TIMEOUT: 'Timed out waiting for a directory mutex',
  UNSAFE_INSTALL_PATH: 'Unsafe install path',
  UNSAFE_NAME: 'Unsafe name',
  INVALID_LOCK_FILE: 'Invalid lock file',
  INCONSISTENT_LOCK_FILE: 'Inconsistent lock file',
  LOCK_FILE_READONLY: 'Lock file cannot be changed',
  BUNDLE_INVALID: 'Invalid bundle',
  BUNDLE_MEMBER_REFUSED: 'Bundle member refused',
  BUNDLE_TARGET_CONFLICT: 'Bundle conflicts with the target',
  SERVE_INSECURE_LISTEN: 'Insecure listen address',
  GIT_FAILED: 'Git failed',
  UPSTREAM_NOT_ALLOWED: 'Upstream not allowed',
  UPSTREAM_UNTRUSTED: 'Upstream not trusted',
  IO: 'I/O error',
  NOT_FOUND: 'Not found',
  NOT_REGULAR_FILE: 'Not a regular file',
  FILE_TOO_LARGE: 'File too large',
  USAGE: 'Invalid usage',
  INVALID_FLAGS: 'Invalid command-line flags',
  WORKER_FAILED: 'Hashing worker failed',
  ABORTED: 'Interrupted',
  INTERNAL: 'Internal error',
};

/** The code a diagnostic carries: an error's {@link ErrorCode} or a {@link WarningCode}. */
export type DiagnosticCode = ErrorCode | WarningCode;

/** Context that locates a failure. All optional; set what is known. */
export interface ErrorContext {
  /** Diagnostic-style short summary (as the reference's `Summary`), where the error mirrors one. */
  summary?: string;
  /** Diagnostic-style detail text (as the reference's `Detail`). */
  detail?: string;
  /**
   * The file the failure is about: a path as the caller gave it, or as diagnostics name it (relative to the working
   * directory).
   */
  file?: string;
  /** 1-based line and column in `file`, for parse errors. */
  line?: number;
  /** 1-based column in `file`, counted in characters as the reference counts them; with `line`. */
  column?: number;
  /** A zip entry name, for display (raw bytes rendered with escapes where not UTF-8). */
  entry?: string;
  /** The provider's address as text (`registry.opentofu.org/hashicorp/aws`). */
  provider?: string;
  /** The provider version as text (`5.0.0`). */
  version?: string;
  /** The platform as text (`linux_amd64`). */
  platform?: string;
  /** The URL asked when the failure happened (credentials never included). */
  url?: string;
  /** What was expected, for a mismatch: a hash, a size, a content type. */
  expected?: string;
  /** What was found instead of `expected`. */
  found?: string;
  /** A hint for the user: what to do about it. */
  hint?: string;
  /**
   * For `PLATFORM_NOT_SUPPORTED`: the platforms the source does have the version for, as text (`linux_amd64`),
   * sorted; absent when none are known.
   */
  availablePlatforms?: readonly string[];
}

const brand = Symbol.for('provkit.error');

const CONTEXT_KEYS = [
  'summary',
  'detail',
  'file',
  'line',
  'column',
  'entry',
  'provider',
  'version',
  'platform',
  'url',
  'expected',
  'found',
  'hint',
  'availablePlatforms',
] as const;

/**
 * provkit's one error class (CONTRIBUTING.md house style 4): a stable `code` to branch on, a one-line `message`,
 * and the context fields of {@link ErrorContext} that locate it (file, line, provider, platform, URL…) and say what
 * to do (`hint`). Everything a run throws or lists as a failure is one; {@link diagnosticFromError} turns it into
 * the one {@link Diagnostic}.
 */
export class ProvkitError extends Error implements ErrorContext {
  /** What failed, stable across releases (see {@link ErrorCode}). */
  readonly code: ErrorCode;
  /** {@inheritDoc ErrorContext.summary} */
  declare summary?: string;
  /** {@inheritDoc ErrorContext.detail} */
  declare detail?: string;
  /** {@inheritDoc ErrorContext.file} */
  declare file?: string;
  /** {@inheritDoc ErrorContext.line} */
  declare line?: number;
  /** {@inheritDoc ErrorContext.column} */
  declare column?: number;
  /** {@inheritDoc ErrorContext.entry} */
  declare entry?: string;
  /** {@inheritDoc ErrorContext.provider} */
  declare provider?: string;
  /** {@inheritDoc ErrorContext.version} */
  declare version?: string;
  /** {@inheritDoc ErrorContext.platform} */
  declare platform?: string;
  /** {@inheritDoc ErrorContext.url} */
  declare url?: string;
  /** {@inheritDoc ErrorContext.expected} */
  declare expected?: string;
  /** {@inheritDoc ErrorContext.found} */
  declare found?: string;
  /** {@inheritDoc ErrorContext.hint} */
  declare hint?: string;
  /** {@inheritDoc ErrorContext.availablePlatforms} */
  declare availablePlatforms?: readonly string[];

  /**
   * @param message one line: its line breaks (a server's text, a file name,
   *   a configuration value in it) are written as Go's `%q` writes them
   *   (`\n`; src/go `goOneLine`), so that no message can start a line of human
   *   output (docs/reliability.md). A message of several lines is given as
   *   its lines, each made one line so, joined with `\n`.
   */
  constructor(code: ErrorCode, message: string | readonly string[], context: ErrorContext & { cause?: unknown } = {}) {
    super(
      typeof message === 'string' ? goOneLine(message) : message.map(goOneLine).join('\n'),
      context.cause === undefined ? undefined : { cause: context.cause },
    );
    this.name = 'ProvkitError';
    this.code = code;
    const record = this as unknown as Record<string, unknown>;
    for (const key of CONTEXT_KEYS) {
      const v = context[key];
      if (v !== undefined) record[key] = v;
    }
  }

  /** Branded check: works across two copies of the library (as undici's errors). */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[brand] === true;
  }

  /** Plain data for `-json` output and for crossing a worker-thread boundary. */
  toJSON(): SerializedError {
    const out: SerializedError = { code: this.code, message: this.message };
    const record = out as unknown as Record<string, unknown>;
    for (const key of CONTEXT_KEYS) {
      const v = this[key];
      if (v !== undefined) record[key] = v;
    }
    return out;
  }

  /** Rebuilds an error from {@link toJSON} output (the worker pool uses it). */
  static fromJSON(data: SerializedError): ProvkitError {
    const { code, message, ...rest } = data;
    return new ProvkitError(code, message.split('\n'), rest);
  }
}
Object.defineProperty(ProvkitError.prototype, brand, { value: true });

/**
 * A {@link ProvkitError} as plain data (its `toJSON()`): what crosses a worker thread and what
 * `ProvkitError.fromJSON` rebuilds.
 */
export interface SerializedError extends ErrorContext {
  /** The error's {@link ErrorCode}. */
  code: ErrorCode;
  /** The error's message (lines joined with `\n`). */
  message: string;
}

/**
 * A thrown value as a {@link ProvkitError}: itself when it is one, else an
 * `IO` error with its message and the value as the cause (the one conversion
 * the installer's per-package failure lists use).
 */
export function asProvkitError(err: unknown): ProvkitError {
  if (err instanceof ProvkitError) return err;
  return new ProvkitError(ErrorCode.IO, errorText(err), { cause: err });
}

/**
 * A thrown value as an `Error`, for an API that takes one (a stream's
 * `destroy`, a promise's `reject`): itself when it is one, else an `Error`
 * whose message is {@link errorText}'s.
 */
export function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(errorText(err));
}

/**
 * True when `err` is a {@link ProvkitError} (with `code`, when given): the
 * way to branch on a failure, never its message text. Checks the class, so an
 * error of another copy of provkit in the same process is not recognised.
 */
export function isProvkitError(err: unknown, code?: ErrorCode): err is ProvkitError {
  return err instanceof ProvkitError && (code === undefined || err.code === code);
}

/** Node's system errors carry a string `code` such as `ENOENT`. */
export function systemErrorCode(err: unknown): string | undefined {
  if (typeof err === 'object' && err !== null && 'code' in err) {
    const code = err.code;
    return typeof code === 'string' ? code : undefined;
  }
  return undefined;
}

/**
 * The C library's text for the system errors provkit meets (as Go's
 * `syscall.Errno.Error()` prints them, so messages read like the
 * reference's `open X: permission denied`).
 */
const SYSTEM_ERROR_TEXT: Readonly<Record<string, string>> = {
  EACCES: 'permission denied',
  EADDRINUSE: 'address already in use',
  EADDRNOTAVAIL: 'cannot assign requested address',
  EAI_AGAIN: 'temporary failure in name resolution',
  EBUSY: 'device or resource busy',
  ECONNABORTED: 'software caused connection abort',
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset by peer',
  EHOSTUNREACH: 'no route to host',
  ENETUNREACH: 'network is unreachable',
  ENOTFOUND: 'no such host',
  EPROTO: 'protocol error',
  ETIMEDOUT: 'connection timed out',
  EDQUOT: 'disk quota exceeded',
  EEXIST: 'file exists',
  EFBIG: 'file too large',
  EIO: 'input/output error',
  EISDIR: 'is a directory',
  ELOOP: 'too many levels of symbolic links',
  EMFILE: 'too many open files',
  ENAMETOOLONG: 'file name too long',
  ENFILE: 'too many open files in system',
  ENOENT: 'no such file or directory',
  ENOSPC: 'no space left on device',
  ENOTDIR: 'not a directory',
  ENOTEMPTY: 'directory not empty',
  EPERM: 'operation not permitted',
  EPIPE: 'broken pipe',
  EROFS: 'read-only file system',
  ETXTBSY: 'text file busy',
  EXDEV: 'invalid cross-device link',
};

/** What a system error means, in words (`no space left on device`); other errors: {@link errorText}. */
export function systemErrorText(err: unknown): string {
  const code = systemErrorCode(err);
  const text = code === undefined ? undefined : SYSTEM_ERROR_TEXT[code];
  if (text !== undefined) return text;
  return errorText(err);
}

/** The path a Node system error names (`open`, `mkdir`… set it), if any. */
export function systemErrorPath(err: unknown): string | undefined {
  if (typeof err === 'object' && err !== null && 'path' in err) {
    const path = (err as { path?: unknown }).path;
    return typeof path === 'string' ? path : undefined;
  }
  return undefined;
}

/** The system call a Node system error comes from (`open`, `write`…), if any. */
export function systemErrorSyscall(err: unknown): string | undefined {
  if (typeof err === 'object' && err !== null && 'syscall' in err) {
    const syscall = (err as { syscall?: unknown }).syscall;
    return typeof syscall === 'string' ? syscall : undefined;
  }
  return undefined;
}

/**
 * A failed file operation as a {@link ProvkitError} naming the file the user
 * knows: `what` says what was being done (`cannot write the bundle`) and
 * `path` which file it concerns (default: the path the error names). Callers
 * pass the target they were writing, not a temporary name, and never the
 * source they were reading when the write failed. A ProvkitError is
 * returned as it is. Code: NOT_FOUND for ENOENT, IO otherwise.
 */
export function fileError(err: unknown, what: string, path: string | undefined = systemErrorPath(err)): ProvkitError {
  if (err instanceof ProvkitError) return err;
  const code = systemErrorCode(err);
  return new ProvkitError(
    code === 'ENOENT' ? ErrorCode.NOT_FOUND : ErrorCode.IO,
    `${what}${path === undefined ? '' : ` ${path}`}: ${systemErrorText(err)}`,
    {
      ...(path === undefined ? {} : { file: path }),
      cause: err,
    },
  );
}

/** What to do when a directory cannot be written, by the system's reason. */
const WRITE_HINT: Readonly<Record<string, string>> = {
  EROFS: 'The directory is on a read-only file system: use a directory on a writable one, or remount it read-write.',
  EACCES:
    'This user may not create files there: use a directory this user can write, or change its permissions or owner.',
  EPERM:
    'This user may not create files there: use a directory this user can write, or change its permissions or owner.',
  ENOSPC: 'The file system is full: free some space, or use a directory on another file system.',
  EDQUOT: "This user's disk quota is used up: free some space, or use a directory on another file system.",
};

/**
 * A failure to write into directory `dir` as a diagnostic-ready
 * {@link ProvkitError}: {@link fileError}'s message naming `dir` (never the
 * file inside it that was being made, a temporary or a mutex file), and, for
 * a read-only file system, a permission, a full disk or a quota, a summary
 * (`summary`), the same text as detail and a hint. A ProvkitError that is
 * not about the file system is returned as it is.
 */
export function writeError(err: unknown, what: string, dir: string, summary: string): ProvkitError {
  const cause = err instanceof ProvkitError && systemErrorCode(err.cause) !== undefined ? err.cause : err;
  if (cause instanceof ProvkitError) return cause;
  const e = fileError(cause, what, dir);
  const hint = WRITE_HINT[systemErrorCode(cause) ?? ''];
  if (hint === undefined) return e;
  return new ProvkitError(e.code, e.message, { file: dir, summary, detail: asSentence(e.message), hint, cause });
}

/** A message as a diagnostic's sentence: its first letter upper case, a full stop at the end. */
export function asSentence(message: string): string {
  const s = message.charAt(0).toUpperCase() + message.slice(1);
  return /[.!?]$/.test(s) ? s : `${s}.`;
}

/**
 * `err` with every mention of a temporary file `tmp` replaced by `shown`
 * (a URL, a source path, a bundle member): a corrupt download is named by
 * where it came from, never by the temporary copy that was hashed. Other
 * errors are returned as they are.
 */
export function renameFileInError(err: unknown, tmp: string, shown: string, context: ErrorContext = {}): unknown {
  if (!(err instanceof ProvkitError)) return err;
  const { code, message, ...fields } = err.toJSON();
  const swap = (s: string | undefined): string | undefined => (s === undefined ? undefined : s.split(tmp).join(shown));
  const out: ErrorContext = {};
  for (const [k, v] of Object.entries(fields) as Array<[keyof ErrorContext, unknown]>) {
    (out as Record<string, unknown>)[k] = typeof v === 'string' ? swap(v) : v;
  }
  if (fields.file === tmp) delete out.file;
  return new ProvkitError(code, swap(message)!.split('\n'), { ...out, ...context, cause: err });
}

/** A thrown value's own text, untranslated: the message of an Error, else the value as a string. */
function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The first `code` of an error or of its causes (node-fetch wraps Node's system errors). */
function codeInChain(err: unknown): { code: string; at: Record<string, unknown> } | undefined {
  for (let e = err, depth = 0; typeof e === 'object' && e !== null && depth < 8; depth++) {
    const rec = e as Record<string, unknown>;
    if (typeof rec['code'] === 'string') return { code: rec['code'], at: rec };
    e = rec['cause'];
  }
  return undefined;
}

/**
 * The reason OpenSSL gave, from the text Node puts in a TLS error's message
 * (`…:error:0A00010B:SSL routines:ssl3_get_record:wrong version number:…`):
 * Node keeps it nowhere else for a socket's `EPROTO`.
 */
function openSslReason(message: string): string | undefined {
  return /error:[0-9A-F]+:[^:]*:[^:]*:([^:]+):/.exec(message)?.[1];
}

/**
 * The one error-to-text rule of provkit: what an error says to a person.
 *
 * - a {@link ProvkitError}: its message (written for people where it was made);
 * - a Node system error (`ENOENT`, `EACCES`, `ECONNREFUSED`…), also inside
 *   node-fetch's wrapper: as Go prints one, `OP PATH: meaning`
 *   (`lstat /x: no such file or directory`, `connect 127.0.0.1:9: connection
 *   refused`, `lookup example.invalid: no such host`), never Node's
 *   `ENOENT: no such file or directory, lstat '/x'`;
 * - a TLS failure: `TLS handshake failed: REASON`, and a server that answered
 *   a TLS handshake in plain text is said to be one, not OpenSSL's text;
 * - anything else: its message.
 *
 * Everything that turns an error into text for output goes through here
 * (directly, or through {@link describeError} and {@link fileError}).
 */
export function errorText(err: unknown): string {
  if (err instanceof ProvkitError) return err.message;
  const found = codeInChain(err);
  const message = messageOf(err);
  if (found === undefined) return message;
  const { code, at } = found;
  const inner = typeof at['message'] === 'string' ? at['message'] : message;
  const ssl = openSslReason(inner);
  if (ssl === 'wrong version number' || ssl === 'packet length too long' || code === 'ERR_SSL_WRONG_VERSION_NUMBER')
    return 'the server answered in plain text, not TLS (it does not speak https on this port)';
  if (ssl !== undefined) return `TLS handshake failed: ${ssl}`;
  if (code.startsWith('ERR_OSSL_') || code.startsWith('ERR_SSL_'))
    return `TLS handshake failed: ${typeof at['reason'] === 'string' ? at['reason'] : inner}`;
  if (!/^E[A-Z0-9_]+$/.test(code)) return message;
  const meaning = SYSTEM_ERROR_TEXT[code] ?? inner.replace(/^[a-z]+ /, '').replace(new RegExp(`^${code}:? ?`), '');
  const syscall = typeof at['syscall'] === 'string' ? at['syscall'] : undefined;
  const path = typeof at['path'] === 'string' ? at['path'] : undefined;
  const dest = typeof at['dest'] === 'string' ? ` ${at['dest']}` : '';
  const host = typeof at['hostname'] === 'string' ? at['hostname'] : undefined;
  const address =
    typeof at['address'] === 'string'
      ? `${at['address']}${typeof at['port'] === 'number' ? `:${at['port']}` : ''}`
      : undefined;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return `lookup ${host ?? address ?? ''}: ${meaning}`.replace(' :', ':');
  const where = path ?? address;
  if (syscall === undefined) return where === undefined ? meaning : `${where}: ${meaning}`;
  return `${syscall}${where === undefined ? '' : ` ${where}${dest}`}: ${meaning}`;
}

const SYSCALL_TEXT: Readonly<Record<string, string>> = {
  open: 'cannot open',
  mkdir: 'cannot create the directory',
  mkdtemp: 'cannot create a temporary directory',
  rename: 'cannot rename',
  rmdir: 'cannot remove the directory',
  unlink: 'cannot remove',
  rm: 'cannot remove',
  write: 'cannot write',
  read: 'cannot read',
  scandir: 'cannot list the directory',
  stat: 'cannot read',
  lstat: 'cannot read',
  copyfile: 'cannot copy',
  link: 'cannot link',
  symlink: 'cannot create the symbolic link',
  chmod: 'cannot change the mode of',
  utime: 'cannot touch',
  fsync: 'cannot write',
  listen: 'cannot listen on',
  bind: 'cannot listen on',
};

/**
 * One line for any error that reached the top of a command: a ProvkitError
 * as it is; a Node system error as `cannot <do> <path>: <meaning>` (the path
 * it names, the destination of a rename too); a TLS error as
 * {@link errorText} says it; anything else is an internal error, said so.
 */
export function describeError(err: unknown): string {
  if (err instanceof ProvkitError) return err.message;
  const found = codeInChain(err);
  const known = found !== undefined && /^(E[A-Z0-9_]+|ERR_OSSL_.*|ERR_SSL_.*)$/.test(found.code);
  if (found === undefined || !known) {
    return `internal error: ${messageOf(err)}; please report this with the command line`;
  }
  const { code, at } = found;
  if (/^E[A-Z0-9_]+$/.test(code) && code !== 'EPROTO') {
    const syscall = typeof at['syscall'] === 'string' ? at['syscall'] : undefined;
    const path = typeof at['path'] === 'string' ? at['path'] : undefined;
    const doing = syscall === undefined ? undefined : SYSCALL_TEXT[syscall];
    if (doing !== undefined && path !== undefined) {
      const dest = typeof at['dest'] === 'string' ? ` to ${at['dest']}` : '';
      return `${doing} ${path}${dest}: ${SYSTEM_ERROR_TEXT[code] ?? errorText(err)}`;
    }
  }
  return errorText(err);
}

/**
 * A position in a source file, as the reference's `tfdiags.SourcePos`
 * (internal/tfdiags/source_range.go): 1-based line and column, 0-based byte
 * offset. A diagnostic made from a thrown error knows the line (and maybe the
 * column) only; one from a parser knows all three.
 */
export interface SourcePos {
  /** 1-based line; lines are separated by LF. */
  readonly line: number;
  /** 1-based column, in characters (grapheme clusters, as HCL counts), when known. */
  readonly column?: number;
  /** 0-based byte offset into the file, when known: the reference's diagnostic order and source snippets. */
  readonly byte?: number;
}

/**
 * Where a diagnostic points, as the reference's `tfdiags.SourceRange`
 * (`filename`, `start`, `end`; internal/command/views/json/diagnostic.go):
 * the one range type of provkit's diagnostics. A parser's ranges (src/hcl
 * `Range`) are complete ranges of this type. Without `start` the diagnostic
 * is about the file (or directory) as a whole ("Failed to read file"; a root
 * module of `lock -recursive`).
 */
export interface DiagnosticRange {
  /** The file, as the caller named it (relative to the working directory for the CLI's files; forward slashes). */
  readonly filename: string;
  /** Where the subject starts; absent when the diagnostic is about the file as a whole. */
  readonly start?: SourcePos;
  /** Just past the subject's end (exclusive), when known. */
  readonly end?: SourcePos;
}

/** `FILE`, `FILE:LINE` or `FILE:LINE:COLUMN`: how a range reads in text. */
export function rangeText(r: DiagnosticRange): string {
  if (r.start === undefined) return r.filename;
  return `${r.filename}:${r.start.line}${r.start.column === undefined ? '' : `:${r.start.column}`}`;
}

/**
 * The one diagnostic of provkit: what every command reports, rendered boxed
 * by src/ui/human.ts and as a `diagnostic` message by src/ui/json.ts (the
 * reference's `viewsjson.Diagnostic`: severity, summary, detail, range),
 * plus provkit's stable `code` (an {@link ErrorCode} or {@link WarningCode})
 * and a `hint` (what to do about it), when there is one. The parsers return
 * it too (src/hcl, src/config, src/lockfile, src/cliconfig: their ranges are
 * complete), as OpenTofu's depsfile and configs return `tfdiags.Diagnostics`:
 * a library caller of `parseLockFile` or `lockModule` handles one type.
 */
export interface Diagnostic {
  /** `error` stops the command; `warning` does not. */
  readonly severity: 'error' | 'warning';
  /** Short, stable description of the problem (the first line the CLI prints, after `Error: `). */
  readonly summary: string;
  /** A sentence or two of explanation, naming what it is about (file, provider, platform, URL). */
  readonly detail: string;
  /** Where in which file the problem is (the reference's Subject), when it is about a file or a place in one. */
  readonly range?: DiagnosticRange;
  /** A wider range that gives context, where one helps (the reference's Context): the source snippet covers it. */
  readonly context?: DiagnosticRange;
  /** The stable code: an {@link ErrorCode} for an error, a {@link WarningCode} for a warning. */
  readonly code: DiagnosticCode;
  /** What to do about it, when provkit knows (the CLI prints it after the detail, as `Hint: …`). */
  readonly hint?: string;
}

/**
 * The diagnostic of the HCL parser and of the lock-file and configuration
 * readers: the one {@link Diagnostic}, under its old name.
 *
 * @deprecated Use {@link Diagnostic}: the parsers return it (their ranges are
 * complete: both ends, with line, column and byte). Kept so that code written
 * against the old name still compiles; it is the same type.
 */
export type HclDiagnostic = Diagnostic;

/**
 * The one conversion from a thrown value to a {@link Diagnostic}: a
 * {@link ProvkitError} gives its summary (else `fallbackSummary`, else its
 * code's {@link ERROR_SUMMARY}), its detail (or its message), file and line
 * as the range, code and hint; anything else is an INTERNAL diagnostic with
 * the value's message (no stack trace), summarised `fallbackSummary` or
 * `Internal error`.
 */
export function diagnosticFromError(err: unknown, fallbackSummary?: string): Diagnostic {
  if (err instanceof ProvkitError) {
    return {
      severity: 'error',
      summary: err.summary ?? fallbackSummary ?? ERROR_SUMMARY[err.code],
      detail: err.detail ?? err.message,
      ...(err.file !== undefined && err.line !== undefined
        ? {
            range: {
              filename: err.file,
              start: { line: err.line, ...(err.column === undefined ? {} : { column: err.column }) },
            },
          }
        : {}),
      code: err.code,
      ...(err.hint === undefined ? {} : { hint: err.hint }),
    };
  }
  return {
    severity: 'error',
    summary: fallbackSummary ?? ERROR_SUMMARY[ErrorCode.INTERNAL],
    detail: describeError(err),
    code: ErrorCode.INTERNAL,
  };
}
