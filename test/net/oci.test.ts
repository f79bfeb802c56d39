// Issue 16: the pure parts of the OCI client — repository addresses (ORAS-Go
// reference.go via OpenTofu's ParseRepositoryAddressPrefix), RFC 6570 level 1
// templates (opentofu/svchost uritemplates/level1_test.go, the cases below are
// that file's), WWW-Authenticate challenges, tags and digests.
import { describe, expect, it } from 'vitest';

import {
  expandLevel1,
  parseChallenge,
  parseDigest,
  parseRepositoryAddress,
  tagVersion,
  validateLevel1,
  versionTag,
} from '../../src/net/index.js';

describe('OCI repository addresses (ParseRepositoryAddressPrefix)', () => {
  it.each([
    ['example.com/foo/bar', { registry: 'example.com', repository: 'foo/bar' }],
    ['127.0.0.1:5000/providers/acme/demo', { registry: '127.0.0.1:5000', repository: 'providers/acme/demo' }],
    ['localhost:5000', { registry: 'localhost:5000', repository: '' }],
    ['example.com', { registry: 'example.com', repository: '' }],
    ['r.example/a__b/c-d/e.f', { registry: 'r.example', repository: 'a__b/c-d/e.f' }],
  ])('%s', (addr, want) => {
    expect(parseRepositoryAddress(addr)).toEqual(want);
  });

  it.each([
    ['example.com/Foo', 'invalid reference: invalid repository "Foo"'],
    ['example.com/foo:1.0', 'invalid reference: artifact tag or digest not allowed'],
    ['example.com/foo@sha256:abc', 'invalid reference: invalid digest "sha256:abc"'],
    ['user@example.com/foo', 'invalid reference: invalid registry "user@example.com"'],
    ['example.com:port/foo', 'invalid reference: invalid registry "example.com:port"'],
    ['example.com/foo//bar', 'invalid reference: invalid repository "foo//bar"'],
    ['example.com/', 'invalid reference: invalid repository ""'],
    // Go's URL parser takes `oci:` as a host with an empty port; the path then fails.
    ['oci://r.example/x', 'invalid reference: invalid repository "/r.example/x"'],
  ])('refuses %s', (addr, message) => {
    expect(() => parseRepositoryAddress(addr)).toThrow(message);
  });
});

describe('RFC 6570 level 1 templates (svchost ExpandLevel1 / ValidateLevel1)', () => {
  it.each<[string, Record<string, string>, string]>([
    ['', {}, ''],
    ['foo', {}, 'foo'],
    ['{var}', { var: 'value' }, 'value'],
    ['{hello}', { hello: 'Hello World!' }, 'Hello%20World%21'],
    ['beep/{with_slash}/boop', { with_slash: 'foo/bar' }, 'beep/foo%2fbar/boop'],
    ['beep/{with_question}/boop', { with_question: 'foo?bar' }, 'beep/foo%3fbar/boop'],
    [
      'https://example.com/{hostname}/{namespace}/provider-{type}.zip',
      { hostname: 'example.net', namespace: 'ほげ', type: 'ふが' },
      'https://example.com/example.net/%e3%81%bb%e3%81%92/provider-%e3%81%b5%e3%81%8c.zip',
    ],
    ['foo{bar}', { bar: 'baz' }, 'foobaz'],
    ['hello_{undefined}_world', {}, 'hello__world'],
    ['{bleep%2fbloop}', { 'bleep%2fbloop': 'correct', 'bleep/bloop': 'incorrect' }, 'correct'],
    ['%2f', {}, '%2f'],
    [
      'registry.internal:5000/providers/{hostname}',
      { hostname: 'localhost:8443' },
      'registry.internal:5000/providers/localhost%3a8443',
    ],
  ])('%j expands', (template, vars, want) => {
    expect(validateLevel1(template)).toBeUndefined();
    expect(expandLevel1(template, vars)).toBe(want);
  });

  it.each([
    ['{oops', 'unclosed URI template expression'],
    ['whoopsy{daisy', 'unclosed URI template expression'],
    ['{+bar}', "level 2 template expression operator '+' not allowed; only level 1 templates are supported"],
    ['{#bar}', "level 2 template expression operator '#' not allowed; only level 1 templates are supported"],
    ['{.bar}', "level 3 template expression operator '.' not allowed; only level 1 templates are supported"],
    ['{/bar}', "level 3 template expression operator '/' not allowed; only level 1 templates are supported"],
    ['{?bar}', "level 3 template expression operator '?' not allowed; only level 1 templates are supported"],
    ['{=bar}', "reserved template expression operator '=' not allowed"],
    ['{,bar}', "reserved template expression operator ',' not allowed"],
    ['{|bar}', "reserved template expression operator '|' not allowed"],
    ['{bar:12}', "level 4 modifier ':' not allowed"],
    ['{bar*}', "level 4 modifier '*' not allowed"],
    ['%no', 'invalid percent-encoded character'],
    ['%', 'invalid percent-encoded character'],
    ['{bleep%bloop}', 'invalid percent-encoded character'],
    ['{bleep bloop}', "invalid symbol ' ' in variable name"],
    ['{a,b}', 'expression may include only one variable name'],
    ['{}', 'zero-length expression sequence'],
    ['a b', "disallowed character ' ' in literal"],
  ])('%j is refused: %s', (template, message) => {
    expect(validateLevel1(template)).toBe(message);
    expect(() => expandLevel1(template, {})).toThrow(message);
  });
});

describe('WWW-Authenticate challenges', () => {
  it('Basic, as distribution answers with htpasswd', () => {
    expect(parseChallenge('Basic realm="provkit-test"')).toEqual({
      scheme: 'basic',
      params: { realm: 'provkit-test' },
    });
  });
  it('Bearer with realm, service and scope (quoted, commas inside quotes)', () => {
    expect(
      parseChallenge(
        'Bearer realm="https://auth.example/token",service="registry.example",scope="repository:a/b:pull,push"',
      ),
    ).toEqual({
      scheme: 'bearer',
      params: { realm: 'https://auth.example/token', service: 'registry.example', scope: 'repository:a/b:pull,push' },
    });
  });
  it('token68-free, unquoted and escaped values', () => {
    expect(parseChallenge('bearer realm=https://a/t, error="insufficient_scope", note="a \\"b\\""')).toEqual({
      scheme: 'bearer',
      params: { realm: 'https://a/t', error: 'insufficient_scope', note: 'a "b"' },
    });
    expect(parseChallenge(null)).toBeUndefined();
  });
});

describe('OCI tags and digests', () => {
  it('a version tag writes + as _ and reads it back', () => {
    expect(versionTag('1.0.0+build.5')).toBe('1.0.0_build.5');
    expect(tagVersion('1.0.0_build.5')).toBe('1.0.0+build.5');
  });
  it('digests: sha256 and sha512 with their lengths, lower-case hex only', () => {
    expect(parseDigest(`sha256:${'a'.repeat(64)}`)).toEqual({
      algorithm: 'sha256',
      hex: 'a'.repeat(64),
      text: `sha256:${'a'.repeat(64)}`,
    });
    expect(parseDigest(`sha512:${'0'.repeat(128)}`)?.algorithm).toBe('sha512');
    expect(parseDigest(`sha256:${'A'.repeat(64)}`)).toBeUndefined();
    expect(parseDigest(`sha256:${'a'.repeat(63)}`)).toBeUndefined();
    expect(parseDigest(`md5:${'a'.repeat(32)}`)).toBeUndefined();
  });
});
