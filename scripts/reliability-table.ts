// `npx tsx scripts/reliability-table.ts [REPORT.jsonl] [OUT.md]`: renders the
// fault suite's own record as docs/reliability.md.
//
// Produce the record with the suite itself:
//   rm -f /tmp/faults.jsonl
//   PROVKIT_RELIABILITY_REPORT=/tmp/faults.jsonl npx vitest run test/faults
//   npx tsx scripts/reliability-table.ts /tmp/faults.jsonl docs/reliability.md
//
// Each row (see test/faults/report.ts) is one fault that was tried and what
// happened; rows are grouped and kept in the order the tests ran, one per
// (group, command, fault) — a re-run of a test replaces its row.
import { readFile, writeFile } from 'node:fs/promises';

import type { FaultRow } from '../test/faults/report.js';

const GROUPS: ReadonlyArray<[string, string]> = [
  ['network', 'Network faults (HttpClient.download, with zh: verification)'],
  ['command', 'Network and trust faults during `provkit lock` and `provkit mirror`'],
  ['signal', 'SIGINT and SIGTERM to a child process'],
  ['concurrency', 'Concurrent runs'],
  ['archive', 'Hostile archives'],
  ['disk', 'Full disk'],
];

const cell = (s: string): string => s.replaceAll('|', '\\|').replaceAll('\n', ' ');

function render(rows: readonly FaultRow[]): string {
  const byKey = new Map<string, FaultRow>();
  for (const r of rows) byKey.set(`${r.group}\u0000${r.command}\u0000${r.fault}`, r);
  const unique = [...byKey.values()];
  const lines: string[] = [];
  for (const [group, title] of GROUPS) {
    const mine = unique.filter((r) => r.group === group);
    if (mine.length === 0) continue;
    lines.push(
      `### ${title}`,
      '',
      '| Fault | Command | Outcome | State after | Re-run |',
      '| --- | --- | --- | --- | --- |',
    );
    for (const r of mine)
      lines.push(
        `| ${cell(r.fault)} | ${cell(r.command)} | ${cell(r.outcome)} | ${cell(r.state)} | ${cell(r.rerun)} |`,
      );
    lines.push('');
  }
  const failed = unique.filter((r) => r.state === 'MIXED' || (r.rerun !== '-' && !r.rerun.startsWith('ok')));
  lines.push(`${unique.length} faults tried; ${failed.length} left a mixed state or a failing re-run.`, '');
  return lines.join('\n');
}

const BEGIN = '<!-- BEGIN GENERATED FAULT TABLE (scripts/reliability-table.ts) -->';
const END = '<!-- END GENERATED FAULT TABLE -->';

const [input = process.env['PROVKIT_RELIABILITY_REPORT'] ?? 'reliability.jsonl', output] = process.argv.slice(2);
const rows = (await readFile(input, 'utf8'))
  .split('\n')
  .filter((l) => l.trim() !== '')
  .map((l) => JSON.parse(l) as FaultRow);
const table = render(rows);
if (output === undefined) {
  process.stdout.write(table);
} else {
  // Only the generated block of the document is replaced; the prose around it stays.
  const doc = await readFile(output, 'utf8').catch(() => `${BEGIN}\n${END}\n`);
  const start = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (start < 0 || end < start) throw new Error(`${output}: no generated block (${BEGIN} … ${END})`);
  await writeFile(output, `${doc.slice(0, start + BEGIN.length)}\n\n${table}\n${doc.slice(end)}`);
}
