// Proxy selection from the environment (Go httpproxy semantics) and retry policy.
import { describe, expect, it } from 'vitest';

import { isRetryableStatus, parseRetryAfter, ProxyConfig, retryDelay } from '../../src/net/index.js';

const via = (env: Record<string, string>, url: string): string | undefined =>
  new ProxyConfig(env).proxyFor(new URL(url))?.href;

describe('ProxyConfig', () => {
  it('picks the proxy by scheme, upper case first, http:// implied', () => {
    expect(via({ HTTPS_PROXY: 'proxy:3128', https_proxy: 'http://other:1' }, 'https://example.com/')).toBe(
      'http://proxy:3128/',
    );
    expect(via({ http_proxy: 'http://p:8080' }, 'http://example.com/')).toBe('http://p:8080/');
    expect(via({ http_proxy: 'http://p:8080' }, 'https://example.com/')).toBeUndefined();
  });
  it('never proxies loopback', () => {
    expect(via({ HTTPS_PROXY: 'http://p:1' }, 'https://127.0.0.1:8443/')).toBeUndefined();
    expect(via({ HTTPS_PROXY: 'http://p:1' }, 'https://localhost/')).toBeUndefined();
    expect(via({ HTTPS_PROXY: 'http://p:1' }, 'https://[::1]/')).toBeUndefined();
  });
  it.each([
    ['*', 'https://a.example/', false],
    ['example.com', 'https://example.com/', false],
    ['example.com', 'https://sub.example.com/', false],
    ['.example.com', 'https://example.com/', true],
    ['.example.com', 'https://sub.example.com/', false],
    ['*.example.com', 'https://example.com/', true],
    ['example.com:8443', 'https://example.com:8443/', false],
    ['example.com:8443', 'https://example.com/', true],
    ['10.0.0.0/8', 'https://10.1.2.3/', false],
    ['10.0.0.0/8', 'https://11.1.2.3/', true],
    ['192.168.1.1', 'https://192.168.1.1/', false],
    ['other.org, example.com ', 'https://x.example.com/', false],
  ])('NO_PROXY=%s for %s → proxied: %s', (noProxy, url, proxied) => {
    expect(via({ HTTPS_PROXY: 'http://p:1', NO_PROXY: noProxy }, url) !== undefined).toBe(proxied);
  });
});

describe('retry policy', () => {
  it('retries 429 and 5xx except 501', () => {
    expect([429, 500, 502, 503, 504, 501, 404, 400].map(isRetryableStatus)).toEqual([
      true,
      true,
      true,
      true,
      true,
      false,
      false,
      false,
    ]);
  });
  it('parses Retry-After seconds and dates', () => {
    expect(parseRetryAfter('3', 0)).toBe(3000);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 4000)).toBe(6000);
    expect(parseRetryAfter('soon', 0)).toBeUndefined();
    expect(parseRetryAfter(null, 0)).toBeUndefined();
  });
  it('backs off exponentially, capped, and prefers Retry-After on 429/503', () => {
    const b = { minMs: 1000, maxMs: 30_000 };
    expect([1, 2, 3, 4, 5, 6].map((n) => retryDelay(n, b))).toEqual([1000, 2000, 4000, 8000, 16000, 30000]);
    expect(retryDelay(1, b, { status: 503, retryAfterMs: 5000 })).toBe(5000);
    expect(retryDelay(1, b, { status: 500, retryAfterMs: 5000 })).toBe(1000);
    expect(retryDelay(1, b, { status: 429, retryAfterMs: 600_000 }, 60_000)).toBe(60_000);
  });
});
