/**
 * HCL native syntax: parsing, static evaluation and string-literal writing.
 *
 * Contract: pure (no I/O), dependency-free, and total — {@link parseHCL}
 * never throws, for any input, and runs in time linear in the input size.
 * Implements hashicorp/hcl `hclsyntax/spec.md`; diagnostics are worded like
 * hclsyntax's so that users see what Terraform/OpenTofu would say. A
 * barrel: re-exports only.
 */
export type * from './ast.js';
export type { Comment, LexResult, Token, TokenType } from './lexer.js';
export { SourceText, tokenize } from './lexer.js';
export type { ParseOptions } from './parser.js';
export { MAX_NESTING, rangeBetween, rangeString } from './parser.js';
export { hasErrors } from './diagnostics.js';
export { type ParseResult, parseHCL } from './parse.js';
export * from './eval.js';
export * from './write.js';
export * from './json.js';
