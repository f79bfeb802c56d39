/**
 * Writing HCL quoted string literals exactly as Go's hclwrite does
 * (`escapeQuotedStringLit`), which is how Terraform/OpenTofu write
 * `.terraform.lock.hcl`: byte-for-byte agreement matters there.
 *
 * Rules, per character of the input:
 * - `\n` `\r` `\t` `"` `\` are written `\n` `\r` `\t` `\"` `\\`;
 * - `$` and `%` are doubled when the next character is `{`, so that
 *   `${` / `%{` stay literal (`$${` / `%%{`, spec "Template Literals");
 * - a character that is not printable by Go's `unicode.IsPrint` — letters,
 *   marks, numbers, punctuation and symbols, plus the ASCII space only (so
 *   U+00A0 and other spaces are escaped) — is written `\uXXXX` with four
 *   lowercase hex digits, or `\UXXXXXXXX` with eight above U+FFFF;
 * - everything else is written raw (non-ASCII as UTF-8).
 *
 * A lone UTF-16 surrogate (which a Go string cannot hold) is written as
 * U+FFFD, as it would come out after a UTF-8 round trip. Printability follows
 * the Unicode version of the JavaScript engine, which may differ from Go's
 * for characters assigned in between.
 */

import { isGoPrint } from '../go/index.js';

// Part of this module's API since before Go's printability moved to src/go.
export { isGoPrint };

/** The body of a quoted literal for `s`, without the surrounding quotes. */
export function escapeQuotedStringLit(s: string): string {
  let out = '';
  let runStart = 0;
  for (let i = 0; i < s.length;) {
    let cp = s.codePointAt(i) as number;
    const width = cp > 0xffff ? 2 : 1;
    let rep: string | undefined;
    switch (cp) {
      case 0x0a:
        rep = '\\n';
        break;
      case 0x0d:
        rep = '\\r';
        break;
      case 0x09:
        rep = '\\t';
        break;
      case 0x22:
        rep = '\\"';
        break;
      case 0x5c:
        rep = '\\\\';
        break;
      case 0x24:
      case 0x25:
        if (s.charCodeAt(i + 1) === 0x7b) rep = String.fromCharCode(cp, cp);
        break;
      default:
        if (cp >= 0xd800 && cp <= 0xdfff) {
          cp = 0xfffd;
          rep = '\uFFFD';
        } else if (!isGoPrint(cp)) {
          rep = cp < 0x10000 ? `\\u${cp.toString(16).padStart(4, '0')}` : `\\U${cp.toString(16).padStart(8, '0')}`;
        }
    }
    if (rep !== undefined) {
      out += s.slice(runStart, i) + rep;
      runStart = i + width;
    }
    i += width;
  }
  return out + s.slice(runStart);
}

/** `s` as a complete HCL quoted string literal, quotes included. */
export function quoteStringLit(s: string): string {
  return `"${escapeQuotedStringLit(s)}"`;
}

/**
 * Whether `name` is a valid HCL identifier (spec "Identifiers": an `ID_Start`
 * character or `_`, then `ID_Continue` characters or `-`), so usable unquoted
 * as a name. In ASCII, `ID_Start` is the letters and `ID_Continue` the
 * letters, digits and `_`, so an ASCII name is decided by {@link ASCII_IDENT};
 * the Unicode class, which costs ~2 ms to build at start-up, is built for the
 * first name that is not ASCII.
 */
export function isValidIdentifier(name: string): boolean {
  if (ASCII_ONLY.test(name)) return ASCII_IDENT.test(name);
  return (unicodeIdent ??= /^[\p{ID_Start}_][\p{ID_Continue}-]*$/u).test(name);
}

const ASCII_ONLY = /^[\x00-\x7f]*$/;
const ASCII_IDENT = /^[A-Za-z_][A-Za-z0-9_-]*$/;
let unicodeIdent: RegExp | undefined;
