/**
 * Where each hash of a lock file is written: the line and column of every
 * item of every provider block's `hashes` list, so a finding about a hash
 * (`provkit audit`'s SARIF, docs/provenance.md) points at its line. Pure
 * over the file's bytes; a file the parser rejects (parse.ts says why) has
 * the positions of what could be read.
 */
import { parseHCL, staticList, staticString } from '../hcl/index.js';

/** A 1-based line and column (columns in characters, as HCL counts them). */
export interface LockPosition {
  readonly line: number;
  readonly column: number;
}

/** Per provider block label (the lock's fully-qualified, normalized address), per hash text: where it is written (its first occurrence). */
export type LockHashPositions = ReadonlyMap<string, ReadonlyMap<string, LockPosition>>;

/** See the module comment. */
export function lockHashPositions(source: Uint8Array | string, filename: string): LockHashPositions {
  const parsed = parseHCL(source, filename);
  const out = new Map<string, Map<string, LockPosition>>();
  for (const block of parsed.body.blocks) {
    if (block.type !== 'provider' || block.labels.length !== 1) continue;
    const label = block.labels[0]!;
    const attr = block.body.attributes.find((a) => a.name === 'hashes');
    const items = attr === undefined ? undefined : staticList(attr.expr).items;
    const positions = out.get(label) ?? new Map<string, LockPosition>();
    out.set(label, positions);
    for (const item of items ?? []) {
      const text = staticString(item).value;
      if (text !== undefined && !positions.has(text))
        positions.set(text, { line: item.range.start.line, column: item.range.start.column });
    }
  }
  return out;
}
