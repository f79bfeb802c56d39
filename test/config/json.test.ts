// The JSON syntax (.tf.json): the strict JSON reader with positions, the
// schema-directed body interpretation, and literal strings.
import { describe, expect, it } from 'vitest';

import { buildModule, moduleRequirements, parseConfigFile, parseJSON } from '../../src/config/index.js';
import { parseJSONFile } from '../../src/hcl/index.js';
import { diagLines, reqLines } from './helpers.js';

const json = (text: string, name = 'main.tf.json') => parseConfigFile(text, name, { flavor: 'terraform' });

describe('parseJSON', () => {
  it('keeps duplicate properties in order, with ranges', () => {
    const r = parseJSON('{"a": 1, "a": [true, null, "x\\u00e9"]}', 'f.json');
    expect(r.diagnostics).toEqual([]);
    const v = r.value;
    expect(v?.kind === 'object' && v.props.map((p) => [p.name, p.nameRange.start.column])).toEqual([
      ['a', 2],
      ['a', 10],
    ]);
  });

  // What terraform 1.11.4 reports for each as a main.tf.json (`terraform validate -json`): the
  // syntax errors of hcl's JSON parser (json/parser.go), which goes on after an error, and
  // "Root value must be object" (json.Parse) when the whole value did not parse.
  it.each([
    [
      '{"a": 1,}',
      [
        ['Trailing comma in object', '1:8'],
        ['Root value must be object', '1:1'],
      ],
    ],
    [
      '{\n  "a" 1\n}',
      [
        ['Missing property value colon', '2:7'],
        ['Root value must be object', '1:1'],
      ],
    ],
    [
      '{"a" = 1}',
      [
        ['Missing property value colon', '1:6'],
        ['Root value must be object', '1:1'],
      ],
    ],
    ['{"a": [1 2]}', [['Missing attribute seperator comma', '1:12']]],
    ['{"a": tru}', [['Invalid JSON keyword', '1:7']]],
    [
      'NaN',
      [
        ['Invalid JSON keyword', '1:1'],
        ['Root value must be object', '1:1'],
      ],
    ],
    [
      '{"a": "x',
      [
        ['Invalid JSON string', '1:9'],
        ['Unclosed object', '1:1'],
        ['Root value must be object', '1:1'],
      ],
    ],
    ['{"a": 01}', [['Invalid JSON number', '1:7']]],
    ['{"a": 1} x', [['Extraneous data after value', '1:10']]],
    [
      '',
      [
        ['Missing value', '1:1'],
        ['Root value must be object', '1:1'],
      ],
    ],
    ['{"a": "\\q"}', [['Invalid JSON string', '1:10']]],
    ['{"a": "\\u12G4"}', [['Invalid JSON string', '1:13']]],
    [
      '[1,2',
      [
        ['Unclosed object', '1:1'],
        ['Root value must be object', '1:1'],
      ],
    ],
    ['{"a": {"b": 1,}, "c": 2}', [['Trailing comma in object', '1:14']]],
    [new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x7d]), [['Invalid character encoding', '1:3']]],
  ] as const)('%j: %j', (text, want) => {
    const r = parseJSONFile(text, 'main.tf.json');
    expect(r.value).toBeUndefined();
    expect(r.diagnostics.map((d) => [d.summary, `${d.range?.start?.line}:${d.range?.start?.column}`])).toEqual(want);
  });

  it('words keywords as terraform 1.11.4 does', () => {
    expect(parseJSON('{"a": True}', 'f.json').diagnostics.map((d) => d.detail)).toEqual([
      '"True" is not a valid JSON keyword. Did you mean "true"?',
    ]);
    expect(parseJSON('NaN', 'f.json').diagnostics.map((d) => d.detail)).toEqual([
      'The JavaScript identifier "NaN" cannot be used in JSON.',
    ]);
  });
});

describe('.tf.json files', () => {
  it('read required_providers, provider blocks (arrays of them), resources and modules', () => {
    const r = json(`{
  "//": "comments are ignored",
  "terraform": [{ "required_providers": { "azurerm": { "source": "hashicorp/azurerm", "version": "~> 3.100" } } }],
  "provider": { "azurerm": [{ "features": {} }, { "alias": "shared", "features": {} }] },
  "resource": {
    "azurerm_storage_account": { "shared": { "provider": "azurerm.shared", "name": "x" } },
    "random_id": { "a": {}, "b": {} }
  },
  "data": { "http": [{ "h": { "url": "\${var.url}" } }] },
  "module": { "net": { "source": "./net" } }
}`);
    expect(r.diagnostics).toEqual([]);
    expect(r.file.providerConfigs.map((p) => p.alias ?? '')).toEqual(['', 'shared']);
    expect(
      r.file.resources.map(
        (x) =>
          `${x.mode}.${x.type}.${x.name}${x.providerRef ? ` -> ${x.providerRef.name}.${x.providerRef.alias}` : ''}`,
      ),
    ).toEqual([
      'managed.azurerm_storage_account.shared -> azurerm.shared',
      'managed.random_id.a',
      'managed.random_id.b',
      'data.http.h',
    ]);
    expect(r.file.moduleCalls[0]?.source).toEqual({ kind: 'local', path: './net' });
    const m = buildModule([r.file], [], 'terraform').module;
    expect(reqLines(moduleRequirements(m, 'terraform').requirements)).toEqual([
      'registry.terraform.io/hashicorp/azurerm ~> 3.100',
      'registry.terraform.io/hashicorp/random',
      'registry.terraform.io/hashicorp/http',
    ]);
  });

  it('takes strings literally, as static analysis of the JSON syntax does (terraform 1.11.4)', () => {
    const r = json('{"module": {"m": {"source": "${var.x}"}}}');
    // terraform: Invalid module source address ... remote module package "${var.x}".
    expect(r.diagnostics.map((d) => d.summary)).toEqual(['Invalid module source address']);
    expect(r.diagnostics[0]?.detail).toContain('remote module package "${var.x}".');
  });

  it('reports syntax and structure errors with file:line:col, worded as terraform 1.11.4', () => {
    expect(
      diagLines(
        json(
          '{\n  "terraform": {\n    "required_providers": {\n      "aws": { "source": "hashicorp/aws", },\n    }\n  }\n}\n',
        ).diagnostics,
      ),
    ).toEqual([
      'error main.tf.json:4:41: Trailing comma in object',
      'error main.tf.json:4:44: Trailing comma in object',
    ]);
    const r = json('{\n  "resourse": {},\n  "resource": "x",\n  "provider": {"aws": "y"}\n}\n');
    expect(diagLines(r.diagnostics)).toEqual([
      'error main.tf.json:3:15: Incorrect JSON value type',
      'error main.tf.json:3:15: Missing block label',
      'error main.tf.json:4:23: Incorrect JSON value type',
      'error main.tf.json:2:3: Extraneous JSON object property',
    ]);
    expect(r.diagnostics.map((d) => d.detail)).toEqual([
      'Either a JSON object or JSON array of objects is required here, to specify type labels for this block.',
      "At least one object property is required, whose name represents the resource block's type.",
      'Either a JSON object or a JSON array is required, representing the contents of one or more "provider" blocks.',
      'No argument or block type is named "resourse". Did you mean "resource"?',
    ]);
  });

  it('reports duplicate arguments', () => {
    const r = json('{"terraform": {"required_providers": {"a": "1.0", "a": "2.0"}}}');
    expect(r.diagnostics.map((d) => d.summary)).toEqual(['Duplicate attribute definition']);
  });
});
