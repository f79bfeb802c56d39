/**
 * The error codes of `src/sources`, by short name (the values are {@link ErrorCode}s).
 *
 * @deprecated Use `ErrorCode` (src/errors.ts), the one table of codes; only
 * src/sources/fetch.ts still names these, and this file goes when it does not.
 *
 * The multi-source (docs/reference.md §4.4 item 72) branches on three of them:
 * `PROVIDER_NOT_FOUND`, `REGISTRY_PROVIDER_UNKNOWN` and `PLATFORM_NOT_SUPPORTED`
 * are "try the next source"; every other error aborts.
 */
import { ErrorCode } from '../errors.js';

export const SourceErrorCode = {
  /** Go `ErrProviderNotFound`: no source (or this mirror) has the provider. */
  PROVIDER_NOT_FOUND: ErrorCode.PROVIDER_NOT_FOUND,
  /** Go `ErrRegistryProviderNotKnown`: the provider's registry answered 404 for it. */
  REGISTRY_PROVIDER_UNKNOWN: ErrorCode.REGISTRY_PROVIDER_UNKNOWN,
  /** Go `ErrPlatformNotSupported`: the version exists but not for the platform. */
  PLATFORM_NOT_SUPPORTED: ErrorCode.PLATFORM_NOT_SUPPORTED,
  /** Go `ErrProtocolNotSupported`: no plugin protocol this tool speaks. */
  PROTOCOL_NOT_SUPPORTED: ErrorCode.PROTOCOL_NOT_SUPPORTED,
  /** Service discovery failed, or the host offers no provider registry (Go `ErrHostNoProviders`). */
  SERVICE_DISCOVERY: ErrorCode.SERVICE_DISCOVERY,
  /** Go `ErrUnauthorized`: 401/403 from a registry or mirror. */
  UNAUTHORIZED: ErrorCode.UNAUTHORIZED,
  /** A registry or mirror answered something unusable (status, Content-Type, JSON shape, field values). */
  INVALID_RESPONSE: ErrorCode.INVALID_RESPONSE,
  /** An archive or checksum list does not match what it must (shasum, SHA256SUMS line, mirror hashes, package size). */
  CHECKSUM_MISMATCH: ErrorCode.CHECKSUM_MISMATCH,
  /** The SHA256SUMS signature is missing, invalid, or by no listed key. */
  SIGNATURE_INVALID: ErrorCode.SIGNATURE_INVALID,
  /** A source configuration that cannot work (mirror URL not https, bad include/exclude pattern). */
  INVALID_SOURCE_CONFIG: ErrorCode.INVALID_SOURCE_CONFIG,
} as const;
