// The webhook server alone (`node dist/workers/serve.js [--accept-source-change]`), e.g. one container per role.
import { exitWith } from '../src/cli/exit.js';
import { runServe } from '../src/daemon/entry.js';

runServe({ acceptSourceChange: process.argv.includes('--accept-source-change') }).catch(exitWith);
