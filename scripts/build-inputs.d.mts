// Types of scripts/build-inputs.mjs (a plain Node script: scripts/bundle.mjs runs it without TypeScript).

/** The record's path, relative to the repository root. */
export declare const RECORD: string;
/** The Node and V8 the build runs on (`node vX v8 Y`). */
export declare function buildRuntime(): string;
/** The build's inputs as they are now under `root`: relative path → SHA-256 (hex). */
export declare function buildInputs(root: string): Record<string, string>;
/** The record of a build of `root` as it is now. */
export declare function buildRecord(root: string): { inputs: Record<string, string>; runtime: string };
/** The record of the last finished build under `root`, or undefined. */
export declare function recordedBuild(root: string): { inputs: Record<string, string>; runtime?: string } | undefined;
/** Paths whose content differs between two records, sorted; only those `only` accepts when given. */
export declare function changedInputs(
  built: Record<string, string>,
  now: Record<string, string>,
  only?: (path: string) => boolean,
): string[];
/** Why dist/ under `root` is not the build of its files as they are now (and, with `runtime`, of this Node), or undefined. */
export declare function staleDist(
  root: string,
  options?: { readonly only?: (path: string) => boolean; readonly runtime?: boolean },
): string | undefined;
