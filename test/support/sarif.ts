/**
 * A checker of SARIF 2.1.0 logs (OASIS SARIF v2.1.0 errata 01, its JSON
 * schema `sarif-schema-2.1.0.json`), for the objects `provkit audit -sarif`
 * writes: for each, the schema's `required` properties, its closed set of
 * properties (`additionalProperties: false`), and the types and enums of
 * the values. Objects of kinds not listed here are refused: the log must
 * stay within what this checker knows. The tables are transcribed from the
 * schema's `definitions` (run, tool, toolComponent, reportingDescriptor,
 * reportingConfiguration, result, message, multiformatMessageString,
 * location, physicalLocation, artifactLocation, region); the full schema
 * check is the command in docs/provenance.md "Checking the SARIF file".
 */

type Json = unknown;

interface Def {
  readonly required?: readonly string[];
  /** Property → its check: a definition name, `string`, `integer>=N`, `object-of-strings`, `bag`, `array:DEF`, `enum:a|b`, `map:DEF`. */
  readonly props: Readonly<Record<string, string>>;
}

const DEFS: Readonly<Record<string, Def>> = {
  log: {
    required: ['version', 'runs'],
    props: { $schema: 'string', version: 'enum:2.1.0', runs: 'array:run', properties: 'bag' },
  },
  run: {
    required: ['tool'],
    props: { tool: 'tool', results: 'array:result', originalUriBaseIds: 'map:artifactLocation', properties: 'bag' },
  },
  tool: { required: ['driver'], props: { driver: 'toolComponent', properties: 'bag' } },
  toolComponent: {
    required: ['name'],
    props: {
      name: 'string',
      version: 'string',
      semanticVersion: 'string',
      informationUri: 'string',
      rules: 'array:reportingDescriptor',
      properties: 'bag',
    },
  },
  reportingDescriptor: {
    required: ['id'],
    props: {
      id: 'string',
      name: 'string',
      shortDescription: 'multiformatMessageString',
      fullDescription: 'multiformatMessageString',
      helpUri: 'string',
      defaultConfiguration: 'reportingConfiguration',
      properties: 'bag',
    },
  },
  reportingConfiguration: {
    props: { enabled: 'boolean', level: 'enum:none|note|warning|error', properties: 'bag' },
  },
  result: {
    required: ['message'],
    props: {
      ruleId: 'string',
      ruleIndex: 'integer>=-1',
      level: 'enum:none|note|warning|error',
      message: 'message',
      locations: 'array:location',
      partialFingerprints: 'object-of-strings',
      properties: 'bag',
    },
  },
  message: { props: { text: 'string', markdown: 'string', id: 'string', properties: 'bag' } },
  multiformatMessageString: { required: ['text'], props: { text: 'string', markdown: 'string', properties: 'bag' } },
  location: { props: { physicalLocation: 'physicalLocation', message: 'message', properties: 'bag' } },
  physicalLocation: { props: { artifactLocation: 'artifactLocation', region: 'region', properties: 'bag' } },
  artifactLocation: {
    props: { uri: 'string', uriBaseId: 'string', index: 'integer>=-1', description: 'message', properties: 'bag' },
  },
  region: {
    props: {
      startLine: 'integer>=1',
      startColumn: 'integer>=1',
      endLine: 'integer>=1',
      endColumn: 'integer>=1',
      properties: 'bag',
    },
  },
};

const isObject = (v: Json): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);

function check(value: Json, kind: string, at: string, problems: string[]): void {
  if (kind === 'string') {
    if (typeof value !== 'string') problems.push(`${at}: not a string`);
    return;
  }
  if (kind === 'boolean') {
    if (typeof value !== 'boolean') problems.push(`${at}: not a boolean`);
    return;
  }
  if (kind.startsWith('integer>=')) {
    if (!Number.isInteger(value) || (value as number) < Number(kind.slice(9))) problems.push(`${at}: not an ${kind}`);
    return;
  }
  if (kind.startsWith('enum:')) {
    if (
      !kind
        .slice(5)
        .split('|')
        .includes(value as string)
    )
      problems.push(`${at}: not one of ${kind.slice(5)}`);
    return;
  }
  if (kind === 'bag') {
    if (!isObject(value)) problems.push(`${at}: a property bag must be an object`);
    return;
  }
  if (kind === 'object-of-strings') {
    if (!isObject(value) || Object.values(value).some((v) => typeof v !== 'string'))
      problems.push(`${at}: must be an object of strings`);
    return;
  }
  if (kind.startsWith('array:')) {
    if (!Array.isArray(value)) {
      problems.push(`${at}: not an array`);
      return;
    }
    value.forEach((v, i) => check(v, kind.slice(6), `${at}[${i}]`, problems));
    return;
  }
  if (kind.startsWith('map:')) {
    if (!isObject(value)) {
      problems.push(`${at}: not an object`);
      return;
    }
    for (const [k, v] of Object.entries(value)) check(v, kind.slice(4), `${at}.${k}`, problems);
    return;
  }
  const def = DEFS[kind];
  if (def === undefined) throw new Error(`checker: unknown kind ${kind}`);
  if (!isObject(value)) {
    problems.push(`${at}: not an object (${kind})`);
    return;
  }
  for (const r of def.required ?? []) if (!(r in value)) problems.push(`${at}: missing ${r} (${kind})`);
  for (const [k, v] of Object.entries(value)) {
    const sub = def.props[k];
    if (sub === undefined) problems.push(`${at}.${k}: not a property of ${kind} (or not one this checker knows)`);
    else check(v, sub, `${at}.${k}`, problems);
  }
  // SARIF §3.11.11: a message has text or an id.
  if (kind === 'message' && !('text' in value) && !('id' in value)) problems.push(`${at}: a message needs text or id`);
}

/** What is wrong with `log` as a SARIF 2.1.0 log (empty: nothing). */
export function checkSarif(log: Json): string[] {
  const problems: string[] = [];
  check(log, 'log', '$', problems);
  return problems;
}
