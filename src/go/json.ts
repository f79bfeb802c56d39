/**
 * Go's `encoding/json` where provkit writes JSON the reference writes
 * (`json.MarshalIndent`, its string escapes), and the shape of a decoded
 * JSON object.
 *
 * Pure: no I/O.
 */
import { compareBytewise } from './strings.js';

/** A JSON value as Go's encoding/json sees it. */
export type GoJSON = null | boolean | number | string | readonly GoJSON[] | { readonly [key: string]: GoJSON };

/**
 * A string as Go's `encoding/json` writes it: JSON.stringify matches Go for
 * quotes, backslashes and control characters (Go ≥ 1.22 also writes \b and
 * \f); Go additionally escapes the HTML characters and the JavaScript line
 * separators (`go/src/encoding/json/encode.go`, `appendString`).
 */
export function goJSONString(s: string): string {
  return JSON.stringify(s).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * Go's `json.MarshalIndent(v, "", "  ")` for maps (keys sorted by bytes),
 * arrays and scalars: empty objects and arrays print as `{}` and `[]`; no
 * trailing newline. Objects given here are maps: their keys are sorted.
 */
export function goMarshalIndent(value: GoJSON, indent = ''): string {
  if (value === null || typeof value === 'boolean' || typeof value === 'number') return JSON.stringify(value);
  if (typeof value === 'string') return goJSONString(value);
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    const items = value as readonly GoJSON[];
    if (items.length === 0) return '[]';
    return `[\n${items.map((v) => inner + goMarshalIndent(v, inner)).join(',\n')}\n${indent}]`;
  }
  const obj = value as { readonly [key: string]: GoJSON };
  const keys = Object.keys(obj).sort(compareBytewise);
  if (keys.length === 0) return '{}';
  return `{\n${keys.map((k) => `${inner}${goJSONString(k)}: ${goMarshalIndent(obj[k]!, inner)}`).join(',\n')}\n${indent}}`;
}

/**
 * Whether a decoded JSON value is an object (what Go's `json.Unmarshal`
 * decodes into a `map[string]any`): not null, not an array. The one guard
 * for documents from servers and files; `T`: what the caller knows its
 * values to be (a {@link GoJSON} document's are GoJSON).
 */
export function isRecord<T = unknown>(v: unknown): v is Record<string, T> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
