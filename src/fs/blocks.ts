/**
 * The size of the blocks a download is cut into before its later stages:
 * the HTTP client's own file writes (`net/download.ts` `coalesce`) and the
 * blocks a hash worker receives and writes (`hashing/pool.ts`
 * `WorkerFileSink`). One value, because the pool recycles the memory of
 * either kind of block for the next (its spares are taken by this size); it
 * lives here, below both, because it is the size of a file write: hashing
 * knows no network. 256 KiB measured better than 1 MiB (bench/PROFILE.md,
 * "Tried and dropped").
 */
export const DOWNLOAD_BLOCK = 256 * 1024;
