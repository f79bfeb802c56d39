/**
 * The pull-through mirror (docs/fleet-mirror.md): what the command line and
 * library callers use. A barrel: re-exports only.
 */
export { originPolicy, allowedHosts, type OriginPolicy, type OriginPolicyInput } from './policy.js';
export { destinationGuard, type DestinationGuard } from './destinations.js';
export { DirectoryStore } from './dir-store.js';
export { OciStore } from './oci-store.js';
export { PullThroughService, answerFor, type FetchLogEntry, type PullThroughOptions } from './service.js';
export { MirrorMetrics } from './metrics.js';
export type { PackageStore } from './store.js';

export { startPullThroughMirror, type PullThroughMirror, type PullThroughMirrorOptions } from './mirror.js';
