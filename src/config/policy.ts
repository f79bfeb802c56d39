/**
 * The platform policy: a file `provkit.hcl` declaring the platforms a
 * team's lock files must cover, so they stop changing between a
 * developer's laptop and CI:
 *
 * ```hcl
 * platforms = ["linux_amd64", "darwin_arm64", "windows_amd64"]
 * ```
 *
 * Rules (docs/platform-policy.md):
 * - HCL native syntax; `platforms` is a static list of at least one
 *   `OS_ARCH` string (duplicates are dropped, order is kept), required
 *   unless the file has an `audit` block (`provkit audit`'s policy,
 *   config/audit-policy.ts, docs/provenance.md); anything else in the file
 *   (another argument, any other block) is an error, with file, line and
 *   column like every other configuration diagnostic;
 * - the nearest `provkit.hcl` applies: in the root module's directory or one
 *   of its ancestors, up to the directory the command runs in
 *   ({@link findPolicy}); `-platform` flags override it.
 *
 * Parsing is pure; {@link loadPolicyFile} and {@link findPolicy} read files
 * through a {@link ConfigFs}.
 */
import { dirname, join, relative, resolve, sep } from 'node:path';

import { goQuote, parsePlatform, type Platform } from '../addresses/index.js';
import { type Diagnostic, systemErrorCode, errorText } from '../errors.js';
import { readRefusal } from '../fs/read.js';
import { parseHCL, staticList, staticString } from '../hcl/index.js';
import { type AuditPolicy, parseAuditBlock } from './audit-policy.js';
import { nativeBody } from './body.js';
import { errorDiag, fileRange, formatRange as formatRangeOf, hasErrors } from './diagnostics.js';
import type { ConfigFs } from './load.js';
import { nodeConfigFs } from './load.js';

/** The policy file's name. */
export const POLICY_FILE_NAME = 'provkit.hcl';

/** A parsed policy. */
export interface PlatformPolicy {
  /** The file, as its diagnostics name it (relative to the working directory). */
  readonly file: string;
  /** The platforms, in the order written, without duplicates. */
  readonly platforms: readonly Platform[];
}

/** The result of parsing or loading a policy file. */
export interface PolicyResult {
  /** Undefined when the file has errors or no `platforms` (or, for {@link findPolicy}, when there is none). */
  readonly policy?: PlatformPolicy;
  /** The file's `audit` block, when it has one and no errors. */
  readonly audit?: AuditPolicy;
  /** The file's problems, each naming the file (and the place in it, where there is one); an error leaves `policy` and `audit` undefined. */
  readonly diagnostics: Diagnostic[];
}

const AUDIT_BLOCK = { type: 'audit', labels: [] } as const;
const SCHEMA = { attributes: [{ name: 'platforms', required: true }], blocks: [AUDIT_BLOCK] } as const;
const SCHEMA_WITH_AUDIT = { attributes: [{ name: 'platforms' }], blocks: [AUDIT_BLOCK] } as const;

/** Parses a policy file's bytes; `filename` names it in diagnostics. */
export function parsePolicyFile(source: Uint8Array | string, filename: string): PolicyResult {
  const parsed = parseHCL(source, filename);
  const diagnostics: Diagnostic[] = [...parsed.diagnostics];
  if (hasErrors(diagnostics)) return { diagnostics };
  const hasAudit = parsed.body.blocks.some((b) => b.type === AUDIT_BLOCK.type);
  const content = nativeBody(parsed.body).content(hasAudit ? SCHEMA_WITH_AUDIT : SCHEMA);
  diagnostics.push(...content.diagnostics);
  const audits = content.blocks.filter((b) => b.type === AUDIT_BLOCK.type);
  for (const extra of audits.slice(1))
    diagnostics.push(
      errorDiag(
        'Duplicate audit block',
        `Only one audit block is allowed; the first is at ${formatRangeOf(audits[0]!.defRange)}.`,
        extra.defRange,
      ),
    );
  const audit = audits[0] === undefined ? undefined : parseAuditBlock(audits[0].body, filename);
  diagnostics.push(...(audit?.diagnostics ?? []));
  const withAudit = audit?.policy === undefined ? {} : { audit: audit.policy };
  const attr = content.attributes.get('platforms');
  if (hasErrors(diagnostics)) return { diagnostics };
  if (!attr) return { ...withAudit, diagnostics };
  const list = staticList(attr.expr);
  diagnostics.push(...list.diagnostics);
  if (!list.items) return { diagnostics };
  const platforms: Platform[] = [];
  for (const item of list.items) {
    const s = staticString(item);
    diagnostics.push(...s.diagnostics);
    if (s.value === undefined) continue;
    try {
      const p = parsePlatform(s.value);
      if (!platforms.some((q) => q.equals(p))) platforms.push(p);
    } catch (err) {
      diagnostics.push(
        errorDiag(
          'Invalid target platform',
          `The string ${goQuote(s.value)} is not a valid target platform: ${errorText(err)}.`,
          item.range,
        ),
      );
    }
  }
  if (list.items.length === 0) {
    diagnostics.push(
      errorDiag(
        'No platforms',
        'The platforms argument must list at least one target platform, such as "linux_amd64".',
        attr.range,
      ),
    );
  }
  if (hasErrors(diagnostics)) return { diagnostics };
  return { policy: { file: filename, platforms }, ...withAudit, diagnostics };
}

/**
 * Loads the policy file at `path` (`displayName` names it in diagnostics);
 * no policy and no diagnostics when there is no such file.
 */
export async function loadPolicyFile(
  path: string,
  displayName: string,
  fs: ConfigFs = nodeConfigFs,
): Promise<PolicyResult> {
  let bytes: Uint8Array;
  try {
    bytes = await fs.readFile(path);
  } catch (err) {
    const code = systemErrorCode(err);
    if (code === 'ENOENT' || code === 'ENOTDIR') return { diagnostics: [] };
    return {
      diagnostics: [
        errorDiag(
          'Failed to read file',
          `The file ${goQuote(displayName)} could not be read: ${readRefusal(err) ?? errorText(err)}.`,
          fileRange(displayName),
        ),
      ],
    };
  }
  return parsePolicyFile(bytes, displayName);
}

/**
 * The policy that applies to the root module in `dir`: the nearest
 * `provkit.hcl` in `dir` or an ancestor, up to and including `stopAt` (the
 * directory the command runs in); `dir` outside `stopAt` looks in `dir`
 * only. Diagnostics name files relative to `stopAt`. A file with errors
 * stops the search (its diagnostics are returned, without a policy).
 * `cache` (keyed by file path) lets the roots of one run share reads.
 */
export async function findPolicy(
  dir: string,
  stopAt: string,
  options: { fs?: ConfigFs; cache?: Map<string, Promise<PolicyResult>> } = {},
): Promise<PolicyResult> {
  const fs = options.fs ?? nodeConfigFs;
  const top = resolve(stopAt);
  let at = resolve(dir);
  const inside = at === top || at.startsWith(top.endsWith(sep) ? top : top + sep);
  for (;;) {
    const file = join(at, POLICY_FILE_NAME);
    let pending = options.cache?.get(file);
    if (!pending) {
      pending = loadPolicyFile(file, relative(top, file).split(sep).join('/'), fs);
      options.cache?.set(file, pending);
    }
    // eslint-disable-next-line no-await-in-loop -- nearest first: each step depends on the one before
    const r = await pending;
    // The nearest file applies, whatever it sets (platforms, audit or both).
    if (r.policy || r.audit || r.diagnostics.length > 0) return r;
    if (!inside || at === top) return { diagnostics: [] };
    const up = dirname(at);
    if (up === at) return { diagnostics: [] };
    at = up;
  }
}
