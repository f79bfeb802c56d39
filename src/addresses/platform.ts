/**
 * Target platforms `os_arch` (docs/reference.md §1.4 item 19; `internal/getproviders/types.go`).
 *
 * Parsing applies no allow-list and no case folding, as the reference, but
 * each word must be a plain name, lowercase letters and digits (as every Go
 * `GOOS` and `GOARCH` is; addresses/names.ts): provkit builds paths and OCI
 * indexes from them, so a {@link Platform} cannot be made of anything else,
 * whoever makes it (a flag, `provkit.hcl`, a registry's answer, a mirror's
 * file names, a bundle manifest). {@link SUPPORTED_PLATFORMS} is only a
 * default and documentation list.
 *
 * Pure: {@link currentPlatform} reads `process.platform`/`process.arch`
 * (or the values it is given), nothing else.
 */
import { ErrorCode, ProvkitError } from '../errors.js';
import { compareBytewise } from '../go/index.js';
import { isPlatformWord } from './names.js';

/** The reason a platform word is refused (after the reference's whitespace rule). */
const WORD_RULE = 'must consist of lowercase letters and digits';

/** A target platform: Go `GOOS` and `GOARCH` names. Immutable. */
export class Platform {
  /** The operating system, a Go `GOOS` name (`linux`, `darwin`, `windows`): lowercase letters and digits. */
  readonly os: string;
  /** The CPU architecture, a Go `GOARCH` name (`amd64`, `arm64`): lowercase letters and digits. */
  readonly arch: string;

  /**
   * @throws {ProvkitError} `INVALID_PLATFORM` when a word is not lowercase
   *   letters and digits (addresses/names.ts `isPlatformWord`).
   */
  constructor(os: string, arch: string) {
    for (const [word, part] of [
      [os, 'OS'],
      [arch, 'architecture'],
    ] as const) {
      if (!isPlatformWord(word)) {
        throw new ProvkitError(ErrorCode.INVALID_PLATFORM, `${part} portion ${WORD_RULE}`, {
          platform: `${os}_${arch}`,
          found: word,
        });
      }
    }
    this.os = os;
    this.arch = arch;
    Object.freeze(this);
  }

  /** `os_arch`, as in package file names and `-platform` flags. */
  toString(): string {
    return `${this.os}_${this.arch}`;
  }

  /** The same OS and architecture. */
  equals(other: Platform): boolean {
    return this.os === other.os && this.arch === other.arch;
  }

  /** Sort order (Go `Platform.LessThan`): OS, then architecture, by bytes. */
  static compare(a: Platform, b: Platform): number {
    return compareBytewise(a.os, b.os) || compareBytewise(a.arch, b.arch);
  }
}

/** {@link Platform.compare} as a function. */
export function comparePlatforms(a: Platform, b: Platform): number {
  return Platform.compare(a, b);
}

const WHITESPACE = /[ \t\n\r]/;

/**
 * Parses `os_arch` (Go `ParsePlatform`, docs/reference.md §1.4 item 19): split on `_`, exactly two
 * parts, neither containing space, tab, CR or LF. No case folding, no
 * allow-list; then, stricter than Go, each word must be lowercase letters and
 * digits (see the module comment; Go accepts `_`, `x/../y_amd64`, `Linux_AMD64`).
 *
 * @throws {ProvkitError} `INVALID_PLATFORM` with the reference's text:
 *   `must be two words separated by an underscore`,
 *   `OS portion must not contain whitespace` or
 *   `architecture portion must not contain whitespace`; and provkit's
 *   `OS portion must consist of lowercase letters and digits` (or the
 *   architecture's).
 */
export function parsePlatform(s: string): Platform {
  const parts = s.split('_');
  if (parts.length !== 2) {
    throw new ProvkitError(ErrorCode.INVALID_PLATFORM, 'must be two words separated by an underscore', { platform: s });
  }
  const [os = '', arch = ''] = parts;
  if (WHITESPACE.test(os))
    throw new ProvkitError(ErrorCode.INVALID_PLATFORM, 'OS portion must not contain whitespace', { platform: s });
  if (WHITESPACE.test(arch)) {
    throw new ProvkitError(ErrorCode.INVALID_PLATFORM, 'architecture portion must not contain whitespace', {
      platform: s,
    });
  }
  return new Platform(os, arch);
}

/** A sorted copy, without duplicates, in {@link Platform.compare} order. */
export function sortPlatforms(platforms: Iterable<Platform>): Platform[] {
  const unique = new Map<string, Platform>();
  for (const p of platforms) unique.set(p.toString(), p);
  return [...unique.values()].sort(comparePlatforms);
}

/**
 * The platforms the registries publish for most providers. For defaults and
 * documentation only: parsing never checks against it.
 */
export const SUPPORTED_PLATFORMS: readonly Platform[] = Object.freeze(
  ['darwin_amd64', 'darwin_arm64', 'linux_amd64', 'linux_arm', 'linux_arm64', 'windows_amd64'].map(parsePlatform),
);

const GOOS: Readonly<Record<string, string>> = {
  win32: 'windows',
  cygwin: 'windows',
  sunos: 'solaris',
  darwin: 'darwin',
  linux: 'linux',
  freebsd: 'freebsd',
  openbsd: 'openbsd',
  netbsd: 'netbsd',
  aix: 'aix',
  android: 'android',
};

const GOARCH: Readonly<Record<string, string>> = {
  x64: 'amd64',
  ia32: '386',
  arm: 'arm',
  arm64: 'arm64',
  s390x: 's390x',
  riscv64: 'riscv64',
  loong64: 'loong64',
  mips: 'mips',
  mipsel: 'mipsle',
  mips64: 'mips64',
  mips64el: 'mips64le',
  ppc64: 'ppc64le',
};

/** Go `GOOS` for a Node `process.platform` value; unknown values pass through. */
export function goosFromNode(platform: string): string {
  return GOOS[platform] ?? platform;
}

/**
 * Go `GOARCH` for a Node `process.arch` value; unknown values pass through.
 * Node says `ppc64` for little-endian Linux (Go `ppc64le`) and for AIX, which
 * is big-endian (Go `ppc64`), so the platform is needed.
 */
export function goarchFromNode(arch: string, platform: string): string {
  if (arch === 'ppc64' && platform === 'aix') return 'ppc64';
  return GOARCH[arch] ?? arch;
}

/**
 * The platform provkit runs on, in Go names (the reference's default is the
 * `GOOS_GOARCH` of its own binary): `win32`→`windows`, `x64`→`amd64`,
 * `ia32`→`386`, `sunos`→`solaris`, and so on.
 */
export function currentPlatform(node: { readonly platform: string; readonly arch: string } = process): Platform {
  return new Platform(goosFromNode(node.platform), goarchFromNode(node.arch, node.platform));
}
