import type { Command } from 'commander';
import { boot } from '../../daemon/boot.js';
import { resolveRedis } from '../../daemon/redis.js';
import { webhookSecrets } from '../../daemon/connectors.js';
import { guardSources } from '../../daemon/guard.js';
import { startOrStop } from '../../daemon/lifecycle.js';

export function registerServeCommand(program: Command): void {
  program
    .command('serve')
    .description('run the webhook server: verify, normalise and queue what the platforms and the ERP send')
    .option('--accept-source-change', 'start although a connector source changed (every record it sends is then a new record)')
    .action(async (options: { acceptSourceChange?: boolean }) => {
      const { config, settings, logger, lifecycle } = boot('serve');
      await startOrStop(lifecycle, 'serve', async () => {
        const redisTarget = await resolveRedis(config, config.dataDir, logger, lifecycle);
        const secrets = webhookSecrets(config, false);
        await guardSources(config, settings, redisTarget, secrets, options.acceptSourceChange === true);
        const { startServe } = await import('../../daemon/serve.js');
        await startServe({ config, settings, redisTarget, logger, lifecycle, secrets });
      });
    });
}
