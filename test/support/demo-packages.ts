/**
 * The demo mirror's provider as a MockSource (src/sources/testing.ts) serves
 * it to the installer's unit tests: `registry.example.test/acme/demo` 1.0.0
 * and 1.1.0 for linux_amd64, the mirror's real zips (mirror-fixtures/, whose
 * hashes.json holds their reference hashes), and a module directory that
 * requires it; and the installer's events as lines.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { parsePlatform, parseProviderSource, parseVersion } from '../../src/addresses/index.js';
import type { InstallerEvent } from '../../src/installer/events.js';
import { LOCK_FILE_NAME } from '../../src/lockfile/index.js';
import type { MockPackage } from '../../src/sources/testing.js';

const MIRROR = fileURLToPath(new URL('../../mirror-fixtures/registry.example.test/acme/', import.meta.url));
const reference = JSON.parse(
  readFileSync(fileURLToPath(new URL('../../mirror-fixtures/hashes.json', import.meta.url)), 'utf8'),
) as { packages: Record<string, { zh: string; h1: string }> };

export const DEMO = parseProviderSource('registry.example.test/acme/demo', 'tofu');
export const LINUX = parsePlatform('linux_amd64');

/** The reference `h1:` of demo `version`'s linux_amd64 zip. */
export const h1Of = (version: string): string =>
  reference.packages[`registry.example.test/acme/demo/terraform-provider-demo_${version}_linux_amd64.zip`]!.h1;

/** demo 1.0.0 and 1.1.0 for linux_amd64, as local archives (the mirror's real zips). */
export const demoPackages: MockPackage[] = ['1.0.0', '1.1.0'].map((v) => ({
  provider: DEMO,
  version: parseVersion(v),
  platform: LINUX,
  location: { kind: 'local-archive', path: join(MIRROR, `demo/terraform-provider-demo_${v}_linux_amd64.zip`) },
}));

/** A configuration requiring demo `~> 1.0`. */
export const DEMO_MAIN_TF =
  'terraform {\n  required_providers {\n    demo = {\n      source  = "registry.example.test/acme/demo"\n      version = "~> 1.0"\n    }\n  }\n}\n';

/** The tofu lock file of demo 1.0.0 with its reference `h1:` (`~> 1.0`). */
export const LOCKED_1_0 = `# This file is maintained automatically by "tofu init".
# Manual edits may be lost in future updates.

provider "registry.example.test/acme/demo" {
  version     = "1.0.0"
  constraints = "~> 1.0"
  hashes = [
    "${h1Of('1.0.0')}",
  ]
}
`;

/** `dir` made, holding `main` (default {@link DEMO_MAIN_TF}) and `lock` as its lock file (none when undefined). */
export function demoModuleDir(dir: string, lock?: string, main = DEMO_MAIN_TF): string {
  mkdirSync(dir);
  writeFileSync(join(dir, 'main.tf'), main);
  if (lock !== undefined) writeFileSync(join(dir, LOCK_FILE_NAME), lock);
  return dir;
}

/** One line per installer event, the fields that say what happened (the event lists the tests compare whole). */
export function eventLine(e: InstallerEvent): string {
  switch (e.type) {
    case 'platforms_chosen':
      return `platforms_chosen ${e.origin} ${e.platforms.join(',')}`;
    case 'install_resolving':
      return `install_resolving ${e.provider.toString()} ${e.constraints} locked=${e.locked?.toString() ?? '-'}`;
    case 'provider_selected':
      return `provider_selected ${e.provider.toString()} ${e.version.toString()} (${e.reason})`;
    case 'hashes_obtained':
      return `hashes_obtained ${e.provider.toString()} ${e.platform.toString()} ${e.change}`;
    case 'install_start':
    case 'fetch_queued':
    case 'fetch_start':
    case 'fetch_complete':
      return `${e.type} ${e.provider.toString()} ${e.version.toString()} ${e.platform.toString()}`;
    case 'install_complete':
      return `install_complete ${e.provider.toString()} ${e.version.toString()} ${e.mode} ${e.auth ?? '-'}`;
    case 'warning':
      return `warning ${e.summary}`;
    default:
      return e.type;
  }
}
