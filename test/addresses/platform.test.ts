import { describe, expect, it } from 'vitest';

import { ErrorCode, ProvkitError } from '../../src/errors.js';
import {
  comparePlatforms,
  currentPlatform,
  goarchFromNode,
  goosFromNode,
  parsePlatform,
  Platform,
  sortPlatforms,
  SUPPORTED_PLATFORMS,
} from '../../src/addresses/index.js';

describe('parsePlatform (item 19)', () => {
  it.each<[string, string, string]>([
    ['linux_amd64', 'linux', 'amd64'],
    ['darwin_arm64', 'darwin', 'arm64'],
    ['plan9_mips64le', 'plan9', 'mips64le'], // no allow-list
    // Real GOOS/GOARCH values (`go tool dist list`): lowercase letters and digits.
    ['linux_386', 'linux', '386'],
    ['linux_ppc64le', 'linux', 'ppc64le'],
    ['linux_riscv64', 'linux', 'riscv64'],
    ['linux_loong64', 'linux', 'loong64'],
    ['linux_s390x', 'linux', 's390x'],
    ['js_wasm', 'js', 'wasm'],
    ['wasip1_wasm', 'wasip1', 'wasm'],
    ['solaris_amd64', 'solaris', 'amd64'],
  ])('%j', (s, os, arch) => {
    const p = parsePlatform(s);
    expect([p.os, p.arch]).toEqual([os, arch]);
    expect(p.toString()).toBe(s);
    expect(p.equals(new Platform(os, arch))).toBe(true);
  });

  it.each<[string, string]>([
    ['', 'must be two words separated by an underscore'],
    ['linux', 'must be two words separated by an underscore'],
    ['linux_amd_64', 'must be two words separated by an underscore'],
    ['linux-amd64', 'must be two words separated by an underscore'],
    ['li nux_amd64', 'OS portion must not contain whitespace'],
    ['linux\t_amd64', 'OS portion must not contain whitespace'],
    ['linux_amd64\n', 'architecture portion must not contain whitespace'],
    ['linux_amd\r64', 'architecture portion must not contain whitespace'],
    // Stricter than the reference (names become paths): lowercase letters and digits only.
    ['Linux_AMD64', 'OS portion must consist of lowercase letters and digits'], // no case folding, and no capitals
    ['_', 'OS portion must consist of lowercase letters and digits'], // Go accepts empty words
    ['os_', 'architecture portion must consist of lowercase letters and digits'],
    ['x/../../../ESCAPED/evil_amd64', 'OS portion must consist of lowercase letters and digits'],
    ['a_b/../../victim/keep', 'architecture portion must consist of lowercase letters and digits'],
    ['..\\x_amd64', 'OS portion must consist of lowercase letters and digits'],
    ['linux_amd64\u001b[2J', 'architecture portion must consist of lowercase letters and digits'],
    ['linux\u0000_amd64', 'OS portion must consist of lowercase letters and digits'],
    ['linux_amd-64', 'architecture portion must consist of lowercase letters and digits'],
    ['linux_amd.64', 'architecture portion must consist of lowercase letters and digits'],
  ])('%j fails: %s', (s, message) => {
    try {
      parsePlatform(s);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ProvkitError);
      expect((err as ProvkitError).code).toBe(ErrorCode.INVALID_PLATFORM);
      expect((err as ProvkitError).message).toBe(message);
      expect((err as ProvkitError).platform).toBe(s);
    }
  });

  it('sorts by OS, then architecture, by bytes, without duplicates', () => {
    const ps = ['windows_amd64', 'linux_arm64', 'linux_amd64', 'darwin_arm64', 'linux_amd64', 'aix_x'].map(
      parsePlatform,
    );
    expect(sortPlatforms(ps).map(String)).toEqual([
      'aix_x',
      'darwin_arm64',
      'linux_amd64',
      'linux_arm64',
      'windows_amd64',
    ]);
    expect(comparePlatforms(parsePlatform('linux_arm'), parsePlatform('linux_arm64'))).toBeLessThan(0);
    expect(Platform.compare(parsePlatform('a_b'), parsePlatform('a_b'))).toBe(0);
  });

  it('no Platform can be built of words that are not plain names, whoever builds it', () => {
    for (const [os, arch] of [
      ['..', 'amd64'],
      ['linux', 'a/b'],
      ['', 'amd64'],
      ['linux', 'AMD64'],
    ] as const) {
      expect(() => new Platform(os, arch)).toThrow(/must consist of lowercase letters and digits/);
    }
  });

  it('SUPPORTED_PLATFORMS is the documented default list', () => {
    expect(SUPPORTED_PLATFORMS.map(String)).toEqual([
      'darwin_amd64',
      'darwin_arm64',
      'linux_amd64',
      'linux_arm',
      'linux_arm64',
      'windows_amd64',
    ]);
  });
});

describe('currentPlatform', () => {
  it.each<[string, string, string]>([
    ['linux', 'x64', 'linux_amd64'],
    ['darwin', 'arm64', 'darwin_arm64'],
    ['win32', 'x64', 'windows_amd64'],
    ['win32', 'ia32', 'windows_386'],
    ['win32', 'arm64', 'windows_arm64'],
    ['linux', 'arm', 'linux_arm'],
    ['linux', 'ppc64', 'linux_ppc64le'],
    ['aix', 'ppc64', 'aix_ppc64'],
    ['linux', 's390x', 'linux_s390x'],
    ['linux', 'riscv64', 'linux_riscv64'],
    ['linux', 'loong64', 'linux_loong64'],
    ['linux', 'mips', 'linux_mips'],
    ['linux', 'mipsel', 'linux_mipsle'],
    ['linux', 'mips64el', 'linux_mips64le'],
    ['freebsd', 'x64', 'freebsd_amd64'],
    ['openbsd', 'arm64', 'openbsd_arm64'],
    ['netbsd', 'ia32', 'netbsd_386'],
    ['sunos', 'x64', 'solaris_amd64'],
    ['android', 'arm64', 'android_arm64'],
    ['haiku', 'x64', 'haiku_amd64'], // unknown OS passes through
    ['linux', 'sparc', 'linux_sparc'], // unknown arch passes through
  ])('%s/%s → %s', (platform, arch, want) => {
    expect(currentPlatform({ platform, arch }).toString()).toBe(want);
    expect(`${goosFromNode(platform)}_${goarchFromNode(arch, platform)}`).toBe(want);
  });

  it('reads process.platform and process.arch by default', () => {
    expect(currentPlatform()).toEqual(currentPlatform({ platform: process.platform, arch: process.arch }));
    expect(currentPlatform().toString()).toMatch(/^[a-z0-9]+_[a-z0-9]+$/);
  });
});
