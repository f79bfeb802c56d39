/**
 * SARIF 2.1.0 logs checked against the OASIS SARIF v2.1.0 (errata 01) JSON
 * schema itself (test/fixtures/sarif/sarif-schema-2.1.0.json, its README
 * says where it comes from): JSON Schema draft 04, compiled once with
 * `ajv-draft-04`, its string formats (`uri`, `uri-reference`, `date-time`)
 * checked by `ajv-formats`. Pure: no file is written, nothing listens.
 */
import { readFileSync } from 'node:fs';

// Both packages are CommonJS whose module.exports is also its own `default`; under `nodenext` the
// default import is module.exports, so the class and the plugin are its `default`.
import ajvDraft04 from 'ajv-draft-04';
import type { ErrorObject, ValidateFunction } from 'ajv-draft-04';
import ajvFormats from 'ajv-formats';

let validate: ValidateFunction | undefined;

function validator(): ValidateFunction {
  if (validate === undefined) {
    const schema = JSON.parse(
      readFileSync(new URL('../fixtures/sarif/sarif-schema-2.1.0.json', import.meta.url), 'utf8'),
    ) as Record<string, unknown>;
    // strict: false — the schema is OASIS's, with keywords ajv's strict mode frowns on (e.g. `deprecated`).
    const ajv = new ajvDraft04.default({ allErrors: true, strict: false });
    ajvFormats.default(ajv);
    validate = ajv.compile(schema);
  }
  return validate;
}

/** What is wrong with `log` as a SARIF 2.1.0 log, one line per schema error (empty: nothing). */
export function checkSarif(log: unknown): string[] {
  const v = validator();
  if (v(log)) return [];
  return (v.errors ?? []).map((e: ErrorObject) => `${e.instancePath || '$'}: ${e.message ?? e.keyword}`);
}
