import type { FastifyInstance } from 'fastify';
import { withActivity } from '../activity/store.js';
import { readReports } from '../activity/reports.js';
import { createVarianceStore } from '../variance/store.js';
import type { Config } from '../config/index.js';
import type { Settings } from '../config/settings.js';
import { buildApp } from '../http/app.js';
import type { Logger } from '../observability/logger.js';
import { createMetrics, type Metrics } from '../observability/metrics.js';
import { createWaitingIndex } from '../processors/waiting.js';
import { answers, closeQueues, createQueues, createRedis, WEBHOOK_COMMAND_TIMEOUT_MS, type RedisTarget } from '../queue/connection.js';
import { createAuditLog } from '../queue/audit.js';
import { createKeys } from '../queue/keys.js';
import { createDlqDeps } from '../dead-letters/open.js';
import { CONNECTOR_LIST } from '../connectors/registry.js';
import type { Connector } from '../connectors/types.js';
import { loadConnections, type Connections } from '../config/connections.js';
import { enabledConnections } from './connectors.js';
import { listenError, type Lifecycle } from './lifecycle.js';
import { queueSource } from './metrics-server.js';

export interface ServeHandle {
  app: FastifyInstance;
  metrics: Metrics;
  address: string;
}

/** The webhook server: verify, normalise, store, answer. Registers its own shutdown steps. */
export async function startServe(deps: {
  config: Config;
  settings: Settings;
  redisTarget: RedisTarget;
  logger: Logger;
  lifecycle: Lifecycle;
  metrics?: Metrics;
  /** The connections served. @defaultValue the configured ones (loadConnections) */
  connections?: Connections;
  /** Connectors served besides the registry's (a test's own platform); their secrets come from the config. */
  extraConnectors?: readonly Connector[];
  /** The URL of the built-in emulator this process sends to (`taxsync start`), for /healthz. */
  emulatorUrl?: string;
}): Promise<ServeHandle> {
  const { config, logger, lifecycle } = deps;
  // WAITAOF / WAIT may take up to TAXSYNC_ACK_TIMEOUT_MS: the command timeout leaves them that.
  const commandTimeout = Math.max(WEBHOOK_COMMAND_TIMEOUT_MS, config.ack.timeoutMs + 500);
  const connection = createRedis(deps.redisTarget, 'producer', { enableAutoPipelining: true, commandTimeout });
  connection.on('error', (err: Error) => logger.warn({ err: { message: err.message } }, 'redis connection error'));
  lifecycle.onShutdown('redis (producer)', () => {
    connection.disconnect();
    return Promise.resolve();
  });
  await new Promise<void>((resolve) => {
    if (connection.status === 'ready') resolve();
    else connection.once('ready', () => resolve());
  });
  const queues = createQueues(connection, config.redis.prefix);
  lifecycle.onShutdown('queues', () => closeQueues(queues));
  const metrics = deps.metrics ?? createMetrics();
  const keys = createKeys(config.redis.prefix);
  const served = [...CONNECTOR_LIST, ...(deps.extraConnectors ?? [])];
  const connections = deps.connections ?? loadConnections(config, deps.settings, process.env, served);
  const connectors = enabledConnections(connections, config, served);
  metrics.watchQueues(queueSource(queues, connection, keys, connections));
  // The webhooks and the dead-letter tools queue work through the same producer.
  const dlq = createDlqDeps(connection, queues, config, deps.settings, { connections });
  // Said at start, and refused at start when it cannot work (AOF off with TAXSYNC_ACK_DURABILITY=aof).
  const ack = await dlq.producer.durability?.ready();
  if (ack) logger[ack.weak ? 'warn' : 'info']({ ackDurability: ack.mode, method: ack.method }, ack.description);
  const app = await buildApp({
    connectors,
    producer: withActivity(dlq.producer, keys),
    logger,
    metrics,
    bodyLimitBytes: config.webhooks.bodyLimitBytes,
    rawBodyLimitBytes: config.webhooks.rawBodyLimitBytes,
    limits: config.webhooks.limits,
    ready: () => answers(connection, keys.counters),
    health: {
      usesEmulator: config.usesEmulator || deps.emulatorUrl !== undefined,
      ...(deps.emulatorUrl === undefined ? {} : { emulatorUrl: deps.emulatorUrl }),
    },
    ...(config.metricsToken === undefined ? {} : { metricsToken: config.metricsToken }),
    ...(config.admin.operators.length === 0
      ? {}
      : {
          admin: {
            operators: config.admin.operators,
            sessions: { redis: connection, keys, ttlMs: config.admin.sessionMs },
            loginRate: config.admin.loginRate,
            secureCookie: config.admin.secureCookie,
            queues: Object.values(queues),
            dlq: (actor: string) => ({ ...dlq, audit: createAuditLog(connection, keys, { actor }) }),
            waiting: () => createWaitingIndex(connection, keys).list({ limit: 50 }),
            reports: () =>
              readReports({ redis: connection, keys, deadLetters: dlq.deadLetters, variances: createVarianceStore(connection, keys), silenceMs: config.sourceSilenceMs, connections }),
          },
        }),
  });
  // Registered last, so it runs first: stop accepting webhooks before closing Redis.
  lifecycle.onShutdown('http', () => app.close());
  let address: string;
  try {
    address = await app.listen({ host: config.http.host, port: config.http.port });
  } catch (error) {
    throw listenError(error, { host: config.http.host, port: config.http.port, variable: 'TAXSYNC_HTTP_PORT' });
  }
  logger.info({ address, connectors: Object.keys(connectors) }, `taxsync is listening on ${address}`);
  if (Object.keys(connectors).length === 0) {
    const variables = CONNECTOR_LIST.map((c) => c.secretVariable);
    logger.warn(`no connector is enabled: set ${variables.slice(0, -1).join(', ')} or ${variables.at(-1)}`);
  }
  return { app, metrics, address };
}

