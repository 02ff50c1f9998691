import { createMetrics } from '../observability/metrics.js';
import { ensureRegistrations } from '../vat-ops/zero-config.js';
import { connectApi } from './api.js';
import { bootDaemon, openDaemon, type DaemonOptions } from './context.js';
import { removeDaemonFile, writeDaemonFile } from './daemon-file.js';
import { listenError, startOrStop } from './lifecycle.js';
import { serveMetrics } from './metrics-server.js';
import { configuredRedis } from './redis.js';
import { startWork, type WorkableQueue } from './work.js';

/**
 * The three daemons, as `taxsync start|serve|work` and `node dist/workers/<name>.js` run them:
 * one context (src/daemon/context.ts: config, logger, shutdown path, Redis, keys, secrets, source
 * guard), then what each one starts. A start that fails stops what it had started.
 */

/** The webhook server only. */
export async function runServe(options: DaemonOptions = {}): Promise<void> {
  const booted = bootDaemon('serve');
  await startOrStop(booted.lifecycle, 'serve', async () => {
    const ctx = await openDaemon(booted, options);
    const { startServe } = await import('./serve.js');
    await startServe({ config: ctx.config, settings: ctx.settings, redisTarget: ctx.redisTarget, logger: ctx.logger, lifecycle: ctx.lifecycle, connections: ctx.connections });
  });
}

/** Workers only (scale out: several processes on one Redis). */
export async function runWork(options: DaemonOptions & { queues?: WorkableQueue[] } = {}): Promise<void> {
  const booted = bootDaemon('work');
  await startOrStop(booted.lifecycle, 'work', async () => {
    const { config, settings, logger, lifecycle, redisTarget, connections } = await openDaemon(booted, options);
    // Without TAXSYNC_METRICS_PORT nothing would serve the registry: keep none.
    const metrics = config.metricsPort === undefined ? undefined : createMetrics();
    const api = await connectApi(config, logger, lifecycle, metrics ? { onCall: metrics.observeApiCall, onDrift: metrics.observeDrift } : {});
    if (api.emulatorUrl !== undefined) await ensureRegistrations(api.vat, settings.vat, logger);
    await startWork({
      config,
      settings,
      connections,
      redisTarget,
      tax: api.tax,
      vat: api.vat,
      logger,
      lifecycle,
      ...(metrics ? { metrics } : {}),
      ...(options.queues ? { queues: options.queues } : {}),
    });
    if (metrics && config.metricsPort !== undefined) {
      const port = config.metricsPort;
      await serveMetrics({ metrics, host: config.http.host, port, logger, lifecycle, ...(config.metricsToken ? { token: config.metricsToken } : {}) }).catch((error: unknown) => {
        throw listenError(error, { host: config.http.host, port, variable: 'TAXSYNC_METRICS_PORT' });
      });
    }
  });
}

/** Everything in one process: the webhook server and all workers (zero-config: local Redis, emulator, dev secrets). */
export async function runStart(options: DaemonOptions = {}): Promise<void> {
  const booted = bootDaemon('start');
  const { config, settings, lifecycle } = booted;
  const { redisTarget, connections, api, registrations, served } = await startOrStop(lifecycle, 'start', async () => {
    const { redisTarget, connections, logger } = await openDaemon(booted, options);
    const metrics = createMetrics();
    const api = await connectApi(config, logger, lifecycle, { onCall: metrics.observeApiCall, onDrift: metrics.observeDrift });
    // The built-in emulator starts empty: give it the registrations the settings name.
    const registrations = api.emulatorUrl === undefined ? [] : await ensureRegistrations(api.vat, settings.vat, logger);
    await startWork({ config, settings, connections, redisTarget, tax: api.tax, vat: api.vat, logger, lifecycle, metrics });
    const { startServe } = await import('./serve.js');
    const served = await startServe({
      metrics,
      config,
      settings,
      redisTarget,
      logger,
      lifecycle,
      connections,
      ...(api.emulatorUrl === undefined ? {} : { emulatorUrl: api.emulatorUrl }),
    });
    return { redisTarget, connections, api, registrations, served };
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
  const taking = connections.list.filter((c) => c.webhookSecrets.length > 0);
  const dev = taking.filter((c) => c.devSecret !== undefined && c.webhookSecrets[0]?.reveal() === c.devSecret).map((c) => `${c.id}=${c.devSecret}`);
  process.stdout.write(
    [
      `taxsync is running: webhooks on ${served.address}/webhooks/{${taking.map((c) => c.id).join(',')}}`,
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
}
