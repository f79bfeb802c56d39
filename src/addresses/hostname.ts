/**
 * Service hostnames as the reference tools treat them (`svchost`,
 * docs/reference.md §1.1 item 4), the `idna.Lookup` profile of Go's `golang.org/x/net/idna`
 * that they rely on. (Go's string semantics, `%q` quoting and the like,
 * are in src/go/.)
 *
 * Two forms of a hostname exist:
 * - the **comparison form** ({@link Hostname}): lower case, punycode (ASCII),
 *   port normalised. Use it for equality, sorting and the network.
 * - the **display form** ({@link hostnameForDisplay}): the same name with its
 *   labels in Unicode. Use it for messages, lock files and mirror paths.
 *
 * Pure: no I/O.
 */
import { createRequire } from 'node:module';

import type * as Tr46 from 'tr46';

/**
 * tr46 (UTS #46 tables, a large JSON file) is loaded on first use: ASCII
 * host names, nearly all of them, never need it, and start-up time counts
 * (bench/results-commands.md: the second mirror run into the same target).
 */
let tr46Module: typeof Tr46 | undefined;
function tr46(): typeof Tr46 {
  tr46Module ??= createRequire(import.meta.url)('tr46') as typeof Tr46;
  return tr46Module;
}
const tr46ToASCII: typeof Tr46.toASCII = (...args) => tr46().toASCII(...args);
const tr46ToUnicode: typeof Tr46.toUnicode = (...args) => tr46().toUnicode(...args);

import { ErrorCode, ProvkitError } from '../errors.js';
import { goQuote } from '../go/index.js';

// ---------------------------------------------------------------------------
// Punycode (RFC 3492), ported from golang.org/x/net/idna/punycode.go so that
// edge cases (empty input, a trailing '-', overflow) behave as in Go.

const BASE = 36;
const TMIN = 1;
const TMAX = 26;
const SKEW = 38;
const DAMP = 700;
const INITIAL_BIAS = 72;
const INITIAL_N = 128;
const MAX_INT32 = 0x7fffffff;

function adapt(delta: number, numPoints: number, firstTime: boolean): number {
  delta = firstTime ? Math.trunc(delta / DAMP) : Math.trunc(delta / 2);
  delta += Math.trunc(delta / numPoints);
  let k = 0;
  while (delta > Math.trunc(((BASE - TMIN) * TMAX) / 2)) {
    delta = Math.trunc(delta / (BASE - TMIN));
    k += BASE;
  }
  return k + Math.trunc(((BASE - TMIN + 1) * delta) / (delta + SKEW));
}

/** `a + b*c` with Go's int32 overflow detection; undefined on overflow. */
function madd(a: number, b: number, c: number): number | undefined {
  const p = b * c;
  if (p > MAX_INT32 - a) return undefined;
  return a + p;
}

function decodeDigit(x: number): number | undefined {
  if (x >= 0x30 && x <= 0x39) return x - 0x30 + 26;
  if (x >= 0x41 && x <= 0x5a) return x - 0x41;
  if (x >= 0x61 && x <= 0x7a) return x - 0x61;
  return undefined;
}

function encodeDigit(d: number): string {
  return String.fromCharCode(d < 26 ? d + 0x61 : d - 26 + 0x30);
}

/** Go `decode`: the part after `xn--` → Unicode, or undefined (Go's `punyError`). */
function punyDecode(encoded: string): string | undefined {
  if (encoded === '') return '';
  let pos = 1 + encoded.lastIndexOf('-');
  if (pos === 1) return undefined;
  if (pos === encoded.length) return encoded.slice(0, -1);
  const output: number[] = [];
  if (pos !== 0) for (const ch of encoded.slice(0, pos - 1)) output.push(ch.codePointAt(0) ?? 0);
  let i = 0;
  let n = INITIAL_N;
  let bias = INITIAL_BIAS;
  while (pos < encoded.length) {
    const oldI = i;
    let w = 1;
    for (let k = BASE; ; k += BASE) {
      if (pos === encoded.length) return undefined;
      const digit = decodeDigit(encoded.charCodeAt(pos));
      if (digit === undefined) return undefined;
      pos++;
      const ni = madd(i, digit, w);
      if (ni === undefined) return undefined;
      i = ni;
      const t = k <= bias ? TMIN : k >= bias + TMAX ? TMAX : k - bias;
      if (digit < t) break;
      const nw = madd(0, w, BASE - t);
      if (nw === undefined) return undefined;
      w = nw;
    }
    if (output.length >= 1024) return undefined;
    const x = output.length + 1;
    bias = adapt(i - oldI, x, oldI === 0);
    n += Math.trunc(i / x);
    i %= x;
    if (n < 0 || n > 0x10ffff) return undefined;
    output.splice(i, 0, n);
    i++;
  }
  try {
    return String.fromCodePoint(...output);
  } catch {
    return undefined;
  }
}

/** Go `encode("xn--", s)`; undefined on overflow or U+FFFD (Go's A3 error). */
function punyEncode(s: string): string | undefined {
  const runes = Array.from(s, (ch) => ch.codePointAt(0) ?? 0);
  let output = 'xn--';
  let b = 0;
  let remaining = 0;
  for (const r of runes) {
    if (r === 0xfffd) return undefined;
    if (r < 0x80) {
      b++;
      output += String.fromCharCode(r);
    } else {
      remaining++;
    }
  }
  let h = b;
  if (b > 0) output += '-';
  let delta = 0;
  let n = INITIAL_N;
  let bias = INITIAL_BIAS;
  while (remaining !== 0) {
    let m = MAX_INT32;
    for (const r of runes) if (m > r && r >= n) m = r;
    const nd = madd(delta, m - n, h + 1);
    if (nd === undefined) return undefined;
    delta = nd;
    n = m;
    for (const r of runes) {
      if (r < n) {
        delta++;
        if (delta > MAX_INT32) return undefined;
        continue;
      }
      if (r > n) continue;
      let q = delta;
      for (let k = BASE; ; k += BASE) {
        const t = k <= bias ? TMIN : k >= bias + TMAX ? TMAX : k - bias;
        if (q < t) break;
        output += encodeDigit(t + ((q - t) % (BASE - t)));
        q = Math.trunc((q - t) / (BASE - t));
      }
      output += encodeDigit(q);
      bias = adapt(delta, h + 1, h === b);
      delta = 0;
      h++;
      remaining--;
    }
    delta++;
    n++;
  }
  return output;
}

// ---------------------------------------------------------------------------
// Go idna.Lookup emulation

/** Result of an IDNA operation: the converted string, or Go's error text. */
export type IdnaResult = { readonly ok: true; readonly value: string } | { readonly ok: false; readonly error: string };

const ACE_PREFIX = 'xn--';

/** UTS #46 mapping of one code point (non-transitional), via tr46. Disallowed code points map to themselves. */
function mapRune(ch: string): string {
  if (ch === '.') return '.';
  return tr46ToUnicode(ch, { transitionalProcessing: false }).domain;
}

/**
 * Whether Go's `validateAndMap` would report `idna: disallowed rune` for this
 * code point under the Lookup profile: UTS #46 status disallowed, or (with
 * UseSTD3ASCIIRules) mapped to or being an ASCII character other than
 * `a-z 0-9 - .`. The `a` prefix keeps tr46 from applying label-start rules.
 */
function isDisallowedRune(ch: string): boolean {
  if (ch === '.') return false;
  return tr46ToUnicode('a' + ch, { useSTD3ASCIIRules: true, transitionalProcessing: false }).error;
}

/** A code point whose status is valid (or deviation) without any mapping: Go's V6 rule for decoded labels. */
function isValidUnmappedRune(ch: string): boolean {
  return !isDisallowedRune(ch) && mapRune(ch) === ch;
}

function formatRune(cp: number): string {
  return 'U+' + cp.toString(16).toUpperCase().padStart(4, '0');
}

function labelError(label: string): string {
  return `idna: invalid label ${goQuote(label)}`;
}

/**
 * The labels Go's `labelIter` visits in `s`, with their index in
 * `s.split('.')`. Quirk (copied from Go): when the next label would start at
 * the last character and that character is `.`, iteration stops, so
 * `"a.."` visits only `"a"` and `"a."` visits only `"a"`.
 */
function* goLabels(s: string): Generator<[number, string]> {
  let curStart = 0;
  let i = 0;
  while (curStart < s.length) {
    const p = s.indexOf('.', curStart);
    const curEnd = p === -1 ? s.length : p;
    yield [i, s.slice(curStart, curEnd)];
    i++;
    curStart = curEnd + 1;
    if (curStart === s.length - 1 && s[curStart] === '.') curStart = s.length;
  }
}

/**
 * Go `validateLabel` with CheckHyphens and CheckJoiners (the Lookup profile),
 * as vendored by Terraform v1.11.4: a `--` in bytes 3–4 (of a label longer
 * than 4 bytes, "V2"), a leading or trailing `-` ("V3"), a leading combining
 * mark ("V5") or a ContextJ violation ("C"). Returns Go's error text.
 */
function validateLabel(label: string): string | undefined {
  if (label === '') return undefined;
  if (label.includes('--')) {
    const bytes = Buffer.from(label, 'utf8');
    if (bytes.length > 4 && bytes[2] === 0x2d && bytes[3] === 0x2d) return labelError(label);
  }
  if (label.startsWith('-') || label.endsWith('-')) return labelError(label);
  if (/^\p{M}/u.test(label)) return labelError(label);
  if ((label.includes('\u200c') || label.includes('\u200d')) && tr46ToUnicode(label, { checkJoiners: true }).error) {
    return labelError(label);
  }
  return undefined;
}

/**
 * Go's `idna.Lookup.ToASCII` (`toASCII` true) or `idna.Lookup.ToUnicode`
 * (false): UTS #46 non-transitional mapping (lower case, NFC), STD3 ASCII
 * rules, CheckHyphens, CheckJoiners and the Bidi rule, **without**
 * VerifyDNSLength, so empty labels and long labels pass (docs/reference.md §1.1 items 2, 4).
 *
 * tr46 provides the Unicode tables; the processing order, the punycode codec
 * and the error texts are Go's, so that the first reported problem is the one
 * the reference reports (`idna: disallowed rune U+005F`,
 * `idna: invalid label "-ex"`).
 *
 * Not tr46's own `toASCII` options: tr46 checks `--` by code point rather than
 * byte, rejects `xn--` labels that decode to ASCII, and verifies nothing of
 * what Go's error text needs.
 */
export function idnaLookup(given: string, toASCII: boolean): IdnaResult {
  // 1. validateAndMap: the first disallowed rune is the error. Fast path:
  // ASCII letters, digits, '-' and '.' are valid and map to lower case.
  let s: string;
  if (/^[A-Za-z0-9.-]*$/.test(given)) {
    s = given.toLowerCase();
  } else {
    let mapped = '';
    for (const ch of given) {
      if (isDisallowedRune(ch))
        return { ok: false, error: `idna: disallowed rune ${formatRune(ch.codePointAt(0) ?? 0)}` };
      mapped += mapRune(ch);
    }
    s = mapped.normalize('NFC');
  }

  // 2. Per-label validation; A-labels are decoded and validated as such.
  const labels = s.split('.');
  for (const [i, label] of goLabels(s)) {
    if (label === '') continue;
    if (label.startsWith(ACE_PREFIX)) {
      const u = punyDecode(label.slice(ACE_PREFIX.length));
      if (u === undefined) return { ok: false, error: labelError(label.slice(ACE_PREFIX.length)) };
      labels[i] = u;
      if (u.normalize('NFC') !== u) return { ok: false, error: labelError(u) };
      for (const ch of u) if (!isValidUnmappedRune(ch)) return { ok: false, error: labelError(u) };
      const e = validateLabel(u);
      if (e !== undefined) return { ok: false, error: e };
    } else {
      const e = validateLabel(label);
      if (e !== undefined) return { ok: false, error: e };
    }
  }

  // 3. The Bidi rule (RFC 5893), applied only to Bidi domain names.
  const unicode = labels.join('.');
  const maybeBidi = /[^\x00-\x7f]/u.test(unicode); // a Bidi domain name has an R, AL or AN character
  if (maybeBidi && tr46ToUnicode(unicode, { checkBidi: true }).error && !tr46ToUnicode(unicode, {}).error) {
    return { ok: false, error: labelError(s) };
  }
  if (!toASCII) return { ok: true, value: unicode };

  // 4. Encode non-ASCII labels.
  for (const [i] of goLabels(s)) {
    const label = labels[i] ?? '';
    if (/[^\x00-\x7f]/u.test(label)) {
      const a = punyEncode(label);
      if (a === undefined) return { ok: false, error: labelError(label) };
      labels[i] = a;
    }
  }
  return { ok: true, value: labels.join('.') };
}

// ---------------------------------------------------------------------------
// svchost

declare const hostnameBrand: unique symbol;

/**
 * A hostname in **comparison form** (svchost `Hostname`): produced only by
 * {@link hostnameForComparison} or {@link tryHostnameForComparison}, so two
 * values are the same host exactly when the strings are equal. ASCII
 * (punycode), lower case, with a `:port` suffix unless the port is 443.
 */
export type Hostname = string & { readonly [hostnameBrand]: true };

/** Result of {@link tryHostnameForComparison}. */
export type HostnameResult =
  { readonly ok: true; readonly hostname: Hostname } | { readonly ok: false; readonly error: string };

/** Go `strconv.Atoi` (base 10, optional sign, int64 range); undefined on error. */
function goAtoi(s: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(s)) return undefined;
  const n = BigInt(s);
  if (n > 9223372036854775807n || n < -9223372036854775808n) return undefined;
  return n;
}

/**
 * svchost `normalizePortPortion`: `:443` disappears, other ports are
 * re-printed in decimal (`:08443` → `:8443`, `:+80` → `:80`, and, as in Go,
 * `:-1` stays `:-1` because only ports above 65535 are refused).
 */
function normalizePortPortion(s: string): { ok: true; port: string } | { ok: false; error: string } {
  if (s === '') return { ok: true, port: '' };
  const num = goAtoi(s.slice(1));
  if (num === undefined) return { ok: false, error: 'port portion contains non-digit characters' };
  if (num === 443n) return { ok: true, port: '' };
  if (num > 65535n) return { ok: false, error: 'port number is greater than 65535' };
  return { ok: true, port: `:${num}` };
}

function splitPort(given: string): [string, string] {
  const colon = given.indexOf(':');
  return colon === -1 ? [given, ''] : [given.slice(0, colon), given.slice(colon)];
}

/**
 * svchost `ForComparison` without throwing (docs/reference.md §1.1 item 4): split the port
 * at the **first** `:` and normalise it; refuse an empty name, an empty label
 * and any label given in punycode (`xn--`, case-sensitive as in Go); then
 * {@link idnaLookup} to ASCII. The error is the reference's text.
 */
export function tryHostnameForComparison(given: string): HostnameResult {
  const [host, portPortion] = splitPort(given);
  const port = normalizePortPortion(portPortion);
  if (!port.ok) {
    const lower = host.toLowerCase();
    if (lower === 'https' || lower === 'http') {
      return { ok: false, error: 'need just a hostname and optional port number, not a full URL' };
    }
    return { ok: false, error: port.error };
  }
  if (host === '') return { ok: false, error: 'empty string is not a valid hostname' };
  for (const [, label] of goLabels(host)) {
    if (label === '') return { ok: false, error: 'hostname contains empty label (two consecutive periods)' };
    if (label.startsWith(ACE_PREFIX)) {
      return {
        ok: false,
        error: `hostname label ${goQuote(label)} specified in punycode format; service hostnames must be given in unicode`,
      };
    }
  }
  const ascii = idnaLookup(host, true);
  if (!ascii.ok) return ascii;
  return { ok: true, hostname: (ascii.value + port.port) as Hostname };
}

/**
 * svchost `ForComparison`: the comparison form of a user-written hostname.
 *
 * @throws {ProvkitError} `INVALID_PROVIDER_SOURCE` (the closest existing code)
 *   with the reference's error text as the message.
 */
export function hostnameForComparison(given: string): Hostname {
  const r = tryHostnameForComparison(given);
  if (r.ok) return r.hostname;
  throw new ProvkitError(ErrorCode.INVALID_PROVIDER_SOURCE, r.error, { found: given });
}

/** svchost `IsValid`: whether {@link hostnameForComparison} would succeed. */
export function isValidHostname(given: string): boolean {
  return tryHostnameForComparison(given).ok;
}

/**
 * svchost `Hostname.ForDisplay`: the labels of a comparison-form hostname in
 * Unicode, port kept (`xn--caf-dma.example:8443` → `café.example:8443`).
 * Used for messages, lock-file labels and mirror directory names.
 */
export function hostnameForDisplay(hostname: Hostname): string {
  // A comparison-form name changes only in its A-labels.
  if (!hostname.includes(ACE_PREFIX)) return hostname;
  const [host, port] = splitPort(hostname);
  const r = idnaLookup(host, false);
  // Cannot fail for a value made by hostnameForComparison (Go panics here).
  return (r.ok ? r.value : host) + port;
}

/**
 * svchost's top-level `ForDisplay`: a best-effort display form of any
 * user-written hostname, never failing (the input is returned when it cannot
 * be normalised). Uses the liberal transitional profile of the reference, as
 * approximated by tr46; prefer {@link hostnameForDisplay} for validated names.
 */
export function displayHostnameLenient(given: string): string {
  const [host, portPortion] = splitPort(given);
  const port = normalizePortPortion(portPortion);
  const portOut = port.ok ? port.port : portPortion;
  // Plain ASCII labels (letters, digits, inner single hyphens) map to lower
  // case and nothing else; only other names need the UTS #46 tables.
  if (host.split('.').every((l) => /^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?$/.test(l) && !l.includes('--')))
    return host.toLowerCase() + portOut;
  const opts = {
    transitionalProcessing: true,
    useSTD3ASCIIRules: true,
    checkHyphens: true,
    checkJoiners: true,
  } as const;
  const ascii = tr46ToASCII(host, opts);
  if (ascii === null) return host + portOut;
  const display = tr46ToUnicode(ascii, { ...opts, transitionalProcessing: false });
  if (display.error) return host + portOut;
  return display.domain + portOut;
}
