#!/usr/bin/env node
// The installed entry point. It runs the compiled CLI from dist/ (built by
// `npm ci`/`npm install` through the `prepare` script).
//
// Signals: commands that change files (lock, mirror, install) install their
// own SIGINT/SIGTERM handlers for the time they run and abort cleanly. This
// process-wide handler covers the moments around them: before a command's
// handlers exist it exits at once with 130/143 (nothing has been written
// yet), and after the command finished it ignores the signal, so a late
// signal cannot kill the process while it shuts down with everything already
// committed (a run that ended 0 stays 0). Keeping one listener at all times
// also keeps Node from resetting the signals to their default action between
// the command's handlers coming and going.
import { main } from '../dist/cli/main.js';

let finished = false;
for (const name of ['SIGINT', 'SIGTERM']) {
  process.on(name, () => {
    if (finished) return;
    // A command's own handler is running the interrupt: leave it to that one.
    if (process.listenerCount(name) > 1) return;
    process.exit(name === 'SIGINT' ? 130 : 143);
  });
}

process.exitCode = await main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  cwd: process.cwd(),
});
finished = true;
