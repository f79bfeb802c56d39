/**
 * The dependency lock file `.terraform.lock.hcl`: model, parse, serialize
 * (byte-identical to the reference), merge rules, which hashes a run records,
 * the trust-on-first-use verdict and whether `lock` writes the file, as pure
 * functions, and atomic load/save (file.ts, the only I/O).
 */
export * from './model.js';
export * from './parse.js';
export * from './serialize.js';
export * from './merge.js';
export * from './record.js';
export * from './verdict.js';
export * from './write-decision.js';
export * from './file.js';
export * from './flavor.js';
export * from './positions.js';
