import type { Command } from 'commander';
import { describeConfig, redacted } from '../../config/index.js';
import { boot } from '../../daemon/boot.js';

export function registerConfigCommand(program: Command): void {
  program
    .command('config')
    .description('validate the environment, the settings file and the connections file, and print the resulting configuration (secrets shown as [redacted])')
    .option('--json', 'machine-readable output')
    .action(async (options: { json?: boolean }) => {
      const { config, connections, lifecycle } = boot('config', { logToStderr: true });
      try {
        const view = { ...describeConfig(config), connections: connections.list.map(redacted) };
        if (options.json) {
          process.stdout.write(`${JSON.stringify(view)}\n`);
          return;
        }
        process.stdout.write(`configuration is valid${config.usesEmulator ? ' (TAX_API_URL unset: the built-in emulator is used)' : ''}\n`);
        process.stdout.write(`${JSON.stringify(view, null, 2)}\n`);
      } finally {
        await lifecycle.shutdown('config printed');
      }
    });
}
