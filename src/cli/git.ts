/**
 * What `provkit audit -base=REV` asks of git: the commit a revision names
 * and a file's bytes at it (`git rev-parse`, `git show REV:./PATH`). git is
 * run as a child process with a bounded output; its failures are
 * `GIT_FAILED` errors naming the revision and the file.
 */
import { execFile } from 'node:child_process';
import { basename, dirname } from 'node:path';

import { ErrorCode, ProvkitError } from '../errors.js';

/** A lock file is small; more than this from git is not one. */
const MAX_BYTES = 16 * 1024 * 1024;

function git(args: readonly string[], cwd: string): Promise<{ code: number; stdout: Buffer; stderr: string }> {
  return new Promise((resolveRun, reject) => {
    execFile(
      'git',
      [...args],
      { cwd, encoding: 'buffer', maxBuffer: MAX_BYTES, env: { ...process.env, GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' } },
      (err, stdout, stderr) => {
        const spawnFailed = err !== null && typeof (err as { code?: unknown }).code === 'string';
        if (spawnFailed) {
          reject(
            new ProvkitError(ErrorCode.GIT_FAILED, `git could not be run in ${cwd}: is it installed?`, {
              summary: 'Cannot run git',
              cause: err,
            }),
          );
          return;
        }
        const code = err === null ? 0 : typeof err.code === 'number' ? err.code : 1;
        resolveRun({ code, stdout, stderr: stderr.toString('utf8').trim() });
      },
    );
  });
}

/**
 * The commit `rev` names, seen from `cwd`.
 *
 * @throws {ProvkitError} `GIT_FAILED`: not a repository, or no such revision.
 */
export async function resolveRevision(rev: string, cwd: string): Promise<string> {
  const unknown = (why: string): ProvkitError =>
    new ProvkitError(ErrorCode.GIT_FAILED, `-base=${rev}: ${why}`, {
      summary: 'Unknown base revision',
      hint: 'Give a commit, branch or tag of the repository the working directory is in (e.g. -base=origin/main).',
    });
  // Never an option: `-base=--output=x` must not reach git as one.
  if (rev === '' || rev.startsWith('-')) throw unknown('not a revision');
  const r = await git(['rev-parse', '--verify', '--quiet', '--end-of-options', `${rev}^{commit}`], cwd);
  if (r.code !== 0) throw unknown(r.stderr === '' ? 'git knows no such commit here' : r.stderr);
  return r.stdout.toString('utf8').trim();
}

/**
 * The bytes of `path` (a file in the working tree) as commit `commit` had
 * it; undefined when the commit has no such file.
 *
 * @throws {ProvkitError} `GIT_FAILED` for any other failure.
 */
export async function fileAtRevision(commit: string, path: string): Promise<Buffer | undefined> {
  const cwd = dirname(path);
  const r = await git(['show', `${commit}:./${basename(path)}`], cwd);
  if (r.code === 0) return r.stdout;
  if (/does not exist in|exists on disk, but not in/.test(r.stderr)) return undefined;
  throw new ProvkitError(ErrorCode.GIT_FAILED, `git show ${commit.slice(0, 12)}:${path} failed: ${r.stderr}`, {
    summary: 'Cannot read the base lock file',
    file: path,
  });
}
