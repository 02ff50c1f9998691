import type { Command } from 'commander';
import { boot } from '../../daemon/boot.js';
import { connectApi } from '../../daemon/api.js';
import { DEV_SECRETS, webhookSecrets } from '../../daemon/connectors.js';
import { guardSources } from '../../daemon/guard.js';
import { listenError, startOrStop } from '../../daemon/lifecycle.js';
import { configuredRedis, resolveRedis } from '../../daemon/redis.js';
import { removeDaemonFile, writeDaemonFile } from '../../daemon/daemon-file.js';
import { ensureRegistrations } from '../../vat-ops/zero-config.js';
import { serveMetrics } from '../../daemon/metrics-server.js';
import { createMetrics } from '../../observability/metrics.js';
import { WORKABLE_QUEUES, startWork, type WorkableQueue } from '../../daemon/work.js';

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
      const { redisTarget, secrets, api, registrations, served } = await startOrStop(lifecycle, 'start', async () => {
        const redisTarget = await resolveRedis(config, config.dataDir, logger, lifecycle);
        // Development secrets only when no real API is configured: nothing can leak to production.
        const secrets = webhookSecrets(config, config.usesEmulator);
        const changed = await guardSources(config, settings, redisTarget, secrets, options.acceptSourceChange === true);
        for (const c of changed) logger.warn(c, 'connector source changed (accepted)');
        const metrics = createMetrics();
        const api = await connectApi(config, logger, lifecycle, { onCall: metrics.observeApiCall, onDrift: metrics.observeDrift });
        // The built-in emulator starts empty: give it the registrations the settings name.
        const registrations = api.emulatorUrl === undefined ? [] : await ensureRegistrations(api.vat, settings.vat, logger);
        await startWork({ config, settings, redisTarget, tax: api.tax, vat: api.vat, logger, lifecycle, metrics });
        const { startServe } = await import('../../daemon/serve.js');
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
        return { redisTarget, secrets, api, registrations, served };
      });
      const embeddedRedis = configuredRedis(config) === undefined && typeof redisTarget === 'string';
      const daemonFile =
        embeddedRedis || api.emulatorUrl !== undefined
          ? writeDaemonFile(config.dataDir, {
              v: 1,
              pid: process.pid,
              command: 'start',
              started_at: new Date().toISOString(),
              http_url: served.address,
              ...(embeddedRedis ? { redis_socket: redisTarget } : {}),
              ...(api.emulatorUrl === undefined ? {} : { emulator_url: api.emulatorUrl }),
            })
          : undefined;
      // Registered last, so it runs first: commands stop finding a daemon that is going away.
      if (daemonFile !== undefined) {
        lifecycle.onShutdown('daemon file', () => {
          removeDaemonFile(config.dataDir, process.pid);
          return Promise.resolve();
        });
      }
      const vatLine =
        registrations.length === 0
          ? undefined
          : `VAT: seller in ${settings.vat.seller_country ?? '?'}, registered in ${registrations
              .map((r) => `${r.taxable_jurisdiction_detail?.iso ?? '?'} (registration ${r.id}, entity jurisdiction ${r.entity_jurisdiction ?? '?'})`)
              .join(', ')}`;
      const dev = Object.entries(secrets)
        .filter(([id, list]) => list.length > 0 && list[0]?.reveal() === DEV_SECRETS[id])
        .map(([id]) => `${id}=${DEV_SECRETS[id]}`);
      process.stdout.write(
        [
          `taxsync is running: webhooks on ${served.address}/webhooks/{shopify,stripe,woocommerce,erp}`,
          api.emulatorUrl ? `tax engine and VAT service: the built-in emulator at ${api.emulatorUrl}` : undefined,
          dev.length > 0 ? `development webhook secrets: ${dev.join(' ')}` : undefined,
          vatLine,
          config.admin.operators.length > 0 ? `web view: ${served.address}/admin (sign in with your operator token)` : undefined,
          daemonFile ? `commands run in this folder (npx taxsync status, trace, dlq, vat, faults…) find this daemon through ${daemonFile}` : undefined,
          'try it: npm run demo (docs/tour.md walks through the rest)',
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
        if (api.emulatorUrl !== undefined) await ensureRegistrations(api.vat, settings.vat, logger);
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
          await serveMetrics({ metrics, host: config.http.host, port, logger, lifecycle, ...(config.metricsToken ? { token: config.metricsToken } : {}) }).catch((error: unknown) => {
            throw listenError(error, { host: config.http.host, port, variable: 'TAXSYNC_METRICS_PORT' });
          });
        }
      });
    });
}
