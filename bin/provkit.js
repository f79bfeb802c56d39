#!/usr/bin/env node
// The installed entry point. It runs the compiled CLI from dist/ (built by
// `npm ci`/`npm install` through the `prepare` script).
import { main } from '../dist/cli/main.js';

process.exitCode = await main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  cwd: process.cwd(),
});
