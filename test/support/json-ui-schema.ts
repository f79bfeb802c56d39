/**
 * The one schema of provkit's `-json` stream (docs/json-ui.md), as a
 * checker: every line of every `-json` run made through `runCli`
 * (test/support/e2e.ts) is checked against it, so any command's output in
 * the suite that breaks the conventions fails the test that produced it.
 *
 * Rules (OpenTofu machine-readable UI conventions, docs/json-ui.md):
 * - every line is one JSON object with `@level` (info|warn|error),
 *   `@message` (string), `@module` (`provkit.ui`), `@timestamp` (RFC 3339)
 *   and a known `type`;
 * - the first line is the `version` message;
 * - a `diagnostic` has `severity`, `summary`, `detail` and a stable `code`
 *   (UPPER_SNAKE), and optionally `location`, `range`, `hint`.
 *
 * `provkit version -json` (and `-v -json`) prints terraform's version object
 * (src/cli/commands/version.ts), not such a stream.
 */

type Json = Record<string, unknown>;

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const CODE = /^[A-Z][A-Z0-9_]*$/;

/** Each message type: its required keys and their kinds ('string', 'number', 'boolean', 'object', 'string|null', …). */
const TYPES: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  version: { provkit: 'string', ui: 'string' },
  diagnostic: { diagnostic: 'object' },
  flavor: { flavor: 'string', reason: 'string' },
  provider_selected: { provider: 'string', version: 'string', reason: 'string' },
  package_fetch_queued: { provider: 'string', version: 'string', platform: 'string' },
  package_fetch_start: { provider: 'string', version: 'string', platform: 'string' },
  package_fetch_progress: {
    provider: 'string',
    version: 'string',
    platform: 'string',
    bytes: 'number',
    total: 'number|null',
    phase: 'string',
  },
  package_fetch_retry: {
    provider: 'string',
    version: 'string',
    platform: 'string',
    attempt: 'number',
    delay_ms: 'number',
    reason: 'string',
  },
  package_fetch_resume: {
    provider: 'string',
    version: 'string',
    platform: 'string',
    offset: 'number',
    total: 'number',
  },
  package_fetch_failed: { provider: 'string', version: 'string', platform: 'string' },
  package_fetch_complete: {
    provider: 'string',
    version: 'string',
    platform: 'string',
    authentication: 'string',
    key_id: 'string|null',
  },
  lock_hashes: { provider: 'string', platform: 'string', change: 'string' },
  mirror_package: { provider: 'string', version: 'string', platform: 'string', path: 'string', action: 'string' },
  mirror_index: { provider: 'string', path: 'string' },
  install_resolving: { provider: 'string' },
  install_start: { provider: 'string', version: 'string' },
  install_complete: { provider: 'string', version: 'string', platform: 'string', mode: 'string' },
  package_lock_wait: { provider: 'string', path: 'string' },
  verify_problem: { provider: 'string', code: 'string' },
  verify_package: { provider: 'string', version: 'string', platform: 'string', location: 'string', hashes: 'array' },
  verify_unvouched: { provider: 'string', version: 'string', hashes: 'array' },
  audit_hash: {
    lock_file: 'string',
    provider: 'string',
    version: 'string',
    platform: 'string|null',
    hash: 'string',
    dispositions: 'array',
    pass: 'boolean',
    violations: 'array',
    policy: 'string',
  },
  audit_change: { lock_file: 'string', provider: 'string', change: 'string', version: 'string' },
  audit_summary: {
    lock_files: 'number',
    hashes: 'number',
    failing: 'number',
    changes: 'number',
    downloads: 'number',
    pass: 'boolean',
  },
  signing_key: {
    provider: 'string',
    key_id: 'string',
    fingerprint: 'string|null',
    key_expires: 'string|null',
    expired: 'boolean',
    trusted: 'boolean|null',
    versions: 'array',
    locked_versions: 'array',
    findings: 'array',
  },
  keys_provider: { provider: 'string', versions: 'array', findings: 'array', policy: 'string' },
  keys_summary: { providers: 'number', keys: 'number', versions: 'number', flagged: 'number', pass: 'boolean' },
  summary: {},
  package_hash: { path: 'string', h1: 'string|null', zh: 'string|null', h1_zip: 'string|null', warnings: 'array' },
  platforms: { platforms: 'array', origin: 'string' },
  lock_root: { root: 'string', status: 'string' },
  verify_root: { root: 'string', status: 'string', problems: 'number' },
  oci_blob: { repository: 'string', digest: 'string', size: 'number', what: 'string', action: 'string' },
  oci_tag: {
    provider: 'string',
    version: 'string',
    repository: 'string',
    tag: 'string',
    digest: 'string',
    action: 'string',
  },
  listening: { url: 'string', dir: 'string' },
  access: { method: 'string', path: 'string', status: 'number' },
  stopped: { signal: 'string' },
  scan_warning: { path: 'string', code: 'string' },
  serve_error: { path: 'string', code: 'string' },
  fetch: { provider: 'string', version: 'string', platform: 'string', result: 'string', waiters: 'number' },
  store_warning: { path: 'string', code: 'string' },
};

function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

function checkKeys(where: string, obj: Json, keys: Readonly<Record<string, string>>, problems: string[]): void {
  for (const [key, kinds] of Object.entries(keys)) {
    if (!kinds.split('|').includes(kindOf(obj[key])))
      problems.push(`${where}: "${key}" must be ${kinds}, not ${kindOf(obj[key])}`);
  }
}

/** The problems of one parsed line (none: it conforms). */
export function jsonUiLineProblems(line: unknown, index: number): string[] {
  const problems: string[] = [];
  const where = `line ${index + 1}`;
  if (kindOf(line) !== 'object') return [`${where}: not a JSON object`];
  const obj = line as Json;
  checkKeys(
    where,
    obj,
    { '@level': 'string', '@message': 'string', '@module': 'string', '@timestamp': 'string', type: 'string' },
    problems,
  );
  if (!['info', 'warn', 'error'].includes(obj['@level'] as string))
    problems.push(`${where}: @level ${String(obj['@level'])}`);
  if (obj['@module'] !== 'provkit.ui') problems.push(`${where}: @module ${String(obj['@module'])}`);
  if (typeof obj['@timestamp'] === 'string' && !RFC3339.test(obj['@timestamp']))
    problems.push(`${where}: @timestamp ${obj['@timestamp']}`);
  const type = obj['type'] as string;
  const keys = TYPES[type];
  if (!keys) return [...problems, `${where}: unknown type ${JSON.stringify(type)}`];
  checkKeys(`${where} (${type})`, obj, keys, problems);
  if (index === 0 && type !== 'version')
    problems.push(`${where}: the first message must be "version", not ${JSON.stringify(type)}`);
  if (type === 'version' && obj['ui'] !== '1.0') problems.push(`${where}: ui ${String(obj['ui'])}`);
  if (type === 'diagnostic' && kindOf(obj['diagnostic']) === 'object') {
    const d = obj['diagnostic'] as Json;
    checkKeys(
      `${where} (diagnostic)`,
      d,
      { severity: 'string', summary: 'string', detail: 'string', code: 'string' },
      problems,
    );
    if (!['error', 'warning'].includes(d['severity'] as string))
      problems.push(`${where}: severity ${String(d['severity'])}`);
    if (typeof d['code'] === 'string' && !CODE.test(d['code'])) problems.push(`${where}: code ${d['code']}`);
    if (d['hint'] !== undefined && typeof d['hint'] !== 'string') problems.push(`${where}: hint must be a string`);
    if (d['range'] !== undefined) {
      const r = d['range'] as Json;
      checkKeys(`${where} (range)`, r, { filename: 'string', start: 'object' }, problems);
    }
    if ((obj['@level'] === 'error') !== (d['severity'] === 'error'))
      problems.push(`${where}: @level ${String(obj['@level'])} for a ${String(d['severity'])}`);
  }
  return problems;
}

/** The problems of a whole `-json` stream (stdout of a run, or a `-json-into` file). */
export function jsonUiStreamProblems(text: string): string[] {
  if (text === '') return ['the stream is empty (it must start with the version message)'];
  if (!text.endsWith('\n')) return ['the stream does not end with a newline'];
  const problems: string[] = [];
  text
    .slice(0, -1)
    .split('\n')
    .forEach((raw, i) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(raw);
      } catch {
        problems.push(`line ${i + 1}: not JSON: ${raw.slice(0, 120)}`);
        return;
      }
      problems.push(...jsonUiLineProblems(parsed, i));
    });
  return problems;
}

/** Whether a command line asks for a conventions stream on stdout. */
export function wantsJsonStream(args: readonly string[]): boolean {
  const json = args.some((a) => /^--?json(=(true|1))?$/.test(a));
  const command = args.find((a) => !a.startsWith('-'));
  const version = command === 'version' || args.some((a) => /^(-v|--?version)(=(true|1))?$/.test(a));
  return json && !version;
}

/** How many `-json` streams this process has checked (the schema test reports it). */
export const checkedStreams = { count: 0 };
