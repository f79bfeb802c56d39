/**
 * Human rendering of installer events and diagnostics, in the reference's
 * words (docs/reference.md §6.1 item 90): one line per event, diagnostics in the boxed
 * form terraform and tofu print. Colour and progress only on a TTY.
 */
import { type Flavor, flavorInfo, type ProviderAddress } from '../addresses/index.js';
import { type Diagnostic, rangeText } from '../errors.js';
import type { InstallerEvent } from '../installer/events.js';

export interface TextSink {
  write(text: string): unknown;
  isTTY?: boolean;
}

/** The one diagnostic type (src/errors.ts); rendered boxed here, as `diagnostic` messages by json.ts. */
export type { Diagnostic } from '../errors.js';

const bold = (tty: boolean, s: string): string => (tty ? `\u001b[1m${s}\u001b[0m` : s);

/** The boxed diagnostic block (`╷ │ Error: … ╵`). */
export function renderDiagnostic(d: Diagnostic, out: TextSink): void {
  const tty = out.isTTY === true;
  const label = d.severity === 'error' ? (tty ? '\u001b[1m\u001b[31mError: \u001b[0m' : 'Error: ') : tty ? '\u001b[1m\u001b[33mWarning: \u001b[0m' : 'Warning: ';
  const lines = [`${label}${bold(tty, d.summary)}`];
  if (d.range) lines.push('', `  on ${rangeText(d.range)}:`);
  if (d.detail) lines.push('', ...d.detail.split('\n'));
  if (d.hint) lines.push('', `Hint: ${d.hint}`);
  // Every line inside the box starts with `│ `, also those of a multi-line summary or detail.
  out.write(`╷\n${lines.flatMap((l) => l.split('\n')).map((l) => (l === '' ? '│ ' : `│ ${l}`)).join('\n')}\n╵\n`);
}

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
export function renderEventHuman(e: InstallerEvent, out: TextSink, err: TextSink, flavor: Flavor): void {
  const name = (p: ProviderAddress): string => p.toShortString(flavor);
  switch (e.type) {
    case 'fetch_start':
      out.write(`- Fetching ${name(e.provider)} ${e.version.toString()} for ${e.platform.toString()}...\n`);
      return;
    case 'fetch_complete':
      out.write(
        e.reused
          ? `- Using ${name(e.provider)} ${e.version.toString()} for ${e.platform.toString()} already in the mirror (${e.auth})\n`
          : e.stored
            ? `- Found ${name(e.provider)} ${e.version.toString()} for ${e.platform.toString()} in the hash store by its checksum (${e.auth}${e.keyId ? `, key ID ${e.keyId}` : ''}); not downloaded\n`
            : `- Retrieved ${name(e.provider)} ${e.version.toString()} for ${e.platform.toString()} (${e.auth}${e.keyId ? `, key ID ${e.keyId}` : ''})\n`,
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
      renderDiagnostic({ severity: 'warning', summary: e.summary, detail: e.detail, code: e.code }, err);
      return;
    case 'provider_selected':
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
    case 'fetch_progress':
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
            : `- Installed ${name(e.provider)} v${e.version.toString()} (${e.auth ?? 'unauthenticated'}${e.keyId ? `, key ID ${e.keyId}` : ''})\n`,
      );
      return;
    case 'package_lock_wait':
      out.write(`- Waiting for another process to finish installing ${name(e.provider)} (lock ${e.path}${e.holder ? `, held by ${e.holder}` : ''})...\n`);
      return;
    case 'verify_problem':
      out.write(`${[e.provider.toString(), e.version?.toString(), e.platform?.toString()].filter((x) => x !== undefined).join(' ')}: ${e.message}\n`);
      return;
  }
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

/** The closing lines of `providers lock` (docs/reference.md §6.1 item 90). */
export function renderLockSuccess(changed: boolean, flavor: Flavor, out: TextSink): void {
  const product = flavorInfo(flavor).productName;
  const tty = out.isTTY === true;
  const success = tty ? '\u001b[1m\u001b[32mSuccess!\u001b[0m' : 'Success!';
  if (changed) {
    out.write(
      `\n${success} ${bold(tty, `${product} has updated the lock file.`)}\n\nReview the changes in .terraform.lock.hcl and then commit to your\nversion control system to retain the new checksums.\n\n`,
    );
  } else {
    out.write(`\n${success} ${bold(tty, `${product} has validated the lock file and found no need for changes.`)}\n`);
  }
}
