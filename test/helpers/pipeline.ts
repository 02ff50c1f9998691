import type { Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { CanonicalEvent, type CanonicalEventInput } from '../../src/domain/events.js';
import { createLogger } from '../../src/observability/logger.js';
import { closeQueues, createQueues, createRedis } from '../../src/queue/connection.js';
import { createDeadLetterStore, type DeadLetterStore } from '../../src/queue/dead-letter.js';
import { createKeys, type Keys } from '../../src/queue/keys.js';
import type { QueueName } from '../../src/queue/names.js';
import { createProducer, type Producer } from '../../src/queue/producer.js';
import { createRecordStore, type RecordStore } from '../../src/queue/record-state.js';
import { createRequeuer, type Requeuer } from '../../src/queue/requeue.js';
import type { RetryPolicy } from '../../src/queue/retry.js';
import { createRecordWorker } from '../../src/queue/worker.js';
import { createRecordProcessor, type RecordProcessorDeps, type WaitPolicy } from '../../src/processors/record-processor.js';
import type { RecordHandler } from '../../src/processors/types.js';
import type { TaxClient } from '../../src/api/index.js';
import { DEFAULT_SETTINGS } from '../../src/config/settings.js';
import { createTransactionHandler } from '../../src/processors/transaction.js';
import { createCustomerWriters, type CustomerWriters } from '../../src/queue/customer-writer.js';
import { createRefundLedger } from '../../src/queue/refund-ledger.js';

export interface Pipeline {
  producer: Producer;
  queues: Record<QueueName, Queue>;
  records: RecordStore;
  deadLetters: DeadLetterStore;
  keys: Keys;
  producerConnection: Redis;
  /** The customers' writer locks the customer and transaction handlers share. */
  writers: CustomerWriters;
  /** The requeuer the workers use (its sweep is the daemon's recovery sweep). */
  requeuer: Requeuer;
  startWorker(queue: QueueName, handler: RecordHandler, options?: { concurrency?: number }): Promise<Worker>;
  close(): Promise<void>;
}

/** Producer, stores and workers over one test prefix, with fast retry and wait policies. */
export async function createPipeline(
  url: string,
  prefix: string,
  options: {
    retry?: RetryPolicy;
    wait?: WaitPolicy;
    /** The producer's delay before a record's job runs. */
    coalesceDelayMs?: number;
    /** The processor's coalescing window (TAXSYNC_COALESCE_MS). @defaultValue 0 */
    coalesceMs?: number;
    /** TAXSYNC_COALESCE_MAX_MS. @defaultValue 60000 */
    coalesceMaxMs?: number;
    vat?: boolean;
    /** The processor's observers (metrics). */
    observe?: Pick<RecordProcessorDeps, 'onOutcome' | 'onIdUnknown' | 'onUnchanged'>;
    /** The record store the processors use, as the test wraps it (to stop a job between two steps). */
    processorRecords?: (records: RecordStore) => RecordStore;
    /** The workers' lock duration and stalled-check interval. @defaultValue 30000 */
    stalledIntervalMs?: number;
  } = {},
): Promise<Pipeline> {
  const retry = options.retry ?? { attempts: 4, baseMs: 20, capMs: 100 };
  const producerConnection = createRedis(url, 'producer');
  await new Promise((resolve) => producerConnection.once('ready', resolve));
  const queues = createQueues(producerConnection, prefix);
  const keys = createKeys(prefix);
  const deadLetters = createDeadLetterStore(queues['dead-letter']);
  const records = createRecordStore(producerConnection, keys);
  const producer = createProducer({
    queues,
    connection: producerConnection,
    keys,
    deadLetters,
    trace: { maxEntries: 50, maxAgeMs: 600_000 },
    deliveryTtlMs: 60_000,
    coalesceDelayMs: options.coalesceDelayMs ?? 0,
    retry,
    vat: options.vat ?? false,
  });
  const requeuer = createRequeuer({ queues, records, retry });
  const workers: Worker[] = [];
  const connections: Redis[] = [producerConnection];
  const logger = createLogger({ level: 'silent' });
  return {
    producer,
    queues,
    records,
    deadLetters,
    keys,
    producerConnection,
    writers: createCustomerWriters(producerConnection, keys),
    requeuer,
    async startWorker(queue, handler, workerOptions = {}) {
      const connection = createRedis(url, 'worker');
      connections.push(connection);
      const worker = createRecordWorker({
        queue,
        prefix,
        connection,
        concurrency: workerOptions.concurrency ?? 4,
        retry,
        requeuer,
        logger,
        ...(options.stalledIntervalMs === undefined ? {} : { stalledIntervalMs: options.stalledIntervalMs }),
        process: createRecordProcessor({
          queue: queues[queue],
          handler,
          records: options.processorRecords ? options.processorRecords(records) : records,
          deadLetters,
          redis: producerConnection,
          keys,
          trace: { maxEntries: 50, maxAgeMs: 600_000 },
          logger,
          wait: options.wait ?? { deadlineMs: 60_000, baseMs: 20, capMs: 100 },
          coalesce: { windowMs: options.coalesceMs ?? 0, maxMs: options.coalesceMaxMs ?? 60_000 },
          ...options.observe,
        }),
      });
      workers.push(worker);
      void worker.run();
      await worker.waitUntilReady();
      return worker;
    },
    async close() {
      await Promise.all(workers.map((w) => w.close()));
      await closeQueues(queues);
      for (const c of connections) c.disconnect();
    },
  };
}

export function customerEvent(n: number, externalId = 'c-1', secondsOffset = n): CanonicalEvent {
  const input: CanonicalEventInput = {
    id: `evt-${externalId}-${n}`,
    type: 'customer.upserted',
    occurred_at: new Date(Date.UTC(2026, 10, 20, 10, 0, 0) + secondsOffset * 1000).toISOString(),
    connector: 'test',
    record: { kind: 'customer', source: 'api', external_id: externalId },
    data: { name: `version ${n}` },
  };
  return CanonicalEvent.parse(input);
}

/** Polls until `check` passes or the (generous) deadline passes. */
export async function eventually(check: () => Promise<boolean> | boolean, deadlineMs = 20_000): Promise<void> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > until) throw new Error('condition not met before the deadline');
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The transactions worker as `taxsync work` builds it (default mapping settings), over `pipeline`. */
export function startTransactionsWorker(pipeline: Pipeline, tax: TaxClient): Promise<Worker> {
  return pipeline.startWorker(
    'transactions',
    createTransactionHandler({
      tax,
      records: pipeline.records,
      ledger: createRefundLedger(pipeline.producerConnection, pipeline.keys),
      settings: DEFAULT_SETTINGS.mapping,
      writers: pipeline.writers,
    }),
  );
}
