/**
 * RFC 6570 URI templates, level 1 only (`{name}`), as OpenTofu reads
 * `tofu providers lock -oci-mirror=TEMPLATE`: opentofu/svchost
 * `uritemplates.ValidateLevel1` and `ExpandLevel1` (uritemplates/level1.go,
 * scanner.go, encode.go at 1a42986), error texts included.
 *
 * Expansion percent-encodes every byte of a value that is not RFC 3986
 * "unreserved" (so `:` in `host:port` becomes `%3a`), and every byte of a
 * literal that is neither reserved nor unreserved. An undefined variable
 * expands to the empty string.
 *
 * Pure; no I/O.
 */

import { errorText } from '../../errors.js';

/** Splits a template into literal and `{…}` expression tokens; throws on an unclosed `{`. */
function tokens(template: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < template.length) {
    if (template[i] === '{') {
      const close = template.indexOf('}', i);
      if (close < 0) throw new Error('unclosed URI template expression');
      out.push(template.slice(i, close + 1));
      i = close + 1;
    } else {
      const open = template.indexOf('{', i);
      const end = open < 0 ? template.length : open;
      out.push(template.slice(i, end));
      i = end;
    }
  }
  return out;
}

function pctAt(s: string, i: number): boolean {
  return /^%[0-9A-Fa-f]{2}/.test(s.slice(i, i + 3));
}

/** `validateLevel1Literal`: the characters RFC 6570 §2.1 allows, and valid `%XX`. */
function checkLiteral(tok: string): void {
  for (let i = 0; i < tok.length;) {
    if (tok[i] === '%') {
      if (!pctAt(tok, i)) throw new Error('invalid percent-encoded character');
      i += 3;
      continue;
    }
    const cp = tok.codePointAt(i)!;
    const ch = String.fromCodePoint(cp);
    if (cp <= 0x1f || cp === 0x7f) throw new Error('disallowed control character in literal');
    if (` "'%<>\\^\`{|}`.includes(ch)) throw new Error(`disallowed character ${goRune(ch)} in literal`);
    i += ch.length;
  }
}

/** `validateLevel1Expression`. */
function checkExpression(tok: string): string {
  const inner = tok.slice(1, -1);
  if (inner === '') throw new Error('zero-length expression sequence');
  const op = inner[0]!;
  if ('+#'.includes(op))
    throw new Error(
      `level 2 template expression operator ${goRune(op)} not allowed; only level 1 templates are supported`,
    );
  if ('./;?&'.includes(op))
    throw new Error(
      `level 3 template expression operator ${goRune(op)} not allowed; only level 1 templates are supported`,
    );
  if ('=,!@|'.includes(op)) throw new Error(`reserved template expression operator ${goRune(op)} not allowed`);
  // The reference's scanner yields comma-separated varspecs, checking each as
  // it goes, and stops after the second: `{a,b,c}` and `{a,b}` fail as "only
  // one variable", `{a,b-}` on the symbol, and `{a,}` passes (one varspec).
  const parts = inner.split(',');
  checkVarspec(parts[0]!);
  if (parts.length > 1 && (parts.length > 2 || parts[1] !== '')) {
    checkVarspec(parts[1]!);
    throw new Error('expression may include only one variable name');
  }
  // The whole text between the braces names the variable (as the reference's expansion).
  return inner;
}

function checkVarspec(spec: string): void {
  for (let i = 0; i < spec.length; i++) {
    const b = spec[i]!;
    if (b === '%') {
      if (!pctAt(spec, i)) throw new Error('invalid percent-encoded character');
    } else if (b === ':' || b === '*') {
      throw new Error(`level 4 modifier ${goRune(b)} not allowed`);
    } else if (!/[A-Za-z0-9_]/.test(b)) {
      throw new Error(`invalid symbol ${goRune(b)} in variable name`);
    }
  }
}

/** The reason `template` is not a valid level 1 template, or undefined. */
export function validateLevel1(template: string): string | undefined {
  try {
    for (const tok of tokens(template)) {
      if (tok.startsWith('{')) checkExpression(tok);
      else checkLiteral(tok);
    }
    return undefined;
  } catch (err) {
    return errorText(err);
  }
}

const UNRESERVED = /[A-Za-z0-9\-._~]/;
const RESERVED_OR_UNRESERVED = /[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=]/;

function encode(s: string, keep: RegExp): string {
  let out = '';
  for (const ch of s) {
    if (keep.test(ch)) out += ch;
    else for (const b of Buffer.from(ch, 'utf8')) out += `%${b.toString(16).padStart(2, '0')}`;
  }
  return out;
}

/**
 * Expands a level 1 template.
 *
 * @throws {Error} with the reference's text when the template is invalid.
 */
export function expandLevel1(template: string, vars: Readonly<Record<string, string>>): string {
  let out = '';
  for (const tok of tokens(template)) {
    if (tok.startsWith('{')) {
      out += encode(vars[checkExpression(tok)] ?? '', UNRESERVED);
      continue;
    }
    checkLiteral(tok);
    for (let i = 0; i < tok.length;) {
      if (tok[i] === '%') {
        out += tok.slice(i, i + 3);
        i += 3;
        continue;
      }
      const ch = String.fromCodePoint(tok.codePointAt(i)!);
      out += encode(ch, RESERVED_OR_UNRESERVED);
      i += ch.length;
    }
  }
  return out;
}

/** The variable names a valid level 1 template refers to. */
export function templateVariables(template: string): string[] {
  return tokens(template)
    .filter((t) => t.startsWith('{'))
    .map((t) => t.slice(1, -1));
}

/** Go's `%q` of a rune or byte: `'x'`. */
function goRune(ch: string): string {
  if (ch === "'") return "'\\''";
  if (ch === '\\') return "'\\\\'";
  return `'${ch}'`;
}
