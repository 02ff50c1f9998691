import type { Worker } from 'bullmq';
import type { TaxClient, VatClient } from '../api/index.js';
import { vatEnabled } from '../mapping/index.js';
import { createVatHandler, createVatReferenceData } from '../processors/vat.js';
import { createVatLedger } from '../queue/vat-ledger.js';
import { policyFor } from '../queue/retry.js';
import type { Config } from '../config/index.js';
import type { Settings } from '../config/settings.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import { createCustomerHandler } from '../processors/customer.js';
import { createExemptionHandler } from '../processors/exemption.js';
import { createRecordProcessor } from '../processors/record-processor.js';
import { createTransactionHandler } from '../processors/transaction.js';
import type { RecordHandler } from '../processors/types.js';
import { closeQueues, createQueues, createRedis } from '../queue/connection.js';
import { createDeadLetterStore } from '../queue/dead-letter.js';
import { createKeys } from '../queue/keys.js';
import { queueSource } from './metrics.js';
import { QUEUE_NAMES, type QueueName } from '../queue/names.js';
import { createRecordStore } from '../queue/record-state.js';
import { createRefundLedger } from '../queue/refund-ledger.js';
import { createRequeuer } from '../queue/requeue.js';
import { createRecordWorker } from '../queue/worker.js';
import { scheduleRetention } from './dlq-retention-schedule.js';
import type { Lifecycle } from './lifecycle.js';

/** The queues `taxsync work` can run; vat-submissions only runs when VAT is configured. */
export const WORKABLE_QUEUES = [QUEUE_NAMES.customers, QUEUE_NAMES.transactions, QUEUE_NAMES.vatSubmissions] as const;
export type WorkableQueue = (typeof WORKABLE_QUEUES)[number];

/**
 * Workers for the record queues. Registers the shutdown: stop taking jobs, let in-flight ones
 * finish within the deadline (a job cut off is retried later: BullMQ's stalled-job recovery), close.
 */
export async function startWork(deps: {
  config: Config;
  settings: Settings;
  redisTarget: string;
  tax: TaxClient;
  vat: VatClient;
  logger: Logger;
  /** The registry /metrics serves (`start`, or `work` with TAXSYNC_METRICS_PORT): job outcomes and queue gauges. */
  metrics?: Metrics;
  lifecycle: Lifecycle;
  queues?: readonly WorkableQueue[];
}): Promise<Worker[]> {
  const { config, logger, lifecycle } = deps;
  const prefix = config.redis.prefix;
  const connection = createRedis(deps.redisTarget, 'worker');
  connection.on('error', (err) => logger.warn({ err: { message: err.message } }, 'redis connection error'));
  lifecycle.onShutdown('redis (workers)', () => {
    connection.disconnect();
    return Promise.resolve();
  });
  const queues = createQueues(connection, prefix);
  lifecycle.onShutdown('queues (workers)', () => closeQueues(queues));
  const keys = createKeys(prefix);
  const records = createRecordStore(connection, keys);
  const deadLetters = createDeadLetterStore(queues['dead-letter']);
  const retry = config.queue.retry;
  const requeuer = createRequeuer({ queues, records, retry });
  const mapping = deps.settings.mapping;
  deps.metrics?.watchQueues(queueSource(queues, connection, keys));

  const handlers: Record<WorkableQueue, RecordHandler> = {
    customers: (() => {
      const customer = createCustomerHandler({ tax: deps.tax, settings: mapping });
      const exemption = createExemptionHandler({ tax: deps.tax, records, settings: mapping });
      return (event, ctx) => (ctx.record.kind === 'exemption' ? exemption(event, ctx) : customer(event, ctx));
    })(),
    transactions: createTransactionHandler({ tax: deps.tax, records, ledger: createRefundLedger(connection, keys), settings: mapping }),
    'vat-submissions': createVatHandler({
      vat: deps.vat,
      ledger: createVatLedger(connection, keys, { leaseMs: config.queue.vat.leaseMs }),
      settings: deps.settings.vat,
      reference: createVatReferenceData(deps.vat, deps.settings.vat, { ttlMs: config.queue.vat.referenceTtlMs }),
      ...(deps.metrics ? { metrics: deps.metrics } : {}),
    }),
  };
  const wanted = (deps.queues ?? WORKABLE_QUEUES).filter((name) => name !== QUEUE_NAMES.vatSubmissions || vatEnabled(deps.settings.vat));

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
        redis: connection,
        keys,
        trace: config.trace,
        logger: logger.child({ queue: name }),
        wait: config.queue.wait,
        ...(deps.metrics ? { onOutcome: deps.metrics.observeJob } : {}),
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
  // Registered last, so it stops first, while its queues and connection are still open.
  scheduleRetention({ config, deadLetters, connection, keys, logger, lifecycle });
  await Promise.all(workers.map((w) => w.waitUntilReady()));
  logger.info({ queues: wanted }, 'workers started');
  return workers;
}
