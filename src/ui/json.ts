/**
 * `-json` output: JSON lines following the OpenTofu machine-readable UI
 * conventions (seed document 000): the first message is `version` with
 * `"ui": "1.0"`; every line has `@level`, `@message`, `@module`
 * (`provkit.ui`), `@timestamp` (RFC 3339 with fractional seconds and the
 * local offset) and `type`. Message types are listed in docs/json-ui.md;
 * consumers should show `@message` for types they do not know.
 */
import { rangeText } from '../errors.js';
import { dispositionJSON } from '../hashing/index.js';
import type { InstallerEvent, PackageHash } from '../installer/events.js';
import { type Diagnostic, selectedText, type TextSink, unvouchedText, verifiedPackageText } from './human.js';

export const UI_VERSION = '1.0';
export const JSON_MODULE = 'provkit.ui';

/** RFC 3339 with microseconds and the local offset, like Go's `time.RFC3339Nano` output in the seed's examples. */
export function rfc3339(date: Date): string {
  const pad = (n: number, w = 2): string => String(n).padStart(w, '0');
  const off = -date.getTimezoneOffset();
  const sign = off >= 0 ? '+' : '-';
  const zone = off === 0 ? 'Z' : `${sign}${pad(Math.floor(Math.abs(off) / 60))}:${pad(Math.abs(off) % 60)}`;
  return (
    `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}` +
    `.${pad(date.getMilliseconds(), 3)}000${zone}`
  );
}

export class JsonUI {
  constructor(
    private readonly out: TextSink,
    private readonly now: () => Date = () => new Date(),
    /** Fields every message carries (`lock -recursive`: the `root` a message is about). */
    private readonly common: Readonly<Record<string, unknown>> = {},
  ) {}

  /** The same output, every message also carrying `fields` (after `type`). */
  scoped(fields: Readonly<Record<string, unknown>>): JsonUI {
    return new JsonUI(this.out, this.now, { ...this.common, ...fields });
  }

  private emit(
    level: 'info' | 'warn' | 'error',
    message: string,
    type: string,
    fields: Record<string, unknown> = {},
  ): void {
    const line = {
      '@level': level,
      '@message': message,
      '@module': JSON_MODULE,
      '@timestamp': rfc3339(this.now()),
      type,
      ...this.common,
      ...fields,
    };
    this.out.write(`${JSON.stringify(line)}\n`);
  }

  version(toolVersion: string): void {
    this.emit('info', `provkit ${toolVersion}`, 'version', { provkit: toolVersion, ui: UI_VERSION });
  }

  diagnostic(d: Diagnostic): void {
    this.emit(
      d.severity === 'error' ? 'error' : 'warn',
      `${d.severity === 'error' ? 'Error' : 'Warning'}: ${d.summary}`,
      'diagnostic',
      {
        diagnostic: {
          severity: d.severity,
          summary: d.summary,
          detail: d.detail,
          // `location` (file:line:col) as before, and the reference's `range` (viewsjson.DiagnosticRange, start only).
          ...(d.range
            ? {
                location: rangeText(d.range),
                ...(d.range.start === undefined
                  ? {}
                  : {
                      range: {
                        filename: d.range.filename,
                        start: {
                          line: d.range.start.line,
                          ...(d.range.start.column === undefined ? {} : { column: d.range.start.column }),
                        },
                      },
                    }),
              }
            : {}),
          code: d.code,
          ...(d.hint === undefined ? {} : { hint: d.hint }),
        },
      },
    );
  }

  summary(message: string, fields: Record<string, unknown>): void {
    this.emit('info', message, 'summary', fields);
  }

  /** A message of any other type (`lock_root`, …): the common keys, then `fields` (listed in docs/json-ui.md). */
  message(level: 'info' | 'warn' | 'error', message: string, type: string, fields: Record<string, unknown> = {}): void {
    this.emit(level, message, type, fields);
  }

  event(e: InstallerEvent): void {
    const ref = (x: {
      provider: { toString(): string };
      version?: { toString(): string };
      platform?: { toString(): string };
    }): Record<string, string> => ({
      provider: x.provider.toString(),
      ...(x.version ? { version: x.version.toString() } : {}),
      ...(x.platform ? { platform: x.platform.toString() } : {}),
    });
    switch (e.type) {
      case 'provider_selected':
        this.emit('info', `${e.provider.toString()}: ${selectedText(e)}`, 'provider_selected', {
          ...ref(e),
          reason: e.reason,
          constraints: e.constraints,
        });
        return;
      case 'fetch_start':
        this.emit(
          'info',
          `Fetching ${e.provider.toString()} ${e.version.toString()} for ${e.platform.toString()}...`,
          'package_fetch_start',
          { ...ref(e), location: e.location },
        );
        return;
      case 'fetch_queued':
        this.emit(
          'info',
          `${e.provider.toString()} ${e.version.toString()} ${e.platform.toString()}: waiting`,
          'package_fetch_queued',
          ref(e),
        );
        return;
      case 'fetch_progress':
        this.emit(
          'info',
          `${e.provider.toString()} ${e.version.toString()} ${e.platform.toString()}: ${e.bytes} bytes${e.phase === 'hash' ? ' hashed' : e.phase === 'checksum' ? ' read for the checksum' : ''}`,
          'package_fetch_progress',
          {
            ...ref(e),
            bytes: e.bytes,
            total: e.total ?? null,
            phase: e.phase ?? 'download',
          },
        );
        return;
      case 'fetch_retry':
        // Not in the reference's stream (its installer is silent while it retries): provkit's, so that a machine sees a backoff too.
        this.emit(
          'info',
          `${e.provider.toString()} ${e.version.toString()} ${e.platform.toString()}: retrying in ${Math.ceil(e.delayMs / 1000)} s after ${e.reason}`,
          'package_fetch_retry',
          {
            ...ref(e),
            attempt: e.attempt,
            delay_ms: e.delayMs,
            reason: e.reason,
          },
        );
        return;
      case 'fetch_resume':
        this.emit(
          'info',
          `${e.provider.toString()} ${e.version.toString()} ${e.platform.toString()}: resuming at byte ${e.offset}`,
          'package_fetch_resume',
          { ...ref(e), offset: e.offset, total: e.total },
        );
        return;
      case 'fetch_failed':
        // The reason follows as the command's diagnostic.
        this.emit(
          'info',
          `${e.provider.toString()} ${e.version.toString()} ${e.platform.toString()}: failed`,
          'package_fetch_failed',
          ref(e),
        );
        return;
      case 'fetch_complete':
        this.emit(
          'info',
          `Retrieved ${e.provider.toString()} ${e.version.toString()} for ${e.platform.toString()} (${e.auth})`,
          'package_fetch_complete',
          {
            ...ref(e),
            authentication: e.auth,
            key_id: e.keyId ?? null,
            reused: e.reused,
            hash_store: e.stored === true,
            ...packageHashesJSON(e.hashes),
          },
        );
        return;
      case 'hashes_obtained':
        this.emit('info', `Obtained ${e.provider.toString()} checksums for ${e.platform.toString()}`, 'lock_hashes', {
          ...ref(e),
          change: e.change.replace('-', '_'),
        });
        return;
      case 'platforms_chosen':
        this.emit('info', `Platforms: ${e.platforms.map(String).join(', ')} (${e.origin})`, 'platforms', {
          platforms: e.platforms.map(String),
          origin: e.origin,
          ...(e.policyFile === undefined ? {} : { policy_file: e.policyFile }),
          ...(e.via === undefined ? {} : { via: e.via }),
        });
        return;
      case 'warning':
        this.diagnostic({ severity: 'warning', summary: e.summary, detail: e.detail, code: e.code });
        return;
      case 'mirror_package':
        this.emit('info', `${e.action === 'kept' ? 'Kept' : 'Wrote'} ${e.path}`, 'mirror_package', {
          ...ref(e),
          path: e.path,
          action: e.action,
        });
        return;
      case 'mirror_index':
        this.emit('info', `Updated ${e.path}`, 'mirror_index', { provider: e.provider.toString(), path: e.path });
        return;
      case 'oci_blob':
        this.emit(
          'info',
          `${e.action === 'uploaded' ? 'Uploaded' : e.action === 'mounted' ? 'Mounted' : 'Already present:'} ${e.what} ${e.digest} (${e.repository})`,
          'oci_blob',
          {
            ...ref(e),
            repository: e.repository,
            digest: e.digest,
            size: e.size,
            what: e.what,
            action: e.action,
            from: e.from ?? null,
          },
        );
        return;
      case 'oci_tag':
        this.emit(
          'info',
          `${e.action === 'pushed' ? 'Tagged' : 'Unchanged:'} ${e.repository}:${e.tag} ${e.digest}`,
          'oci_tag',
          {
            provider: e.provider.toString(),
            version: e.version.toString(),
            repository: e.repository,
            tag: e.tag,
            digest: e.digest,
            platforms: e.platforms.map(String),
            action: e.action,
          },
        );
        return;
      case 'install_resolving':
        this.emit(
          'info',
          `${e.provider.toString()}: ${e.locked ? `reusing ${e.locked.toString()} from the lock file` : `finding versions matching "${e.constraints}"`}`,
          'install_resolving',
          {
            provider: e.provider.toString(),
            constraints: e.constraints,
            locked: e.locked?.toString() ?? null,
          },
        );
        return;
      case 'install_start':
        this.emit('info', `Installing ${e.provider.toString()} v${e.version.toString()}...`, 'install_start', {
          ...ref(e),
          location: e.location,
        });
        return;
      case 'install_complete':
        this.emit(
          'info',
          e.mode === 'installed'
            ? `Installed ${e.provider.toString()} v${e.version.toString()} (${e.auth ?? 'unauthenticated'})`
            : e.mode === 'cache'
              ? `Using ${e.provider.toString()} v${e.version.toString()} from the shared cache directory`
              : `Using previously-installed ${e.provider.toString()} v${e.version.toString()}`,
          'install_complete',
          {
            ...ref(e),
            mode: e.mode.replace('-', '_'),
            authentication: e.auth ?? null,
            key_id: e.keyId ?? null,
            dir: e.dir,
            ...packageHashesJSON(e.hashes),
          },
        );
        return;
      case 'package_lock_wait':
        this.emit('info', `Waiting for the directory mutex ${e.path}`, 'package_lock_wait', {
          provider: e.provider.toString(),
          path: e.path,
          holder: e.holder ?? null,
          waited_ms: e.waitedMs,
        });
        return;
      case 'verify_problem':
        this.emit(
          'error',
          `${[e.provider.toString(), e.version?.toString(), e.platform?.toString()].filter((x) => x !== undefined).join(' ')}: ${e.message}`,
          'verify_problem',
          {
            provider: e.provider.toString(),
            version: e.version?.toString() ?? null,
            platform: e.platform?.toString() ?? null,
            code: e.code,
            problem: e.message,
          },
        );
        return;
      case 'verify_package':
        this.emit('info', verifiedPackageText(e), 'verify_package', {
          ...ref(e),
          location: e.location,
          ...packageHashesJSON(e.hashes),
        });
        return;
      case 'verify_unvouched':
        // As audit_hash says a hash nobody vouches for: no dispositions.
        this.emit('warn', unvouchedText(e), 'verify_unvouched', {
          ...ref(e),
          hashes: e.hashes.map((h) => ({ hash: h.text, platform: null, dispositions: [] })),
        });
        return;
    }
  }
}

/**
 * `hashes` of `package_fetch_complete` and `install_complete`: each hash,
 * the platform it is of (or null) and its dispositions as `audit_hash`
 * carries them (docs/json-ui.md); nothing when the event has none.
 */
function packageHashesJSON(hashes: readonly PackageHash[] | undefined): { hashes?: unknown[] } {
  if (hashes === undefined) return {};
  return {
    hashes: hashes.map((h) => ({
      hash: h.hash.text,
      platform: h.platform?.toString() ?? null,
      dispositions: h.dispositions.map(dispositionJSON),
    })),
  };
}
