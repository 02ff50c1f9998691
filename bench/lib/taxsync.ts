import type { Redis } from 'ioredis';
import { createApiClients } from '../../src/api/index.js';
import { loadConfig, type Config } from '../../src/config/index.js';
import { Secret } from '../../src/config/secret.js';
import { DEFAULT_SETTINGS } from '../../src/config/settings.js';
import { CanonicalEvent } from '../../src/domain/events.js';
import { createLogger } from '../../src/observability/logger.js';
import { closeQueues, createQueues, createRedis } from '../../src/queue/connection.js';
import { createDeadLetterStore } from '../../src/queue/dead-letter.js';
import { createKeys } from '../../src/queue/keys.js';
import { createProducer, type Producer } from '../../src/queue/producer.js';
import { createLifecycle } from '../../src/runtime/lifecycle.js';
import { startWork } from '../../src/runtime/work.js';

const BASE = Date.UTC(2026, 10, 20, 10, 0, 0);

/** An ERP invoice.upserted for `externalId`; `version` orders a record's events and is its unit price. */
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
      lines: [{ id: '1', name: 'item 1', unit_price: `${version}.00`, quantity: '1' }],
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
  await new Promise((resolve) => connection.once('ready', resolve));
  const queues = createQueues(connection, config.redis.prefix);
  const keys = createKeys(config.redis.prefix);
  const producer = createProducer({
    queues,
    connection,
    keys,
    deadLetters: createDeadLetterStore(queues['dead-letter']),
    trace: config.trace,
    deliveryTtlMs: config.webhooks.deliveryTtlMs,
    coalesceDelayMs: config.queue.coalesceDelayMs,
    retry: config.queue.retry,
    vat: false,
  });
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
