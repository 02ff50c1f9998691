import type { Command } from 'commander';
import { runStart, runWork } from '../../daemon/entry.js';
import { WORKABLE_QUEUES, parseQueues, type WorkableQueue } from '../../daemon/work.js';

const ACCEPT_SOURCE_CHANGE = 'start although the source or prefix of a connection changed (every record it sends is then a new record)';

export function registerDaemonCommands(program: Command): void {
  program
    .command('start')
    .description('run everything in one process: the webhook server and all workers (zero-config: local Redis, emulator, dev secrets)')
    .option('--accept-source-change', ACCEPT_SOURCE_CHANGE)
    .action((options: { acceptSourceChange?: boolean }) => runStart(options));

  program
    .command('work')
    .description('run workers only (scale out: several processes on one Redis)')
    .option('--queue <names>', `comma-separated queues (${WORKABLE_QUEUES.join(', ')})`, parseQueues)
    .option('--accept-source-change', ACCEPT_SOURCE_CHANGE)
    .action((options: { queue?: WorkableQueue[]; acceptSourceChange?: boolean }) =>
      runWork({ ...(options.queue ? { queues: options.queue } : {}), ...(options.acceptSourceChange ? { acceptSourceChange: true } : {}) }),
    );
}
