import type { Command } from 'commander';
import { createRedis, whenReady } from '../../queue/connection.js';
import { boot } from '../../daemon/boot.js';
import { demoConnections, runDemo } from '../../demo/run.js';
import { withDevSecrets } from '../../daemon/connectors.js';
import { renderDemo } from '../../demo/render.js';
import { clientRedis, requireDaemon } from '../../daemon/find-daemon.js';

export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description('send signed sample webhooks to every connection of the running `taxsync start` (built-in emulator only) and show what the tax engine and the VAT service hold')
    .option('--url <url>', "the daemon (default: the running daemon of this folder, from .taxsync/daemon.json)")
    .option('--json', 'machine-readable output')
    .action(async (options: { url?: string; json?: boolean }) => {
      const booted = boot('demo', { logToStderr: true });
      const { config, settings, connections, lifecycle } = booted;
      try {
        const url = options.url ?? (await requireDaemon(config)).http_url;
        const redis = createRedis(await clientRedis(booted), 'producer');
        lifecycle.onShutdown('redis', () => {
          redis.disconnect();
          return Promise.resolve();
        });
        await whenReady(redis);
        const result = await runDemo({
          url,
          // The connections as `taxsync start` takes webhooks for them: the development secrets where none is set.
          connections: demoConnections(withDevSecrets(connections, true)),
          redis,
          prefix: config.redis.prefix,
          vat: settings.vat,
          ...(options.json ? {} : { onProgress: (line: string) => process.stdout.write(`${line}\n`) }),
        });
        process.stdout.write(options.json ? `${JSON.stringify(result)}\n` : `${renderDemo(result)}\n`);
        if (result.reason !== undefined) throw new Error(result.reason);
      } finally {
        await lifecycle.shutdown('demo finished');
      }
    });
}
