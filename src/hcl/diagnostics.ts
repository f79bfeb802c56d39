import { ErrorCode } from '../errors.js';
import type { Diagnostic } from '../errors.js';
import type { Diagnostic as HclDiagnostic, Range } from './ast.js';

/** Whether any diagnostic is an error (hcl.Diagnostics.HasErrors). */
export function hasErrors(diagnostics: readonly Diagnostic[]): boolean {
  return diagnostics.some((d) => d.severity === 'error');
}

/**
 * An error found by HCL itself (lexing, parsing, JSON, evaluation): the one
 * place that gives HCL's diagnostics their code, {@link ErrorCode.INVALID_CONFIGURATION}
 * (the lock-file reader re-codes its file's, src/lockfile/parse.ts).
 */
export function syntaxError(summary: string, detail: string, range: Range, context?: Range): HclDiagnostic {
  return {
    severity: 'error',
    code: ErrorCode.INVALID_CONFIGURATION,
    summary,
    detail,
    range,
    ...(context ? { context } : {}),
  };
}
