import { readFileSync } from 'node:fs';
import type { Queue } from 'bullmq';
import type { DestinationStream } from 'pino';
import { createApiClients, type ApiClients } from '../../src/api/index.js';
import { loadConfig, type Config } from '../../src/config/index.js';
import { Secret } from '../../src/domain/secret.js';
import { DEFAULT_SETTINGS, type Settings } from '../../src/config/settings.js';
import { CONNECTOR_LIST, CONNECTORS } from '../../src/connectors/registry.js';
import { loadConnections } from '../../src/config/connections.js';
import type { Connector } from '../../src/connectors/types.js';
import { DEFAULT_CLIENT, startEmulator, type Emulator, type EmulatorOptions } from '../../src/emulator/index.js';
import { testVariety } from './emulator-variety.js';
import { createLogger } from '../../src/observability/logger.js';
import { createMetrics, type Metrics } from '../../src/observability/metrics.js';
import { closeQueues, createQueues, createRedis } from '../../src/queue/connection.js';
import type { QueueName } from '../../src/queue/names.js';
import { connectApi } from '../../src/daemon/api.js';
import { createLifecycle, type Lifecycle } from '../../src/daemon/lifecycle.js';
import { configuredRedis } from '../../src/daemon/redis.js';
import { startServe } from '../../src/daemon/serve.js';
import { startWork } from '../../src/daemon/work.js';

export const E2E_SECRETS = {
  shopify: 'e2e-shopify-secret',
  stripe: 'whsec_e2e_stripe_secret',
  woocommerce: 'e2e-woocommerce-secret',
  erp: 'whsec_ZTJlLWVycC1zZWNyZXQtZm9yLXRlc3Rz',
};
export type E2eConnector = keyof typeof E2E_SECRETS;

/** The environment of an e2e daemon (in-process or a `taxsync` child process): fast retries and waits. */
export function e2eEnv(redisUrl: string, prefix: string, taxApiUrl: string): Record<string, string> {
  return {
    REDIS_URL: redisUrl,
    TAXSYNC_PREFIX: prefix,
    TAXSYNC_HTTP_HOST: '127.0.0.1',
    TAXSYNC_HTTP_PORT: '0',
    TAX_API_URL: taxApiUrl,
    TAX_API_CLIENT_ID: DEFAULT_CLIENT.clientId,
    TAX_API_CLIENT_SECRET: DEFAULT_CLIENT.clientSecret,
    SHOPIFY_WEBHOOK_SECRET: E2E_SECRETS.shopify,
    STRIPE_WEBHOOK_SECRET: E2E_SECRETS.stripe,
    WOOCOMMERCE_WEBHOOK_SECRET: E2E_SECRETS.woocommerce,
    ERP_WEBHOOK_SECRET: E2E_SECRETS.erp,
    TAXSYNC_WAIT_BASE_MS: '50',
    TAXSYNC_WAIT_CAP_MS: '200',
    TAXSYNC_BACKOFF_BASE_MS: '20',
    TAXSYNC_BACKOFF_CAP_MS: '200',
    TAXSYNC_VAT_BACKOFF_BASE_MS: '20',
    TAXSYNC_VAT_BACKOFF_CAP_MS: '200',
    TAXSYNC_SWEEP_INTERVAL_MS: '1000',
    LOG_LEVEL: 'silent',
  };
}

/** POSTs a body to `{baseUrl}/webhooks/{connector}`, signed as the platform would sign it. */
export async function postSigned(
  baseUrl: string,
  connector: E2eConnector,
  body: unknown,
  headers: Record<string, string> = {},
  contentType = 'application/json',
): Promise<Response> {
  const raw = Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  return fetch(`${baseUrl}/webhooks/${connector}`, {
    method: 'POST',
    body: raw,
    headers: { 'content-type': contentType, ...headers, ...CONNECTORS[connector]!.sign(raw, E2E_SECRETS[connector], new Date()) },
  });
}

export interface Daemon {
  config: Config;
  emulator: Emulator & { url: string };
  api: ApiClients;
  webhookUrl: string;
  lifecycle: Lifecycle;
  /** The one registry the webhook server and the workers share, as in `taxsync start` (served on /metrics). */
  metrics: Metrics;
  /** The daemon's queues, on a connection of the test's own. */
  queues: Record<QueueName, Queue>;
  post(connector: E2eConnector, body: unknown, headers?: Record<string, string>, contentType?: string): Promise<Response>;
  /** True when no record job is waiting, delayed or running. */
  idle(): Promise<boolean>;
  stop(): Promise<void>;
}

export interface DaemonOptions {
  /** Settings over e2eEnv()'s. */
  env?: Record<string, string>;
  /** Options of the emulator (faults, seed, clients…); its control API is always on. */
  emulator?: EmulatorOptions;
  /** Run the workers in this process too. @defaultValue true (false: webhooks only, for tests that run `taxsync work` processes) */
  work?: boolean;
  /** Report the emulator's URL on /healthz, as `taxsync start` does for its built-in one (`taxsync demo` needs it). @defaultValue false */
  emulatorOnHealthz?: boolean;
  /** Where the daemon's logs go (at `LOG_LEVEL`, silent unless `env` sets it). @defaultValue stdout */
  logDestination?: DestinationStream;
  /** Runs on the listening emulator before the daemon starts (to observe or wrap its parts). */
  onEmulator?: (emulator: Emulator & { url: string }) => void;
  /** The TAXSYNC_CONFIG settings (mapping, VAT). @defaultValue DEFAULT_SETTINGS */
  settings?: Settings;
  /** Connectors besides the registry's (a test's own platform), given to loadConfig and startServe. */
  extraConnectors?: readonly Connector[];
}

/** The daemon as `taxsync start` runs it (webhooks + workers in one process) against an emulator. */
export async function startDaemon(redisUrl: string, prefix: string, options: DaemonOptions = {}): Promise<Daemon> {
  const emulator = await startEmulator({ variety: testVariety(), ...options.emulator, port: 0, host: '127.0.0.1', control: true });
  options.onEmulator?.(emulator);
  const env = { ...e2eEnv(redisUrl, prefix, emulator.url), ...options.env };
  const config = loadConfig(env, options.extraConnectors);
  const settings = options.settings ?? DEFAULT_SETTINGS;
  // The connections file's `*_env` names are read from the test's environment, not the process's.
  const connections = loadConnections(config, settings, env, [...CONNECTOR_LIST, ...(options.extraConnectors ?? [])]);
  const logger = createLogger({ level: config.logLevel, ...(options.logDestination ? { destination: options.logDestination } : {}) });
  const lifecycle = createLifecycle({ logger, deadlineMs: config.shutdownDeadlineMs });
  const api = createApiClients({ taxUrl: emulator.url, clientId: DEFAULT_CLIENT.clientId, clientSecret: new Secret(DEFAULT_CLIENT.clientSecret) });
  const metrics = createMetrics();
  // The workers' clients as `taxsync start` builds them: credentials and timeouts from the config.
  const workerApi = await connectApi(config, logger, lifecycle, { onCall: metrics.observeApiCall });
  lifecycle.onShutdown('api', () => api.close());
  // REDIS_CLUSTER=1 in `env` makes redisUrl a cluster seed, as in `taxsync start`.
  const redisTarget = configuredRedis(config) ?? redisUrl;
  const connection = createRedis(redisTarget, 'worker');
  const queues = createQueues(connection, prefix);
  lifecycle.onShutdown('test queues', async () => {
    await closeQueues(queues);
    connection.disconnect();
  });
  if (options.work !== false) {
    await startWork({ config, settings, connections, redisTarget, tax: workerApi.tax, vat: workerApi.vat, logger, lifecycle, metrics });
  }
  const served = await startServe({
    metrics,
    config,
    settings,
    connections,
    redisTarget,
    logger,
    lifecycle,
    ...(options.emulatorOnHealthz ? { emulatorUrl: emulator.url } : {}),
    ...(options.extraConnectors ? { extraConnectors: options.extraConnectors } : {}),
  });
  return {
    config,
    emulator,
    api,
    webhookUrl: served.address,
    lifecycle,
    metrics,
    queues,
    post: (connector, body, headers, contentType) => postSigned(served.address, connector, body, headers, contentType),
    async idle() {
      const counts = await Promise.all(
        [queues.customers, queues.transactions].map((q) => q.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'waiting-children')),
      );
      return counts.every((c) => Object.values(c).every((n) => n === 0));
    },
    async stop() {
      await lifecycle.shutdown('test over');
      await emulator.close();
    },
  };
}

interface FixtureFile {
  headers: Record<string, string>;
  body: unknown;
  contentType?: string;
}

export function fixture(path: string): FixtureFile {
  return JSON.parse(readFileSync(new URL(`../fixtures/connectors/${path}`, import.meta.url), 'utf8')) as FixtureFile;
}
