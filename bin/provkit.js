#!/usr/bin/env node
// The installed entry point. It runs the compiled CLI from dist/ (built by
// `npm ci`/`npm install` through the `prepare` script), bundled when the
// bundle is there.
//
// Signals: commands that change files (lock, mirror, install, bundle) install
// their own SIGINT/SIGTERM/SIGHUP handlers for the time they run and abort
// cleanly. This process-wide handler covers the moments around them: before a
// command's handlers exist it exits at once with 130/143/129 (nothing has
// been written yet; registered temporary paths are removed on the way out,
// src/fs/cleanup.ts), and after the command finished it ignores the signal,
// so a late signal cannot kill the process while it shuts down with
// everything already committed (a run that ended 0 stays 0). Keeping one
// listener at all times also keeps Node from resetting the signals to their
// default action between the command's handlers coming and going.
//
// Errors: whatever reaches this file ends as one `Error: …` line and exit 1,
// never a stack trace. When the reader of stdout went away (`provkit … |
// head -1`), the run stops quietly and the process ends by SIGPIPE, as
// terraform does (exit status 141 in a shell).
'use strict';

// CommonJS (bin/package.json): see bin/load-cli.js for why.
const { loadCli } = require('./load-cli.js');
const { outputFor, flushed } = require('./output.js');

// stdout and stderr: written directly when they are pipes, sockets or files, Node's
// streams otherwise (bin/output.js).
const stdout = outputFor(1, () => process.stdout);
const stderr = outputFor(2, () => process.stderr);

// The CLI module (src/cli/main.ts), once loaded.
let cli;
// Exit status 141, as a shell shows a death by SIGPIPE (src/cli/io.ts EXIT_OUTPUT_CLOSED).
const EXIT_SIGPIPE = 141;

const SIGNAL_EXIT = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 };
let finished = false;
for (const name of Object.keys(SIGNAL_EXIT)) {
  process.on(name, () => {
    if (finished) return;
    // A command's own handler is running the interrupt: leave it to that one.
    if (process.listenerCount(name) > 1) return;
    process.exit(SIGNAL_EXIT[name]);
  });
}

/** Ends the process by SIGPIPE (its default action restored), after removing temporary paths. */
function dieOfSigpipe() {
  cli?.removeRegisteredNow();
  // Node ignores SIGPIPE; adding and removing a listener restores the default action.
  process.on('SIGPIPE', () => undefined);
  process.removeAllListeners('SIGPIPE');
  process.kill(process.pid, 'SIGPIPE');
  // Where the signal cannot end it: the status a shell would show.
  setTimeout(() => process.exit(EXIT_SIGPIPE), 1000).unref();
}

// A write to a closed stdout/stderr after the command returned (the final
// flush below) must not become an uncaught 'error' event.
let outputClosed = false;
for (const stream of [stdout, stderr]) {
  stream.on('error', (err) => {
    if (err?.code === 'EPIPE') outputClosed = true;
  });
}

function fatal(err) {
  if (err?.code === 'EPIPE' && outputClosed) {
    dieOfSigpipe();
    return;
  }
  try {
    stderr.write(`Error: ${cli ? cli.describeError(err) : String(err?.message ?? err)}\n`);
  } finally {
    process.exit(1);
  }
}
process.on('uncaughtException', fatal);
process.on('unhandledRejection', fatal);

// A run whose work is still pending when the event loop empties (a promise
// nothing will ever settle) would end with Node's exit 13 and no message.
// That is a provkit bug; the user gets a diagnostic and exit 1 instead.
let settled = false;
process.on('beforeExit', () => {
  if (settled) return;
  stderr.write(
    'Error: internal error: provkit stopped with work still pending (nothing left to wait for); please report this with the command line\n',
  );
  process.exit(1);
});

async function run() {
  cli = (await loadCli()).cli;
  const { main, EXIT_OUTPUT_CLOSED } = cli;
  const code = await main(process.argv.slice(2), {
    stdout,
    stderr,
    env: process.env,
    cwd: process.cwd(),
  });
  finished = true;
  settled = true;
  if (code === EXIT_OUTPUT_CLOSED) {
    dieOfSigpipe();
  } else {
    process.exitCode = code;
    // Exit now rather than when the event loop has drained: a signal that
    // arrives while Node tears the process down (its signal watchers already
    // closed) kills it with the default action, and a run that committed
    // everything would report 130/143. The output is flushed first (pipes are
    // asynchronous on some platforms).
    // At most 2 s: a stuck stream must not keep a finished command from exiting.
    let timer;
    await Promise.race([
      Promise.all([flushed(stdout), flushed(stderr)]),
      new Promise((resolve) => (timer = setTimeout(resolve, 2000))),
    ]);
    clearTimeout(timer);
    // A write that failed while the output was flushed reports its 'error'
    // on a later tick: wait one turn for it.
    await new Promise((resolve) => setImmediate(resolve));
    // The reader of stdout or stderr went away with output still to come
    // (`provkit hash … | head -1` after the command returned): the same end
    // as when main() sees it, a death by SIGPIPE, as terraform's.
    if (outputClosed) {
      dieOfSigpipe();
      return;
    }
    process.exit(code);
  }
}

run().catch(fatal);
