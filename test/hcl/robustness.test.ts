// Robustness of the HCL parser: random mutations of the corpus and hostile
// inputs must give diagnostics or trees, never exceptions, in bounded time.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import type { Body, Diagnostic, Expression, ParseResult } from '../../src/hcl/index.js';
import { evaluateStatic, parseHCL, staticMap, staticStringList } from '../../src/hcl/index.js';
import { CORPUS, corpusFiles } from './helpers.js';

/** Deterministic PRNG (mulberry32), so that a failure can be replayed. */
function prng(seed: number): (n: number) => number {
  let a = seed >>> 0;
  return (n: number): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) % n;
  };
}

const INTERESTING = new TextEncoder().encode('{}[]()"\'$%~<>-=#/*\\\n\r\t .,:?!&|^;`EOT<<-${%{}0123456789e_aé');

function mutate(src: Uint8Array, rand: (n: number) => number): Uint8Array {
  const out = Array.from(src);
  const edits = 1 + rand(8);
  for (let k = 0; k < edits; k++) {
    const at = rand(out.length + 1);
    switch (rand(6)) {
      case 0: // delete a span
        out.splice(at, 1 + rand(20));
        break;
      case 1: // insert syntax characters
        for (let i = rand(4); i >= 0; i--) out.splice(at, 0, INTERESTING[rand(INTERESTING.length)] as number);
        break;
      case 2: // insert random bytes (often invalid UTF-8)
        for (let i = rand(4); i >= 0; i--) out.splice(at, 0, rand(256));
        break;
      case 3: {
        // duplicate a span elsewhere
        const len = rand(60);
        out.splice(rand(out.length + 1), 0, ...out.slice(at, at + len));
        break;
      }
      case 4: // truncate
        out.length = Math.min(out.length, at);
        break;
      default: // replace one byte
        if (at < out.length) out[at] = INTERESTING[rand(INTERESTING.length)] as number;
    }
  }
  return Uint8Array.from(out);
}

function checkDiagnostics(diags: readonly Diagnostic[], size: number): void {
  for (const d of diags) {
    expect(d.severity === 'error' || d.severity === 'warning').toBe(true);
    expect(d.summary.length).toBeGreaterThan(0);
    // The parser's ranges are complete: both ends, each with line, column and byte.
    const start = d.range?.start;
    const end = d.range?.end;
    expect(start?.line).toBeGreaterThanOrEqual(1);
    expect(start?.column).toBeGreaterThanOrEqual(1);
    expect(start?.byte).toBeGreaterThanOrEqual(0);
    expect(end?.byte).toBeGreaterThanOrEqual(start?.byte ?? 0);
    expect(end?.byte).toBeLessThanOrEqual(size);
  }
}

/** Evaluates every attribute the way consumers do, which must not throw either. */
function exercise(body: Body): number {
  let n = 0;
  const visit = (b: Body): void => {
    for (const a of b.attributes) {
      const e: Expression = a.expr;
      evaluateStatic(e);
      staticStringList(e);
      staticMap(e);
      n++;
    }
    for (const blk of b.blocks) visit(blk.body);
  };
  visit(body);
  return n;
}

describe('robustness', () => {
  it('random mutations of every corpus file never throw', () => {
    const rand = prng(20240611);
    let parsed = 0;
    let withErrors = 0;
    for (const name of corpusFiles()) {
      const original = new Uint8Array(readFileSync(join(CORPUS, name)));
      // 75 mutations of each of the 14 corpus files (1050 parses, seed fixed
      // above so that a failure replays); 150 each found nothing more and
      // took twice the time.
      for (let i = 0; i < 75; i++) {
        const input = mutate(original, rand);
        let r: ParseResult | undefined;
        try {
          r = parseHCL(input, name);
          exercise(r.body);
        } catch (e) {
          throw new Error(
            `${name} mutation ${i} threw: ${String(e)}\n--- input ---\n${new TextDecoder().decode(input)}`,
          );
        }
        checkDiagnostics(r.diagnostics, input.length);
        expect(r.diagnostics.some((d) => d.summary === 'Internal parser error')).toBe(false);
        parsed++;
        if (r.diagnostics.length > 0) withErrors++;
      }
    }
    expect(parsed).toBeGreaterThan(1000);
    expect(withErrors).toBeGreaterThan(parsed / 2);
  });

  it('random bytes never throw', () => {
    const rand = prng(7);
    for (let i = 0; i < 300; i++) {
      const input = Uint8Array.from({ length: rand(400) }, () =>
        rand(2) === 0 ? (INTERESTING[rand(INTERESTING.length)] as number) : rand(256),
      );
      const r = parseHCL(input, 'random.bin');
      checkDiagnostics(r.diagnostics, input.length);
      exercise(r.body);
    }
  });

  // A hang guard, not a speed assertion (speed belongs in `npm run bench`):
  // a quadratic path on these 100k-step inputs would not finish within the
  // test's timeout.
  it('finishes on large and pathological inputs', { timeout: 120_000 }, () => {
    const corpus = corpusFiles()
      .filter((f) => f.endsWith('.tf'))
      .map((f) => readFileSync(join(CORPUS, f), 'utf8'))
      .join('\n');
    // Repeated corpus content gives "Attribute redefined" errors; only time matters here.
    const cases: [string, string][] = [
      ['1 MB of real configuration', corpus.repeat(Math.ceil(1_000_000 / corpus.length))],
      ['one 1 MB line of non-ASCII text', `x = "${'é👩‍💻日'.repeat(100_000)}"\n`],
      ['100k attributes', Array.from({ length: 100_000 }, (_, i) => `a${i} = ${i}\n`).join('')],
      ['100k newlines inside brackets', `x = [${'\n'.repeat(100_000)}1${'\n'.repeat(100_000)}]\n`],
      ['100k unclosed interpolations', `x = "${'${'.repeat(100_000)}`],
      ['100k unclosed brackets', '['.repeat(100_000)],
      ['100k-step traversal', `x = a${'.b'.repeat(100_000)}\n`],
      ['100k heredoc lines', `x = <<-EOT\n${'    line ${v}\n'.repeat(100_000)}  EOT\n`],
      ['100k invalid characters', `x = ${'@'.repeat(100_000)}\n`],
      ['100k stray closing braces', '}\n'.repeat(100_000)],
      ['an unterminated block comment', `/*${' '.repeat(1_000_000)}`],
    ];
    for (const [what, src] of cases) {
      const r = parseHCL(src, 'big.tf');
      exercise(r.body);
      expect(r.body, what).toBeDefined();
      checkDiagnostics(r.diagnostics.slice(0, 100), Buffer.byteLength(src));
    }
  });
});
