#!/usr/bin/env node
import { buildProgram } from './program.js';
import { exitWith } from './exit.js';

// The bin entry: everything else lives in program.ts so tests can run commands in-process.
buildProgram()
  .parseAsync(process.argv)
  .catch((error: unknown) => exitWith(error));
