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

  // --- sources (src/sources); the multi-source treats the first three as "try the next source"
  PROVIDER_NOT_FOUND: 'PROVIDER_NOT_FOUND',
  REGISTRY_PROVIDER_UNKNOWN: 'REGISTRY_PROVIDER_UNKNOWN',
  PLATFORM_NOT_SUPPORTED: 'PLATFORM_NOT_SUPPORTED',
  PROTOCOL_NOT_SUPPORTED: 'PROTOCOL_NOT_SUPPORTED',
  SERVICE_DISCOVERY: 'SERVICE_DISCOVERY',
  UNAUTHORIZED: 'UNAUTHORIZED',
  INVALID_RESPONSE: 'INVALID_RESPONSE',
  /** An archive or checksum list does not match what it must. */
  CHECKSUM_MISMATCH: 'CHECKSUM_MISMATCH',
  /** The SHA256SUMS signature is missing, invalid, or by no listed key. */
  SIGNATURE_INVALID: 'SIGNATURE_INVALID',
  INVALID_SOURCE_CONFIG: 'INVALID_SOURCE_CONFIG',

  // --- installer (src/installer)
  /** The package does not match any checksum of the lock file. */
  LOCKFILE_CHECKSUM_MISMATCH: 'LOCKFILE_CHECKSUM_MISMATCH',
  /** The installed package has no `terraform-provider-TYPE` executable. */
  PROVIDER_BINARY_NOT_FOUND: 'PROVIDER_BINARY_NOT_FOUND',
  /** The locked version no longer meets the constraints, none matches, or 0.0.0 was requested. */
  VERSION_SELECTION: 'VERSION_SELECTION',
  /** The lock of a package directory could not be taken (timed out waiting). */
  PACKAGE_LOCK_TIMEOUT: 'PACKAGE_LOCK_TIMEOUT',
  /**
   * A directory of the provider tree (`HOST/NS/TYPE/VERSION` under
   * `.terraform/providers`, the plugin cache or an unpacked mirror) is a
   * symbolic link or not a directory: provkit never writes through it.
   */
  UNSAFE_INSTALL_PATH: 'UNSAFE_INSTALL_PATH',

  // --- air-gap bundles and the mirror server
  /** A bundle whose manifest is missing, malformed or not the first member. */
  BUNDLE_INVALID: 'BUNDLE_INVALID',
  /** A bundle member refused on import (name, type, size, checksum, duplicate or unlisted). */
  BUNDLE_MEMBER_REFUSED: 'BUNDLE_MEMBER_REFUSED',
  /** The import target already holds something different under the same name. */
  BUNDLE_TARGET_CONFLICT: 'BUNDLE_TARGET_CONFLICT',
  /** `provkit serve` asked to listen without TLS on a non-loopback address. */
  SERVE_INSECURE_LISTEN: 'SERVE_INSECURE_LISTEN',

  // --- generic I/O and usage
  IO: 'IO',
  NOT_FOUND: 'NOT_FOUND',
  USAGE: 'USAGE',
  WORKER_FAILED: 'WORKER_FAILED',
  ABORTED: 'ABORTED',
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** Context that locates a failure. All optional; set what is known. */
export interface ErrorContext {
  /** Diagnostic-style short summary (as the reference's `Summary`), where the error mirrors one. */
  summary?: string;
  /** Diagnostic-style detail text (as the reference's `Detail`). */
  detail?: string;
  file?: string;
  /** 1-based line and column in `file`, for parse errors. */
  line?: number;
  column?: number;
  /** A zip entry name, for display (raw bytes rendered with escapes where not UTF-8). */
  entry?: string;
  provider?: string;
  version?: string;
  platform?: string;
  url?: string;
  expected?: string;
  found?: string;
  /** A hint for the user: what to do about it. */
  hint?: string;
}

const brand = Symbol.for('provkit.error');

const CONTEXT_KEYS = ['summary', 'detail', 'file', 'line', 'column', 'entry', 'provider', 'version', 'platform', 'url', 'expected', 'found', 'hint'] as const;

export class ProvkitError extends Error implements ErrorContext {
  readonly code: ErrorCode;
  declare summary?: string;
  declare detail?: string;
  declare file?: string;
  declare line?: number;
  declare column?: number;
  declare entry?: string;
  declare provider?: string;
  declare version?: string;
  declare platform?: string;
  declare url?: string;
  declare expected?: string;
  declare found?: string;
  declare hint?: string;

  constructor(code: ErrorCode, message: string, context: ErrorContext & { cause?: unknown } = {}) {
    super(message, context.cause === undefined ? undefined : { cause: context.cause });
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
    return new ProvkitError(code, message, rest);
  }
}
Object.defineProperty(ProvkitError.prototype, brand, { value: true });


export interface SerializedError extends ErrorContext {
  code: ErrorCode;
  message: string;
}

/** True when `err` is a provkit error with the given code. */
export function isProvkitError(err: unknown, code?: ErrorCode): err is ProvkitError {
  return err instanceof ProvkitError && (code === undefined || err.code === code);
}

/** Node's system errors carry a string `code` such as `ENOENT`. */
export function systemErrorCode(err: unknown): string | undefined {
  if (typeof err === 'object' && err !== null && 'code' in err) {
    const code = (err).code;
    return typeof code === 'string' ? code : undefined;
  }
  return undefined;
}
