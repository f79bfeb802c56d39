// TF_TOKEN_<host> variables (docs/reference.md §7 item 103).
import { describe, expect, it } from 'vitest';

import { hostnameForComparison } from '../../src/addresses/index.js';
import { hostnameFromTokenEnvName, tokenEnvVarName, tokensFromEnv } from '../../src/cliconfig/index.js';

describe('TF_TOKEN names', () => {
  it.each([
    ['app.terraform.io', 'TF_TOKEN_app_terraform_io'],
    ['registry-1.example.com', 'TF_TOKEN_registry__1_example_com'],
    ['café.fr', 'TF_TOKEN_xn____caf__dma_fr'],
    ['Example.COM:443', 'TF_TOKEN_example_com'],
    ['localhost:28443', 'TF_TOKEN_localhost:28443'],
  ])('%s is read from %s', (host, name) => {
    expect(tokenEnvVarName(host)).toBe(name);
    expect(hostnameFromTokenEnvName(name)).toBe(hostnameForComparison(host));
  });

  it('decodes __ to -, _ to ., Unicode or punycode, and ignores what is not a hostname', () => {
    expect(hostnameFromTokenEnvName('TF_TOKEN_app_terraform_io')).toBe('app.terraform.io');
    expect(hostnameFromTokenEnvName('TF_TOKEN_registry__1_example_com')).toBe('registry-1.example.com');
    expect(hostnameFromTokenEnvName('TF_TOKEN_xn____caf__dma_fr')).toBe('xn--caf-dma.fr');
    expect(hostnameFromTokenEnvName('TF_TOKEN_café_fr')).toBe('xn--caf-dma.fr');
    expect(hostnameFromTokenEnvName('TF_TOKEN_xn--caf-dma.fr')).toBe('xn--caf-dma.fr');
    // A port cannot be written with underscores (confirmed with terraform): this is the host "localhost.28443".
    expect(hostnameFromTokenEnvName('TF_TOKEN_localhost_28443')).toBe('localhost.28443');
    expect(hostnameFromTokenEnvName('TF_TOKEN_localhost:28443')).toBe('localhost:28443');
    expect(hostnameFromTokenEnvName('TF_TOKEN_')).toBeUndefined();
    expect(hostnameFromTokenEnvName('TF_TOKEN_a__')).toBeUndefined();
    expect(hostnameFromTokenEnvName('OTHER_app')).toBeUndefined();
  });

  it('collects every token of an environment', () => {
    const m = tokensFromEnv({
      TF_TOKEN_app_terraform_io: 'a',
      TF_TOKEN_xn____caf__dma_fr: 'b',
      PATH: '/bin',
      TF_TOKEN_bad__: 'x',
    });
    expect([...m]).toEqual([
      ['app.terraform.io', 'a'],
      ['xn--caf-dma.fr', 'b'],
    ]);
  });
});
