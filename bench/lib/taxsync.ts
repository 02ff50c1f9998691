import type { Redis } from 'ioredis';
import { createApiClients } from '../../src/api/index.js';
import { loadConfig, type Config } from '../../src/config/index.js';
import { Secret } from '../../src/domain/secret.js';
import { DEFAULT_SETTINGS } from '../../src/config/settings.js';
import { CanonicalEvent } from '../../src/domain/events.js';
import { createLogger } from '../../src/observability/logger.js';
import { closeQueues, createQueues, createRedis, whenReady } from '../../src/queue/connection.js';
import type { Producer } from '../../src/queue/producer.js';
import { createLifecycle } from '../../src/daemon/lifecycle.js';
import { configuredProducer } from '../../src/queue/configured-producer.js';
import { startWork } from '../../src/daemon/work.js';
import type { BenchContext } from '../run.js';

const BASE = Date.UTC(2026, 10, 20, 10, 0, 0);

/** An ERP invoice.upserted for `externalId` (about 1 KB); `version` orders a record's events and sets its unit prices. */
export function invoiceEvent(externalId: string, version: number): CanonicalEvent {
  return CanonicalEvent.parse({
    id: `bench-${externalId}-v${version}`,
    type: 'invoice.upserted',
    occurred_at: new Date(BASE + version * 1000).toISOString(),
    connector: 'erp',
    record: { kind: 'transaction', source: 'api', external_id: externalId },
    data: {
      number: externalId,
      issued_at: new Date(BASE).toISOString(),
      status: 'active',
      currency: 'USD',
      tax_inclusive: false,
      addresses: { shipping: { street: '350 5th Ave', city: 'New York', state: 'NY', zip: '10001', country: 'US' } },
      // Four lines: the event is about 1 KB of JSON, the payload size scenario 6 asks for.
      lines: [1, 2, 3, 4].map((k) => ({
        id: String(k),
        product_id: `prod-${k}`,
        sku: `SKU-BENCH-${k}`,
        name: `bench item ${k}`,
        description: `bench item ${k}, one of four`,
        unit_price: `${version}.${k}0`,
        quantity: String(k),
      })),
    },
  });
}

export function benchConfig(redisUrl: string, prefix: string, apiUrl: string, env: Record<string, string> = {}): Config {
  return loadConfig({
    REDIS_URL: redisUrl,
    TAXSYNC_HTTP_HOST: '127.0.0.1',
    TAXSYNC_HTTP_PORT: '0',
    TAX_API_URL: apiUrl,
    TAX_API_CLIENT_ID: 'bench',
    TAX_API_CLIENT_SECRET: 'bench-secret',
    LOG_LEVEL: 'silent',
    // Passed through so a run can try other settings (TAXSYNC_CONCURRENCY_TRANSACTIONS, TAXSYNC_COALESCE_MS…).
    ...Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[0].startsWith('TAXSYNC_') && e[1] !== undefined)),
    ...env,
    // The bench's own prefix always wins over the environment's.
    TAXSYNC_PREFIX: prefix,
  });
}

export interface TaxsyncProducer {
  producer: Producer;
  connection: Redis;
  /** Accepts the events in batches of `batch`, `parallel` transactions in flight. */
  acceptAll(events: readonly CanonicalEvent[], batch?: number, parallel?: number): Promise<void>;
  idle(): Promise<boolean>;
  close(): Promise<void>;
}

/** taxsync's producer as `serve` builds it, on its own connection. */
export async function startProducer(config: Config, redisUrl: string): Promise<TaxsyncProducer> {
  const connection = createRedis(redisUrl, 'producer');
  await whenReady(connection);
  const queues = createQueues(connection, config.redis.prefix);
  const producer = configuredProducer(connection, queues, config, DEFAULT_SETTINGS);
  return {
    producer,
    connection,
    async acceptAll(events, batch = 500, parallel = 4) {
      const batches: CanonicalEvent[][] = [];
      for (let i = 0; i < events.length; i += batch) batches.push(events.slice(i, i + batch));
      let next = 0;
      const lane = async () => {
        while (next < batches.length) await producer.accept({ events: batches[next++]! });
      };
      await Promise.all(Array.from({ length: parallel }, lane));
    },
    async idle() {
      const counts = await queues.transactions.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'waiting-children');
      return Object.values(counts).every((n) => n === 0);
    },
    async close() {
      await closeQueues(queues);
      connection.disconnect();
    },
  };
}

/** `taxsync work` for the transactions queue, in this process, against the bench API. */
export async function startTaxsyncWorkers(config: Config, redisUrl: string, apiUrl: string): Promise<{ stop(): Promise<void> }> {
  const logger = createLogger({ level: 'silent' });
  const lifecycle = createLifecycle({ logger, deadlineMs: config.shutdownDeadlineMs });
  const api = createApiClients({ taxUrl: apiUrl, clientId: 'bench', clientSecret: new Secret('bench-secret') });
  lifecycle.onShutdown('api', () => api.close());
  await startWork({ config, settings: DEFAULT_SETTINGS, redisTarget: redisUrl, tax: api.tax, vat: api.vat, logger, lifecycle, queues: ['transactions'] });
  return { stop: () => lifecycle.shutdown('bench over') };
}

/** The environment of a `taxsync serve|work|start` child process sending to the bench API. */
export function taxsyncChildEnv(ctx: BenchContext, prefix: string): Record<string, string> {
  return {
    REDIS_URL: ctx.redis.url,
    TAXSYNC_PREFIX: prefix,
    TAXSYNC_HTTP_HOST: '127.0.0.1',
    TAX_API_URL: ctx.api.url,
    TAX_API_CLIENT_ID: 'bench',
    TAX_API_CLIENT_SECRET: 'bench-secret',
    TAXSYNC_DATA_DIR: ctx.dataDir,
    LOG_LEVEL: 'warn',
  };
}
