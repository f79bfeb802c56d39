// Human rendering (src/ui/human.ts): the boxed diagnostics keep their frame
// whatever the text holds, and progress lines name providers as the reference
// does (issue 11 #9, #10).
import { describe, expect, it } from 'vitest';

import { parsePlatform, parseProviderSource, parseVersion } from '../../src/addresses/index.js';
import { queryWarningsEvent } from '../../src/installer/events.js';
import { renderDiagnostic, renderEventHuman } from '../../src/ui/human.js';

function sink(): { text: string; write(s: string): void } {
  return {
    text: '',
    write(s: string) {
      this.text += s;
    },
  };
}

describe('diagnostics as terraform frames them', () => {
  it('starts every line inside the box with │, also those of a multi-line summary (colour on a terminal)', () => {
    const out = sink();
    renderDiagnostic(
      { severity: 'warning', summary: 'first line \nsecond line', detail: 'a\n\nb', code: 'SOURCE_WARNING' },
      out,
      { color: true, diagnosticColor: true, width: 80, frame: 'view' },
    );
    const plain = out.text.replace(/\u001b\[[0-9;]*m/g, '');
    expect(plain).toBe('╷\n│ Warning: first line \n│ second line\n│ \n│ a\n│ \n│ b\n╵\n');
  });

  it('wraps the detail to the width (terraform: width - 3 in the box, width - 1 plain)', () => {
    const detail = 'word '.repeat(40).trim();
    const boxed = sink();
    renderDiagnostic({ severity: 'error', summary: 'S', detail, code: 'INTERNAL' }, boxed, {
      color: true,
      diagnosticColor: true,
      width: 40,
      frame: 'view',
    });
    const lines = boxed.text.replace(/\u001b\[[0-9;]*m/g, '').split('\n');
    expect(lines.every((l) => [...l].length <= 40)).toBe(true);
    const plain = sink();
    renderDiagnostic({ severity: 'error', summary: 'S', detail, code: 'INTERNAL' }, plain, {
      color: false,
      diagnosticColor: false,
      width: 40,
      frame: 'view',
    });
    expect(plain.text).toBe(`\nError: S\n\n${'word word word word word word word word\n'.repeat(5)}`);
  });

  it('reports a source\'s version warnings as init does: one diagnostic per provider, a "- " line each', () => {
    const provider = parseProviderSource('registry.example.test/acme/demo', 'tofu');
    expect(queryWarningsEvent(provider, [])).toBeUndefined();
    expect(queryWarningsEvent(provider, ['one', 'two'])).toEqual({
      type: 'warning',
      code: 'REGISTRY_WARNINGS',
      summary: 'Additional provider information from registry',
      detail: 'The remote registry returned warnings for registry.example.test/acme/demo:\n- one\n- two',
      provider,
    });
  });
});

describe('progress lines name providers by ForDisplay', () => {
  const lines = (source: string, flavor: 'tofu' | 'terraform'): string => {
    const out = sink();
    const err = sink();
    const provider = parseProviderSource(source, flavor);
    const version = parseVersion('1.2.0');
    const platform = parsePlatform('linux_amd64');
    renderEventHuman({ type: 'install_resolving', provider, constraints: '', locked: undefined }, out, err, flavor);
    renderEventHuman({ type: 'install_start', provider, version, platform, location: '' }, out, err, flavor);
    renderEventHuman({ type: 'fetch_start', provider, version, platform, location: '' }, out, err, flavor);
    renderEventHuman({ type: 'hashes_obtained', provider, platform, change: 'added' }, out, err, flavor);
    return out.text;
  };

  it("omits the flavor's default registry host, and only that one", () => {
    expect(lines('hashicorp/aws', 'terraform')).toBe(
      '- Finding latest version of hashicorp/aws...\n- Installing hashicorp/aws v1.2.0...\n- Fetching hashicorp/aws 1.2.0 for linux_amd64...\n' +
        '- Obtained hashicorp/aws checksums for linux_amd64; Additional checksums for this platform are now tracked in the lock file\n',
    );
    expect(lines('hashicorp/aws', 'tofu')).toContain('- Installing hashicorp/aws v1.2.0...\n');
    expect(lines('registry.terraform.io/hashicorp/aws', 'tofu')).toContain(
      '- Installing registry.terraform.io/hashicorp/aws v1.2.0...\n',
    );
    expect(lines('registry.opentofu.org/hashicorp/aws', 'terraform')).toContain(
      '- Installing registry.opentofu.org/hashicorp/aws v1.2.0...\n',
    );
  });
});

describe('text from outside is escaped where it is printed (src/ui/escape.ts)', () => {
  const hostile = 'x\u001b[2J\r\n- Retrieved forged\u0007';
  const escaped = 'x\\x1b[2J\\r\\n- Retrieved forged\\a';

  it("a diagnostic's summary, detail, hint and file name: no control character but provkit's own colour codes", () => {
    for (const color of [false, true]) {
      const out = sink();
      renderDiagnostic(
        {
          severity: 'error',
          summary: `summary ${hostile}`,
          detail: `first paragraph\n\ndetail ${hostile}`,
          hint: `hint ${hostile}`,
          range: { filename: `dir${hostile}/main.tf` },
          code: 'IO',
        },
        out,
        { color, diagnosticColor: color, width: 200, frame: 'meta' },
      );
      // Provkit's own colour codes are the only escape sequences (and only with colour).
      const text = color ? out.text.replace(/\u001b\[[0-9;]*m/g, '') : out.text;
      expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f]/);
      // The file name is one line; summary, detail and hint keep line breaks (provkit's) and lose the rest.
      expect(text).toContain(`dir${escaped}/main.tf`);
      for (const part of ['summary', 'detail', 'hint']) expect(text).toContain(`${part} x\\x1b[2J\\r`);
      expect(text).toContain('- Retrieved forged\\a');
    }
  });

  it("an event's text fields are one line each: a path or a lock holder cannot start another line", () => {
    const out = sink();
    renderEventHuman(
      {
        type: 'package_lock_wait',
        provider: parseProviderSource('hashicorp/demo', 'tofu'),
        path: `/cache/${hostile}`,
        holder: hostile,
        waitedMs: 0,
      },
      out,
      sink(),
      'tofu',
    );
    expect(out.text.split('\n')).toHaveLength(2);
    expect(out.text).toContain(`(mutex /cache/${escaped}, held by ${escaped})`);
  });
});

describe('an error message is one line (src/errors.ts)', () => {
  it("a server's or a file name's line breaks are escaped; lines given as lines stay lines, across a worker too", async () => {
    const { ProvkitError, ErrorCode } = await import('../../src/errors.js');
    const e = new ProvkitError(ErrorCode.IO, 'HTTP 400: no\r\n- Retrieved forged\n\nSuccess!');
    expect(e.message).toBe('HTTP 400: no\\r\\n- Retrieved forged\\n\\nSuccess!');
    const two = new ProvkitError(ErrorCode.IO, ['first line ', 'second\nline']);
    expect(two.message).toBe('first line \nsecond\\nline');
    expect(ProvkitError.fromJSON(two.toJSON()).message).toBe(two.message);
  });
});
