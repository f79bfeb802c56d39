/**
 * The one check every command applies to a provider zip before it uses it,
 * and the naming of a refused zip by where it came from.
 *
 * `hash`, `lock` and `install` refuse a package whose extracted form cannot
 * be computed ({@link ZipPackageHashes.h1} not ok: not a zip, a bad entry,
 * `..` or absolute names, an empty archive, ...; the codes are the hashing
 * layer's, `ZIP_*` and `HASH_*`). `mirror` refuses the same packages with
 * the same codes, so that a mirror never publishes what no client can
 * install; it also needs the zip form (`h1Zip`, what VERSION.json lists).
 *
 * The hashing layer names the file it read; that is often a copy (a
 * download's temporary file, a mirror's staging file). A refusal is about
 * the package, so it is restated with the package's source: the final
 * download URL or the filesystem-mirror file ({@link FetchedArchive.from}).
 */
import { ProvkitError } from '../errors.js';
import type { Hash, ZipForms, ZipPackageHashes } from '../hashing/index.js';

/** `err`, about the copy at `copy`, restated about `from` (a URL or a path). */
export function namedBySource(err: ProvkitError, copy: string, from: string): ProvkitError {
  if (copy === from) return err;
  const { code, message, file, ...fields } = err.toJSON();
  const isUrl = /^https?:\/\//i.test(from);
  const located = isUrl ? { url: from } : { file: from };
  return new ProvkitError(code, message.split(copy).join(from), {
    ...fields,
    ...(file === undefined || file === copy ? {} : { file }),
    ...located,
    cause: err,
  });
}

/**
 * The zip's extracted-form `h1:`, or the refusal `hash`, `lock` and
 * `install` give for it (that form's error), named by `from`.
 */
export function requireExtractable(zip: ZipForms, from: string): Hash {
  if (!zip.h1.ok) throw namedBySource(zip.h1.error, zip.path, from);
  return zip.h1.hash;
}

/** {@link requireExtractable}, and the zip form a mirror index lists must be computable too. */
export function requireMirrorable(zip: ZipPackageHashes, from: string): void {
  requireExtractable(zip, from);
  if (!zip.h1Zip.ok) throw namedBySource(zip.h1Zip.error, zip.path, from);
}
