// Workers alone (`node dist/workers/work.js [--queue customers,transactions] [--accept-source-change]`): scale out on one Redis.
import { exitWith } from '../src/cli/exit.js';
import { runWork } from '../src/daemon/entry.js';
import { parseQueues } from '../src/daemon/work.js';

const at = process.argv.indexOf('--queue');
Promise.resolve()
  .then(() =>
    runWork({
      acceptSourceChange: process.argv.includes('--accept-source-change'),
      ...(at < 0 ? {} : { queues: parseQueues(process.argv[at + 1] ?? '') }),
    }),
  )
  .catch(exitWith);
