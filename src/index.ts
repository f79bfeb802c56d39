/**
 * provkit's public library API: re-exports only. The library never prints; it
 * returns values and emits typed events that the CLI's renderers display.
 */
export * from './errors.js';
export * from './hashing/index.js';
