/**
 * `provkit version` (also `-v`, `-version`, `--version`, anywhere on the
 * command line, as terraform's main.go treats them): terraform 1.11.4's
 * output with provkit's name and version (test/fixtures/terraform-version/):
 *
 *     provkit v0.1.0
 *     on linux_amd64
 *     + provider registry.terraform.io/hashicorp/null v3.2.0
 *
 * the `+ provider` lines being the selections of the working directory's
 * lock file, as terraform lists them. With `-json`, terraform's object
 * (`command/version.go` `VersionOutput`, `json.MarshalIndent` with two
 * spaces) with provkit's keys: `provkit_version`, `platform`,
 * `provider_selections`, `provkit_outdated` (always false: provkit looks up
 * no newer release, as terraform with `CHECKPOINT_DISABLE`).
 */
import { join } from 'node:path';

import { currentPlatform, DEFAULT_FLAVOR } from '../../addresses/index.js';
import { goJSONString, goMarshalIndent } from '../../go/index.js';
import { loadLockFile, LOCK_FILE_NAME } from '../../lockfile/index.js';
import type { CliIO, GlobalOptions } from '../io.js';
import { VERSION } from '../version.js';
import { hasErrors } from '../../hcl/index.js';

/** The lock file's selections, address → version, sorted as terraform lists them; none when it is missing or invalid. */
async function selections(cwd: string, flavor: GlobalOptions['flavor']): Promise<Array<[string, string]>> {
  const lock = await loadLockFile(join(cwd, LOCK_FILE_NAME), flavor, LOCK_FILE_NAME);
  if (hasErrors(lock.diagnostics)) return [];
  return lock.locks
    .all()
    .map((l): [string, string] => [l.provider.toString(), l.version.toString()])
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

export async function versionCommand(io: CliIO, cwd: string, json: boolean, flavor = DEFAULT_FLAVOR): Promise<number> {
  const platform = currentPlatform().toString();
  const selected = await selections(cwd, flavor);
  if (json) {
    io.stdout.write(
      `{\n  "provkit_version": ${goJSONString(VERSION)},\n  "platform": ${goJSONString(platform)},\n` +
        `  "provider_selections": ${goMarshalIndent(Object.fromEntries(selected), '  ')},\n  "provkit_outdated": false\n}\n`,
    );
    return 0;
  }
  io.stdout.write(
    `provkit v${VERSION}\non ${platform}\n${selected.map(([p, v]) => `+ provider ${p} v${v}\n`).join('')}`,
  );
  return 0;
}
