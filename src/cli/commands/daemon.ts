import type { Command } from 'commander';
import { boot } from '../../runtime/boot.js';
import { connectApi } from '../../runtime/api.js';
import { DEV_SECRETS, webhookSecrets } from '../../runtime/connectors.js';
import { guardSources } from '../../runtime/guard.js';
import { listenError, startOrStop } from '../../runtime/lifecycle.js';
import { resolveRedis } from '../../runtime/redis.js';
import { serveMetrics } from '../../runtime/metrics.js';
import { createMetrics } from '../../observability/metrics.js';
import { WORKABLE_QUEUES, startWork, type WorkableQueue } from '../../runtime/work.js';

function parseQueues(value: string): WorkableQueue[] {
  const names = value.split(',').map((s) => s.trim());
  const unknown = names.filter((n) => !(WORKABLE_QUEUES as readonly string[]).includes(n));
  if (unknown.length > 0) throw new Error(`unknown queue ${unknown.join(', ')}: choose from ${WORKABLE_QUEUES.join(', ')}`);
  return names as WorkableQueue[];
}

export function registerDaemonCommands(program: Command): void {
  program
    .command('start')
    .description('run everything in one process: the webhook server and all workers (zero-config: local Redis, emulator, dev secrets)')
    .option('--accept-source-change', 'start although a connector source changed (every record it sends is then a new record)')
    .action(async (options: { acceptSourceChange?: boolean }) => {
      const { config, settings, logger, lifecycle } = boot('start');
      const { secrets, api, served } = await startOrStop(lifecycle, 'start', async () => {
        const redisTarget = await resolveRedis(config, config.dataDir, logger, lifecycle);
        // Development secrets only when no real API is configured: nothing can leak to production.
        const secrets = webhookSecrets(config, config.usesEmulator);
        const changed = await guardSources(config, settings, redisTarget, secrets, options.acceptSourceChange === true);
        for (const c of changed) logger.warn(c, 'connector source changed (accepted)');
        const metrics = createMetrics();
        const api = await connectApi(config, logger, lifecycle, { onCall: metrics.observeApiCall, onDrift: metrics.observeDrift });
        await startWork({ config, settings, redisTarget, tax: api.tax, vat: api.vat, logger, lifecycle, metrics });
        const { startServe } = await import('../../runtime/serve.js');
        const served = await startServe({
          metrics,
          config,
          settings,
          redisTarget,
          logger,
          lifecycle,
          secrets,
          ...(api.emulatorUrl === undefined ? {} : { emulatorUrl: api.emulatorUrl }),
        });
        return { secrets, api, served };
      });
      const dev = Object.entries(secrets)
        .filter(([id, list]) => list.length > 0 && list[0]?.reveal() === DEV_SECRETS[id])
        .map(([id]) => `${id}=${DEV_SECRETS[id]}`);
      process.stdout.write(
        [
          `taxsync is running: webhooks on ${served.address}/webhooks/{shopify,stripe,woocommerce,erp}`,
          api.emulatorUrl ? `tax engine and VAT service: the built-in emulator at ${api.emulatorUrl}` : undefined,
          dev.length > 0 ? `development webhook secrets: ${dev.join(' ')}` : undefined,
          config.adminToken ? `web view: ${served.address}/admin (sign in with TAXSYNC_ADMIN_TOKEN)` : undefined,
          'try it: taxsync demo',
        ]
          .filter(Boolean)
          .join('\n') + '\n',
      );
    });

  program
    .command('work')
    .description('run workers only (scale out: several processes on one Redis)')
    .option('--queue <names>', `comma-separated queues (${WORKABLE_QUEUES.join(', ')})`, parseQueues)
    .action(async (options: { queue?: WorkableQueue[] }) => {
      const { config, settings, logger, lifecycle } = boot('work');
      await startOrStop(lifecycle, 'work', async () => {
        const redisTarget = await resolveRedis(config, config.dataDir, logger, lifecycle);
        // Without TAXSYNC_METRICS_PORT nothing would serve the registry: keep none.
        const metrics = config.metricsPort === undefined ? undefined : createMetrics();
        const api = await connectApi(config, logger, lifecycle, metrics ? { onCall: metrics.observeApiCall, onDrift: metrics.observeDrift } : {});
        await startWork({
          config,
          settings,
          redisTarget,
          tax: api.tax,
          vat: api.vat,
          logger,
          lifecycle,
          ...(metrics ? { metrics } : {}),
          ...(options.queue ? { queues: options.queue } : {}),
        });
        if (metrics && config.metricsPort !== undefined) {
          const port = config.metricsPort;
          await serveMetrics({ metrics, host: config.http.host, port, logger, lifecycle }).catch((error: unknown) => {
            throw listenError(error, { host: config.http.host, port, variable: 'TAXSYNC_METRICS_PORT' });
          });
        }
      });
    });
}
