/**
 * provkit's public library API: re-exports only. The library never prints; it
 * returns values and emits typed events that the CLI's renderers display.
 *
 * The core (errors, addresses, hashing, lock file) is exported flat; the
 * larger layers as namespaces.
 */
export * from './errors.js';
export * from './hashing/index.js';
export * from './addresses/index.js';
export * from './lockfile/index.js';
// The one Diagnostic of provkit (what the commands report); the parsers'
// source-located diagnostics (parseLockFile's) are `HclDiagnostic`.
export type { Diagnostic, DiagnosticCode, DiagnosticRange } from './errors.js';
export type { Diagnostic as HclDiagnostic } from './hcl/index.js';
export * as hcl from './hcl/index.js';
export * as config from './config/index.js';
export * as cliconfig from './cliconfig/index.js';
export * as layout from './layout/index.js';
export * as net from './net/index.js';
export * as sources from './sources/index.js';
export { runLock, selectVersion, type LockOptions, type LockOutcome, type Requirement } from './installer/lock.js';
export { runMirror, type MirrorOptions, type MirrorOutcome } from './installer/mirror.js';
export { runInstall } from './installer/install.js';
export { extractPackage } from './installer/extract.js';
export type { InstallerEvent, EventSink } from './installer/events.js';
