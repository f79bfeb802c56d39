/**
 * How many archives a command downloads at once: `-downloads=N`, else
 * `PROVKIT_DOWNLOADS`, else the library's default (the cores' share, 8 once
 * the link holds the streams: installer/download-queue.ts `networkQueue`).
 * The hash pool has its own budget (docs/reliability.md "Downloads at once").
 */
import { ErrorCode, ProvkitError } from '../errors.js';
import { DEFAULT_DOWNLOADS, MAX_DOWNLOADS } from '../installer/download-queue.js';
import type { FlagSpec, ParsedFlags } from './flags.js';
import type { CliIO } from './io.js';

/** The flag, for a command's `parseFlags` spec. */
export const DOWNLOADS_FLAG = { downloads: 'int' } as const satisfies FlagSpec;

/** The help lines of `-downloads`, its description starting at `column` as the command's other options' do. */
export function downloadsHelp(column: number): string {
  const flag = '  -downloads=N';
  return (
    `${flag.padEnd(column)}Archives downloaded at once, 1 to ${MAX_DOWNLOADS} (default\n` +
    `${''.padEnd(column)}PROVKIT_DOWNLOADS, else the cores' share, ${DEFAULT_DOWNLOADS}\n` +
    `${''.padEnd(column)}once the link is what holds the streams).`
  );
}

/**
 * The number of downloads at once for this run, as the library's option
 * (`networkConcurrency`), absent when neither the flag nor the variable sets
 * it (the library adapts it). A value out of range is a
 * usage error naming where it came from (the flag, as a flag error; the
 * variable, with its value).
 */
export function downloadsOption(
  flags: ParsedFlags<typeof DOWNLOADS_FLAG>,
  env: CliIO['env'],
): { readonly networkConcurrency?: number } {
  const flag = flags.values.downloads;
  if (flag !== undefined) {
    if (flag >= 1 && flag <= MAX_DOWNLOADS) return { networkConcurrency: flag };
    throw new ProvkitError(
      ErrorCode.INVALID_FLAGS,
      `invalid value "${flag}" for flag -downloads: a number from 1 to ${MAX_DOWNLOADS} is required`,
      { found: `-downloads=${flag}` },
    );
  }
  const text = env['PROVKIT_DOWNLOADS']?.trim();
  if (text === undefined || text === '') return {};
  const n = /^\d+$/.test(text) ? Number(text) : NaN;
  if (n >= 1 && n <= MAX_DOWNLOADS) return { networkConcurrency: n };
  throw new ProvkitError(
    ErrorCode.USAGE,
    `invalid PROVKIT_DOWNLOADS ${JSON.stringify(text)}: a number of downloads at once from 1 to ${MAX_DOWNLOADS} is required`,
    { found: text },
  );
}
