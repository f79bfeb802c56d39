/**
 * Which files of a directory make up a module, and which of them are
 * override files (`internal/configs/parser_config_dir.go` `dirFiles`; seed
 * document 002 "文件夹与模块", "重载文件"):
 *
 * - only files directly in the directory (subdirectories are other modules);
 * - extensions `.tf` and `.tf.json`; for OpenTofu also `.tofu` and
 *   `.tofu.json`, and a `.tofu` / `.tofu.json` file hides the `.tf` /
 *   `.tf.json` file of the same base name;
 * - test files (`.tftest.hcl`, `.tftest.json`, OpenTofu's `.tofutest.*`) and
 *   every other file are ignored, as are editor files: names starting with
 *   `.`, ending with `~`, or starting and ending with `#`;
 * - `override.tf`, `*_override.tf` (and the other extensions) are override
 *   files, applied after all primary files;
 * - each list is in lexical (byte) order of the names, as Go's `ReadDir`.
 *
 * Pure: works on a directory listing.
 */
import type { Flavor } from '../addresses/index.js';
import { compareBytewise } from '../addresses/index.js';

/** A directory entry as {@link configFileNames} needs it. */
export interface DirEntry {
  readonly name: string;
  /** True for a directory (a symlink counts as what it is, not what it points to, as Go's `ReadDir`). */
  readonly isDirectory: boolean;
}

/** The configuration files of a module directory, by name. */
export interface ModuleFileNames {
  readonly primary: string[];
  readonly override: string[];
}

const TF_EXTS = ['.tf', '.tf.json'] as const;
const TOFU_EXTS = ['.tofu', '.tofu.json'] as const;
const TEST_EXTS = ['.tftest.hcl', '.tftest.json', '.tofutest.hcl', '.tofutest.json'] as const;

/** `IsIgnoredFile`: editor swap and backup files. */
export function isIgnoredFile(name: string): boolean {
  return name.startsWith('.') || name.endsWith('~') || (name.startsWith('#') && name.endsWith('#'));
}

/** The configuration extension of `name` for `flavor` (`.tf`, `.tf.json`, `.tofu`, `.tofu.json`), or `''`. */
export function configFileExt(name: string, flavor: Flavor): string {
  const exts: readonly string[] = flavor === 'tofu' ? [...TF_EXTS, ...TOFU_EXTS] : TF_EXTS;
  for (const ext of exts) if (name.endsWith(ext)) return ext;
  return '';
}

/** Whether `name` is an override file name (`override.tf`, `x_override.tf.json`, …). */
export function isOverrideFile(name: string, ext: string): boolean {
  const base = name.slice(0, name.length - ext.length);
  return base === 'override' || base.endsWith('_override');
}

/** OpenTofu's `filterTfPathsWithTofuAlternatives`: drop `x.tf` when `x.tofu` is present (and `.tf.json` / `.tofu.json`). */
function filterTofuAlternatives(names: string[]): string[] {
  const set = new Set(names);
  return names.filter((n) => {
    if (n.endsWith('.tf')) return !set.has(`${n.slice(0, -3)}.tofu`);
    if (n.endsWith('.tf.json')) return !set.has(`${n.slice(0, -8)}.tofu.json`);
    return true;
  });
}

/** Splits a directory listing into primary and override configuration files. */
export function configFileNames(entries: readonly DirEntry[], flavor: Flavor): ModuleFileNames {
  const primary: string[] = [];
  const override: string[] = [];
  const sorted = [...entries].sort((a, b) => compareBytewise(a.name, b.name));
  for (const e of sorted) {
    if (e.isDirectory || isIgnoredFile(e.name)) continue;
    if (TEST_EXTS.some((t) => e.name.endsWith(t))) continue;
    const ext = configFileExt(e.name, flavor);
    if (ext === '') continue;
    (isOverrideFile(e.name, ext) ? override : primary).push(e.name);
  }
  if (flavor !== 'tofu') return { primary, override };
  return { primary: filterTofuAlternatives(primary), override: filterTofuAlternatives(override) };
}
