import { describe, expect, it } from 'vitest';

import { parsePlatform, parseProviderSource, parseVersion } from '../../src/addresses/index.js';
import { goMarshalIndent } from '../../src/go/index.js';
import {
  mirrorIndexJSON,
  mirrorVersionJSON,
  packedFilePath,
  parseMirrorRequest,
  unpackedDirPath,
} from '../../src/layout/index.js';

describe('layout', () => {
  const p = parseProviderSource('Café.Example:8443/Acme/Foo', 'tofu');
  const v = parseVersion('1.2.0');
  const linux = parsePlatform('linux_amd64');

  it('builds packed and unpacked paths with the display host and its port', () => {
    expect(packedFilePath(p, v, linux)).toBe('café.example:8443/acme/foo/terraform-provider-foo_1.2.0_linux_amd64.zip');
    expect(unpackedDirPath(p, v, linux)).toBe('café.example:8443/acme/foo/1.2.0/linux_amd64');
  });

  it('writes VERSION.json as Go json.MarshalIndent does (docs/reference.md §6.2 item 94)', () => {
    const doc = mirrorVersionJSON([
      {
        platform: linux,
        hashes: ['h1:gVy74G+kFVxek3lPnqbiqZVDSn+rxQZ1txTYFFmHlLs='],
        url: 'terraform-provider-foo_1.2.0_linux_amd64.zip',
      },
      {
        platform: parsePlatform('darwin_arm64'),
        hashes: ['h1:EvRowBnYfI0AhnNtBr9IhsSwN/kMCCnjpcZE+rpH7tQ='],
        url: 'terraform-provider-foo_1.2.0_darwin_arm64.zip',
      },
    ]);
    expect(doc).toBe(`{
  "archives": {
    "darwin_arm64": {
      "hashes": [
        "h1:EvRowBnYfI0AhnNtBr9IhsSwN/kMCCnjpcZE+rpH7tQ="
      ],
      "url": "terraform-provider-foo_1.2.0_darwin_arm64.zip"
    },
    "linux_amd64": {
      "hashes": [
        "h1:gVy74G+kFVxek3lPnqbiqZVDSn+rxQZ1txTYFFmHlLs="
      ],
      "url": "terraform-provider-foo_1.2.0_linux_amd64.zip"
    }
  }
}`);
  });

  it('writes index.json with versions as sorted map keys and empty objects', () => {
    expect(mirrorIndexJSON([parseVersion('1.10.0'), parseVersion('1.9.0')])).toBe(
      '{\n  "versions": {\n    "1.10.0": {},\n    "1.9.0": {}\n  }\n}',
    );
  });

  it('escapes like Go: HTML characters and line separators', () => {
    expect(goMarshalIndent({ u: 'a<b>&c\u2028"\\\n' })).toBe(
      '{\n  "u": "a\\u003cb\\u003e\\u0026c\\u2028\\"\\\\\\n"\n}',
    );
    expect(goMarshalIndent([])).toBe('[]');
  });
});

describe('a network mirror request names one of the three documents, or nothing', () => {
  const named = (file: string, host = 'registry.example.com'): string | undefined => {
    const r = parseMirrorRequest(host, 'acme', 'demo', file);
    if (r === undefined) return undefined;
    const base = `${r.kind} ${r.provider.toString()}`;
    if (r.kind === 'index') return base;
    if (r.kind === 'version') return `${base} ${r.version.toString()}`;
    return `${base} ${r.version.toString()} ${r.platform.toString()}`;
  };
  it('index.json, VERSION.json in canonical form, and a packed archive of the type', () => {
    expect(named('index.json')).toBe('index registry.example.com/acme/demo');
    expect(named('1.2.0.json')).toBe('version registry.example.com/acme/demo 1.2.0');
    expect(named('terraform-provider-demo_1.2.0_linux_amd64.zip')).toBe(
      'archive registry.example.com/acme/demo 1.2.0 linux_amd64',
    );
    expect(named('index.json', 'REGISTRY.example.com')).toBe('index registry.example.com/acme/demo');
  });
  it('anything else is undefined: a non-canonical version, another type, an invalid host or name', () => {
    expect(named('1.2.json')).toBeUndefined();
    expect(named('terraform-provider-other_1.2.0_linux_amd64.zip')).toBeUndefined();
    expect(named('terraform-provider-demo_1.2.0_linux_amd64.tar.gz')).toBeUndefined();
    expect(named('index.json', 'bad host')).toBeUndefined();
    expect(parseMirrorRequest('registry.example.com', 'ac/me', 'demo', 'index.json')).toBeUndefined();
  });
});
