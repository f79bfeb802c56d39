/**
 * A reader of the YAML subset docs/ci.md's recipes are written in, so that
 * test/e2e/ci-recipes.test.ts can run what they say (no YAML library is a
 * dependency). The subset: block mappings (`key: value`, `key:` then a nested
 * block) and block lists (`- item`, `- key: value` starting a mapping), plain
 * scalars, '…' and "…" scalars, `[a, b]` flow lists of scalars, `|` literal
 * blocks, and `#` comments. Anything else (anchors, `>` blocks, flow
 * mappings, tabs, a line indented where nothing can start) is an error naming
 * the line: a recipe the reader cannot read fails its test instead of being
 * half-read.
 */
export type YamlValue = string | null | YamlValue[] | { [key: string]: YamlValue };

interface Line {
  /** 1-based, for messages. */
  readonly n: number;
  readonly indent: number;
  readonly text: string;
}

const KEY = /^([A-Za-z0-9_$][A-Za-z0-9_.$/-]*):(?: +(.*))?$/;

export function parseYamlSubset(source: string): YamlValue {
  const raw = source.split('\n');
  let i = 0;
  const fail = (n: number, why: string): never => {
    throw new Error(`YAML line ${n} (${JSON.stringify(raw[n - 1] ?? '')}): ${why}`);
  };
  /** The next line that holds something (blank and comment-only lines skipped). */
  const peek = (): Line | undefined => {
    while (i < raw.length) {
      const text = raw[i]!;
      if (text.includes('\t')) fail(i + 1, 'tab');
      const trimmed = text.trim();
      if (trimmed === '' || trimmed.startsWith('#')) {
        i += 1;
        continue;
      }
      return { n: i + 1, indent: text.length - text.trimStart().length, text: trimmed };
    }
    return undefined;
  };

  const scalar = (text: string, n: number): YamlValue => {
    let t = text;
    if (t.startsWith("'")) {
      const m = /^'((?:[^']|'')*)'\s*(#.*)?$/.exec(t);
      if (!m) fail(n, 'unterminated quoted scalar');
      return m![1]!.replaceAll("''", "'");
    }
    if (t.startsWith('"')) {
      const m = /^("(?:[^"\\]|\\.)*")\s*(#.*)?$/.exec(t);
      if (!m) fail(n, 'unterminated quoted scalar');
      return JSON.parse(m![1]!) as string;
    }
    if (t.startsWith('[')) {
      const m = /^\[(.*)\]\s*(#.*)?$/.exec(t);
      if (!m) fail(n, 'unterminated flow list');
      const inner = m![1]!.trim();
      return inner === '' ? [] : inner.split(',').map((part) => scalar(part.trim(), n));
    }
    if (/^[&*!{>@`%]/.test(t)) fail(n, `unsupported: ${t[0]!}`);
    t = t.replace(/\s+#.*$/, '');
    return t;
  };

  /** A `|` block: the lines indented deeper than `parent`, dedented, each ending in a newline. */
  const literal = (parent: number): string => {
    const body: string[] = [];
    let indent = -1;
    while (i < raw.length) {
      const text = raw[i]!;
      const own = text.length - text.trimStart().length;
      if (text.trim() !== '' && own <= parent) break;
      if (text.trim() !== '' && indent < 0) indent = own;
      body.push(text);
      i += 1;
    }
    while (body.length > 0 && body[body.length - 1]!.trim() === '') body.pop();
    return body.map((l) => `${l.slice(Math.max(indent, 0))}\n`).join('');
  };

  /** The value after `key:` on line `line` (at `indent`): inline, a `|` block, a nested block, or null. */
  const valueOf = (rest: string | undefined, line: Line, indent: number): YamlValue => {
    if (rest !== undefined && rest.trim() !== '' && !rest.trim().startsWith('#')) {
      if (rest.trim() === '|') return literal(indent);
      return scalar(rest.trim(), line.n);
    }
    const next = peek();
    if (next === undefined || next.indent < indent) return null;
    if (next.indent === indent) return next.text.startsWith('- ') || next.text === '-' ? list(indent) : null;
    return block(next.indent);
  };

  const mapping = (indent: number): { [key: string]: YamlValue } => {
    const out: { [key: string]: YamlValue } = {};
    for (let line = peek(); line !== undefined && line.indent === indent; line = peek()) {
      if (line.text.startsWith('- ')) break;
      const m = KEY.exec(line.text);
      if (!m) fail(line.n, 'not a key: value line');
      i += 1;
      if (Object.hasOwn(out, m![1]!)) fail(line.n, `duplicate key ${m![1]!}`);
      out[m![1]!] = valueOf(m![2], line, indent);
    }
    return out;
  };

  const list = (indent: number): YamlValue[] => {
    const out: YamlValue[] = [];
    for (let line = peek(); line !== undefined && line.indent === indent; line = peek()) {
      if (!(line.text.startsWith('- ') || line.text === '-')) break;
      const item = line.text.slice(2).trim();
      if (KEY.test(item)) {
        // `- key: value`: a mapping whose keys sit two columns in; read this line as one of them.
        raw[i] = `${' '.repeat(indent + 2)}${item}`;
        out.push(mapping(indent + 2));
      } else {
        i += 1;
        if (item === '|') out.push(literal(indent));
        else out.push(item === '' ? valueOf(undefined, line, indent + 1) : scalar(item, line.n));
      }
    }
    return out;
  };

  const block = (indent: number): YamlValue => {
    const first = peek();
    if (first === undefined) return null;
    return first.text.startsWith('- ') ? list(indent) : mapping(indent);
  };

  const first = peek();
  const doc = first === undefined ? null : block(first.indent);
  const extra = peek();
  if (extra !== undefined) fail(extra.n, 'indented where nothing can start');
  return doc;
}

/** `value` as a mapping, or an error naming `what`. */
export function asMap(value: YamlValue | undefined, what: string): { [key: string]: YamlValue } {
  if (value === null || value === undefined || typeof value !== 'object' || Array.isArray(value))
    throw new Error(`${what}: not a mapping`);
  return value;
}

/** `value` as a list, or an error naming `what`. */
export function asList(value: YamlValue | undefined, what: string): YamlValue[] {
  if (!Array.isArray(value)) throw new Error(`${what}: not a list`);
  return value;
}

/** `value` as a string, or an error naming `what`. */
export function asString(value: YamlValue | undefined, what: string): string {
  if (typeof value !== 'string') throw new Error(`${what}: not a string`);
  return value;
}
