/**
 * {@link parseHCL}: a file in the HCL native syntax, tokenized and parsed
 * (lexer.ts, parser.ts), never throwing.
 */
import type { Body, Diagnostic } from './ast.js';
import type { Comment, SourceText } from './lexer.js';
import { tokenize } from './lexer.js';
import type { ParseOptions } from './parser.js';
import { parseTokens } from './parser.js';
import { errorText } from '../errors.js';
import { syntaxError } from './diagnostics.js';

/** The result of {@link parseHCL}. */
export interface ParseResult {
  /** The file's top-level body; structurally sound even when there are errors. */
  body: Body;
  /** Lexical and syntax diagnostics, in source order of discovery (lexical first). */
  diagnostics: Diagnostic[];
  /** The source bytes and position mapping, for {@link sourceText} and friends. */
  source: SourceText;
  /** All comments, in source order. */
  comments: Comment[];
}

/**
 * Parses a configuration file in the HCL native syntax.
 *
 * `source` may be raw bytes (validated as UTF-8: invalid bytes give an
 * "Invalid character encoding" error, never an exception) or a string.
 * `filename` is only used in diagnostic ranges. The body is only meaningful
 * to act on when `diagnostics` has no error. For CLI configuration files,
 * pass `{ quotedAttributeNames: true }` (see {@link ParseOptions}).
 */
export function parseHCL(source: Uint8Array | string, filename: string, options: ParseOptions = {}): ParseResult {
  const lexed = tokenize(source, filename);
  let body: Body;
  const diagnostics: Diagnostic[] = [...lexed.diagnostics];
  try {
    const parsed = parseTokens(lexed.tokens, options);
    body = parsed.body;
    diagnostics.push(...parsed.diagnostics);
  } catch (e) {
    // Defence in depth: the parser is written not to throw; should it ever,
    // the caller still gets a diagnostic rather than an exception.
    const r = lexed.source.range(0, 0);
    body = { kind: 'Body', attributes: [], blocks: [], range: r, endRange: r };
    diagnostics.push(syntaxError('Internal parser error', `The HCL parser failed unexpectedly: ${errorText(e)}`, r));
  }
  return { body, diagnostics, source: lexed.source, comments: lexed.comments };
}
