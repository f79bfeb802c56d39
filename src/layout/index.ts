/**
 * Mirror and cache path conventions and the network-mirror JSON documents,
 * as the reference writes them. Pure: strings in, strings out. A barrel:
 * re-exports only.
 */
export * from './paths.js';
export * from './mirror-json.js';
