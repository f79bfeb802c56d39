/**
 * The HTTP step of a fetch (OpenTofu's `installFromHTTPURL`): the archive is
 * downloaded (net/download.ts: retries, resumes, a temporary file beside the
 * destination) through the fetch's hashing stages, and the complete
 * temporary file is handed to the local-archive step (archive.ts
 * {@link checkArchive}) before the download renames it into place.
 */
import { ErrorCode, ProvkitError, renameFileInError } from '../../errors.js';
import type { HttpClient } from '../../net/index.js';
import type { PackageMeta } from '../source.js';
import { checkArchive, type CheckedArchive, type FetchJob, isPending } from './archive.js';

type HttpLocation = Extract<PackageMeta['location'], { kind: 'http' }>;

/**
 * Downloads `loc` to `dest` (claimed by the caller) and checks it.
 *
 * @throws {ProvkitError} the `NET_*` codes of the download and what {@link checkArchive} throws,
 *   naming the URL, never the temporary file.
 */
export async function downloadArchive(
  job: FetchJob,
  loc: HttpLocation,
  http: HttpClient,
  dest: string,
): Promise<CheckedArchive> {
  const { meta, attempt } = job;
  const credential = loc.credential?.();
  let checked: Omit<CheckedArchive, 'path' | 'size' | 'from'> | undefined;
  const res = await http.download(loc.url, dest, {
    ...(credential === undefined ? {} : { credential }),
    ...(loc.headers === undefined ? {} : { headers: loc.headers }),
    // An OCI blob is never more than its layer's size (OpenTofu reads through an io.LimitReader).
    ...(!isPending(meta) && meta.authentication?.kind === 'oci-blob' ? { maxBytes: meta.authentication.size } : {}),
    ...(job.signal === undefined ? {} : { signal: job.signal }),
    ...(job.events === undefined ? {} : { events: job.events }),
    transforms: () => attempt.start(true),
    writeFile: attempt.writeFile,
    verify: async (tmp, info) => {
      job.temps.push(tmp);
      try {
        const got = await attempt.digest();
        checked = { zh: got.zh, ...(await checkArchive(job, tmp, { zh: got.zh, size: info.size })) };
      } catch (err) {
        // Named by the URL, never by the temporary copy.
        throw renameFileInError(err, tmp, loc.url);
      }
    },
  });
  if (checked === undefined) throw new ProvkitError(ErrorCode.IO, 'internal: the archive was not hashed');
  return { ...checked, path: res.path, size: res.size, from: res.url };
}
