// Runs before every test file (vitest setupFiles). Hermetic defaults for the
// provkit processes tests spawn with process.env: no hash store in the user's
// cache directory (a second test run would otherwise find the first run's
// hashes and skip downloads the tests expect). Tests of the store set
// PROVKIT_HASH_STORE themselves.
process.env['PROVKIT_HASH_STORE'] = 'off';
