import type { Command } from 'commander';
import { runServe } from '../../daemon/entry.js';

export function registerServeCommand(program: Command): void {
  program
    .command('serve')
    .description('run the webhook server: verify, normalise and queue what the platforms and the ERP send')
    .option('--accept-source-change', 'start although the source or prefix of a connection changed (every record it sends is then a new record)')
    .action((options: { acceptSourceChange?: boolean }) => runServe(options));
}
