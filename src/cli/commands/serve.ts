import type { Command } from 'commander';
import { boot } from '../../runtime/boot.js';
import { resolveRedis } from '../../runtime/redis.js';
import { startServe } from '../../runtime/serve.js';

export function registerServeCommand(program: Command): void {
  program
    .command('serve')
    .description('run the webhook server: verify, normalise and queue what the platforms and the ERP send')
    .action(async () => {
      const { config, settings, logger, lifecycle } = boot('serve');
      const redisTarget = await resolveRedis(config, config.dataDir, logger, lifecycle);
      await startServe({ config, settings, redisTarget, logger, lifecycle });
    });
}
