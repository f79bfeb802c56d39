// Types of scripts/build-inputs.mjs (a plain Node script: scripts/bundle.mjs runs it without TypeScript).

/** The record's path, relative to the repository root. */
export declare const RECORD: string;
/** The build's inputs as they are now under `root`: relative path → SHA-256 (hex). */
export declare function buildInputs(root: string): Record<string, string>;
/** The inputs recorded by the last finished build under `root`, or undefined. */
export declare function recordedInputs(root: string): Record<string, string> | undefined;
/** Paths whose content differs between two records, sorted; only those `only` accepts when given. */
export declare function changedInputs(
  built: Record<string, string>,
  now: Record<string, string>,
  only?: (path: string) => boolean,
): string[];
