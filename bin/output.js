// Standard output and error for bin/provkit.js, written with write(2) when
// they are a pipe, a socket or a regular file.
//
// Why (issue 13, tiny lock ≤ 1.6 × `node -e 0`; bench/PROFILE.md "Stop 26"):
// Node gives a piped stdout a net.Socket. Creating it loads node:net and its
// stream machinery, 5-8 ms of a ~150 ms tiny lock on the benchmark machine,
// for what Linux writes at once anyway while the pipe has room (libuv writes
// immediately and queues only what does not fit; a file Node writes
// synchronously). Writing the bytes with fs.writeSync keeps that: the same
// bytes, in the same order, written before write() returns. (A shell's `|`
// is a pipe; a program that spawns provkit with Node's or Python's pipes
// gives it a socket pair or a pipe; CI runners give either.)
//
// Where Node's stream stays: a terminal (its width and colours come from
// tty.WriteStream), /dev/null and other devices. A pipe or a socket hands
// over to Node's stream for good
// - after its first 16 KiB (PIPE_BUDGET): a blocking write to a full pipe
//   would stop the whole process (and its signal handling: the event loop
//   waits in write(2)) until the reader reads, where Node's stream queues
//   the output and the run goes on. Both writers' budgets together stay
//   below the smallest pipe buffer Linux gives by default (64 KiB), so a
//   direct write never waits for a reader that has read nothing; a run's
//   human output is far below that, a long -json stream is not;
// - when a write meets EAGAIN (a parent shared the pipe with O_NONBLOCK).
// Node's stream then writes what is left in order, so nothing is reordered
// or lost.
//
// Errors are reported as a stream reports them: an 'error' event on the next
// tick (EPIPE when the reader went away, ENOSPC on a full disk, …), after
// which writes are dropped (src/cli/main.ts watchOutput turns them into exit
// 141 or "cannot write to standard output").
//
// CommonJS, no dependencies: this runs before anything of provkit is loaded.
'use strict';

const { fstatSync, writeSync } = require('node:fs');

/** Bytes a pipe or socket takes directly before Node's stream takes over (see above). */
const PIPE_BUDGET = 16 * 1024;

/**
 * A writer for `fd` (1 or 2): direct when it is a pipe, a socket or a regular file,
 * else `stream()` (process.stdout or process.stderr, created only then).
 * Either way it has write(text), on/off('error'), isTTY and columns as
 * src/cli/io.ts CliIO asks; {@link flushed} waits for what was written.
 */
function outputFor(fd, stream) {
  let budget;
  try {
    const st = fstatSync(fd);
    budget = st.isFile() ? Infinity : st.isFIFO() || st.isSocket() ? PIPE_BUDGET : 0;
  } catch {
    budget = 0;
  }
  if (budget === 0) return stream();
  return new DirectWriter(fd, stream, budget);
}

/** Settles once everything written through `writer` (one {@link outputFor} gave) has left the process. */
function flushed(writer) {
  return writer instanceof DirectWriter ? writer.flushed() : streamFlushed(writer);
}

/** {@link flushed} for Node's own stream: an empty write's callback runs once everything before it is written. */
function streamFlushed(s) {
  return new Promise((resolve) => (s.destroyed ? resolve() : s.write('', () => resolve())));
}

class DirectWriter {
  constructor(fd, stream, budget) {
    this.fd = fd;
    this.stream = stream;
    /** Bytes still to be written directly (Infinity for a file). */
    this.budget = budget;
    /** Node's stream, once the budget is spent or a write met EAGAIN. */
    this.fallback = undefined;
    /** The first write error; later writes are dropped. */
    this.failed = undefined;
    this.listeners = [];
    this.isTTY = undefined;
    this.columns = undefined;
  }

  write(text) {
    if (this.failed) return false;
    if (this.fallback) return this.fallback.write(text);
    const bytes = Buffer.from(text, 'utf8');
    if (bytes.length > this.budget) return this.handOver(bytes);
    this.budget -= bytes.length;
    let at = 0;
    while (at < bytes.length) {
      try {
        at += writeSync(this.fd, bytes, at, bytes.length - at);
      } catch (err) {
        if (err && err.code === 'EAGAIN') return this.handOver(bytes.subarray(at));
        if (err && err.code === 'EINTR') continue;
        this.failed = err;
        process.nextTick(() => {
          for (const l of this.listeners.slice()) l(err);
        });
        return false;
      }
    }
    return true;
  }

  /** From now on Node's stream writes, starting with `rest`. */
  handOver(rest) {
    this.fallback = this.stream();
    for (const l of this.listeners) this.fallback.on('error', l);
    return this.fallback.write(rest);
  }

  on(event, listener) {
    if (event === 'error') {
      this.listeners.push(listener);
      this.fallback?.on('error', listener);
    }
    return this;
  }

  off(event, listener) {
    if (event === 'error') {
      const i = this.listeners.indexOf(listener);
      if (i >= 0) this.listeners.splice(i, 1);
      this.fallback?.off('error', listener);
    }
    return this;
  }

  /** Everything is written when write() returns, unless Node's stream took over. */
  flushed() {
    return this.fallback ? streamFlushed(this.fallback) : Promise.resolve();
  }
}

module.exports = { outputFor, flushed, PIPE_BUDGET };
