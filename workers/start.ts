// Everything in one process (`node dist/workers/start.js [--accept-source-change]`): webhooks and all workers.
import { exitWith } from '../src/cli/exit.js';
import { runStart } from '../src/daemon/entry.js';

runStart({ acceptSourceChange: process.argv.includes('--accept-source-change') }).catch(exitWith);
