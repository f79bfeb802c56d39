/**
 * The CLI's side of the source factory (src/sources/from-cli-config.ts,
 * which library users call too): a run's {@link SourceContext} from its IO
 * and global options, and the CLI configuration for the run.
 */
import { homedir } from 'node:os';

import { type CliConfig, hostOSFromNode, loadCliConfig } from '../cliconfig/index.js';
import type { HttpClient } from '../net/index.js';
import type { SignatureSwitches, SourceContext } from '../sources/index.js';
import type { CliIO, GlobalOptions } from './io.js';

/**
 * The factory's context for this run: its flavor, environment and working
 * directory, this machine's OS and home, and OpenTofu's signature switches
 * as the run read them once (src/cli/resources.ts `RunResources.signatures`).
 */
export function sourceContext(
  io: CliIO,
  globals: GlobalOptions,
  http: HttpClient,
  signatures: SignatureSwitches,
): SourceContext {
  return {
    signatures,
    flavor: globals.flavor,
    env: io.env,
    homeDir: io.env['HOME'] ?? homedir(),
    os: hostOSFromNode(process.platform),
    cwd: globals.cwd,
    http,
  };
}

/** The CLI configuration (`TF_CLI_CONFIG_FILE`, `~/.terraformrc`, …) for this run. */
export function loadCliConfigFor(io: CliIO, globals: GlobalOptions): Promise<CliConfig> {
  return loadCliConfig({
    flavor: globals.flavor,
    env: io.env,
    homeDir: io.env['HOME'] ?? homedir(),
    os: hostOSFromNode(process.platform),
    cwd: globals.cwd,
  });
}
