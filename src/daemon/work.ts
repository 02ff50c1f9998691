import type { Worker } from 'bullmq';
import type { TaxClient, VatClient } from '../api/index.js';
import { vatEnabled } from '../mapping/index.js';
import { createVatHandler, createVatReferenceData } from '../processors/vat.js';
import { createVatLedger } from '../queue/vat-ledger.js';
import { createVatClaims } from '../queue/vat-claims.js';
import { policyFor } from '../queue/retry.js';
import type { Config } from '../config/index.js';
import type { Settings } from '../config/settings.js';
import { loadConnections, type Connections } from '../config/connections.js';
import { vatSettingsFor, type VatSettings } from '../mapping/vat-settings.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import { createCustomerHandler } from '../processors/customer.js';
import { customersQueueHandler } from '../processors/customers-queue.js';
import { createExemptionHandler } from '../processors/exemption.js';
import { createRecordProcessor } from '../processors/record-processor.js';
import { createTransactionHandler } from '../processors/transaction.js';
import { originalFetch } from './original-fetch.js';
import type { RecordHandler } from '../processors/types.js';
import { closeQueues, createQueues, createRedis, type RedisTarget } from '../queue/connection.js';
import { createDeadLetterStore } from '../queue/dead-letter.js';
import { createKeys } from '../queue/keys.js';
import { queueSource } from './metrics-server.js';
import { QUEUE_NAMES, type QueueName } from '../queue/names.js';
import { createRecordStore } from '../queue/record-state.js';
import { createRefundLedger } from '../queue/refund-ledger.js';
import { createVarianceStore } from '../variance/store.js';
import { varianceThresholds } from '../variance/compute.js';
import { createCustomerWriters } from '../queue/customer-writer.js';
import { createRequeuer } from '../queue/requeue.js';
import { createRecordWorker } from '../queue/worker.js';
import { scheduleRetention } from '../dead-letters/retention-schedule.js';
import { createVatResolver, scheduleVatResolver } from '../vat-ops/resolver.js';
import type { Lifecycle } from './lifecycle.js';

/** The queues `taxsync work` can run; vat-submissions only runs when VAT is configured. */
export const WORKABLE_QUEUES = [QUEUE_NAMES.customers, QUEUE_NAMES.transactions, QUEUE_NAMES.vatSubmissions] as const;
export type WorkableQueue = (typeof WORKABLE_QUEUES)[number];

/** Each connection's VAT settings (its seller facts over the settings'), made once per connection. */
function connectionVatSettings(connections: Connections, vat: VatSettings): (connector: string) => VatSettings | undefined {
  const made = new Map(connections.list.map((c) => [c.id, vatSettingsFor(vat, c.source, c.vat)]));
  return (connector) => made.get(connector);
}

/** `--queue customers,transactions`: the queues named, or an error naming the unknown ones. */
export function parseQueues(value: string): WorkableQueue[] {
  const names = value.split(',').map((s) => s.trim());
  const unknown = names.filter((n) => !(WORKABLE_QUEUES as readonly string[]).includes(n));
  if (unknown.length > 0) throw new Error(`unknown queue ${unknown.join(', ')}: choose from ${WORKABLE_QUEUES.join(', ')}`);
  return names as WorkableQueue[];
}

/**
 * Workers for the record queues. Registers the shutdown: stop taking jobs, let in-flight ones
 * finish within the deadline (a job cut off is retried later: BullMQ's stalled-job recovery), close.
 */
export async function startWork(deps: {
  config: Config;
  settings: Settings;
  /** The connections (their VAT facts, their platform credentials). @defaultValue the configured ones */
  connections?: Connections;
  redisTarget: RedisTarget;
  tax: TaxClient;
  vat: VatClient;
  logger: Logger;
  /** The registry /metrics serves (`start`, or `work` with TAXSYNC_METRICS_PORT): job outcomes and queue gauges. */
  metrics?: Metrics;
  lifecycle: Lifecycle;
  queues?: readonly WorkableQueue[];
}): Promise<Worker[]> {
  const { config, logger, lifecycle } = deps;
  const connections = deps.connections ?? loadConnections(config, deps.settings);
  const prefix = config.redis.prefix;
  const connection = createRedis(deps.redisTarget, 'worker');
  connection.on('error', (err: Error) => logger.warn({ err: { message: err.message } }, 'redis connection error'));
  lifecycle.onShutdown('redis (workers)', () => {
    connection.disconnect();
    return Promise.resolve();
  });
  // taxsync's own state (latest state, trace, ledgers) on a connection of its own: ioredis copies
  // every script defined on a connection into each MULTI it opens, and BullMQ defines dozens on
  // its connection. Auto-pipelining sends the commands of concurrent jobs in one write.
  const state = createRedis(deps.redisTarget, 'worker', { connectionName: 'taxsync-state', enableAutoPipelining: true });
  state.on('error', (err: Error) => logger.warn({ err: { message: err.message } }, 'redis connection error'));
  lifecycle.onShutdown('redis (worker state)', () => {
    state.disconnect();
    return Promise.resolve();
  });
  const queues = createQueues(connection, prefix);
  lifecycle.onShutdown('queues (workers)', () => closeQueues(queues));
  const keys = createKeys(prefix);
  const records = createRecordStore(state, keys);
  const deadLetters = createDeadLetterStore(queues['dead-letter']);
  const retry = config.queue.retry;
  const requeuer = createRequeuer({ queues, records, retry });
  const mapping = deps.settings.mapping;
  const wanted = (deps.queues ?? WORKABLE_QUEUES).filter((name) => name !== QUEUE_NAMES.vatSubmissions || vatEnabled(deps.settings.vat));
  // VAT claims on a connection of their own: each is confirmed durable before its POST, and
  // WAITAOF / WAIT block the connection they are sent on (src/queue/vat-claims.ts).
  const claimsConnection = createRedis(deps.redisTarget, 'worker', { connectionName: 'taxsync-vat-claims' });
  claimsConnection.on('error', (err: Error) => logger.warn({ err: { message: err.message } }, 'redis connection error'));
  lifecycle.onShutdown('redis (vat claims)', () => {
    claimsConnection.disconnect();
    return Promise.resolve();
  });
  const claims = createVatClaims(claimsConnection, { mode: config.ack.durability, timeoutMs: config.ack.timeoutMs, slotKey: keys.counters });
  if (wanted.includes(QUEUE_NAMES.vatSubmissions)) {
    // Said at start, and refused at start when it cannot work (AOF off with TAXSYNC_ACK_DURABILITY=aof), as for webhooks.
    const plan = await claims.ready();
    logger[plan.weak ? 'warn' : 'info']({ ackDurability: plan.mode, method: plan.method }, `VAT claims are confirmed before their POST as webhooks' acknowledgements are: ${plan.description}`);
  }
  const vatLedger = createVatLedger(state, keys, { leaseMs: config.queue.vat.leaseMs, claims });
  deps.metrics?.watchQueues(queueSource(queues, connection, keys, connections));

  const writers = createCustomerWriters(state, keys);
  const handlers: Record<WorkableQueue, RecordHandler> = {
    customers: customersQueueHandler({
      customer: createCustomerHandler({ tax: deps.tax, settings: mapping, writers }),
      exemption: createExemptionHandler({ tax: deps.tax, records, settings: mapping }),
    }),
    transactions: createTransactionHandler({
      tax: deps.tax,
      records,
      ledger: createRefundLedger(state, keys),
      settings: mapping,
      variance: { store: createVarianceStore(state, keys), thresholds: varianceThresholds(config.taxVariance) },
      writers,
      ...originalFetch({ config, settings: deps.settings, connections, connection, queues, state, keys }),
    }),
    'vat-submissions': createVatHandler({
      vat: deps.vat,
      ledger: vatLedger,
      records,
      requeue: async (record) => {
        await records.reopen(record);
        await requeuer.ensureQueued(record);
      },
      unknownLimit: config.queue.vat.unknownLimit,
      settings: deps.settings.vat,
      settingsFor: connectionVatSettings(connections, deps.settings.vat),
      reference: createVatReferenceData(deps.vat, deps.settings.vat, { ttlMs: config.queue.vat.referenceTtlMs }),
      ...(deps.metrics ? { metrics: deps.metrics } : {}),
    }),
  };

  const workers: Worker[] = [];
  for (const name of wanted) {
    const queueName: QueueName = name;
    const worker = createRecordWorker({
      queue: queueName,
      prefix,
      connection,
      concurrency: config.queue.concurrency[name],
      retry: policyFor(name === QUEUE_NAMES.vatSubmissions ? 'vat' : 'record', retry),
      requeuer,
      logger,
      stalledIntervalMs: config.queue.stalledIntervalMs,
      process: createRecordProcessor({
        queue: queues[queueName],
        handler: handlers[name],
        records,
        deadLetters,
        redis: state,
        keys,
        trace: config.trace,
        logger: logger.child({ queue: name }),
        wait: config.queue.wait,
        coalesce: { windowMs: config.queue.coalesceDelayMs, maxMs: config.queue.coalesceMaxMs },
        ...(deps.metrics ? { onOutcome: deps.metrics.observeJob, onIdUnknown: deps.metrics.observeIdUnknown, onUnchanged: deps.metrics.observeUnchanged } : {}),
      }),
    });
    workers.push(worker);
    void worker.run();
  }
  // Registered after the connections, so it runs first: stop taking jobs and drain.
  lifecycle.onShutdown('workers', async () => {
    await Promise.all(workers.map((w) => w.close()));
  });

  const sweep = () =>
    requeuer.sweep().then(
      (n) => n > 0 && logger.info({ requeued: n }, 're-queued records that had lost their job'),
      (error: unknown) => logger.warn({ err: error }, 'sweep failed'),
    );
  void sweep();
  const timer = setInterval(() => void sweep(), config.queue.sweepIntervalMs);
  timer.unref();
  lifecycle.onShutdown('sweeper', () => {
    clearInterval(timer);
    return Promise.resolve();
  });
  if (wanted.includes(QUEUE_NAMES.vatSubmissions)) {
    const resolver = createVatResolver({
      ledger: vatLedger,
      records,
      requeuer,
      redis: state,
      keys,
      intervalMs: config.queue.vat.resolverIntervalMs,
      backoff: { baseMs: config.queue.retry.vat.baseMs, capMs: config.queue.retry.vat.capMs },
    });
    scheduleVatResolver(resolver, { intervalMs: config.queue.vat.resolverIntervalMs, logger, lifecycle });
  }
  // Registered last, so it stops first, while its queues and connection are still open.
  scheduleRetention({ config, deadLetters, connect: () => createRedis(deps.redisTarget, 'worker', { connectionName: 'taxsync-retention' }), keys, logger, lifecycle });
  await Promise.all(workers.map((w) => w.waitUntilReady()));
  logger.info({ queues: wanted }, 'workers started');
  return workers;
}
