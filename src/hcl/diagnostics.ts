import type { Diagnostic } from '../errors.js';

/** Whether any diagnostic is an error (hcl.Diagnostics.HasErrors). */
export function hasErrors(diagnostics: readonly Diagnostic[]): boolean {
  return diagnostics.some((d) => d.severity === 'error');
}
