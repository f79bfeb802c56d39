/**
 * The `repository_template` of an `oci_mirror` installation method: an HCL
 * template over `hostname`, `namespace` and `type` that names the OCI
 * repository of a provider, as OpenTofu reads it (opentofu/opentofu
 * internal/command/cliconfig/provider_installation.go
 * `decodeOCIMirrorInstallationMethodBlock`, `prepareOCIMirrorRepositoryMapping`,
 * `evalOCIProviderMirrorRepositoryTemplate`), with its diagnostics:
 *
 * - a symbol other than the three: `the symbol "x" is not available …`;
 * - a component the `include` patterns do not pin to one value must be
 *   used: `template must refer to the "namespace" symbol unless …`;
 * - the template evaluated for `example.com/example-namespace/example-type`
 *   must be a repository address (`registry/path`): `template must generate
 *   a valid OCI repository address, …`;
 * - per provider, the result is parsed as OpenTofu's
 *   `ParseRepositoryAddressPrefix` does (net/oci/reference.ts).
 *
 * The template is an HCL template as `hclsyntax.ParseTemplate` reads it (no
 * backslash escapes; `$${` and `%%{` escape the markers). provkit evaluates
 * the usual forms: literal text, `${hostname}`-style references, quoted
 * strings, `==`/`!=`/`&&`/`||`/`!`, conditionals and `%{ if }` directives;
 * anything else (a function call, `for`) is refused with a diagnostic rather
 * than guessed at. The reference has no functions in scope either.
 *
 * Pure; no I/O.
 */
import type { Flavor, ProviderAddress } from '../addresses/index.js';
import type { Expression } from '../hcl/index.js';
import { parseHCL } from '../hcl/index.js';
import { parseRepositoryAddress, type RepositoryAddress } from '../net/oci/reference.js';
import type { CliConfigDiagnostic } from './model.js';
import { parseProviderPatterns, WILDCARD } from '../addresses/index.js';
import { ErrorCode, errorText } from '../errors.js';

/** The variables a template may use. */
const SYMBOLS = ['hostname', 'namespace', 'type'] as const;

/** The provider that stands for "any" when a template is checked (the reference's example). */
const EXAMPLE = { hostname: 'example.com', namespace: 'example-namespace', type: 'example-type' };

/** A provider's repository, or why the template cannot name one. */
export type RepositoryMapping = (provider: ProviderAddress) => RepositoryAddress;

const SUMMARY = 'Invalid oci_mirror repository template';
const MARKER = 'PROVKIT_OCI_REPOSITORY_TEMPLATE_END';

type Value = string | number | boolean | null;

class TemplateError extends Error {}

function error(summary: string, detail: string): CliConfigDiagnostic {
  return { severity: 'error', code: ErrorCode.INVALID_CLI_CONFIGURATION, summary, detail };
}

/** Parses the template as `hclsyntax.ParseTemplate` would (a heredoc body has the same rules). */
function parseTemplate(template: string): { expr?: Expression; diags: CliConfigDiagnostic[] } {
  if (template.includes(MARKER)) return { diags: [error(SUMMARY, `repository_template must not contain ${MARKER}.`)] };
  const parsed = parseHCL(`t = <<${MARKER}\n${template}\n${MARKER}\n`, '<oci_mirror repository_template>');
  const diags = parsed.diagnostics.filter((d) => d.severity === 'error').map((d) => error(d.summary, d.detail));
  const attr = parsed.body.attributes[0];
  if (diags.length > 0 || attr === undefined)
    return { diags: diags.length > 0 ? diags : [error(SUMMARY, 'The template cannot be parsed.')] };
  return { expr: stripFinalNewline(attr.expr), diags: [] };
}

/** The heredoc's final newline is not part of the template. */
function stripFinalNewline(expr: Expression): Expression {
  if (expr.kind !== 'Template') return expr;
  const parts = expr.parts.slice();
  const last = parts[parts.length - 1];
  if (last?.kind === 'Literal' && last.valueType === 'string' && last.value.endsWith('\n')) {
    const value = last.value.slice(0, -1);
    if (value === '') parts.pop();
    else parts[parts.length - 1] = { ...last, value };
  }
  return { ...expr, parts };
}

/** Root names of every variable reference in an expression tree. */
function variables(node: unknown, out: Set<string>): Set<string> {
  if (Array.isArray(node)) for (const n of node) variables(n, out);
  else if (typeof node === 'object' && node !== null) {
    const rec = node as Record<string, unknown>;
    if (rec['kind'] === 'ScopeTraversal') {
      const first = (rec['traversal'] as Array<{ type: string; name?: string }>)[0];
      if (first?.type === 'root' && first.name !== undefined) out.add(first.name);
    }
    for (const [k, v] of Object.entries(rec)) if (k !== 'range') variables(v, out);
  }
  return out;
}

function toStringValue(v: Value): string {
  if (v === null)
    throw new TemplateError(
      'Invalid template interpolation value: The expression result is null. Cannot include a null value in a string template.',
    );
  return typeof v === 'number' ? String(v) : typeof v === 'boolean' ? (v ? 'true' : 'false') : v;
}

function toBool(v: Value): boolean {
  if (typeof v === 'boolean') return v;
  if (v === 'true' || v === 'false') return v === 'true';
  throw new TemplateError('Incorrect condition type: The condition expression must be of type bool.');
}

/** Evaluates the forms provkit supports (see the module comment). */
function evaluate(expr: Expression, vars: Readonly<Record<string, string>>): Value {
  switch (expr.kind) {
    case 'Literal':
      return expr.value;
    case 'ScopeTraversal': {
      const [root, ...rest] = expr.traversal;
      if (root?.type !== 'root' || rest.length > 0)
        throw new TemplateError(
          'Unsupported attribute: hostname, namespace and type are strings and have no attributes or elements.',
        );
      const v = vars[root.name];
      if (v === undefined) throw new TemplateError(`Unknown variable: There is no variable named "${root.name}".`);
      return v;
    }
    case 'Template':
      return expr.parts.map((p) => toStringValue(evaluate(p, vars))).join('');
    case 'TemplateWrap':
      return evaluate(expr.wrapped, vars);
    case 'TemplateIf':
      return evaluate(toBool(evaluate(expr.condition, vars)) ? expr.then : expr.else, vars);
    case 'Parentheses':
      return evaluate(expr.expression, vars);
    case 'Conditional':
      return evaluate(toBool(evaluate(expr.condition, vars)) ? expr.trueResult : expr.falseResult, vars);
    case 'UnaryOp':
      if (expr.op === '!') return !toBool(evaluate(expr.operand, vars));
      break;
    case 'BinaryOp': {
      if (expr.op === '==' || expr.op === '!=') {
        const eq = evaluate(expr.lhs, vars) === evaluate(expr.rhs, vars);
        return expr.op === '==' ? eq : !eq;
      }
      if (expr.op === '&&') return toBool(evaluate(expr.lhs, vars)) && toBool(evaluate(expr.rhs, vars));
      if (expr.op === '||') return toBool(evaluate(expr.lhs, vars)) || toBool(evaluate(expr.rhs, vars));
      break;
    }
    default:
      break;
  }
  throw new TemplateError(
    'Unsupported template expression: provkit evaluates literal text, references to hostname, namespace and type, quoted strings, ==, !=, &&, ||, !, conditionals and %{ if } directives in repository_template.',
  );
}

/**
 * Checks a `repository_template` (see the module comment) and returns the
 * mapping, or the diagnostics. `at` is the method block's position
 * (`line:column`) for the messages; `include` the method's include patterns
 * as written.
 */
export function prepareRepositoryMapping(
  template: string,
  include: readonly string[],
  at: string,
  flavor: Flavor,
): { mapping?: RepositoryMapping; diags: CliConfigDiagnostic[] } {
  const { expr, diags } = parseTemplate(template);
  if (expr === undefined) return { diags };
  const used = variables(expr, new Set());
  for (const name of used) {
    if ((SYMBOLS as readonly string[]).includes(name)) continue;
    diags.push(
      error(
        SUMMARY,
        `Invalid oci_mirror block at ${at}: the symbol ${JSON.stringify(name)} is not available for an OCI mirror repository address template. Only "hostname", "namespace", and "type" are available.`,
      ),
    );
  }
  let patterns;
  try {
    patterns = parseProviderPatterns(include, flavor);
  } catch (err) {
    // Reported where the method's patterns are parsed; the template is not checked further (as the reference).
    const message = errorText(err);
    return {
      diags,
      mapping: () => {
        throw new Error(`oci_mirror installation source has invalid 'include' patterns: ${message}`);
      },
    };
  }
  const distinct = (key: 'hostname' | 'namespace' | 'type'): number =>
    new Set(patterns.filter((p) => p[key] !== WILDCARD).map((p) => p[key])).size;
  if (distinct('hostname') !== 1 && !used.has('hostname')) {
    diags.push(
      error(
        SUMMARY,
        `Invalid oci_mirror block at ${at}: template must refer to the "hostname" symbol unless the "include" argument selects exactly one registry hostname.`,
      ),
    );
  }
  if (distinct('namespace') !== 1 && !used.has('namespace')) {
    diags.push(
      error(
        SUMMARY,
        `Invalid oci_mirror block at ${at}: template must refer to the "namespace" symbol unless the "include" argument selects exactly one provider namespace.`,
      ),
    );
  }
  if (distinct('type') !== 1 && !used.has('type')) {
    diags.push(
      error(
        SUMMARY,
        `Invalid oci_mirror block at ${at}: template must refer to the "type" symbol unless the "include" argument selects exactly one provider.`,
      ),
    );
  }
  if (diags.length > 0) return { diags };

  const render = (vars: Readonly<Record<string, string>>): string => {
    const v = evaluate(expr, vars);
    if (v === null)
      throw new TemplateError(`Invalid oci_mirror block at ${at}: template must not produce a null value.`);
    return toStringValue(v);
  };
  let example: string;
  try {
    example = render(EXAMPLE);
  } catch (err) {
    return {
      diags: [
        error(
          SUMMARY,
          err instanceof TemplateError && err.message.startsWith('Invalid oci_mirror')
            ? err.message
            : `Invalid oci_mirror block at ${at}: ${errorText(err)}`,
        ),
      ],
    };
  }
  try {
    if (parseRepositoryAddress(example).repository === '') throw new Error('no repository');
  } catch {
    return {
      diags: [
        error(
          SUMMARY,
          `Invalid oci_mirror block at ${at}: template must generate a valid OCI repository address, including a registry hostname followed by a slash and then a repository name.`,
        ),
      ],
    };
  }
  return {
    diags: [],
    mapping: (p) => {
      const addr = render({ hostname: p.hostname, namespace: p.namespace, type: p.type });
      return parseRepositoryAddress(addr);
    },
  };
}
