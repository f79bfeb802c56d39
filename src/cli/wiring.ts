/**
 * Builds the concrete sources from settings: the one place that names them
 * (house style: a single factory maps configuration to sources).
 */
import type { HttpClient } from '../net/index.js';
import { ErrorCode, ProvkitError } from '../errors.js';
import type { Source } from '../sources/index.js';
import type { CliIO, GlobalOptions } from './io.js';

/** The origin-registry source (provider registry protocol v1). */
export function registrySourceFor(_io: CliIO, _globals: GlobalOptions, _http: HttpClient): Source {
  throw new ProvkitError(ErrorCode.USAGE, 'registry source: not wired yet');
}
