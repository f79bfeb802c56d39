/**
 * Network tuning from the environment, for unattended runs (and the fault
 * suite, which needs timeouts in milliseconds, not minutes).
 *
 * `PROVKIT_HTTP_TUNING` is a comma-separated list of `key=value` items:
 * - `connect=MS`: time until response headers arrive (default 10 000);
 * - `idle=MS`: longest gap between two body chunks (default 60 000);
 * - `retries=N`: download retries (default 2, OpenTofu's `TF_PROVIDER_DOWNLOAD_RETRY`);
 * - `backoff=MS`: the first retry delay, doubling up to 30 s (default 1 000);
 * - `retry-after-max=MS`: the longest `Retry-After` honoured (default 60 000).
 *
 * `TF_PROVIDER_DOWNLOAD_RETRY` (the reference's variable) sets the download
 * retries too; `retries=` wins when both are set.
 */
import { ErrorCode, ProvkitError } from '../errors.js';
import type { HttpClientOptions } from './client.js';
import { DEFAULT_BACKOFF } from './retry.js';

type Tuning = Pick<
  HttpClientOptions,
  'connectTimeoutMs' | 'idleTimeoutMs' | 'downloadRetries' | 'backoff' | 'maxRetryAfterMs'
>;

/**
 * The {@link HttpClientOptions} that `env` asks for (see the module comment);
 * spread them into the client's options.
 *
 * @throws ProvkitError USAGE naming the bad item
 */
export function httpTuningFromEnv(env: Readonly<Record<string, string | undefined>>): Tuning {
  const out: { -readonly [K in keyof Tuning]: Tuning[K] } = {};
  const legacy = env['TF_PROVIDER_DOWNLOAD_RETRY'];
  if (legacy !== undefined && /^\d+$/.test(legacy.trim())) out.downloadRetries = Number(legacy.trim());
  for (const item of (env['PROVKIT_HTTP_TUNING'] ?? '')
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '')) {
    const m = /^(connect|idle|retries|backoff|retry-after-max)\s*=\s*(\d+)$/.exec(item);
    if (!m) {
      throw new ProvkitError(
        ErrorCode.USAGE,
        `invalid PROVKIT_HTTP_TUNING item ${JSON.stringify(item)}: expected connect=MS, idle=MS, retries=N, backoff=MS or retry-after-max=MS`,
        {
          found: item,
        },
      );
    }
    const v = Number(m[2]);
    switch (m[1]) {
      case 'connect':
        out.connectTimeoutMs = v;
        break;
      case 'idle':
        out.idleTimeoutMs = v;
        break;
      case 'retries':
        out.downloadRetries = v;
        break;
      case 'backoff':
        out.backoff = { minMs: v, maxMs: Math.max(v, DEFAULT_BACKOFF.maxMs) };
        break;
      default:
        out.maxRetryAfterMs = v;
    }
  }
  return out;
}
