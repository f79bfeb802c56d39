/**
 * provkit's public library API: re-exports only. The library never prints; it
 * returns values and emits typed events that the CLI's renderers display.
 */
export * from './errors.js';
export * from './hashing/index.js';
export * from './addresses/index.js';
export * from './lockfile/index.js';
export * as net from './net/index.js';
export * as sources from './sources/index.js';
