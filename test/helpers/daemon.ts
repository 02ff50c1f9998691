import { readFileSync } from 'node:fs';
import { createApiClients, type ApiClients } from '../../src/api/index.js';
import { loadConfig, type Config } from '../../src/config/index.js';
import { Secret } from '../../src/config/secret.js';
import { DEFAULT_SETTINGS } from '../../src/config/settings.js';
import { CONNECTORS } from '../../src/connectors/registry.js';
import { DEFAULT_CLIENT, startEmulator, type Emulator } from '../../src/emulator/index.js';
import { createLogger } from '../../src/observability/logger.js';
import { createLifecycle, type Lifecycle } from '../../src/runtime/lifecycle.js';
import { startServe } from '../../src/runtime/serve.js';
import { startWork } from '../../src/runtime/work.js';

export const E2E_SECRETS = {
  shopify: 'e2e-shopify-secret',
  stripe: 'whsec_e2e_stripe_secret',
  woocommerce: 'e2e-woocommerce-secret',
  erp: 'whsec_ZTJlLWVycC1zZWNyZXQtZm9yLXRlc3Rz',
};

export interface Daemon {
  config: Config;
  emulator: Emulator & { url: string };
  api: ApiClients;
  webhookUrl: string;
  lifecycle: Lifecycle;
  post(connector: keyof typeof E2E_SECRETS, body: unknown, headers?: Record<string, string>, contentType?: string): Promise<Response>;
  stop(): Promise<void>;
}

/** The daemon as `taxsync start` runs it (webhooks + workers in one process) against an emulator. */
export async function startDaemon(redisUrl: string, prefix: string, env: Record<string, string> = {}): Promise<Daemon> {
  const emulator = await startEmulator({ port: 0, host: '127.0.0.1', control: true });
  const config = loadConfig({
    REDIS_URL: redisUrl,
    TAXSYNC_PREFIX: prefix,
    TAXSYNC_HTTP_HOST: '127.0.0.1',
    TAXSYNC_HTTP_PORT: '0',
    TAX_API_URL: emulator.url,
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
    TAXSYNC_SWEEP_INTERVAL_MS: '1000',
    LOG_LEVEL: 'silent',
    ...env,
  });
  const logger = createLogger({ level: config.logLevel });
  const lifecycle = createLifecycle({ logger, deadlineMs: config.shutdownDeadlineMs });
  const api = createApiClients({ taxUrl: emulator.url, clientId: DEFAULT_CLIENT.clientId, clientSecret: new Secret(DEFAULT_CLIENT.clientSecret) });
  const workerApi = createApiClients({ taxUrl: emulator.url, clientId: DEFAULT_CLIENT.clientId, clientSecret: new Secret(DEFAULT_CLIENT.clientSecret) });
  lifecycle.onShutdown('api', async () => {
    await api.close();
    await workerApi.close();
  });
  await startWork({ config, settings: DEFAULT_SETTINGS, redisTarget: redisUrl, tax: workerApi.tax, logger, lifecycle });
  const served = await startServe({ config, settings: DEFAULT_SETTINGS, redisTarget: redisUrl, logger, lifecycle });
  return {
    config,
    emulator,
    api,
    webhookUrl: served.address,
    lifecycle,
    async post(connector, body, headers = {}, contentType = 'application/json') {
      const raw = Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
      return fetch(`${served.address}/webhooks/${connector}`, {
        method: 'POST',
        body: raw,
        headers: { 'content-type': contentType, ...headers, ...CONNECTORS[connector]!.sign(raw, E2E_SECRETS[connector], new Date()) },
      });
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
