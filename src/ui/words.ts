/**
 * Counted nouns in provkit's own messages: `1 package`, `2 packages`,
 * `1 hash`, `3 hashes` (the plural given where it is not the noun plus `s`).
 * The one rule for the CLI's and the UI's summaries; messages the reference
 * prints are copied as it words them, not built with this.
 */
export function count(n: number, noun: string, plural = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : plural}`;
}
