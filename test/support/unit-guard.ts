/**
 * Runs before every file of the unit project (vitest.config.ts): a unit test
 * starts no child process and opens no socket, whatever path it takes to one
 * (a library function that spawns a credential helper, a server started by a
 * helper). Each such call throws, naming the rule, instead of the test quietly
 * becoming an end-to-end test that `npm run test:unit` runs. Worker threads
 * (the hash pool) are allowed. test/docs/test-projects.test.ts checks the
 * same rule on the imports, before anything runs.
 */
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { Server, Socket } from 'node:net';

const require = createRequire(import.meta.url);
const RULE =
  'is not for a unit test (CONTRIBUTING.md "How we test"): list the file in E2E_FILES in vitest.config.ts, ' +
  'or pass the function a test double';

function refuse(what: string): never {
  throw new Error(`${what} ${RULE}`);
}

const childProcess = require('node:child_process') as Record<string, unknown>;
for (const name of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork']) {
  childProcess[name] = (): never => refuse(`child_process.${name}()`);
}

Server.prototype.listen = function listen(): never {
  refuse('Starting a server');
};
Socket.prototype.connect = function connect(): never {
  refuse('Opening a network connection');
};

// ES module imports of node:child_process see the replacements too.
syncBuiltinESMExports();
