/**
 * The error codes of `src/net`, by short name (the values are {@link ErrorCode}s).
 */
import { ErrorCode } from '../errors.js';

export const NetErrorCode = {
  /** A response status the caller cannot use (after retries, where retries apply). `found` = status. */
  HTTP_STATUS: ErrorCode.NET_HTTP_STATUS,
  /** Connecting, TLS, or reading the response failed (reset, refused, DNS, dropped mid-body). */
  CONNECTION: ErrorCode.NET_CONNECTION,
  /** No response headers within the connect timeout, or no body bytes within the idle timeout. */
  TIMEOUT: ErrorCode.NET_TIMEOUT,
  /** The body was shorter or longer than `Content-Length` or than the size the caller expected. */
  SIZE_MISMATCH: ErrorCode.NET_SIZE_MISMATCH,
  /** More redirects than allowed. */
  TOO_MANY_REDIRECTS: ErrorCode.NET_TOO_MANY_REDIRECTS,
  /** A body larger than the caller's limit (for example the 1 MiB of a discovery document). */
  RESPONSE_TOO_LARGE: ErrorCode.NET_RESPONSE_TOO_LARGE,
  /** The client's fetch refused the request before connecting (a policy on destinations): final. */
  REFUSED: ErrorCode.NET_REFUSED,
} as const;
