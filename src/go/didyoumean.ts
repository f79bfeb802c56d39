/**
 * "Did you mean …?": the one suggestion rule of provkit, for every word a
 * person typed that matched nothing (an HCL keyword or attribute, a
 * command, a flag, a platform, a template variable).
 *
 * Pure: no I/O.
 */

/** How close a word must be to be suggested, and which candidate wins. */
export type SuggestionRule =
  /**
   * The reference's, for what it reports (HCL and configuration
   * diagnostics): the first candidate within a Levenshtein distance of less
   * than 3, counted in runes (hashicorp/terraform internal/didyoumean/name.go
   * `NameSuggestion`, hashicorp/hcl hclsyntax/didyoumean.go
   * `nameSuggestion`, both over github.com/agext/levenshtein).
   */
  | 'reference'
  /**
   * provkit's, for words typed on its command line: the closest candidate
   * (ties go to the first), where a swap of two neighbours counts as one
   * edit (`platfrom`), `given` being a prefix of a candidate (3 characters
   * at least) counts as one, and one being the other with a qualifier
   * before a `-` counts as two (one command's flag given to another:
   * `verify -fs-mirror` for verify's `-mirror`).
   */
  | 'typed';

/**
 * The candidate `given` was probably meant to be, by `rule` (see
 * {@link SuggestionRule}), or undefined when none is close.
 */
export function nameSuggestion(
  given: string,
  candidates: readonly string[],
  rule: SuggestionRule = 'reference',
): string | undefined {
  const g = [...given];
  if (rule === 'reference') {
    for (const c of candidates) if (editDistance(g, [...c], false) < 3) return c;
    return undefined;
  }
  let best: string | undefined;
  let bestDistance = 3;
  for (const c of candidates) {
    // A qualifier counts as 2: a typo of another word (`-platforms`) is the likelier meaning.
    const qualified = given.endsWith(`-${c}`) || c.endsWith(`-${given}`);
    const d = c.startsWith(given) && given.length >= 3 ? 1 : Math.min(editDistance(g, [...c], true), qualified ? 2 : 3);
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return best;
}

/**
 * The edit distance of two rune sequences (insertions, deletions,
 * substitutions and, with `swaps`, transpositions of neighbours), exact
 * below 3; 3 or more otherwise (a length difference of 3 needs 3 edits, so
 * the table is never built for it).
 */
function editDistance(a: readonly string[], b: readonly string[], swaps: boolean): number {
  if (Math.abs(a.length - b.length) >= 3) return 3;
  let before: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const swap =
        swaps && i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1] ? (before[j - 2] ?? 0) + 1 : Infinity;
      cur.push(Math.min((prev[j] ?? 0) + 1, (cur[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost, swap));
    }
    before = prev;
    prev = cur;
  }
  return prev[b.length] ?? 0;
}
