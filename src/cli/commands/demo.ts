import type { Command } from 'commander';
import { loadConfig } from '../../config/index.js';
import { loadSettings } from '../../config/settings.js';
import { defaultDaemonUrl, demoSecrets, demoSources, renderDemo, runDemo } from '../../runtime/demo.js';

export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description('send signed sample webhooks of every platform to a running `taxsync start` (built-in emulator only) and show what arrived')
    .option('--url <url>', 'the daemon (default: http://127.0.0.1:<TAXSYNC_HTTP_PORT>)')
    .option('--json', 'machine-readable output')
    .action(async (options: { url?: string; json?: boolean }) => {
      const config = loadConfig();
      const result = await runDemo({
        url: options.url ?? defaultDaemonUrl(config),
        secrets: demoSecrets(config),
        sources: demoSources(loadSettings(config.configFile)),
        ...(options.json ? {} : { onProgress: (line: string) => process.stdout.write(`${line}\n`) }),
      });
      process.stdout.write(options.json ? `${JSON.stringify(result)}\n` : `${renderDemo(result)}\n`);
      if (result.reason !== undefined) throw new Error(result.reason);
    });
}
