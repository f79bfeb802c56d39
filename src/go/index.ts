/**
 * Go's semantics where provkit must reproduce the reference tools' bytes:
 * `strconv.Quote` (the `%q` verb), `strings.TrimSpace`, `path.Clean`,
 * `json.MarshalIndent`, Go's string order (UTF-8 bytes) and the "Did you
 * mean" rule of terraform and hcl. The one place for them: every layer above
 * uses these, none keeps a copy.
 *
 * The bottom layer (eslint.config.js): imports nothing of src/. A barrel:
 * re-exports only.
 */
export * from './strings.js';
export * from './path.js';
export * from './json.js';
export * from './didyoumean.js';
