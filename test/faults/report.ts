/**
 * The fault suite's record: each fault test appends one row (fault, command,
 * outcome, state after, re-run) as a JSON line to the file named by
 * `PROVKIT_RELIABILITY_REPORT`, when set; `scripts/reliability-table.ts`
 * renders the rows as the table of docs/reliability.md. Without the variable
 * nothing is written.
 */
import { appendFileSync } from 'node:fs';

export interface FaultRow {
  /** Which group of faults: network, signal, concurrency, archive, disk. */
  readonly group: string;
  readonly fault: string;
  readonly command: string;
  /** What the run did: `ok (resumed from byte 131072)`, `exit 1 NET_TIMEOUT`, … */
  readonly outcome: string;
  /** `unchanged`, `fully updated`, … */
  readonly state: string;
  /** The plain re-run: `ok` or what failed; `-` when not applicable. */
  readonly rerun: string;
}

/** Appends `row` to the report (see the module comment). */
export function recordFault(row: FaultRow): void {
  const file = process.env['PROVKIT_RELIABILITY_REPORT'];
  if (file === undefined || file === '') return;
  appendFileSync(file, `${JSON.stringify(row)}\n`);
}
