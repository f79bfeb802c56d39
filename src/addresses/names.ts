/**
 * Names that become paths: the one check (docs/reliability.md, "Names from
 * outside, text to the terminal").
 *
 * A platform, a provider's host, namespace and type, a version and a package
 * file name all end up as components of paths provkit writes (a mirror's
 * `HOST/NS/TYPE/VERSION/OS_ARCH`, a download's file name in a work
 * directory, an OCI index's `os` and `architecture`). They come from flags,
 * `provkit.hcl`, lock files, CLI configurations, bundle manifests and the
 * answers of registries and mirrors. Two rules, both here:
 *
 * - where such a name enters, it is validated as what it is (a platform's
 *   words with {@link isPlatformWord}, through the {@link Platform}
 *   constructor, whoever builds one);
 * - every function that joins names into a path passes each component
 *   through {@link pathComponent}, which refuses anything that is not a
 *   plain name, so that an entry point added later cannot write outside its
 *   directory even if it forgets the first rule.
 *
 * Pure: no I/O.
 */
import { ErrorCode, ProvkitError } from '../errors.js';
import { goQuote } from '../go/index.js';

/**
 * Whether `word` can be the OS or the architecture of a platform: one or more
 * lowercase ASCII letters and digits, as every Go `GOOS` and `GOARCH` is
 * (`linux`, `darwin`, `windows`, `amd64`, `386`, `arm64`, `ppc64le`,
 * `mips64le`, `riscv64`, `loong64`, `s390x`, `wasm`; `go tool dist list`).
 * Stricter than the reference's `ParsePlatform`, which only refuses
 * whitespace: provkit builds paths and OCI indexes from these words.
 */
export function isPlatformWord(word: string): boolean {
  return /^[a-z0-9]+$/.test(word);
}

/** The longest path component provkit writes (bytes, as most file systems count them). */
const MAX_COMPONENT_BYTES = 255;

/** What makes a name not a plain name ({@link unsafeNameKind}). */
export type UnsafeNameKind = 'empty' | 'dot' | 'separator' | 'control' | 'long';

/**
 * What keeps `name` from being one component of a path, or undefined when
 * it is a plain name: not empty, not `.` or `..`, no `/` or `\`, no control
 * character (C0, DEL, C1) and no more than 255 bytes of UTF-8.
 */
export function unsafeNameKind(name: string): UnsafeNameKind | undefined {
  if (name === '') return 'empty';
  if (name === '.' || name === '..') return 'dot';
  if (name.includes('/') || name.includes('\\')) return 'separator';
  if (/[\u0000-\u001f\u007f-\u009f]/.test(name)) return 'control';
  if (Buffer.byteLength(name, 'utf8') > MAX_COMPONENT_BYTES) return 'long';
  return undefined;
}

const REASONS: Readonly<Record<UnsafeNameKind, string>> = {
  empty: 'it is empty',
  dot: 'it names a directory, not an entry in one',
  separator: 'it contains a path separator',
  control: 'it contains a control character',
  long: `it is longer than ${MAX_COMPONENT_BYTES} bytes`,
};

/** {@link unsafeNameKind} as a clause for a message (`it contains a path separator`). */
export function unsafeNameReason(name: string): string | undefined {
  const kind = unsafeNameKind(name);
  return kind === undefined ? undefined : REASONS[kind];
}

/**
 * `name` itself when it is a plain name ({@link unsafeNameReason}); every
 * path builder passes each component it joins through this.
 *
 * @param what what the name is, for the message (`platform`, `package file name`).
 * @throws {ProvkitError} `UNSAFE_NAME`, naming the component quoted as Go's `%q` quotes.
 */
export function pathComponent(name: string, what: string): string {
  const why = unsafeNameReason(name);
  if (why === undefined) return name;
  throw new ProvkitError(ErrorCode.UNSAFE_NAME, `the ${what} ${goQuote(name)} cannot be part of a path: ${why}`, {
    found: name,
  });
}
