/** provkit's version, as `provkit version` and the `-json` version message report it. */
export const VERSION = '0.1.0';
