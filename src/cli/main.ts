#!/usr/bin/env node
import { buildProgram } from './program.js';
import { exitWith } from './exit.js';

// The bin entry: everything else lives in program.ts so tests can run commands in-process.
// `taxsync dlq export | head`: a reader that went away is not an error of ours.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});
buildProgram()
  .parseAsync(process.argv)
  .catch((error: unknown) => exitWith(error));
