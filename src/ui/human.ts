/**
 * Human rendering of installer events and diagnostics, in the reference's
 * words (docs/reference.md §6.1 item 90): one line per event, diagnostics as terraform
 * prints them (src/ui/diagnostic.ts). Colour only where the caller says so
 * (src/cli/render.ts: on a terminal, unless NO_COLOR or -no-color); the live
 * progress display is src/ui/progress.ts.
 */
import { type Flavor, flavorInfo, type ProviderAddress } from '../addresses/index.js';
import type { Diagnostic as BaseDiagnostic } from '../errors.js';
import { isReported, sortDispositions, vouchersText } from '../hashing/index.js';
import type { InstallerEvent, PackageHash } from '../installer/events.js';
import {
  colorize,
  consolidateWarnings,
  type FormattableDiagnostic,
  formatDiagnostic,
  formatDiagnosticPlain,
  sortDiagnostics,
} from './diagnostic.js';
import { terminalLine } from './escape.js';
import { wrapHanging } from './wrap.js';

export interface TextSink {
  write(text: string): unknown;
  isTTY?: boolean;
  /** The terminal's width, when the sink is one (Node's `tty.WriteStream`; read when a line is rendered, after a resize too). */
  readonly columns?: number | undefined;
}

/**
 * The one diagnostic type (src/errors.ts), with the source lines of its
 * range when the file's text was at hand (configuration files; without them
 * a range reads "(source code not available)", as the lock file's does in
 * the reference). Rendered as terraform does here, as `diagnostic` messages
 * by json.ts (which ignores the snippet).
 */
export type Diagnostic = BaseDiagnostic & FormattableDiagnostic;

/**
 * How diagnostics are framed (hashicorp/terraform v1.11.4, the same in OpenTofu):
 * - `meta`: as the commands that report through `Meta.showDiagnostics`
 *   (`providers lock`, `providers mirror`): the text goes through the
 *   colouring UI (`ColorizeUi`: `[red]TEXT[reset]` for errors, `[yellow]`
 *   for warnings, colour codes in the text converted or, without colour,
 *   removed), and a newline follows it (`cli.BasicUi`). Errors go to
 *   stderr; warnings to stdout where {@link HumanStyle.warningsToStdout}
 *   says so (terraform 1.11.4's `providers lock` and `providers mirror`,
 *   test/fixtures/reference-runs/), else to stderr (provkit's own commands,
 *   whose stdout may be data).
 * - `view`: as `init`'s view (`views.View.Diagnostics`): the text alone,
 *   errors to stderr and warnings to stdout.
 */
export type DiagnosticFrame = 'meta' | 'view';

export interface HumanStyle {
  /** Colour on stdout (the progress lines, "Success!"). */
  readonly color: boolean;
  /** Colour in diagnostics: the `│` form; without it, the reference's plain form. */
  readonly diagnosticColor: boolean;
  /** Columns diagnostic details are wrapped to: the terminal's, or 78 when stderr is not one (0: no wrapping). */
  readonly width: number;
  readonly frame: DiagnosticFrame;
  /** Warnings go to stdout in the `meta` frame too (`providers lock`, `providers mirror`). */
  readonly warningsToStdout?: boolean;
}

/** The style of output that is not a terminal: no colour, 78 columns, the `meta` frame. */
export const PLAIN_STYLE: HumanStyle = { color: false, diagnosticColor: false, width: 78, frame: 'meta' };

/** One diagnostic's text as the reference prints it in `style`. */
export function diagnosticText(d: Diagnostic, style: HumanStyle): string {
  const msg = style.diagnosticColor ? formatDiagnostic(d, true, style.width) : formatDiagnosticPlain(d, style.width);
  if (style.frame === 'view') return msg;
  return `${colorize(`${d.severity === 'error' ? '[red]' : '[yellow]'}${msg}[reset]`, style.diagnosticColor)}\n`;
}

/** Renders one diagnostic: errors to `err`; warnings too, except in the `view` frame or with `warningsToStdout` (to `out`). */
export function renderDiagnostic(
  d: Diagnostic,
  err: TextSink,
  style: HumanStyle = PLAIN_STYLE,
  out: TextSink = err,
): void {
  const toOut = d.severity === 'warning' && (style.frame === 'view' || style.warningsToStdout === true);
  (toOut ? out : err).write(diagnosticText(d, style));
}

/**
 * Renders diagnostics reported together, in the order given (callers sort
 * them as the reference does, src/cli/diagnostics.ts `reportDiagnostics`), with
 * the reference's consolidation of similar warnings ({@link consolidateWarnings}).
 */
export function renderDiagnostics(
  ds: readonly Diagnostic[],
  err: TextSink,
  style: HumanStyle = PLAIN_STYLE,
  out: TextSink = err,
): void {
  for (const d of consolidateWarnings(ds)) renderDiagnostic(d, err, style, out);
}

/** Diagnostics in the reference's order (`tfdiags.Diagnostics.Sort`, {@link sortDiagnostics}). */
export function sortedDiagnostics(ds: readonly Diagnostic[]): Diagnostic[] {
  const keyed = ds.map((d) => ({
    d,
    severity: d.severity,
    subject:
      d.range?.start === undefined
        ? undefined
        : { filename: d.range.filename, start: d.range.start.byte ?? 0, end: d.range.end?.byte ?? 0 },
  }));
  return sortDiagnostics(keyed).map((k) => k.d);
}

const bold = (tty: boolean, s: string): string => (tty ? `\u001b[1m${s}\u001b[0m` : s);

const CHANGE_TEXT = {
  'new-provider': 'This was a new provider and the checksums for this platform are now tracked in the lock file',
  added: 'Additional checksums for this platform are now tracked in the lock file',
  unchanged: 'All checksums for this platform were already tracked in the lock file',
} as const;

/**
 * One line per installer event (progress events are left to a TTY progress
 * display). Providers are named as the reference names them in these lines,
 * by `Provider.ForDisplay`: without the host when it is `flavor`'s default
 * registry (`hashicorp/aws`; `internal/command/init.go`, `providers_lock.go`).
 */
export function renderEventHuman(
  event: InstallerEvent,
  out: TextSink,
  err: TextSink,
  flavor: Flavor,
  style: HumanStyle = PLAIN_STYLE,
): void {
  // Every text field (a path, a repository, a lock holder: text from outside) goes on one line,
  // escaped; a warning is a diagnostic, escaped as diagnostics are (src/ui/diagnostic.ts).
  const e = event.type === 'warning' ? event : withLineFields(event);
  const name = (p: ProviderAddress): string => p.forDisplay(flavor);
  switch (e.type) {
    case 'fetch_start':
      out.write(`- Fetching ${name(e.provider)} ${e.version.toString()} for ${e.platform.toString()}...\n`);
      return;
    case 'fetch_complete':
      out.write(
        e.reused
          ? `- Using ${name(e.provider)} ${e.version.toString()} for ${e.platform.toString()} already in the mirror (${e.auth})\n`
          : e.stored
            ? `- Found ${name(e.provider)} ${e.version.toString()} for ${e.platform.toString()} in the hash store by its checksum (${authenticationText(e.auth, e.keyId, flavor)}); not downloaded\n`
            : `- Retrieved ${name(e.provider)} ${e.version.toString()} for ${e.platform.toString()} (${authenticationText(e.auth, e.keyId, flavor)})${reportedNote(e.hashes, flavor)}\n`,
      );
      return;
    case 'hashes_obtained':
      out.write(`- Obtained ${name(e.provider)} checksums for ${e.platform.toString()}; ${CHANGE_TEXT[e.change]}\n`);
      return;
    case 'platforms_chosen': {
      // Flags and this machine's platform are what the reference uses silently.
      const text = platformsText(e);
      if (e.origin === 'policy' || e.origin === 'inferred') out.write(`${text[0]!.toUpperCase()}${text.slice(1)}.\n`);
      return;
    }
    case 'warning':
      renderDiagnostic({ severity: 'warning', summary: e.summary, detail: e.detail, code: e.code }, err, style, out);
      return;
    case 'provider_selected':
      // `providers mirror`'s lines (hashicorp/terraform v1.11.4 internal/command/providers_mirror.go).
      if (e.announce === true) out.write(`- Mirroring ${name(e.provider)}...\n  - ${selectedText(e)}\n`);
      return;
    case 'mirror_package':
      out.write(`  - ${e.action === 'kept' ? 'Kept' : 'Wrote'} ${e.path}\n`);
      return;
    case 'mirror_index':
      out.write(`  - Updated ${e.path}\n`);
      return;
    case 'oci_blob':
      out.write(
        e.action === 'uploaded'
          ? `  - Uploaded ${e.what} ${e.digest} (${e.size} bytes) to ${e.repository}\n`
          : e.action === 'mounted'
            ? `  - Mounted ${e.what} ${e.digest} into ${e.repository} from ${e.from ?? 'another repository'}\n`
            : `  - ${e.repository} already has ${e.what} ${e.digest}\n`,
      );
      return;
    case 'oci_tag':
      out.write(
        `  - ${e.action === 'pushed' ? 'Tagged' : 'Unchanged:'} ${e.repository}:${e.tag} ${e.action === 'pushed' ? 'as' : 'is'} ${e.digest} (${e.platforms.map(String).join(', ')})\n`,
      );
      return;
    case 'fetch_queued':
    case 'fetch_progress':
    case 'fetch_retry':
    case 'fetch_resume':
    case 'fetch_failed':
      // The live display's (src/ui/progress.ts), on a terminal only.
      return;
    case 'install_resolving':
      out.write(
        e.locked
          ? `- Reusing previous version of ${name(e.provider)} from the dependency lock file\n`
          : e.constraints === ''
            ? `- Finding latest version of ${name(e.provider)}...\n`
            : `- Finding ${name(e.provider)} versions matching "${e.constraints}"...\n`,
      );
      return;
    case 'install_start':
      out.write(`- Installing ${name(e.provider)} v${e.version.toString()}...\n`);
      return;
    case 'install_complete':
      out.write(
        e.mode === 'previously-installed'
          ? `- Using previously-installed ${name(e.provider)} v${e.version.toString()}\n`
          : e.mode === 'cache'
            ? `- Using ${name(e.provider)} v${e.version.toString()} from the shared cache directory\n`
            : `- Installed ${name(e.provider)} v${e.version.toString()} (${authenticationText(e.auth ?? 'unauthenticated', e.keyId, flavor)})${reportedNote(e.hashes, flavor)}\n`,
      );
      return;
    case 'package_lock_wait':
      out.write(
        `- Waiting for another process to finish installing ${name(e.provider)} (mutex ${e.path}${e.holder ? `, held by ${e.holder}` : ''})...\n`,
      );
      return;
    case 'verify_problem':
    case 'verify_package':
    case 'verify_unvouched':
      out.write(verifyEventText(e, out, name));
      return;
  }
}

/** The events of a `verify` run that say what it found: problems, checked packages, unvouched lock hashes. */
export type VerifyEvent = Extract<InstallerEvent, { type: 'verify_problem' | 'verify_package' | 'verify_unvouched' }>;

/**
 * A `verify` event as lines of `out`, after `lead`: the one rendering of a
 * single root's verify and of each root of `verify -recursive` (whose lines
 * sit under the root's, `lead` four spaces). A problem is
 * {@link verifyProblemText}; a checked package `- Checked …` and lock hashes
 * nobody vouches for `- No source vouches for …`, wrapped on a terminal with
 * continuation lines under the text after `- `.
 */
export function verifyEventText(
  e: VerifyEvent,
  out: TextSink,
  name: (p: ProviderAddress) => string = String,
  lead = '',
): string {
  switch (e.type) {
    case 'verify_problem':
      return verifyProblemText(e, out, lead);
    case 'verify_package':
      return wrappedLine(`${lead}- ${verifiedPackageText(e, name)}`, out, lead.length + 4);
    case 'verify_unvouched':
      return wrappedLine(`${lead}- ${unvouchedText(e, name)}`, out, lead.length + 4);
  }
}

/**
 * A checked package and who vouches for its hashes, all of them together
 * (`-json`'s `verify_package` says which hash has which): `Checked
 * acme/demo 1.1.0 for linux_amd64 (signed by key …, expires never; verified
 * locally (key …))`. Not escaped (the caller escapes the line).
 */
export function verifiedPackageText(
  e: Extract<InstallerEvent, { type: 'verify_package' }>,
  name: (p: ProviderAddress) => string = String,
): string {
  const all = sortDispositions(e.hashes.flatMap((h) => h.dispositions));
  return `Checked ${name(e.provider)} ${e.version.toString()} for ${e.platform.toString()} (${vouchersText(all)})`;
}

/** Lock hashes nobody vouches for, listed (not escaped: the caller escapes the line). */
export function unvouchedText(
  e: Extract<InstallerEvent, { type: 'verify_unvouched' }>,
  name: (p: ProviderAddress) => string = String,
): string {
  const n = e.hashes.length;
  return `No source vouches for ${n} ${n === 1 ? 'hash' : 'hashes'} of ${name(e.provider)} ${e.version.toString()} in the lock file: ${e.hashes.map((h) => h.text).join(', ')}`;
}

/** A copy of `x` whose string fields are escaped as lines of output (src/ui/escape.ts). */
function withLineFields<T extends object>(x: T): T {
  const out = { ...x } as Record<string, unknown>;
  for (const [k, v] of Object.entries(out)) if (typeof v === 'string') out[k] = terminalLine(v);
  return out as T;
}

/**
 * A `verify` problem as a line of `out`: `PROVIDER [VERSION] [PLATFORM]:
 * MESSAGE`, after `lead` (the `-recursive` list's indentation). Exactly one
 * line when `out` is not a terminal (pipes, files and CI logs keep these
 * bytes); on a terminal, wrapped at spaces to its width less one column (as
 * terraform wraps diagnostic details: `format.DiagnosticPlain` in
 * internal/command/format/diagnostic.go), the continuation lines indented
 * two spaces further than the first.
 */
export function verifyProblemText(
  p: Pick<Extract<InstallerEvent, { type: 'verify_problem' }>, 'provider' | 'version' | 'platform' | 'message'>,
  out: TextSink,
  lead = '',
): string {
  return wrappedLine(
    `${lead}${[p.provider.toString(), p.version?.toString(), p.platform?.toString()].filter((x) => x !== undefined).join(' ')}: ${p.message}`,
    out,
    lead.length + 2,
  );
}

/**
 * `text` escaped as one line of output (src/ui/escape.ts) and ended: one
 * line when `out` is not a terminal; on a terminal, wrapped at spaces to its
 * width less one column, continuation lines indented `indent` columns
 * (see {@link verifyProblemText}).
 */
function wrappedLine(text: string, out: TextSink, indent: number): string {
  const line = terminalLine(text);
  const columns = out.isTTY === true ? out.columns : undefined;
  return `${columns !== undefined && columns > 1 ? wrapHanging(line, columns - 1, indent) : line}\n`;
}

/**
 * Where a lock run's platforms came from, as a phrase: `linux_amd64,
 * darwin_arm64 from provkit.hcl`, `… inferred from the lock file (hash
 * store)`, `… given with -platform`, `… (this machine's)`.
 */
export function platformsText(e: Extract<InstallerEvent, { type: 'platforms_chosen' }>): string {
  const list = e.platforms.map(String).join(', ');
  switch (e.origin) {
    case 'policy':
      return `platforms ${list} from ${e.policyFile ?? 'provkit.hcl'}`;
    case 'inferred':
      return `platforms ${list} inferred from the existing lock file${e.via && e.via.length > 0 ? ` (by the ${e.via.join(', ')})` : ''}`;
    case 'flags':
      return `platforms ${list} given with -platform`;
    case 'host':
      return `platform ${list} (this machine's)`;
  }
}

/**
 * Why a version was chosen, in `providers mirror`'s words (hashicorp/terraform
 * v1.11.4 internal/command/providers_mirror.go): `Selected v1.1.0 to match
 * dependency lock file`, `… to meet constraints ~> 1.0`, `… with no
 * constraints` (OpenTofu's providers_mirror.go words them the same).
 */
export function selectedText(e: Extract<InstallerEvent, { type: 'provider_selected' }>): string {
  const v = `Selected v${e.version.toString()}`;
  switch (e.reason) {
    case 'lock':
      return `${v} to match dependency lock file`;
    case 'constraints':
      return `${v} to meet constraints ${e.constraints}`;
    case 'unconstrained':
      return `${v} with no constraints`;
  }
}

/**
 * HashiCorp's release signing key ID: what terraform checks a package
 * against to call it "signed by HashiCorp" (hashicorp/terraform v1.11.4
 * internal/getproviders/public_keys.go `HashicorpPublicKey`).
 */
const HASHICORP_KEY_ID = '34365D9472D7468F';

/**
 * How a package's authentication reads in `(…)` after "Installed"/"Retrieved",
 * as the flavor words it:
 * - OpenTofu (opentofu/opentofu internal/getproviders/package_authentication.go,
 *   internal/command/init.go): `signed, key ID X`, `signing skipped`,
 *   `verified checksum`, `unauthenticated`;
 * - terraform (hashicorp/terraform v1.11.4 internal/getproviders/
 *   package_authentication.go, internal/command/init.go): a signature by
 *   HashiCorp's key is `signed by HashiCorp` (no key ID), any other key
 *   `self-signed, key ID X` (confirmed with terraform 1.11.4,
 *   test/fixtures/guidance/terraform-1.11.4.txt). Terraform's "signed by a
 *   HashiCorp partner" needs a trust signature checked against HashiCorp's
 *   partners key, which provkit does not check: such packages read
 *   `self-signed`. HashiCorp's key is told by its key ID here, where
 *   terraform verifies with the key itself.
 */
export function authenticationText(auth: string, keyId: string | undefined, flavor: Flavor): string {
  if (auth === 'signed' && flavor === 'terraform') {
    return keyId === HASHICORP_KEY_ID ? 'signed by HashiCorp' : `self-signed${keyId ? `, key ID ${keyId}` : ''}`;
  }
  return `${auth}${keyId ? `, key ID ${keyId}` : ''}`;
}

/**
 * What the `Retrieved` / `Installed` line adds about a package's hashes that
 * a source reported and nothing here verified (docs/provenance.md):
 * ` (2 hashes for darwin_arm64, windows_amd64 reported by the registry, not
 * verified)`, one group per registry or mirror; empty when there are none.
 * Said for the tofu flavor, whose lock files may record such hashes
 * (lockfile/record.ts); terraform records none, and its line stays the
 * reference's.
 */
export function reportedNote(hashes: readonly PackageHash[] | undefined, flavor: Flavor): string {
  if (hashes === undefined || flavor !== 'tofu') return '';
  const groups = new Map<string, { count: number; platforms: Set<string> }>();
  for (const h of hashes) {
    if (h.dispositions.length === 0 || !h.dispositions.every(isReported)) continue;
    const d = h.dispositions[0]!;
    const by = d.kind === 'reported-by-mirror' ? `the mirror ${d.mirror}` : 'the registry';
    let g = groups.get(by);
    if (!g) groups.set(by, (g = { count: 0, platforms: new Set() }));
    g.count += 1;
    if (h.platform) g.platforms.add(h.platform.toString());
  }
  return [...groups]
    .map(([by, g]) => {
      const platforms = [...g.platforms].sort();
      const of = platforms.length === 0 ? '' : ` for ${platforms.join(', ')}`;
      return ` (${g.count} ${g.count === 1 ? 'hash' : 'hashes'}${of} reported by ${by}, not verified)`;
    })
    .join('');
}

/** The closing lines of `providers lock` (docs/reference.md §6.1 item 90). */
export function renderLockSuccess(
  changed: boolean,
  flavor: Flavor,
  out: TextSink,
  style: HumanStyle = PLAIN_STYLE,
): void {
  const product = flavorInfo(flavor).productName;
  const tty = style.color;
  const success = tty ? '\u001b[1m\u001b[32mSuccess!\u001b[0m' : 'Success!';
  if (changed) {
    out.write(
      `\n${success} ${bold(tty, `${product} has updated the lock file.`)}\n\nReview the changes in .terraform.lock.hcl and then commit to your\nversion control system to retain the new checksums.\n\n`,
    );
  } else {
    out.write(`\n${success} ${bold(tty, `${product} has validated the lock file and found no need for changes.`)}\n`);
  }
}
