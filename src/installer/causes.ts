/**
 * One message per cause: where one cause fails many items (every package
 * from a server that does not speak TLS, every repository of a registry
 * that refuses access), a run says the cause once, with its hint, and lists
 * the items it stopped, instead of one paragraph per item.
 *
 * An error names such a cause by carrying the diagnostic of it: a `summary`
 * and a `detail` that say nothing of the item (set where the error is made:
 * src/net/failure.ts for servers, src/net/oci/client.ts for registries that
 * refuse access). Failures whose errors have the same code, summary and
 * detail share their cause. The rest are left to the command's own words.
 *
 * Pure.
 */
import { type Diagnostic, type ProvkitError } from '../errors.js';

/** A cause and the failures it explains, in the order they came. */
export interface CauseGroup<T> {
  readonly error: ProvkitError;
  readonly failures: readonly T[];
}

/** Failures split into those of shared causes ({@link CauseGroup}s, in order of first appearance) and the others. */
export function groupByCause<T extends { readonly error: ProvkitError }>(
  failures: readonly T[],
): { causes: CauseGroup<T>[]; rest: T[] } {
  const groups = new Map<string, { error: ProvkitError; failures: T[] }>();
  const rest: T[] = [];
  for (const f of failures) {
    const { summary, detail } = f.error;
    if (summary === undefined || detail === undefined) {
      rest.push(f);
      continue;
    }
    const key = JSON.stringify([f.error.code, summary, detail]);
    const g = groups.get(key);
    if (g) g.failures.push(f);
    else groups.set(key, { error: f.error, failures: [f] });
  }
  return { causes: [...groups.values()], rest };
}

/**
 * The diagnostic of a cause: its summary, its detail and, after it, `what`
 * (`Providers not locked`) and the items, one per line, de-duplicated in the
 * order given; its hint.
 */
export function causeDiagnostic(error: ProvkitError, what: string, items: readonly string[]): Diagnostic {
  const list = [...new Set(items)].map((i) => `- ${i}`).join('\n');
  return {
    severity: 'error',
    summary: error.summary ?? 'Error',
    detail: `${error.detail ?? error.message}${list === '' ? '' : `\n\n${what}:\n${list}`}`,
    code: error.code,
    ...(error.hint === undefined ? {} : { hint: error.hint }),
  };
}
