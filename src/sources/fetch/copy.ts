/**
 * The copy step of a fetch from a filesystem mirror into a destination of
 * its own: the archive is copied through the fetch's hashing stages into a
 * temporary file beside the destination, checked by the local-archive step
 * (archive.ts {@link checkArchive}), then renamed into place. A local copy's
 * bytes show as download progress (`NetEvents.onProgress`).
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

import { fileError, renameFileInError } from '../../errors.js';
import { tempPathFor, type NetEvents } from '../../net/index.js';
import { checkArchive, type CheckedArchive, type FetchJob } from './archive.js';

/**
 * Copies the archive at `source` to `dest` (claimed by the caller) and checks it.
 *
 * @throws {ProvkitError} what {@link checkArchive} throws, naming `source`,
 *   never the temporary copy; `IO` naming `dest` when it cannot be written.
 */
export async function copyArchive(job: FetchJob, source: string, dest: string): Promise<CheckedArchive> {
  const tmp = tempPathFor(dest);
  job.temps.push(tmp);
  const reader = createReadStream(source);
  const writer = createWriteStream(tmp, { flags: 'wx', mode: 0o644 });
  try {
    try {
      await pipeline(
        [reader, ...copyProgress(source, job.events), ...job.attempt.start(false), writer],
        job.signal === undefined ? {} : { signal: job.signal },
      );
    } catch (err) {
      // A full or read-only destination is not the source's fault: name the one that failed.
      if (writer.errored) throw fileError(writer.errored, 'cannot write', dest);
      if (reader.errored) throw fileError(reader.errored, 'cannot read', source);
      throw err;
    }
    const got = await job.attempt.digest();
    const checked = await checkArchive(job, tmp, got);
    await rename(tmp, dest);
    return { ...checked, zh: got.zh, path: dest, size: got.size, from: source };
  } catch (err) {
    await rm(tmp, { force: true });
    // Named by the source, never by the temporary copy.
    throw renameFileInError(err, tmp, source);
  }
}

/**
 * A local copy's bytes as download progress (`NetEvents.onProgress`, at
 * most every 100 ms and at the end): a filesystem mirror's archive copied
 * into a mirror shows on the progress display as a download does. None
 * without a progress listener.
 */
function copyProgress(path: string, events: NetEvents | undefined): Transform[] {
  if (events?.onProgress === undefined) return [];
  let received = 0;
  let last = 0;
  let total: number | undefined;
  const report = (): void => events.onProgress?.({ url: path, received, total });
  return [
    new Transform({
      construct(cb) {
        stat(path).then(
          (s) => {
            total = s.size;
            cb();
          },
          () => cb(),
        );
      },
      transform(chunk: Buffer, _enc, cb) {
        received += chunk.length;
        const now = Date.now();
        if (now - last >= 100) {
          last = now;
          report();
        }
        cb(null, chunk);
      },
      flush(cb) {
        report();
        cb();
      },
    }),
  ];
}
