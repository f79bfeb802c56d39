// Names that become paths (src/addresses/names.ts): the one check every path
// builder applies, and what a platform word may be.
import { describe, expect, it } from 'vitest';

import { isPlatformWord, parsePlatform, pathComponent, unsafeNameReason } from '../../src/addresses/index.js';
import { ErrorCode, ProvkitError } from '../../src/errors.js';
import { downloadName } from '../../src/layout/index.js';

describe('plain names', () => {
  it.each(['linux_amd64', 'terraform-provider-demo_1.0.0+build.1_linux_amd64.zip', 'registry.example.test:8443', 'é'])(
    '%j is a plain name',
    (s) => {
      expect(unsafeNameReason(s)).toBeUndefined();
      expect(pathComponent(s, 'name')).toBe(s);
    },
  );

  it.each<[string, string]>([
    ['', 'it is empty'],
    ['.', 'it names a directory, not an entry in one'],
    ['..', 'it names a directory, not an entry in one'],
    ['a/b', 'it contains a path separator'],
    ['..\\evil', 'it contains a path separator'],
    ['a\u0000b', 'it contains a control character'],
    ['a\nb', 'it contains a control character'],
    ['a\u009bb', 'it contains a control character'],
    ['x'.repeat(256), 'it is longer than 255 bytes'],
  ])('%j is refused: %s', (s, why) => {
    expect(unsafeNameReason(s)).toBe(why);
    try {
      pathComponent(s, 'package file name');
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ProvkitError);
      expect((err as ProvkitError).code).toBe(ErrorCode.UNSAFE_NAME);
      expect((err as ProvkitError).message).toMatch(/^the package file name ".*" cannot be part of a path: /);
      expect((err as ProvkitError).message).not.toMatch(/\n/);
    }
  });

  it('platform words are what GOOS and GOARCH are: lowercase letters and digits', () => {
    for (const w of ['linux', 'darwin', 'windows', 'freebsd', 'illumos', 'ios', 'js', 'plan9', 'wasip1', 'zos'])
      expect(isPlatformWord(w)).toBe(true);
    for (const w of ['386', 'amd64', 'arm', 'arm64', 'loong64', 'mips', 'mipsle', 'mips64le', 'ppc64', 'ppc64le'])
      expect(isPlatformWord(w)).toBe(true);
    for (const w of ['riscv64', 's390x', 'wasm']) expect(isPlatformWord(w)).toBe(true);
    for (const w of ['', 'Linux', 'amd-64', 'x/..', 'a b', 'arm\u001b']) expect(isPlatformWord(w)).toBe(false);
  });

  it("a download's file name is a plain name, whatever the source said", () => {
    expect(downloadName('terraform-provider-demo_1.0.0_linux_amd64.zip', 3)).toBe(
      '3-terraform-provider-demo_1.0.0_linux_amd64.zip',
    );
    expect(() => downloadName('../../../escaped.zip')).toThrow(
      /cannot be part of a path: it contains a path separator/,
    );
    expect(() => downloadName('/')).toThrow(ProvkitError);
  });

  it('a Platform is always made of plain names, so every path built of one is too', () => {
    expect(parsePlatform('linux_mips64le').toString()).toBe('linux_mips64le');
    expect(() => parsePlatform('x/../../../ESCAPED/evil_amd64')).toThrow(/OS portion must consist of/);
  });
});
