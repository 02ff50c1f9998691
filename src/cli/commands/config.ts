import type { Command } from 'commander';
import { describeConfig, loadConfig } from '../../config/index.js';

export function registerConfigCommand(program: Command): void {
  program
    .command('config')
    .description('validate the environment and print the resulting configuration (secrets shown as [redacted])')
    .option('--json', 'machine-readable output')
    .action((options: { json?: boolean }) => {
      const config = loadConfig();
      const view = describeConfig(config);
      if (options.json) {
        process.stdout.write(`${JSON.stringify(view)}\n`);
        return;
      }
      process.stdout.write(`configuration is valid${config.usesEmulator ? ' (TAX_API_URL unset: the built-in emulator is used)' : ''}\n`);
      process.stdout.write(`${JSON.stringify(view, null, 2)}\n`);
    });
}
