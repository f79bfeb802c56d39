/**
 * The provider matching patterns of `provider_installation` methods: they
 * live in `src/addresses/patterns.ts` (the audit policy of `provkit.hcl`
 * uses them too); re-exported here where the CLI configuration names them.
 */
export * from '../addresses/patterns.js';
